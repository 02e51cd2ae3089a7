//! `WorkflowRepository`: a workflow reads back as written, per organization; updates write the
//! editable fields; lists go by name, filter on search and creation days, and page; a queued
//! run is recorded with its job and counted on the workflow, all in one write; runs list newest
//! first; deletes stay in the organization and take the runs along; a run is read with its
//! workflow, started once, advanced, and finished with its `workflow.finished` event.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::jobs::{JobKind, JobRecord, NewJob};
use teamcomm_kernel::{Event, EventType, OrgId, PageRequest, UserId};
use teamcomm_store_pg::{Database, PgJobQueue, PgWorkflowRepository};
use teamcomm_workflows::runner::finished_event;
use teamcomm_workflows::testing::InMemoryWorkflowRepository;
use teamcomm_workflows::{
    Action, RunEnd, RunStatus, Trigger, Workflow, WorkflowId, WorkflowRepository, WorkflowRun,
    WorkflowSelection,
};
use time::macros::{date, datetime};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::ports::{Ports, assert_not_found};

contract!(
    a_workflow_reads_back_as_written_per_organization,
    an_update_writes_the_editable_fields,
    lists_go_by_name_filter_and_page,
    a_queued_run_is_recorded_with_its_job_and_counted,
    deletes_stay_in_the_organization_and_take_the_runs,
    a_run_starts_once_advances_and_finishes_with_its_event,
);

/// The workflow repository and the queue its runs' jobs go to.
pub struct WorkflowPorts {
    pub repo: Arc<dyn WorkflowRepository>,
    side: Side,
}

enum Side {
    Memory(InMemoryJobQueue, Arc<InMemoryWorkflowRepository>),
    Postgres(PgJobQueue),
}

impl WorkflowPorts {
    pub fn in_memory() -> Self {
        let queue = InMemoryJobQueue::default();
        let repo = Arc::new(InMemoryWorkflowRepository::with_queue(queue.clone()));
        WorkflowPorts {
            repo: repo.clone(),
            side: Side::Memory(queue, repo),
        }
    }

    pub fn postgres(db: Database) -> Self {
        WorkflowPorts {
            repo: Arc::new(PgWorkflowRepository::new(db.clone())),
            side: Side::Postgres(PgJobQueue::new(db)),
        }
    }

    async fn job(&self, id: Uuid) -> Option<JobRecord> {
        match &self.side {
            Side::Memory(queue, _) => queue.job(id),
            Side::Postgres(queue) => queue.job(id).await.expect("read the job"),
        }
    }
}

const T0: OffsetDateTime = datetime!(2026-11-26 04:00 UTC);

fn workflow(org: OrgId, name: &str, by: UserId, at: OffsetDateTime) -> Workflow {
    Workflow {
        id: WorkflowId::new(),
        org_id: org,
        name: name.into(),
        description: format!("{name} runs"),
        trigger: Trigger::ApiTrigger,
        actions: vec![
            Action::SendMessage {
                user_uuids: vec![by.0],
                team_uuids: vec![],
                channel_ids: vec!["C1".into()],
                text: "Hi {{payload.who}}".into(),
            },
            Action::SendEmail {
                to: vec!["ops@acme.test".into()],
                subject: "Ran".into(),
                body: "Done".into(),
            },
            Action::CallWebhook {
                url: "https://hooks.example.com/in".into(),
                body: Some(json!({"n": "{{payload.n}}"})),
            },
        ],
        active: true,
        frozen: false,
        created_by: Some(by),
        created_at: at,
        updated_at: at,
        total_runs: 0,
        last_run_at: None,
    }
}

fn run(w: &Workflow, by: UserId, at: OffsetDateTime) -> (WorkflowRun, NewJob) {
    let run = WorkflowRun {
        id: Uuid::now_v7(),
        workflow_id: w.id,
        status: RunStatus::Queued,
        payload: json!({"who": "Ada", "n": 1}),
        triggered_by: Some(by),
        queued_at: at,
        started_at: None,
        finished_at: None,
        error: None,
        actions_completed: 0,
    };
    let job = NewJob {
        id: Uuid::now_v7(),
        org_id: w.org_id,
        kind: JobKind::WorkflowRun,
        payload: json!({"run_id": run.id}),
        run_at: at,
        max_attempts: 3,
    };
    (run, job)
}

async fn a_workflow_reads_back_as_written_per_organization(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let w = workflow(acme.id, "Deploy", ada.id, T0);
    let created = p.workflows.repo.create_workflow(acme.id, &w).await.unwrap();
    assert_eq!(created, w);
    assert_eq!(
        p.workflows.repo.get_workflow(acme.id, w.id).await.unwrap(),
        w
    );
    let event = Workflow {
        trigger: Trigger::Event(EventType::KudosPosted),
        frozen: true,
        active: false,
        created_by: None,
        ..workflow(acme.id, "On kudos", ada.id, T0)
    };
    p.workflows
        .repo
        .create_workflow(acme.id, &event)
        .await
        .unwrap();
    assert_eq!(
        p.workflows
            .repo
            .get_workflow(acme.id, event.id)
            .await
            .unwrap(),
        event
    );
    assert_not_found(p.workflows.repo.get_workflow(globex.id, w.id).await);
    assert_not_found(
        p.workflows
            .repo
            .get_workflow(acme.id, WorkflowId::new())
            .await,
    );
}

async fn an_update_writes_the_editable_fields(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let w = workflow(acme.id, "Deploy", ada.id, T0);
    p.workflows.repo.create_workflow(acme.id, &w).await.unwrap();
    let changed = Workflow {
        name: "Release".into(),
        description: "".into(),
        trigger: Trigger::Event(EventType::FormsResponseCreated),
        actions: vec![Action::CallWebhook {
            url: "https://hooks.example.com/other".into(),
            body: None,
        }],
        active: false,
        updated_at: T0 + Duration::minutes(5),
        ..w.clone()
    };
    let updated = p
        .workflows
        .repo
        .update_workflow(acme.id, &changed)
        .await
        .unwrap();
    assert_eq!(updated, changed);
    assert_eq!(
        p.workflows.repo.get_workflow(acme.id, w.id).await.unwrap(),
        changed
    );
    assert_not_found(p.workflows.repo.update_workflow(globex.id, &w).await);
    assert_eq!(
        p.workflows
            .repo
            .get_workflow(acme.id, w.id)
            .await
            .unwrap()
            .name,
        "Release",
        "another organization's update changed nothing"
    );
}

async fn lists_go_by_name_filter_and_page(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let olga = p.user(&globex, "olga@globex.test", "Olga", "K").await;
    let day = Duration::days(1);
    for (name, at) in [
        ("Charlie", T0),
        ("alpha", T0 + day),
        ("Bravo_1%", T0 + day * 2),
    ] {
        let w = workflow(acme.id, name, ada.id, at);
        p.workflows.repo.create_workflow(acme.id, &w).await.unwrap();
    }
    let elsewhere = workflow(globex.id, "Alpha elsewhere", olga.id, T0);
    p.workflows
        .repo
        .create_workflow(globex.id, &elsewhere)
        .await
        .unwrap();
    let list = |s: WorkflowSelection, page: PageRequest| {
        let repo = p.workflows.repo.clone();
        async move {
            let page = repo.list_workflows(acme.id, &s, page).await.unwrap();
            let names: Vec<String> = page.results.into_iter().map(|w| w.name).collect();
            (page.count, names)
        }
    };
    let all = WorkflowSelection::default();
    // By name, whatever the case.
    let (count, names) = list(all.clone(), PageRequest::all()).await;
    assert_eq!(count, 3);
    assert_eq!(names, ["alpha", "Bravo_1%", "Charlie"]);
    let search = |q: &str| WorkflowSelection {
        search: Some(q.into()),
        ..WorkflowSelection::default()
    };
    assert_eq!(list(search("ALPHA"), PageRequest::all()).await.1, ["alpha"]);
    // LIKE wildcards in the text are plain characters; the description is searched too.
    assert_eq!(
        list(search("_1%"), PageRequest::all()).await.1,
        ["Bravo_1%"]
    );
    assert_eq!(list(search("o_"), PageRequest::all()).await.0, 1);
    assert_eq!(
        list(search("charlie runs"), PageRequest::all()).await.1,
        ["Charlie"]
    );
    let days = WorkflowSelection {
        created_from: Some(date!(2026 - 11 - 27)),
        created_until: Some(date!(2026 - 11 - 27)),
        ..WorkflowSelection::default()
    };
    assert_eq!(list(days, PageRequest::all()).await.1, ["alpha"]);
    let from = WorkflowSelection {
        created_from: Some(date!(2026 - 11 - 27)),
        ..WorkflowSelection::default()
    };
    assert_eq!(list(from, PageRequest::all()).await.0, 2);
    let (count, page) = list(
        all,
        PageRequest {
            limit: 1,
            offset: 1,
        },
    )
    .await;
    assert_eq!(count, 3);
    assert_eq!(page, ["Bravo_1%"]);
}

async fn a_queued_run_is_recorded_with_its_job_and_counted(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let w = workflow(acme.id, "Deploy", ada.id, T0);
    p.workflows.repo.create_workflow(acme.id, &w).await.unwrap();
    let (first, first_job) = run(&w, ada.id, T0 + Duration::minutes(1));
    let (second, second_job) = run(&w, ada.id, T0 + Duration::minutes(2));
    p.workflows
        .repo
        .queue_run(acme.id, &first, &first_job)
        .await
        .unwrap();
    p.workflows
        .repo
        .queue_run(acme.id, &second, &second_job)
        .await
        .unwrap();
    let job = p.workflows.job(first_job.id).await.expect("the run's job");
    assert_eq!(job.kind, JobKind::WorkflowRun);
    assert_eq!(job.org_id, acme.id);
    assert_eq!(job.payload, json!({"run_id": first.id}));
    let read = p.workflows.repo.get_workflow(acme.id, w.id).await.unwrap();
    assert_eq!(read.total_runs, 2);
    assert_eq!(read.last_run_at, Some(second.queued_at));
    let runs = p
        .workflows
        .repo
        .list_runs(acme.id, w.id, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(runs.count, 2);
    assert_eq!(runs.results, [second.clone(), first.clone()]);
    let page = p
        .workflows
        .repo
        .list_runs(
            acme.id,
            w.id,
            PageRequest {
                limit: 1,
                offset: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((page.count, page.results), (2, vec![first]));

    // Another organization cannot queue or read runs of the workflow, and nothing is written.
    let (stray, stray_job) = run(&w, ada.id, T0 + Duration::minutes(3));
    assert_not_found(
        p.workflows
            .repo
            .queue_run(globex.id, &stray, &stray_job)
            .await,
    );
    assert!(p.workflows.job(stray_job.id).await.is_none());
    assert_not_found(
        p.workflows
            .repo
            .list_runs(globex.id, w.id, PageRequest::all())
            .await,
    );
    assert_eq!(
        p.workflows
            .repo
            .get_workflow(acme.id, w.id)
            .await
            .unwrap()
            .total_runs,
        2
    );
}

async fn deletes_stay_in_the_organization_and_take_the_runs(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let w = workflow(acme.id, "Deploy", ada.id, T0);
    p.workflows.repo.create_workflow(acme.id, &w).await.unwrap();
    let (r, j) = run(&w, ada.id, T0);
    p.workflows.repo.queue_run(acme.id, &r, &j).await.unwrap();
    assert_not_found(p.workflows.repo.delete_workflow(globex.id, w.id).await);
    p.workflows.repo.get_workflow(acme.id, w.id).await.unwrap();
    p.workflows
        .repo
        .delete_workflow(acme.id, w.id)
        .await
        .unwrap();
    assert_not_found(p.workflows.repo.get_workflow(acme.id, w.id).await);
    assert_not_found(
        p.workflows
            .repo
            .list_runs(acme.id, w.id, PageRequest::all())
            .await,
    );
    assert_not_found(p.workflows.repo.delete_workflow(acme.id, w.id).await);
    // The same run id can be written again: the old row went with its workflow.
    let again = workflow(acme.id, "Deploy", ada.id, T0);
    p.workflows
        .repo
        .create_workflow(acme.id, &again)
        .await
        .unwrap();
    let (r2, j2) = run(&again, ada.id, T0);
    let r2 = WorkflowRun { id: r.id, ..r2 };
    p.workflows.repo.queue_run(acme.id, &r2, &j2).await.unwrap();
}

async fn a_run_starts_once_advances_and_finishes_with_its_event(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let ada = p.user(&acme, "ada@acme.test", "Ada", "L").await;
    let w = workflow(acme.id, "Deploy", ada.id, T0);
    p.workflows.repo.create_workflow(acme.id, &w).await.unwrap();
    let (queued, job) = run(&w, ada.id, T0 + Duration::minutes(1));
    let repo = &p.workflows.repo;
    repo.queue_run(acme.id, &queued, &job).await.unwrap();

    let (read_w, read_run) = repo.run_work(acme.id, queued.id).await.unwrap();
    assert_eq!(read_w.id, w.id);
    assert_eq!(read_w.actions, w.actions);
    assert_eq!(read_w.total_runs, 1);
    assert_eq!(read_run, queued);
    assert_not_found(repo.run_work(globex.id, queued.id).await);
    assert_not_found(repo.start_run(globex.id, queued.id, T0).await);
    assert_not_found(repo.record_progress(globex.id, queued.id, 1).await);

    let started = T0 + Duration::minutes(2);
    repo.start_run(acme.id, queued.id, started).await.unwrap();
    // A retried run starts again: the first start is kept.
    repo.start_run(acme.id, queued.id, started + Duration::minutes(1))
        .await
        .unwrap();
    repo.record_progress(acme.id, queued.id, 2).await.unwrap();
    let (_, running) = repo.run_work(acme.id, queued.id).await.unwrap();
    assert_eq!(running.status, RunStatus::Running);
    assert_eq!(running.started_at, Some(started));
    assert_eq!(running.actions_completed, 2);

    let end_at = T0 + Duration::minutes(4);
    let mut ended = WorkflowRun {
        status: RunStatus::Failed,
        finished_at: Some(end_at),
        error: Some("action 3 (call_webhook): HTTP 500".into()),
        ..running
    };
    let end = RunEnd {
        status: ended.status,
        finished_at: end_at,
        error: ended.error.clone(),
        actions_completed: 2,
    };
    let event = finished_event(&w, &ended, end_at);
    let stray = Event {
        id: Uuid::now_v7(),
        ..event.clone()
    };
    assert_not_found(repo.finish_run(globex.id, queued.id, &end, &stray).await);
    repo.finish_run(acme.id, queued.id, &end, &event)
        .await
        .unwrap();
    ended.actions_completed = 2;
    let runs = repo
        .list_runs(acme.id, w.id, PageRequest::all())
        .await
        .unwrap();
    assert_eq!(runs.results, [ended]);

    // The event is written with the end, and nothing for the refused write.
    let events: Vec<serde_json::Value> = match &p.workflows.side {
        Side::Memory(_, memory) => memory.events().iter().map(Event::payload).collect(),
        Side::Postgres(_) => p.recorded_events().await,
    };
    let finished: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "workflow.finished")
        .collect();
    assert_eq!(finished.len(), 1, "{events:#?}");
    assert_eq!(finished[0]["event_id"], event.id.to_string());
    assert_eq!(finished[0]["object_uuid"], w.id.0.to_string());
    assert_eq!(finished[0]["data"]["run"]["status"], "failed");
    assert_eq!(finished[0]["data"]["run"]["actions_completed"], 2);
}
