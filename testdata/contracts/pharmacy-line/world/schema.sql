-- Lakeshore Pharmacy: the world behind the inbound pharmacy phone line.
-- Dates are store-local calendar days; timestamps are UTC.

CREATE TABLE stores (
    store_number         integer PRIMARY KEY CHECK (store_number BETWEEN 1000 AND 9999),
    name                 text    NOT NULL,
    address_line         text    NOT NULL,
    city                 text    NOT NULL,
    state                text    NOT NULL DEFAULT 'OH' CHECK (state ~ '^[A-Z]{2}$'),
    zip                  text    NOT NULL CHECK (zip ~ '^[0-9]{5}$'),
    phone                text    NOT NULL UNIQUE CHECK (phone ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
    pharmacy_hours       text    NOT NULL,
    open_24h             boolean NOT NULL DEFAULT false,
    has_drive_thru       boolean NOT NULL DEFAULT false,
    -- small in-grocery and clinic pharmacies keep no controlled-substance stock
    dispenses_controlled boolean NOT NULL DEFAULT true,
    status               text    NOT NULL DEFAULT 'open'
                         CHECK (status IN ('open', 'temporarily_closed', 'closed'))
);

CREATE TABLE prescribers (
    prescriber_id text PRIMARY KEY CHECK (prescriber_id ~ '^DR-[0-9]{4}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    credential    text NOT NULL CHECK (credential IN ('MD', 'DO', 'NP', 'PA', 'DDS')),
    npi           text NOT NULL UNIQUE CHECK (npi ~ '^[0-9]{10}$'),
    dea_number    text UNIQUE CHECK (dea_number ~ '^[A-Z]{2}[0-9]{7}$'),
    practice_name text NOT NULL,
    phone         text NOT NULL CHECK (phone ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
    fax           text CHECK (fax ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
    -- false: retired, moved away or no longer accepting renewal requests
    active        boolean NOT NULL DEFAULT true
);

CREATE TABLE drugs (
    ndc          text PRIMARY KEY CHECK (ndc ~ '^[0-9]{5}-[0-9]{4}-[0-9]{2}$'),
    name         text NOT NULL,
    brand_name   text,
    strength     text NOT NULL,
    dosage_form  text NOT NULL CHECK (dosage_form IN ('tablet', 'capsule', 'solution', 'suspension',
                      'inhaler', 'injection', 'pen', 'patch', 'film', 'cream', 'nasal_spray')),
    -- DEA schedule; NULL = not a controlled substance
    dea_schedule text CHECK (dea_schedule IN ('CII', 'CIII', 'CIV', 'CV')),
    is_brand     boolean NOT NULL DEFAULT false,
    unit_price   numeric(10,4) NOT NULL CHECK (unit_price > 0),
    refrigerated boolean NOT NULL DEFAULT false,
    UNIQUE (name, strength, dosage_form)
);

CREATE TABLE insurance_plans (
    plan_id       text PRIMARY KEY CHECK (plan_id ~ '^PLN-[0-9]{3}$'),
    payer_name    text NOT NULL,
    plan_name     text NOT NULL,
    plan_type     text NOT NULL CHECK (plan_type IN ('commercial', 'medicare_part_d', 'medicaid')),
    bin           text NOT NULL CHECK (bin ~ '^[0-9]{6}$'),
    pcn           text,
    generic_copay numeric(8,2) NOT NULL CHECK (generic_copay >= 0),
    brand_copay   numeric(8,2) NOT NULL CHECK (brand_copay >= 0),
    -- false: Lakeshore is out of network for this plan; claims cannot be billed to it
    in_network    boolean NOT NULL DEFAULT true,
    UNIQUE (payer_name, plan_name)
);

CREATE TABLE patients (
    patient_id             text PRIMARY KEY CHECK (patient_id ~ '^P-[0-9]{6}$'),
    first_name             text NOT NULL,
    last_name              text NOT NULL,
    date_of_birth          date NOT NULL,
    phone                  text NOT NULL CHECK (phone ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
    email                  text CHECK (email LIKE '%@%'),
    address_line           text NOT NULL,
    city                   text NOT NULL,
    state                  text NOT NULL CHECK (state ~ '^[A-Z]{2}$'),
    zip                    text NOT NULL CHECK (zip ~ '^[0-9]{5}$'),
    preferred_store_number integer NOT NULL REFERENCES stores (store_number),
    allergies              text NOT NULL DEFAULT 'NKDA',
    created_on             date NOT NULL
);
CREATE INDEX patients_name_dob ON patients (last_name, first_name, date_of_birth);
CREATE INDEX patients_phone ON patients (phone);

CREATE TABLE patient_insurance (
    coverage_id                text PRIMARY KEY CHECK (coverage_id ~ '^COV-[0-9]{6}$'),
    patient_id                 text NOT NULL REFERENCES patients (patient_id),
    plan_id                    text NOT NULL REFERENCES insurance_plans (plan_id),
    member_id                  text NOT NULL CHECK (member_id ~ '^[A-Z0-9]{6,14}$'),
    group_number               text,
    relationship_to_subscriber text NOT NULL CHECK (relationship_to_subscriber IN ('self', 'spouse', 'child', 'other')),
    is_primary                 boolean NOT NULL DEFAULT true,
    effective_date             date NOT NULL,
    termination_date           date,
    CHECK (termination_date IS NULL OR termination_date >= effective_date),
    UNIQUE (plan_id, member_id)
);
CREATE INDEX patient_insurance_patient ON patient_insurance (patient_id);

CREATE TABLE caregivers (
    caregiver_id  text PRIMARY KEY CHECK (caregiver_id ~ '^CG-[0-9]{5}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    date_of_birth date NOT NULL,
    phone         text NOT NULL CHECK (phone ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
    UNIQUE (first_name, last_name, date_of_birth)
);

CREATE TABLE caregiver_authorizations (
    authorization_id text PRIMARY KEY CHECK (authorization_id ~ '^AUTH-[0-9]{5}$'),
    patient_id       text NOT NULL REFERENCES patients (patient_id),
    caregiver_id     text NOT NULL REFERENCES caregivers (caregiver_id),
    relationship     text NOT NULL CHECK (relationship IN ('spouse', 'parent', 'adult_child', 'sibling',
                          'legal_guardian', 'healthcare_proxy', 'home_health_aide', 'friend', 'other')),
    -- full: everything the patient can do by phone; pickup_and_refills: refills, status, pickup, price
    scope            text NOT NULL CHECK (scope IN ('full', 'pickup_and_refills')),
    granted_on       date NOT NULL,
    expires_on       date NOT NULL,
    revoked_on       date,
    CHECK (expires_on > granted_on),
    CHECK (revoked_on IS NULL OR revoked_on >= granted_on),
    UNIQUE (patient_id, caregiver_id, granted_on)
);
CREATE INDEX caregiver_authorizations_caregiver ON caregiver_authorizations (caregiver_id);

CREATE TABLE prescriptions (
    rx_number          text PRIMARY KEY CHECK (rx_number ~ '^[0-9]{7}$'),
    patient_id         text    NOT NULL REFERENCES patients (patient_id),
    ndc                text    NOT NULL REFERENCES drugs (ndc),
    prescriber_id      text    NOT NULL REFERENCES prescribers (prescriber_id),
    store_number       integer NOT NULL REFERENCES stores (store_number),
    sig                text    NOT NULL,
    quantity           integer NOT NULL CHECK (quantity > 0),
    days_supply        integer NOT NULL CHECK (days_supply BETWEEN 1 AND 90),
    refills_authorized integer NOT NULL CHECK (refills_authorized BETWEEN 0 AND 11),
    refills_remaining  integer NOT NULL CHECK (refills_remaining >= 0),
    written_date       date    NOT NULL,
    -- NULL: received and filed on hold, never filled yet
    last_fill_date     date,
    status             text    NOT NULL DEFAULT 'active'
                       CHECK (status IN ('active', 'on_hold', 'discontinued', 'transferred_out')),
    auto_refill        boolean NOT NULL DEFAULT false,
    CHECK (refills_remaining <= refills_authorized),
    CHECK (last_fill_date IS NULL OR last_fill_date >= written_date)
);
CREATE INDEX prescriptions_patient ON prescriptions (patient_id);

CREATE TABLE fills (
    fill_id                   text PRIMARY KEY CHECK (fill_id ~ '^F-[0-9]{7}$'),
    rx_number                 text    NOT NULL REFERENCES prescriptions (rx_number),
    store_number              integer NOT NULL REFERENCES stores (store_number),
    status                    text    NOT NULL CHECK (status IN ('requested', 'in_progress', 'ready',
                                  'picked_up', 'cancelled', 'returned_to_stock')),
    channel                   text    NOT NULL CHECK (channel IN ('phone', 'app', 'auto_refill', 'in_store', 'new_prescription')),
    requested_at              timestamptz NOT NULL,
    promised_at               timestamptz,
    filled_on                 date,
    picked_up_at              timestamptz,
    quantity                  integer NOT NULL CHECK (quantity > 0),
    days_supply               integer NOT NULL CHECK (days_supply > 0),
    pay_with                  text    NOT NULL CHECK (pay_with IN ('insurance', 'cash')),
    patient_pay               numeric(8,2) CHECK (patient_pay >= 0),
    requested_by_caregiver_id text REFERENCES caregivers (caregiver_id),
    CHECK (status <> 'picked_up' OR (filled_on IS NOT NULL AND picked_up_at IS NOT NULL)),
    CHECK (status <> 'ready' OR filled_on IS NOT NULL)
);
CREATE INDEX fills_rx ON fills (rx_number);
-- at most one refill in process per prescription
CREATE UNIQUE INDEX fills_one_open_per_rx ON fills (rx_number) WHERE status IN ('requested', 'in_progress', 'ready');

CREATE TABLE claims (
    claim_id     text PRIMARY KEY CHECK (claim_id ~ '^CLM-[0-9]{8}$'),
    fill_id      text NOT NULL REFERENCES fills (fill_id),
    coverage_id  text NOT NULL REFERENCES patient_insurance (coverage_id),
    submitted_at timestamptz NOT NULL,
    status       text NOT NULL CHECK (status IN ('paid', 'rejected', 'reversed')),
    reject_code  text,
    total_price  numeric(10,2) NOT NULL CHECK (total_price >= 0),
    plan_paid    numeric(10,2) NOT NULL CHECK (plan_paid >= 0),
    patient_pay  numeric(10,2) NOT NULL CHECK (patient_pay >= 0),
    CHECK (status <> 'rejected' OR reject_code IS NOT NULL)
);
CREATE INDEX claims_fill ON claims (fill_id);

CREATE TABLE renewal_requests (
    renewal_id                text PRIMARY KEY CHECK (renewal_id ~ '^RN-[0-9]{6}$'),
    rx_number                 text NOT NULL REFERENCES prescriptions (rx_number),
    prescriber_id             text NOT NULL REFERENCES prescribers (prescriber_id),
    requested_at              timestamptz NOT NULL,
    requested_by_caregiver_id text REFERENCES caregivers (caregiver_id),
    status                    text NOT NULL DEFAULT 'pending'
                              CHECK (status IN ('pending', 'approved', 'denied', 'no_response')),
    responded_at              timestamptz,
    note                      text,
    CHECK ((status = 'pending') = (responded_at IS NULL))
);
-- one open request to the prescriber per prescription
CREATE UNIQUE INDEX renewal_requests_one_pending ON renewal_requests (rx_number) WHERE status = 'pending';

CREATE TABLE transfers (
    transfer_id               text PRIMARY KEY CHECK (transfer_id ~ '^TR-[0-9]{6}$'),
    rx_number                 text    NOT NULL REFERENCES prescriptions (rx_number),
    from_store_number         integer NOT NULL REFERENCES stores (store_number),
    to_store_number           integer NOT NULL REFERENCES stores (store_number),
    transferred_at            timestamptz NOT NULL,
    requested_by_caregiver_id text REFERENCES caregivers (caregiver_id),
    CHECK (from_store_number <> to_store_number)
);

CREATE TABLE pharmacist_consults (
    consult_id                text PRIMARY KEY CHECK (consult_id ~ '^PC-[0-9]{6}$'),
    patient_id                text REFERENCES patients (patient_id),
    rx_number                 text REFERENCES prescriptions (rx_number),
    -- NULL: the central pharmacist queue
    store_number              integer REFERENCES stores (store_number),
    kind                      text NOT NULL CHECK (kind IN ('adverse_reaction', 'clinical_question',
                                  'drug_interaction', 'dosage_question', 'insurance_issue', 'other')),
    severity                  text CHECK (severity IN ('mild', 'moderate', 'severe')),
    priority                  text NOT NULL DEFAULT 'routine' CHECK (priority IN ('routine', 'urgent')),
    summary                   text NOT NULL CHECK (length(summary) > 0),
    reported_by_caregiver_id  text REFERENCES caregivers (caregiver_id),
    status                    text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_review', 'closed')),
    created_at                timestamptz NOT NULL,
    CHECK (kind <> 'adverse_reaction' OR (severity IS NOT NULL AND rx_number IS NOT NULL AND patient_id IS NOT NULL))
);
