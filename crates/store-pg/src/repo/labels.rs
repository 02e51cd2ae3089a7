//! SQL of labels, the labels entities carry, and people's featured stars.

use std::collections::HashSet;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_labels::{
    BatchMode, Deletion, EntityKind, FeaturedRepository, Label, LabelFilter, LabelId, LabelPatch,
    LabelRepository, LabelledEntities, NewLabel,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::count_from;
use super::paging::{like_pattern, load_page};
use crate::Database;
use crate::error::db_error;
use crate::schema::labels::{entity_labels, featured_entities, labels};

diesel::define_sql_function!(fn lower(a: diesel::sql_types::Text) -> diesel::sql_types::Text);

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = labels, check_for_backend(diesel::pg::Pg))]
struct LabelRow {
    id: Uuid,
    organization_id: Uuid,
    name: String,
    color: String,
    description: String,
    is_archived: bool,
    created_by_id: Option<Uuid>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

/// A label with how many entities carry it (the count subquery is NULL-typed to diesel).
#[derive(Debug, Queryable)]
struct CountedLabelRow {
    label: LabelRow,
    usage: Option<i64>,
}

impl TryFrom<CountedLabelRow> for Label {
    type Error = RepoError;
    fn try_from(CountedLabelRow { label: r, usage }: CountedLabelRow) -> Result<Self, RepoError> {
        Ok(Label {
            id: LabelId(r.id),
            org_id: OrgId(r.organization_id),
            name: r.name,
            color: r.color,
            description: r.description,
            is_archived: r.is_archived,
            created_by: r.created_by_id.map(UserId),
            usage: count_from(usage.unwrap_or(0))?,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

diesel::alias!(entity_labels as carried: CarriedLabels);

/// The columns of a [`CountedLabelRow`] (a macro: the subquery's type is not worth spelling).
macro_rules! counted_columns {
    () => {
        (
            LabelRow::as_select(),
            carried
                .filter(carried.field(entity_labels::label_id).eq(labels::id))
                .count()
                .single_value(),
        )
    };
}

/// The ordering of every label list: name without case, then id.
fn by_name() -> (lower<labels::name>, labels::id) {
    (lower(labels::name), labels::id)
}

fn to_uuids(ids: &[LabelId]) -> Vec<Uuid> {
    ids.iter().map(|l| l.0).collect()
}

async fn load_label(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    id: LabelId,
) -> QueryResult<CountedLabelRow> {
    labels::table
        .filter(labels::id.eq(id.0))
        .filter(labels::organization_id.eq(org.0))
        .select(counted_columns!())
        .first(conn)
        .await
}

/// Those of `ids` that are labels of `org` (entity writes never take another's label).
async fn labels_of_org(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    ids: &[Uuid],
) -> QueryResult<Vec<Uuid>> {
    labels::table
        .filter(labels::id.eq_any(ids))
        .filter(labels::organization_id.eq(org.0))
        .select(labels::id)
        .load(conn)
        .await
}

/// Puts every label on every entity (those already there stay); the entities that gained one.
async fn add_labels(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    kind: EntityKind,
    entities: &[Uuid],
    labels: &[Uuid],
) -> QueryResult<Vec<Uuid>> {
    let rows: Vec<_> = entities
        .iter()
        .flat_map(|e| {
            labels.iter().map(move |l| {
                (
                    entity_labels::organization_id.eq(org.0),
                    entity_labels::entity_type.eq(kind.as_str()),
                    entity_labels::entity_id.eq(*e),
                    entity_labels::label_id.eq(*l),
                )
            })
        })
        .collect();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    diesel::insert_into(entity_labels::table)
        .values(rows)
        .on_conflict_do_nothing()
        .returning(entity_labels::entity_id)
        .get_results(conn)
        .await
}

/// Takes the labels `labels` off the entities (`keep: true`: every label but those); the
/// entities that lost one.
async fn remove_labels(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    kind: EntityKind,
    entities: &[Uuid],
    labels: &[Uuid],
    keep: bool,
) -> QueryResult<Vec<Uuid>> {
    let of_entities = entity_labels::organization_id
        .eq(org.0)
        .and(entity_labels::entity_type.eq(kind.as_str()))
        .and(entity_labels::entity_id.eq_any(entities));
    if keep {
        diesel::delete(
            entity_labels::table.filter(of_entities.and(entity_labels::label_id.ne_all(labels))),
        )
        .returning(entity_labels::entity_id)
        .get_results(conn)
        .await
    } else {
        diesel::delete(
            entity_labels::table.filter(of_entities.and(entity_labels::label_id.eq_any(labels))),
        )
        .returning(entity_labels::entity_id)
        .get_results(conn)
        .await
    }
}

/// Postgres implementation of [`LabelRepository`].
#[derive(Clone)]
pub struct PgLabelRepository {
    db: Database,
}

impl PgLabelRepository {
    pub fn new(db: Database) -> Self {
        PgLabelRepository { db }
    }
}

#[async_trait]
impl LabelRepository for PgLabelRepository {
    async fn create_label(&self, org: OrgId, new: &NewLabel) -> Result<Label, RepoError> {
        let mut conn = self.db.conn().await?;
        let label: LabelRow = diesel::insert_into(labels::table)
            .values((
                labels::id.eq(new.id.0),
                labels::organization_id.eq(org.0),
                labels::name.eq(&new.name),
                labels::color.eq(&new.color),
                labels::description.eq(&new.description),
                labels::created_by_id.eq(new.created_by.0),
            ))
            .returning(LabelRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        CountedLabelRow {
            label,
            usage: Some(0),
        }
        .try_into()
    }

    async fn get_label(&self, org: OrgId, id: LabelId) -> Result<Label, RepoError> {
        let mut conn = self.db.conn().await?;
        load_label(&mut conn, org, id)
            .await
            .map_err(db_error)?
            .try_into()
    }

    async fn list_labels(
        &self,
        org: OrgId,
        filter: &LabelFilter,
        page: PageRequest,
    ) -> Result<Page<Label>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = || {
            let mut q = labels::table
                .filter(labels::organization_id.eq(org.0))
                .into_boxed();
            if !filter.include_archived {
                q = q.filter(labels::is_archived.eq(false));
            }
            if let Some(search) = filter.search.as_deref() {
                q = q.filter(labels::name.ilike(like_pattern(search)));
            }
            q
        };
        load_page::<CountedLabelRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by(by_name()).select(counted_columns!())
        })
        .await
    }

    async fn update_label(
        &self,
        org: OrgId,
        id: LabelId,
        patch: &LabelPatch,
    ) -> Result<Label, RepoError> {
        #[derive(AsChangeset)]
        #[diesel(table_name = labels)]
        struct Changes<'a> {
            name: Option<&'a str>,
            color: Option<&'a str>,
            description: Option<&'a str>,
            is_archived: Option<bool>,
            updated_at: OffsetDateTime,
        }
        let mut conn = self.db.conn().await?;
        let changes = Changes {
            name: patch.name.as_deref(),
            color: patch.color.as_deref(),
            description: patch.description.as_deref(),
            is_archived: patch.is_archived,
            updated_at: OffsetDateTime::now_utc(),
        };
        let updated = diesel::update(
            labels::table
                .filter(labels::id.eq(id.0))
                .filter(labels::organization_id.eq(org.0)),
        )
        .set(changes)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 0 {
            return Err(RepoError::NotFound);
        }
        load_label(&mut conn, org, id)
            .await
            .map_err(db_error)?
            .try_into()
    }

    async fn delete_unused_label(&self, org: OrgId, id: LabelId) -> Result<Deletion, RepoError> {
        let mut conn = self.db.conn().await?;
        let usage = conn
            .transaction(async |conn| {
                // The row lock makes a concurrent assignment (whose foreign-key check takes a
                // share lock on the label) either count below or find the label gone.
                labels::table
                    .filter(labels::id.eq(id.0))
                    .filter(labels::organization_id.eq(org.0))
                    .select(labels::id)
                    .for_update()
                    .first::<Uuid>(conn)
                    .await?;
                let usage: i64 = entity_labels::table
                    .filter(entity_labels::label_id.eq(id.0))
                    .count()
                    .get_result(conn)
                    .await?;
                if usage == 0 {
                    diesel::delete(labels::table.filter(labels::id.eq(id.0)))
                        .execute(conn)
                        .await?;
                }
                Ok::<_, diesel::result::Error>(usage)
            })
            .await
            .map_err(db_error)?;
        Ok(match count_from(usage)? {
            0 => Deletion::Deleted,
            n => Deletion::InUse(n),
        })
    }

    async fn find_labels(&self, org: OrgId, ids: &[LabelId]) -> Result<Vec<Label>, RepoError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<CountedLabelRow> = labels::table
            .filter(labels::id.eq_any(to_uuids(ids)))
            .filter(labels::organization_id.eq(org.0))
            .select(counted_columns!())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(Label::try_from).collect()
    }

    async fn assignments(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
    ) -> Result<Vec<(Uuid, LabelId)>, RepoError> {
        let mut conn = self.db.conn().await?;
        let pairs: Vec<(Uuid, Uuid)> = entity_labels::table
            .filter(entity_labels::organization_id.eq(org.0))
            .filter(entity_labels::entity_type.eq(kind.as_str()))
            .filter(entity_labels::entity_id.eq_any(entities))
            .filter(entity_labels::label_id.eq_any(to_uuids(labels)))
            .select((entity_labels::entity_id, entity_labels::label_id))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(pairs.into_iter().map(|(e, l)| (e, LabelId(l))).collect())
    }

    async fn replace_entity_labels(
        &self,
        org: OrgId,
        kind: EntityKind,
        entity: Uuid,
        labels: &[LabelId],
    ) -> Result<Vec<Label>, RepoError> {
        let mut conn = self.db.conn().await?;
        let wanted = to_uuids(labels);
        let rows: Vec<CountedLabelRow> = conn
            .transaction(async |conn| {
                let wanted = labels_of_org(conn, org, &wanted).await?;
                remove_labels(conn, org, kind, &[entity], &wanted, true).await?;
                add_labels(conn, org, kind, &[entity], &wanted).await?;
                labels::table
                    .inner_join(entity_labels::table)
                    .filter(entity_labels::organization_id.eq(org.0))
                    .filter(entity_labels::entity_type.eq(kind.as_str()))
                    .filter(entity_labels::entity_id.eq(entity))
                    .order_by(by_name())
                    .select(counted_columns!())
                    .load(conn)
                    .await
            })
            .await
            .map_err(db_error)?;
        rows.into_iter().map(Label::try_from).collect()
    }

    async fn batch_entity_labels(
        &self,
        org: OrgId,
        kind: EntityKind,
        entities: &[Uuid],
        labels: &[LabelId],
        mode: BatchMode,
    ) -> Result<u64, RepoError> {
        let mut conn = self.db.conn().await?;
        let named = to_uuids(labels);
        let changed: HashSet<Uuid> = conn
            .transaction(async |conn| {
                let named = labels_of_org(conn, org, &named).await?;
                let mut changed = Vec::new();
                if mode == BatchMode::Replace {
                    changed.extend(remove_labels(conn, org, kind, entities, &named, true).await?);
                }
                if mode == BatchMode::Remove {
                    changed.extend(remove_labels(conn, org, kind, entities, &named, false).await?);
                } else {
                    changed.extend(add_labels(conn, org, kind, entities, &named).await?);
                }
                Ok::<_, diesel::result::Error>(changed.into_iter().collect())
            })
            .await
            .map_err(db_error)?;
        Ok(changed.len() as u64)
    }
}

/// Postgres implementation of [`FeaturedRepository`].
#[derive(Clone)]
pub struct PgFeaturedRepository {
    db: Database,
}

impl PgFeaturedRepository {
    pub fn new(db: Database) -> Self {
        PgFeaturedRepository { db }
    }
}

#[async_trait]
impl FeaturedRepository for PgFeaturedRepository {
    async fn featured(&self, user: UserId, kind: EntityKind) -> Result<Vec<Uuid>, RepoError> {
        let mut conn = self.db.conn().await?;
        featured_entities::table
            .filter(featured_entities::user_id.eq(user.0))
            .filter(featured_entities::entity_type.eq(kind.as_str()))
            .order_by((featured_entities::created_at, featured_entities::entity_id))
            .select(featured_entities::entity_id)
            .load(&mut conn)
            .await
            .map_err(db_error)
    }

    async fn set_featured(
        &self,
        org: OrgId,
        user: UserId,
        kind: EntityKind,
        entities: &[Uuid],
        featured: bool,
    ) -> Result<Vec<Uuid>, RepoError> {
        let mut conn = self.db.conn().await?;
        // One statement either way, so all or nothing without a transaction.
        let changed: Vec<Uuid> = if featured {
            let rows: Vec<_> = entities
                .iter()
                .map(|e| {
                    (
                        featured_entities::user_id.eq(user.0),
                        featured_entities::organization_id.eq(org.0),
                        featured_entities::entity_type.eq(kind.as_str()),
                        featured_entities::entity_id.eq(*e),
                    )
                })
                .collect();
            diesel::insert_into(featured_entities::table)
                .values(rows)
                .on_conflict_do_nothing()
                .returning(featured_entities::entity_id)
                .get_results(&mut conn)
                .await
        } else {
            diesel::delete(
                featured_entities::table
                    .filter(featured_entities::user_id.eq(user.0))
                    .filter(featured_entities::entity_type.eq(kind.as_str()))
                    .filter(featured_entities::entity_id.eq_any(entities)),
            )
            .returning(featured_entities::entity_id)
            .get_results(&mut conn)
            .await
        }
        .map_err(db_error)?;
        let changed: HashSet<Uuid> = changed.into_iter().collect();
        Ok(entities
            .iter()
            .copied()
            .filter(|e| changed.contains(e))
            .collect())
    }
}

/// Postgres implementation of [`LabelledEntities`]: reads the check-in and form tables of
/// their areas by their two agreed columns (`id`, `organization_id`) with raw SQL, so this
/// adapter does not depend on those areas' schema modules.
#[derive(Clone)]
pub struct PgLabelledEntities {
    db: Database,
}

impl PgLabelledEntities {
    pub fn new(db: Database) -> Self {
        PgLabelledEntities { db }
    }
}

#[derive(QueryableByName)]
struct EntityIdRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[async_trait]
impl LabelledEntities for PgLabelledEntities {
    async fn existing(
        &self,
        org: OrgId,
        kind: EntityKind,
        ids: &[Uuid],
    ) -> Result<Vec<Uuid>, RepoError> {
        let sql = match kind {
            EntityKind::Checkins => {
                "SELECT id FROM checkins WHERE organization_id = $1 AND id = ANY($2)"
            }
            EntityKind::Forms => "SELECT id FROM forms WHERE organization_id = $1 AND id = ANY($2)",
            EntityKind::Workflows => {
                "SELECT id FROM workflows WHERE organization_id = $1 AND id = ANY($2)"
            }
            EntityKind::Tasks => {
                "SELECT id FROM plan_tasks WHERE organization_id = $1 AND id = ANY($2)"
            }
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<EntityIdRow> = diesel::sql_query(sql)
            .bind::<SqlUuid, _>(org.0)
            .bind::<Array<SqlUuid>, _>(ids)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(|r| r.id).collect())
    }
}
