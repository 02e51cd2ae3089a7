//! SQL of invitations.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError, TeamId, UserId};
use teamcomm_org::{Invitation, InvitationKind, InvitationRepository, NewInvitation};
use time::OffsetDateTime;
use uuid::Uuid;

use super::paging::load_page;
use crate::Database;
use crate::error::db_error;
use crate::schema::invitations;

/// Postgres implementation of [`InvitationRepository`].
#[derive(Clone)]
pub struct PgInvitationRepository {
    db: Database,
}

impl PgInvitationRepository {
    pub fn new(db: Database) -> Self {
        PgInvitationRepository { db }
    }
}

#[derive(Debug, Queryable, QueryableByName, Selectable)]
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

impl TryFrom<InvitationRow> for Invitation {
    type Error = RepoError;
    fn try_from(r: InvitationRow) -> Result<Self, RepoError> {
        Ok(Invitation {
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
        })
    }
}

/// The upsert's answer: the invitation and whether it was new (not a resend).
#[derive(QueryableByName)]
struct Upserted {
    #[diesel(embed)]
    invitation: InvitationRow,
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
impl InvitationRepository for PgInvitationRepository {
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
        Ok((up.invitation.try_into()?, up.created))
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
        load_page::<InvitationRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((invitations::created_at.desc(), invitations::id.desc()))
                .select(InvitationRow::as_select())
        })
        .await
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
        row.try_into()
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
