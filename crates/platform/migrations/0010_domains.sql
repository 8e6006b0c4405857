-- Custom domains (docs/domains.md): each name served for one app (one service, or a redirect
-- to another of the app's domains), its certificate's state, and the certificate itself. The
-- private keys (a certificate's, the ACME account's) are sealed with the vault's master key
-- in tls_secret, so a backup carries them as it carries secrets, and a key rotation re-seals
-- them.

CREATE TABLE domain (
    name TEXT PRIMARY KEY,
    app_id TEXT NOT NULL REFERENCES app (id),
    service TEXT,
    redirect_to TEXT,
    -- pending, issued, renewing, failed.
    state TEXT NOT NULL,
    -- Why it is pending or failed, in words (the CA's message when it refused).
    reason TEXT,
    -- acme, or operator when the --tls-cert certificate covers the name.
    source TEXT NOT NULL,
    cert_pem TEXT,
    issuer TEXT,
    serial TEXT,
    not_before BIGINT,
    not_after BIGINT,
    failures BIGINT NOT NULL,
    -- When the worker next looks at it (epoch ms); NULL when nothing is due.
    next_attempt_at BIGINT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX domain_app ON domain (app_id);

CREATE TABLE tls_secret (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
