//! Where the adapters disagree today, or both miss what the port promises. Each behaviour is
//! the contract as it should hold; the adapter that does not meet it yet has its test ignored
//! with the reason. Fixing the adapter means deleting the ignore by moving the behaviour into
//! its port's file.

use teamcomm_kernel::{ApiKeyId, OrgId, TeamId};
use teamcomm_keys::{NewKeyRecord, Scope, Secret, SecretKind};
use teamcomm_messaging::NewChannel;
use time::{Duration, OffsetDateTime};

use crate::ports::{Ports, assert_conflict, assert_not_found, micros};

mod channel_organizations {
    use super::*;

    contract_gap!(in_memory lags: "InMemoryChannelRepository cannot see organizations, so it stores channels of organizations that do not exist", a_channel_of_an_unknown_organization_is_refused);

    pub(super) async fn a_channel_of_an_unknown_organization_is_refused(p: Ports) {
        let new = NewChannel::new("C1", "general", "slack", "channel").unwrap();
        assert_conflict(
            p.channels.upsert_channel(OrgId::new(), &new).await,
            "report_channels_organization_id_fkey",
        );
    }
}

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

mod usage_batches {
    use super::*;

    contract_gap!(postgres lags: "PgKeyRepository::record_key_usage updates a key named twice in one batch from an arbitrary entry (UPDATE … FROM unnest), which can move it backwards; UsageTracker never sends repeats", a_batch_naming_a_key_twice_keeps_the_newest);

    pub(super) async fn a_batch_naming_a_key_twice_keeps_the_newest(p: Ports) {
        let org = p.org("Acme").await;
        let owner = p.user(&org, "ann@acme.test", "Ann", "").await;
        let secret = Secret::generate(SecretKind::ApiKey);
        let new = NewKeyRecord {
            id: ApiKeyId::new(),
            org_id: org.id,
            owner_id: owner.id,
            created_by: None,
            name: "ci".to_owned(),
            hash: secret.hash(),
            suffix: secret.suffix(),
            is_agent_key: false,
            scopes: Scope::DEFAULT.to_vec(),
            expiration: None,
        };
        p.keys.insert_key(&new).await.unwrap();
        let t = micros(OffsetDateTime::now_utc());
        let batch = [
            (new.id, t),
            (new.id, t + Duration::hours(1)),
            (new.id, t - Duration::hours(1)),
        ];
        p.keys.record_key_usage(&batch).await.unwrap();
        let key = p.keys.get_key(org.id, new.id).await.unwrap();
        assert_eq!(key.last_usage_at, Some(t + Duration::hours(1)));
    }
}

mod cross_tenant_memberships {
    use super::*;

    contract_gap!(both lag: "put_member/remove_member check neither the team's nor (before writing) the person's organization: the port writes across tenants (TeamService guards it with get_team and person_in_scope first)", memberships_never_cross_organizations);

    pub(super) async fn memberships_never_cross_organizations(p: Ports) {
        let org = p.org("Acme").await;
        let other = p.org("Other").await;
        let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
        let sam = p.user(&other, "sam@other.test", "Sam", "").await;
        let ours = p.teams.create_team(org.id, "Ours", &[]).await.unwrap();
        let theirs = p
            .teams
            .create_team(other.id, "Theirs", &[sam.id])
            .await
            .unwrap();
        // Their person into our team: refused, and nothing is written.
        assert_not_found(p.teams.put_member(org.id, ours.id, sam.id, None).await);
        assert!(!p.teams.is_member(ours.id, sam.id).await.unwrap());
        // Our person into their team, or taking their member out, through our organization.
        assert_not_found(p.teams.put_member(org.id, theirs.id, ann.id, None).await);
        assert_not_found(p.teams.remove_member(org.id, theirs.id, sam.id).await);
        assert_eq!(
            p.teams
                .get_team(other.id, theirs.id)
                .await
                .unwrap()
                .members_count,
            1
        );
        assert_not_found(
            p.teams
                .put_member(org.id, TeamId::new(), ann.id, None)
                .await,
        );
    }
}
