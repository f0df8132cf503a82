#!/usr/bin/env python3
"""Writes world/seed/*.jsonl for the parcel-line contract. Deterministic (fixed seed)."""
import json, random, datetime as dt, os

R = random.Random(20260331)
TODAY = dt.date(2026, 3, 31)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "world", "seed")

FIRST = ["Amelia","Oliver","Isla","George","Ava","Noah","Mia","Arthur","Ivy","Leo","Freya","Oscar","Lily","Harry",
         "Grace","Jack","Sophia","Theo","Rosie","Alfie","Priya","Mohammed","Chloe","Daniel","Zara","Tomasz","Aoife",
         "Callum","Niamh","Ewan","Hannah","Kwame","Li","Fatima","Rhys","Megan","Sean","Eilidh","Jonah","Maya"]
LAST = ["Smith","Jones","Taylor","Brown","Williams","Wilson","Johnson","Davies","Patel","Robinson","Wright","Thompson",
        "Evans","Walker","White","Roberts","Green","Hall","Khan","Lewis","Harris","Clarke","Jackson","Wood","Turner",
        "Martin","Cooper","Hill","Ward","Hughes","Moore","Nowak","Okafor","Murphy","Campbell","Kelly","Ahmed","Singh"]
TOWNS = [("Leeds","LS"),("Manchester","M"),("Bristol","BS"),("Norwich","NR"),("Cardiff","CF"),("Glasgow","G"),
         ("Birmingham","B"),("Nottingham","NG"),("Exeter","EX"),("York","YO"),("Brighton","BN"),("Sheffield","S")]
STREETS = ["High Street","Station Road","Church Lane","Victoria Road","Park Avenue","Mill Lane","Queens Road",
           "Green Lane","Manor Close","Orchard Way","Kings Road","Windsor Drive","Beech Grove","Albert Street"]

def postcode(prefix):
    return "%s%d %d%s%s" % (prefix, R.randint(1, 28), R.randint(1, 9), R.choice("ABDEFGHJLNPQRSTUWXY"), R.choice("ABDEFGHJLNPQRSTUWXY"))

def addr():
    town, pre = R.choice(TOWNS)
    return "%d %s" % (R.randint(1, 220), R.choice(STREETS)), town, postcode(pre)

def ts(day, hour, minute=0):
    return "%sT%02d:%02d:00Z" % (day.isoformat(), hour, minute)

rows = {}

# customers
custs = []
used_phone, used_email = set(), set()
for i in range(140):
    f, l = R.choice(FIRST), R.choice(LAST)
    line1, town, pc = addr()
    while True:
        ph = "07%03d %06d" % (R.randint(300, 999), R.randint(0, 999999))
        if ph not in used_phone: break
    used_phone.add(ph)
    em = "%s.%s%d@%s" % (f.lower(), l.lower(), i, R.choice(["example.co.uk", "example.com", "mail.example.org"]))
    business = i % 9 == 0
    if business:
        l = l + " Trading Ltd" if i % 2 == 0 else l + " & Co"
    custs.append({"customer_id": "C%06d" % (100101 + i), "first_name": f, "last_name": l, "phone": ph, "email": em,
                  "postcode": pc, "address_line1": line1, "town": town, "business": business})
rows["customers"] = custs

depots = []
for i, (town, pre) in enumerate(TOWNS):
    code = {"Brighton": "DBTN", "Sheffield": "DSHF", "Birmingham": "DBHM", "Manchester": "DMAN"}.get(town, "D" + town[:3].upper())
    depots.append({"depot_code": code, "name": "%s %s" % (town, R.choice(["Central", "North", "Ring Road", "Trade Park"])),
                   "town": town, "postcode": postcode(pre), "accepts_holds": i not in (3, 8)})
rows["depots"] = depots

services = [
    {"service_code": "economy", "name": "Economy 3-5 day", "max_compensation": 20.00, "claim_window_days": 14, "signature_required": False},
    {"service_code": "standard", "name": "Standard 48h", "max_compensation": 50.00, "claim_window_days": 28, "signature_required": False},
    {"service_code": "express", "name": "Express next day", "max_compensation": 150.00, "claim_window_days": 28, "signature_required": False},
    {"service_code": "signed", "name": "Signed For", "max_compensation": 100.00, "claim_window_days": 28, "signature_required": True},
    {"service_code": "international", "name": "International Tracked", "max_compensation": 250.00, "claim_window_days": 60, "signature_required": True},
]
rows["services"] = services

rows["bank_holidays"] = [{"day": d, "name": n} for d, n in [
    ("2026-01-01", "New Year's Day"), ("2026-04-03", "Good Friday"), ("2026-04-06", "Easter Monday"),
    ("2026-05-04", "Early May bank holiday"), ("2026-05-25", "Spring bank holiday"),
    ("2026-08-31", "Summer bank holiday"), ("2026-12-25", "Christmas Day"), ("2026-12-28", "Boxing Day (substitute)")]]

STATUS_MIX = ([("label_created", 20), ("collected", 15), ("in_transit", 45), ("at_depot", 25), ("out_for_delivery", 25),
               ("delivery_attempted", 30), ("held_at_depot", 15), ("delivered", 110), ("returned_to_sender", 8), ("lost", 12)])
parcels, events, charges = [], [], []
n = 0
for status, count in STATUS_MIX:
    for _ in range(count):
        n += 1
        tn = "PX%09dGB" % (403100000 + n * 37)
        s, r = R.sample(custs, 2)
        svc = R.choices(["economy", "standard", "express", "signed", "international"], [15, 40, 20, 15, 10])[0]
        value = round(R.choice([15, 25, 40, 60, 85, 120, 180, 240, 320, 450, 600, 900]) * R.uniform(0.8, 1.2), 2)
        if status == "label_created": exp = TODAY + dt.timedelta(days=R.randint(2, 6))
        elif status in ("collected", "in_transit"): exp = TODAY + dt.timedelta(days=R.randint(0, 3))
        elif status in ("at_depot", "out_for_delivery"): exp = TODAY
        elif status in ("delivery_attempted", "held_at_depot"): exp = TODAY - dt.timedelta(days=R.randint(1, 4))
        elif status == "delivered": exp = TODAY - dt.timedelta(days=R.randint(0, 50))
        elif status == "returned_to_sender": exp = TODAY - dt.timedelta(days=R.randint(10, 30))
        else: exp = TODAY - dt.timedelta(days=R.randint(3, 70))
        # a lost or overdue in-transit parcel
        if status == "in_transit" and R.random() < 0.2:
            exp = TODAY - dt.timedelta(days=R.randint(8, 20))
        line1, town, pc = (r["address_line1"], r["town"], r["postcode"]) if R.random() < 0.85 else addr()
        depot = next(d["depot_code"] for d in depots if d["town"] == town)
        p = {"tracking_number": tn, "sender_id": s["customer_id"], "recipient_id": r["customer_id"], "service_code": svc,
             "status": status, "declared_value": value, "weight_kg": round(R.uniform(0.2, 18), 2),
             "expected_delivery": exp.isoformat(), "delivered_at": None, "delivery_line1": line1,
             "delivery_town": town, "delivery_postcode": pc, "depot_code": depot, "safe_place": None,
             "held_until": None, "redelivery_date": None, "notify_phone": r["phone"], "notify_email": r["email"]}
        if status == "delivered":
            p["delivered_at"] = ts(exp, R.randint(8, 18), R.randint(0, 59))
        if status == "held_at_depot":
            p["held_until"] = (TODAY + dt.timedelta(days=R.randint(1, 6))).isoformat()
        if status in ("label_created", "in_transit", "at_depot") and svc not in ("signed", "international") and R.random() < 0.25:
            p["safe_place"] = R.choice(["porch", "rear garden", "garage", "with a neighbour"])
        parcels.append(p)
        # tracking history
        start = exp - dt.timedelta(days=R.randint(2, 4))
        hist = [("Label created by sender", "Online")]
        if status != "label_created":
            hist.append(("Collected from sender", s["town"]))
            hist.append(("In transit to %s depot" % town, "Hub Birmingham"))
        if status in ("at_depot", "out_for_delivery", "delivery_attempted", "held_at_depot", "delivered"):
            hist.append(("Arrived at delivery depot", town))
        if status in ("out_for_delivery", "delivery_attempted", "delivered"):
            hist.append(("Out for delivery", town))
        if status == "delivery_attempted":
            hist.append(("Delivery attempted - nobody in, card left", town))
        if status == "held_at_depot":
            hist.append(("Held at depot at recipient's request", town))
        if status == "delivered":
            hist.append(("Delivered" + (" - signed for" if svc in ("signed", "international") else ""), town))
        if status == "returned_to_sender":
            hist.append(("Returned to sender - not collected", s["town"]))
        if status == "lost":
            hist.append(("Investigation opened - parcel not scanned since hub", "Hub Birmingham"))
        for k, (d, loc) in enumerate(hist):
            day = min(start + dt.timedelta(days=k), TODAY)
            events.append({"tracking_number": tn, "happened_at": ts(day, 7 + k, R.randint(0, 59)), "description": d, "location": loc})
        if svc == "international" and status not in ("label_created", "collected"):
            duty = round(value * 0.04, 2); vat = round(value * 0.2, 2)
            st = "paid" if status in ("delivered", "returned_to_sender") else R.choice(["due", "due", "due", "paid", "waived"])
            charges.append({"charge_id": "CD%06d" % (550001 + len(charges)), "tracking_number": tn, "duty": duty, "vat": vat,
                            "handling_fee": 8.00 if value > 135 else 0.00, "status": st,
                            "paid_at": ts(exp - dt.timedelta(days=2), 12) if st == "paid" else None,
                            "payment_ref": ("PAY%06d" % R.randint(0, 999999)) if st == "paid" else None})
rows["parcels"] = parcels
rows["tracking_events"] = [dict(event_id=i + 1, **e) for i, e in enumerate(events)]
rows["customs_charges"] = charges

svc_of = {s["service_code"]: s for s in services}
claims = []
for p in R.sample([p for p in parcels if p["status"] in ("delivered", "lost")], 24):
    kind = "loss" if p["status"] == "lost" else "damage"
    claimed = round(min(p["declared_value"], R.uniform(10, 400)), 2)
    payable = min(claimed, p["declared_value"], svc_of[p["service_code"]]["max_compensation"])
    exp = dt.date.fromisoformat(p["expected_delivery"])
    claims.append({"claim_id": "CL%06d" % (770001 + len(claims)), "tracking_number": p["tracking_number"],
                   "claimant_id": p["sender_id"], "kind": kind, "amount_claimed": claimed, "amount_payable": round(payable, 2),
                   "description": R.choice(["Box crushed, contents broken", "Parcel never arrived", "Item scratched and dented",
                                            "Water damage to contents", "Parcel missing since hub scan"]),
                   "status": R.choice(["open", "open", "approved", "rejected", "paid"]), "filed_at": ts(min(exp + dt.timedelta(days=3), TODAY), 11)})
rows["claims"] = claims

cols = []
for i in range(70):
    c = R.choice(custs)
    d = TODAY + dt.timedelta(days=R.randint(-20, 12))
    while d.weekday() >= 5: d += dt.timedelta(days=1)
    st = "booked" if d >= TODAY else R.choice(["collected", "collected", "collected", "missed", "cancelled"])
    cols.append({"collection_id": "K%07d" % (2000101 + i), "customer_id": c["customer_id"], "collection_date": d.isoformat(),
                 "address_line1": c["address_line1"], "postcode": c["postcode"],
                 "parcel_count": R.randint(1, 12 if c["business"] else 4), "status": st,
                 "booked_at": ts(d - dt.timedelta(days=R.randint(1, 6)), 10)})
rows["collections"] = cols

rows["call_log"] = [{"entry_id": i + 1, "customer_id": R.choice(custs)["customer_id"], "kind": "handoff", "topic": t,
                     "note": "Caller asked for a supervisor", "callback_at": None,
                     "logged_at": ts(TODAY - dt.timedelta(days=R.randint(1, 20)), 14)}
                    for i, t in enumerate(["claim", "complaint", "customs", "redelivery", "collection", "complaint"])]

os.makedirs(OUT, exist_ok=True)
for t, rs in rows.items():
    with open(os.path.join(OUT, t + ".jsonl"), "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
    print(t, len(rs))
