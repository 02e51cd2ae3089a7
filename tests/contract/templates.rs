//! `TemplateRepository`: the built-in templates and the organization's own.
//!
//! Every template here carries "Ctr" in its name and the listings search for it, so the
//! built-in templates the migration seeds in Postgres stay out of the counts.

use serde_json::json;
use teamcomm_forms::{Template, TemplateFilter, TemplateType};
use teamcomm_kernel::{OrgId, PageRequest};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::ports::{Ports, assert_not_found, micros};

contract!(
    a_template_reads_back_as_stored,
    templates_are_scoped_by_organization,
    templates_list_by_type_then_name_with_counts_and_pages,
    template_filters_match_type_origin_and_name_literally,
);

fn template(org: Option<OrgId>, name: &str, kind: TemplateType, system_default: bool) -> Template {
    Template {
        id: Uuid::now_v7(),
        org_id: org,
        name: name.to_owned(),
        template_type: kind,
        system_default,
        description: format!("About {name}"),
        intro_message: "Hello".to_owned(),
        outro_message: "Thanks".to_owned(),
        questions: vec![json!({"index": 0, "question": "How is it going?", "required": true})],
        created_at: micros(OffsetDateTime::now_utc()),
    }
}

async fn names(
    p: &Ports,
    org: OrgId,
    filter: TemplateFilter,
    offset: u64,
    limit: u64,
) -> (u64, Vec<String>) {
    let page = p
        .templates
        .list_templates(org, &filter, PageRequest { offset, limit })
        .await
        .unwrap();
    (
        page.count,
        page.results.into_iter().map(|t| t.name).collect(),
    )
}

fn marked(filter: TemplateFilter) -> TemplateFilter {
    TemplateFilter {
        search: filter.search.or_else(|| Some("Ctr".to_owned())),
        ..filter
    }
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// Two organizations' templates and one built-in.
async fn seed(p: &Ports) -> (OrgId, OrgId) {
    let org = p.org("Acme").await.id;
    let other = p.org("Other").await.id;
    for t in [
        template(Some(org), "Ctr Zulu", TemplateType::Checkins, false),
        template(Some(org), "Ctr Bravo", TemplateType::Forms, false),
        template(None, "Ctr Mike", TemplateType::Checkins, true),
        template(Some(org), "Ctr Alpha", TemplateType::Checkins, false),
        template(Some(org), "Ctr 100% done", TemplateType::Forms, false),
        template(Some(org), "Ctr snake_case", TemplateType::Forms, false),
        template(Some(other), "Ctr Xray", TemplateType::Checkins, false),
    ] {
        p.insert_template(&t).await;
    }
    (org, other)
}

async fn a_template_reads_back_as_stored(p: Ports) {
    let org = p.org("Acme").await.id;
    let own = template(Some(org), "Ctr Own", TemplateType::Forms, false);
    let built_in = template(None, "Ctr Built-in", TemplateType::Checkins, true);
    p.insert_template(&own).await;
    p.insert_template(&built_in).await;
    assert_eq!(p.templates.get_template(org, own.id).await.unwrap(), own);
    assert_eq!(
        p.templates.get_template(org, built_in.id).await.unwrap(),
        built_in
    );
    assert_not_found(p.templates.get_template(org, Uuid::now_v7()).await);
}

async fn templates_are_scoped_by_organization(p: Ports) {
    let (org, other) = seed(&p).await;
    let theirs = p
        .templates
        .list_templates(
            other,
            &marked(TemplateFilter::default()),
            PageRequest::default(),
        )
        .await
        .unwrap();
    let names: Vec<&str> = theirs.results.iter().map(|t| t.name.as_str()).collect();
    assert_eq!((theirs.count, names), (2, vec!["Ctr Mike", "Ctr Xray"]));
    let xray = theirs.results[1].id;
    assert_not_found(p.templates.get_template(org, xray).await);
    assert_eq!(
        p.templates.get_template(other, xray).await.unwrap().name,
        "Ctr Xray"
    );
}

async fn templates_list_by_type_then_name_with_counts_and_pages(p: Ports) {
    let (org, _) = seed(&p).await;
    let all = [
        "Ctr Alpha",
        "Ctr Mike",
        "Ctr Zulu",
        "Ctr 100% done",
        "Ctr Bravo",
        "Ctr snake_case",
    ];
    let filter = marked(TemplateFilter::default());
    assert_eq!(
        names(&p, org, filter.clone(), 0, 25).await,
        (6, owned(&all))
    );
    assert_eq!(
        names(&p, org, filter.clone(), 2, 2).await,
        (6, owned(&all[2..4]))
    );
    assert_eq!(names(&p, org, filter.clone(), 6, 2).await, (6, vec![]));
    assert_eq!(names(&p, org, filter, 0, u64::MAX).await, (6, owned(&all)));
}

async fn template_filters_match_type_origin_and_name_literally(p: Ports) {
    let (org, _) = seed(&p).await;
    let by_type = |t| {
        marked(TemplateFilter {
            template_type: Some(t),
            ..TemplateFilter::default()
        })
    };
    assert_eq!(
        names(&p, org, by_type(TemplateType::Forms), 0, 25).await,
        (3, owned(&["Ctr 100% done", "Ctr Bravo", "Ctr snake_case"]))
    );
    assert_eq!(
        names(&p, org, by_type(TemplateType::Checkins), 1, 1).await,
        (3, owned(&["Ctr Mike"]))
    );
    let origin = |d| {
        marked(TemplateFilter {
            system_default: Some(d),
            ..TemplateFilter::default()
        })
    };
    assert_eq!(
        names(&p, org, origin(true), 0, 25).await,
        (1, owned(&["Ctr Mike"]))
    );
    assert_eq!(names(&p, org, origin(false), 0, 25).await.0, 5);
    let search = |s: &str| TemplateFilter {
        search: Some(s.to_owned()),
        ..TemplateFilter::default()
    };
    assert_eq!(
        names(&p, org, search("ctr ALPHA"), 0, 25).await,
        (1, owned(&["Ctr Alpha"]))
    );
    assert_eq!(
        names(&p, org, search("%"), 0, 25).await,
        (1, owned(&["Ctr 100% done"]))
    );
    assert_eq!(
        names(&p, org, search("_"), 0, 25).await,
        (1, owned(&["Ctr snake_case"]))
    );
    assert_eq!(names(&p, org, search("Ctr Xray"), 0, 25).await, (0, vec![]));
}
