-- World of the telecom support agent, converted from tau2-bench's telecom domain
-- (data/tau2/domains/telecom/db.toml and user_db.toml) by examples/telecom/convert.
-- Do not edit by hand: edit the converter and run it again.
--
-- The agent's side (db.toml): plans, devices, customers with their payment methods,
-- lines and bills with their line items. Lists the source keeps on a customer
-- (line_ids, bill_ids, payment_methods) become rows that name their customer.
--
-- The caller's side (user_db.toml): the handset in use on each line (user_phones)
-- and the permissions of its apps (user_phone_apps). No agent tool reads these,
-- as in the source, where only the user's own tools do; they hold the device
-- state a caller describes, and the sub-goals that ask whether service, mobile
-- data or MMS work read them together with the line.

CREATE TABLE plans (
    plan_id                     text PRIMARY KEY CHECK (plan_id ~ '^P[0-9A-Za-z]+$'),
    name                        text NOT NULL,
    data_limit_gb               double precision NOT NULL CHECK (data_limit_gb >= 0),
    price_per_month             double precision NOT NULL CHECK (price_per_month >= 0),
    data_refueling_price_per_gb double precision NOT NULL CHECK (data_refueling_price_per_gb >= 0)
);

CREATE TABLE devices (
    device_id               text PRIMARY KEY CHECK (device_id ~ '^D[0-9A-Za-z]+$'),
    device_type             text NOT NULL CHECK (device_type IN ('phone', 'router', 'tablet', 'watch', 'other')),
    model                   text NOT NULL,
    imei                    text,
    is_esim_capable         boolean NOT NULL,
    activated               boolean NOT NULL DEFAULT false,
    activation_date         timestamp,
    last_esim_transfer_date timestamp
);

CREATE TABLE customers (
    customer_id                    text PRIMARY KEY CHECK (customer_id ~ '^C[0-9A-Za-z]+$'),
    full_name                      text NOT NULL,
    date_of_birth                  text NOT NULL CHECK (date_of_birth ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    email                          text NOT NULL,
    phone_number                   text NOT NULL,
    street                         text NOT NULL,
    city                           text NOT NULL,
    state                          text NOT NULL,
    zip_code                       text NOT NULL,
    account_status                 text NOT NULL DEFAULT 'Pending Verification'
                                   CHECK (account_status IN ('Active', 'Suspended', 'Pending Verification', 'Closed')),
    created_at                     timestamp NOT NULL DEFAULT '2025-01-01 00:00:00',
    last_extension_date            date,
    goodwill_credit_used_this_year double precision NOT NULL DEFAULT 0
);

-- A customer's stored payment methods, in the order the source lists them.
CREATE TABLE payment_methods (
    customer_id           text NOT NULL REFERENCES customers (customer_id),
    position              integer NOT NULL CHECK (position > 0),
    method_type           text NOT NULL CHECK (method_type IN ('Credit Card', 'Debit Card', 'PayPal')),
    account_number_last_4 text NOT NULL CHECK (account_number_last_4 ~ '^[0-9]{4}$'),
    expiration_date       text NOT NULL CHECK (expiration_date ~ '^[0-9]{2}/[0-9]{4}$'),
    PRIMARY KEY (customer_id, position)
);

-- A line belongs to the customer whose line_ids name it in the source.
CREATE TABLE lines (
    line_id                   text PRIMARY KEY CHECK (line_id ~ '^L[0-9A-Za-z]+$'),
    customer_id               text NOT NULL REFERENCES customers (customer_id),
    phone_number              text NOT NULL UNIQUE,
    status                    text NOT NULL DEFAULT 'Pending Activation'
                              CHECK (status IN ('Active', 'Suspended', 'Pending Activation', 'Closed')),
    plan_id                   text NOT NULL REFERENCES plans (plan_id),
    device_id                 text REFERENCES devices (device_id),
    data_used_gb              double precision NOT NULL DEFAULT 0 CHECK (data_used_gb >= 0),
    data_refueling_gb         double precision NOT NULL DEFAULT 0 CHECK (data_refueling_gb >= 0),
    roaming_enabled           boolean NOT NULL DEFAULT false,
    contract_end_date         date,
    last_plan_change_date     date,
    last_sim_replacement_date date,
    suspension_start_date     date
);
CREATE INDEX lines_customer ON lines (customer_id);

CREATE TABLE bills (
    bill_id      text PRIMARY KEY CHECK (bill_id ~ '^B[0-9A-Za-z]+$'),
    customer_id  text NOT NULL REFERENCES customers (customer_id),
    period_start date NOT NULL,
    period_end   date NOT NULL,
    issue_date   date NOT NULL,
    total_due    double precision NOT NULL,
    due_date     date NOT NULL,
    status       text NOT NULL DEFAULT 'Draft'
                 CHECK (status IN ('Draft', 'Issued', 'Awaiting Payment', 'Paid', 'Overdue', 'Disputed'))
);
CREATE INDEX bills_customer ON bills (customer_id);

-- A bill's charges, credits and fees, in the order the source lists them.
CREATE TABLE bill_line_items (
    bill_id     text NOT NULL REFERENCES bills (bill_id),
    position    integer NOT NULL CHECK (position > 0),
    description text NOT NULL,
    amount      double precision NOT NULL,
    date        date NOT NULL,
    item_type   text NOT NULL,
    PRIMARY KEY (bill_id, position)
);

-- The handset in use on a line: the settings of user_db.toml's device, and
-- whether its user is abroad. What the network makes of them (service, data,
-- MMS) is derived by lib/phone.star, never stored.
CREATE TABLE user_phones (
    line_id                    text PRIMARY KEY REFERENCES lines (line_id),
    sim_card_status            text NOT NULL DEFAULT 'active'
                               CHECK (sim_card_status IN ('active', 'missing', 'locked_pin', 'locked_puk')),
    sim_card_missing           boolean NOT NULL DEFAULT false,
    airplane_mode              boolean NOT NULL DEFAULT false,
    battery_level              integer NOT NULL DEFAULT 80 CHECK (battery_level BETWEEN 0 AND 100),
    data_enabled               boolean NOT NULL DEFAULT true,
    roaming_enabled            boolean NOT NULL DEFAULT false,
    network_mode_preference    text NOT NULL DEFAULT '4g_5g_preferred'
                               CHECK (network_mode_preference IN ('4g_5g_preferred', '4g_only', '3g_only', '2g_only')),
    apn_name                   text NOT NULL DEFAULT 'internet' CHECK (apn_name IN ('internet', 'broken')),
    mms_apn                    text,
    mmsc_url                   text,
    wifi_enabled               boolean NOT NULL DEFAULT false,
    wifi_connected             boolean NOT NULL DEFAULT false,
    wifi_calling_enabled       boolean NOT NULL DEFAULT false,
    wifi_calling_mms_over_wifi boolean NOT NULL DEFAULT false,
    data_saver_mode            boolean NOT NULL DEFAULT false,
    vpn_enabled_setting        boolean NOT NULL DEFAULT false,
    vpn_connected              boolean NOT NULL DEFAULT false,
    vpn_server_performance     text CHECK (vpn_server_performance IN ('unknown', 'poor', 'fair', 'good', 'excellent')),
    is_abroad                  boolean NOT NULL DEFAULT false
);

CREATE TABLE user_phone_apps (
    line_id  text NOT NULL REFERENCES user_phones (line_id),
    app_name text NOT NULL,
    sms      boolean NOT NULL DEFAULT false,
    storage  boolean NOT NULL DEFAULT false,
    phone    boolean NOT NULL DEFAULT false,
    network  boolean NOT NULL DEFAULT false,
    PRIMARY KEY (line_id, app_name)
);
