//! The forms and check-ins domain. For now: the templates new check-ins and forms start from
//! (built-in ones are seeded by migration; organizations may have their own).

pub mod checkins;
pub mod forms;
pub mod questions;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use teamcomm_kernel::{Error, OrgId, Page, PageRequest, RepoError};
use time::OffsetDateTime;
use uuid::Uuid;

/// What a template is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateType {
    Checkins,
    Forms,
}

impl teamcomm_kernel::WireEnum for TemplateType {
    const NAME: &'static str = "TemplateType";
    const ALL: &'static [Self] = &[TemplateType::Checkins, TemplateType::Forms];

    fn as_str(self) -> &'static str {
        TemplateType::as_str(self)
    }
}

impl TemplateType {
    pub const fn as_str(self) -> &'static str {
        match self {
            TemplateType::Checkins => "checkins",
            TemplateType::Forms => "forms",
        }
    }

    /// Accepts the wire names and their common singular/alias forms.
    pub fn parse(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "checkins" | "checkin" | "check-ins" | "followups" | "followup" => {
                Ok(TemplateType::Checkins)
            }
            "forms" | "form" => Ok(TemplateType::Forms),
            _ => Err(Error::new(
                teamcomm_kernel::ErrorCode::InvalidFilterValue,
                "`type` must be checkins or forms.",
            )
            .with_extra("parameter", "type")),
        }
    }
}

/// A template with its questions (kept as the JSON documents clients read).
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub id: Uuid,
    /// `None` for built-in templates.
    pub org_id: Option<OrgId>,
    pub name: String,
    pub template_type: TemplateType,
    pub system_default: bool,
    pub description: String,
    pub intro_message: String,
    pub outro_message: String,
    pub questions: Vec<Value>,
    pub created_at: OffsetDateTime,
}

/// Which templates a listing covers.
#[derive(Debug, Clone, Default)]
pub struct TemplateFilter {
    pub template_type: Option<TemplateType>,
    pub system_default: Option<bool>,
    pub search: Option<String>,
}

/// Templates visible to an organization: built-in ones and its own.
#[async_trait]
pub trait TemplateRepository: Send + Sync + 'static {
    async fn list_templates(
        &self,
        org: OrgId,
        filter: &TemplateFilter,
        page: PageRequest,
    ) -> Result<Page<Template>, RepoError>;
    async fn get_template(&self, org: OrgId, id: Uuid) -> Result<Template, RepoError>;
}

/// The templates an organization may start from. No rules of its own yet: every read is
/// scoped to built-in templates and the organization's own.
#[derive(Clone)]
pub struct TemplateService {
    templates: Arc<dyn TemplateRepository>,
}

impl TemplateService {
    pub fn new(templates: Arc<dyn TemplateRepository>) -> Self {
        TemplateService { templates }
    }

    pub async fn list_templates(
        &self,
        org: OrgId,
        filter: &TemplateFilter,
        page: PageRequest,
    ) -> Result<Page<Template>, Error> {
        Ok(self.templates.list_templates(org, filter, page).await?)
    }

    /// A built-in template or one of `org`'s own; another organization's is `not_found`.
    pub async fn get_template(&self, org: OrgId, id: Uuid) -> Result<Template, Error> {
        Ok(self.templates.get_template(org, id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_types() {
        assert_eq!(
            TemplateType::parse("Check-ins").unwrap(),
            TemplateType::Checkins
        );
        assert_eq!(TemplateType::parse("form").unwrap(), TemplateType::Forms);
        assert_eq!(
            TemplateType::parse("kudos").unwrap_err().extra()["parameter"],
            "type"
        );
    }

    fn template(org: Option<OrgId>, name: &str, kind: TemplateType) -> Template {
        Template {
            id: Uuid::now_v7(),
            org_id: org,
            name: name.to_owned(),
            template_type: kind,
            system_default: org.is_none(),
            description: String::new(),
            intro_message: String::new(),
            outro_message: String::new(),
            questions: Vec::new(),
            created_at: time::OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[tokio::test]
    async fn an_organization_sees_built_in_templates_and_its_own() {
        let repo = Arc::new(testing::InMemoryTemplateRepository::new());
        let (org, other) = (OrgId::new(), OrgId::new());
        let builtin = template(None, "Daily Standup", TemplateType::Checkins);
        let own = template(Some(org), "Ours", TemplateType::Forms);
        let theirs = template(Some(other), "Theirs", TemplateType::Checkins);
        for t in [&own, &theirs, &builtin] {
            repo.insert(t.clone());
        }
        let service = TemplateService::new(repo);

        let all = service
            .list_templates(org, &TemplateFilter::default(), PageRequest::default())
            .await
            .unwrap();
        assert_eq!(all.count, 2);
        let names: Vec<_> = all.results.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Daily Standup", "Ours"], "check-ins before forms");

        let filter = TemplateFilter {
            system_default: Some(false),
            search: Some("OUR".into()),
            ..TemplateFilter::default()
        };
        let page = service
            .list_templates(org, &filter, PageRequest::default())
            .await
            .unwrap();
        assert_eq!(page.results, std::slice::from_ref(&own));

        assert_eq!(
            service.get_template(org, builtin.id).await.unwrap(),
            builtin
        );
        assert_eq!(service.get_template(org, own.id).await.unwrap(), own);
        let e = service.get_template(org, theirs.id).await.unwrap_err();
        assert_eq!(e.code(), teamcomm_kernel::ErrorCode::NotFound);
    }
}
