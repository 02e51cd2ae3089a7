//! `KudosService`: giving kudos (receivers, company value, the daily limit, the `kudos.posted`
//! event), boosting them, listing them as each reader may see them, the wall of fame, and the
//! organization's company values.

use std::sync::Arc;

use serde_json::json;
use teamcomm_kernel::{
    Error, ErrorCode, Event, EventType, OrgId, Page, PageRequest, RepoError, SharedClock, TeamId,
    UserId,
};
use teamcomm_org::{OrgRepository, Team, TeamRepository, User};
use time::Date;
use uuid::Uuid;

use crate::rules::{
    daily_cap, daily_limit_reached, default_company_values, span_of_days, validate_content,
    wall_of_fame,
};
use crate::{
    CompanyValue, Kudos, KudosDirection, KudosRepository, KudosSelection, NewCompanyValue, Posting,
    WallOfFame, kudos_document,
};

#[cfg(test)]
mod tests;

/// Kudos to give, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GiveKudos {
    pub content: String,
    /// People and teams in one list: each is looked up as a person of the organization, then
    /// as a team.
    pub receivers: Vec<Uuid>,
    pub users_receivers: Vec<Uuid>,
    /// Every active member of each team receives (the giver excepted).
    pub teams_receivers: Vec<Uuid>,
    /// A company value's UUID, or its name in any case.
    pub company_value: Option<String>,
    pub is_anonymous: bool,
    pub by_dailybot: bool,
}

/// The filters of a kudos listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KudosListFilter {
    /// Relative to the reader. Without it, their own list holds the kudos they gave or
    /// received, the organization's list every kudos.
    pub direction: Option<KudosDirection>,
    pub sender: Option<UserId>,
    pub receiver: Option<UserId>,
    pub search: Option<String>,
    /// Days on the reader's wall clock, both included.
    pub start_date: Option<Date>,
    pub end_date: Option<Date>,
}

/// Kudos of the actor's organization.
#[derive(Clone)]
pub struct KudosService {
    kudos: Arc<dyn KudosRepository>,
    people: Arc<dyn OrgRepository>,
    teams: Arc<dyn TeamRepository>,
    clock: SharedClock,
}

/// Who the receivers of a request turn out to be.
#[derive(Default)]
struct Resolved {
    /// Active people of the organization (the giver too, if named).
    people: Vec<User>,
    /// People named that are not.
    unknown_people: usize,
    /// Active members of the teams named.
    members: Vec<User>,
}

impl Resolved {
    /// Counts a person named, as looked up in the organization.
    fn person(&mut self, looked_up: Result<User, RepoError>) -> Result<(), Error> {
        match looked_up {
            Ok(u) if u.is_active => self.people.push(u),
            Ok(_) | Err(RepoError::NotFound) => self.unknown_people += 1,
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }
}

impl KudosService {
    pub fn new(
        kudos: Arc<dyn KudosRepository>,
        people: Arc<dyn OrgRepository>,
        teams: Arc<dyn TeamRepository>,
        clock: SharedClock,
    ) -> Self {
        KudosService {
            kudos,
            people,
            teams,
            clock,
        }
    }

    /// Gives kudos. The receivers are the active people named and the active members of the
    /// teams named, less the giver: `no_valid_users` when people were named and none is an
    /// active person of the organization, `no_valid_team` for a team that is not an active
    /// team of it, `self_kudos_not_allowed` when the giver named only themself,
    /// `no_users_found` when nobody else is left. The day's allowance is checked as the kudos
    /// are stored (406 `kudos_daily_limit_reached`); `kudos.posted` is written with them.
    pub async fn give(&self, actor: &User, cmd: GiveKudos) -> Result<Kudos, Error> {
        let content = validate_content(&cmd.content)?;
        let company_value = match cmd.company_value.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(wanted) => Some(self.company_value(actor.org_id, wanted).await?),
        };
        let receivers = self.receivers(actor, &cmd).await?;
        let now = self.clock.now();
        let kudos = Kudos {
            id: Uuid::now_v7(),
            org_id: actor.org_id,
            giver: Some(actor.clone()),
            receivers,
            company_value,
            content,
            is_anonymous: cmd.is_anonymous,
            by_dailybot: cmd.by_dailybot,
            boosted_by: Vec::new(),
            created_at: now,
        };
        // Subscribers see what an admin sees: never the giver of anonymous kudos.
        let event = Event::new(
            actor.org_id,
            EventType::KudosPosted,
            None,
            now,
            json!({"kudos": kudos_document(&kudos.clone().seen_by(None))}),
        );
        match self
            .kudos
            .insert_kudos(&kudos, daily_cap(now, &actor.timezone), &[event])
            .await?
        {
            Posting::Stored => Ok(kudos),
            Posting::DailyLimitReached => Err(daily_limit_reached(now, &actor.timezone)),
        }
    }

    /// The company value named by UUID or by name (any case).
    async fn company_value(&self, org: OrgId, wanted: &str) -> Result<CompanyValue, Error> {
        let values = self
            .kudos
            .company_values(org, &default_company_values())
            .await?;
        let by_id = Uuid::parse_str(wanted).ok();
        values
            .into_iter()
            .find(|v| Some(v.id) == by_id || v.name.to_lowercase() == wanted.to_lowercase())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::CompanyValueNotFound,
                    "That is not a company value of your organization.",
                )
                .with_extra("parameter", "company_value")
            })
    }

    async fn receivers(&self, actor: &User, cmd: &GiveKudos) -> Result<Vec<User>, Error> {
        let org = actor.org_id;
        let mut found = Resolved::default();
        for id in &cmd.users_receivers {
            found.person(self.people.get_user(org, UserId(*id)).await)?;
        }
        for id in &cmd.teams_receivers {
            let team = self.teams.get_team(org, TeamId(*id)).await;
            found
                .members
                .extend(self.team_members(org, TeamId(*id), team).await?);
        }
        // The merged list repeats the typed ones (the vendor's CLI sends both).
        for id in &cmd.receivers {
            if cmd.users_receivers.contains(id) || cmd.teams_receivers.contains(id) {
                continue;
            }
            match self.people.get_user(org, UserId(*id)).await {
                Err(RepoError::NotFound) => match self.teams.get_team(org, TeamId(*id)).await {
                    // Neither a person nor a team: a person we do not know.
                    Err(RepoError::NotFound) => found.unknown_people += 1,
                    team => found
                        .members
                        .extend(self.team_members(org, TeamId(*id), team).await?),
                },
                person => found.person(person)?,
            }
        }
        if found.people.is_empty() && found.unknown_people > 0 {
            return Err(Error::new(
                ErrorCode::NoValidUsers,
                "None of the people named is an active member of your organization.",
            ));
        }
        let named_self = found.people.iter().any(|u| u.id == actor.id);
        let mut receivers: Vec<User> = Vec::new();
        for u in found.people.into_iter().chain(found.members) {
            if u.id != actor.id && !receivers.iter().any(|r| r.id == u.id) {
                receivers.push(u);
            }
        }
        if receivers.is_empty() {
            return Err(if named_self {
                Error::new(
                    ErrorCode::SelfKudosNotAllowed,
                    "You cannot give kudos to yourself.",
                )
            } else {
                Error::new(
                    ErrorCode::NoUsersFound,
                    "Nobody would receive these kudos: name people, or teams with active \
                     members other than you.",
                )
            });
        }
        receivers.sort_by(|a, b| {
            (&a.first_name, &a.last_name, a.id).cmp(&(&b.first_name, &b.last_name, b.id))
        });
        Ok(receivers)
    }

    /// The active members of a team looked up as `team`: `no_valid_team` unless it is an
    /// active team of the organization.
    async fn team_members(
        &self,
        org: OrgId,
        id: TeamId,
        team: Result<Team, RepoError>,
    ) -> Result<Vec<User>, Error> {
        match team {
            Ok(team) if team.active => {}
            Ok(_) | Err(RepoError::NotFound) => {
                return Err(Error::new(
                    ErrorCode::NoValidTeam,
                    "A team named is not an active team of your organization.",
                )
                .with_extra("uuids", vec![id.to_string()]));
            }
            Err(e) => return Err(e.into()),
        }
        let members = self.teams.list_members(org, id, PageRequest::all()).await?;
        Ok(members
            .results
            .into_iter()
            .map(|m| m.user)
            .filter(|u| u.is_active)
            .collect())
    }

    /// Adds the actor's +1 to kudos of their organization. Their giver's +1 is the kudos
    /// itself and nobody adds a second (409 `kudos_already_boosted`); a receiver cannot raise
    /// their own score (`self_kudos_not_allowed`).
    pub async fn boost(&self, actor: &User, id: Uuid) -> Result<Kudos, Error> {
        let kudos = self.kudos.get_kudos(actor.org_id, id).await?;
        let already = || {
            Error::new(
                ErrorCode::KudosAlreadyBoosted,
                "You already gave these kudos your +1.",
            )
        };
        if kudos.giver.as_ref().is_some_and(|g| g.id == actor.id) {
            return Err(already());
        }
        if kudos.receivers.iter().any(|r| r.id == actor.id) {
            return Err(Error::new(
                ErrorCode::SelfKudosNotAllowed,
                "You cannot boost kudos you received.",
            ));
        }
        match self
            .kudos
            .boost_kudos(actor.org_id, id, actor.id, self.clock.now())
            .await
        {
            Ok(k) => Ok(k.seen_by(Some(actor.id))),
            Err(RepoError::Conflict { .. }) => Err(already()),
            Err(e) => Err(e.into()),
        }
    }

    /// The kudos the actor gave or received (`direction` narrows to one of the two).
    pub async fn list_own(
        &self,
        actor: &User,
        filter: &KudosListFilter,
        page: PageRequest,
    ) -> Result<Page<Kudos>, Error> {
        let mut selection = self.selection(actor, filter)?;
        selection.involving_viewer = filter.direction.is_none();
        self.list(actor, &selection, page).await
    }

    /// Every kudos of the organization (admins only; `direction` is relative to the admin).
    pub async fn list_organization(
        &self,
        actor: &User,
        filter: &KudosListFilter,
        page: PageRequest,
    ) -> Result<Page<Kudos>, Error> {
        if !actor.role.is_admin() {
            return Err(Error::new(
                ErrorCode::OrgAdminRequired,
                "Only organization admins can list every kudos of the organization.",
            ));
        }
        let selection = self.selection(actor, filter)?;
        self.list(actor, &selection, page).await
    }

    fn selection(&self, actor: &User, filter: &KudosListFilter) -> Result<KudosSelection, Error> {
        let mut selection = KudosSelection {
            viewer: actor.id,
            involving_viewer: false,
            given_by: filter.sender.into_iter().collect(),
            received_by: filter.receiver.into_iter().collect(),
            search: filter.search.clone(),
            span: span_of_days(filter.start_date, filter.end_date, &actor.timezone)?,
        };
        match filter.direction {
            Some(KudosDirection::Received) => selection.received_by.push(actor.id),
            Some(KudosDirection::Given) => selection.given_by.push(actor.id),
            None => {}
        }
        Ok(selection)
    }

    async fn list(
        &self,
        actor: &User,
        selection: &KudosSelection,
        page: PageRequest,
    ) -> Result<Page<Kudos>, Error> {
        Ok(self
            .kudos
            .list_kudos(actor.org_id, selection, page)
            .await?
            .map(|k| k.seen_by(Some(actor.id))))
    }

    /// The organization's rankings over the days `start_date`..=`end_date` of the actor's wall
    /// clock (all time by default), with the requested page of the leaderboard.
    pub async fn wall_of_fame(
        &self,
        actor: &User,
        start_date: Option<Date>,
        end_date: Option<Date>,
        page: PageRequest,
    ) -> Result<WallOfFame, Error> {
        let span = span_of_days(start_date, end_date, &actor.timezone)?;
        let tallies = self.kudos.tallies(actor.org_id, span).await?;
        Ok(wall_of_fame(tallies, actor.id, page))
    }

    /// The company values kudos in the actor's organization can celebrate, by name.
    pub async fn company_values(
        &self,
        actor: &User,
        page: PageRequest,
    ) -> Result<Page<CompanyValue>, Error> {
        let values = self
            .kudos
            .company_values(actor.org_id, &default_company_values())
            .await?;
        let offset = usize::try_from(page.offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(page.limit).unwrap_or(usize::MAX);
        Ok(Page {
            count: values.len() as u64,
            results: values.into_iter().skip(offset).take(limit).collect(),
        })
    }

    /// Registers a company value of `org` (the operator's), or changes the emoji of the one
    /// with that name. The organization's default values are there first, so registering
    /// adds to them whenever it happens.
    pub async fn register_company_value(
        &self,
        org: OrgId,
        name: &str,
        emoji: Option<&str>,
    ) -> Result<CompanyValue, Error> {
        let value = NewCompanyValue::new(name, emoji)?;
        self.kudos
            .company_values(org, &default_company_values())
            .await?;
        Ok(self.kudos.upsert_company_value(org, &value).await?)
    }
}
