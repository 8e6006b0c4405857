-- The care staff's worklist: who holds a request (a claim), whether its expiry has been
-- announced, the indexes the worklist pages along (keyset paging: expiry, then age = row id),
-- and the event log the live stream and its reconnects read.

ALTER TABLE data_request ADD COLUMN claimed_by BIGINT;
ALTER TABLE data_request ADD COLUMN claimed_at BIGINT;
ALTER TABLE data_request ADD COLUMN expiry_announced BIGINT NOT NULL DEFAULT 0;

CREATE INDEX data_request_worklist ON data_request (status, expiration_date, id);
CREATE INDEX data_request_by_expiry ON data_request (expiration_date, id);
CREATE INDEX data_request_by_holder ON data_request (claimed_by, expiration_date, id);

-- AUTOINCREMENT: an id is never reused, even after the newest event is removed, so a
-- listener's Last-Event-ID never names a different event.
CREATE TABLE care_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_uuid TEXT NOT NULL,
    status TEXT NOT NULL,
    owner_user_id BIGINT,
    at BIGINT NOT NULL
);
