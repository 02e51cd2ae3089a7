//! Who may do what with a form: pure rules over the form's settings and the viewer (their
//! role and teams). The owner and the organization's admins may do everything.

use std::collections::HashSet;

use teamcomm_kernel::TeamId;
use teamcomm_org::{Role, User};

use super::model::{Audience, AudienceMode, Form, FormResponse, Members};

/// The person looking, with the teams they belong to (audiences may name teams).
#[derive(Debug, Clone)]
pub struct Viewer {
    pub user: User,
    pub teams: HashSet<TeamId>,
}

impl Viewer {
    fn named_in(&self, members: &Members) -> bool {
        members.users.contains(&self.user.id)
            || members.teams.iter().any(|t| self.teams.contains(t))
    }

    fn admitted_by(&self, audience: &Audience) -> bool {
        match audience.mode {
            // Guests are part of "everyone" only where they are named.
            AudienceMode::Everyone => self.user.role != Role::Guest,
            AudienceMode::OwnerAndAdmins => false,
            AudienceMode::Restricted => self.named_in(&audience.members),
        }
    }
}

/// What a viewer may do with one form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormAccess {
    /// Change its settings and questions, edit anyone's responses.
    pub can_edit: bool,
    /// Read everyone's responses and who moved them (editors and movers always do).
    pub can_see_responses: bool,
    /// Move responses through the workflow.
    pub can_change_states: bool,
    /// The owner or an admin: may also delete anyone's responses.
    pub is_manager: bool,
}

impl FormAccess {
    pub fn of(form: &Form, viewer: &Viewer) -> FormAccess {
        let is_manager = viewer.user.role.is_admin() || form.owner.id == viewer.user.id;
        let s = &form.settings;
        let can_change_states = is_manager
            || if s.use_for_approval {
                viewer.named_in(&s.approvers)
            } else {
                viewer.admitted_by(&s.who_can_change_states)
            };
        let can_edit = is_manager || viewer.admitted_by(&s.who_can_edit);
        FormAccess {
            can_edit,
            // Whoever edits or moves responses must see them.
            can_see_responses: can_edit
                || can_change_states
                || viewer.admitted_by(&s.who_can_see_responses),
            can_change_states,
            is_manager,
        }
    }

    /// May read this response: their own, or anyone's when they see responses.
    pub fn can_read(&self, response: &FormResponse, viewer: &Viewer) -> bool {
        self.can_see_responses || response.submitter.id == viewer.user.id
    }
}

#[cfg(test)]
mod tests {
    use teamcomm_kernel::{OrgId, UserId};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::forms::model::{FormSettings, Person};
    use crate::questions::QuestionSet;

    fn user(role: Role) -> User {
        User {
            id: UserId::new(),
            org_id: OrgId::new(),
            email: "x@example.com".into(),
            first_name: "X".into(),
            last_name: String::new(),
            role,
            is_active: true,
            timezone: "UTC".into(),
            occupation: String::new(),
            image: None,
            birth_date: None,
            work_anniversary: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn viewer(u: &User, teams: &[TeamId]) -> Viewer {
        Viewer {
            user: u.clone(),
            teams: teams.iter().copied().collect(),
        }
    }

    fn form(owner: &User, settings: FormSettings) -> Form {
        Form {
            id: Uuid::now_v7(),
            org_id: owner.org_id,
            owner: Person {
                id: owner.id,
                full_name: "Owner".into(),
                email: owner.email.clone(),
            },
            name: "Form".into(),
            questions: QuestionSet::default(),
            report_channels: Vec::new(),
            settings,
            is_archived: false,
            version: 1,
            response_count: 0,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn restricted(users: &[&User], teams: &[TeamId]) -> Audience {
        Audience {
            mode: AudienceMode::Restricted,
            members: Members {
                users: users.iter().map(|u| u.id).collect(),
                teams: teams.to_vec(),
            },
        }
    }

    fn everyone() -> Audience {
        Audience {
            mode: AudienceMode::Everyone,
            members: Members::default(),
        }
    }

    fn all(access: FormAccess) -> [bool; 4] {
        [
            access.can_edit,
            access.can_see_responses,
            access.can_change_states,
            access.is_manager,
        ]
    }

    #[test]
    fn owner_and_admins_may_do_everything_others_nothing_by_default() {
        let owner = user(Role::Member);
        let f = form(&owner, FormSettings::default());
        assert_eq!(all(FormAccess::of(&f, &viewer(&owner, &[]))), [true; 4]);
        assert_eq!(
            all(FormAccess::of(&f, &viewer(&user(Role::Admin), &[]))),
            [true; 4]
        );
        assert_eq!(
            all(FormAccess::of(&f, &viewer(&user(Role::Member), &[]))),
            [false; 4]
        );
    }

    #[test]
    fn everyone_means_members_and_admins_not_guests() {
        let owner = user(Role::Member);
        let f = form(
            &owner,
            FormSettings {
                who_can_edit: everyone(),
                ..FormSettings::default()
            },
        );
        assert_eq!(
            all(FormAccess::of(&f, &viewer(&user(Role::Member), &[]))),
            [true, true, false, false],
            "editors see the responses they may edit"
        );
        assert!(!FormAccess::of(&f, &viewer(&user(Role::Guest), &[])).can_edit);
        let guest = user(Role::Guest);
        let named = form(
            &owner,
            FormSettings {
                who_can_edit: restricted(&[&guest], &[]),
                ..FormSettings::default()
            },
        );
        assert!(FormAccess::of(&named, &viewer(&guest, &[])).can_edit);
    }

    #[test]
    fn restricted_audiences_admit_named_people_and_team_members() {
        let owner = user(Role::Member);
        let (ada, bob, cy) = (user(Role::Member), user(Role::Member), user(Role::Member));
        let team = TeamId::new();
        let f = form(
            &owner,
            FormSettings {
                who_can_see_responses: restricted(&[&ada], &[team]),
                ..FormSettings::default()
            },
        );
        let sees = |u: &User, teams: &[TeamId]| FormAccess::of(&f, &viewer(u, teams));
        assert_eq!(all(sees(&ada, &[])), [false, true, false, false]);
        assert_eq!(all(sees(&bob, &[team])), [false, true, false, false]);
        assert_eq!(all(sees(&cy, &[TeamId::new()])), [false; 4]);
    }

    #[test]
    fn movers_see_responses_and_approvers_replace_movers_on_approval_forms() {
        let owner = user(Role::Member);
        let (mover, approver) = (user(Role::Member), user(Role::Member));
        let mut settings = FormSettings {
            who_can_change_states: restricted(&[&mover], &[]),
            ..FormSettings::default()
        };
        let f = form(&owner, settings.clone());
        assert_eq!(
            all(FormAccess::of(&f, &viewer(&mover, &[]))),
            [false, true, true, false]
        );
        settings.use_for_approval = true;
        settings.approvers = Members {
            users: vec![approver.id],
            teams: Vec::new(),
        };
        let f = form(&owner, settings);
        assert!(!FormAccess::of(&f, &viewer(&mover, &[])).can_change_states);
        assert!(FormAccess::of(&f, &viewer(&approver, &[])).can_change_states);
        assert!(FormAccess::of(&f, &viewer(&owner, &[])).can_change_states);
    }
}
