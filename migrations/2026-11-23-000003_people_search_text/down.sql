ALTER TABLE users DROP COLUMN search_name, DROP COLUMN search_email;
