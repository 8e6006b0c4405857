-- Care service schema. Portable types: TEXT identifiers, BIGINT epoch seconds and flags (0/1),
-- integer row ids with a UNIQUE index on every external id. References between records are
-- row ids or API names without FOREIGN KEY constraints on purpose: the missing-information
-- service must be able to report a missing care plan, program, group or patient account.

CREATE TABLE app_user (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    is_admin BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

CREATE TABLE user_permission (
    id INTEGER PRIMARY KEY,
    user_id BIGINT NOT NULL,
    object_name TEXT NOT NULL,
    field_name TEXT NOT NULL DEFAULT '',
    can_read BIGINT NOT NULL DEFAULT 0,
    can_create BIGINT NOT NULL DEFAULT 0,
    can_edit BIGINT NOT NULL DEFAULT 0,
    UNIQUE (user_id, object_name, field_name)
);

CREATE TABLE vendor (
    id INTEGER PRIMARY KEY,
    api_name TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE program (
    id INTEGER PRIMARY KEY,
    api_name TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE product (
    id INTEGER PRIMARY KEY,
    product_code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    program_api_name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX product_program ON product (program_api_name);

CREATE TABLE data_use_purpose (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE object_config (
    id INTEGER PRIMARY KEY,
    object_name TEXT NOT NULL UNIQUE,
    is_additional BIGINT NOT NULL DEFAULT 0,
    record_types TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL
);

CREATE TABLE object_config_field (
    id INTEGER PRIMARY KEY,
    object_name TEXT NOT NULL,
    field_name TEXT NOT NULL,
    field_type TEXT NOT NULL,
    length BIGINT,
    scale BIGINT,
    picklist TEXT,
    UNIQUE (object_name, field_name)
);

CREATE TABLE erx_request (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    user_id BIGINT,
    received_at BIGINT NOT NULL,
    payload TEXT NOT NULL,
    outcome TEXT NOT NULL,
    errors TEXT NOT NULL DEFAULT '[]',
    care_plan_external_id TEXT
);

CREATE TABLE account (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    vendor_api_name TEXT NOT NULL,
    source_id TEXT NOT NULL,
    name TEXT,
    first_name TEXT,
    middle_name TEXT,
    last_name TEXT,
    gender TEXT,
    birthdate TEXT,
    specialty TEXT,
    suffix TEXT,
    npi TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE care_plan (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    vendor_api_name TEXT NOT NULL,
    program_api_name TEXT NOT NULL,
    enrollment_date TEXT NOT NULL,
    patient_account_id BIGINT NOT NULL,
    physician_account_id BIGINT,
    staff_account_id BIGINT,
    caregiver_account_id BIGINT,
    pharmacy_account_id BIGINT,
    organization_account_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE contact_point (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    contact_type TEXT NOT NULL,
    is_primary BIGINT,
    address_line1 TEXT,
    address_line2 TEXT,
    city TEXT,
    state TEXT,
    postal_code TEXT,
    country TEXT,
    number TEXT,
    ext TEXT,
    email TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX contact_point_account ON contact_point (account_id);

CREATE TABLE consent (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    care_plan_id BIGINT NOT NULL,
    patient_account_id BIGINT NOT NULL,
    data_use_purpose_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    effective_from TEXT,
    effective_to TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE member_plan (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    care_plan_id BIGINT NOT NULL,
    patient_account_id BIGINT NOT NULL,
    relationship TEXT,
    effective_date TEXT,
    expiration_date TEXT,
    payer_name TEXT,
    group_name TEXT,
    member_number TEXT,
    cardholder_name TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE prescription (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    care_plan_id BIGINT NOT NULL,
    patient_account_id BIGINT NOT NULL,
    pharmacy_account_id BIGINT,
    product_id BIGINT NOT NULL,
    drug_ndc TEXT NOT NULL,
    quantity TEXT,
    refills BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE additional_record (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    care_plan_id BIGINT NOT NULL,
    object_name TEXT NOT NULL,
    record_type TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Configured (additional) field values of any record, one row per field; external_id is
-- "<object>:<record row id>:<field>".
CREATE TABLE record_field (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    object_name TEXT NOT NULL,
    record_id BIGINT NOT NULL,
    field_name TEXT NOT NULL,
    value_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX record_field_record ON record_field (object_name, record_id);

CREATE TABLE mi_group (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE mi_group_field (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    group_external_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    field_type TEXT NOT NULL,
    length BIGINT,
    scale BIGINT,
    label TEXT NOT NULL,
    target_object TEXT NOT NULL,
    target_field TEXT NOT NULL,
    picklist TEXT
);
CREATE INDEX mi_group_field_group ON mi_group_field (group_external_id);

CREATE TABLE data_request (
    id INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    care_plan_external_id TEXT NOT NULL,
    group_external_id TEXT NOT NULL,
    status TEXT NOT NULL,
    expiration_date TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE data_request_history (
    id INTEGER PRIMARY KEY,
    data_request_id BIGINT NOT NULL,
    at BIGINT NOT NULL,
    user_id BIGINT,
    method TEXT NOT NULL,
    status_code BIGINT NOT NULL,
    submitted_fields TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX data_request_history_request ON data_request_history (data_request_id);
