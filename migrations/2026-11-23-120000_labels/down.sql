DROP TABLE featured_entities;
DROP TABLE entity_labels;
DROP TABLE labels;
