-- Check-ins (issue 7 §1) and their responses.
--
-- A check-in is one row: its participants and report channels are arrays of ids (the service
-- checks them against the directory, and the adapter again in the write's transaction), so a
-- check-in reads and writes as one row and "check-ins I take part in" is an index lookup on
-- the GIN indexes below. Its behaviour options are one JSONB document the domain reads
-- strictly (an unknown key is an error).
CREATE TABLE checkins (
    id                   UUID PRIMARY KEY,
    organization_id      UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                 TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_by_id        UUID REFERENCES users (id) ON DELETE SET NULL,
    template_id          UUID REFERENCES templates (id) ON DELETE SET NULL,
    active               BOOLEAN NOT NULL,
    is_archived          BOOLEAN NOT NULL,
    -- Weekdays 0 (Sunday) to 6, the wall-clock time and the IANA zone people are asked in.
    schedule_days        SMALLINT[] NOT NULL CHECK (schedule_days <@ '{0,1,2,3,4,5,6}'::SMALLINT[]),
    schedule_time        TIME NOT NULL,
    schedule_timezone    TEXT NOT NULL CHECK (length(schedule_timezone) BETWEEN 1 AND 64),
    frequency_type       TEXT NOT NULL CHECK (frequency_type IN ('daily', 'weekly')),
    frequency            SMALLINT NOT NULL CHECK (frequency BETWEEN 1 AND 52),
    frequency_advanced   TEXT NOT NULL CHECK (frequency_advanced IN ('disabled', 'monthly', 'custom')),
    frequency_cron       TEXT CHECK ((frequency_cron IS NOT NULL) = (frequency_advanced = 'custom')),
    start_on             DATE NOT NULL,
    end_on               DATE CHECK (end_on >= start_on),
    options              JSONB NOT NULL,
    participant_user_ids UUID[] NOT NULL DEFAULT '{}',
    participant_team_ids UUID[] NOT NULL DEFAULT '{}',
    report_channel_ids   TEXT[] NOT NULL DEFAULT '{}' CHECK (cardinality(report_channel_ids) <= 3),
    questions            JSONB NOT NULL,
    questions_version    INTEGER NOT NULL CHECK (questions_version >= 1),
    -- Bumped by every write; a write names the revision it read (optimistic concurrency).
    revision             BIGINT NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL
);
-- Listings go by name within an organization.
CREATE INDEX checkins_org_name_idx ON checkins (organization_id, name, id);
-- Who takes part: `participant_user_ids @> {user}` and `participant_team_ids && {teams}`.
CREATE INDEX checkins_participant_users_idx ON checkins USING GIN (participant_user_ids);
CREATE INDEX checkins_participant_teams_idx ON checkins USING GIN (participant_team_ids);
CREATE INDEX checkins_created_by_idx ON checkins (created_by_id);

-- One response per person per check-in per day (the person's local day, as the check-in
-- counts days).
CREATE TABLE checkin_responses (
    id                  UUID PRIMARY KEY,
    organization_id     UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    checkin_id          UUID NOT NULL REFERENCES checkins (id) ON DELETE CASCADE,
    user_id             UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    response_date       DATE NOT NULL,
    -- [{uuid, question, response}] in question order.
    answers             JSONB NOT NULL,
    -- The answers' text, lower-cased (what `search` matches).
    search_text         TEXT NOT NULL,
    last_question_index SMALLINT CHECK (last_question_index >= 0),
    completed           BOOLEAN NOT NULL,
    questions_version   INTEGER NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL,
    -- Also the index of "this person's responses to this check-in between two days".
    CONSTRAINT checkin_responses_checkin_user_day_key UNIQUE (checkin_id, user_id, response_date)
);
-- A check-in's responses by day (the response list, a day's summary).
CREATE INDEX checkin_responses_checkin_day_idx ON checkin_responses (checkin_id, response_date);
CREATE INDEX checkin_responses_user_idx ON checkin_responses (user_id);
