-- The care staff's worklist: who holds a request (a claim), whether its expiry has been
-- announced, the indexes the worklist pages along (keyset paging: expiry, then age = row id),
-- and the event log the live stream and its reconnects read.

ALTER TABLE data_request ADD COLUMN claimed_by BIGINT;
ALTER TABLE data_request ADD COLUMN claimed_at BIGINT;
ALTER TABLE data_request ADD COLUMN expiry_announced BIGINT NOT NULL DEFAULT 0;

-- Requests that expired before this migration are history, not news: no event for them.
UPDATE data_request SET expiry_announced = 1 WHERE status = 'Active' AND expiration_date < date('now');

-- What the expiry sweeper looks for (every second): active requests not yet announced expired.
CREATE INDEX data_request_unannounced ON data_request (expiration_date)
    WHERE status = 'Active' AND expiry_announced = 0;

CREATE INDEX data_request_worklist ON data_request (status, expiration_date, id);
CREATE INDEX data_request_by_expiry ON data_request (expiration_date, id);
CREATE INDEX data_request_by_holder ON data_request (claimed_by, expiration_date, id);
-- The open requests alone (a fifth of them in a busy program): the worklist's main list and
-- its count read a small index, the count without visiting the table.
CREATE INDEX data_request_active ON data_request (expiration_date, id) WHERE status = 'Active';

-- AUTOINCREMENT: an id is never reused, even after the newest event is removed, so a
-- listener's Last-Event-ID never names a different event.
CREATE TABLE care_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_uuid TEXT NOT NULL,
    status TEXT NOT NULL,
    -- The holder after the change as it was then (ID and name), not a user row id that a
    -- deletion could free for someone else.
    owner TEXT,
    owner_name TEXT,
    at BIGINT NOT NULL
);
