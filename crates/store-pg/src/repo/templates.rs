//! SQL of check-in and form templates (the organization's and the system defaults).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use teamcomm_forms::{Template, TemplateFilter, TemplateRepository, TemplateType};
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::paging::{like_pattern, load_page};
use crate::Database;
use crate::error::db_error;
use crate::rows::unknown_value;
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

impl TryFrom<TemplateRow> for Template {
    type Error = RepoError;
    fn try_from(r: TemplateRow) -> Result<Self, RepoError> {
        // Exactly a name the domain writes: `parse` also takes the wire's aliases.
        let template_type = TemplateType::parse(&r.template_type)
            .ok()
            .filter(|t| t.as_str() == r.template_type)
            .ok_or_else(|| unknown_value("templates.template_type", &r.template_type))?;
        let serde_json::Value::Array(questions) = r.questions else {
            return Err(unknown_value("templates.questions", &r.questions));
        };
        Ok(Template {
            id: r.id,
            org_id: r.organization_id.map(OrgId),
            name: r.name,
            template_type,
            system_default: r.system_default,
            description: r.description,
            intro_message: r.intro_message,
            outro_message: r.outro_message,
            questions,
            created_at: r.created_at,
        })
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
        load_page::<TemplateRow, _, _, _>(&mut conn, page, filtered, |q| {
            q.order_by((templates::template_type, templates::name, templates::id))
                .select(TemplateRow::as_select())
        })
        .await
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
        row.try_into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(template_type: &str, questions: serde_json::Value) -> TemplateRow {
        TemplateRow {
            id: Uuid::nil(),
            organization_id: None,
            name: "Daily".into(),
            template_type: template_type.into(),
            system_default: true,
            description: String::new(),
            intro_message: String::new(),
            outro_message: String::new(),
            questions,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn known_types_and_question_lists_decode() {
        let t = Template::try_from(row("forms", serde_json::json!([{"index": 0}]))).unwrap();
        assert_eq!(t.template_type, TemplateType::Forms);
        assert_eq!(t.questions.len(), 1);
        let t = Template::try_from(row("checkins", serde_json::json!([]))).unwrap();
        assert_eq!(t.template_type, TemplateType::Checkins);
    }

    #[test]
    fn unknown_types_and_aliases_are_errors_not_checkins() {
        for stored in ["surveys", "form", "Forms", ""] {
            assert!(
                matches!(Template::try_from(row(stored, serde_json::json!([]))), Err(RepoError::Other(m)) if m.contains("template_type")),
                "{stored}"
            );
        }
    }

    #[test]
    fn questions_that_are_not_a_list_are_errors() {
        let err = Template::try_from(row("forms", serde_json::json!({"q": 1}))).unwrap_err();
        assert!(matches!(err, RepoError::Other(m) if m.contains("questions")));
    }
}
