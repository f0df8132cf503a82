-- World of the clinic's outbound reminder line: patients, their appointments and
-- statements, and what the calls leave behind (confirmations, payment links texted,
-- attempts logged for calls that reached a voicemail box or someone else, and
-- callbacks patients asked for).

CREATE TABLE patients (
    patient_id    text PRIMARY KEY CHECK (patient_id ~ '^P-[0-9]{5}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    date_of_birth date NOT NULL,
    phone         text NOT NULL UNIQUE CHECK (phone ~ '^\+1[0-9]{10}$'),
    language      text NOT NULL DEFAULT 'English' CHECK (language IN ('English', 'Spanish', 'Polish', 'Vietnamese'))
);

CREATE TABLE providers (
    provider_id text PRIMARY KEY CHECK (provider_id ~ '^DR-[0-9]{3}$'),
    name        text NOT NULL,
    specialty   text NOT NULL
);

CREATE TABLE appointments (
    appointment_id text PRIMARY KEY CHECK (appointment_id ~ '^A-[0-9]{5}$'),
    patient_id     text NOT NULL REFERENCES patients (patient_id),
    provider_id    text NOT NULL REFERENCES providers (provider_id),
    starts_at      timestamptz NOT NULL,
    visit_type     text NOT NULL CHECK (visit_type IN ('annual physical', 'follow-up', 'vaccination', 'lab work', 'new patient visit')),
    location       text NOT NULL,
    status         text NOT NULL CHECK (status IN ('booked', 'confirmed', 'cancelled', 'completed', 'no-show')),
    confirmed_at   timestamptz,
    cancel_reason  text,
    CHECK ((status = 'confirmed') = (confirmed_at IS NOT NULL) OR status IN ('completed', 'no-show')),
    CHECK ((status = 'cancelled') = (cancel_reason IS NOT NULL))
);

-- What a patient owes after insurance, one statement per billing.
CREATE TABLE statements (
    statement_id text PRIMARY KEY CHECK (statement_id ~ '^S-[0-9]{5}$'),
    patient_id   text NOT NULL REFERENCES patients (patient_id),
    amount_due   numeric(8,2) NOT NULL CHECK (amount_due >= 0),
    issued_on    date NOT NULL,
    due_date     date NOT NULL,
    status       text NOT NULL CHECK (status IN ('open', 'overdue', 'paid', 'in collections', 'disputed')),
    CHECK (status <> 'paid' OR amount_due = 0),
    CHECK (due_date > issued_on)
);

-- Secure payment links texted to the patient's phone on file.
CREATE TABLE payment_links (
    link_id      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    statement_id text NOT NULL REFERENCES statements (statement_id),
    phone        text NOT NULL,
    amount       numeric(8,2) NOT NULL CHECK (amount > 0),
    sent_at      timestamptz NOT NULL
);

-- One row per call that did not reach the patient: the attempt counter of the
-- call list.
CREATE TABLE call_attempts (
    attempt_id  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    patient_id  text NOT NULL REFERENCES patients (patient_id),
    outcome     text NOT NULL CHECK (outcome IN ('voicemail', 'wrong person', 'no answer')),
    called_at   timestamptz NOT NULL
);

-- Calls a patient asked to be put off to a later time.
CREATE TABLE callbacks (
    callback_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    patient_id  text NOT NULL REFERENCES patients (patient_id),
    call_window text NOT NULL CHECK (call_window IN ('this evening', 'tomorrow morning', 'tomorrow afternoon', 'in two days')),
    due_at      timestamptz NOT NULL,
    status      text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'done'))
);
CREATE INDEX callbacks_patient ON callbacks (patient_id);
