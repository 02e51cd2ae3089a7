-- CLI one-time-code login (issue 10 §1; docs/decisions.md "One-time-code login").

-- The integer id of an organization in the login flow (`organizations[].id`, the only integer id
-- the CLI handles): given once, at creation, in creation order, never reused.
CREATE TABLE organization_login_numbers (
    organization_id UUID PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    number          BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
);
INSERT INTO organization_login_numbers (organization_id)
SELECT id FROM organizations ORDER BY created_at, id;

CREATE FUNCTION organization_login_number() RETURNS trigger AS $$
BEGIN
    INSERT INTO organization_login_numbers (organization_id) VALUES (NEW.id);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER organizations_login_number
    AFTER INSERT ON organizations
    FOR EACH ROW EXECUTE FUNCTION organization_login_number();

-- One live code per address. Neither the address nor the code is stored: the row is keyed by the
-- SHA-256 of the lower-case address, and the code kept as SHA-256(salt, address, code).
CREATE TABLE login_codes (
    address_hash BYTEA PRIMARY KEY CHECK (length(address_hash) = 32),
    id           UUID NOT NULL UNIQUE,
    salt         BYTEA NOT NULL CHECK (length(salt) = 16),
    code_hash    BYTEA NOT NULL CHECK (length(code_hash) = 32),
    tries        INT NOT NULL DEFAULT 0 CHECK (tries >= 0),
    expires_at   TIMESTAMPTZ NOT NULL,
    used_at      TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX login_codes_expires_idx ON login_codes (expires_at);

-- A login finds people by address across organizations (search_email is lower(email)).
CREATE INDEX users_search_email_idx ON users (search_email);
