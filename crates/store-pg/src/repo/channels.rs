//! SQL of the organization's report channels.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_kernel::{OrgId, RepoError};
use teamcomm_messaging::{Channel, ChannelRepository, ChannelType, NewChannel};
use time::OffsetDateTime;
use uuid::Uuid;

use super::paging::like_pattern;
use crate::Database;
use crate::error::db_error;
use crate::rows::unknown_value;
use crate::schema::report_channels;

/// Channels written per statement by `upsert_channels` (5 parameters each, well under
/// Postgres's 65,535).
const UPSERT_CHUNK: usize = 1_000;

/// Postgres implementation of [`ChannelRepository`].
#[derive(Clone)]
pub struct PgChannelRepository {
    db: Database,
}

impl PgChannelRepository {
    pub fn new(db: Database) -> Self {
        PgChannelRepository { db }
    }
}

/// A channel row (check-ins read their report channels' names with it).
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = report_channels, check_for_backend(diesel::pg::Pg))]
pub(super) struct ChannelRow {
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
                .map_err(|_| unknown_value("report_channels.channel_type", &r.channel_type))?,
            created_at: r.created_at,
        })
    }
}

#[async_trait]
impl ChannelRepository for PgChannelRepository {
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

    /// One statement per [`UPSERT_CHUNK`] channels (the ids must be distinct: a statement
    /// cannot update a row twice).
    async fn upsert_channels(&self, org: OrgId, new: &[NewChannel]) -> Result<(), RepoError> {
        use diesel::upsert::excluded;
        let mut conn = self.db.conn().await?;
        for chunk in new.chunks(UPSERT_CHUNK) {
            let rows: Vec<_> = chunk
                .iter()
                .map(|c| {
                    (
                        report_channels::organization_id.eq(org.0),
                        report_channels::id.eq(&c.id),
                        report_channels::name.eq(&c.name),
                        report_channels::platform.eq(&c.platform),
                        report_channels::channel_type.eq(c.channel_type.as_str()),
                    )
                })
                .collect();
            diesel::insert_into(report_channels::table)
                .values(rows)
                .on_conflict((report_channels::organization_id, report_channels::id))
                .do_update()
                .set((
                    report_channels::name.eq(excluded(report_channels::name)),
                    report_channels::platform.eq(excluded(report_channels::platform)),
                    report_channels::channel_type.eq(excluded(report_channels::channel_type)),
                ))
                .execute(&mut conn)
                .await
                .map_err(db_error)?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(channel_type: &str) -> ChannelRow {
        ChannelRow {
            organization_id: Uuid::nil(),
            id: "C1".into(),
            name: "general".into(),
            platform: "slack".into(),
            channel_type: channel_type.into(),
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn channel_types_decode_strictly() {
        assert_eq!(
            Channel::try_from(row("group_chat")).unwrap().channel_type,
            ChannelType::GroupChat
        );
        let err = Channel::try_from(row("forum")).unwrap_err();
        assert!(matches!(err, RepoError::Other(m) if m.contains("report_channels.channel_type")));
    }
}
