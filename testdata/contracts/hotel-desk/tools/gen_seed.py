#!/usr/bin/env python3
"""Writes world/seed/*.jsonl for the hotel-desk contract. Deterministic (fixed random seed).
Run from the contract directory: python3 tools/gen_seed.py"""
import json, random, datetime as dt, os

R = random.Random(20260514)
NOW = dt.date(2026, 5, 14)
OUT = "world/seed"
os.makedirs(OUT, exist_ok=True)

def write(table, rows):
    with open(os.path.join(OUT, table + ".jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=False) + "\n")

tiers = [
    {"code": "member", "free_checkout_until": 11, "late_checkout_fee": 40.00, "max_transfer_per_call": 5000},
    {"code": "silver", "free_checkout_until": 12, "late_checkout_fee": 30.00, "max_transfer_per_call": 10000},
    {"code": "gold", "free_checkout_until": 14, "late_checkout_fee": 20.00, "max_transfer_per_call": 25000},
    {"code": "platinum", "free_checkout_until": 16, "late_checkout_fee": 0.01, "max_transfer_per_call": 50000},
]
write("loyalty_tiers", tiers)

props = [
    {"id": "HTL-BOS", "name": "Harbourline Boston Seaport", "city": "Boston", "tax_rate": 0.1445, "cancel_window_hours": 48, "max_nights": 14, "check_in_hour": 15},
    {"id": "HTL-DEN", "name": "Harbourline Denver Union Station", "city": "Denver", "tax_rate": 0.1575, "cancel_window_hours": 24, "max_nights": 21, "check_in_hour": 15},
    {"id": "HTL-SAV", "name": "Harbourline Savannah Riverfront", "city": "Savannah", "tax_rate": 0.1300, "cancel_window_hours": 72, "max_nights": 10, "check_in_hour": 16},
    {"id": "HTL-SEA", "name": "Harbourline Seattle Pike Place", "city": "Seattle", "tax_rate": 0.1570, "cancel_window_hours": 48, "max_nights": 14, "check_in_hour": 15},
]
write("properties", props)

codes = {"KING": ("King Room", 2, 219), "TWIN": ("Two Queen Room", 4, 239), "FAMILY": ("Family Suite", 6, 329), "SUITE": ("Harbour Suite", 3, 449)}
prop_codes = {"HTL-BOS": ["KING", "TWIN", "SUITE"], "HTL-DEN": ["KING", "TWIN", "FAMILY"], "HTL-SAV": ["KING", "FAMILY", "SUITE"], "HTL-SEA": ["KING", "TWIN", "SUITE"]}
room_types, rates = [], []
for p in props:
    for c in prop_codes[p["id"]]:
        name, occ, base = codes[c]
        rid = "%s-%s" % (p["id"][4:], c)
        room_types.append({"id": rid, "property_id": p["id"], "code": c, "name": name, "max_occupancy": occ})
        flex = base + R.choice([-20, -10, 0, 10, 25])
        rates.append({"room_type_id": rid, "rate_plan": "flexible", "nightly_rate": float(flex)})
        rates.append({"room_type_id": rid, "rate_plan": "nonrefundable", "nightly_rate": round(flex * 0.85, 2)})
write("room_types", room_types)
write("rates", rates)

first = ["Amara", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Isla", "Jonas", "Kemi", "Liam", "Maya", "Noah", "Olu", "Priya", "Quinn", "Rosa", "Sam", "Tara", "Umar", "Vera", "Wes", "Ximena", "Yusuf", "Zoe"]
last = ["Okafor", "Lindqvist", "Marchetti", "Nakamura", "Patel", "Reyes", "Schmidt", "Thompson", "Vasquez", "Walsh", "Yilmaz", "Zhou", "Abbott", "Brennan", "Castillo", "Dubois", "Eriksen", "Fitzgerald", "Gupta", "Haddad"]
agencies = ["Northwind Corporate Travel", "Bluefin Travel Partners", "Cobalt Events & Travel", "Summit Business Journeys", "Meridian Travel Desk", "Atlas Group Bookings"]
accounts = []
used = set()
n = 10001
def person():
    while True:
        f, l = R.choice(first), R.choice(last)
        if (f, l) not in used:
            used.add((f, l)); return f, l
households = []
for i in range(64):
    f, l = person()
    if i % 4 == 3:   # every fourth guest shares a home (and postal code) with the guest before
        households.append(i)
    tier = R.choices(["member", "silver", "gold", "platinum"], [5, 3, 2, 1])[0]
    accounts.append({"id": "AC-%05d" % n, "kind": "guest", "first_name": f, "last_name": l,
        "email": "%s.%s%d@mailbox.example" % (f.lower(), l.lower(), n % 97), "phone": "+1 617 555 %04d" % R.randint(100, 9999),
        "postal_code": accounts[-1]["postal_code"] if i % 4 == 3 else "%05d" % R.randint(1000, 99950), "member_number": "M%08d" % R.randint(10000000, 99999999),
        "tier": tier, "points_balance": R.choice([0, 1200, 3500, 8000, 15000, 22000, 41000, 76000]), "agency_name": None})
    n += 1
for i in range(12):
    f, l = person()
    ag = agencies[i % len(agencies)]
    accounts.append({"id": "AC-%05d" % n, "kind": "booker", "first_name": f, "last_name": l,
        "email": "%s.%s@%s.example" % (f.lower(), l.lower(), ag.split()[0].lower()), "phone": "+1 212 555 %04d" % R.randint(100, 9999),
        "postal_code": "%05d" % R.randint(1000, 99950), "member_number": None, "tier": None, "points_balance": 0, "agency_name": ag})
    n += 1
write("accounts", accounts)
guests = [a for a in accounts if a["kind"] == "guest"]
bookers = [a for a in accounts if a["kind"] == "booker"]

start, end = dt.date(2026, 4, 1), dt.date(2026, 7, 31)
inv = {}
for rt in room_types:
    total = {"KING": 40, "TWIN": 30, "FAMILY": 8, "SUITE": 6}[rt["code"]]
    d = start
    while d <= end:
        base = int(total * R.uniform(0.4, 0.95))
        inv[(rt["id"], d)] = [total, base]
        d += dt.timedelta(days=1)

rate_of = {(r["room_type_id"], r["rate_plan"]): r["nightly_rate"] for r in rates}
tax_of = {p["id"]: p["tax_rate"] for p in props}
prop_of = {rt["id"]: rt["property_id"] for rt in room_types}
occ_of = {rt["id"]: rt["max_occupancy"] for rt in room_types}
res, extra, notes, charges, ledger = [], [], [], [], []
conf = set()
for i in range(170):
    while True:
        c = "HX%06d" % R.randint(100000, 999999)
        if c not in conf:
            conf.add(c); break
    g = R.choice(guests)
    booker = R.choice(bookers) if R.random() < 0.35 else g
    rt = R.choice(room_types)
    plan = "nonrefundable" if R.random() < 0.25 else "flexible"
    arr = NOW + dt.timedelta(days=R.randint(-40, 70))
    if i < 6:
        arr = NOW + dt.timedelta(days=R.choice([1, 2]))   # inside most cancel windows
    if 6 <= i < 10:
        arr = NOW - dt.timedelta(days=1)                   # missed arrivals: no-show candidates
    nights = R.choice([1, 1, 2, 2, 3, 3, 4, 5, 7])
    dep = arr + dt.timedelta(days=nights)
    if dep > end:
        dep = end; nights = (dep - arr).days
        if nights < 1:
            arr = end - dt.timedelta(days=2); dep = end; nights = 2
    if dep <= NOW:
        status = R.choices(["completed", "cancelled", "no_show"], [8, 2, 1])[0]
    elif arr <= NOW and i >= 10:
        status = "checked_in"
    else:
        status = "confirmed" if R.random() < 0.9 else "cancelled"
    if 6 <= i < 10:
        status = "confirmed"
    rate = rate_of[(rt["id"], plan)]
    sub = round(rate * nights, 2)
    tax = round(sub * tax_of[prop_of[rt["id"]]], 2)
    pts = 0
    if booker is g and g["points_balance"] > 0 and R.random() < 0.2:
        pts = min(g["points_balance"], int(sub * 100) // 2) // 100 * 100
    total = round(sub + tax - pts / 100.0, 2)
    adults = R.randint(1, min(2, occ_of[rt["id"]]))
    exp = "%04d-%02d" % (R.choice([2026, 2027, 2028]), R.randint(1, 12))
    if i % 23 == 0:
        exp = "2026-%02d" % arr.month  # card that runs out around the stay
    res.append({"confirmation": c, "guest_id": g["id"], "booked_by": booker["id"], "room_type_id": rt["id"],
        "rate_plan": plan, "arrival": arr.isoformat(), "departure": dep.isoformat(), "adults": adults, "status": status,
        "nightly_rate": rate, "room_subtotal": sub, "taxes": tax, "points_redeemed": pts, "total_due": total,
        "card_brand": R.choice(["Visa", "Mastercard", "Amex"]), "card_last4": "%04d" % R.randint(0, 9999), "card_expiry": exp,
        "late_checkout": None, "late_arrival_eta": None})
    if status in ("confirmed", "checked_in", "completed"):
        d = arr
        while d < dep:
            t = inv[(rt["id"], d)]
            t[1] = min(t[0], t[1] + 1)
            d += dt.timedelta(days=1)
    if adults > 1 and R.random() < 0.6:
        f, l = R.choice(first), R.choice(last)
        extra.append({"confirmation": c, "full_name": "%s %s" % (f, l)})
    if R.random() < 0.25:
        cat, txt = R.choice([("accessibility", "Roll-in shower needed"), ("dietary", "Gluten-free breakfast"), ("celebration", "Anniversary; champagne on arrival if possible"),
            ("arrival", "Arriving on a late flight"), ("other", "Quiet room away from the elevator")])
        notes.append({"confirmation": c, "category": cat, "note": txt, "written_at": (dt.datetime.combine(arr, dt.time(9)) - dt.timedelta(days=10)).isoformat() + "Z"})
    if status == "cancelled" and R.random() < 0.5:
        charges.append({"confirmation": c, "kind": "cancellation", "amount": rate, "charged_at": (dt.datetime.combine(arr, dt.time(8)) - dt.timedelta(days=1)).isoformat() + "Z"})
    if status == "no_show":
        charges.append({"confirmation": c, "kind": "no_show", "amount": round(rate * (1 + tax_of[prop_of[rt["id"]]]), 2), "charged_at": (dt.datetime.combine(arr, dt.time(12)) + dt.timedelta(days=1)).isoformat() + "Z"})
    if pts:
        ledger.append({"account_id": g["id"], "delta": -pts, "reason": "redemption", "confirmation": c, "at": (dt.datetime.combine(arr, dt.time(10)) - dt.timedelta(days=20)).isoformat() + "Z"})
    if status == "completed":
        ledger.append({"account_id": g["id"], "delta": int(sub) * 10, "reason": "stay", "confirmation": c, "at": dep.isoformat() + "T12:00:00Z"})

# sell out a few nights so availability can fail
for rt in room_types[::3]:
    for k in range(3):
        d = NOW + dt.timedelta(days=20 + 7 * k)
        inv[(rt["id"], d)][1] = inv[(rt["id"], d)][0]
write("reservations", res)
write("reservation_guests", extra)
write("reservation_notes", notes)
write("charges", charges)
write("points_ledger", ledger)
write("inventory", [{"room_type_id": k[0], "night": k[1].isoformat(), "rooms_total": v[0], "rooms_sold": v[1]} for k, v in sorted(inv.items())])
write("call_log", [])
