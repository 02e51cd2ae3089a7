DROP INDEX users_search_email_idx;
DROP TABLE login_codes;
DROP TRIGGER organizations_login_number ON organizations;
DROP FUNCTION organization_login_number();
DROP TABLE organization_login_numbers;
