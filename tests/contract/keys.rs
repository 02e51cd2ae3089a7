//! `KeyRepository`: API keys and CLI tokens.

use teamcomm_kernel::{ApiKeyId, OrgId, PageRequest, UserId};
use teamcomm_keys::{
    ApiKey, KeyChanges, KeyListScope, NewKeyRecord, PersonRef, Scope, Secret, SecretKind,
};
use teamcomm_org::{Organization, User};
use time::{Duration, OffsetDateTime};

use crate::ports::{Ports, assert_conflict, assert_not_found, assert_refused_by_check, micros};

contract!(
    a_key_reads_back_as_inserted,
    keys_are_scoped_by_organization,
    keys_list_newest_first_with_counts_and_pages,
    key_writes_refuse_duplicates_and_missing_references,
    key_names_outside_the_stored_bounds_are_refused,
    updates_change_only_the_given_fields,
    a_regenerated_secret_replaces_the_old_hash,
    a_deleted_key_is_gone,
    a_key_credential_is_found_by_hash_with_its_owner,
    recorded_usage_never_moves_backwards,
    a_batch_naming_a_key_twice_keeps_the_newest,
    cli_tokens_are_found_by_hash_and_revoked,
    cli_token_writes_refuse_duplicates_and_missing_references,
);

struct Fixture {
    org: Organization,
    owner: User,
    admin: User,
}

async fn fixture(p: &Ports) -> Fixture {
    let org = p.org("Acme").await;
    Fixture {
        owner: p.user(&org, "owen@acme.test", "Owen", "Owner").await,
        admin: p.user(&org, "ada@acme.test", "Ada", "").await,
        org,
    }
}

fn record(org: OrgId, owner: UserId, created_by: Option<UserId>) -> (NewKeyRecord, Secret) {
    let secret = Secret::generate(SecretKind::ApiKey);
    let record = NewKeyRecord {
        id: ApiKeyId::new(),
        org_id: org,
        owner_id: owner,
        created_by,
        name: "ci".to_owned(),
        hash: secret.hash(),
        suffix: secret.suffix(),
        is_agent_key: false,
        scopes: Scope::DEFAULT.to_vec(),
        expiration: None,
    };
    (record, secret)
}

async fn insert(p: &Ports, org: OrgId, owner: UserId) -> ApiKey {
    let (new, _) = record(org, owner, None);
    p.keys.insert_key(&new).await.expect("insert")
}

fn ids(keys: &[ApiKey]) -> Vec<ApiKeyId> {
    keys.iter().map(|k| k.id).collect()
}

fn person(user: &User) -> PersonRef {
    PersonRef {
        id: user.id,
        full_name: user.full_name(),
    }
}

async fn a_key_reads_back_as_inserted(p: Ports) {
    let f = fixture(&p).await;
    let expiration = micros(OffsetDateTime::now_utc() + Duration::days(3));
    let (mut new, secret) = record(f.org.id, f.owner.id, Some(f.admin.id));
    new.name = "deploy bot".to_owned();
    new.is_agent_key = true;
    new.scopes = vec![Scope::TasksRead, Scope::TasksAdmin];
    new.expiration = Some(expiration);
    let before = micros(OffsetDateTime::now_utc()) - Duration::seconds(5);
    let key = p.keys.insert_key(&new).await.unwrap();
    assert_eq!(key.id, new.id);
    assert_eq!(key.org_id, f.org.id);
    assert_eq!(key.name, "deploy bot");
    assert_eq!(key.key_suffix, secret.suffix());
    assert!(key.active);
    assert_eq!(key.owner, person(&f.owner));
    assert_eq!(key.owner.full_name, "Owen Owner");
    assert_eq!(key.created_by, Some(person(&f.admin)));
    assert_eq!(key.created_by.as_ref().unwrap().full_name, "Ada");
    assert!(key.is_agent_key);
    assert_eq!(key.scopes, vec![Scope::TasksRead, Scope::TasksAdmin]);
    assert_eq!(key.last_usage_at, None);
    assert_eq!(key.expiration, Some(expiration));
    assert!(key.created_at >= before, "{} < {before}", key.created_at);
    assert_eq!(p.keys.get_key(f.org.id, key.id).await.unwrap(), key);

    let (no_creator, _) = record(f.org.id, f.owner.id, None);
    let key = p.keys.insert_key(&no_creator).await.unwrap();
    assert_eq!(key.created_by, None);
    assert_eq!(key.scopes, Scope::DEFAULT.to_vec());
    assert!(!key.is_agent_key);
}

async fn keys_are_scoped_by_organization(p: Ports) {
    let f = fixture(&p).await;
    let other = p.org("Other").await;
    let stranger = p.user(&other, "sam@other.test", "Sam", "").await;
    let key = insert(&p, f.org.id, f.owner.id).await;
    let theirs = insert(&p, other.id, stranger.id).await;

    assert_not_found(p.keys.get_key(other.id, key.id).await);
    assert_not_found(p.keys.get_key(f.org.id, ApiKeyId::new()).await);
    let rename = KeyChanges {
        name: Some("taken".to_owned()),
        ..KeyChanges::default()
    };
    assert_not_found(p.keys.update_key(other.id, key.id, &rename).await);
    assert_not_found(p.keys.update_key(f.org.id, ApiKeyId::new(), &rename).await);
    assert_not_found(p.keys.delete_key(other.id, key.id).await);
    assert_eq!(p.keys.get_key(f.org.id, key.id).await.unwrap(), key);

    let listed = p
        .keys
        .list_keys(other.id, KeyListScope::Organization, PageRequest::default())
        .await
        .unwrap();
    assert_eq!((listed.count, ids(&listed.results)), (1, vec![theirs.id]));
    // Owned-by another organization's person, within this organization: nothing.
    let listed = p
        .keys
        .list_keys(
            f.org.id,
            KeyListScope::OwnedBy(stranger.id),
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!((listed.count, listed.results.len()), (0, 0));
}

async fn keys_list_newest_first_with_counts_and_pages(p: Ports) {
    let f = fixture(&p).await;
    let mut created = Vec::new();
    for owner in [&f.owner, &f.admin, &f.owner, &f.admin, &f.owner] {
        created.push(insert(&p, f.org.id, owner.id).await.id);
    }
    let newest_first: Vec<ApiKeyId> = created.iter().rev().copied().collect();
    let list = |scope, offset, limit| {
        let keys = p.keys.clone();
        let org = f.org.id;
        async move {
            let page = keys
                .list_keys(org, scope, PageRequest { offset, limit })
                .await
                .unwrap();
            (page.count, ids(&page.results))
        }
    };
    let all = KeyListScope::Organization;
    assert_eq!(list(all, 0, 25).await, (5, newest_first.clone()));
    assert_eq!(list(all, 0, u64::MAX).await, (5, newest_first.clone()));
    assert_eq!(list(all, 1, 2).await, (5, newest_first[1..3].to_vec()));
    assert_eq!(list(all, 4, 2).await, (5, newest_first[4..].to_vec()));
    assert_eq!(list(all, 5, 2).await, (5, vec![]));
    assert_eq!(list(all, u64::MAX, 2).await, (5, vec![]));
    let owned = KeyListScope::OwnedBy(f.owner.id);
    let owners: Vec<ApiKeyId> = vec![created[4], created[2], created[0]];
    assert_eq!(list(owned, 0, 25).await, (3, owners.clone()));
    assert_eq!(list(owned, 1, 1).await, (3, owners[1..2].to_vec()));
    let empty = p.org("Empty").await;
    let page = p
        .keys
        .list_keys(empty.id, all, PageRequest::default())
        .await
        .unwrap();
    assert_eq!((page.count, page.results.len()), (0, 0));
}

async fn key_writes_refuse_duplicates_and_missing_references(p: Ports) {
    let f = fixture(&p).await;
    let (new, _) = record(f.org.id, f.owner.id, None);
    p.keys.insert_key(&new).await.unwrap();

    let (mut same_id, _) = record(f.org.id, f.owner.id, None);
    same_id.id = new.id;
    assert_conflict(p.keys.insert_key(&same_id).await, "api_keys_pkey");
    let (mut same_hash, _) = record(f.org.id, f.owner.id, None);
    same_hash.hash = new.hash;
    assert_conflict(p.keys.insert_key(&same_hash).await, "api_keys_hash_key");
    let (no_org, _) = record(OrgId::new(), f.owner.id, None);
    assert_conflict(
        p.keys.insert_key(&no_org).await,
        "api_keys_organization_id_fkey",
    );
    let (no_owner, _) = record(f.org.id, UserId::new(), None);
    assert_conflict(p.keys.insert_key(&no_owner).await, "api_keys_owner_id_fkey");
    let (no_creator, _) = record(f.org.id, f.owner.id, Some(UserId::new()));
    assert_conflict(
        p.keys.insert_key(&no_creator).await,
        "api_keys_created_by_id_fkey",
    );

    let page = p
        .keys
        .list_keys(f.org.id, KeyListScope::Organization, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(
        ids(&page.results),
        vec![new.id],
        "a refused write stores nothing"
    );
}

async fn key_names_outside_the_stored_bounds_are_refused(p: Ports) {
    let f = fixture(&p).await;
    for name in [String::new(), "é".repeat(256)] {
        let (mut new, _) = record(f.org.id, f.owner.id, None);
        new.name = name;
        assert_refused_by_check(p.keys.insert_key(&new).await);
    }
    let (mut longest, _) = record(f.org.id, f.owner.id, None);
    longest.name = "é".repeat(255);
    let key = p.keys.insert_key(&longest).await.unwrap();
    let blank = KeyChanges {
        name: Some(String::new()),
        ..KeyChanges::default()
    };
    assert_refused_by_check(p.keys.update_key(f.org.id, key.id, &blank).await);
    assert_eq!(p.keys.get_key(f.org.id, key.id).await.unwrap(), key);
}

async fn updates_change_only_the_given_fields(p: Ports) {
    let f = fixture(&p).await;
    let expiration = micros(OffsetDateTime::now_utc() + Duration::days(1));
    let (mut new, secret) = record(f.org.id, f.owner.id, Some(f.admin.id));
    new.expiration = Some(expiration);
    let key = p.keys.insert_key(&new).await.unwrap();

    let unchanged = p
        .keys
        .update_key(f.org.id, key.id, &KeyChanges::default())
        .await
        .unwrap();
    assert_eq!(unchanged, key);

    let renamed = p
        .keys
        .update_key(
            f.org.id,
            key.id,
            &KeyChanges {
                name: Some("renamed".to_owned()),
                ..KeyChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        renamed,
        ApiKey {
            name: "renamed".to_owned(),
            ..key.clone()
        }
    );

    let later = micros(expiration + Duration::days(30));
    let changed = p
        .keys
        .update_key(
            f.org.id,
            key.id,
            &KeyChanges {
                active: Some(false),
                expiration: Some(Some(later)),
                scopes: Some(vec![Scope::TasksAdmin]),
                ..KeyChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        changed,
        ApiKey {
            active: false,
            expiration: Some(later),
            scopes: vec![Scope::TasksAdmin],
            ..renamed.clone()
        }
    );
    let cleared = p
        .keys
        .update_key(
            f.org.id,
            key.id,
            &KeyChanges {
                expiration: Some(None),
                scopes: Some(vec![]),
                ..KeyChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((cleared.expiration, cleared.scopes.len()), (None, 0));
    assert_eq!(p.keys.get_key(f.org.id, key.id).await.unwrap(), cleared);
    let credential = p.keys.find_key_credential(&secret.hash()).await.unwrap();
    assert!(!credential.expect("same secret").active);
}

async fn a_regenerated_secret_replaces_the_old_hash(p: Ports) {
    let f = fixture(&p).await;
    let (new, old) = record(f.org.id, f.owner.id, None);
    let key = p.keys.insert_key(&new).await.unwrap();
    let (other, other_secret) = record(f.org.id, f.owner.id, None);
    p.keys.insert_key(&other).await.unwrap();

    let taken = KeyChanges {
        new_secret: Some((other_secret.hash(), other_secret.suffix())),
        ..KeyChanges::default()
    };
    assert_conflict(
        p.keys.update_key(f.org.id, key.id, &taken).await,
        "api_keys_hash_key",
    );
    let fresh = Secret::generate(SecretKind::ApiKey);
    let regenerated = p
        .keys
        .update_key(
            f.org.id,
            key.id,
            &KeyChanges {
                new_secret: Some((fresh.hash(), fresh.suffix())),
                ..KeyChanges::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(regenerated.key_suffix, fresh.suffix());
    assert!(
        p.keys
            .find_key_credential(&old.hash())
            .await
            .unwrap()
            .is_none()
    );
    let found = p.keys.find_key_credential(&fresh.hash()).await.unwrap();
    assert_eq!(found.map(|c| c.id), Some(key.id));
}

async fn a_deleted_key_is_gone(p: Ports) {
    let f = fixture(&p).await;
    let (new, secret) = record(f.org.id, f.owner.id, None);
    let key = p.keys.insert_key(&new).await.unwrap();
    let kept = insert(&p, f.org.id, f.owner.id).await;
    p.keys.delete_key(f.org.id, key.id).await.unwrap();
    assert_not_found(p.keys.get_key(f.org.id, key.id).await);
    assert_not_found(p.keys.delete_key(f.org.id, key.id).await);
    assert!(
        p.keys
            .find_key_credential(&secret.hash())
            .await
            .unwrap()
            .is_none()
    );
    let page = p
        .keys
        .list_keys(f.org.id, KeyListScope::Organization, PageRequest::default())
        .await
        .unwrap();
    assert_eq!((page.count, ids(&page.results)), (1, vec![kept.id]));
}

async fn a_key_credential_is_found_by_hash_with_its_owner(p: Ports) {
    let f = fixture(&p).await;
    let expiration = micros(OffsetDateTime::now_utc() + Duration::hours(1));
    let (mut new, secret) = record(f.org.id, f.owner.id, Some(f.admin.id));
    new.is_agent_key = true;
    new.scopes = vec![Scope::TasksWrite];
    new.expiration = Some(expiration);
    p.keys.insert_key(&new).await.unwrap();
    let found = p
        .keys
        .find_key_credential(&secret.hash())
        .await
        .unwrap()
        .expect("found");
    assert_eq!(found.id, new.id);
    assert_eq!(found.org_id, f.org.id);
    assert!(found.active && found.is_agent_key);
    assert_eq!(found.scopes, vec![Scope::TasksWrite]);
    assert_eq!(found.expiration, Some(expiration));
    assert_eq!(found.owner, p.orgs.find_user(f.owner.id).await.unwrap());
    let unknown = Secret::generate(SecretKind::ApiKey);
    assert!(
        p.keys
            .find_key_credential(&unknown.hash())
            .await
            .unwrap()
            .is_none()
    );
}

async fn recorded_usage_never_moves_backwards(p: Ports) {
    let f = fixture(&p).await;
    let a = insert(&p, f.org.id, f.owner.id).await;
    let b = insert(&p, f.org.id, f.admin.id).await;
    let t = micros(OffsetDateTime::now_utc());
    let last = |id| {
        let keys = p.keys.clone();
        let org = f.org.id;
        async move { keys.get_key(org, id).await.unwrap().last_usage_at }
    };
    p.keys.record_key_usage(&[]).await.unwrap();
    p.keys
        .record_key_usage(&[
            (a.id, t),
            (b.id, t - Duration::hours(1)),
            (ApiKeyId::new(), t),
        ])
        .await
        .unwrap();
    assert_eq!(last(a.id).await, Some(t));
    assert_eq!(last(b.id).await, Some(t - Duration::hours(1)));
    p.keys
        .record_key_usage(&[(a.id, t - Duration::seconds(1)), (b.id, t)])
        .await
        .unwrap();
    assert_eq!(last(a.id).await, Some(t), "an older use does not win");
    assert_eq!(last(b.id).await, Some(t));
    p.keys
        .record_key_usage(&[(a.id, t + Duration::microseconds(1))])
        .await
        .unwrap();
    assert_eq!(last(a.id).await, Some(t + Duration::microseconds(1)));
}

async fn cli_tokens_are_found_by_hash_and_revoked(p: Ports) {
    let f = fixture(&p).await;
    let secret = Secret::generate(SecretKind::CliToken);
    let expires = micros(OffsetDateTime::now_utc() + Duration::hours(8));
    let id = p
        .keys
        .insert_cli_token(f.org.id, f.owner.id, &secret.hash(), Some(expires))
        .await
        .unwrap();
    let forever = Secret::generate(SecretKind::CliToken);
    p.keys
        .insert_cli_token(f.org.id, f.admin.id, &forever.hash(), None)
        .await
        .unwrap();

    let found = p
        .keys
        .find_cli_token_credential(&secret.hash())
        .await
        .unwrap()
        .expect("found");
    assert_eq!((found.id, found.org_id), (id, f.org.id));
    assert_eq!(found.expires_at, Some(expires));
    assert!(!found.revoked);
    assert_eq!(found.user, p.orgs.find_user(f.owner.id).await.unwrap());
    let other = p
        .keys
        .find_cli_token_credential(&forever.hash())
        .await
        .unwrap();
    assert_eq!(
        other.map(|t| (t.expires_at, t.user.id)),
        Some((None, f.admin.id))
    );

    p.keys.revoke_cli_token(id).await.unwrap();
    p.keys.revoke_cli_token(id).await.unwrap();
    p.keys
        .revoke_cli_token(teamcomm_kernel::CliTokenId::new())
        .await
        .unwrap();
    let revoked = p
        .keys
        .find_cli_token_credential(&secret.hash())
        .await
        .unwrap();
    assert!(revoked.expect("still found").revoked);
    let untouched = p
        .keys
        .find_cli_token_credential(&forever.hash())
        .await
        .unwrap();
    assert!(!untouched.expect("found").revoked);
    let unknown = Secret::generate(SecretKind::CliToken);
    assert!(
        p.keys
            .find_cli_token_credential(&unknown.hash())
            .await
            .unwrap()
            .is_none()
    );
}

async fn cli_token_writes_refuse_duplicates_and_missing_references(p: Ports) {
    let f = fixture(&p).await;
    let secret = Secret::generate(SecretKind::CliToken);
    p.keys
        .insert_cli_token(f.org.id, f.owner.id, &secret.hash(), None)
        .await
        .unwrap();
    assert_conflict(
        p.keys
            .insert_cli_token(f.org.id, f.admin.id, &secret.hash(), None)
            .await,
        "cli_tokens_hash_key",
    );
    let fresh = Secret::generate(SecretKind::CliToken);
    assert_conflict(
        p.keys
            .insert_cli_token(OrgId::new(), f.owner.id, &fresh.hash(), None)
            .await,
        "cli_tokens_organization_id_fkey",
    );
    assert_conflict(
        p.keys
            .insert_cli_token(f.org.id, UserId::new(), &fresh.hash(), None)
            .await,
        "cli_tokens_user_id_fkey",
    );
    assert!(
        p.keys
            .find_cli_token_credential(&fresh.hash())
            .await
            .unwrap()
            .is_none()
    );
}

async fn a_batch_naming_a_key_twice_keeps_the_newest(p: Ports) {
    let f = fixture(&p).await;
    let key = insert(&p, f.org.id, f.owner.id).await;
    let t = micros(OffsetDateTime::now_utc());
    let batch = [
        (key.id, t),
        (key.id, t + Duration::hours(1)),
        (key.id, t - Duration::hours(1)),
    ];
    p.keys.record_key_usage(&batch).await.unwrap();
    let stored = p.keys.get_key(f.org.id, key.id).await.unwrap();
    assert_eq!(stored.last_usage_at, Some(t + Duration::hours(1)));
}
