-- Agents (issue 10 §3): reports, health checks and messages keyed by (organization, agent
-- name); registration riddles; registrations of agents with the free organization they
-- created, pending a claim; agent keys (credentials of an organization, no person).

CREATE TABLE agent_reports (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_name text NOT NULL,
    content text NOT NULL,
    structured jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}',
    is_milestone boolean NOT NULL DEFAULT false,
    -- [{uuid, name}] as the co-authors were when the report was made
    co_authors jsonb NOT NULL DEFAULT '[]',
    created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_reports_org_agent_idx ON agent_reports (organization_id, agent_name, created_at DESC);

CREATE TABLE agent_health_checks (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_name text NOT NULL,
    ok boolean NOT NULL,
    message text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_health_checks_org_agent_idx
    ON agent_health_checks (organization_id, agent_name, created_at DESC, id DESC);

CREATE TABLE agent_messages (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_name text NOT NULL,
    content text NOT NULL,
    message_type text NOT NULL CHECK (message_type IN ('text', 'command', 'system')),
    metadata jsonb NOT NULL DEFAULT '{}',
    sender_type text NOT NULL CHECK (sender_type IN ('agent', 'user', 'system')),
    sender_name text,
    expires_at timestamptz,
    delivered_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_messages_org_agent_idx ON agent_messages (organization_id, agent_name, created_at);
CREATE INDEX agent_messages_pending_idx ON agent_messages (organization_id, agent_name)
    WHERE delivered_at IS NULL;

-- The expected answer is kept server-side; a row is deleted when it is answered (single use).
CREATE TABLE agent_register_challenges (
    id uuid PRIMARY KEY,
    answer bigint NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_register_challenges_expiry_idx ON agent_register_challenges (expires_at);

CREATE TABLE agent_registrations (
    organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    agent_name text NOT NULL,
    agent_email text NOT NULL UNIQUE,
    reason text NOT NULL,
    timezone text NOT NULL,
    contact_email text,
    -- SHA-256 of the claim link's token
    claim_token_hash bytea NOT NULL UNIQUE,
    claim_expires_at timestamptz NOT NULL,
    claimed_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    claimed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agent_keys (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_name text NOT NULL,
    -- SHA-256 of the key; the key itself is shown once
    key_hash bytea NOT NULL UNIQUE,
    key_suffix text NOT NULL,
    active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_keys_org_idx ON agent_keys (organization_id);
