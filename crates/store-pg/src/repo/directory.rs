//! SQL of invitations, mood scores, report channels and templates.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use teamcomm_forms::{Template, TemplateFilter, TemplateRepository, TemplateType};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_messaging::{Channel, ChannelRepository, ChannelType, NewChannel};
use teamcomm_org::{
    Invitation, InvitationKind, InvitationRepository, MoodEntry, MoodRepository, NewInvitation,
};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::org::{like_pattern, limits};
use crate::Database;
use crate::error::db_error;
use crate::schema::{invitations, mood_entries, report_channels, templates};

/// Postgres implementation of the invitation, mood, channel and template ports.
#[derive(Clone)]
pub struct PgDirectoryRepository {
    db: Database,
}

impl PgDirectoryRepository {
    pub fn new(db: Database) -> Self {
        PgDirectoryRepository { db }
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = invitations, check_for_backend(diesel::pg::Pg))]
struct InvitationRow {
    id: Uuid,
    organization_id: Uuid,
    identifier: String,
    is_email: bool,
    is_guest: bool,
    team_ids: Vec<Uuid>,
    followup_ids: Vec<Uuid>,
    invited_by_id: Option<Uuid>,
    resend_count: i32,
    created_at: OffsetDateTime,
}

impl From<InvitationRow> for Invitation {
    fn from(r: InvitationRow) -> Self {
        Invitation {
            id: r.id,
            org_id: OrgId(r.organization_id),
            identifier: r.identifier,
            is_email: r.is_email,
            is_guest: r.is_guest,
            team_ids: r.team_ids.into_iter().map(TeamId).collect(),
            followup_ids: r.followup_ids,
            invited_by: r.invited_by_id.map(UserId),
            resend_count: r.resend_count,
            created_at: r.created_at,
        }
    }
}

#[derive(QueryableByName)]
struct Upserted {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    organization_id: Uuid,
    #[diesel(sql_type = Text)]
    identifier: String,
    #[diesel(sql_type = Bool)]
    is_email: bool,
    #[diesel(sql_type = Bool)]
    is_guest: bool,
    #[diesel(sql_type = Array<SqlUuid>)]
    team_ids: Vec<Uuid>,
    #[diesel(sql_type = Array<SqlUuid>)]
    followup_ids: Vec<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    invited_by_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Int4)]
    resend_count: i32,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Bool)]
    created: bool,
}

fn kind_filter(kind: InvitationKind) -> Option<bool> {
    match kind {
        InvitationKind::Members => Some(false),
        InvitationKind::Guests => Some(true),
        InvitationKind::All => None,
    }
}

#[async_trait]
impl InvitationRepository for PgDirectoryRepository {
    async fn upsert_invitation(
        &self,
        org: OrgId,
        new: &NewInvitation,
    ) -> Result<(Invitation, bool), RepoError> {
        let mut conn = self.db.conn().await?;
        // Inviting again resends: the pending invitation gains the new teams and a resend count.
        let up: Upserted = diesel::sql_query(
            "INSERT INTO invitations (id, organization_id, identifier, is_email, is_guest, team_ids, followup_ids, invited_by_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (organization_id, lower(identifier)) DO UPDATE SET \
               team_ids = ARRAY(SELECT DISTINCT t FROM unnest(invitations.team_ids || EXCLUDED.team_ids) AS t), \
               followup_ids = ARRAY(SELECT DISTINCT f FROM unnest(invitations.followup_ids || EXCLUDED.followup_ids) AS f), \
               resend_count = invitations.resend_count + 1, updated_at = now() \
             RETURNING id, organization_id, identifier, is_email, is_guest, team_ids, followup_ids, invited_by_id, \
               resend_count, created_at, (xmax = 0) AS created",
        )
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<SqlUuid, _>(org.0)
        .bind::<Text, _>(&new.identifier)
        .bind::<Bool, _>(new.is_email)
        .bind::<Bool, _>(new.is_guest)
        .bind::<Array<SqlUuid>, _>(new.team_ids.iter().map(|t| t.0).collect::<Vec<_>>())
        .bind::<Array<SqlUuid>, _>(&new.followup_ids)
        .bind::<Nullable<SqlUuid>, _>(new.invited_by.map(|u| u.0))
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        let row = InvitationRow {
            id: up.id,
            organization_id: up.organization_id,
            identifier: up.identifier,
            is_email: up.is_email,
            is_guest: up.is_guest,
            team_ids: up.team_ids,
            followup_ids: up.followup_ids,
            invited_by_id: up.invited_by_id,
            resend_count: up.resend_count,
            created_at: up.created_at,
        };
        Ok((row.into(), up.created))
    }

    async fn list_invitations(
        &self,
        org: OrgId,
        kind: InvitationKind,
        page: PageRequest,
    ) -> Result<Page<Invitation>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = || {
            let mut q = invitations::table
                .filter(invitations::organization_id.eq(org.0))
                .into_boxed();
            if let Some(guest) = kind_filter(kind) {
                q = q.filter(invitations::is_guest.eq(guest));
            }
            q
        };
        let count: i64 = filtered()
            .count()
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        let (limit, offset) = limits(page);
        let rows: Vec<InvitationRow> = filtered()
            .order_by((invitations::created_at.desc(), invitations::id.desc()))
            .select(InvitationRow::as_select())
            .limit(limit)
            .offset(offset)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(Page {
            count: u64::try_from(count).unwrap_or(0),
            results: rows.into_iter().map(Into::into).collect(),
        })
    }

    async fn get_invitation(
        &self,
        org: OrgId,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<Invitation, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut q = invitations::table
            .filter(
                invitations::organization_id
                    .eq(org.0)
                    .and(invitations::id.eq(id)),
            )
            .into_boxed();
        if let Some(guest) = kind_filter(kind) {
            q = q.filter(invitations::is_guest.eq(guest));
        }
        let row: InvitationRow = q
            .select(InvitationRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(row.into())
    }

    async fn delete_invitation(
        &self,
        org: OrgId,
        kind: InvitationKind,
        id: Uuid,
    ) -> Result<(), RepoError> {
        self.get_invitation(org, kind, id).await?;
        let mut conn = self.db.conn().await?;
        diesel::delete(
            invitations::table.filter(
                invitations::organization_id
                    .eq(org.0)
                    .and(invitations::id.eq(id)),
            ),
        )
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }
}

#[async_trait]
impl MoodRepository for PgDirectoryRepository {
    async fn insert_mood(
        &self,
        org: OrgId,
        user: UserId,
        date: Date,
        score: i16,
    ) -> Result<MoodEntry, RepoError> {
        let mut conn = self.db.conn().await?;
        let created_at: OffsetDateTime = diesel::insert_into(mood_entries::table)
            .values((
                mood_entries::user_id.eq(user.0),
                mood_entries::entry_date.eq(date),
                mood_entries::organization_id.eq(org.0),
                mood_entries::score.eq(score),
            ))
            .returning(mood_entries::created_at)
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(MoodEntry {
            user_id: user,
            date,
            score,
            created_at,
        })
    }

    async fn get_mood(&self, user: UserId, date: Date) -> Result<Option<MoodEntry>, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: Option<(i16, OffsetDateTime)> = mood_entries::table
            .find((user.0, date))
            .select((mood_entries::score, mood_entries::created_at))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(|(score, created_at)| MoodEntry {
            user_id: user,
            date,
            score,
            created_at,
        }))
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = report_channels, check_for_backend(diesel::pg::Pg))]
struct ChannelRow {
    organization_id: Uuid,
    id: String,
    name: String,
    platform: String,
    channel_type: String,
    created_at: OffsetDateTime,
}

impl TryFrom<ChannelRow> for Channel {
    type Error = RepoError;
    fn try_from(r: ChannelRow) -> Result<Self, RepoError> {
        Ok(Channel {
            org_id: OrgId(r.organization_id),
            id: r.id,
            name: r.name,
            platform: r.platform,
            channel_type: ChannelType::parse(&r.channel_type)
                .map_err(|e| RepoError::Other(e.to_string()))?,
            created_at: r.created_at,
        })
    }
}

#[async_trait]
impl ChannelRepository for PgDirectoryRepository {
    async fn upsert_channel(&self, org: OrgId, new: &NewChannel) -> Result<Channel, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: ChannelRow = diesel::insert_into(report_channels::table)
            .values((
                report_channels::organization_id.eq(org.0),
                report_channels::id.eq(&new.id),
                report_channels::name.eq(&new.name),
                report_channels::platform.eq(&new.platform),
                report_channels::channel_type.eq(new.channel_type.as_str()),
            ))
            .on_conflict((report_channels::organization_id, report_channels::id))
            .do_update()
            .set((
                report_channels::name.eq(&new.name),
                report_channels::platform.eq(&new.platform),
                report_channels::channel_type.eq(new.channel_type.as_str()),
            ))
            .returning(ChannelRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        row.try_into()
    }

    async fn list_channels(
        &self,
        org: OrgId,
        name: Option<&str>,
    ) -> Result<Vec<Channel>, RepoError> {
        let mut conn = self.db.conn().await?;
        let mut q = report_channels::table
            .filter(report_channels::organization_id.eq(org.0))
            .into_boxed();
        if let Some(name) = name {
            q = q.filter(report_channels::name.ilike(like_pattern(name)));
        }
        let rows: Vec<ChannelRow> = q
            .order_by((report_channels::name, report_channels::id))
            .select(ChannelRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = templates, check_for_backend(diesel::pg::Pg))]
struct TemplateRow {
    id: Uuid,
    organization_id: Option<Uuid>,
    name: String,
    template_type: String,
    system_default: bool,
    description: String,
    intro_message: String,
    outro_message: String,
    questions: serde_json::Value,
    created_at: OffsetDateTime,
}

impl From<TemplateRow> for Template {
    fn from(r: TemplateRow) -> Self {
        Template {
            id: r.id,
            org_id: r.organization_id.map(OrgId),
            name: r.name,
            template_type: if r.template_type == "forms" {
                TemplateType::Forms
            } else {
                TemplateType::Checkins
            },
            system_default: r.system_default,
            description: r.description,
            intro_message: r.intro_message,
            outro_message: r.outro_message,
            questions: match r.questions {
                serde_json::Value::Array(items) => items,
                _ => Vec::new(),
            },
            created_at: r.created_at,
        }
    }
}

#[async_trait]
impl TemplateRepository for PgDirectoryRepository {
    async fn list_templates(
        &self,
        org: OrgId,
        filter: &TemplateFilter,
        page: PageRequest,
    ) -> Result<Page<Template>, RepoError> {
        let mut conn = self.db.conn().await?;
        let filtered = || {
            let mut q = templates::table
                .filter(
                    templates::organization_id
                        .is_null()
                        .or(templates::organization_id.eq(org.0)),
                )
                .into_boxed();
            if let Some(t) = filter.template_type {
                q = q.filter(templates::template_type.eq(t.as_str()));
            }
            if let Some(d) = filter.system_default {
                q = q.filter(templates::system_default.eq(d));
            }
            if let Some(search) = filter.search.as_deref() {
                q = q.filter(templates::name.ilike(like_pattern(search)));
            }
            q
        };
        let count: i64 = filtered()
            .count()
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        let (limit, offset) = limits(page);
        let rows: Vec<TemplateRow> = filtered()
            .order_by((templates::template_type, templates::name, templates::id))
            .select(TemplateRow::as_select())
            .limit(limit)
            .offset(offset)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(Page {
            count: u64::try_from(count).unwrap_or(0),
            results: rows.into_iter().map(Into::into).collect(),
        })
    }

    async fn get_template(&self, org: OrgId, id: Uuid) -> Result<Template, RepoError> {
        let mut conn = self.db.conn().await?;
        let row: TemplateRow = templates::table
            .filter(templates::id.eq(id))
            .filter(
                templates::organization_id
                    .is_null()
                    .or(templates::organization_id.eq(org.0)),
            )
            .select(TemplateRow::as_select())
            .first(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(row.into())
    }
}
