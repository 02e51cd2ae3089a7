-- organizations.user_count, the total of the unfiltered people list, is now kept per statement.
-- The per-row trigger updated the organization once per person: a bulk INSERT of n people made n
-- versions of one row in one transaction, and each foreign-key check walked that growing chain
-- (a 1,000,000-people INSERT ran for minutes). One UPDATE per statement and organization instead.
DROP TRIGGER users_count ON users;
DROP FUNCTION users_count_trigger();

CREATE FUNCTION users_count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE organizations o SET user_count = o.user_count + n.people
        FROM (SELECT organization_id, count(*) AS people FROM inserted GROUP BY organization_id) n
        WHERE o.id = n.organization_id;
    ELSE
        UPDATE organizations o SET user_count = o.user_count - n.people
        FROM (SELECT organization_id, count(*) AS people FROM deleted GROUP BY organization_id) n
        WHERE o.id = n.organization_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER users_count_insert AFTER INSERT ON users
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION users_count_statement();
CREATE TRIGGER users_count_delete AFTER DELETE ON users
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION users_count_statement();

-- The counts assume people never change organization; no statement does, and this keeps it so
-- (transition-table triggers cannot watch one column, so an UPDATE trigger would cost every edit).
CREATE FUNCTION users_stay_in_organization() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'users.organization_id cannot change';
END $$;
CREATE TRIGGER users_stay BEFORE UPDATE OF organization_id ON users FOR EACH ROW
    WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION users_stay_in_organization();

-- Recount once, so the new triggers start from an exact total.
UPDATE organizations o SET user_count = (SELECT count(*) FROM users u WHERE u.organization_id = o.id);
