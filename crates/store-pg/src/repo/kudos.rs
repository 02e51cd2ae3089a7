//! SQL of kudos, their receivers and boosts, and company values.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use diesel::dsl::{count_star, exists, not};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_kudos::{
    CompanyValue, DailyCap, Kudos, KudosRepository, KudosSelection, NewCompanyValue, PersonTally,
    Posting, Span, Tallies, ValueTally,
};
use teamcomm_org::User;
use time::OffsetDateTime;
use uuid::Uuid;

use super::outbox;
use super::paging::{count_from, like_pattern, load_page};
use crate::Database;
use crate::error::{db_error, unknown_organization};
use crate::rows::UserRow;
use crate::schema::kudos::{company_values, kudos, kudos_boosts, kudos_receivers};
use crate::schema::{organizations, users};

/// Postgres implementation of [`KudosRepository`].
#[derive(Clone)]
pub struct PgKudosRepository {
    db: Database,
}

impl PgKudosRepository {
    pub fn new(db: Database) -> Self {
        PgKudosRepository { db }
    }
}

#[derive(Debug, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = company_values, check_for_backend(Pg))]
struct CompanyValueRow {
    id: Uuid,
    organization_id: Uuid,
    name: String,
    emoji: String,
    created_at: OffsetDateTime,
}

impl From<CompanyValueRow> for CompanyValue {
    fn from(r: CompanyValueRow) -> Self {
        CompanyValue {
            id: r.id,
            org_id: OrgId(r.organization_id),
            name: r.name,
            emoji: r.emoji,
            created_at: r.created_at,
        }
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = kudos, check_for_backend(Pg))]
struct KudosRow {
    id: Uuid,
    organization_id: Uuid,
    giver_id: Uuid,
    content: String,
    is_anonymous: bool,
    by_dailybot: bool,
    created_at: OffsetDateTime,
}

/// A kudos row with its company value, before its people are read.
struct Headline {
    row: KudosRow,
    value: Option<CompanyValue>,
}

impl TryFrom<(KudosRow, Option<CompanyValueRow>)> for Headline {
    type Error = RepoError;
    fn try_from((row, value): (KudosRow, Option<CompanyValueRow>)) -> Result<Self, RepoError> {
        Ok(Headline {
            row,
            value: value.map(CompanyValue::from),
        })
    }
}

/// The columns of a [`Headline`], from `kudos` left-joined with `company_values`.
type HeadlineColumns = (
    diesel::helper_types::AsSelect<KudosRow, Pg>,
    diesel::helper_types::AsSelect<Option<CompanyValueRow>, Pg>,
);

fn headline_columns() -> HeadlineColumns {
    (
        KudosRow::as_select(),
        Option::<CompanyValueRow>::as_select(),
    )
}

/// What a transaction can fail with: the database, or a refusal of the work inside it.
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

/// Reads the people of `rows` and puts each kudos together: givers, receivers by name,
/// boosters oldest first.
async fn assemble(
    conn: &mut AsyncPgConnection,
    rows: Vec<Headline>,
) -> Result<Vec<Kudos>, RepoError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = rows.iter().map(|h| h.row.id).collect();
    let giver_ids: Vec<Uuid> = rows.iter().map(|h| h.row.giver_id).collect();
    let givers: Vec<UserRow> = users::table
        .filter(users::id.eq_any(&giver_ids))
        .select(UserRow::as_select())
        .load(conn)
        .await
        .map_err(db_error)?;
    let givers: HashMap<Uuid, User> = givers
        .into_iter()
        .map(|r| Ok((r.id, User::try_from(r)?)))
        .collect::<Result<_, RepoError>>()?;
    let received: Vec<(Uuid, UserRow)> = kudos_receivers::table
        .inner_join(users::table)
        .filter(kudos_receivers::kudos_id.eq_any(&ids))
        .order_by((users::first_name, users::last_name, users::id))
        .select((kudos_receivers::kudos_id, UserRow::as_select()))
        .load(conn)
        .await
        .map_err(db_error)?;
    let boosted: Vec<(Uuid, UserRow)> = kudos_boosts::table
        .inner_join(users::table)
        .filter(kudos_boosts::kudos_id.eq_any(&ids))
        .order_by((kudos_boosts::created_at, kudos_boosts::user_id))
        .select((kudos_boosts::kudos_id, UserRow::as_select()))
        .load(conn)
        .await
        .map_err(db_error)?;
    let mut receivers: HashMap<Uuid, Vec<User>> = HashMap::new();
    for (k, u) in received {
        receivers.entry(k).or_default().push(u.try_into()?);
    }
    let mut boosters: HashMap<Uuid, Vec<User>> = HashMap::new();
    for (k, u) in boosted {
        boosters.entry(k).or_default().push(u.try_into()?);
    }
    rows.into_iter()
        .map(|Headline { row, value }| {
            let giver = givers
                .get(&row.giver_id)
                .cloned()
                .ok_or_else(|| RepoError::Other(format!("kudos {} without its giver", row.id)))?;
            Ok(Kudos {
                id: row.id,
                org_id: OrgId(row.organization_id),
                giver: Some(giver),
                receivers: receivers.remove(&row.id).unwrap_or_default(),
                company_value: value,
                content: row.content,
                is_anonymous: row.is_anonymous,
                by_dailybot: row.by_dailybot,
                boosted_by: boosters.remove(&row.id).unwrap_or_default(),
                created_at: row.created_at,
            })
        })
        .collect()
}

impl PgKudosRepository {
    async fn load_kudos(&self, org: OrgId, id: Uuid) -> Result<Kudos, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: (KudosRow, Option<CompanyValueRow>) = kudos::table
            .left_join(company_values::table)
            .filter(kudos::id.eq(id).and(kudos::organization_id.eq(org.0)))
            .select(headline_columns())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        let mut found = assemble(&mut conn, vec![row.try_into()?]).await?;
        found.pop().ok_or(RepoError::NotFound)
    }
}

#[async_trait]
impl KudosRepository for PgKudosRepository {
    async fn company_values(
        &self,
        org: OrgId,
        defaults: &[NewCompanyValue],
    ) -> Result<Vec<CompanyValue>, RepoError> {
        let mut conn = self.db.conn().await?;
        let load = || {
            company_values::table
                .filter(company_values::organization_id.eq(org.0))
                .order_by((company_values::name, company_values::id))
                .select(CompanyValueRow::as_select())
        };
        let mut rows: Vec<CompanyValueRow> = load().load(&mut conn).await.map_err(db_error)?;
        if rows.is_empty() {
            let known: i64 = organizations::table
                .filter(organizations::id.eq(org.0))
                .count()
                .get_result(&mut conn)
                .await
                .map_err(db_error)?;
            if known == 0 {
                return Err(RepoError::NotFound);
            }
            let seeds: Vec<_> = defaults
                .iter()
                .map(|d| {
                    (
                        company_values::id.eq(Uuid::now_v7()),
                        company_values::organization_id.eq(org.0),
                        company_values::name.eq(&d.name),
                        company_values::emoji.eq(&d.emoji),
                    )
                })
                .collect();
            // Callers racing to seed: the names' unique index keeps one of each.
            diesel::insert_into(company_values::table)
                .values(&seeds)
                .on_conflict_do_nothing()
                .execute(&mut conn)
                .await
                .map_err(|e| unknown_organization(db_error(e)))?;
            rows = load().load(&mut conn).await.map_err(db_error)?;
        }
        Ok(rows.into_iter().map(CompanyValue::from).collect())
    }

    async fn upsert_company_value(
        &self,
        org: OrgId,
        value: &NewCompanyValue,
    ) -> Result<CompanyValue, RepoError> {
        let mut conn = self.db.conn().await?;
        // The conflict target is the expression index on lower(name), which the query builder
        // cannot name.
        let row: CompanyValueRow = diesel::sql_query(
            "INSERT INTO company_values (id, organization_id, name, emoji) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (organization_id, lower(name)) DO UPDATE SET emoji = EXCLUDED.emoji \
             RETURNING id, organization_id, name, emoji, created_at",
        )
        .bind::<diesel::sql_types::Uuid, _>(Uuid::now_v7())
        .bind::<diesel::sql_types::Uuid, _>(org.0)
        .bind::<diesel::sql_types::Text, _>(&value.name)
        .bind::<diesel::sql_types::Text, _>(&value.emoji)
        .get_result(&mut conn)
        .await
        .map_err(|e| unknown_organization(db_error(e)))?;
        Ok(row.into())
    }

    async fn insert_kudos(
        &self,
        new: &Kudos,
        cap: DailyCap,
        events: &[Event],
    ) -> Result<Posting, RepoError> {
        let giver = new
            .giver
            .as_ref()
            .ok_or_else(|| RepoError::Other("kudos without a giver".into()))?
            .id;
        let org = new.org_id;
        let receivers: Vec<Uuid> = new.receivers.iter().map(|r| r.id.0).collect();
        let value = new.company_value.as_ref().map(|v| v.id);
        let mut conn = self.db.conn().await?;
        conn.transaction(async |conn| {
            // The giver's row is locked until the kudos are written: their posts are counted
            // one after the other.
            let giver_org: Option<Uuid> = users::table
                .filter(users::id.eq(giver.0))
                .select(users::organization_id)
                .for_no_key_update()
                .first(conn)
                .await
                .optional()?;
            let distinct: HashSet<&Uuid> = receivers.iter().collect();
            let in_org: i64 = users::table
                .filter(users::id.eq_any(&receivers))
                .filter(users::organization_id.eq(org.0))
                .count()
                .get_result(conn)
                .await?;
            let value_in_org = match value {
                None => true,
                Some(v) => {
                    diesel::select(exists(
                        company_values::table.filter(
                            company_values::id
                                .eq(v)
                                .and(company_values::organization_id.eq(org.0)),
                        ),
                    ))
                    .get_result::<bool>(conn)
                    .await?
                }
            };
            if giver_org != Some(org.0) || in_org != distinct.len() as i64 || !value_in_org {
                return Err(InTransaction::Repo(RepoError::NotFound));
            }
            let given: i64 = kudos::table
                .filter(kudos::giver_id.eq(giver.0))
                .filter(kudos::created_at.ge(cap.since))
                .count()
                .get_result(conn)
                .await?;
            if given >= i64::from(cap.limit) {
                return Ok(Posting::DailyLimitReached);
            }
            diesel::insert_into(kudos::table)
                .values((
                    kudos::id.eq(new.id),
                    kudos::organization_id.eq(org.0),
                    kudos::giver_id.eq(giver.0),
                    kudos::company_value_id.eq(value),
                    kudos::content.eq(&new.content),
                    kudos::is_anonymous.eq(new.is_anonymous),
                    kudos::by_dailybot.eq(new.by_dailybot),
                    kudos::created_at.eq(new.created_at),
                ))
                .execute(conn)
                .await?;
            let rows: Vec<_> = receivers
                .iter()
                .map(|r| {
                    (
                        kudos_receivers::kudos_id.eq(new.id),
                        kudos_receivers::user_id.eq(*r),
                    )
                })
                .collect();
            diesel::insert_into(kudos_receivers::table)
                .values(&rows)
                .execute(conn)
                .await?;
            outbox::record(conn, events).await?;
            Ok(Posting::Stored)
        })
        .await
        .map_err(RepoError::from)
    }

    async fn get_kudos(&self, org: OrgId, id: Uuid) -> Result<Kudos, RepoError> {
        self.load_kudos(org, id).await
    }

    async fn boost_kudos(
        &self,
        org: OrgId,
        id: Uuid,
        user: UserId,
        at: OffsetDateTime,
    ) -> Result<Kudos, RepoError> {
        {
            let mut conn = self.db.conn().await?;
            let (kudos_in_org, person_in_org): (bool, bool) = diesel::select((
                exists(kudos::table.filter(kudos::id.eq(id).and(kudos::organization_id.eq(org.0)))),
                exists(
                    users::table.filter(users::id.eq(user.0).and(users::organization_id.eq(org.0))),
                ),
            ))
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
            if !(kudos_in_org && person_in_org) {
                return Err(RepoError::NotFound);
            }
            diesel::insert_into(kudos_boosts::table)
                .values((
                    kudos_boosts::kudos_id.eq(id),
                    kudos_boosts::user_id.eq(user.0),
                    kudos_boosts::created_at.eq(at),
                ))
                .execute(&mut conn)
                .await
                .map_err(db_error)?;
        }
        self.load_kudos(org, id).await
    }

    async fn list_kudos(
        &self,
        org: OrgId,
        selection: &KudosSelection,
        page: PageRequest,
    ) -> Result<Page<Kudos>, RepoError> {
        let mut conn = self.db.conn().await?;
        let viewer = selection.viewer.0;
        let given_by: Vec<Uuid> = selection.given_by.iter().map(|u| u.0).collect();
        let received_by: Vec<Uuid> = selection.received_by.iter().map(|u| u.0).collect();
        let pattern = selection.search.as_deref().map(like_pattern);
        let span = selection.span;
        let involving_viewer = selection.involving_viewer;
        let filtered = move || {
            // Anonymous kudos are known by their giver only to that giver.
            let giver_known = || not(kudos::is_anonymous).or(kudos::giver_id.eq(viewer));
            let received = |user: Uuid| {
                exists(
                    kudos_receivers::table.filter(
                        kudos_receivers::kudos_id
                            .eq(kudos::id)
                            .and(kudos_receivers::user_id.eq(user)),
                    ),
                )
            };
            let mut q = kudos::table
                .left_join(company_values::table)
                .filter(kudos::organization_id.eq(org.0))
                .into_boxed::<Pg>();
            if involving_viewer {
                q = q.filter(kudos::giver_id.eq(viewer).or(received(viewer)));
            }
            for giver in &given_by {
                q = q.filter(kudos::giver_id.eq(*giver).and(giver_known()));
            }
            for receiver in &received_by {
                q = q.filter(received(*receiver));
            }
            if let Some(from) = span.from {
                q = q.filter(kudos::created_at.ge(from));
            }
            if let Some(until) = span.until {
                q = q.filter(kudos::created_at.lt(until));
            }
            if let Some(pattern) = &pattern {
                let giver_named = exists(
                    users::table.filter(
                        users::id
                            .eq(kudos::giver_id)
                            .and(users::search_name.ilike(pattern.clone())),
                    ),
                );
                let receiver_named = exists(
                    kudos_receivers::table.inner_join(users::table).filter(
                        kudos_receivers::kudos_id
                            .eq(kudos::id)
                            .and(users::search_name.ilike(pattern.clone())),
                    ),
                );
                q = q.filter(
                    kudos::content
                        .ilike(pattern.clone())
                        .or(giver_known().and(giver_named))
                        .or(receiver_named),
                );
            }
            q
        };
        let headlines: Page<Headline> = load_page::<(KudosRow, Option<CompanyValueRow>), _, _, _>(
            &mut conn,
            page,
            filtered,
            |q| {
                q.order_by((kudos::created_at.desc(), kudos::id.desc()))
                    .select(headline_columns())
            },
        )
        .await?;
        Ok(Page {
            count: headlines.count,
            results: assemble(&mut conn, headlines.results).await?,
        })
    }

    async fn tallies(&self, org: OrgId, span: Span) -> Result<Tallies, RepoError> {
        let mut conn = self.db.conn().await?;
        // The organization's kudos of the span, as a filter every count below starts from.
        let in_span = || {
            let mut q = kudos::table
                .filter(kudos::organization_id.eq(org.0))
                .select(kudos::id)
                .into_boxed::<Pg>();
            if let Some(from) = span.from {
                q = q.filter(kudos::created_at.ge(from));
            }
            if let Some(until) = span.until {
                q = q.filter(kudos::created_at.lt(until));
            }
            q
        };
        let received: Vec<(Uuid, i64)> = kudos_receivers::table
            .filter(kudos_receivers::kudos_id.eq_any(in_span()))
            .group_by(kudos_receivers::user_id)
            .select((kudos_receivers::user_id, count_star()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        // Each +1 counts for every receiver of the kudos it was added to.
        let plus: Vec<(Uuid, i64)> = kudos_receivers::table
            .inner_join(
                kudos_boosts::table.on(kudos_boosts::kudos_id.eq(kudos_receivers::kudos_id)),
            )
            .filter(kudos_receivers::kudos_id.eq_any(in_span()))
            .group_by(kudos_receivers::user_id)
            .select((kudos_receivers::user_id, count_star()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let given: Vec<(Uuid, i64)> = kudos::table
            .filter(kudos::id.eq_any(in_span()))
            .filter(not(kudos::is_anonymous))
            .group_by(kudos::giver_id)
            .select((kudos::giver_id, count_star()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let per_value: Vec<(CompanyValueRow, i64)> = company_values::table
            .inner_join(kudos::table)
            .filter(kudos::id.eq_any(in_span()))
            .group_by(company_values::id)
            .select((CompanyValueRow::as_select(), count_star()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;

        let mut counts: HashMap<Uuid, (u64, u64, u64)> = HashMap::new();
        for (user, n) in received {
            counts.entry(user).or_default().0 = count_from(n)?;
        }
        for (user, n) in plus {
            counts.entry(user).or_default().1 = count_from(n)?;
        }
        for (user, n) in given {
            counts.entry(user).or_default().2 = count_from(n)?;
        }
        let ids: Vec<Uuid> = counts.keys().copied().collect();
        let people: Vec<UserRow> = users::table
            .filter(users::id.eq_any(&ids))
            .select(UserRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        let people: Vec<PersonTally> = people
            .into_iter()
            .map(|row| {
                let (received, plus, given) = counts.get(&row.id).copied().unwrap_or_default();
                Ok(PersonTally {
                    person: row.try_into()?,
                    received,
                    plus,
                    given,
                })
            })
            .collect::<Result<_, RepoError>>()?;
        let values: Vec<ValueTally> = per_value
            .into_iter()
            .map(|(value, n)| {
                Ok(ValueTally {
                    value: value.into(),
                    count: count_from(n)?,
                })
            })
            .collect::<Result<_, RepoError>>()?;
        Ok(Tallies { people, values })
    }
}
