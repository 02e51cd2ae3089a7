//! Where the adapters disagree today, or both miss what the port promises. Each behaviour is
//! the contract as it should hold; the adapter that does not meet it yet has its test ignored
//! with the reason. Fixing the adapter means deleting the ignore by moving the behaviour into
//! its port's file.

use crate::ports::Ports;

mod built_in_templates {
    use super::*;

    contract_gap!(in_memory lags: "InMemoryTemplateRepository starts empty; Postgres starts with the 7 built-in templates its migration seeds", every_organization_sees_the_built_in_templates);

    pub(super) async fn every_organization_sees_the_built_in_templates(p: Ports) {
        let org = p.org("Acme").await;
        let built_in = teamcomm_forms::TemplateFilter {
            system_default: Some(true),
            ..teamcomm_forms::TemplateFilter::default()
        };
        let page = p
            .templates
            .list_templates(org.id, &built_in, teamcomm_kernel::PageRequest::default())
            .await
            .unwrap();
        assert_eq!(page.count, 7);
        assert!(page.results.iter().all(|t| t.org_id.is_none()));
        assert!(page.results.iter().any(|t| t.name == "Daily Standup"));
    }
}
