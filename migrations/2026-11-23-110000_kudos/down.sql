DROP TABLE kudos_boosts;
DROP TABLE kudos_receivers;
DROP TABLE kudos;
DROP TABLE company_values;
