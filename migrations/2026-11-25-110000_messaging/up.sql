-- Bot messages, e-mails, and the organization's chat platform (issue 8; the messaging ports of
-- crates/messaging/src/ports.rs). A message or e-mail is written in the transaction that
-- enqueues its job (jobs table), so a send is accepted exactly when it is durably queued. How
-- many times a send was tried is the job's `attempt`; these tables keep where each send stands.

-- One row per stored message: a post, a thread response (under `thread_parent_id`, at
-- `thread_position`) or an edit (of `edit_of_id`, always the first message of its chain).
CREATE TABLE messages (
    -- Our id, the `bot_message_id` clients read.
    id               UUID PRIMARY KEY,
    organization_id  UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- Whose credential sent it, and whom it is shown as coming from (`send_as_user`).
    sender_id        UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    send_as_id       UUID REFERENCES users (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('post', 'thread_response', 'edit')),
    thread_parent_id UUID REFERENCES messages (id) ON DELETE CASCADE,
    thread_position  INTEGER CHECK (thread_position >= 0),
    edit_of_id       UUID REFERENCES messages (id) ON DELETE CASCADE,
    body             TEXT NOT NULL,
    image_url        TEXT,
    -- [{label, action: {link: {url}} | {interactive: {value}}, callback_url, settings}], in order.
    buttons          JSONB NOT NULL,
    bot_username     TEXT,
    bot_icon_url     TEXT,
    bot_icon_emoji   TEXT,
    is_ephemeral     BOOLEAN NOT NULL,
    -- The client's object, as sent.
    metadata         JSONB NOT NULL CHECK (jsonb_typeof(metadata) = 'object'),
    created_at       TIMESTAMPTZ NOT NULL,
    CHECK ((kind = 'thread_response') = (thread_parent_id IS NOT NULL)),
    CHECK ((kind = 'thread_response') = (thread_position IS NOT NULL)),
    CHECK ((kind = 'edit') = (edit_of_id IS NOT NULL))
);
-- A send's replies by position; unique, so two replies cannot claim one place.
CREATE UNIQUE INDEX messages_thread_idx ON messages (thread_parent_id, thread_position)
    WHERE thread_parent_id IS NOT NULL;
-- Edits are few; the index serves the cascade of a deleted original (its foreign key).
CREATE INDEX messages_edit_of_idx ON messages (edit_of_id) WHERE edit_of_id IS NOT NULL;

-- One row per target of a message: a direct message to `recipient_id`, or a post in
-- `channel_id` (in `thread_id`'s thread when set); where it stands and the platform's ids.
CREATE TABLE message_deliveries (
    message_id          UUID NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    -- The delivery's index in its message: with the message id, the send's idempotency key.
    position            INTEGER NOT NULL CHECK (position >= 0),
    recipient_id        UUID REFERENCES users (id) ON DELETE CASCADE,
    channel_id          TEXT,
    thread_id           TEXT,
    status              TEXT NOT NULL CHECK (status IN ('queued', 'delivered', 'failed')),
    platform_channel_id TEXT,
    platform_message_id TEXT,
    -- messaging::FailureReason's wire name; read strictly, so no list is repeated here.
    failure_reason      TEXT,
    updated_at          TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (message_id, position),
    CHECK ((recipient_id IS NULL) <> (channel_id IS NULL)),
    CHECK (thread_id IS NULL OR channel_id IS NOT NULL),
    CHECK ((status = 'delivered') = (platform_channel_id IS NOT NULL)),
    CHECK ((status = 'delivered') = (platform_message_id IS NOT NULL)),
    CHECK ((status = 'failed') = (failure_reason IS NOT NULL))
);
-- No index on the people columns (sender, recipient) here or on e-mails: every send would pay for
-- it, and only the deletion of a person or organization (never done by the API) would use it.

-- One e-mail to one person (a send to several people is one row each, each with its job).
CREATE TABLE emails (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    sender_id       UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    recipient_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The mailbox as it was when queued: a later change of the person's address does not
    -- redirect an e-mail already accepted.
    to_address      TEXT NOT NULL,
    to_name         TEXT,
    subject         TEXT NOT NULL,
    html_body       TEXT,
    text_body       TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
    failure_reason  TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    CHECK ((status = 'failed') = (failure_reason IS NOT NULL))
);

-- An organization's chat platform. The secret is stored sealed (AES-256-GCM under a key
-- derived from the server's configured secret, bound to the organization and kind), so a
-- database dump or a read by any other query shows no usable token.
CREATE TABLE platform_connections (
    organization_id UUID PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('matrix', 'slack')),
    -- The Matrix homeserver; NULL for Slack (the adapter's configured API base).
    base_url        TEXT,
    -- nonce (12 bytes) || ciphertext || tag (16 bytes).
    sealed_secret   BYTEA NOT NULL CHECK (length(sealed_secret) > 28),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Who a person is on a platform (Matrix `@ada:example.org`, Slack `U…`). Kept when the
-- organization disconnects, so they still name the people if it connects again.
CREATE TABLE platform_identities (
    organization_id  UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('matrix', 'slack')),
    user_id          UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    platform_user_id TEXT NOT NULL CHECK (length(platform_user_id) BETWEEN 1 AND 255),
    PRIMARY KEY (organization_id, kind, user_id),
    -- One person per platform identity in an organization (the name the port's conflict names).
    CONSTRAINT platform_identities_unique UNIQUE (organization_id, kind, platform_user_id)
);
