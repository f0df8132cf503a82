-- Prairie Gas & Electric: the world behind the customer phone line.
-- Money is numeric(10,2) dollars. Dates are local (America/Chicago) calendar days.

CREATE TABLE customers (
    customer_id   text PRIMARY KEY CHECK (customer_id ~ '^C[0-9]{6}$'),
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    date_of_birth date NOT NULL,
    phone         text NOT NULL CHECK (phone ~ '^[0-9]{10}$'),
    email         text,
    -- only people who have held an account in their own name gave an SSN
    ssn_last4     text CHECK (ssn_last4 ~ '^[0-9]{4}$'),
    created_on    date NOT NULL,
    UNIQUE (phone, ssn_last4)
);

-- service addresses the company serves
CREATE TABLE premises (
    premise_id   text PRIMARY KEY CHECK (premise_id ~ '^P[0-9]{6}$'),
    street       text NOT NULL,
    unit         text NOT NULL DEFAULT '',
    city         text NOT NULL,
    state        text NOT NULL CHECK (state IN ('KS', 'MO')),
    zip          text NOT NULL CHECK (zip ~ '^[0-9]{5}$'),
    premise_type text NOT NULL CHECK (premise_type IN ('residential', 'commercial')),
    feeder       text NOT NULL CHECK (feeder ~ '^FDR-[0-9]{3}$'),
    has_gas      boolean NOT NULL DEFAULT false,
    UNIQUE (street, unit, zip)
);

CREATE TABLE meters (
    meter_number     text PRIMARY KEY CHECK (meter_number ~ '^[EG][0-9]{8}$'),
    premise_id       text NOT NULL REFERENCES premises (premise_id),
    service          text NOT NULL CHECK (service IN ('electric', 'gas')),
    unit_of_measure  text NOT NULL CHECK (unit_of_measure IN ('kWh', 'CCF')),
    last_reading     integer NOT NULL CHECK (last_reading >= 0),
    last_read_on     date NOT NULL,
    last_read_source text NOT NULL CHECK (last_read_source IN ('utility', 'customer', 'estimated')),
    status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
    CHECK ((service = 'electric' AND unit_of_measure = 'kWh') OR (service = 'gas' AND unit_of_measure = 'CCF'))
);
CREATE UNIQUE INDEX meters_one_active_per_service ON meters (premise_id, service) WHERE status = 'active';

-- one account = one customer's service at one premise.
-- pending_start: a start is scheduled; final: service ended, final bill not settled;
-- closed: service ended and settled; disconnected_nonpay: shut off for nonpayment.
CREATE TABLE accounts (
    account_number  text PRIMARY KEY CHECK (account_number ~ '^[0-9]{10}$'),
    holder_id       text NOT NULL REFERENCES customers (customer_id),
    premise_id      text NOT NULL REFERENCES premises (premise_id),
    status          text NOT NULL CHECK (status IN ('pending_start', 'active', 'disconnected_nonpay', 'final', 'closed')),
    opened_on       date NOT NULL,
    stop_date       date,
    closed_on       date,
    disconnected_on date,
    billing_street  text NOT NULL,
    billing_unit    text NOT NULL DEFAULT '',
    billing_city    text NOT NULL,
    billing_state   text NOT NULL CHECK (billing_state ~ '^[A-Z]{2}$'),
    billing_zip     text NOT NULL CHECK (billing_zip ~ '^[0-9]{5}$'),
    cycle_day       integer NOT NULL CHECK (cycle_day BETWEEN 1 AND 28),
    CHECK (status <> 'disconnected_nonpay' OR disconnected_on IS NOT NULL),
    CHECK (status NOT IN ('final', 'closed') OR closed_on IS NOT NULL),
    CHECK (closed_on IS NULL OR closed_on >= opened_on),
    CHECK (stop_date IS NULL OR stop_date >= opened_on)
);
CREATE INDEX accounts_holder ON accounts (holder_id);
CREATE INDEX accounts_premise ON accounts (premise_id);

CREATE TABLE authorized_users (
    account_number text NOT NULL REFERENCES accounts (account_number),
    customer_id    text NOT NULL REFERENCES customers (customer_id),
    relationship   text NOT NULL CHECK (relationship IN ('spouse', 'partner', 'parent', 'child', 'roommate', 'relative', 'caregiver', 'property_manager')),
    added_on       date NOT NULL,
    added_by       text NOT NULL REFERENCES customers (customer_id),
    PRIMARY KEY (account_number, customer_id)
);

CREATE TABLE payment_methods (
    method_id      text PRIMARY KEY CHECK (method_id ~ '^PM[0-9]{5}$'),
    account_number text NOT NULL REFERENCES accounts (account_number),
    kind           text NOT NULL CHECK (kind IN ('card', 'bank')),
    last4          text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
    card_brand     text CHECK (card_brand IN ('Visa', 'Mastercard', 'Discover', 'American Express')),
    card_expires   text CHECK (card_expires ~ '^20[0-9]{2}-(0[1-9]|1[0-2])$'),
    bank_name      text,
    -- bank accounts are verified by two micro-deposits; cards are verified when added
    verified       boolean NOT NULL DEFAULT false,
    autopay        boolean NOT NULL DEFAULT false,
    status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
    added_on       date NOT NULL,
    CHECK ((kind = 'card' AND card_brand IS NOT NULL AND card_expires IS NOT NULL AND bank_name IS NULL)
        OR (kind = 'bank' AND bank_name IS NOT NULL AND card_brand IS NULL AND card_expires IS NULL)),
    CHECK (NOT autopay OR (status = 'active' AND verified))
);
CREATE UNIQUE INDEX payment_methods_one_autopay ON payment_methods (account_number) WHERE autopay;

CREATE TABLE bills (
    bill_id        text PRIMARY KEY CHECK (bill_id ~ '^B[0-9]{7}$'),
    account_number text NOT NULL REFERENCES accounts (account_number),
    period_start   date NOT NULL,
    period_end     date NOT NULL,
    issued_on      date NOT NULL,
    due_date       date NOT NULL,
    electric_kwh   integer NOT NULL DEFAULT 0 CHECK (electric_kwh >= 0),
    gas_ccf        integer NOT NULL DEFAULT 0 CHECK (gas_ccf >= 0),
    estimated      boolean NOT NULL DEFAULT false,
    amount         numeric(10,2) NOT NULL CHECK (amount >= 0),
    paid_amount    numeric(10,2) NOT NULL DEFAULT 0 CHECK (paid_amount >= 0),
    is_final       boolean NOT NULL DEFAULT false,
    CHECK (paid_amount <= amount),
    CHECK (period_end > period_start),
    CHECK (due_date > issued_on),
    UNIQUE (account_number, period_start)
);
CREATE INDEX bills_account ON bills (account_number, due_date);

CREATE TABLE payments (
    payment_id     text PRIMARY KEY CHECK (payment_id ~ '^PMT-[0-9]{6}$'),
    account_number text NOT NULL REFERENCES accounts (account_number),
    method_id      text REFERENCES payment_methods (method_id),
    amount         numeric(10,2) NOT NULL CHECK (amount > 0),
    paid_at        timestamptz NOT NULL,
    channel        text NOT NULL CHECK (channel IN ('phone', 'web', 'autopay', 'mail', 'walk_in')),
    status         text NOT NULL DEFAULT 'posted' CHECK (status IN ('posted', 'returned')),
    CHECK (channel IN ('mail', 'walk_in') OR method_id IS NOT NULL)
);
CREATE INDEX payments_account ON payments (account_number, paid_at);

-- payment arrangements (installment plans) on a past-due balance
CREATE TABLE arrangements (
    arrangement_id     text PRIMARY KEY CHECK (arrangement_id ~ '^PA-[0-9]{5}$'),
    account_number     text NOT NULL REFERENCES accounts (account_number),
    created_on         date NOT NULL,
    total_amount       numeric(10,2) NOT NULL CHECK (total_amount > 50),
    installments       integer NOT NULL CHECK (installments BETWEEN 2 AND 6),
    installment_amount numeric(10,2) NOT NULL CHECK (installment_amount > 0),
    first_due_on       date NOT NULL,
    status             text NOT NULL CHECK (status IN ('active', 'completed', 'broken', 'cancelled')),
    broken_on          date,
    CHECK ((status = 'broken') = (broken_on IS NOT NULL)),
    CHECK (first_due_on > created_on)
);
CREATE UNIQUE INDEX arrangements_one_active ON arrangements (account_number) WHERE status = 'active';

-- electric outages, one open outage per feeder (circuit) at a time
CREATE TABLE outages (
    outage_id             text PRIMARY KEY CHECK (outage_id ~ '^OUT-[0-9]{5}$'),
    feeder                text NOT NULL CHECK (feeder ~ '^FDR-[0-9]{3}$'),
    status                text NOT NULL CHECK (status IN ('reported', 'investigating', 'crew_assigned', 'restored')),
    cause                 text NOT NULL DEFAULT 'unknown' CHECK (cause IN ('storm', 'equipment_failure', 'vehicle_accident', 'animal', 'tree_contact', 'planned_maintenance', 'unknown')),
    priority              text NOT NULL DEFAULT 'normal' CHECK (priority IN ('normal', 'emergency')),
    started_at            timestamptz NOT NULL,
    estimated_restoration timestamptz,
    restored_at           timestamptz,
    customer_reports      integer NOT NULL DEFAULT 1 CHECK (customer_reports >= 0),
    CHECK ((status = 'restored') = (restored_at IS NOT NULL)),
    CHECK (estimated_restoration IS NULL OR estimated_restoration > started_at),
    CHECK (restored_at IS NULL OR restored_at > started_at)
);
CREATE UNIQUE INDEX outages_one_open_per_feeder ON outages (feeder) WHERE status <> 'restored';

CREATE TABLE service_orders (
    order_id       text PRIMARY KEY CHECK (order_id ~ '^SO-[0-9]{6}$'),
    account_number text NOT NULL REFERENCES accounts (account_number),
    premise_id     text NOT NULL REFERENCES premises (premise_id),
    kind           text NOT NULL CHECK (kind IN ('start', 'stop', 'disconnect', 'reconnect', 'meter_reread')),
    scheduled_for  date NOT NULL,
    status         text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'completed', 'cancelled')),
    created_on     date NOT NULL,
    CHECK (scheduled_for >= created_on)
);
CREATE INDEX service_orders_account ON service_orders (account_number);

-- billing disputes; an open one takes its bill out of the past-due balance
CREATE TABLE disputes (
    case_id        text PRIMARY KEY CHECK (case_id ~ '^CASE-[0-9]{5}$'),
    bill_id        text NOT NULL REFERENCES bills (bill_id),
    account_number text NOT NULL REFERENCES accounts (account_number),
    opened_by      text NOT NULL REFERENCES customers (customer_id),
    reason         text NOT NULL CHECK (reason IN ('high_usage', 'estimated_reading', 'wrong_rate', 'duplicate_charge', 'not_my_usage', 'payment_not_applied', 'other')),
    details        text NOT NULL CHECK (length(details) > 0),
    status         text NOT NULL CHECK (status IN ('open', 'under_review', 'resolved_upheld', 'resolved_adjusted', 'withdrawn')),
    opened_on      date NOT NULL,
    closed_on      date,
    CHECK ((status IN ('open', 'under_review')) = (closed_on IS NULL)),
    CHECK (closed_on IS NULL OR closed_on >= opened_on)
);
CREATE UNIQUE INDEX disputes_one_open_per_bill ON disputes (bill_id) WHERE status IN ('open', 'under_review');

-- medical certificate holds: no disconnection for 30 days
CREATE TABLE medical_holds (
    hold_id            text PRIMARY KEY CHECK (hold_id ~ '^MH-[0-9]{5}$'),
    account_number     text NOT NULL REFERENCES accounts (account_number),
    certificate_number text NOT NULL UNIQUE CHECK (certificate_number ~ '^[A-Z]{2}-[0-9]{6}$'),
    physician_name     text NOT NULL,
    patient_name       text NOT NULL,
    starts_on          date NOT NULL,
    ends_on            date NOT NULL,
    requested_by       text NOT NULL REFERENCES customers (customer_id),
    CHECK (ends_on = starts_on + 30)
);
CREATE INDEX medical_holds_account ON medical_holds (account_number, starts_on);

CREATE TABLE notes (
    note_id        integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    account_number text REFERENCES accounts (account_number),
    customer_id    text REFERENCES customers (customer_id),
    kind           text NOT NULL CHECK (kind IN ('call', 'contact_attempt', 'callback', 'handoff', 'outage_report')),
    created_at     timestamptz NOT NULL,
    body           text NOT NULL
);
