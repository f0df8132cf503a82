#!/usr/bin/env python3
"""Writes world/seed/*.jsonl for the registrar line. Deterministic (seeded RNG);
run from this directory: python3 gen_seed.py. The seed files are what the contract uses."""
import json, os, random
from datetime import date, timedelta

R = random.Random(20260909)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "world", "seed")
NOW = date(2026, 9, 9)

TERMS = [
    ("SP26", "Spring 2026", "2026-01-12", "2026-05-08", "2026-01-16", "2026-01-30", "2026-04-03"),
    ("SU26", "Summer 2026", "2026-05-26", "2026-08-07", "2026-05-29", "2026-06-05", "2026-07-10"),
    ("FA26A", "Fall 2026, first eight weeks", "2026-08-24", "2026-10-16", "2026-08-28", "2026-09-04", "2026-09-25"),
    ("FA26", "Fall 2026", "2026-08-24", "2026-12-11", "2026-09-11", "2026-09-25", "2026-11-06"),
    ("SP27", "Spring 2027", "2027-01-11", "2027-05-07", "2027-01-15", "2027-01-29", "2027-04-02"),
]

COURSES = [
    ("MATH101", "College Algebra", 3), ("MATH151", "Calculus I", 4), ("MATH152", "Calculus II", 4),
    ("MATH201", "Multivariable Calculus", 4), ("MATH240", "Linear Algebra", 3),
    ("ENGL101", "Composition I", 3), ("ENGL102", "Composition II", 3), ("ENGL210", "Writing About Literature", 3),
    ("CHEM101", "General Chemistry I", 4), ("CHEM102", "General Chemistry II", 4), ("CHEM201", "Organic Chemistry I", 4),
    ("BIOL101", "Principles of Biology I", 4), ("BIOL102", "Principles of Biology II", 4), ("BIOL210", "Cell Biology", 3),
    ("PHYS151", "Physics for Scientists I", 4), ("PHYS152", "Physics for Scientists II", 4),
    ("CS101", "Introduction to Programming", 3), ("CS102", "Data Structures", 3), ("CS201", "Algorithms", 3),
    ("CS210", "Discrete Structures", 3), ("CS301", "Operating Systems", 3),
    ("HIST101", "World History to 1500", 3), ("HIST205", "The Atlantic World", 3),
    ("PSYC101", "Introduction to Psychology", 3), ("PSYC220", "Research Methods in Psychology", 3),
    ("ECON101", "Principles of Microeconomics", 3), ("ECON102", "Principles of Macroeconomics", 3),
    ("ECON201", "Intermediate Microeconomics", 3), ("ART110", "Drawing I", 3), ("MUS100", "University Chorus", 1),
    ("SPAN101", "Elementary Spanish I", 4), ("SPAN102", "Elementary Spanish II", 4), ("PHIL101", "Introduction to Philosophy", 3),
    ("STAT200", "Applied Statistics", 3), ("COMM105", "Public Speaking", 3), ("KINE120", "Lifetime Fitness", 1),
]
CREDITS = {c: k for c, _, k in COURSES}
PREREQS = [
    ("MATH152", "MATH151"), ("MATH201", "MATH152"), ("MATH240", "MATH152"), ("ENGL102", "ENGL101"),
    ("ENGL210", "ENGL102"), ("CHEM102", "CHEM101"), ("CHEM201", "CHEM102"), ("BIOL102", "BIOL101"),
    ("BIOL210", "BIOL102"), ("BIOL210", "CHEM101"), ("PHYS151", "MATH151"), ("PHYS152", "PHYS151"),
    ("PHYS152", "MATH152"), ("CS102", "CS101"), ("CS201", "CS102"), ("CS210", "CS102"), ("CS210", "MATH151"),
    ("CS301", "CS201"), ("CS301", "CS210"), ("SPAN102", "SPAN101"), ("ECON201", "ECON101"),
    ("ECON201", "ECON102"), ("STAT200", "MATH101"), ("PSYC220", "PSYC101"), ("PSYC220", "STAT200"),
    ("HIST205", "HIST101"),
]
NEEDS = {}
for c, r in PREREQS:
    NEEDS.setdefault(c, []).append(r)

SLOTS = [
    ("MWF", "09:00", "09:50"), ("MWF", "10:00", "10:50"), ("MWF", "11:00", "11:50"), ("MWF", "13:00", "13:50"),
    ("MW", "14:00", "15:15"), ("MW", "15:30", "16:45"), ("TR", "09:30", "10:45"), ("TR", "11:00", "12:15"),
    ("TR", "13:00", "14:15"), ("TR", "14:30", "15:45"), ("R", "18:00", "20:45"), ("T", "18:00", "20:45"),
]
INSTRUCTORS = ["Dr. Okafor", "Dr. Lindqvist", "Prof. Ramirez", "Dr. Chen", "Prof. Haddad", "Dr. Novak",
               "Prof. Mensah", "Dr. Iyer", "Prof. Duarte", "Dr. Kowalski", "Prof. Sato", "Dr. Abernathy"]
BUILDINGS = ["Hale", "Morrow", "Science Center", "Lyle", "Fine Arts"]

FIRST = ["Maya", "Jordan", "Aiden", "Sofia", "Liam", "Priya", "Noah", "Chloe", "Ethan", "Amara", "Lucas", "Zoe",
         "Mateo", "Hannah", "Omar", "Grace", "Elijah", "Nadia", "Caleb", "Leah", "Diego", "Ivy", "Samuel", "Aaliyah",
         "Ryan", "Mei", "Tyler", "Fatima", "Owen", "Camila", "Isaac", "Jasmine", "Gavin", "Rosa", "Declan", "Yara"]
LAST = ["Alvarez", "Brennan", "Castillo", "Dawson", "Eriksen", "Fofana", "Garcia", "Holloway", "Ibrahim", "Jensen",
        "Kaur", "Lambert", "Moreno", "Nguyen", "Osei", "Patel", "Quinn", "Rasmussen", "Silva", "Thompson",
        "Underwood", "Vasquez", "Whitaker", "Xu", "Yilmaz", "Zimmerman", "Becker", "Carter", "Delgado", "Foster"]
PARENT_FIRST = ["Laura", "Michael", "Denise", "Robert", "Angela", "Carlos", "Susan", "David", "Mariam", "Kevin",
                "Teresa", "Anil", "Patricia", "George", "Lucia", "Hassan"]
STREETS = ["Maple Ave", "Oak St", "Cedar Ln", "Elm St", "Pine Rd", "Birch Way", "Willow Ct", "Lakeview Dr",
           "Hillcrest Rd", "Franklin St", "Union Ave", "Prospect St"]
CITIES = [("Columbus", "OH", "432"), ("Dayton", "OH", "454"), ("Toledo", "OH", "436"), ("Ann Arbor", "MI", "481"),
          ("Pittsburgh", "PA", "152"), ("Louisville", "KY", "402"), ("Indianapolis", "IN", "462")]


def d(s):
    return date.fromisoformat(s)


def write(table, rows):
    with open(os.path.join(OUT, table + ".jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def overlaps(a, b):
    if not set(a[0]) & set(b[0]):
        return False
    return a[1] < b[2] and b[1] < a[2]


def main():
    os.makedirs(OUT, exist_ok=True)
    write("terms", [dict(term_code=t[0], name=t[1], starts_on=t[2], ends_on=t[3], add_deadline=t[4],
                         drop_deadline=t[5], withdraw_deadline=t[6]) for t in TERMS])
    write("courses", [dict(course_code=c, title=t, credits=k) for c, t, k in COURSES])
    write("prerequisites", [dict(course_code=c, requires_code=r) for c, r in PREREQS])

    # Sections: every course in the long terms, a few in summer and in the eight-week session.
    sections = []
    offered = {
        "SP26": [c for c, _, _ in COURSES], "SU26": ["MATH101", "ENGL101", "PSYC101", "STAT200", "HIST101", "COMM105", "ECON101"],
        "FA26A": ["KINE120", "MUS100", "COMM105", "PHIL101", "ART110", "ECON102", "ENGL101", "MATH101"],
        "FA26": [c for c, _, _ in COURSES], "SP27": [c for c, _, _ in COURSES],
    }
    for term, codes in offered.items():
        for code in codes:
            n = 1 if term in ("SU26", "FA26A") else R.choice([1, 1, 2, 2, 3]) if code.endswith("101") else R.choice([1, 1, 2])
            used = []
            for i in range(n):
                slot = R.choice([s for s in SLOTS if s not in used])
                used.append(slot)
                sections.append(dict(section_id="%s-%s-%02d" % (term, code, i + 1), term_code=term, course_code=code,
                                     section_no="%02d" % (i + 1), days=slot[0], start_time=slot[1] + ":00",
                                     end_time=slot[2] + ":00", room="%s %d" % (R.choice(BUILDINGS), R.randint(101, 340)),
                                     instructor=R.choice(INSTRUCTORS), capacity=R.choice([18, 24, 30, 35, 40, 60])))
    by_term = {}
    for s in sections:
        by_term.setdefault(s["term_code"], []).append(s)

    students, proxies, holds, enrol, ledger, plans, orders, logs = [], [], [], [], [], [], [], []
    used_ids, used_phones, used_names = set(), set(), set()
    grades_pool = ["A", "A", "A-", "B+", "B", "B", "B-", "C+", "C", "C-", "D", "F"]
    px = 10001
    for i in range(170):
        year = R.choice([2022, 2023, 2024, 2025, 2026])
        while True:
            sid = "%d%04d" % (year, R.randint(1000, 9999))
            if sid not in used_ids:
                used_ids.add(sid)
                break
        while True:
            fn, ln = R.choice(FIRST), R.choice(LAST)
            if (fn, ln) not in used_names:
                used_names.add((fn, ln))
                break
        age = 2026 - year + 18 + R.choice([0, 0, 0, 1, 1, 2, 5, 9])
        dob = date(2026 - age, R.randint(1, 12), R.randint(1, 28))
        city, st, zp = R.choice(CITIES)
        while True:
            phone = "(%d) %d-%04d" % (R.choice([614, 937, 419, 734, 412, 502, 317]), R.randint(201, 989), R.randint(0, 9999))
            if phone[-4:] not in used_phones:
                used_phones.add(phone[-4:])
                break
        standing = "graduated" if year == 2022 and R.random() < 0.5 else ("on_leave" if R.random() < 0.05 else "active")
        schol = R.random() < 0.3
        cap = R.choice([18] * 8 + [15, 21])
        card = R.random() < 0.7
        exp = date(R.choice([2025, 2026, 2027, 2028, 2029]), R.randint(1, 12), 28) if card else None
        students.append(dict(student_id=sid, first_name=fn, last_name=ln, date_of_birth=dob.isoformat(), phone=phone,
                             email="%s.%s%d@students.example.edu" % (fn.lower(), ln.lower(), i),
                             street="%d %s" % (R.randint(10, 4999), R.choice(STREETS)) + (" Apt %d" % R.randint(1, 30) if R.random() < 0.3 else ""),
                             city=city, state=st, postal_code=zp + "%02d" % R.randint(1, 99), standing=standing,
                             on_scholarship=schol, credit_cap=cap,
                             card_brand=R.choice(["visa", "mastercard", "amex", "discover"]) if card else None,
                             card_last4="%04d" % R.randint(0, 9999) if card else None,
                             card_expires=exp.isoformat() if card else None))
        s = students[-1]

        # History: completed spring (and maybe summer) courses, then fall and early spring registration.
        done = set()
        if year < 2026:
            for term in ["SP26"] + (["SU26"] if R.random() < 0.3 else []):
                picks = []
                for sec in R.sample(by_term[term], len(by_term[term])):
                    if len(picks) >= (4 if term == "SP26" else 1):
                        break
                    if sec["course_code"] in done or any(r not in done for r in NEEDS.get(sec["course_code"], [])):
                        continue
                    if any(overlaps((sec["days"], sec["start_time"], sec["end_time"]), (p["days"], p["start_time"], p["end_time"])) for p in picks):
                        continue
                    picks.append(sec)
                for sec in picks:
                    g = R.choice(grades_pool + ["W"] if R.random() < 0.05 else grades_pool)
                    enrol.append(dict(student_id=sid, section_id=sec["section_id"], status="withdrawn" if g == "W" else "completed",
                                      grade=g, waitlist_position=None, changed_on=TERMS[0][3] if term == "SP26" else TERMS[1][3]))
                    if g not in ("F", "W"):
                        done.add(sec["course_code"])
        if standing != "active":
            continue
        for term, want in (("FA26", R.choice([9, 12, 12, 13, 15, 16])), ("FA26A", R.choice([0, 0, 1])), ("SP27", R.choice([0, 0, 3, 6, 7]))):
            picks, credits = [], 0
            for sec in R.sample(by_term[term], len(by_term[term])):
                if (term == "FA26A" and len(picks) >= want) or (term != "FA26A" and credits >= want):
                    break
                c = sec["course_code"]
                if c in done or any(p["course_code"] == c for p in picks) or any(r not in done for r in NEEDS.get(c, [])):
                    continue
                if credits + CREDITS[c] > cap:
                    continue
                if any(overlaps((sec["days"], sec["start_time"], sec["end_time"]), (p["days"], p["start_time"], p["end_time"])) for p in picks):
                    continue
                picks.append(sec)
                credits += CREDITS[c]
            for sec in picks:
                st_ = "enrolled"
                if term == "FA26" and R.random() < 0.06:
                    st_ = "dropped"
                enrol.append(dict(student_id=sid, section_id=sec["section_id"], status=st_, grade=None, waitlist_position=None,
                                  changed_on=R.choice(["2026-04-14", "2026-04-20", "2026-08-19", "2026-09-02"]) if term != "SP27" else "2026-09-0%d" % R.randint(1, 8)))
            if term == "FA26":
                fa_credits = sum(CREDITS[p["course_code"]] for p in picks)
                s["_fa"] = fa_credits

    # Make some current and next-term sections full, and put a few students on their waitlists.
    counts = {}
    for e in enrol:
        if e["status"] == "enrolled":
            counts[e["section_id"]] = counts.get(e["section_id"], 0) + 1
    for s in sections:
        if s["term_code"] in ("FA26", "SP27", "FA26A"):
            n = counts.get(s["section_id"], 0)
            if n >= 2 and R.random() < 0.25:
                s["capacity"] = n
            else:
                s["capacity"] = max(s["capacity"], n + R.choice([1, 2, 5, 10]))
    full = [s for s in sections if s["term_code"] in ("FA26", "SP27") and s["capacity"] == counts.get(s["section_id"], 0)]
    active = [s for s in students if s["standing"] == "active"]
    taken = {(e["student_id"], e["section_id"]) for e in enrol}
    for s in full[:12]:
        pos = 1
        for st in R.sample(active, 3):
            if (st["student_id"], s["section_id"]) in taken or R.random() < 0.4:
                continue
            enrol.append(dict(student_id=st["student_id"], section_id=s["section_id"], status="waitlisted", grade=None,
                              waitlist_position=pos, changed_on="2026-09-0%d" % R.randint(1, 8)))
            taken.add((st["student_id"], s["section_id"]))
            pos += 1

    # Account: tuition and fees for fall, aid for scholarship holders, payments.
    for s in students:
        sid = s["student_id"]
        fa = s.pop("_fa", 0)
        if s["standing"] != "active" or fa == 0:
            continue
        tuition = 380.0 * fa
        ledger.append(dict(student_id=sid, term_code="FA26", kind="tuition", description="Fall 2026 tuition, %d credits" % fa, amount=round(tuition, 2), posted_on="2026-08-01"))
        ledger.append(dict(student_id=sid, term_code="FA26", kind="fee", description="Student services fee", amount=285.0, posted_on="2026-08-01"))
        total = tuition + 285.0
        if s["on_scholarship"]:
            aid = round(total * R.choice([0.5, 0.75, 1.0]), 2)
            ledger.append(dict(student_id=sid, term_code="FA26", kind="aid", description="Merit scholarship", amount=-aid, posted_on="2026-08-10"))
            total -= aid
        r = R.random()
        if total > 0:
            if r < 0.45:
                pay = total
            elif r < 0.7:
                pay = round(total * R.choice([0.25, 0.5, 0.8]), 2)
            else:
                pay = 0
            if pay > 0:
                ledger.append(dict(student_id=sid, term_code="FA26", kind="payment", description="Card payment", amount=-round(pay, 2), posted_on="2026-08-2%d" % R.randint(0, 9)))
            total -= pay
        s["_bal"] = round(total, 2)
        if R.random() < 0.08:
            ledger.append(dict(student_id=sid, term_code="FA26", kind="fee", description="Library fine", amount=float(R.choice([15, 25, 40])), posted_on="2026-09-03"))
            s["_bal"] += ledger[-1]["amount"]

    hid = 1
    for s in students:
        bal = s.get("_bal", 0)
        sid = s["student_id"]
        if bal > 1500 and R.random() < 0.6:
            holds.append(dict(hold_id=hid, student_id=sid, kind="financial", reason="Fall balance past due", placed_on="2026-09-01", lifted_on=None)); hid += 1
        if R.random() < 0.07:
            holds.append(dict(hold_id=hid, student_id=sid, kind="registration", reason=R.choice(["Immunization record missing", "Unpaid parking citations", "Conduct office referral"]), placed_on="2026-08-%02d" % R.randint(1, 28), lifted_on=None)); hid += 1
        if R.random() < 0.05:
            holds.append(dict(hold_id=hid, student_id=sid, kind="advising", reason="Meet your adviser before spring registration", placed_on="2026-08-15", lifted_on=None)); hid += 1
        if R.random() < 0.05:
            holds.append(dict(hold_id=hid, student_id=sid, kind="registration", reason="Transcript from previous school missing", placed_on="2026-01-05", lifted_on="2026-02-11")); hid += 1
        if bal > 800 and R.random() < 0.25 and not any(h["student_id"] == sid and h["kind"] == "financial" for h in holds):
            plans.append(dict(plan_id=len(plans) + 1, student_id=sid, total=round(bal, 2), installments=R.choice([3, 4]), first_due_on="2026-09-15", status="active", created_on="2026-08-25"))
        if R.random() < 0.04:
            plans.append(dict(plan_id=len(plans) + 1, student_id=sid, total=float(R.choice([900, 1500, 2400])), installments=R.choice([3, 6]), first_due_on="2026-02-15", status="completed", created_on="2026-01-20"))
        if R.random() < 0.25:
            email = R.random() < 0.6
            orders.append(dict(order_id=len(orders) + 1, student_id=sid, delivery="email" if email else "mail",
                               recipient_email="admissions@%s.example.org" % R.choice(["stateu", "medschool", "lawcollege", "techinst"]) if email else None,
                               mail_to=None if email else "%s, %s, %s %s" % (s["street"], s["city"], s["state"], s["postal_code"]),
                               copies=1 if email else R.choice([1, 2]), fee=5.0 if email else 10.0, ordered_on="2026-0%d-%02d" % (R.randint(3, 8), R.randint(1, 28))))
        # Records releases: mostly parents of younger students.
        if R.random() < 0.4:
            for k in range(R.choice([1, 1, 2])):
                name = "%s %s" % (R.choice(PARENT_FIRST), s["last_name"])
                if any(p["student_id"] == sid and p["full_name"].lower() == name.lower() for p in proxies):
                    continue
                revoked = R.random() < 0.1
                proxies.append(dict(proxy_id="PX%05d" % px, student_id=sid, full_name=name,
                                    relationship=R.choice(["parent", "parent", "parent", "guardian", "spouse", "other"]),
                                    passcode="%06d" % R.randint(0, 999999), scope=R.choice(["grades", "finances", "full", "full"]),
                                    signed_on="202%d-0%d-%02d" % (R.choice([4, 5, 6]), R.randint(1, 8), R.randint(1, 28)),
                                    revoked_on="2026-08-30" if revoked else None))
                px += 1
        s.pop("_bal", None)
    for k in range(18):
        s = R.choice(students)
        logs.append(dict(log_id=k + 1, student_id=s["student_id"], kind=R.choice(["adviser", "call_attempt", "name_change"]),
                         details="Seeded history entry %d" % (k + 1), due_at=None, logged_at="2026-0%d-%02dT14:00:00Z" % (R.randint(5, 8), R.randint(1, 28))))

    led = []
    for k, e in enumerate(ledger):
        e = dict(entry_id=k + 1, **e)
        led.append(e)
    write("students", students)
    write("proxies", proxies)
    write("holds", holds)
    write("sections", sections)
    write("enrolments", enrol)
    write("ledger_entries", led)
    write("payment_plans", plans)
    write("transcript_orders", orders)
    write("contact_log", logs)


main()
