-- The check-in engine (issue 8 §5; crates/checkin-engine): a round is one check-in, one
-- participant, one of their local days. Inserting the row is the claim: of several servers
-- opening the same round, exactly one inserts it (the unique key), and only that one asks.
CREATE TABLE checkin_rounds (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    checkin_id      UUID NOT NULL REFERENCES checkins (id) ON DELETE CASCADE,
    user_id         UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The participant's local day the round is for.
    day             DATE NOT NULL,
    opened_at       TIMESTAMPTZ NOT NULL,
    -- When it stops asking and reminding.
    closes_at       TIMESTAMPTZ NOT NULL,
    -- Questions sent, questions answered on the platform, reminders sent.
    asked           SMALLINT NOT NULL CHECK (asked >= 0),
    answered        SMALLINT NOT NULL CHECK (answered BETWEEN 0 AND asked),
    reminders_sent  SMALLINT NOT NULL CHECK (reminders_sent >= 0),
    -- The last question or reminder; the next reminder counts from here.
    last_sent_at    TIMESTAMPTZ,
    completed       BOOLEAN NOT NULL,
    -- The platform's id of the last reply taken (a reply reported twice counts once).
    last_reply      TEXT,
    closed_at       TIMESTAMPTZ,
    -- Bumped by every write: two servers advancing one round never both win.
    revision        BIGINT NOT NULL,
    CONSTRAINT checkin_rounds_checkin_user_day_key UNIQUE (checkin_id, user_id, day)
);
-- What every tick reads: the rounds not closed yet (today's, a small set however many days are
-- kept).
CREATE INDEX checkin_rounds_open_idx ON checkin_rounds (opened_at, id) WHERE closed_at IS NULL;
-- The cascade of a deleted person (their rounds go with them).
CREATE INDEX checkin_rounds_user_idx ON checkin_rounds (user_id);

-- A check-in's day that is over: its rounds closed and its report posted (with its
-- followups.daily.finished in the same transaction). No round of a finished day opens again.
CREATE TABLE checkin_finished_days (
    checkin_id      UUID NOT NULL REFERENCES checkins (id) ON DELETE CASCADE,
    day             DATE NOT NULL,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    finished_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (checkin_id, day)
);
