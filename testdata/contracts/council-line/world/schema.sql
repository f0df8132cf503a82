-- Wexbridge Borough Council: the residents' phone line.
-- Everything the line can see or change. Dates are the council's calendar days.

CREATE TABLE properties (
    property_ref   text PRIMARY KEY CHECK (property_ref ~ '^UPRN[0-9]{6}$'),
    address_line1  text NOT NULL,
    postcode       text NOT NULL CHECK (postcode ~ '^[A-Z]{1,2}[0-9][A-Z0-9]? [0-9][A-Z]{2}$'),
    ward           text NOT NULL CHECK (ward IN ('Abbey', 'Brookside', 'Castle', 'Dene', 'Eastfield')),
    parking_zone   text CHECK (parking_zone IN ('A', 'B', 'C', 'D')),   -- NULL: outside every controlled zone
    tax_band       text NOT NULL CHECK (tax_band IN ('A', 'B', 'C', 'D', 'E', 'F', 'G', 'H')),
    bin_weekday    integer NOT NULL CHECK (bin_weekday BETWEEN 1 AND 5), -- ISO weekday, Monday = 1
    max_permits    integer NOT NULL DEFAULT 2 CHECK (max_permits BETWEEN 0 AND 3)
);
CREATE UNIQUE INDEX properties_by_address ON properties (address_line1, postcode);

CREATE TABLE people (
    person_id      text PRIMARY KEY CHECK (person_id ~ '^P[0-9]{5}$'),
    full_name      text NOT NULL,
    date_of_birth  date NOT NULL,
    phone          text NOT NULL,
    email          text,
    on_benefits    boolean NOT NULL DEFAULT false,
    home_property  text REFERENCES properties (property_ref)   -- NULL: lives outside the borough
);
CREATE INDEX people_by_home ON people (home_property);

CREATE TABLE tax_accounts (
    account_no        text PRIMARY KEY CHECK (account_no ~ '^[0-9]{8}$'),
    property_ref      text NOT NULL REFERENCES properties (property_ref),
    opened_on         date NOT NULL,
    closed_on         date,
    payment_method    text NOT NULL DEFAULT 'cash' CHECK (payment_method IN ('direct_debit', 'card', 'cash')),
    dd_day            integer CHECK (dd_day IN (1, 15, 28)),
    dd_sort_code      text CHECK (dd_sort_code ~ '^[0-9]{2}-[0-9]{2}-[0-9]{2}$'),
    dd_account_last4  text CHECK (dd_account_last4 ~ '^[0-9]{4}$'),
    single_person_discount boolean NOT NULL DEFAULT false,
    CHECK ((payment_method = 'direct_debit') = (dd_day IS NOT NULL AND dd_sort_code IS NOT NULL)),
    CHECK (closed_on IS NULL OR closed_on > opened_on)
);
CREATE UNIQUE INDEX one_open_account_per_property ON tax_accounts (property_ref) WHERE closed_on IS NULL;

CREATE TABLE account_members (
    account_no  text NOT NULL REFERENCES tax_accounts (account_no),
    person_id   text NOT NULL REFERENCES people (person_id),
    role        text NOT NULL CHECK (role IN ('liable', 'household')),
    added_on    date NOT NULL,
    PRIMARY KEY (account_no, person_id)
);
CREATE INDEX members_by_person ON account_members (person_id);

-- A landlord or letting agent acting for a property under a signed authority.
CREATE TABLE authorities (
    authority_ref  text PRIMARY KEY CHECK (authority_ref ~ '^LA-[0-9]{4}$'),
    agent_id       text NOT NULL REFERENCES people (person_id),
    property_ref   text NOT NULL REFERENCES properties (property_ref),
    agent_type     text NOT NULL CHECK (agent_type IN ('landlord', 'letting_agent')),
    signed_on      date NOT NULL,
    expires_on     date NOT NULL,
    revoked        boolean NOT NULL DEFAULT false,
    CHECK (expires_on > signed_on)
);
CREATE UNIQUE INDEX one_live_authority ON authorities (agent_id, property_ref) WHERE NOT revoked;

CREATE TABLE vehicles (
    registration    text PRIMARY KEY CHECK (registration ~ '^[A-Z]{2}[0-9]{2} [A-Z]{3}$'),
    keeper_id       text NOT NULL REFERENCES people (person_id),
    make            text NOT NULL,
    emissions_band  text NOT NULL CHECK (emissions_band IN ('A', 'B', 'C', 'D', 'E', 'F', 'G'))
);

CREATE TABLE permits (
    permit_no     text PRIMARY KEY CHECK (permit_no ~ '^RP[0-9]{6}$'),
    registration  text NOT NULL REFERENCES vehicles (registration),
    property_ref  text NOT NULL REFERENCES properties (property_ref),
    holder_id     text NOT NULL REFERENCES people (person_id),
    zone          text NOT NULL CHECK (zone IN ('A', 'B', 'C', 'D')),
    starts_on     date NOT NULL,
    expires_on    date NOT NULL,
    fee           numeric(7,2) NOT NULL CHECK (fee >= 0),
    status        text NOT NULL CHECK (status IN ('active', 'expired', 'cancelled')),
    CHECK (expires_on > starts_on)
);
CREATE UNIQUE INDEX one_active_permit_per_vehicle ON permits (registration) WHERE status = 'active';
CREATE INDEX permits_by_property ON permits (property_ref);

-- Penalty charge notices. The registration is not a foreign key: visitors' cars get tickets too.
CREATE TABLE pcns (
    pcn_no           text PRIMARY KEY CHECK (pcn_no ~ '^WX[0-9]{8}$'),
    registration     text NOT NULL CHECK (registration ~ '^[A-Z]{2}[0-9]{2} [A-Z]{3}$'),
    keeper_id        text REFERENCES people (person_id),
    contravention    text NOT NULL,
    location         text NOT NULL,
    issued_on        date NOT NULL,
    full_amount      numeric(6,2) NOT NULL CHECK (full_amount IN (70, 110)),
    discount_amount  numeric(6,2) NOT NULL,
    stage            text NOT NULL DEFAULT 'issued'
                     CHECK (stage IN ('issued', 'notice_to_owner', 'charge_certificate', 'paid', 'cancelled')),
    paid_amount      numeric(6,2),
    paid_on          date,
    CHECK (discount_amount * 2 = full_amount),
    CHECK ((stage = 'paid') = (paid_on IS NOT NULL AND paid_amount IS NOT NULL))
);

CREATE TABLE pcn_challenges (
    challenge_ref  text PRIMARY KEY CHECK (challenge_ref ~ '^CH[0-9]{6}$'),
    pcn_no         text NOT NULL REFERENCES pcns (pcn_no),
    lodged_by      text NOT NULL REFERENCES people (person_id),
    grounds        text NOT NULL CHECK (grounds IN ('contravention_did_not_occur', 'vehicle_stolen',
                       'valid_permit_displayed', 'signs_or_lines_unclear', 'loading_or_unloading',
                       'medical_emergency')),
    statement      text NOT NULL,
    lodged_on      date NOT NULL,
    outcome        text NOT NULL DEFAULT 'open' CHECK (outcome IN ('open', 'accepted', 'rejected')),
    decided_on     date,
    CHECK ((outcome = 'open') = (decided_on IS NULL))
);
CREATE UNIQUE INDEX one_open_challenge_per_pcn ON pcn_challenges (pcn_no) WHERE outcome = 'open';

CREATE TABLE bulky_slots (
    slot_id          text PRIMARY KEY CHECK (slot_id ~ '^BW-[0-9]{4}$'),
    ward             text NOT NULL CHECK (ward IN ('Abbey', 'Brookside', 'Castle', 'Dene', 'Eastfield')),
    collection_date  date NOT NULL,
    capacity         integer NOT NULL CHECK (capacity BETWEEN 1 AND 12),
    booked           integer NOT NULL DEFAULT 0,
    CHECK (booked >= 0 AND booked <= capacity),
    UNIQUE (ward, collection_date)
);

CREATE TABLE bulky_bookings (
    booking_ref   text PRIMARY KEY CHECK (booking_ref ~ '^BK[0-9]{6}$'),
    slot_id       text NOT NULL REFERENCES bulky_slots (slot_id),
    property_ref  text NOT NULL REFERENCES properties (property_ref),
    booked_by     text NOT NULL REFERENCES people (person_id),
    item_count    integer NOT NULL CHECK (item_count BETWEEN 1 AND 5),
    items         text NOT NULL,
    fee           numeric(6,2) NOT NULL CHECK (fee >= 0),
    concession    boolean NOT NULL DEFAULT false,
    status        text NOT NULL DEFAULT 'booked' CHECK (status IN ('booked', 'cancelled', 'collected')),
    booked_on     date NOT NULL
);
CREATE UNIQUE INDEX one_live_booking_per_slot ON bulky_bookings (slot_id, property_ref) WHERE status = 'booked';

CREATE TABLE instalments (
    account_no     text NOT NULL REFERENCES tax_accounts (account_no),
    year_label     text NOT NULL CHECK (year_label ~ '^20[0-9]{2}/[0-9]{2}$'),
    instalment_no  integer NOT NULL CHECK (instalment_no BETWEEN 1 AND 10),
    due_on         date NOT NULL,
    amount         numeric(8,2) NOT NULL CHECK (amount > 0),
    paid           numeric(8,2) NOT NULL DEFAULT 0,
    CHECK (paid >= 0 AND paid <= amount),
    PRIMARY KEY (account_no, year_label, instalment_no)
);

CREATE TABLE bin_collections (
    property_ref  text NOT NULL REFERENCES properties (property_ref),
    stream        text NOT NULL CHECK (stream IN ('refuse', 'recycling')),
    scheduled_on  date NOT NULL,
    status        text NOT NULL DEFAULT 'scheduled'
                  CHECK (status IN ('scheduled', 'collected', 'missed_reported', 'recollected')),
    reported_on   date,
    reported_by   text REFERENCES people (person_id),
    CHECK ((status IN ('missed_reported', 'recollected')) = (reported_on IS NOT NULL)),
    PRIMARY KEY (property_ref, stream, scheduled_on)
);

-- Everything the line logs that is not a transaction: hand-overs, outbound attempts, call-backs.
CREATE TABLE contact_log (
    entry_id      integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    person_id     text REFERENCES people (person_id),
    permit_no     text REFERENCES permits (permit_no),
    kind          text NOT NULL CHECK (kind IN ('handover', 'voicemail', 'wrong_person', 'call_back')),
    topic         text,
    summary       text NOT NULL,
    callback_on   date,
    logged_at     timestamptz NOT NULL,
    CHECK ((kind = 'call_back') = (callback_on IS NOT NULL))
);
