-- Correcting a submitted answer: who answered a request and when (the amend window runs from
-- then; only they or a care admin may amend), when it was last amended, and every amendment
-- with who made it, when, and the fields it changed (their UUIDs, labels and previous values,
-- so an earlier answer is never lost; the service's log never holds a value).

ALTER TABLE data_request ADD COLUMN answered_by BIGINT;
ALTER TABLE data_request ADD COLUMN answered_at BIGINT;
ALTER TABLE data_request ADD COLUMN amended_at BIGINT;

-- Requests answered before this migration: their answerer is the last successful POST's caller.
UPDATE data_request SET
    answered_by = (SELECT h.user_id FROM data_request_history h
                   WHERE h.data_request_id = data_request.id AND h.method = 'POST' AND h.status_code = 200
                   ORDER BY h.id DESC LIMIT 1),
    answered_at = (SELECT h.at FROM data_request_history h
                   WHERE h.data_request_id = data_request.id AND h.method = 'POST' AND h.status_code = 200
                   ORDER BY h.id DESC LIMIT 1)
WHERE status = 'Completed';

CREATE TABLE data_request_amendment (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    data_request_id BIGINT NOT NULL,
    at BIGINT NOT NULL,
    user_id BIGINT,
    -- The amender as they were then (a user row id could later name someone else).
    user_external_id TEXT,
    user_name TEXT,
    -- JSON array of {"uuid", "label", "previous"}.
    changes TEXT NOT NULL
);
CREATE INDEX data_request_amendment_request ON data_request_amendment (data_request_id);
