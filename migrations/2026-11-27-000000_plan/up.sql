-- Plan (Beta) core (issue 11): projects, boards with their keys and members, columns (states),
-- tasks with their per-board numbers, versions and ranks, the task event log (activity and the
-- delta feed's archive list), relations, comments and reactions, participants, visits, and the
-- idempotency slots of the marked writes. Every row carries its organization; every read is
-- scoped by it (another organization's object is 404).

CREATE TABLE plan_projects (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    visibility text NOT NULL DEFAULT 'org' CHECK (visibility IN ('org', 'members')),
    lead_id uuid REFERENCES users (id) ON DELETE SET NULL,
    health text NOT NULL DEFAULT 'not_set'
        CHECK (health IN ('not_set', 'on_track', 'at_risk', 'off_track')),
    start_date date,
    target_date date,
    -- order of the organization's projects (reorder), gaps allowed
    rank bigint NOT NULL,
    is_archived boolean NOT NULL DEFAULT false,
    archived_at timestamptz,
    created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- project_name_conflict: live and archived projects alike, ignoring case.
CREATE UNIQUE INDEX plan_projects_org_lower_name_key ON plan_projects (organization_id, lower(name));
CREATE INDEX plan_projects_org_rank_idx ON plan_projects (organization_id, rank);

-- Grants of a members-only project or board: one person or one team each.
CREATE TABLE plan_project_members (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    project_id uuid NOT NULL REFERENCES plan_projects (id) ON DELETE CASCADE,
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    team_id uuid REFERENCES teams (id) ON DELETE CASCADE,
    role text NOT NULL DEFAULT 'member',
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((user_id IS NULL) <> (team_id IS NULL))
);
CREATE UNIQUE INDEX plan_project_members_user_key ON plan_project_members (project_id, user_id) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX plan_project_members_team_key ON plan_project_members (project_id, team_id) WHERE team_id IS NOT NULL;

CREATE TABLE plan_boards (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    project_id uuid NOT NULL REFERENCES plan_projects (id),
    name text NOT NULL,
    -- the current key (`ENG`); every key it ever had is in plan_board_keys
    key text NOT NULL,
    visibility text NOT NULL DEFAULT 'org' CHECK (visibility IN ('org', 'members')),
    estimate_scale text NOT NULL DEFAULT 'none' CHECK (estimate_scale IN ('none', 'fibonacci', 'linear')),
    archive_after_days integer CHECK (archive_after_days >= 1),
    rank bigint NOT NULL,
    -- the number the next task of this board gets (KEY-n): taken under the board row's lock in
    -- the task's own transaction, so numbers have no gaps and no duplicates
    next_task_number bigint NOT NULL DEFAULT 1,
    is_archived boolean NOT NULL DEFAULT false,
    archived_at timestamptz,
    created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_boards_org_rank_idx ON plan_boards (organization_id, rank);
CREATE INDEX plan_boards_project_idx ON plan_boards (project_id);

-- Every key a board has had: the current one and the retired ones, which stay reserved
-- (duplicate_board_key) and keep resolving (`OLD-12`).
CREATE TABLE plan_board_keys (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    key text NOT NULL,
    board_id uuid NOT NULL REFERENCES plan_boards (id) ON DELETE CASCADE,
    retired_at timestamptz,
    PRIMARY KEY (organization_id, key)
);
CREATE INDEX plan_board_keys_board_idx ON plan_board_keys (board_id);

CREATE TABLE plan_board_members (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    board_id uuid NOT NULL REFERENCES plan_boards (id) ON DELETE CASCADE,
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    team_id uuid REFERENCES teams (id) ON DELETE CASCADE,
    role text NOT NULL DEFAULT 'member',
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((user_id IS NULL) <> (team_id IS NULL))
);
CREATE UNIQUE INDEX plan_board_members_user_key ON plan_board_members (board_id, user_id) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX plan_board_members_team_key ON plan_board_members (board_id, team_id) WHERE team_id IS NOT NULL;

-- A person's recent boards (POST boards/{b}/visit/, GET me/recents/).
CREATE TABLE plan_board_visits (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    board_id uuid NOT NULL REFERENCES plan_boards (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    visited_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, board_id)
);

-- Columns. `category` never changes after creation.
CREATE TABLE plan_states (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    board_id uuid NOT NULL REFERENCES plan_boards (id) ON DELETE CASCADE,
    name text NOT NULL,
    category text NOT NULL CHECK (category IN ('backlog', 'todo', 'in_progress', 'done', 'canceled')),
    -- 1-based order among the board's live columns
    position integer NOT NULL,
    color text,
    is_default boolean NOT NULL DEFAULT false,
    is_archived boolean NOT NULL DEFAULT false,
    archived_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_states_board_idx ON plan_states (board_id, position);

CREATE TABLE plan_tasks (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    board_id uuid NOT NULL REFERENCES plan_boards (id),
    -- KEY-n: n, unique on the board; the key's letters are the board's current key
    number bigint NOT NULL,
    state_id uuid NOT NULL REFERENCES plan_states (id),
    parent_id uuid REFERENCES plan_tasks (id),
    title text NOT NULL,
    description text NOT NULL DEFAULT '',
    owner_id uuid REFERENCES users (id) ON DELETE SET NULL,
    priority smallint CHECK (priority BETWEEN 1 AND 5),
    estimate integer CHECK (estimate >= 0),
    start_date date,
    due_date date,
    -- milestones arrive with the next Plan issue; kept as a bare reference until then
    milestone_id uuid,
    -- order within the column: gaps allowed, renumbered when two neighbours touch
    rank bigint NOT NULL,
    -- optimistic concurrency: every write bumps it
    version bigint NOT NULL DEFAULT 1,
    is_archived boolean NOT NULL DEFAULT false,
    archived_at timestamptz,
    -- archived because its board was (restoring the board leaves it archived)
    archived_with_board boolean NOT NULL DEFAULT false,
    completed_at timestamptz,
    created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    -- the agent named on the creating request (agent attribution)
    created_by_agent text,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- stamped with clock_timestamp() by every write: the delta feed reads it
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (board_id, number)
);
CREATE INDEX plan_tasks_board_state_rank_idx ON plan_tasks (board_id, state_id, rank) WHERE NOT is_archived;
CREATE INDEX plan_tasks_board_updated_idx ON plan_tasks (board_id, updated_at);
CREATE INDEX plan_tasks_org_owner_idx ON plan_tasks (organization_id, owner_id) WHERE NOT is_archived;
CREATE INDEX plan_tasks_parent_idx ON plan_tasks (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX plan_tasks_org_created_idx ON plan_tasks (organization_id, created_at DESC, id DESC);

-- What happened to a task, oldest first: `GET tasks/{t}/events/`, `…/activity/`, and the
-- delta feed's archived list. Written in the transaction of the change.
CREATE TABLE plan_task_events (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    board_id uuid NOT NULL REFERENCES plan_boards (id) ON DELETE CASCADE,
    task_id uuid NOT NULL REFERENCES plan_tasks (id) ON DELETE CASCADE,
    type text NOT NULL,
    actor_id uuid REFERENCES users (id) ON DELETE SET NULL,
    agent_name text,
    data jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_task_events_task_idx ON plan_task_events (task_id, created_at, id);
CREATE INDEX plan_task_events_board_idx ON plan_task_events (board_id, created_at);
CREATE INDEX plan_task_events_org_idx ON plan_task_events (organization_id, created_at DESC, id DESC);

CREATE TABLE plan_task_relations (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- outgoing from source: source blocks / relates_to / duplicates target
    source_task_id uuid NOT NULL REFERENCES plan_tasks (id) ON DELETE CASCADE,
    target_task_id uuid NOT NULL REFERENCES plan_tasks (id) ON DELETE CASCADE,
    relation_type text NOT NULL CHECK (relation_type IN ('blocks', 'relates_to', 'duplicates')),
    created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    created_by_agent text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (source_task_id <> target_task_id),
    UNIQUE (source_task_id, target_task_id, relation_type)
);
CREATE INDEX plan_task_relations_target_idx ON plan_task_relations (target_task_id);

CREATE TABLE plan_comments (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    task_id uuid NOT NULL REFERENCES plan_tasks (id) ON DELETE CASCADE,
    -- one level of replies
    parent_id uuid REFERENCES plan_comments (id) ON DELETE CASCADE,
    author_id uuid REFERENCES users (id) ON DELETE SET NULL,
    agent_name text,
    body text NOT NULL,
    -- people mentioned with <@DB@uuid>, as written
    mentions uuid[] NOT NULL DEFAULT '{}',
    edited_at timestamptz,
    -- soft delete: body blanked, row kept
    deleted_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_comments_task_idx ON plan_comments (task_id, created_at, id);

CREATE TABLE plan_comment_reactions (
    comment_id uuid NOT NULL REFERENCES plan_comments (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    emoji text NOT NULL,
    agent_name text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comment_id, user_id, emoji)
);

CREATE TABLE plan_task_participants (
    task_id uuid NOT NULL REFERENCES plan_tasks (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('participant', 'watcher')),
    -- how they came: added, owner, creator, mention, subscription
    source text NOT NULL,
    is_muted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (task_id, user_id)
);
CREATE INDEX plan_task_participants_user_idx ON plan_task_participants (user_id);

-- Task labels go in entity_labels, as forms', check-ins' and workflows' do.
ALTER TABLE entity_labels DROP CONSTRAINT entity_labels_entity_type_check;
ALTER TABLE entity_labels ADD CONSTRAINT entity_labels_entity_type_check
    CHECK (entity_type IN ('checkins', 'forms', 'workflows', 'tasks'));

-- Idempotency slots of the marked Plan writes: one per (organization, route, key) for 24 hours.
-- A slot is taken before the write runs (`in_progress`, held 120 seconds) and keeps the answer
-- once it is done; the same body gets that answer again, another body is refused.
CREATE TABLE plan_idempotency_keys (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    route text NOT NULL,
    key text NOT NULL,
    request_hash bytea NOT NULL,
    -- null while the first request still runs
    response_status smallint,
    response_body bytea,
    locked_until timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, route, key)
);
CREATE INDEX plan_idempotency_keys_created_idx ON plan_idempotency_keys (created_at);
