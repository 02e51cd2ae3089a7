//! An in-memory [`TemplateRepository`], for rule tests and the port contract suite. It answers
//! like the Postgres adapter: built-in templates (no organization) and the organization's own,
//! ordered by type, name and id (byte-wise, as the database's C collation).

use std::sync::Mutex;

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, Page, PageRequest, RepoError};
use uuid::Uuid;

use crate::{Template, TemplateFilter, TemplateRepository};

/// Templates held in memory; tests add them with [`InMemoryTemplateRepository::insert`].
#[derive(Default)]
pub struct InMemoryTemplateRepository {
    templates: Mutex<Vec<Template>>,
}

impl InMemoryTemplateRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores a template (the migration seeds the built-in ones in Postgres).
    pub fn insert(&self, template: Template) {
        self.templates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(template);
    }

    fn visible(&self, org: OrgId) -> Vec<Template> {
        self.templates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|t| t.org_id.is_none_or(|o| o == org))
            .cloned()
            .collect()
    }
}

#[async_trait]
impl TemplateRepository for InMemoryTemplateRepository {
    async fn list_templates(
        &self,
        org: OrgId,
        filter: &TemplateFilter,
        page: PageRequest,
    ) -> Result<Page<Template>, RepoError> {
        let mut rows: Vec<Template> = self
            .visible(org)
            .into_iter()
            .filter(|t| filter.template_type.is_none_or(|k| t.template_type == k))
            .filter(|t| filter.system_default.is_none_or(|d| t.system_default == d))
            .filter(|t| {
                filter
                    .search
                    .as_deref()
                    .is_none_or(|s| t.name.to_lowercase().contains(&s.to_lowercase()))
            })
            .collect();
        rows.sort_by(|a, b| {
            (a.template_type.as_str(), &a.name, a.id).cmp(&(
                b.template_type.as_str(),
                &b.name,
                b.id,
            ))
        });
        let count = rows.len() as u64;
        let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
        Ok(Page {
            count,
            results: rows.into_iter().skip(offset).take(limit).collect(),
        })
    }

    async fn get_template(&self, org: OrgId, id: Uuid) -> Result<Template, RepoError> {
        self.visible(org)
            .into_iter()
            .find(|t| t.id == id)
            .ok_or(RepoError::NotFound)
    }
}
