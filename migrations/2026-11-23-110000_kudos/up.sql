-- Kudos (issue 7): the organization's company values, kudos with their receivers, and the +1s
-- (boosts) others add. Giver, receivers and value are checked to be of the kudos' organization
-- by the adapter, in the transaction that writes them.

CREATE TABLE company_values (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    emoji           TEXT NOT NULL CHECK (length(emoji) BETWEEN 1 AND 32),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- One value per name (any case) and organization; registering a name again changes its emoji.
CREATE UNIQUE INDEX company_values_org_name_key ON company_values (organization_id, lower(name));

CREATE TABLE kudos (
    id               UUID PRIMARY KEY,
    organization_id  UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    giver_id         UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    company_value_id UUID REFERENCES company_values (id) ON DELETE SET NULL,
    content          TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 2000),
    is_anonymous     BOOLEAN NOT NULL,
    by_dailybot      BOOLEAN NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL
);
-- Lists: an organization's kudos, newest first.
CREATE INDEX kudos_org_created_idx ON kudos (organization_id, created_at DESC, id DESC);
-- The daily limit counts a giver's kudos since their local midnight; "given by" filters.
CREATE INDEX kudos_giver_created_idx ON kudos (giver_id, created_at);

CREATE TABLE kudos_receivers (
    kudos_id UUID NOT NULL REFERENCES kudos (id) ON DELETE CASCADE,
    user_id  UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (kudos_id, user_id)
);
-- "Received by" filters and the wall of fame.
CREATE INDEX kudos_receivers_user_idx ON kudos_receivers (user_id, kudos_id);

CREATE TABLE kudos_boosts (
    kudos_id   UUID NOT NULL REFERENCES kudos (id) ON DELETE CASCADE,
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    -- One +1 per person and kudos.
    PRIMARY KEY (kudos_id, user_id)
);
