//! The rules of labels and stars, through the in-memory ports.

use std::sync::Arc;

use teamcomm_kernel::{Error, ErrorCode, PageRequest, SystemClock};
use teamcomm_org::testing::InMemoryOrgPorts;
use teamcomm_org::{NewOrganization, NewUser, OrgRepository, Organization, PlanTier, User};
use uuid::Uuid;

use super::*;
use crate::testing::InMemoryLabelPorts;

const PAID: PlanTier = PlanTier::Business;

struct World {
    ports: InMemoryLabelPorts,
    admin: User,
    member: User,
    other_member: User,
    guest: User,
    /// The admin of another organization.
    outsider: User,
}

async fn person(org: &InMemoryOrgPorts, o: &Organization, email: &str, role: &str) -> User {
    let new = NewUser::new(email, "A", "B", role, None).unwrap();
    org.people.create_user(o.id, &new).await.unwrap()
}

impl World {
    async fn new() -> Self {
        let org = InMemoryOrgPorts::new(Arc::new(SystemClock));
        let acme = NewOrganization::new("Acme", "business", None, None, None).unwrap();
        let acme = org.people.create_organization(&acme).await.unwrap();
        let globex = NewOrganization::new("Globex", "business", None, None, None).unwrap();
        let globex = org.people.create_organization(&globex).await.unwrap();
        World {
            ports: InMemoryLabelPorts::new(org.people.clone()),
            admin: person(&org, &acme, "ada@acme.test", "admin").await,
            member: person(&org, &acme, "mia@acme.test", "member").await,
            other_member: person(&org, &acme, "max@acme.test", "member").await,
            guest: person(&org, &acme, "gus@acme.test", "guest").await,
            outsider: person(&org, &globex, "otto@globex.test", "admin").await,
        }
    }

    fn labels(&self) -> LabelService {
        LabelService::new(self.ports.labels.clone(), self.ports.entities.clone())
    }

    fn stars(&self) -> FeaturedService {
        FeaturedService::new(self.ports.featured.clone(), self.ports.entities.clone())
    }

    async fn label(&self, by: &User, name: &str) -> Label {
        self.labels()
            .create_label(by, PAID, name, None, None)
            .await
            .unwrap()
    }

    /// A new entity of `kind` in `by`'s organization.
    fn entity(&self, by: &User, kind: EntityKind) -> Uuid {
        let id = Uuid::now_v7();
        self.ports.entities.insert(by.org_id, kind, id);
        id
    }

    async fn stored(&self, label: &Label) -> Label {
        self.ports
            .labels
            .get_label(label.org_id, label.id)
            .await
            .unwrap()
    }

    async fn carried(&self, kind: EntityKind, entity: Uuid, labels: &[&Label]) -> Vec<LabelId> {
        let ids: Vec<LabelId> = labels.iter().map(|l| l.id).collect();
        let mut found: Vec<LabelId> = self
            .ports
            .labels
            .assignments(self.admin.org_id, kind, &[entity], &ids)
            .await
            .unwrap()
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        found.sort();
        found
    }

    async fn names(&self) -> Vec<String> {
        let filter = LabelFilter {
            include_archived: true,
            search: None,
        };
        self.labels()
            .list_labels(&self.admin, &filter, PageRequest::all())
            .await
            .unwrap()
            .results
            .into_iter()
            .map(|l| l.name)
            .collect()
    }
}

#[track_caller]
fn refused<T: std::fmt::Debug>(r: Result<T, Error>, code: ErrorCode) -> Error {
    let e = r.unwrap_err();
    assert_eq!(e.code(), code, "{e}");
    e
}

fn uuids(e: &Error) -> Vec<String> {
    let mut v: Vec<String> = e.extra()["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn entitlement_follows_plan_and_role() {
    let w = World::new().await;
    let s = w.labels();
    let admin = s.entitlement(&w.admin, PAID);
    assert_eq!(
        admin,
        Entitlement {
            entitled: true,
            can_create: true,
            can_manage_all: true,
            can_hard_delete: true,
            is_guest: false
        }
    );
    let member = s.entitlement(&w.member, PlanTier::Starter);
    assert!(member.entitled && member.can_create);
    assert!(!member.can_manage_all && !member.can_hard_delete && !member.is_guest);
    let guest = s.entitlement(&w.guest, PAID);
    assert!(guest.entitled && guest.is_guest && !guest.can_create && !guest.can_manage_all);
    let free = s.entitlement(&w.admin, PlanTier::Free);
    assert_eq!(
        free,
        Entitlement {
            entitled: false,
            can_create: false,
            can_manage_all: false,
            can_hard_delete: false,
            is_guest: false
        }
    );
}

#[tokio::test]
async fn create_validates_and_defaults() {
    let w = World::new().await;
    let s = w.labels();
    let l = s
        .create_label(
            &w.member,
            PAID,
            "  Urgent ",
            Some("#ff0000"),
            Some(" Act now "),
        )
        .await
        .unwrap();
    assert_eq!(
        (l.name.as_str(), l.color.as_str(), l.description.as_str()),
        ("Urgent", "#FF0000", "Act now")
    );
    assert_eq!(
        (l.is_archived, l.usage, l.created_by),
        (false, 0, Some(w.member.id))
    );
    let plain = s
        .create_label(&w.member, PAID, "Plain", None, None)
        .await
        .unwrap();
    assert_eq!(
        (plain.color.as_str(), plain.description.as_str()),
        (DEFAULT_COLOR, "")
    );

    for (name, color, description, field) in [
        ("", None, None, "name"),
        ("a\u{202e}b", None, None, "name"),
        (&*"x".repeat(51), None, None, "name"),
        ("Ok", Some("red"), None, "color"),
        ("Ok", Some("#12345"), None, "color"),
        ("Ok", None, Some(&*"d".repeat(501)), "description"),
        ("Ok", None, Some("two\nlines"), "description"),
    ] {
        let e = refused(
            s.create_label(&w.member, PAID, name, color, description)
                .await,
            ErrorCode::ParamsValidationError,
        );
        assert!(e.field_errors().contains_key(field), "{field}: {e:?}");
    }
    assert_eq!(w.names().await, ["Plain", "Urgent"]);
}

#[tokio::test]
async fn names_are_unique_per_organization_regardless_of_case() {
    let w = World::new().await;
    let s = w.labels();
    let urgent = w.label(&w.member, "Urgent").await;
    refused(
        s.create_label(&w.admin, PAID, "URGENT", None, None).await,
        ErrorCode::DuplicateName,
    );
    // Another organization may use the name.
    s.create_label(&w.outsider, PAID, "urgent", None, None)
        .await
        .unwrap();
    let other = w.label(&w.member, "Later").await;
    let rename = LabelChanges {
        name: Some("urgent".into()),
        ..LabelChanges::default()
    };
    refused(
        s.update_label(&w.member, PAID, other.id, &rename).await,
        ErrorCode::DuplicateName,
    );
    // Its own name in another case is fine.
    let l = s
        .update_label(&w.member, PAID, urgent.id, &rename)
        .await
        .unwrap();
    assert_eq!(l.name, "urgent");
    assert_eq!(w.names().await, ["Later", "urgent"]);
}

#[tokio::test]
async fn writes_need_a_paid_plan_and_no_guest_but_reads_do_not() {
    let w = World::new().await;
    let s = w.labels();
    let label = w.label(&w.admin, "Urgent").await;
    let form = w.entity(&w.admin, EntityKind::Forms);
    let free = PlanTier::Free;
    let changes = LabelChanges {
        name: Some("X".into()),
        ..LabelChanges::default()
    };
    for (who, plan, code) in [
        (&w.admin, free, ErrorCode::PaidPlanRequired),
        (&w.guest, PAID, ErrorCode::GuestNotAllowed),
        // The plan is checked first.
        (&w.guest, free, ErrorCode::PaidPlanRequired),
    ] {
        refused(s.create_label(who, plan, "New", None, None).await, code);
        refused(s.update_label(who, plan, label.id, &changes).await, code);
        refused(s.archive_label(who, plan, label.id).await, code);
        refused(s.delete_label(who, plan, label.id).await, code);
        refused(
            s.set_entity_labels(who, plan, EntityKind::Forms, form, &[label.id])
                .await,
            code,
        );
        refused(
            s.batch_entity_labels(
                who,
                plan,
                EntityKind::Forms,
                &[form],
                &[label.id],
                BatchMode::Add,
            )
            .await,
            code,
        );
    }
    let e = refused(
        s.create_label(&w.admin, free, "New", None, None).await,
        ErrorCode::PaidPlanRequired,
    );
    assert_eq!(e.status(), 403);
    assert_eq!(w.stored(&label).await, label);
    assert_eq!(w.carried(EntityKind::Forms, form, &[&label]).await, []);
    // Reading works for guests, on any plan.
    let filter = LabelFilter::default();
    let page = s
        .list_labels(&w.guest, &filter, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.count, 1);
    assert_eq!(s.get_label(&w.guest, label.id).await.unwrap(), label);
}

#[tokio::test]
async fn members_edit_their_own_labels_admins_all() {
    let w = World::new().await;
    let s = w.labels();
    let mine = w.label(&w.member, "Mine").await;
    let theirs = w.label(&w.other_member, "Theirs").await;
    let recolour = LabelChanges {
        color: Some("#00ff00".into()),
        description: Some("green".into()),
        ..LabelChanges::default()
    };
    let l = s
        .update_label(&w.member, PAID, mine.id, &recolour)
        .await
        .unwrap();
    assert_eq!(
        (l.color.as_str(), l.description.as_str()),
        ("#00FF00", "green")
    );
    assert_eq!(w.stored(&mine).await.color, "#00FF00");
    refused(
        s.update_label(&w.member, PAID, theirs.id, &recolour).await,
        ErrorCode::PermissionDenied,
    );
    refused(
        s.archive_label(&w.member, PAID, theirs.id).await,
        ErrorCode::PermissionDenied,
    );
    assert_eq!(w.stored(&theirs).await, theirs);
    let l = s
        .update_label(&w.admin, PAID, theirs.id, &recolour)
        .await
        .unwrap();
    assert_eq!(l.color, "#00FF00");
    // An empty description clears; a bad colour changes nothing.
    let clear = LabelChanges {
        description: Some(String::new()),
        ..LabelChanges::default()
    };
    assert_eq!(
        s.update_label(&w.member, PAID, mine.id, &clear)
            .await
            .unwrap()
            .description,
        ""
    );
    let bad = LabelChanges {
        name: Some("Renamed".into()),
        color: Some("#zzzzzz".into()),
        ..LabelChanges::default()
    };
    refused(
        s.update_label(&w.member, PAID, mine.id, &bad).await,
        ErrorCode::ParamsValidationError,
    );
    assert_eq!(w.stored(&mine).await.name, "Mine");
}

#[tokio::test]
async fn archive_is_idempotent_and_patch_restores() {
    let w = World::new().await;
    let s = w.labels();
    let l = w.label(&w.member, "Old").await;
    assert!(
        s.archive_label(&w.member, PAID, l.id)
            .await
            .unwrap()
            .is_archived
    );
    assert!(
        s.archive_label(&w.member, PAID, l.id)
            .await
            .unwrap()
            .is_archived
    );
    assert!(w.stored(&l).await.is_archived);
    // Archived labels leave the default list.
    let live = s
        .list_labels(&w.member, &LabelFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(live.count, 0);
    let restore = LabelChanges {
        is_archived: Some(false),
        ..LabelChanges::default()
    };
    assert!(
        !s.update_label(&w.member, PAID, l.id, &restore)
            .await
            .unwrap()
            .is_archived
    );
    assert!(!w.stored(&l).await.is_archived);
}

#[tokio::test]
async fn only_admins_delete_and_only_unused_labels() {
    let w = World::new().await;
    let s = w.labels();
    let used = w.label(&w.member, "Used").await;
    let unused = w.label(&w.member, "Unused").await;
    refused(
        s.delete_label(&w.member, PAID, unused.id).await,
        ErrorCode::PermissionDenied,
    );
    let checkin = w.entity(&w.admin, EntityKind::Checkins);
    let form = w.entity(&w.admin, EntityKind::Forms);
    s.set_entity_labels(&w.member, PAID, EntityKind::Checkins, checkin, &[used.id])
        .await
        .unwrap();
    s.set_entity_labels(&w.member, PAID, EntityKind::Forms, form, &[used.id])
        .await
        .unwrap();
    let e = refused(
        s.delete_label(&w.admin, PAID, used.id).await,
        ErrorCode::LabelInUse,
    );
    assert_eq!(e.status(), 409);
    assert_eq!(e.extra()["usage_count"], 2);
    assert_eq!(w.stored(&used).await.usage, 2);
    s.delete_label(&w.admin, PAID, unused.id).await.unwrap();
    refused(s.get_label(&w.admin, unused.id).await, ErrorCode::NotFound);
    refused(
        s.delete_label(&w.admin, PAID, unused.id).await,
        ErrorCode::NotFound,
    );
    assert_eq!(w.names().await, ["Used"]);
}

#[tokio::test]
async fn another_organizations_label_is_not_found() {
    let w = World::new().await;
    let s = w.labels();
    let theirs = w.label(&w.outsider, "Theirs").await;
    let form = w.entity(&w.admin, EntityKind::Forms);
    let changes = LabelChanges {
        name: Some("Mine".into()),
        ..LabelChanges::default()
    };
    refused(s.get_label(&w.admin, theirs.id).await, ErrorCode::NotFound);
    refused(
        s.update_label(&w.admin, PAID, theirs.id, &changes).await,
        ErrorCode::NotFound,
    );
    refused(
        s.archive_label(&w.admin, PAID, theirs.id).await,
        ErrorCode::NotFound,
    );
    refused(
        s.delete_label(&w.admin, PAID, theirs.id).await,
        ErrorCode::NotFound,
    );
    let e = refused(
        s.set_entity_labels(&w.admin, PAID, EntityKind::Forms, form, &[theirs.id])
            .await,
        ErrorCode::NotFound,
    );
    assert_eq!(uuids(&e), [theirs.id.to_string()]);
    assert_eq!(w.stored(&theirs).await, theirs);
}

#[tokio::test]
async fn list_filters_searches_and_pages() {
    let w = World::new().await;
    let s = w.labels();
    for name in ["beta", "Alpha", "gamma", "alphabet"] {
        w.label(&w.member, name).await;
    }
    let archived = w.label(&w.member, "Alpine").await;
    s.archive_label(&w.member, PAID, archived.id).await.unwrap();
    w.label(&w.outsider, "Alps").await;
    let list = |include_archived: bool, search: Option<&str>, offset: u64, limit: u64| {
        let s = s.clone();
        let member = w.member.clone();
        let filter = LabelFilter {
            include_archived,
            search: search.map(str::to_owned),
        };
        async move {
            let page = s
                .list_labels(&member, &filter, PageRequest { offset, limit })
                .await
                .unwrap();
            (
                page.count,
                page.results.into_iter().map(|l| l.name).collect::<Vec<_>>(),
            )
        }
    };
    assert_eq!(
        list(false, None, 0, 20).await,
        (
            4,
            vec![
                "Alpha".into(),
                "alphabet".into(),
                "beta".into(),
                "gamma".into()
            ]
        )
    );
    assert_eq!(
        list(true, Some("ALP"), 0, 20).await,
        (3, vec!["Alpha".into(), "alphabet".into(), "Alpine".into()])
    );
    assert_eq!(
        list(false, None, 1, 2).await,
        (4, vec!["alphabet".into(), "beta".into()])
    );
}

#[tokio::test]
async fn replace_set_puts_exactly_the_given_labels() {
    let w = World::new().await;
    let s = w.labels();
    let a = w.label(&w.member, "A").await;
    let b = w.label(&w.member, "B").await;
    let c = w.label(&w.admin, "C").await;
    let form = w.entity(&w.admin, EntityKind::Forms);
    let set = |labels: Vec<LabelId>| {
        let s = s.clone();
        let member = w.member.clone();
        async move {
            s.set_entity_labels(&member, PAID, EntityKind::Forms, form, &labels)
                .await
                .unwrap()
                .into_iter()
                .map(|l| l.name)
                .collect::<Vec<_>>()
        }
    };
    // Duplicates count once; the answer is ordered by name.
    assert_eq!(set(vec![c.id, a.id, c.id]).await, ["A", "C"]);
    assert_eq!(w.carried(EntityKind::Forms, form, &[&a, &b, &c]).await, {
        let mut v = vec![a.id, c.id];
        v.sort();
        v
    });
    assert_eq!(set(vec![b.id]).await, ["B"]);
    assert_eq!(
        w.carried(EntityKind::Forms, form, &[&a, &b, &c]).await,
        [b.id]
    );
    assert_eq!(w.stored(&b).await.usage, 1);
    assert_eq!(w.stored(&a).await.usage, 0);
    assert!(set(vec![]).await.is_empty());
    assert_eq!(w.carried(EntityKind::Forms, form, &[&a, &b, &c]).await, []);
}

#[tokio::test]
async fn entities_must_exist_in_the_callers_organization() {
    let w = World::new().await;
    let s = w.labels();
    let a = w.label(&w.member, "A").await;
    let form = w.entity(&w.admin, EntityKind::Forms);
    let foreign = w.entity(&w.outsider, EntityKind::Forms);
    let checkin = w.entity(&w.admin, EntityKind::Checkins);
    let unknown = Uuid::now_v7();
    for (kind, entity) in [
        (EntityKind::Forms, foreign),
        (EntityKind::Forms, unknown),
        // A check-in is not a form.
        (EntityKind::Forms, checkin),
        (EntityKind::Workflows, form),
    ] {
        let e = refused(
            s.set_entity_labels(&w.member, PAID, kind, entity, &[a.id])
                .await,
            ErrorCode::NotFound,
        );
        assert_eq!(uuids(&e), [entity.to_string()]);
    }
    // A batch naming one unknown entity changes nothing and names it.
    let e = refused(
        s.batch_entity_labels(
            &w.member,
            PAID,
            EntityKind::Forms,
            &[form, unknown, foreign],
            &[a.id],
            BatchMode::Add,
        )
        .await,
        ErrorCode::NotFound,
    );
    let mut expected = vec![unknown.to_string(), foreign.to_string()];
    expected.sort();
    assert_eq!(uuids(&e), expected);
    assert_eq!(w.carried(EntityKind::Forms, form, &[&a]).await, []);
    // Unknown labels are named the same way.
    let ghost = Uuid::now_v7();
    let e = refused(
        s.batch_entity_labels(
            &w.member,
            PAID,
            EntityKind::Forms,
            &[form],
            &[a.id, LabelId(ghost)],
            BatchMode::Add,
        )
        .await,
        ErrorCode::NotFound,
    );
    assert_eq!(uuids(&e), [ghost.to_string()]);
    assert_eq!(w.carried(EntityKind::Forms, form, &[&a]).await, []);
}

#[tokio::test]
async fn batch_adds_removes_and_replaces() {
    let w = World::new().await;
    let s = w.labels();
    let a = w.label(&w.member, "A").await;
    let b = w.label(&w.member, "B").await;
    let f1 = w.entity(&w.admin, EntityKind::Checkins);
    let f2 = w.entity(&w.admin, EntityKind::Checkins);
    let batch = |entities: Vec<Uuid>, labels: Vec<LabelId>, mode: BatchMode| {
        let s = s.clone();
        let member = w.member.clone();
        async move {
            s.batch_entity_labels(
                &member,
                PAID,
                EntityKind::Checkins,
                &entities,
                &labels,
                mode,
            )
            .await
            .unwrap()
        }
    };
    let kind = EntityKind::Checkins;
    s.set_entity_labels(&w.member, PAID, kind, f1, &[a.id])
        .await
        .unwrap();
    // f1 has A already: only f2 changes.
    assert_eq!(batch(vec![f1, f2, f2], vec![a.id], BatchMode::Add).await, 1);
    assert_eq!(w.carried(kind, f2, &[&a, &b]).await, [a.id]);
    assert_eq!(batch(vec![f1, f2], vec![b.id], BatchMode::Add).await, 2);
    assert_eq!(w.stored(&b).await.usage, 2);
    assert_eq!(batch(vec![f1], vec![a.id], BatchMode::Remove).await, 1);
    assert_eq!(w.carried(kind, f1, &[&a, &b]).await, [b.id]);
    assert_eq!(batch(vec![f1], vec![a.id], BatchMode::Remove).await, 0);
    assert_eq!(batch(vec![f1, f2], vec![a.id], BatchMode::Replace).await, 2);
    assert_eq!(w.carried(kind, f1, &[&a, &b]).await, [a.id]);
    assert_eq!(w.carried(kind, f2, &[&a, &b]).await, [a.id]);
    // Replacing with nothing clears.
    assert_eq!(batch(vec![f1, f2], vec![], BatchMode::Replace).await, 2);
    assert_eq!(w.stored(&a).await.usage, 0);
    assert_eq!(batch(vec![], vec![a.id], BatchMode::Add).await, 0);
}

#[tokio::test]
async fn archived_labels_cannot_be_newly_assigned_but_stay_where_they_are() {
    let w = World::new().await;
    let s = w.labels();
    let old = w.label(&w.member, "Old").await;
    let new = w.label(&w.member, "New").await;
    let kind = EntityKind::Forms;
    let keeps = w.entity(&w.admin, kind);
    let fresh = w.entity(&w.admin, kind);
    s.set_entity_labels(&w.member, PAID, kind, keeps, &[old.id])
        .await
        .unwrap();
    s.archive_label(&w.member, PAID, old.id).await.unwrap();

    let e = refused(
        s.set_entity_labels(&w.member, PAID, kind, fresh, &[new.id, old.id])
            .await,
        ErrorCode::ArchivedLabelNotAssignable,
    );
    assert_eq!(e.status(), 400);
    assert_eq!(uuids(&e), [old.id.to_string()]);
    assert_eq!(w.carried(kind, fresh, &[&old, &new]).await, []);
    for mode in [BatchMode::Add, BatchMode::Replace] {
        refused(
            s.batch_entity_labels(&w.member, PAID, kind, &[keeps, fresh], &[old.id], mode)
                .await,
            ErrorCode::ArchivedLabelNotAssignable,
        );
    }
    assert_eq!(w.carried(kind, fresh, &[&old, &new]).await, []);
    assert_eq!(w.carried(kind, keeps, &[&old, &new]).await, [old.id]);

    // The entity that carries it may keep it while its set changes.
    let names: Vec<String> = s
        .set_entity_labels(&w.member, PAID, kind, keeps, &[old.id, new.id])
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(names, ["New", "Old"]);
    // Taking it off is always allowed.
    assert_eq!(
        s.batch_entity_labels(
            &w.member,
            PAID,
            kind,
            &[keeps, fresh],
            &[old.id],
            BatchMode::Remove
        )
        .await
        .unwrap(),
        1
    );
    assert_eq!(w.carried(kind, keeps, &[&old, &new]).await, [new.id]);
}

#[tokio::test]
async fn calls_are_bounded() {
    let w = World::new().await;
    let s = w.labels();
    let a = w.label(&w.member, "A").await;
    let kind = EntityKind::Forms;
    let entities: Vec<Uuid> = (0..101).map(|_| w.entity(&w.admin, kind)).collect();
    let e = refused(
        s.batch_entity_labels(&w.member, PAID, kind, &entities, &[a.id], BatchMode::Add)
            .await,
        ErrorCode::TooManyItems,
    );
    assert_eq!(e.extra()["limit"], 100);
    // 100 distinct ones are fine, duplicates do not count.
    let mut hundred = entities[..100].to_vec();
    hundred.push(entities[0]);
    assert_eq!(
        s.batch_entity_labels(&w.member, PAID, kind, &hundred, &[a.id], BatchMode::Add)
            .await
            .unwrap(),
        100
    );
    let many: Vec<LabelId> = (0..51).map(|_| LabelId::new()).collect();
    let e = refused(
        s.set_entity_labels(&w.member, PAID, kind, entities[0], &many)
            .await,
        ErrorCode::TooManyItems,
    );
    assert_eq!(e.extra()["limit"], 50);
    refused(
        s.batch_entity_labels(&w.member, PAID, kind, &entities[..1], &many, BatchMode::Add)
            .await,
        ErrorCode::TooManyItems,
    );
    let stars: Vec<Uuid> = entities.clone();
    refused(
        w.stars().set_featured(&w.member, kind, &stars, true).await,
        ErrorCode::TooManyItems,
    );
    assert!(
        w.stars()
            .featured(&w.member, kind)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn stars_are_private_and_need_existing_entities() {
    let w = World::new().await;
    let stars = w.stars();
    let kind = EntityKind::Forms;
    let f1 = w.entity(&w.admin, kind);
    let f2 = w.entity(&w.admin, kind);
    let checkin = w.entity(&w.admin, EntityKind::Checkins);
    // Guests star too, and no plan is needed. The list is oldest star first.
    assert_eq!(
        stars
            .set_featured(&w.guest, kind, &[f2], true)
            .await
            .unwrap(),
        [f2]
    );
    assert_eq!(
        stars
            .set_featured(&w.guest, kind, &[f1, f2, f1], true)
            .await
            .unwrap(),
        [f1]
    );
    assert_eq!(stars.featured(&w.guest, kind).await.unwrap(), [f2, f1]);
    assert!(stars.featured(&w.member, kind).await.unwrap().is_empty());
    assert!(
        stars
            .featured(&w.guest, EntityKind::Checkins)
            .await
            .unwrap()
            .is_empty()
    );
    // Only changes are reported.
    assert_eq!(
        stars
            .set_featured(&w.guest, kind, &[f1], true)
            .await
            .unwrap(),
        Vec::<Uuid>::new()
    );
    assert_eq!(
        stars
            .set_featured(&w.guest, kind, &[f1], false)
            .await
            .unwrap(),
        [f1]
    );
    assert_eq!(stars.featured(&w.guest, kind).await.unwrap(), [f2]);
    // Unknown, foreign or other-kind entities: 404 naming them, nothing changed.
    let foreign = w.entity(&w.outsider, kind);
    let e = refused(
        stars
            .set_featured(&w.guest, kind, &[f1, foreign, checkin], true)
            .await,
        ErrorCode::NotFound,
    );
    let mut expected = vec![foreign.to_string(), checkin.to_string()];
    expected.sort();
    assert_eq!(uuids(&e), expected);
    assert_eq!(stars.featured(&w.guest, kind).await.unwrap(), [f2]);
    refused(
        stars
            .set_featured(&w.guest, EntityKind::Workflows, &[f1], true)
            .await,
        ErrorCode::NotFound,
    );
}

#[tokio::test]
async fn stars_of_entities_that_are_gone_are_not_listed() {
    let w = World::new().await;
    let kind = EntityKind::Checkins;
    let kept = w.entity(&w.member, kind);
    let gone = Uuid::now_v7();
    // A star stored for an entity that no longer exists (deleted by its area).
    w.ports
        .featured
        .set_featured(w.member.org_id, w.member.id, kind, &[gone, kept], true)
        .await
        .unwrap();
    assert_eq!(w.stars().featured(&w.member, kind).await.unwrap(), [kept]);
}
