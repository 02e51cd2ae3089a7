DROP TRIGGER users_active_count ON users;
DROP FUNCTION users_active_count_row();

CREATE OR REPLACE FUNCTION users_count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP INDEX users_org_active_name_idx;
ALTER TABLE organizations DROP COLUMN active_user_count;
