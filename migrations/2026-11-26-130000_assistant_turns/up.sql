-- The CLI assistant's conversations (issue 10 §2, `POST /v1/cli/chat/completions/`): the turns
-- of each person's sessions, a question (`user`) and its answer (`assistant`) written together
-- once the model answered. A session is the person's own: the same `session_id` of another
-- person is another thread. The newest turns of a session go with each question.
CREATE TABLE assistant_turns (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- What the client sent ([A-Za-z0-9_-], at most 100; the CLI sends a UUID) or a new UUID.
    session_id      TEXT NOT NULL CHECK (session_id ~ '^[A-Za-z0-9_-]{1,100}$'),
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content         TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

-- A session's newest turns first.
CREATE INDEX assistant_turns_session_idx ON assistant_turns (user_id, session_id, id DESC);
