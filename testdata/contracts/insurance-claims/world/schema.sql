-- Home and motor insurer: the claims line's world.

CREATE TABLE customers (
    customer_id   text PRIMARY KEY CHECK (customer_id ~ '^CU-[0-9]{5}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    date_of_birth date NOT NULL,
    phone         text NOT NULL,
    postcode      text NOT NULL,
    email         text NOT NULL,
    fraud_review  boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX customers_phone ON customers (phone);

CREATE TABLE policies (
    policy_number         text PRIMARY KEY CHECK (policy_number ~ '^(HP|MP)-[0-9]{6}$'),
    customer_id           text NOT NULL REFERENCES customers (customer_id),
    product               text NOT NULL CHECK (product IN ('home', 'motor')),
    status                text NOT NULL CHECK (status IN ('active', 'lapsed', 'cancelled')),
    start_date            date NOT NULL,
    end_date              date NOT NULL,
    annual_premium        numeric(10,2) NOT NULL,
    excess                numeric(10,2) NOT NULL,
    excess_payment_method text NOT NULL CHECK (excess_payment_method IN ('card', 'deduct_from_settlement', 'direct_debit')),
    courtesy_car_cover    boolean NOT NULL DEFAULT false,
    vehicle_reg           text,
    property_postcode     text,
    CHECK (end_date > start_date)
);
CREATE INDEX policies_customer ON policies (customer_id);

-- Everyone on a policy: the policyholder, a joint policyholder, named drivers.
CREATE TABLE policy_parties (
    policy_number text NOT NULL REFERENCES policies (policy_number),
    customer_id   text NOT NULL REFERENCES customers (customer_id),
    role          text NOT NULL CHECK (role IN ('policyholder', 'joint_policyholder', 'named_driver')),
    PRIMARY KEY (policy_number, customer_id)
);

CREATE TABLE claims (
    claim_id         text PRIMARY KEY CHECK (claim_id ~ '^CLM-[0-9]{6}$'),
    policy_number    text NOT NULL REFERENCES policies (policy_number),
    incident_date    date NOT NULL,
    incident_type    text NOT NULL CHECK (incident_type IN ('storm_damage', 'escape_of_water', 'fire', 'theft', 'accidental_damage', 'collision', 'windscreen', 'vandalism')),
    description      text NOT NULL,
    status           text NOT NULL CHECK (status IN ('open', 'assessing', 'approved', 'settled', 'rejected', 'cancelled')),
    reported_on      date NOT NULL,
    estimated_amount numeric(10,2),
    cancel_reason    text
);
CREATE INDEX claims_policy ON claims (policy_number);

CREATE TABLE claim_documents (
    document_id serial PRIMARY KEY,
    claim_id    text NOT NULL REFERENCES claims (claim_id),
    kind        text NOT NULL CHECK (kind IN ('photo', 'receipt', 'police_report', 'repair_estimate', 'invoice')),
    reference   text NOT NULL,
    added_on    date NOT NULL
);

CREATE TABLE payments (
    payment_id    text PRIMARY KEY CHECK (payment_id ~ '^PAY-[0-9]{6}$'),
    policy_number text NOT NULL REFERENCES policies (policy_number),
    claim_id      text REFERENCES claims (claim_id),
    kind          text NOT NULL CHECK (kind IN ('premium', 'excess', 'settlement', 'refund')),
    amount        numeric(10,2) NOT NULL CHECK (amount > 0),
    paid_on       date NOT NULL,
    status        text NOT NULL CHECK (status IN ('paid', 'pending', 'failed'))
);

CREATE TABLE assessors (
    assessor_id text PRIMARY KEY CHECK (assessor_id ~ '^AS-[0-9]{3}$'),
    full_name   text NOT NULL,
    speciality  text NOT NULL CHECK (speciality IN ('home', 'motor')),
    region      text NOT NULL
);

CREATE TABLE assessor_visits (
    visit_id    serial PRIMARY KEY,
    claim_id    text NOT NULL REFERENCES claims (claim_id),
    assessor_id text NOT NULL REFERENCES assessors (assessor_id),
    visit_date  date NOT NULL,
    slot        text NOT NULL CHECK (slot IN ('morning', 'afternoon')),
    status      text NOT NULL CHECK (status IN ('booked', 'completed', 'cancelled'))
);

CREATE TABLE courtesy_cars (
    booking_id serial PRIMARY KEY,
    claim_id   text NOT NULL REFERENCES claims (claim_id),
    start_date date NOT NULL,
    days       integer NOT NULL CHECK (days BETWEEN 1 AND 14),
    status     text NOT NULL CHECK (status IN ('booked', 'on_hire', 'returned', 'cancelled'))
);

CREATE TABLE escalations (
    escalation_id serial PRIMARY KEY,
    claim_id      text NOT NULL REFERENCES claims (claim_id),
    reason        text NOT NULL CHECK (reason IN ('complaint', 'complex_claim', 'vulnerable_customer', 'settlement_dispute')),
    summary       text NOT NULL,
    status        text NOT NULL CHECK (status IN ('open', 'closed')),
    raised_on     date NOT NULL
);

CREATE TABLE transfers (
    transfer_id serial PRIMARY KEY,
    department  text NOT NULL CHECK (department IN ('claims_team', 'special_investigations', 'sales')),
    summary     text NOT NULL,
    created_at  timestamptz NOT NULL
);
