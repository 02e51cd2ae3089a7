//! SQL of organizations, users and teams.

use async_trait::async_trait;
use diesel::dsl::array;
use diesel::prelude::*;
use diesel::sql_types::Uuid as SqlUuid;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::{
    NewOrganization, NewUser, OrgRepository, Organization, OrganizationPatch, ProfilePatch, User,
    UserFilter, UserPatch,
};
use time::OffsetDateTime;

use super::outbox;
use super::paging::{count_from, like_pattern, limits, load_page};
use crate::Database;
use crate::error::db_error;
use crate::rows::{OrgRow, UserRow};
use crate::schema::{organizations, users};

/// Postgres implementation of [`OrgRepository`].
#[derive(Clone)]
pub struct PgOrgRepository {
    db: Database,
}

impl PgOrgRepository {
    pub fn new(db: Database) -> Self {
        PgOrgRepository { db }
    }
}

#[derive(AsChangeset)]
#[diesel(table_name = organizations)]
struct OrgChanges<'a> {
    name: Option<&'a str>,
    plan: Option<&'a str>,
    api_access: Option<bool>,
    plan_beta: Option<bool>,
    exchange_tokens: Option<bool>,
    /// `Some(None)` sets NULL.
    platform: Option<Option<&'a str>>,
    updated_at: OffsetDateTime,
}

#[derive(AsChangeset)]
#[diesel(table_name = users)]
struct UserChanges<'a> {
    is_active: Option<bool>,
    role: Option<&'a str>,
    updated_at: OffsetDateTime,
}

#[async_trait]
impl OrgRepository for PgOrgRepository {
    async fn create_organization(&self, new: &NewOrganization) -> Result<Organization, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: OrgRow = diesel::insert_into(organizations::table)
            .values((
                organizations::id.eq(OrgId::new().0),
                organizations::name.eq(&new.name),
                organizations::plan.eq(new.plan.as_str()),
                organizations::api_access.eq(new.api_access),
                organizations::plan_beta.eq(new.plan_beta),
                organizations::exchange_tokens.eq(new.exchange_tokens),
                organizations::platform.eq(new.platform.as_deref()),
            ))
            .returning(OrgRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_organization(
        &self,
        id: OrgId,
        patch: &OrganizationPatch,
    ) -> Result<Organization, RepoError> {
        let mut conn = self.db.conn().await?;
        let changes = OrgChanges {
            name: patch.name.as_deref(),
            plan: patch.plan.map(|p| p.as_str()),
            api_access: patch.api_access,
            plan_beta: patch.plan_beta,
            exchange_tokens: patch.exchange_tokens,
            platform: patch.platform.as_ref().map(|p| p.as_deref()),
            updated_at: OffsetDateTime::now_utc(),
        };
        let row: OrgRow = diesel::update(organizations::table.find(id.0))
            .set(&changes)
            .returning(OrgRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn get_organization(&self, id: OrgId) -> Result<Organization, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: OrgRow = organizations::table
            .find(id.0)
            .select(OrgRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn is_empty(&self) -> Result<bool, RepoError> {
        let mut conn = self.db.conn().await?;
        let any: Option<uuid::Uuid> = organizations::table
            .select(organizations::id)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(any.is_none())
    }

    async fn create_user(&self, org: OrgId, new: &NewUser) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: UserRow = diesel::insert_into(users::table)
            .values((
                users::id.eq(UserId::new().0),
                users::organization_id.eq(org.0),
                users::email.eq(&new.email),
                users::first_name.eq(&new.first_name),
                users::last_name.eq(&new.last_name),
                users::role.eq(new.role.as_str()),
                users::is_active.eq(new.is_active),
            ))
            .returning(UserRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn update_user(
        &self,
        id: UserId,
        patch: &UserPatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let changes = UserChanges {
            is_active: patch.is_active,
            role: patch.role.map(|r| r.as_str()),
            updated_at: OffsetDateTime::now_utc(),
        };
        let row: UserRow = conn
            .transaction(async |conn| {
                // The row is locked until the end of the transaction, so two concurrent
                // changes cannot both see `is_active` flip.
                let was_active: bool = users::table
                    .find(id.0)
                    .select(users::is_active)
                    .for_update()
                    .first(conn)
                    .await?;
                let row: UserRow = diesel::update(users::table.find(id.0))
                    .set(&changes)
                    .returning(UserRow::as_returning())
                    .get_result(conn)
                    .await?;
                if row.is_active != was_active {
                    outbox::record(conn, activation_events).await?;
                }
                Ok::<_, diesel::result::Error>(row)
            })
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn find_user(&self, id: UserId) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: UserRow = users::table
            .find(id.0)
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn get_user(&self, org: OrgId, id: UserId) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: UserRow = users::table
            .filter(users::id.eq(id.0).and(users::organization_id.eq(org.0)))
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn users_by_ids(&self, org: OrgId, ids: &[UserId]) -> Result<Vec<User>, RepoError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        // One statement: `id = ANY($1) AND organization_id = $2`, by the primary key.
        let rows: Vec<UserRow> = users::table
            .filter(
                users::id
                    .eq_any(ids.iter().map(|id| id.0).collect::<Vec<_>>())
                    .and(users::organization_id.eq(org.0)),
            )
            .order_by(users::id)
            .select(UserRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    async fn list_users(
        &self,
        org: OrgId,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>, RepoError> {
        let mut conn = self.db.conn().await?;
        let Some(search) = filter.search.as_deref() else {
            return counted_people(&mut conn, org, filter.is_active, page).await;
        };
        // A search is counted for real: no index serves `%fragment%` (docs/performance.md).
        let pattern = like_pattern(search);
        let filtered = || {
            let mut q = users::table
                .filter(users::organization_id.eq(org.0))
                .into_boxed();
            if let Some(active) = filter.is_active {
                q = q.filter(users::is_active.eq(active));
            }
            // Case-insensitive, as ILIKE: both sides lower-cased (the stored columns once per
            // person, the pattern once per statement).
            q.filter(
                users::search_name
                    .like(lower(pattern.clone()))
                    .or(users::search_email.like(lower(pattern.clone()))),
            )
        };
        // Planned for this organization, not generically (pool.rs): a generic plan assumes an
        // average organization and, with one large organization in the table, scans every
        // organization's people even to search a small one.
        conn.transaction(async |conn| {
            diesel::sql_query("SET LOCAL plan_cache_mode = force_custom_plan")
                .execute(conn)
                .await?;
            // The same order, written so that no index serves it: the matches are found first,
            // then sorted. Walking the name index instead and filtering looks cheap to the
            // planner but reads a whole large organization when the search matches few people
            // (seconds at 1,000,000 people, against a fraction of a second for the scan).
            load_page::<UserRow, _, _, _>(conn, page, filtered, |q| {
                q.order_by((users::first_name.concat(""), users::last_name, users::id))
                    .select(UserRow::as_select())
            })
            .await
            .map_err(InTransaction::Repo)
        })
        .await
        .map_err(RepoError::from)
    }

    async fn find_users_by_email(
        &self,
        org: OrgId,
        emails: &[String],
    ) -> Result<Vec<User>, RepoError> {
        if emails.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<UserRow> = users::table
            .filter(
                users::organization_id
                    .eq(org.0)
                    .and(users::email.eq_any(emails)),
            )
            .select(UserRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    async fn update_profile(
        &self,
        org: OrgId,
        id: UserId,
        patch: &ProfilePatch,
        activation_events: &[Event],
    ) -> Result<User, RepoError> {
        let mut conn = self.db.conn().await?;
        let changes = ProfileChanges {
            first_name: patch.first_name.as_deref(),
            last_name: patch.last_name.as_deref(),
            timezone: patch.timezone.as_deref(),
            occupation: patch.occupation.as_deref(),
            birth_date: patch.birth_date.as_ref().map(|b| b.as_deref()),
            work_anniversary: patch.work_anniversary,
            role: patch.role.map(|r| r.as_str()),
            is_active: patch.is_active,
            updated_at: OffsetDateTime::now_utc(),
        };
        let row: UserRow = conn
            .transaction(async |conn| {
                let of_org = || {
                    users::table.filter(users::id.eq(id.0).and(users::organization_id.eq(org.0)))
                };
                // Locked as in `update_user`.
                let was_active: bool = of_org()
                    .select(users::is_active)
                    .for_update()
                    .first(conn)
                    .await?;
                let row: UserRow = diesel::update(of_org())
                    .set(&changes)
                    .returning(UserRow::as_returning())
                    .get_result(conn)
                    .await?;
                if row.is_active != was_active {
                    outbox::record(conn, activation_events).await?;
                }
                Ok::<_, diesel::result::Error>(row)
            })
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn users_with_important_dates(&self, org: OrgId) -> Result<Vec<User>, RepoError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<UserRow> = users::table
            .filter(users::organization_id.eq(org.0))
            .filter(
                users::birth_date
                    .is_not_null()
                    .or(users::work_anniversary.is_not_null()),
            )
            .order_by((users::first_name, users::last_name, users::id))
            .select(UserRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }
}

#[derive(AsChangeset)]
#[diesel(table_name = users)]
struct ProfileChanges<'a> {
    first_name: Option<&'a str>,
    last_name: Option<&'a str>,
    timezone: Option<&'a str>,
    occupation: Option<&'a str>,
    birth_date: Option<Option<&'a str>>,
    work_anniversary: Option<Option<time::Date>>,
    role: Option<&'a str>,
    is_active: Option<bool>,
    updated_at: OffsetDateTime,
}

/// What a transaction can fail with: the database, or the work inside it.
#[derive(Debug)]
enum InTransaction {
    Db(diesel::result::Error),
    Repo(RepoError),
}

impl From<diesel::result::Error> for InTransaction {
    fn from(e: diesel::result::Error) -> Self {
        InTransaction::Db(e)
    }
}

impl From<InTransaction> for RepoError {
    fn from(e: InTransaction) -> Self {
        match e {
            InTransaction::Db(e) => db_error(e),
            InTransaction::Repo(e) => e,
        }
    }
}

/// The directory's order: by name, the id breaking ties. `users_org_name_idx` serves it.
const NAME_ORDER: (users::first_name, users::last_name, users::id) =
    (users::first_name, users::last_name, users::id);

/// From this offset on, a page of [`counted_people`] is found by its ids first. Below it,
/// skipping the rows in the index scan itself is cheaper.
const DEFERRED_FROM_OFFSET: i64 = 250;

diesel::alias!(users as paged: PagedUsers);

/// One page of an organization's people, all of them or only the (in)active ones: one indexed
/// read whatever the size of the organization. The total is maintained on the organization
/// (`user_count`, `active_user_count`), read in the same statement, never counted; the order is
/// served by `users_org_name_idx` or `users_org_active_name_idx`. Deep pages are a deferred join:
/// the ids of the page come from an index-only scan (no table row read for the skipped ones),
/// then the page's rows by primary key. `= ANY(ARRAY(...))` keeps the ids an init plan probed
/// through the primary key: with `IN (...)`, the generic plan (pool.rs) assumes a large `LIMIT`
/// and hashes the whole table.
async fn counted_people(
    conn: &mut AsyncPgConnection,
    org: OrgId,
    active: Option<bool>,
    page: PageRequest,
) -> Result<Page<User>, RepoError> {
    let (limit, offset) = limits(page);
    // The one number this list counts, as a subquery of the page's statement.
    let total = || {
        let of_org = organizations::table
            .filter(organizations::id.eq(org.0))
            .into_boxed();
        match active {
            None => of_org.select(organizations::user_count),
            Some(true) => of_org.select(organizations::active_user_count),
            Some(false) => {
                of_org.select(organizations::user_count - organizations::active_user_count)
            }
        }
    };
    let mut listed = users::table
        .filter(users::organization_id.eq(org.0))
        .into_boxed();
    if let Some(active) = active {
        listed = listed.filter(users::is_active.eq(active));
    }
    let rows: Vec<(UserRow, Option<i64>)> = if offset < DEFERRED_FROM_OFFSET {
        listed
            .order_by(NAME_ORDER)
            .select((UserRow::as_select(), total().single_value()))
            .limit(limit)
            .offset(offset)
            .load(conn)
            .await
    } else {
        let mut page_ids = paged
            .filter(paged.field(users::organization_id).eq(org.0))
            .into_boxed();
        if let Some(active) = active {
            page_ids = page_ids.filter(paged.field(users::is_active).eq(active));
        }
        let page_ids = page_ids
            .order_by(paged.fields(NAME_ORDER))
            .select(paged.field(users::id))
            .limit(limit)
            .offset(offset);
        listed
            .filter(users::id.eq_any(array::<SqlUuid, _>(page_ids)))
            .order_by(NAME_ORDER)
            .select((UserRow::as_select(), total().single_value()))
            .load(conn)
            .await
    }
    .map_err(db_error)?;
    let total = match <[_]>::first(&rows) {
        Some((_, total)) => *total,
        // Past the end: the page is empty, the total is still wanted.
        None => diesel::select(total().single_value())
            .get_result(conn)
            .await
            .map_err(db_error)?,
    };
    Ok(Page {
        count: count_from(total.unwrap_or(0))?,
        results: rows
            .into_iter()
            .map(|(row, _)| row.try_into())
            .collect::<Result<_, _>>()?,
    })
}

diesel::define_sql_function!(fn lower(a: diesel::sql_types::Text) -> diesel::sql_types::Text);
