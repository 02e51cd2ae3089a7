DROP TABLE cli_tokens;
DROP TABLE api_keys;
DROP TABLE team_members;
DROP TABLE teams;
DROP TABLE users;
DROP TABLE organizations;
