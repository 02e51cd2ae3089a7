//! `LabelRepository`, `FeaturedRepository` and `LabelledEntities`: labels of an organization,
//! the labels entities carry, and people's stars.

use teamcomm_kernel::{OrgId, PageRequest, UserId};
use teamcomm_labels::{
    BatchMode, Deletion, EntityKind, Label, LabelFilter, LabelId, LabelPatch, NewLabel,
};
use teamcomm_org::{Organization, User};
use uuid::Uuid;

use crate::ports::{Ports, assert_conflict, assert_not_found};

contract!(
    labels_read_back_and_names_are_unique_per_organization_without_case,
    labels_refuse_unknown_organizations_and_creators,
    lists_filter_order_by_name_without_case_and_page,
    updates_change_only_the_given_fields,
    entity_sets_are_replaced_and_batched,
    entity_writes_ignore_labels_of_other_organizations,
    only_unused_labels_are_deleted,
    stars_are_per_person_and_kind,
    stars_refuse_unknown_people,
    workflows_never_exist,
);

fn new_label(by: &User, name: &str) -> NewLabel {
    NewLabel {
        id: LabelId::new(),
        name: name.to_owned(),
        color: "#4A90E2".to_owned(),
        description: String::new(),
        created_by: by.id,
    }
}

async fn label(p: &Ports, org: &Organization, by: &User, name: &str) -> Label {
    p.labels
        .create_label(org.id, &new_label(by, name))
        .await
        .expect("create a label")
}

/// The names of `org`'s labels, archived ones too, in list order.
async fn names(
    p: &Ports,
    org: OrgId,
    filter: LabelFilter,
    page: PageRequest,
) -> (u64, Vec<String>) {
    let page = p.labels.list_labels(org, &filter, page).await.unwrap();
    (
        page.count,
        page.results.into_iter().map(|l| l.name).collect(),
    )
}

fn all() -> LabelFilter {
    LabelFilter {
        include_archived: true,
        search: None,
    }
}

async fn usage(p: &Ports, l: &Label) -> u64 {
    p.labels.get_label(l.org_id, l.id).await.unwrap().usage
}

/// The labels `entity` carries among `labels`, sorted.
async fn carried(
    p: &Ports,
    org: OrgId,
    kind: EntityKind,
    entity: Uuid,
    labels: &[&Label],
) -> Vec<LabelId> {
    let ids: Vec<LabelId> = labels.iter().map(|l| l.id).collect();
    let mut found: Vec<LabelId> = p
        .labels
        .assignments(org, kind, &[entity], &ids)
        .await
        .unwrap()
        .into_iter()
        .map(|(e, l)| {
            assert_eq!(e, entity);
            l
        })
        .collect();
    found.sort();
    found
}

fn sorted(mut ids: Vec<LabelId>) -> Vec<LabelId> {
    ids.sort();
    ids
}

async fn labels_read_back_and_names_are_unique_per_organization_without_case(p: Ports) {
    let org = p.org("Acme").await;
    let other = p.org("Globex").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "").await;
    let new = NewLabel {
        description: "Needs attention".into(),
        color: "#FF0000".into(),
        ..new_label(&ann, "Urgent")
    };
    let created = p.labels.create_label(org.id, &new).await.unwrap();
    assert_eq!(created.id, new.id);
    assert_eq!(created.org_id, org.id);
    assert_eq!(
        (&*created.name, &*created.color, &*created.description),
        ("Urgent", "#FF0000", "Needs attention")
    );
    assert_eq!(
        (created.is_archived, created.created_by, created.usage),
        (false, Some(ann.id), 0)
    );
    assert_eq!(created.created_at, created.updated_at);
    let read = p.labels.get_label(org.id, created.id).await.unwrap();
    assert_eq!(read, created);
    assert_eq!(
        p.labels
            .find_labels(org.id, &[created.id, LabelId::new()])
            .await
            .unwrap(),
        [read]
    );
    // Another organization does not see it, and may use the name.
    assert_not_found(p.labels.get_label(other.id, created.id).await);
    assert!(
        p.labels
            .find_labels(other.id, &[created.id])
            .await
            .unwrap()
            .is_empty()
    );
    label(&p, &other, &otto, "URGENT").await;
    assert_conflict(
        p.labels
            .create_label(org.id, &new_label(&ann, "uRGENT"))
            .await,
        "labels_org_lower_name_key",
    );
    assert_conflict(
        p.labels
            .create_label(
                org.id,
                &NewLabel {
                    name: "Other".into(),
                    ..new.clone()
                },
            )
            .await,
        "labels_pkey",
    );
    assert_eq!(
        names(&p, org.id, all(), PageRequest::all()).await,
        (1, vec!["Urgent".into()])
    );
}

async fn labels_refuse_unknown_organizations_and_creators(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    assert_conflict(
        p.labels
            .create_label(OrgId::new(), &new_label(&ann, "A"))
            .await,
        "labels_organization_id_fkey",
    );
    let ghost = NewLabel {
        created_by: UserId::new(),
        ..new_label(&ann, "A")
    };
    assert_conflict(
        p.labels.create_label(org.id, &ghost).await,
        "labels_created_by_id_fkey",
    );
    assert_eq!(names(&p, org.id, all(), PageRequest::all()).await.0, 0);
}

async fn lists_filter_order_by_name_without_case_and_page(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    for name in ["beta", "Alpha", "gamma", "alphabet", "100%", "a_b"] {
        label(&p, &org, &ann, name).await;
    }
    let alpine = label(&p, &org, &ann, "Alpine").await;
    let archive = LabelPatch {
        is_archived: Some(true),
        ..LabelPatch::default()
    };
    p.labels
        .update_label(org.id, alpine.id, &archive)
        .await
        .unwrap();
    let other = p.org("Globex").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "").await;
    label(&p, &other, &otto, "Alps").await;

    let live = LabelFilter::default();
    assert_eq!(
        names(&p, org.id, live.clone(), PageRequest::all()).await,
        (
            6,
            ["100%", "a_b", "Alpha", "alphabet", "beta", "gamma"]
                .map(String::from)
                .to_vec()
        )
    );
    assert_eq!(
        names(
            &p,
            org.id,
            live.clone(),
            PageRequest {
                offset: 2,
                limit: 3
            }
        )
        .await,
        (6, ["Alpha", "alphabet", "beta"].map(String::from).to_vec())
    );
    assert_eq!(
        names(
            &p,
            org.id,
            live.clone(),
            PageRequest {
                offset: 10,
                limit: 3
            }
        )
        .await,
        (6, vec![])
    );
    let search = |s: &str| LabelFilter {
        include_archived: true,
        search: Some(s.to_owned()),
    };
    assert_eq!(
        names(&p, org.id, search("ALP"), PageRequest::all()).await,
        (
            3,
            ["Alpha", "alphabet", "Alpine"].map(String::from).to_vec()
        )
    );
    // LIKE wildcards in the fragment are plain characters.
    assert_eq!(
        names(&p, org.id, search("%"), PageRequest::all()).await,
        (1, vec!["100%".into()])
    );
    assert_eq!(
        names(&p, org.id, search("_"), PageRequest::all()).await,
        (1, vec!["a_b".into()])
    );
    assert_eq!(
        names(&p, OrgId::new(), all(), PageRequest::all()).await,
        (0, vec![])
    );
}

async fn updates_change_only_the_given_fields(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let a = label(&p, &org, &ann, "A").await;
    let b = label(&p, &org, &ann, "B").await;
    let patch = LabelPatch {
        color: Some("#00FF00".into()),
        description: Some("green".into()),
        ..LabelPatch::default()
    };
    let changed = p.labels.update_label(org.id, a.id, &patch).await.unwrap();
    assert_eq!(
        (
            &*changed.name,
            &*changed.color,
            &*changed.description,
            changed.is_archived
        ),
        ("A", "#00FF00", "green", false)
    );
    assert!(changed.updated_at >= a.updated_at);
    assert_eq!(changed.created_at, a.created_at);
    assert_eq!(p.labels.get_label(org.id, a.id).await.unwrap(), changed);
    let archived = p
        .labels
        .update_label(
            org.id,
            a.id,
            &LabelPatch {
                is_archived: Some(true),
                ..LabelPatch::default()
            },
        )
        .await
        .unwrap();
    assert!(archived.is_archived);
    assert_eq!(archived.color, "#00FF00");
    // A taken name (in any case) is refused and changes nothing.
    let rename = LabelPatch {
        name: Some("b".into()),
        color: Some("#000000".into()),
        ..LabelPatch::default()
    };
    assert_conflict(
        p.labels.update_label(org.id, a.id, &rename).await,
        "labels_org_lower_name_key",
    );
    assert_eq!(
        p.labels.get_label(org.id, a.id).await.unwrap().color,
        "#00FF00"
    );
    // Its own name in another case is not taken.
    let own = LabelPatch {
        name: Some("b".into()),
        ..LabelPatch::default()
    };
    assert_eq!(
        p.labels
            .update_label(org.id, b.id, &own)
            .await
            .unwrap()
            .name,
        "b"
    );
    let other = p.org("Globex").await;
    assert_not_found(p.labels.update_label(other.id, a.id, &own).await);
    assert_not_found(p.labels.update_label(org.id, LabelId::new(), &own).await);
    assert_eq!(
        names(&p, org.id, all(), PageRequest::all()).await,
        (2, vec!["A".into(), "b".into()])
    );
}

async fn entity_sets_are_replaced_and_batched(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let a = label(&p, &org, &ann, "a").await;
    let b = label(&p, &org, &ann, "B").await;
    let c = label(&p, &org, &ann, "c").await;
    let all3 = [&a, &b, &c];
    let (forms, checkins) = (EntityKind::Forms, EntityKind::Checkins);
    let (e1, e2) = (Uuid::now_v7(), Uuid::now_v7());

    let set = p
        .labels
        .replace_entity_labels(org.id, forms, e1, &[c.id, a.id])
        .await
        .unwrap();
    let set: Vec<(String, u64)> = set.into_iter().map(|l| (l.name, l.usage)).collect();
    assert_eq!(set, [("a".into(), 1), ("c".into(), 1)]);
    assert_eq!(
        carried(&p, org.id, forms, e1, &all3).await,
        sorted(vec![a.id, c.id])
    );
    // The same uuid as another kind is another entity.
    assert!(carried(&p, org.id, checkins, e1, &all3).await.is_empty());
    let set = p
        .labels
        .replace_entity_labels(org.id, forms, e1, &[b.id])
        .await
        .unwrap();
    assert_eq!(set.iter().map(|l| l.id).collect::<Vec<_>>(), [b.id]);
    assert_eq!(carried(&p, org.id, forms, e1, &all3).await, [b.id]);
    assert_eq!((usage(&p, &a).await, usage(&p, &b).await), (0, 1));

    let batch = |entities: Vec<Uuid>, labels: Vec<LabelId>, mode| {
        let repo = p.labels.clone();
        async move {
            repo.batch_entity_labels(org.id, forms, &entities, &labels, mode)
                .await
                .unwrap()
        }
    };
    // e1 has B already: only e2 changes.
    assert_eq!(batch(vec![e1, e2], vec![b.id], BatchMode::Add).await, 1);
    assert_eq!(
        batch(vec![e1, e2], vec![a.id, b.id], BatchMode::Add).await,
        2
    );
    assert_eq!(usage(&p, &a).await, 2);
    assert_eq!(batch(vec![e1, e2], vec![c.id], BatchMode::Remove).await, 0);
    assert_eq!(batch(vec![e2], vec![a.id], BatchMode::Remove).await, 1);
    assert_eq!(carried(&p, org.id, forms, e2, &all3).await, [b.id]);
    // e1 {a, b} → {c}; e2 {b} → {c}.
    assert_eq!(batch(vec![e1, e2], vec![c.id], BatchMode::Replace).await, 2);
    assert_eq!(carried(&p, org.id, forms, e1, &all3).await, [c.id]);
    assert_eq!(batch(vec![e1, e2], vec![c.id], BatchMode::Replace).await, 0);
    assert_eq!(usage(&p, &c).await, 2);
    assert_eq!(batch(vec![e1, e2], vec![], BatchMode::Replace).await, 2);
    assert!(carried(&p, org.id, forms, e1, &all3).await.is_empty());
    assert!(
        p.labels
            .replace_entity_labels(org.id, forms, e1, &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(usage(&p, &c).await, 0);
}

async fn entity_writes_ignore_labels_of_other_organizations(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let other = p.org("Globex").await;
    let otto = p.user(&other, "otto@globex.test", "Otto", "").await;
    let mine = label(&p, &org, &ann, "Mine").await;
    let theirs = label(&p, &other, &otto, "Theirs").await;
    let kind = EntityKind::Checkins;
    let e = Uuid::now_v7();
    let set = p
        .labels
        .replace_entity_labels(org.id, kind, e, &[mine.id, theirs.id, LabelId::new()])
        .await
        .unwrap();
    assert_eq!(set.iter().map(|l| l.id).collect::<Vec<_>>(), [mine.id]);
    assert_eq!(
        p.labels
            .batch_entity_labels(org.id, kind, &[e], &[theirs.id], BatchMode::Add)
            .await
            .unwrap(),
        0
    );
    assert_eq!(usage(&p, &theirs).await, 0);
    assert_eq!(
        carried(&p, org.id, kind, e, &[&mine, &theirs]).await,
        [mine.id]
    );
    // The other organization sees none of this entity's labels.
    assert!(
        carried(&p, other.id, kind, e, &[&mine, &theirs])
            .await
            .is_empty()
    );
}

async fn only_unused_labels_are_deleted(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let used = label(&p, &org, &ann, "Used").await;
    let unused = label(&p, &org, &ann, "Unused").await;
    for kind in [
        EntityKind::Forms,
        EntityKind::Checkins,
        EntityKind::Workflows,
    ] {
        p.labels
            .replace_entity_labels(org.id, kind, Uuid::now_v7(), &[used.id])
            .await
            .unwrap();
    }
    assert_eq!(
        p.labels.delete_unused_label(org.id, used.id).await.unwrap(),
        Deletion::InUse(3)
    );
    assert_eq!(usage(&p, &used).await, 3);
    let other = p.org("Globex").await;
    assert_not_found(p.labels.delete_unused_label(other.id, unused.id).await);
    assert_eq!(
        p.labels
            .delete_unused_label(org.id, unused.id)
            .await
            .unwrap(),
        Deletion::Deleted
    );
    assert_not_found(p.labels.get_label(org.id, unused.id).await);
    assert_not_found(p.labels.delete_unused_label(org.id, unused.id).await);
    assert_eq!(
        names(&p, org.id, all(), PageRequest::all()).await,
        (1, vec!["Used".into()])
    );
}

async fn stars_are_per_person_and_kind(p: Ports) {
    let org = p.org("Acme").await;
    let ann = p.user(&org, "ann@acme.test", "Ann", "").await;
    let bob = p.user(&org, "bob@acme.test", "Bob", "").await;
    let kind = EntityKind::Forms;
    let (f1, f2, f3) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let star = |user: UserId, entities: Vec<Uuid>, featured: bool| {
        let repo = p.featured.clone();
        async move {
            repo.set_featured(org.id, user, kind, &entities, featured)
                .await
                .unwrap()
        }
    };
    assert_eq!(star(ann.id, vec![f3], true).await, [f3]);
    // Answers the changed ones, in the order given.
    assert_eq!(star(ann.id, vec![f2, f3, f1], true).await, [f2, f1]);
    // Oldest star first; one call's stars by entity id.
    let mut later = vec![f1, f2];
    later.sort();
    let mut expected = vec![f3];
    expected.extend(later);
    assert_eq!(p.featured.featured(ann.id, kind).await.unwrap(), expected);
    assert!(p.featured.featured(bob.id, kind).await.unwrap().is_empty());
    assert!(
        p.featured
            .featured(ann.id, EntityKind::Workflows)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        star(ann.id, vec![f1, Uuid::now_v7(), f3], false).await,
        [f1, f3]
    );
    assert_eq!(p.featured.featured(ann.id, kind).await.unwrap(), [f2]);
    assert!(star(ann.id, vec![f1], false).await.is_empty());
}

async fn stars_refuse_unknown_people(p: Ports) {
    let org = p.org("Acme").await;
    assert_conflict(
        p.featured
            .set_featured(
                org.id,
                UserId::new(),
                EntityKind::Checkins,
                &[Uuid::now_v7()],
                true,
            )
            .await,
        "featured_entities_user_id_fkey",
    );
}

async fn workflows_never_exist(p: Ports) {
    let org = p.org("Acme").await;
    let ids = [Uuid::now_v7(), Uuid::now_v7()];
    assert!(
        p.labelled_entities
            .existing(org.id, EntityKind::Workflows, &ids)
            .await
            .unwrap()
            .is_empty()
    );
}
