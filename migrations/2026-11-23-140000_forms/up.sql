-- Forms (issue 7 §2): a form's settings, its responses, and their moves through the form's
-- workflow. Every response write locks its form's row shared and checks `version`, and every
-- form write bumps it, so no response lands on questions or states removed meanwhile.
CREATE TABLE forms (
    id                            UUID PRIMARY KEY,
    organization_id               UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    owner_id                      UUID NOT NULL REFERENCES users (id),
    name                          TEXT NOT NULL CHECK (char_length(name) BETWEEN 3 AND 200),
    -- The ordered questions (`teamcomm_forms::questions::Question`) and their set's version.
    questions                     JSONB NOT NULL,
    questions_version             INT NOT NULL,
    -- Chat channel ids of the organization (report_channels.id).
    report_channels               TEXT[] NOT NULL DEFAULT '{}' CHECK (cardinality(report_channels) <= 3),
    is_active                     BOOLEAN NOT NULL,
    is_anonymous                  BOOLEAN NOT NULL,
    allow_public_responses        BOOLEAN NOT NULL,
    require_email_and_name        BOOLEAN NOT NULL,
    brand_with_logo               BOOLEAN NOT NULL,
    allow_reopen_from_final_state BOOLEAN NOT NULL,
    use_for_approval              BOOLEAN NOT NULL,
    -- `[{key, label, color, order, is_final}]`; NULL: no workflow.
    workflow                      JSONB,
    -- `{mode, user_uuids, team_uuids}`
    who_can_edit                  JSONB NOT NULL,
    who_can_see_responses         JSONB NOT NULL,
    who_can_change_states         JSONB NOT NULL,
    -- `{user_uuids, team_uuids}`
    approvers                     JSONB NOT NULL,
    command                       TEXT CHECK (command ~ '^[a-z0-9][a-z0-9_-]{0,30}$'),
    command_enabled               BOOLEAN NOT NULL,
    is_archived                   BOOLEAN NOT NULL DEFAULT FALSE,
    version                       INT NOT NULL CHECK (version >= 1),
    created_at                    TIMESTAMPTZ NOT NULL,
    updated_at                    TIMESTAMPTZ NOT NULL
);
-- An enabled command names one live form of the organization (form_command_taken).
CREATE UNIQUE INDEX forms_live_command_key ON forms (organization_id, command)
    WHERE command_enabled AND NOT is_archived;
-- The default listing (newest first) and the owners picker.
CREATE INDEX forms_org_created_idx ON forms (organization_id, created_at, id);
CREATE INDEX forms_org_owner_idx ON forms (organization_id, owner_id) WHERE NOT is_archived;

CREATE TABLE form_responses (
    id                UUID PRIMARY KEY,
    organization_id   UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    form_id           UUID NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    -- Whoever sent it, whatever its source (never shown unless the source is `member`).
    submitted_by      UUID NOT NULL REFERENCES users (id),
    submission_source TEXT NOT NULL
        CHECK (submission_source IN ('member', 'anonymous', 'automation', 'public')),
    submission_label  TEXT CHECK (char_length(submission_label) <= 512),
    guest_name        TEXT CHECK (char_length(guest_name) <= 150),
    guest_email       TEXT CHECK (char_length(guest_email) <= 254),
    -- `{question uuid: answer}`
    content           JSONB NOT NULL,
    -- The answers and the guest's name and e-mail, lower-cased, for `search`.
    search_text       TEXT NOT NULL,
    -- A key of the form's workflow; NULL when the form has none.
    current_state     TEXT,
    edited            BOOLEAN NOT NULL DEFAULT FALSE,
    version           INT NOT NULL CHECK (version >= 1),
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX form_responses_form_created_idx ON form_responses (form_id, created_at, id);
CREATE INDEX form_responses_form_submitter_idx ON form_responses (form_id, submitted_by);

CREATE TABLE form_response_transitions (
    id          UUID PRIMARY KEY,
    response_id UUID NOT NULL REFERENCES form_responses (id) ON DELETE CASCADE,
    from_state  TEXT NOT NULL,
    to_state    TEXT NOT NULL,
    actor_id    UUID REFERENCES users (id) ON DELETE SET NULL,
    note        TEXT CHECK (char_length(note) <= 1000),
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX form_response_transitions_response_idx
    ON form_response_transitions (response_id, at, id);
