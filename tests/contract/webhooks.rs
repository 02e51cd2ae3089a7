//! `WebhookRepository`: an endpoint reads back as created, per organization, without its
//! secrets, which read back only through `endpoint_secrets`; lists are newest first, per
//! organization and optionally per creator, paged; deletes by id and by URL stay in the
//! organization.

use teamcomm_kernel::{EventType, PageRequest, UserId};
use teamcomm_webhooks::{
    EndpointSecrets, NewWebhookEndpoint, SecretText, WebhookId, generate_signing_secret,
};
use time::Duration;
use time::macros::datetime;
use uuid::Uuid;

use crate::ports::{Ports, assert_not_found};

contract!(
    an_endpoint_reads_back_as_created_and_its_secrets_only_through_endpoint_secrets,
    endpoints_list_newest_first_per_organization_and_creator,
    deletes_stay_in_the_organization,
);

fn endpoint(url: &str, by: UserId, minute: i64, bearer: Option<&str>) -> NewWebhookEndpoint {
    NewWebhookEndpoint {
        id: WebhookId::new(),
        url: url.into(),
        events: vec![EventType::FormsResponseCreated, EventType::KudosPosted],
        name: "CRM".into(),
        object_ids: vec![Uuid::now_v7()],
        secrets: EndpointSecrets {
            signing_secret: generate_signing_secret(),
            bearer_token: bearer.map(SecretText::new),
        },
        created_by: by,
        created_at: datetime!(2026-11-26 02:00 UTC) + Duration::minutes(minute),
    }
}

async fn an_endpoint_reads_back_as_created_and_its_secrets_only_through_endpoint_secrets(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let new = endpoint("https://hooks.example.com/in", ada.id, 0, Some("tok-1"));
    let created = p.webhooks.create_endpoint(acme.id, &new).await.unwrap();
    assert_eq!(created.id, new.id);
    assert_eq!(created.org_id, acme.id);
    assert_eq!(created.url, new.url);
    assert_eq!(created.events, new.events);
    assert_eq!(created.name, "CRM");
    assert_eq!(created.object_ids, new.object_ids);
    assert!(created.has_bearer_token && created.enabled);
    assert_eq!(created.disabled_reason, None);
    assert_eq!(created.created_by, Some(ada.id));
    assert_eq!(created.created_at, new.created_at);
    assert_eq!(
        p.webhooks.get_endpoint(acme.id, new.id).await.unwrap(),
        created
    );
    assert_eq!(
        p.webhooks.endpoint_secrets(acme.id, new.id).await.unwrap(),
        new.secrets
    );

    let plain = endpoint("https://hooks.example.com/plain", ada.id, 1, None);
    let plain_created = p.webhooks.create_endpoint(acme.id, &plain).await.unwrap();
    assert!(!plain_created.has_bearer_token);
    let secrets = p
        .webhooks
        .endpoint_secrets(acme.id, plain.id)
        .await
        .unwrap();
    assert_eq!(secrets.bearer_token, None);
    assert_eq!(secrets.signing_secret, plain.secrets.signing_secret);

    // Another organization's endpoint, or none at all, is not found.
    assert_not_found(p.webhooks.get_endpoint(globex.id, new.id).await);
    assert_not_found(p.webhooks.endpoint_secrets(globex.id, new.id).await);
    assert_not_found(p.webhooks.get_endpoint(acme.id, WebhookId::new()).await);
}

async fn endpoints_list_newest_first_per_organization_and_creator(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let bob = p.user(&acme, "bob@acme.test", "Bob", "M").await;
    let gus = p.user(&globex, "gus@globex.test", "Gus", "N").await;
    let mut ids = Vec::new();
    for (minute, by) in [(0, ada.id), (2, bob.id), (1, ada.id)] {
        let new = endpoint("https://hooks.example.com/", by, minute, None);
        ids.push(new.id);
        p.webhooks.create_endpoint(acme.id, &new).await.unwrap();
    }
    p.webhooks
        .create_endpoint(globex.id, &endpoint("https://g.example/", gus.id, 5, None))
        .await
        .unwrap();

    let all = p
        .webhooks
        .list_endpoints(acme.id, None, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(all.count, 3);
    let order: Vec<WebhookId> = all.results.iter().map(|e| e.id).collect();
    assert_eq!(order, [ids[1], ids[2], ids[0]]);

    let page = p
        .webhooks
        .list_endpoints(
            acme.id,
            None,
            PageRequest {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(page.count, 3);
    assert_eq!(page.results.len(), 1);
    assert_eq!(page.results[0].id, ids[2]);

    let adas = p
        .webhooks
        .list_endpoints(acme.id, Some(ada.id), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(adas.count, 2);
    assert!(adas.results.iter().all(|e| e.created_by == Some(ada.id)));
    let none = p
        .webhooks
        .list_endpoints(acme.id, Some(gus.id), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(none.count, 0);
}

async fn deletes_stay_in_the_organization(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let gus = p.user(&globex, "gus@globex.test", "Gus", "N").await;
    let url = "https://hooks.example.com/same";
    let a1 = endpoint(url, ada.id, 0, None);
    let a2 = endpoint(url, ada.id, 1, Some("t"));
    let a3 = endpoint("https://hooks.example.com/other", ada.id, 2, None);
    let g1 = endpoint(url, gus.id, 3, None);
    for (org, new) in [
        (acme.id, &a1),
        (acme.id, &a2),
        (acme.id, &a3),
        (globex.id, &g1),
    ] {
        p.webhooks.create_endpoint(org, new).await.unwrap();
    }

    assert_not_found(p.webhooks.delete_endpoint(globex.id, a3.id).await);
    p.webhooks.delete_endpoint(acme.id, a3.id).await.unwrap();
    assert_not_found(p.webhooks.get_endpoint(acme.id, a3.id).await);
    assert_not_found(p.webhooks.delete_endpoint(acme.id, a3.id).await);

    assert_eq!(
        p.webhooks
            .delete_endpoints_by_url(acme.id, "https://hooks.example.com/SAME")
            .await
            .unwrap(),
        0,
        "URLs compare exactly"
    );
    assert_eq!(
        p.webhooks
            .delete_endpoints_by_url(acme.id, url)
            .await
            .unwrap(),
        2
    );
    assert_not_found(p.webhooks.endpoint_secrets(acme.id, a2.id).await);
    assert_eq!(
        p.webhooks.get_endpoint(globex.id, g1.id).await.unwrap().url,
        url
    );
    assert_eq!(
        p.webhooks
            .delete_endpoints_by_url(acme.id, url)
            .await
            .unwrap(),
        0
    );
}
