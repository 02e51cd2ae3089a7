//! A read-through cache of check-ins (`get_checkin`) and of response pages
//! (`list_responses`): every response read or write starts by reading its check-in, which
//! changes rarely, and a check-in's history is read far more often than it is written. Both are
//! served from memory for at most `TEAMCOMM_CHECKIN_CACHE_TTL_SECS`.
//!
//! What keeps it honest:
//! - a check-in write through this decorator starts a new generation of the organization's
//!   check-ins, and a response write (or a refused one: someone else wrote) a new generation
//!   of its response pages, so this instance never reads anything older than its own writes;
//! - writes never trust it: a check-in update names the revision it read and a response is
//!   written only while its check-in is at the revision its rules were checked against. A
//!   refusal for a changed check-in (`checkins_revision`) also starts a new generation, so the
//!   service's retry reads the check-in afresh;
//! - a change made elsewhere (another instance, a team's membership, a person's name) shows in
//!   reads within the time-to-live.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use teamcomm_forms::checkins::{
    AuthoredResponse, Checkin, CheckinDirectory, CheckinRepository, CheckinResponse,
    CheckinSelection, DayResponse, ManagedScope, ResponseSelection,
};
use teamcomm_kernel::{Event, OrgId, Page, PageRequest, RepoError, UserId};
use teamcomm_org::User;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::generations::Generations;

type PageKey = (OrgId, u64, ResponseSelection, PageRequest);

/// A `CheckinRepository` that answers `get_checkin` and `list_responses` from memory and passes
/// every other call through.
pub struct CheckinCache {
    inner: Arc<dyn CheckinRepository>,
    /// `None` when the time-to-live is zero: everything is read from `inner`.
    checkins: Option<Cache<(OrgId, u64, Uuid), Arc<Checkin>>>,
    generations: Generations,
    pages: Option<Cache<PageKey, Arc<Page<AuthoredResponse>>>>,
    page_generations: Generations,
}

impl CheckinCache {
    pub fn new(inner: Arc<dyn CheckinRepository>, ttl: Duration) -> Self {
        let checkins = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build()
        });
        let pages = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build()
        });
        CheckinCache {
            inner,
            checkins,
            generations: Generations::default(),
            pages,
            page_generations: Generations::default(),
        }
    }

    /// Makes every cached response page of `org` unreachable, after a write that went through,
    /// or one refused because the rows changed under it.
    fn responses_changed<T>(&self, org: OrgId, result: &Result<T, RepoError>) {
        if matches!(result, Ok(_) | Err(RepoError::Conflict { .. })) {
            self.page_generations.bump(org);
        }
    }

    /// Makes every cached check-in of `org` unreachable (they expire on their own).
    fn forget(&self, org: OrgId) {
        self.generations.bump(org);
    }

    /// Passes `result` on; a refusal because the check-in changed forgets the organization's.
    fn seen<T>(&self, org: OrgId, result: Result<T, RepoError>) -> Result<T, RepoError> {
        if matches!(&result, Err(RepoError::Conflict { constraint }) if constraint == "checkins_revision")
        {
            self.forget(org);
        }
        result
    }
}

#[async_trait]
impl CheckinRepository for CheckinCache {
    async fn insert_checkin(&self, checkin: &Checkin) -> Result<(), RepoError> {
        self.inner.insert_checkin(checkin).await
    }

    async fn get_checkin(&self, org: OrgId, id: Uuid) -> Result<Checkin, RepoError> {
        let Some(checkins) = &self.checkins else {
            return self.inner.get_checkin(org, id).await;
        };
        // Only found check-ins are kept: a missing one is asked again next time.
        checkins
            .try_get_with((org, self.generations.current(org), id), async {
                self.inner.get_checkin(org, id).await.map(Arc::new)
            })
            .await
            .map(|c| (*c).clone())
            .map_err(|e: Arc<RepoError>| (*e).clone())
    }

    async fn update_checkin(
        &self,
        checkin: &Checkin,
        expected_revision: i64,
    ) -> Result<(), RepoError> {
        let result = self.inner.update_checkin(checkin, expected_revision).await;
        // Written or refused as stale: either way what this instance holds is out of date.
        if matches!(&result, Ok(()) | Err(RepoError::Conflict { .. })) {
            self.forget(checkin.org_id);
        }
        result
    }

    async fn list_checkins(
        &self,
        org: OrgId,
        selection: &CheckinSelection,
        page: PageRequest,
    ) -> Result<Page<Checkin>, RepoError> {
        self.inner.list_checkins(org, selection, page).await
    }

    async fn directory(&self, checkin: &Checkin) -> Result<CheckinDirectory, RepoError> {
        self.inner.directory(checkin).await
    }

    async fn is_participant(&self, org: OrgId, id: Uuid, user: UserId) -> Result<bool, RepoError> {
        self.inner.is_participant(org, id, user).await
    }

    async fn participants(
        &self,
        org: OrgId,
        checkins: &[Uuid],
    ) -> Result<Vec<(Uuid, User)>, RepoError> {
        self.inner.participants(org, checkins).await
    }

    async fn managed_scope(&self, org: OrgId, user: UserId) -> Result<ManagedScope, RepoError> {
        self.inner.managed_scope(org, user).await
    }

    async fn insert_response(
        &self,
        response: &CheckinResponse,
        expected_revision: i64,
        events: &[Event],
    ) -> Result<(), RepoError> {
        let result = self
            .inner
            .insert_response(response, expected_revision, events)
            .await;
        self.responses_changed(response.org_id, &result);
        self.seen(response.org_id, result)
    }

    async fn update_response(
        &self,
        response: &CheckinResponse,
        expected_updated_at: OffsetDateTime,
        events: &[Event],
    ) -> Result<(), RepoError> {
        let result = self
            .inner
            .update_response(response, expected_updated_at, events)
            .await;
        self.responses_changed(response.org_id, &result);
        result
    }

    async fn responses_between(
        &self,
        org: OrgId,
        checkin: Uuid,
        user: UserId,
        from: Date,
        until: Date,
    ) -> Result<Vec<CheckinResponse>, RepoError> {
        self.inner
            .responses_between(org, checkin, user, from, until)
            .await
    }

    async fn delete_responses(
        &self,
        org: OrgId,
        ids: &[Uuid],
        events: &[Event],
    ) -> Result<(), RepoError> {
        let result = self.inner.delete_responses(org, ids, events).await;
        self.responses_changed(org, &result);
        result
    }

    async fn list_responses(
        &self,
        org: OrgId,
        selection: &ResponseSelection,
        page: PageRequest,
    ) -> Result<Page<AuthoredResponse>, RepoError> {
        let Some(pages) = &self.pages else {
            return self.inner.list_responses(org, selection, page).await;
        };
        let key = (
            org,
            self.page_generations.current(org),
            selection.clone(),
            page,
        );
        pages
            .try_get_with(key, async {
                self.inner
                    .list_responses(org, selection, page)
                    .await
                    .map(Arc::new)
            })
            .await
            .map(|p| (*p).clone())
            .map_err(|e: Arc<RepoError>| (*e).clone())
    }

    async fn day_responses(
        &self,
        org: OrgId,
        checkins: &[Uuid],
        days: &[Date],
    ) -> Result<Vec<DayResponse>, RepoError> {
        self.inner.day_responses(org, checkins, days).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;
    use teamcomm_forms::checkins::testing::InMemoryCheckinRepository;
    use teamcomm_forms::checkins::{
        AnswerInput, Checkin, CheckinInput, CheckinRepository, CheckinResponse, CheckinService,
        NewCheckin, ParticipantsInput, ResponseInput, ResponseScope, ResponseSelection,
        ScheduleInput,
    };
    use teamcomm_forms::questions::NewQuestion;
    use teamcomm_forms::testing::InMemoryTemplateRepository;
    use teamcomm_kernel::{ErrorCode, PageRequest};
    use teamcomm_messaging::testing::InMemoryChannelRepository;
    use teamcomm_org::testing::{FixedClock, InMemoryOrgPorts};
    use teamcomm_org::{NewOrganization, NewUser, OrgRepository, User};
    use time::macros::{date, datetime};

    use super::CheckinCache;

    const LONG: Duration = Duration::from_secs(3600);

    struct Fixture {
        store: Arc<InMemoryCheckinRepository>,
        cache: Arc<CheckinCache>,
        service: CheckinService,
        admin: User,
        checkin: Checkin,
    }

    impl Fixture {
        async fn new(ttl: Duration) -> Self {
            let clock = Arc::new(FixedClock::new(datetime!(2026-11-23 12:00 UTC)));
            let ports = InMemoryOrgPorts::new(clock.clone());
            let new = NewOrganization::new("Acme", "business", None, None, None).unwrap();
            let org = ports.people.create_organization(&new).await.unwrap();
            let new = NewUser::new("ada@acme.test", "Ada", "Admin", "admin", None).unwrap();
            let admin = ports.people.create_user(org.id, &new).await.unwrap();
            let channels = Arc::new(InMemoryChannelRepository::new());
            let store = Arc::new(InMemoryCheckinRepository::new(
                ports.people.clone(),
                ports.teams.clone(),
                channels.clone(),
                ports.events.clone(),
            ));
            let cache = Arc::new(CheckinCache::new(store.clone(), ttl));
            let service = CheckinService::new(
                cache.clone(),
                ports.people.clone(),
                ports.teams.clone(),
                channels,
                Arc::new(InMemoryTemplateRepository::new()),
                clock,
            );
            let settings = CheckinInput {
                name: Some("Standup".into()),
                participants: Some(ParticipantsInput {
                    user_uuids: vec![admin.id],
                    team_uuids: Vec::new(),
                }),
                schedule: Some(ScheduleInput {
                    days: Some((0..=6).collect()),
                    time: Some("00:00".into()),
                    timezone: Some("UTC".into()),
                }),
                ..CheckinInput::default()
            };
            let new = NewCheckin {
                settings,
                questions: Some(vec![NewQuestion {
                    question: "What did you do?".into(),
                    short_question: Some("Done".into()),
                    ..NewQuestion::default()
                }]),
                ..NewCheckin::default()
            };
            let checkin = service.create_checkin(&admin, new).await.unwrap().checkin;
            Fixture {
                store,
                cache,
                service,
                admin,
                checkin,
            }
        }

        async fn cached_name(&self) -> String {
            self.cache
                .get_checkin(self.admin.org_id, self.checkin.id)
                .await
                .unwrap()
                .name
        }

        /// Renames the check-in in the store, as another instance would.
        async fn rename_behind_its_back(&self, name: &str) {
            let current = self
                .store
                .get_checkin(self.admin.org_id, self.checkin.id)
                .await
                .unwrap();
            let next = Checkin {
                name: name.into(),
                revision: current.revision + 1,
                ..current.clone()
            };
            self.store
                .update_checkin(&next, current.revision)
                .await
                .unwrap();
        }

        fn answer(&self) -> ResponseInput {
            ResponseInput {
                answers: vec![AnswerInput {
                    uuid: self.checkin.questions.questions[0].uuid,
                    index: Some(0),
                    response: json!("Shipped"),
                }],
                ..ResponseInput::default()
            }
        }
    }

    #[tokio::test]
    async fn a_checkin_is_served_from_memory_until_a_write_passes_through() {
        let f = Fixture::new(LONG).await;
        assert_eq!(f.cached_name().await, "Standup");
        f.rename_behind_its_back("Elsewhere").await;
        assert_eq!(f.cached_name().await, "Standup", "within the time-to-live");
        let patch = CheckinInput {
            name: Some("Daily".into()),
            ..CheckinInput::default()
        };
        // Written through the cache from its stale copy: the store refuses the stale revision,
        // the cache forgets, the service's retry reads afresh and writes.
        f.service
            .update_config(&f.admin, f.checkin.id, patch)
            .await
            .unwrap();
        assert_eq!(f.cached_name().await, "Daily");
    }

    #[tokio::test]
    async fn a_response_is_never_written_against_a_stale_checkin() {
        let f = Fixture::new(LONG).await;
        assert_eq!(f.cached_name().await, "Standup");
        f.rename_behind_its_back("Elsewhere").await;
        // Behind its back, the check-in is paused.
        let current = f
            .store
            .get_checkin(f.admin.org_id, f.checkin.id)
            .await
            .unwrap();
        let paused = Checkin {
            active: false,
            revision: current.revision + 1,
            ..current.clone()
        };
        f.store
            .update_checkin(&paused, current.revision)
            .await
            .unwrap();
        // The cached copy says it runs; the write sees the revision moved and the retry the
        // pause.
        let refused = f
            .service
            .submit_response(&f.admin, f.checkin.id, &f.answer(), None)
            .await
            .unwrap_err();
        assert_eq!(
            refused.code(),
            ErrorCode::ResponsesNotAllowedOnInactiveFollowup
        );
        assert_eq!(f.cached_name().await, "Elsewhere", "read afresh");
    }

    impl Fixture {
        /// How many responses the admin's first page of the check-in shows.
        async fn listed(&self) -> u64 {
            let selection = ResponseSelection {
                checkin: self.checkin.id,
                scope: ResponseScope::All,
                user: None,
                search: None,
                from: None,
                until: None,
            };
            self.cache
                .list_responses(self.admin.org_id, &selection, PageRequest::all())
                .await
                .unwrap()
                .count
        }

        /// A response of the admin for `day`, as the service would build it.
        fn response(&self, day: time::Date) -> CheckinResponse {
            let at = datetime!(2026-11-23 12:00 UTC);
            CheckinResponse {
                id: uuid::Uuid::now_v7(),
                org_id: self.admin.org_id,
                checkin_id: self.checkin.id,
                user_id: self.admin.id,
                date: day,
                answers: Vec::new(),
                last_question_index: None,
                completed: false,
                questions_version: self.checkin.questions.version,
                created_at: at,
                updated_at: at,
            }
        }
    }

    #[tokio::test]
    async fn a_response_page_is_served_from_memory_until_a_response_write_passes_through() {
        let f = Fixture::new(LONG).await;
        assert_eq!(f.listed().await, 0);
        // Behind the cache's back, as another instance would: not seen within the time-to-live.
        f.store
            .insert_response(&f.response(date!(2026 - 11 - 20)), f.checkin.revision, &[])
            .await
            .unwrap();
        assert_eq!(f.listed().await, 0);
        // Through the cache: the organization's pages are read afresh.
        let mine = f.response(date!(2026 - 11 - 21));
        f.cache
            .insert_response(&mine, f.checkin.revision, &[])
            .await
            .unwrap();
        assert_eq!(f.listed().await, 2);
        // An edit and a delete through the cache are seen at once too.
        f.store
            .insert_response(&f.response(date!(2026 - 11 - 22)), f.checkin.revision, &[])
            .await
            .unwrap();
        assert_eq!(f.listed().await, 2);
        f.cache
            .delete_responses(f.admin.org_id, &[mine.id], &[])
            .await
            .unwrap();
        assert_eq!(f.listed().await, 2, "one gone, the hidden one now seen");
        // A refused write means the rows changed under it: read afresh.
        f.store
            .insert_response(&f.response(date!(2026 - 11 - 19)), f.checkin.revision, &[])
            .await
            .unwrap();
        assert!(
            f.cache
                .delete_responses(f.admin.org_id, &[mine.id], &[])
                .await
                .is_err()
        );
        assert_eq!(f.listed().await, 3);
    }

    #[tokio::test]
    async fn a_zero_time_to_live_reads_through_every_time() {
        let f = Fixture::new(Duration::ZERO).await;
        assert_eq!(f.cached_name().await, "Standup");
        f.rename_behind_its_back("Elsewhere").await;
        assert_eq!(f.cached_name().await, "Elsewhere");
        assert_eq!(f.listed().await, 0);
        let current = f
            .store
            .get_checkin(f.admin.org_id, f.checkin.id)
            .await
            .unwrap();
        f.store
            .insert_response(&f.response(date!(2026 - 11 - 20)), current.revision, &[])
            .await
            .unwrap();
        assert_eq!(f.listed().await, 1);
        f.service
            .submit_response(&f.admin, f.checkin.id, &f.answer(), None)
            .await
            .unwrap();
    }
}
