-- Organization labels (issue 7 §4), shared by forms, check-ins and workflows (and later the Plan
-- area). Check-ins and forms filter their lists with subqueries on entity_labels and
-- featured_entities, so these three tables are the agreed interface: change them with them.
CREATE TABLE labels (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    color           TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    is_archived     BOOLEAN NOT NULL DEFAULT FALSE,
    created_by_id   UUID REFERENCES users (id) ON DELETE SET NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Names are unique per organization regardless of case (duplicate_name).
CREATE UNIQUE INDEX labels_org_lower_name_key ON labels (organization_id, lower(name));

-- Which labels an entity carries. No foreign key to the entity: the three entity types live in
-- three tables (workflows in none yet); the service checks the entity exists in the org.
CREATE TABLE entity_labels (
    organization_id UUID NOT NULL,
    entity_type     TEXT NOT NULL CHECK (entity_type IN ('checkins', 'forms', 'workflows')),
    entity_id       UUID NOT NULL,
    label_id        UUID NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (entity_type, entity_id, label_id)
);
-- Usage counts and the lists' `labels=` filter go from the label to its entities.
CREATE INDEX entity_labels_label_idx ON entity_labels (label_id, entity_type);

-- A person's private stars.
CREATE TABLE featured_entities (
    user_id         UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    organization_id UUID NOT NULL,
    entity_type     TEXT NOT NULL CHECK (entity_type IN ('checkins', 'forms', 'workflows')),
    entity_id       UUID NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, entity_type, entity_id)
);
