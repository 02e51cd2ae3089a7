//! In-memory [`WorkflowRepository`], keeping what the Postgres adapter keeps; a run's job goes
//! to an [`InMemoryJobQueue`] (shared with other in-memory ports when given one).

use std::collections::HashSet;
use std::sync::Mutex;

use async_trait::async_trait;
use teamcomm_kernel::events::testing::RecordedEvents;
use teamcomm_kernel::jobs::NewJob;
use teamcomm_kernel::jobs::testing::InMemoryJobQueue;
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    RunEnd, RunStatus, Workflow, WorkflowId, WorkflowRepository, WorkflowRun, WorkflowSelection,
};

#[derive(Default)]
struct State {
    workflows: Vec<Workflow>,
    runs: Vec<(OrgId, WorkflowRun)>,
    jobs: Vec<NewJob>,
    labels: HashSet<(WorkflowId, Uuid)>,
    stars: HashSet<(UserId, WorkflowId)>,
}

#[derive(Default)]
pub struct InMemoryWorkflowRepository {
    state: Mutex<State>,
    queue: InMemoryJobQueue,
    events: RecordedEvents,
}

impl InMemoryWorkflowRepository {
    /// With a queue of its own.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs' jobs go to `queue`.
    pub fn with_queue(queue: InMemoryJobQueue) -> Self {
        InMemoryWorkflowRepository {
            state: Mutex::default(),
            queue,
            events: RecordedEvents::default(),
        }
    }

    /// The events its writes recorded (`workflow.finished`), as the outbox would hold them.
    pub fn events(&self) -> Vec<Event> {
        self.events.all()
    }

    /// A run as stored.
    pub fn run(&self, id: Uuid) -> Option<WorkflowRun> {
        let s = self.state.lock().unwrap();
        s.runs
            .iter()
            .find(|(_, r)| r.id == id)
            .map(|(_, r)| r.clone())
    }

    /// Queues a run of each workflow an event starts ([`Workflow::runs_on`]), as the outbox
    /// relay does; answers the runs.
    pub fn relay_event(&self, event: &Event, max_attempts: u32) -> Vec<WorkflowRun> {
        let mut s = self.state.lock().unwrap();
        let started: Vec<Workflow> = s
            .workflows
            .iter()
            .filter(|w| w.org_id == event.org_id && w.runs_on(event.event_type))
            .cloned()
            .collect();
        let mut runs = Vec::new();
        for w in started {
            let run = WorkflowRun {
                id: Uuid::now_v7(),
                workflow_id: w.id,
                status: RunStatus::Queued,
                payload: event.payload(),
                triggered_by: None,
                queued_at: event.occurred_at,
                started_at: None,
                finished_at: None,
                error: None,
                actions_completed: 0,
            };
            let job = NewJob {
                id: Uuid::now_v7(),
                org_id: event.org_id,
                kind: teamcomm_kernel::jobs::JobKind::WorkflowRun,
                payload: serde_json::json!({ "run_id": run.id }),
                run_at: event.occurred_at,
                max_attempts,
            };
            self.queue
                .enqueue(std::slice::from_ref(&job))
                .expect("enqueue");
            s.runs.push((event.org_id, run.clone()));
            s.jobs.push(job);
            runs.push(run);
        }
        runs
    }

    fn with_run<T>(
        &self,
        org: OrgId,
        run: Uuid,
        f: impl FnOnce(&mut WorkflowRun) -> T,
    ) -> Result<T, RepoError> {
        let mut s = self.state.lock().unwrap();
        s.runs
            .iter_mut()
            .find(|(o, r)| *o == org && r.id == run)
            .map(|(_, r)| f(r))
            .ok_or(RepoError::NotFound)
    }

    /// Stores a workflow as is (a frozen one, say).
    pub fn insert(&self, workflow: Workflow) {
        self.state.lock().unwrap().workflows.push(workflow);
    }

    /// Replaces a stored workflow as is (its actions, say), bypassing the service's checks.
    pub fn replace(&self, workflow: Workflow) {
        let mut s = self.state.lock().unwrap();
        if let Some(w) = s.workflows.iter_mut().find(|w| w.id == workflow.id) {
            *w = workflow;
        }
    }

    /// The workflow carries the label (as the labels area would record it).
    pub fn label(&self, workflow: WorkflowId, label: Uuid) {
        self.state.lock().unwrap().labels.insert((workflow, label));
    }

    /// The person starred the workflow (as the featured doors would record it).
    pub fn star(&self, user: UserId, workflow: WorkflowId) {
        self.state.lock().unwrap().stars.insert((user, workflow));
    }

    /// Every job enqueued, in order.
    pub fn jobs(&self) -> Vec<NewJob> {
        self.state.lock().unwrap().jobs.clone()
    }

    fn counted(state: &State, mut w: Workflow) -> Workflow {
        let runs: Vec<&WorkflowRun> = state
            .runs
            .iter()
            .filter(|(o, r)| *o == w.org_id && r.workflow_id == w.id)
            .map(|(_, r)| r)
            .collect();
        w.total_runs = runs.len() as u64;
        w.last_run_at = runs.iter().map(|r| r.queued_at).max();
        w
    }
}

fn contains(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

#[async_trait]
impl WorkflowRepository for InMemoryWorkflowRepository {
    async fn create_workflow(
        &self,
        org: OrgId,
        workflow: &Workflow,
    ) -> Result<Workflow, RepoError> {
        let mut s = self.state.lock().unwrap();
        if s.workflows.iter().any(|w| w.id == workflow.id) {
            return Err(RepoError::Conflict {
                constraint: "workflows_pkey".into(),
            });
        }
        let stored = Workflow {
            org_id: org,
            total_runs: 0,
            last_run_at: None,
            ..workflow.clone()
        };
        s.workflows.push(stored.clone());
        Ok(stored)
    }

    async fn get_workflow(&self, org: OrgId, id: WorkflowId) -> Result<Workflow, RepoError> {
        let s = self.state.lock().unwrap();
        let w = s
            .workflows
            .iter()
            .find(|w| w.org_id == org && w.id == id)
            .cloned()
            .ok_or(RepoError::NotFound)?;
        Ok(Self::counted(&s, w))
    }

    async fn update_workflow(
        &self,
        org: OrgId,
        workflow: &Workflow,
    ) -> Result<Workflow, RepoError> {
        let mut s = self.state.lock().unwrap();
        let stored = s
            .workflows
            .iter_mut()
            .find(|w| w.org_id == org && w.id == workflow.id)
            .ok_or(RepoError::NotFound)?;
        stored.name = workflow.name.clone();
        stored.description = workflow.description.clone();
        stored.trigger = workflow.trigger;
        stored.actions = workflow.actions.clone();
        stored.active = workflow.active;
        stored.updated_at = workflow.updated_at;
        let w = stored.clone();
        Ok(Self::counted(&s, w))
    }

    async fn delete_workflow(&self, org: OrgId, id: WorkflowId) -> Result<(), RepoError> {
        let mut s = self.state.lock().unwrap();
        let before = s.workflows.len();
        s.workflows.retain(|w| !(w.org_id == org && w.id == id));
        if s.workflows.len() == before {
            return Err(RepoError::NotFound);
        }
        s.runs.retain(|(_, r)| r.workflow_id != id);
        s.labels.retain(|(w, _)| *w != id);
        s.stars.retain(|(_, w)| *w != id);
        Ok(())
    }

    async fn list_workflows(
        &self,
        org: OrgId,
        selection: &WorkflowSelection,
        page: PageRequest,
    ) -> Result<Page<Workflow>, RepoError> {
        let s = self.state.lock().unwrap();
        let mut all: Vec<Workflow> = s
            .workflows
            .iter()
            .filter(|w| w.org_id == org)
            .filter(|w| {
                selection
                    .search
                    .as_deref()
                    .is_none_or(|q| contains(&w.name, q) || contains(&w.description, q))
            })
            .filter(|w| {
                selection
                    .created_from
                    .is_none_or(|d| w.created_at.to_offset(time::UtcOffset::UTC).date() >= d)
            })
            .filter(|w| {
                selection
                    .created_until
                    .is_none_or(|d| w.created_at.to_offset(time::UtcOffset::UTC).date() <= d)
            })
            .filter(|w| {
                selection.labels.is_empty()
                    || selection
                        .labels
                        .iter()
                        .any(|l| s.labels.contains(&(w.id, *l)))
            })
            .filter(|w| {
                selection
                    .featured_by
                    .is_none_or(|u| s.stars.contains(&(u, w.id)))
            })
            .cloned()
            .map(|w| Self::counted(&s, w))
            .collect();
        all.sort_by(|a, b| {
            a.name
                .to_lowercase()
                .cmp(&b.name.to_lowercase())
                .then(a.id.cmp(&b.id))
        });
        let count = all.len() as u64;
        let results = all
            .into_iter()
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .collect();
        Ok(Page { count, results })
    }

    async fn queue_run(
        &self,
        org: OrgId,
        run: &WorkflowRun,
        job: &NewJob,
    ) -> Result<(), RepoError> {
        let mut s = self.state.lock().unwrap();
        if !s
            .workflows
            .iter()
            .any(|w| w.org_id == org && w.id == run.workflow_id)
        {
            return Err(RepoError::NotFound);
        }
        // The job first: when it is refused, no run is recorded either.
        self.queue.enqueue(std::slice::from_ref(job))?;
        s.runs.push((org, run.clone()));
        s.jobs.push(job.clone());
        Ok(())
    }

    async fn list_runs(
        &self,
        org: OrgId,
        workflow: WorkflowId,
        page: PageRequest,
    ) -> Result<Page<WorkflowRun>, RepoError> {
        let s = self.state.lock().unwrap();
        if !s
            .workflows
            .iter()
            .any(|w| w.org_id == org && w.id == workflow)
        {
            return Err(RepoError::NotFound);
        }
        let mut all: Vec<WorkflowRun> = s
            .runs
            .iter()
            .filter(|(o, r)| *o == org && r.workflow_id == workflow)
            .map(|(_, r)| r.clone())
            .collect();
        all.sort_by(|a, b| b.queued_at.cmp(&a.queued_at).then(b.id.cmp(&a.id)));
        let count = all.len() as u64;
        let results = all
            .into_iter()
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .collect();
        Ok(Page { count, results })
    }

    async fn run_work(&self, org: OrgId, run: Uuid) -> Result<(Workflow, WorkflowRun), RepoError> {
        let s = self.state.lock().unwrap();
        let (_, r) = s
            .runs
            .iter()
            .find(|(o, r)| *o == org && r.id == run)
            .ok_or(RepoError::NotFound)?;
        let w = s
            .workflows
            .iter()
            .find(|w| w.org_id == org && w.id == r.workflow_id)
            .cloned()
            .ok_or(RepoError::NotFound)?;
        Ok((Self::counted(&s, w), r.clone()))
    }

    async fn start_run(&self, org: OrgId, run: Uuid, at: OffsetDateTime) -> Result<(), RepoError> {
        self.with_run(org, run, |r| {
            r.status = RunStatus::Running;
            r.started_at.get_or_insert(at);
        })
    }

    async fn record_progress(
        &self,
        org: OrgId,
        run: Uuid,
        completed: u32,
    ) -> Result<(), RepoError> {
        self.with_run(org, run, |r| r.actions_completed = completed)
    }

    async fn finish_run(
        &self,
        org: OrgId,
        run: Uuid,
        end: &RunEnd,
        event: &Event,
    ) -> Result<(), RepoError> {
        self.with_run(org, run, |r| {
            r.status = end.status;
            r.finished_at = Some(end.finished_at);
            r.error = end.error.clone();
            r.actions_completed = end.actions_completed;
        })?;
        self.events.record([event.clone()]);
        Ok(())
    }
}
