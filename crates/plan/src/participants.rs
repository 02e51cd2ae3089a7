//! Plan: the people who follow a task (participants and watchers, muted or not), and the
//! caller's own subscription.

use serde_json::json;
use teamcomm_kernel::{Error, ErrorCode, OrgId, RepoError, UserId};
use teamcomm_org::User;

use crate::access::Audience;
use crate::actor::PlanActor;
use crate::model::{ParticipantRole, Task, TaskRef};
use crate::ports::{Participant, ParticipantSource, ParticipantUpdate};
use crate::relations::social_event;
use crate::service::Plan;

/// A participant with the person.
#[derive(Debug, Clone, PartialEq)]
pub struct ParticipantView {
    pub participant: Participant,
    pub member: User,
}

impl Plan {
    /// Who sees the task: its board's visibility and grants, read once for however many
    /// people are then checked ([`Plan::person_sees`]).
    async fn task_audience(&self, org: OrgId, task: &Task) -> Result<Audience, Error> {
        let board = self.ports.boards.get_board(org, task.board_id).await?;
        self.board_audience(&board).await
    }

    /// `user` as a new participant of `task`.
    fn new_participant(
        &self,
        task: &Task,
        user: &User,
        role: ParticipantRole,
        source: ParticipantSource,
        is_muted: bool,
    ) -> Participant {
        Participant {
            task: task.id,
            user: user.id,
            role,
            source,
            is_muted,
            created_at: self.ports.clock.now(),
        }
    }

    /// Puts `user` on the task as `new` says (or applies `update` to their row); answers the
    /// row and whether it is new.
    async fn put_participant(
        &self,
        actor: &PlanActor,
        task: &Task,
        user: &User,
        new: Participant,
        update: ParticipantUpdate,
    ) -> Result<(ParticipantView, bool), Error> {
        let event = social_event(
            actor,
            task,
            "participant_added",
            json!({
                "user": user.id.0,
                "role": new.role.as_str(),
                "source": new.source.as_str(),
            }),
            false,
        );
        let (participant, created) = self
            .ports
            .social
            .put_participant(actor.org_id(), &new, update, &event)
            .await?;
        Ok((
            ParticipantView {
                participant,
                member: user.clone(),
            },
            created,
        ))
    }

    /// The mentioned people who can see the task become its participants (source `mention`);
    /// those already on it stay as they are.
    pub(crate) async fn add_mentioned(
        &self,
        actor: &PlanActor,
        task: &Task,
        mentioned: &[UserId],
    ) -> Result<(), Error> {
        let org = actor.org_id();
        let people = self.people(org, mentioned.iter().copied()).await?;
        if people.is_empty() {
            // Nobody to add: the board need not be read.
            return Ok(());
        }
        let audience = self.task_audience(org, task).await?;
        for id in mentioned {
            let Some(user) = people.get(id) else { continue };
            if self.person_sees(&audience, user).await? {
                let new = self.new_participant(
                    task,
                    user,
                    ParticipantRole::Participant,
                    ParticipantSource::Mention,
                    false,
                );
                self.put_participant(actor, task, user, new, ParticipantUpdate::default())
                    .await?;
            }
        }
        Ok(())
    }

    /// Adds a person of the organization to the task, or changes their role and mute when they
    /// are on it already (answers `false` then). Refused for a deactivated person
    /// (`user_inactive`) and one who cannot see the board (`participant_cannot_access_board`).
    pub async fn add_participant(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        user: UserId,
        role: Option<ParticipantRole>,
        is_muted: Option<bool>,
    ) -> Result<(ParticipantView, bool), Error> {
        actor.person()?;
        let task = self.visible_task(actor, task).await?;
        let user = match self.ports.people.get_user(actor.org_id(), user).await {
            Ok(user) => user,
            Err(RepoError::NotFound) => {
                return Err(Error::invalid_field(
                    "user_uuid",
                    "No person of your organization has this uuid.",
                ));
            }
            Err(e) => return Err(e.into()),
        };
        if !user.is_active {
            return Err(crate::tasks::user_inactive("user_uuid", &[user.id]));
        }
        let audience = self.task_audience(actor.org_id(), &task).await?;
        if !self.person_sees(&audience, &user).await? {
            return Err(Error::new(
                ErrorCode::ParticipantCannotAccessBoard,
                "This person cannot see the task's board.",
            )
            .with_extra("parameter", "user_uuid"));
        }
        let new = self.new_participant(
            &task,
            &user,
            role.unwrap_or(ParticipantRole::Participant),
            ParticipantSource::Added,
            is_muted.unwrap_or(false),
        );
        self.put_participant(
            actor,
            &task,
            &user,
            new,
            ParticipantUpdate { role, is_muted },
        )
        .await
    }

    /// The task's participants, oldest first (people no longer in the organization left out).
    pub async fn list_participants(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
    ) -> Result<Vec<ParticipantView>, Error> {
        let task = self.visible_task(actor, task).await?;
        let org = actor.org_id();
        let rows = self.ports.social.participants(org, task.id).await?;
        let people = self.people(org, rows.iter().map(|p| p.user)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|participant| {
                let member = people.get(&participant.user)?.clone();
                Some(ParticipantView {
                    participant,
                    member,
                })
            })
            .collect())
    }

    /// Takes a person off the task (nothing to do when they are not on it).
    pub async fn remove_participant(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        user: UserId,
    ) -> Result<(), Error> {
        actor.person()?;
        let task = self.visible_task(actor, task).await?;
        let event = social_event(
            actor,
            &task,
            "participant_removed",
            json!({ "user": user.0 }),
            false,
        );
        self.ports
            .social
            .remove_participant(actor.org_id(), task.id, user, &event)
            .await?;
        Ok(())
    }

    /// The caller watches the task: a new row is a watcher (source `subscription`); an existing
    /// one is kept and unmuted.
    pub async fn subscribe(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
    ) -> Result<ParticipantView, Error> {
        let person = actor.person()?.clone();
        let task = self.visible_task(actor, task).await?;
        let update = ParticipantUpdate {
            role: None,
            is_muted: Some(false),
        };
        let new = self.new_participant(
            &task,
            &person,
            ParticipantRole::Watcher,
            ParticipantSource::Subscription,
            false,
        );
        let (view, _) = self
            .put_participant(actor, &task, &person, new, update)
            .await?;
        Ok(view)
    }

    /// The caller stops following the task.
    pub async fn unsubscribe(&self, actor: &PlanActor, task: &TaskRef) -> Result<(), Error> {
        let person = actor.person()?.id;
        self.remove_participant(actor, task, person).await
    }
}
