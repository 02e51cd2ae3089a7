//! The forms and check-ins domain. For now: the templates new check-ins and forms start from
//! (built-in ones are seeded by migration; organizations may have their own).

#[cfg(any(test, feature = "testing"))]
pub mod testing;

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
}
