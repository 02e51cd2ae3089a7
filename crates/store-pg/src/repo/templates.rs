//! SQL of check-in and form templates (the organization's and the system defaults).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_forms::{Template, TemplateFilter, TemplateRepository, TemplateType};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::org::{like_pattern, limits};
use crate::Database;
use crate::error::db_error;
use crate::schema::templates;

/// Postgres implementation of [`TemplateRepository`].
#[derive(Clone)]
pub struct PgTemplateRepository {
    db: Database,
}

impl PgTemplateRepository {
    pub fn new(db: Database) -> Self {
        PgTemplateRepository { db }
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
impl TemplateRepository for PgTemplateRepository {
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
