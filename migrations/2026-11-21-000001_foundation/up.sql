-- Foundation: tenants, people, teams and credentials.
-- Secrets are never stored in plaintext: api_keys and cli_tokens keep only SHA-256 hashes.

CREATE TABLE organizations (
    id              UUID PRIMARY KEY,
    name            TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    plan            TEXT NOT NULL CHECK (plan IN ('free', 'starter', 'business', 'enterprise')),
    api_access      BOOLEAN NOT NULL,
    plan_beta       BOOLEAN NOT NULL DEFAULT FALSE,
    exchange_tokens BOOLEAN NOT NULL DEFAULT FALSE,
    timezone        TEXT NOT NULL DEFAULT 'UTC',
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email           TEXT NOT NULL,
    first_name      TEXT NOT NULL DEFAULT '',
    last_name       TEXT NOT NULL DEFAULT '',
    role            TEXT NOT NULL CHECK (role IN ('admin', 'member', 'guest')),
    is_active       BOOLEAN NOT NULL DEFAULT TRUE,
    timezone        TEXT NOT NULL DEFAULT 'UTC',
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- One account per e-mail per organization (the same person may belong to several organizations).
CREATE UNIQUE INDEX users_org_email_key ON users (organization_id, lower(email));

CREATE TABLE teams (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX teams_org_idx ON teams (organization_id);

CREATE TABLE team_members (
    team_id    UUID NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user_idx ON team_members (user_id);

CREATE TABLE api_keys (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    owner_id        UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_by_id   UUID REFERENCES users (id) ON DELETE SET NULL,
    name            TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    key_hash        BYTEA NOT NULL CHECK (length(key_hash) = 32),
    key_suffix      TEXT NOT NULL CHECK (length(key_suffix) = 4),
    is_agent_key    BOOLEAN NOT NULL DEFAULT FALSE,
    scopes          TEXT[] NOT NULL DEFAULT '{}',
    active          BOOLEAN NOT NULL DEFAULT TRUE,
    expiration      TIMESTAMPTZ,
    last_usage_at   TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The authentication hot path is one probe of this index.
CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_org_idx ON api_keys (organization_id, created_at DESC, id);
CREATE INDEX api_keys_owner_idx ON api_keys (owner_id);

CREATE TABLE cli_tokens (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash      BYTEA NOT NULL CHECK (length(token_hash) = 32),
    expires_at      TIMESTAMPTZ,
    revoked_at      TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX cli_tokens_hash_key ON cli_tokens (token_hash);
CREATE INDEX cli_tokens_user_idx ON cli_tokens (user_id);
