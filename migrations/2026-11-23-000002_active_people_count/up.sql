-- The people lists filtered on is_active alone (the CLI lists active people by default) get what
-- the unfiltered list has: a maintained total, organizations.active_user_count, and an index
-- that serves their order, so a page is one indexed read whatever the organization's size.
ALTER TABLE organizations ADD COLUMN active_user_count BIGINT NOT NULL DEFAULT 0;

CREATE INDEX users_org_active_name_idx ON users (organization_id, is_active, first_name, last_name, id);

CREATE OR REPLACE FUNCTION users_count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE organizations o
        SET user_count = o.user_count + n.people, active_user_count = o.active_user_count + n.active
        FROM (SELECT organization_id, count(*) AS people, count(*) FILTER (WHERE is_active) AS active
              FROM inserted GROUP BY organization_id) n
        WHERE o.id = n.organization_id;
    ELSE
        UPDATE organizations o
        SET user_count = o.user_count - n.people, active_user_count = o.active_user_count - n.active
        FROM (SELECT organization_id, count(*) AS people, count(*) FILTER (WHERE is_active) AS active
              FROM deleted GROUP BY organization_id) n
        WHERE o.id = n.organization_id;
    END IF;
    RETURN NULL;
END $$;

-- (De)activations are one person at a time: a row trigger that fires only on a change.
CREATE FUNCTION users_active_count_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE organizations
    SET active_user_count = active_user_count + CASE WHEN NEW.is_active THEN 1 ELSE -1 END
    WHERE id = NEW.organization_id;
    RETURN NULL;
END $$;
CREATE TRIGGER users_active_count AFTER UPDATE OF is_active ON users FOR EACH ROW
    WHEN (OLD.is_active IS DISTINCT FROM NEW.is_active)
    EXECUTE FUNCTION users_active_count_row();

UPDATE organizations o
SET active_user_count = (SELECT count(*) FROM users u WHERE u.organization_id = o.id AND u.is_active);
