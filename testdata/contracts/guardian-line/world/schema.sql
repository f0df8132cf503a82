-- A small clinic line: parameters named unlike their columns, identity by
-- name + date of birth or phone + date of birth, guardians for minors,
-- prefixed text ids, non-key unique columns, CHECKs, a partial unique index.
CREATE TABLE patients (
    patient_id  text PRIMARY KEY CHECK (patient_id ~ '^PAT-[0-9]{5}$'),
    mrn         text NOT NULL UNIQUE CHECK (mrn ~ '^MRN[0-9]{7}$'),
    first_name  text NOT NULL,
    last_name   text NOT NULL,
    dob         date NOT NULL,
    phone       text NOT NULL UNIQUE CHECK (phone ~ '^\([0-9]{3}\) 555-[0-9]{4}$'),
    email       text UNIQUE,
    is_minor    boolean NOT NULL
);
CREATE TABLE guardians (
    guardian_id   text PRIMARY KEY CHECK (guardian_id ~ '^GRD-[0-9]{4}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    date_of_birth date NOT NULL
);
CREATE TABLE patient_guardians (
    patient_id  text NOT NULL REFERENCES patients (patient_id),
    guardian_id text NOT NULL REFERENCES guardians (guardian_id),
    can_consent boolean NOT NULL,
    PRIMARY KEY (patient_id, guardian_id)
);
CREATE TABLE slots (
    slot_id   text PRIMARY KEY CHECK (slot_id ~ '^SLT-[0-9]{4}$'),
    provider  text NOT NULL,
    starts_at timestamptz NOT NULL,
    status    text NOT NULL CHECK (status IN ('open', 'booked')),
    UNIQUE (provider, starts_at)
);
CREATE TABLE appointments (
    appointment_no text PRIMARY KEY CHECK (appointment_no ~ '^APT-2026-[0-9]{4}$'),
    patient_id     text NOT NULL REFERENCES patients (patient_id),
    slot_id        text NOT NULL REFERENCES slots (slot_id),
    guardian_id    text REFERENCES guardians (guardian_id),
    status         text NOT NULL CHECK (status IN ('booked', 'cancelled'))
);
CREATE UNIQUE INDEX appointments_live_slot ON appointments (slot_id) WHERE status = 'booked';
CREATE TABLE cards (
    card_id       text PRIMARY KEY,
    patient_id    text NOT NULL REFERENCES patients (patient_id),
    payer         text NOT NULL CHECK (payer IN ('Cascade', 'Evergreen')),
    member_number text NOT NULL CHECK (member_number ~ '^[A-Z]{2}[0-9]{6}$'),
    UNIQUE (payer, member_number)
);
