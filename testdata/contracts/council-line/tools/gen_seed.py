#!/usr/bin/env python3
"""Writes world/seed/*.jsonl for the council line. Deterministic (fixed seed); run from the
contract directory: python3 tools/gen_seed.py. The world's clock is 2026-05-14 (a Thursday)."""
import datetime as dt
import json
import os
import random

R = random.Random(20260514)
TODAY = dt.date(2026, 5, 14)
D = dt.timedelta


def iso(d):
    return d.isoformat()


STREETS = [
    ("Abbey Road", "WX1 2AB", "Abbey", "A"), ("Cloister Lane", "WX1 3CL", "Abbey", "A"),
    ("Brook Street", "WX2 4BS", "Brookside", "B"), ("Mill Close", "WX2 5MC", "Brookside", "B"),
    ("Castle Hill", "WX3 1CH", "Castle", "C"), ("Keep Walk", "WX3 6KW", "Castle", "C"),
    ("Dene Park", "WX4 2DP", "Dene", "D"), ("Willow Crescent", "WX4 7WC", "Dene", "D"),
    ("Eastfield Drive", "WX5 8ED", "Eastfield", None), ("Orchard Way", "WX5 9OW", "Eastfield", None),
]
FIRST = ["Amira", "Ben", "Chloe", "Dev", "Elena", "Femi", "Grace", "Hamza", "Isla", "Jonah", "Kasia",
         "Liam", "Maya", "Nikhil", "Olu", "Priya", "Quentin", "Rosa", "Sam", "Tara", "Umar", "Vera",
         "Wes", "Yusuf", "Zoe", "Aled", "Bronwen", "Ciaran", "Dorota", "Eamon"]
LAST = ["Ashworth", "Bello", "Carver", "Doyle", "Evans", "Fraser", "Gill", "Hughes", "Iqbal", "Jarvis",
        "Kowalski", "Lindqvist", "Mensah", "Nolan", "Okafor", "Patel", "Quinn", "Rahman", "Sutton",
        "Thorne", "Underwood", "Varga", "Whitlock", "Yates", "Zielinski"]
MAKES = ["Ford Fiesta", "VW Golf", "Toyota Yaris", "Nissan Leaf", "Vauxhall Corsa", "Kia Niro",
         "BMW 3 Series", "Tesla Model 3", "Land Rover Discovery", "Skoda Octavia"]
BAND_ANNUAL = {"A": 1380.0, "B": 1610.0, "C": 1840.0, "D": 2070.0, "E": 2530.0, "F": 2990.0,
               "G": 3450.0, "H": 4140.0}

rows = {t: [] for t in ["properties", "people", "tax_accounts", "account_members", "authorities",
                        "vehicles", "permits", "pcns", "pcn_challenges", "bulky_slots",
                        "bulky_bookings", "instalments", "bin_collections", "contact_log"]}
used_names = set()
person_n = [10000]


def new_person(birth_from, birth_to, home):
    while True:
        name = "%s %s" % (R.choice(FIRST), R.choice(LAST))
        if name not in used_names:
            used_names.add(name)
            break
    person_n[0] += 1
    span = (birth_to - birth_from).days
    p = {"person_id": "P%05d" % person_n[0], "full_name": name,
         "date_of_birth": iso(birth_from + D(days=R.randrange(span))),
         "phone": "07700 9%05d" % R.randrange(100000),
         "email": name.lower().replace(" ", ".") + "@example.org" if R.random() < 0.7 else None,
         "on_benefits": R.random() < 0.18, "home_property": home}
    rows["people"].append(p)
    return p


ADULT = (dt.date(1940, 1, 1), dt.date(2006, 1, 1))
CHILD = (dt.date(2009, 6, 1), dt.date(2022, 1, 1))

# Properties, households, council-tax accounts.
prop_n = 100100
acct_n = 40100000
adults_at = {}
for street, postcode, ward, zone in STREETS:
    numbers = R.sample(range(1, 80), 9)
    for num in sorted(numbers):
        prop_n += 1
        ref = "UPRN%06d" % prop_n
        flat = R.random() < 0.25
        line1 = ("Flat %d, %d %s" % (R.randint(1, 6), num, street)) if flat else "%d %s" % (num, street)
        rows["properties"].append({
            "property_ref": ref, "address_line1": line1, "postcode": postcode, "ward": ward,
            "parking_zone": zone, "tax_band": R.choice("AABBBCCCDDEEFGH"),
            "bin_weekday": R.randint(1, 5), "max_permits": 1 if flat else R.choice([2, 2, 2, 3])})
        n_adults = R.choice([1, 1, 1, 2, 2, 2, 3])
        adults = [new_person(ADULT[0], ADULT[1], ref) for _ in range(n_adults)]
        kids = [new_person(CHILD[0], CHILD[1], ref) for _ in range(R.choice([0, 0, 0, 1, 2]))]
        for k in kids:
            k["email"] = None
            k["on_benefits"] = False
        adults_at[ref] = adults
        acct_n += R.randint(3, 40)
        opened = TODAY - D(days=R.randint(120, 4000))
        acct = {"account_no": "%08d" % acct_n, "property_ref": ref, "opened_on": iso(opened),
                "closed_on": None, "payment_method": "cash", "dd_day": None, "dd_sort_code": None,
                "dd_account_last4": None, "single_person_discount": False}
        r = R.random()
        if r < 0.45:
            acct.update(payment_method="direct_debit", dd_day=R.choice([1, 15, 28]),
                        dd_sort_code="%02d-%02d-%02d" % (R.randint(10, 99), R.randint(0, 99), R.randint(0, 99)),
                        dd_account_last4="%04d" % R.randrange(10000))
        elif r < 0.65:
            acct["payment_method"] = "card"
        if n_adults == 1 and R.random() < 0.6:
            acct["single_person_discount"] = True
        rows["tax_accounts"].append(acct)
        for i, a in enumerate(adults):
            role = "liable" if i == 0 or (i == 1 and R.random() < 0.5) else "household"
            rows["account_members"].append({"account_no": acct["account_no"], "person_id": a["person_id"],
                                            "role": role, "added_on": iso(opened + D(days=R.randint(0, 60)))})
        for k in kids:
            rows["account_members"].append({"account_no": acct["account_no"], "person_id": k["person_id"],
                                            "role": "household", "added_on": iso(opened)})
        # Instalments of 2026/27: ten, April to January.
        annual = BAND_ANNUAL[rows["properties"][-1]["tax_band"]]
        if acct["single_person_discount"]:
            annual *= 0.75
        each = round(annual / 10, 2)
        day = acct["dd_day"] or 1
        arrears = R.random() < 0.15
        for i in range(10):
            m = 4 + i
            y = 2026 + (m - 1) // 12
            m = (m - 1) % 12 + 1
            due = dt.date(y, m, day)
            paid = each if due <= TODAY and not (arrears and i == 1) else 0
            rows["instalments"].append({"account_no": acct["account_no"], "year_label": "2026/27",
                                        "instalment_no": i + 1, "due_on": iso(due), "amount": each,
                                        "paid": paid})
        # A previous occupier's closed account on some properties.
        if R.random() < 0.12:
            acct_n += 1
            old = new_person(ADULT[0], ADULT[1], None)
            closed = opened - D(days=R.randint(1, 30))
            rows["tax_accounts"].append({"account_no": "%08d" % acct_n, "property_ref": ref,
                                         "opened_on": iso(closed - D(days=R.randint(300, 2000))),
                                         "closed_on": iso(closed), "payment_method": "cash", "dd_day": None,
                                         "dd_sort_code": None, "dd_account_last4": None,
                                         "single_person_discount": False})
            rows["account_members"].append({"account_no": "%08d" % acct_n, "person_id": old["person_id"],
                                            "role": "liable", "added_on": rows["tax_accounts"][-1]["opened_on"]})

props = {p["property_ref"]: p for p in rows["properties"]}
prop_refs = list(props)

# Landlords and letting agents (live outside the borough), with authorities.
auth_n = 3100
for i in range(12):
    agent = new_person(dt.date(1950, 1, 1), dt.date(1995, 1, 1), None)
    agent["on_benefits"] = False
    kind = "letting_agent" if i % 3 == 0 else "landlord"
    for ref in R.sample(prop_refs, R.randint(1, 3)):
        auth_n += 1
        signed = TODAY - D(days=R.randint(30, 900))
        state = R.random()
        expires = signed + D(days=730) if state < 0.75 else TODAY - D(days=R.randint(1, 60))
        if expires <= signed:
            expires = signed + D(days=1)
        rows["authorities"].append({"authority_ref": "LA-%04d" % auth_n, "agent_id": agent["person_id"],
                                    "property_ref": ref, "agent_type": kind, "signed_on": iso(signed),
                                    "expires_on": iso(expires), "revoked": state > 0.92})

# Vehicles, permits.
letters = "ABCDEFGHJKLMNOPRSTVWXY"
used_regs = set()


def new_reg():
    while True:
        reg = "%s%s%02d %s" % (R.choice(letters), R.choice(letters), R.choice([15, 16, 18, 19, 21, 22, 24, 25]),
                               "".join(R.choice(letters) for _ in range(3)))
        if reg not in used_regs:
            used_regs.add(reg)
            return reg


FEES = {"A": 0, "B": 65, "C": 65, "D": 120, "E": 120, "F": 210, "G": 210}
permit_n = 500100
active_at = {}
for ref, adults in adults_at.items():
    for a in adults:
        if R.random() < 0.55:
            continue
        for _ in range(R.choice([1, 1, 1, 2])):
            reg = new_reg()
            band = R.choice("AABBCCCDDDEEFG")
            rows["vehicles"].append({"registration": reg, "keeper_id": a["person_id"],
                                     "make": R.choice(MAKES), "emissions_band": band})
            p = props[ref]
            if p["parking_zone"] is None or R.random() < 0.2:
                continue
            permit_n += R.randint(1, 9)
            if active_at.get(ref, 0) >= p["max_permits"]:
                status, expires = "expired", TODAY - D(days=R.randint(1, 200))
            else:
                r = R.random()
                if r < 0.3:
                    status, expires = "active", TODAY + D(days=R.randint(1, 30))
                elif r < 0.8:
                    status, expires = "active", TODAY + D(days=R.randint(31, 360))
                elif r < 0.93:
                    status, expires = "expired", TODAY - D(days=R.randint(1, 90))
                else:
                    status, expires = "cancelled", TODAY + D(days=R.randint(10, 200))
            if status == "active":
                active_at[ref] = active_at.get(ref, 0) + 1
            rows["permits"].append({"permit_no": "RP%06d" % permit_n, "registration": reg, "property_ref": ref,
                                    "holder_id": a["person_id"], "zone": p["parking_zone"],
                                    "starts_on": iso(expires - D(days=365)), "expires_on": iso(expires),
                                    "fee": FEES[band], "status": status})
# Landlords' own cars.
for a in [p for p in rows["people"] if p["home_property"] is None][:8]:
    rows["vehicles"].append({"registration": new_reg(), "keeper_id": a["person_id"],
                             "make": R.choice(MAKES), "emissions_band": R.choice("BCDE")})

# Penalty charge notices, challenges.
CONTRAVENTIONS = [("01 Parked in a restricted street during prescribed hours", 110),
                  ("12 Parked in a residents' parking place without a valid permit", 110),
                  ("16 Parked in a permit space without displaying a valid permit", 110),
                  ("30 Parked for longer than permitted", 70),
                  ("19 Parked in a residents' place displaying an invalid permit", 70),
                  ("62 Parked with one or more wheels on the footway", 110)]
LOCS = [s[0] for s in STREETS] + ["Market Square", "Station Approach", "High Street"]
pcn_n = 70110000
chal_n = 200100
vehicles = rows["vehicles"]
for i in range(95):
    pcn_n += R.randint(10, 900)
    if R.random() < 0.85:
        v = R.choice(vehicles)
        reg, keeper = v["registration"], v["keeper_id"]
    else:
        reg, keeper = new_reg(), None
    what, full = R.choice(CONTRAVENTIONS)
    age = R.choice([0, 1, 3, 5, 8, 10, 12, 13, 14, 15, 16, 20, 25, 27, 28, 29, 33, 40, 50, 60, 75, 90])
    issued = TODAY - D(days=age)
    stage = "issued" if age < 28 else ("notice_to_owner" if age < 56 else "charge_certificate")
    pcn = {"pcn_no": "WX%08d" % pcn_n, "registration": reg, "keeper_id": keeper, "contravention": what,
           "location": R.choice(LOCS), "issued_on": iso(issued), "full_amount": full,
           "discount_amount": full / 2, "stage": stage, "paid_amount": None, "paid_on": None}
    r = R.random()
    if r < 0.2 and age > 0:
        pd = issued + D(days=R.randint(0, min(age, 20)))
        pcn.update(stage="paid", paid_on=iso(pd),
                   paid_amount=full / 2 if (pd - issued).days <= 14 else full)
    rows["pcns"].append(pcn)
    if keeper and pcn["stage"] != "paid" and R.random() < 0.3 and age > 1:
        chal_n += 1
        lodged = issued + D(days=R.randint(1, min(age, 27)))
        outcome = R.choice(["open", "open", "rejected", "accepted"])
        if outcome == "accepted":
            pcn["stage"] = "cancelled"
        decided = None if outcome == "open" else iso(min(TODAY, lodged + D(days=R.randint(1, 20))))
        if decided is not None and decided <= iso(lodged):
            decided = iso(lodged + D(days=1)) if lodged < TODAY else None
            if decided is None:
                outcome = "open"
        rows["pcn_challenges"].append({"challenge_ref": "CH%06d" % chal_n, "pcn_no": pcn["pcn_no"],
                                       "lodged_by": keeper, "grounds": R.choice(
                                           ["contravention_did_not_occur", "valid_permit_displayed",
                                            "signs_or_lines_unclear", "loading_or_unloading"]),
                                       "statement": "I believe the notice was issued in error.",
                                       "lodged_on": iso(lodged), "outcome": outcome, "decided_on": decided})

# Bulky-waste slots: each ward collects on two weekdays, from two weeks back to four weeks ahead.
WARD_DAYS = {"Abbey": (1, 4), "Brookside": (2, 5), "Castle": (1, 3), "Dene": (2, 4), "Eastfield": (3, 5)}
slot_n = 1000
slots = []
for ward, days in WARD_DAYS.items():
    d = TODAY - D(days=14)
    while d <= TODAY + D(days=28):
        if d.isoweekday() in days:
            slot_n += 1
            cap = R.choice([4, 6, 6, 8])
            booked = cap if R.random() < 0.2 else R.randint(0, cap - 1)
            s = {"slot_id": "BW-%04d" % slot_n, "ward": ward, "collection_date": iso(d), "capacity": cap,
                 "booked": booked}
            slots.append(s)
        d += D(days=1)
rows["bulky_slots"] = slots
book_n = 300100
ITEMS = ["sofa", "wardrobe", "mattress", "fridge freezer", "washing machine", "dining table", "armchair",
         "bed frame", "desk", "chest of drawers"]
by_ward = {}
for ref, p in props.items():
    by_ward.setdefault(p["ward"], []).append(ref)
for s in slots:
    live = 0
    for ref in R.sample(by_ward[s["ward"]], min(len(by_ward[s["ward"]]), R.randint(0, 2))):
        past = s["collection_date"] < iso(TODAY)
        status = ("collected" if R.random() < 0.85 else "cancelled") if past else \
            ("booked" if R.random() < 0.85 else "cancelled")
        if status == "booked":
            if live >= s["booked"]:
                continue
            live += 1
        booker = R.choice(adults_at[ref])
        n = R.randint(1, 5)
        conc = booker["on_benefits"]
        fee = 30 + 10 * max(0, n - 3)
        book_n += R.randint(1, 30)
        rows["bulky_bookings"].append({
            "booking_ref": "BK%06d" % book_n, "slot_id": s["slot_id"], "property_ref": ref,
            "booked_by": booker["person_id"], "item_count": n, "items": ", ".join(R.sample(ITEMS, n)),
            "fee": fee / 2 if conc else fee, "concession": conc, "status": status,
            "booked_on": iso(dt.date.fromisoformat(s["collection_date"]) - D(days=R.randint(3, 20)))})

# Bin collections: refuse and recycling on alternate weeks, the last two and the next two.
for ref, p in props.items():
    wd = p["bin_weekday"]
    last = TODAY - D(days=(TODAY.isoweekday() - wd) % 7)
    for k in range(-2, 2):
        d = last + D(days=7 * k)
        if k >= 0 and d == last and d == TODAY:
            pass
        stream = "refuse" if (d.isocalendar()[1] + wd) % 2 == 0 else "recycling"
        status, rep_on, rep_by = "scheduled", None, None
        if d < TODAY:
            status = "collected"
            if R.random() < 0.08:
                status = "missed_reported" if (TODAY - d).days < 7 else "recollected"
                rep_on = iso(min(TODAY, d + D(days=1)))
                rep_by = adults_at[ref][0]["person_id"]
        rows["bin_collections"].append({"property_ref": ref, "stream": stream, "scheduled_on": iso(d),
                                        "status": status, "reported_on": rep_on, "reported_by": rep_by})

# A few earlier log entries.
for i in range(12):
    pm = R.choice([p for p in rows["permits"] if p["status"] == "active"])
    kind = R.choice(["voicemail", "wrong_person", "call_back", "handover"])
    rows["contact_log"].append({
        "entry_id": i + 1, "person_id": pm["holder_id"], "permit_no": pm["permit_no"] if kind != "handover" else None,
        "kind": kind, "topic": "permits" if kind == "handover" else None,
        "summary": "Earlier contact about permit %s" % pm["permit_no"],
        "callback_on": iso(TODAY + D(days=R.randint(1, 5))) if kind == "call_back" else None,
        "logged_at": (dt.datetime(2026, 5, 14, 9, 0) - D(days=R.randint(1, 30))).isoformat() + "Z"})

os.makedirs("world/seed", exist_ok=True)
for table, rs in rows.items():
    with open("world/seed/%s.jsonl" % table, "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
    print(table, len(rs))
