DROP TRIGGER users_stay ON users;
DROP FUNCTION users_stay_in_organization();
DROP TRIGGER users_count_insert ON users;
DROP TRIGGER users_count_delete ON users;
DROP FUNCTION users_count_statement();

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
