-- Directory: richer people and teams, invitations, report channels, templates and mood.

ALTER TABLE organizations
    ADD COLUMN platform   TEXT,
    -- Maintained by trigger: the unfiltered user list reads its total here instead of counting.
    ADD COLUMN user_count BIGINT NOT NULL DEFAULT 0;

ALTER TABLE users
    ADD COLUMN occupation       TEXT NOT NULL DEFAULT '',
    ADD COLUMN image            TEXT,
    ADD COLUMN birth_date       TEXT CHECK (birth_date ~ '^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'),
    ADD COLUMN work_anniversary DATE;
-- The directory lists people by name within an organization.
CREATE INDEX users_org_name_idx ON users (organization_id, first_name, last_name, id);

UPDATE organizations o SET user_count = (SELECT count(*) FROM users u WHERE u.organization_id = o.id);

CREATE FUNCTION users_count_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE organizations SET user_count = user_count + 1 WHERE id = NEW.organization_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE organizations SET user_count = user_count - 1 WHERE id = OLD.organization_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER users_count AFTER INSERT OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION users_count_trigger();

ALTER TABLE teams
    ADD COLUMN active     BOOLEAN NOT NULL DEFAULT TRUE,
    ADD COLUMN is_default BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN updated_at TIMESTAMPTZ NOT NULL DEFAULT now();

ALTER TABLE team_members
    ADD COLUMN role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'manager'));

CREATE TABLE invitations (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    identifier      TEXT NOT NULL CHECK (length(identifier) BETWEEN 1 AND 254),
    is_email        BOOLEAN NOT NULL,
    is_guest        BOOLEAN NOT NULL DEFAULT FALSE,
    team_ids        UUID[] NOT NULL DEFAULT '{}',
    followup_ids    UUID[] NOT NULL DEFAULT '{}',
    invited_by_id   UUID REFERENCES users (id) ON DELETE SET NULL,
    resend_count    INTEGER NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- One pending invitation per identifier and organization; inviting again resends it.
CREATE UNIQUE INDEX invitations_org_identifier_key ON invitations (organization_id, lower(identifier));
CREATE INDEX invitations_org_idx ON invitations (organization_id, created_at DESC, id);

CREATE TABLE report_channels (
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    id              TEXT NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
    name            TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    platform        TEXT NOT NULL,
    channel_type    TEXT NOT NULL CHECK (channel_type IN ('channel', 'private_channel', 'group_chat', 'direct_message')),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, id)
);

CREATE TABLE templates (
    id              UUID PRIMARY KEY,
    -- NULL for the built-in templates every organization sees.
    organization_id UUID REFERENCES organizations (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    template_type   TEXT NOT NULL CHECK (template_type IN ('checkins', 'forms')),
    system_default  BOOLEAN NOT NULL DEFAULT FALSE,
    description     TEXT NOT NULL DEFAULT '',
    intro_message   TEXT NOT NULL DEFAULT '',
    outro_message   TEXT NOT NULL DEFAULT '',
    questions       JSONB NOT NULL DEFAULT '[]',
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX templates_org_type_idx ON templates (organization_id, template_type, name);

CREATE TABLE mood_entries (
    user_id         UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    entry_date      DATE NOT NULL,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    score           SMALLINT NOT NULL CHECK (score BETWEEN 1 AND 5),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, entry_date)
);

-- Built-in templates.
INSERT INTO templates (id, organization_id, name, template_type, system_default, description, intro_message, outro_message, questions) VALUES
('0190a000-0000-7000-8000-000000000001', NULL, 'Daily Standup', 'checkins', TRUE,
 'The classic three questions, every working day.',
 'Good morning! Time for your daily standup.', 'Thanks, your team will see your update.',
 '[{"uuid":"0190a000-0000-7000-8001-000000000001","index":0,"question":"What did you complete yesterday?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8001-000000000002","index":1,"question":"What are you working on today?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8001-000000000003","index":2,"question":"Anything blocking you?","question_type":"text","required":false,"is_blocker":true}]'),
('0190a000-0000-7000-8000-000000000002', NULL, 'Weekly Retrospective', 'checkins', TRUE,
 'A short look back at the week, every Friday.',
 'Happy Friday! Let''s look back at the week.', 'Thanks for sharing. Have a great weekend!',
 '[{"uuid":"0190a000-0000-7000-8002-000000000001","index":0,"question":"What went well this week?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8002-000000000002","index":1,"question":"What could have gone better?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8002-000000000003","index":2,"question":"What will you try next week?","question_type":"text","required":false,"is_blocker":false}]'),
('0190a000-0000-7000-8000-000000000003', NULL, 'Mood Check', 'checkins', TRUE,
 'How is everyone feeling? One score and an optional note.',
 'Quick mood check!', 'Thanks for letting us know.',
 '[{"uuid":"0190a000-0000-7000-8003-000000000001","index":0,"question":"How are you feeling today, from 1 to 5?","question_type":"numeric","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8003-000000000002","index":1,"question":"Anything you want to share?","question_type":"text","required":false,"is_blocker":false}]'),
('0190a000-0000-7000-8000-000000000004', NULL, 'One-on-One Prep', 'checkins', TRUE,
 'Collect topics before a one-on-one meeting.',
 'Your one-on-one is coming up.', 'Thanks, your manager will see your topics.',
 '[{"uuid":"0190a000-0000-7000-8004-000000000001","index":0,"question":"What would you like to talk about?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8004-000000000002","index":1,"question":"Do you need help with anything?","question_type":"boolean","required":false,"is_blocker":true}]'),
('0190a000-0000-7000-8000-000000000005', NULL, 'Feedback Form', 'forms', TRUE,
 'Anonymous-friendly feedback on anything.',
 'We would love your feedback.', 'Thank you for your feedback!',
 '[{"uuid":"0190a000-0000-7000-8005-000000000001","index":0,"question":"What is your feedback about?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8005-000000000002","index":1,"question":"How satisfied are you, from 1 to 5?","question_type":"numeric","required":true,"is_blocker":false}]'),
('0190a000-0000-7000-8000-000000000006', NULL, 'Time-off Request', 'forms', TRUE,
 'Ask for time off and route it for approval.',
 'Requesting time off?', 'Your request was sent for approval.',
 '[{"uuid":"0190a000-0000-7000-8006-000000000001","index":0,"question":"Which dates will you be away?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8006-000000000002","index":1,"question":"Reason (optional)","question_type":"text","required":false,"is_blocker":false}]'),
('0190a000-0000-7000-8000-000000000007', NULL, 'IT Help Request', 'forms', TRUE,
 'Report an IT issue to the right people.',
 'Something not working?', 'Thanks, IT has been notified.',
 '[{"uuid":"0190a000-0000-7000-8007-000000000001","index":0,"question":"What is the problem?","question_type":"text","required":true,"is_blocker":false},
   {"uuid":"0190a000-0000-7000-8007-000000000002","index":1,"question":"How urgent is it?","question_type":"multiple_choice","required":true,"is_blocker":false,"options":["Low","Medium","High"]}]');
