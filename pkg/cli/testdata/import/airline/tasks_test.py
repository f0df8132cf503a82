# A small task list in the shape of τ-bench's, written for the import test
# against examples/airline (whose seed is the benchmark's data).
from tau_bench.types import Action, Task

TASKS = [
    Task(
        annotator="0",
        user_id="olivia_gonzalez_2305",
        instruction="Your user id is olivia_gonzalez_2305. You feel unwell and want to "
        "cancel your reservation Z7GOZK, using its travel insurance.",
        actions=[
            Action(name="cancel_reservation", kwargs={"reservation_id": "Z7GOZK"}),
        ],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="olivia_gonzalez_2305",
        instruction='Your user id is olivia_gonzalez_2305. You want to cancel Z7GOZK and book it again later.',
        actions=[
            Action(name="cancel_reservation", kwargs={"reservation_id": "Z7GOZK"}),
            Action(
                name="send_certificate",
                kwargs={"user_id": "olivia_gonzalez_2305", "amount": 50},
            ),
        ],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="olivia_gonzalez_2305",
        instruction="""Your user id is olivia_gonzalez_2305. You only want to know how many reservations you hold.""",
        actions=[],
        outputs=[],
    ),
    Task(
        annotator="0",
        user_id="olivia_gonzalez_2305",
        instruction="Your user id is olivia_gonzalez_2305. Cancel Z7GOZK and tell me the refund.",
        actions=[Action(name="cancel_reservation", kwargs={"reservation_id": "Z7GOZK"})],
        outputs=["987654"],
    ),
    Task(
        annotator="0",
        user_id="olivia_gonzalez_2305",
        instruction="Your user id is olivia_gonzalez_2305. Cancel Z7GOZK, compensate me, five times over.",
        actions=[
            Action(name="cancel_reservation", kwargs={"reservation_id": "Z7GOZK"}),
            Action(name="send_certificate", kwargs={"user_id": "olivia_gonzalez_2305", "amount": 50}),
            Action(name="cancel_reservation", kwargs={"reservation_id": "Z7GOZK"}),
            Action(name="send_certificate", kwargs={"user_id": "olivia_gonzalez_2305", "amount": 50}),
            Action(name="cancel_reservation", kwargs={"reservation_id": "Z7GOZK"}),
        ],
        outputs=[],
    ),
]
