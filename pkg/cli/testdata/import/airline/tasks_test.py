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
    Task(
        annotator="1",
        user_id="raj_brown_5782",
        instruction="Your user id is raj_brown_5782 and you want to change your upcoming roundtrip flights which are currently DTW to LGA and back (reservation ID is VA5SGQ). You want to change them to nonstop flights from DTW to JFK and back on the same dates as the current reservation, in economy, paid with your credit card on file.",
        actions=[
            Action(name="get_reservation_details", kwargs={"reservation_id": "VA5SGQ"}),
            Action(
                name="update_reservation_flights",
                kwargs={
                    "reservation_id": "VA5SGQ",
                    "cabin": "economy",
                    "flights": [
                        {"flight_number": "HAT169", "date": "2024-05-17"},
                        {"flight_number": "HAT033", "date": "2024-05-19"},
                    ],
                    "payment_id": "credit_card_8003957",
                },
            ),
        ],
        outputs=[],
    ),
]
