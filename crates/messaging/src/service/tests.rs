use serde_json::json;
use teamcomm_kernel::jobs::{JobKind, JobState};
use teamcomm_kernel::{ErrorCode, TeamId};
use teamcomm_org::TeamRepository;

use super::*;
use crate::message::MessageStatus;
use crate::platform::PlatformError;
use crate::request::{ChannelTargetInput, PlatformSettings, ThreadResponseInput};
use crate::test_world::{NOW, World, code};

fn to_users<S: AsRef<str>>(users: &[S]) -> SendMessageRequest {
    SendMessageRequest {
        message: Some("Stand-up in 5".into()),
        target_users: users.iter().map(|u| u.as_ref().to_owned()).collect(),
        ..Default::default()
    }
}

fn to_channel(id: &str) -> SendMessageRequest {
    SendMessageRequest {
        message: Some("Release is out".into()),
        target_channels: vec![ChannelTargetInput {
            id: id.into(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn to_teams(teams: &[TeamId]) -> SendMessageRequest {
    SendMessageRequest {
        message: Some("Team news".into()),
        target_teams: teams.iter().map(|t| t.0).collect(),
        ..Default::default()
    }
}

const API: SenderCredential = SenderCredential::ApiKey;
const CLI: SenderCredential = SenderCredential::CliSession;

#[tokio::test]
async fn a_send_is_queued_with_one_delivery_per_person_and_channel_and_one_job() {
    let w = World::new().await;
    let request = SendMessageRequest {
        // By id and by e-mail (any case), a team whose members repeat them, and a channel.
        target_users: vec![w.member.id.to_string(), "TOM@acme.test".into()],
        target_teams: vec![w.team.id.0],
        target_channels: vec![ChannelTargetInput {
            id: "C-general".into(),
            channel_type: None,
            thread: Some("171.1".into()),
        }],
        metadata: Some(json!({"ticket": 7})),
        ..to_users::<&str>(&[])
    };
    let queued = w
        .messaging()
        .send_message(&w.admin, API, request)
        .await
        .unwrap();
    assert!(queued.thread_responses.is_empty());

    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.sender, w.admin.id);
    assert_eq!(message.kind, MessageKind::Post);
    assert_eq!(message.status(), MessageStatus::Queued);
    assert_eq!(message.content.metadata["ticket"], 7);
    let targets: Vec<DeliveryTarget> = message
        .deliveries
        .iter()
        .map(|d| d.target.clone())
        .collect();
    // The team's inactive member is left out; each person once.
    assert_eq!(
        targets,
        [
            DeliveryTarget::Person(w.member.id),
            DeliveryTarget::Person(w.teammate.id),
            DeliveryTarget::Channel {
                channel_id: "C-general".into(),
                thread: Some("171.1".into())
            },
        ]
    );
    assert!(
        message
            .deliveries
            .iter()
            .enumerate()
            .all(|(i, d)| d.index == i as u32
                && d.status == DeliveryStatus::Queued
                && d.updated_at == NOW)
    );

    let jobs = w.jobs();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].kind, JobKind::ChatMessage);
    assert_eq!(jobs[0].state, JobState::Queued);
    assert_eq!(jobs[0].org_id, w.org.id);
    assert_eq!(jobs[0].run_at, NOW);
    assert_eq!(jobs[0].max_attempts, MESSAGE_MAX_ATTEMPTS);
    assert_eq!(
        jobs[0].payload,
        json!({"message_id": queued.bot_message_id.0})
    );
}

#[tokio::test]
async fn thread_responses_are_messages_of_their_own_in_one_transaction_with_the_send() {
    let w = World::new().await;
    let request = SendMessageRequest {
        thread_responses: vec![
            ThreadResponseInput {
                message: Some("first".into()),
            },
            ThreadResponseInput {
                message: Some("second".into()),
            },
        ],
        ..to_channel("C-general")
    };
    let queued = w
        .messaging()
        .send_message(&w.member, API, request)
        .await
        .unwrap();
    assert_eq!(queued.thread_responses.len(), 2);
    let replies = w
        .messages
        .thread_responses(w.org.id, queued.bot_message_id)
        .await
        .unwrap();
    assert_eq!(
        replies.iter().map(|r| r.id).collect::<Vec<_>>(),
        queued.thread_responses
    );
    for (i, reply) in replies.iter().enumerate() {
        assert_eq!(
            reply.kind,
            MessageKind::ThreadResponse {
                parent: queued.bot_message_id,
                position: i as u32
            }
        );
        assert_eq!(reply.deliveries.len(), 1);
    }
    assert_eq!(replies[1].content.text, "second");
    // One job delivers the send and its replies.
    assert_eq!(w.jobs().len(), 1);
}

#[tokio::test]
async fn people_named_must_be_active_people_of_the_organization() {
    let w = World::new().await;
    let service = w.messaging();
    for (named, typed) in [
        (w.outsider.id.to_string(), w.outsider.id.to_string()),
        (w.inactive.id.to_string(), w.inactive.id.to_string()),
        ("nobody@acme.test".to_owned(), "nobody@acme.test".to_owned()),
        ("IVY@acme.test".to_owned(), "ivy@acme.test".to_owned()),
    ] {
        let e = service
            .send_message(&w.admin, API, to_users(&[&w.member.email, &named]))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::OneOrMoreUsersNotFound, "{named}");
        assert_eq!(e.extra()["users"], json!([typed]));
    }
    assert!(w.jobs().is_empty() && w.messages.all().is_empty());
}

#[tokio::test]
async fn teams_must_be_active_teams_of_the_organization_with_someone_in_them() {
    let w = World::new().await;
    let service = w.messaging();
    let e = service
        .send_message(&w.admin, API, to_teams(&[w.team.id, TeamId::new()]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NoValidTeam);
    assert_eq!(e.extra()["uuids"].as_array().unwrap().len(), 1);

    w.org_ports
        .teams
        .update_team(w.org.id, w.other_team.id, None, Some(false))
        .await
        .unwrap();
    assert_eq!(
        code(
            service
                .send_message(&w.admin, API, to_teams(&[w.other_team.id]))
                .await
        ),
        ErrorCode::NoValidTeam
    );
    let empty = w
        .org_ports
        .teams
        .create_team(w.org.id, TeamId::new(), "Ghosts", &[w.inactive.id], &[])
        .await
        .unwrap();
    assert_eq!(
        code(
            service
                .send_message(&w.admin, API, to_teams(&[empty.id]))
                .await
        ),
        ErrorCode::NoUsersFound
    );
}

#[tokio::test]
async fn send_as_user_is_for_admins_and_names_an_active_person_of_the_organization() {
    let w = World::new().await;
    let service = w.messaging();
    let as_user = |id: String| SendMessageRequest {
        send_as_user: Some(id),
        ..to_channel("C-general")
    };
    assert_eq!(
        code(
            service
                .send_message(&w.member, API, as_user(w.teammate.id.to_string()))
                .await
        ),
        ErrorCode::OrgAdminRequired
    );
    for missing in [w.outsider.id, w.inactive.id, UserId::new()] {
        assert_eq!(
            code(
                service
                    .send_message(&w.admin, API, as_user(missing.to_string()))
                    .await
            ),
            ErrorCode::SendAsUserNotFound
        );
    }
    assert_eq!(
        code(
            service
                .send_message(&w.admin, API, as_user("42".into()))
                .await
        ),
        ErrorCode::SendAsUserInvalidUuid
    );
    let conflict = SendMessageRequest {
        platform_settings: PlatformSettings {
            bot_username: Some("Bot".into()),
            ..Default::default()
        },
        ..as_user(w.member.id.to_string())
    };
    assert_eq!(
        code(service.send_message(&w.admin, API, conflict).await),
        ErrorCode::SendAsUserConflict
    );

    let queued = service
        .send_message(&w.admin, API, as_user(w.member.id.to_string()))
        .await
        .unwrap();
    let message = w.stored(w.org.id, queued.bot_message_id).await;
    assert_eq!(message.send_as, Some(w.member.id));
    assert_eq!(message.sender, w.admin.id);
    assert_eq!(
        message.content.appearance.username.as_deref(),
        Some("Mia Test")
    );
}

#[tokio::test]
async fn a_members_cli_session_reaches_itself_its_teams_their_people_and_registered_channels() {
    let w = World::new().await;
    let service = w.messaging();
    for allowed in [
        to_users(&[w.member.id.to_string()]),
        to_users(&[&w.teammate.email]),
        to_teams(&[w.team.id]),
        to_channel("C-general"),
    ] {
        service
            .send_message(&w.member, CLI, allowed.clone())
            .await
            .unwrap_or_else(|e| panic!("{allowed:?}: {e}"));
    }
    for (refused, target) in [
        (to_users(&[&w.stranger.email]), w.stranger.id.to_string()),
        (to_teams(&[w.other_team.id]), w.other_team.id.to_string()),
        (to_channel("C-secret"), "C-secret".to_owned()),
    ] {
        let e = service
            .send_message(&w.member, CLI, refused)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::CliSendMessageTargetNotAllowed);
        assert_eq!(e.status(), 403);
        assert_eq!(e.extra()["targets"], json!([target]));
    }
    // An admin's session and any API key reach the whole organization.
    let everyone = SendMessageRequest {
        target_teams: vec![w.other_team.id.0],
        ..to_users(&[&w.stranger.email])
    };
    service
        .send_message(&w.admin, CLI, everyone.clone())
        .await
        .unwrap();
    service
        .send_message(&w.member, API, everyone)
        .await
        .unwrap();
    service
        .send_message(&w.member, API, to_channel("C-secret"))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_edit_rewrites_the_original_of_the_organization() {
    let w = World::new().await;
    let service = w.messaging();
    let original = service
        .send_message(&w.member, CLI, to_users(&[&w.teammate.email]))
        .await
        .unwrap();
    let edit = |id: String| SendMessageRequest {
        message: Some("Stand-up in 10".into()),
        bot_message_id: Some(id),
        ..Default::default()
    };
    let first = service
        .send_message(&w.member, CLI, edit(original.bot_message_id.to_string()))
        .await
        .unwrap();
    assert_ne!(first.bot_message_id, original.bot_message_id);
    let stored = w.stored(w.org.id, first.bot_message_id).await;
    assert_eq!(
        stored.kind,
        MessageKind::Edit {
            original: original.bot_message_id
        }
    );
    assert_eq!(stored.content.text, "Stand-up in 10");
    assert_eq!(
        stored.deliveries[0].target,
        DeliveryTarget::Person(w.teammate.id)
    );
    // Editing the edit edits the original.
    let second = service
        .send_message(&w.admin, API, edit(first.bot_message_id.to_string()))
        .await
        .unwrap();
    assert_eq!(
        w.stored(w.org.id, second.bot_message_id).await.kind,
        MessageKind::Edit {
            original: original.bot_message_id
        }
    );
    assert_eq!(w.jobs().len(), 3);

    // Another member's CLI session may not edit it; nobody edits across organizations.
    assert_eq!(
        code(
            service
                .send_message(&w.teammate, CLI, edit(original.bot_message_id.to_string()))
                .await
        ),
        ErrorCode::CliSendMessageTargetNotAllowed
    );
    for unknown in [
        original.bot_message_id.to_string(),
        "$db/whatever".to_owned(),
        MessageId::new().to_string(),
    ] {
        assert_eq!(
            code(
                w.messaging()
                    .send_message(&w.outsider, API, edit(unknown))
                    .await
            ),
            ErrorCode::NotFound
        );
    }
}

#[tokio::test]
async fn a_message_is_seen_by_its_sender_and_admins_of_its_organization() {
    let w = World::new().await;
    let service = w.messaging();
    let request = SendMessageRequest {
        thread_responses: vec![ThreadResponseInput {
            message: Some("details".into()),
        }],
        ..to_channel("C-general")
    };
    let queued = service.send_message(&w.member, API, request).await.unwrap();
    let id = queued.bot_message_id.to_string();
    for reader in [&w.member, &w.admin] {
        let report = service.get_message(reader, &id).await.unwrap();
        assert_eq!(report.message.id, queued.bot_message_id);
        assert_eq!(report.message.status(), MessageStatus::Queued);
        assert_eq!(report.thread_responses.len(), 1);
    }
    for (reader, id) in [
        (&w.teammate, id.as_str()),
        (&w.outsider, id.as_str()),
        (&w.admin, "not-an-id"),
    ] {
        assert_eq!(
            code(service.get_message(reader, id).await),
            ErrorCode::NotFound
        );
    }
}

fn ids(users: &[&User]) -> Vec<String> {
    users.iter().map(|u| u.id.to_string()).collect()
}

#[tokio::test]
async fn open_conversation_codes() {
    let w = World::new().await;
    let service = w.messaging();
    assert_eq!(
        code(
            service
                .open_conversation(&w.member, &ids(&[&w.teammate]))
                .await
        ),
        ErrorCode::OrgAdminRequired
    );
    let eight: Vec<String> = (0..8).map(|_| UserId::new().to_string()).collect();
    let e = service
        .open_conversation(&w.admin, &eight)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ConversationTooManyParticipants);
    assert_eq!(
        code(service.open_conversation(&w.admin, &[]).await),
        ErrorCode::NoValidUsers
    );
    for wrong in [
        w.outsider.id.to_string(),
        w.inactive.id.to_string(),
        "x".into(),
    ] {
        let e = service
            .open_conversation(&w.admin, &[w.member.id.to_string(), wrong.clone()])
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::OneOrMoreUsersNotFound);
        assert_eq!(e.extra()["users"], json!([wrong]));
    }
    // The stranger has no platform identity.
    let e = service
        .open_conversation(&w.admin, &ids(&[&w.member, &w.stranger]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::OneOrMoreUsersNotFound);
    assert_eq!(e.extra()["users"], json!([w.stranger.id.to_string()]));
    assert_eq!(
        code(
            service
                .open_conversation(&w.admin, &ids(&[&w.stranger]))
                .await
        ),
        ErrorCode::NoValidUsers
    );

    w.platform
        .fail_next([PlatformError::Unsupported("no groups".into())]);
    let e = service
        .open_conversation(&w.admin, &ids(&[&w.member]))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.status()),
        (ErrorCode::OpenConversationNotSupported, 406)
    );
    w.platform.fail_next([PlatformError::RateLimited {
        retry_after: Some(std::time::Duration::from_secs(30)),
    }]);
    let e = service
        .open_conversation(&w.admin, &ids(&[&w.member]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::ConversationCanNotBeOpened);
    assert_eq!(e.extra()["retry_after"], 30);

    w.directory.disconnect(w.org.id);
    assert_eq!(
        code(
            service
                .open_conversation(&w.admin, &ids(&[&w.member]))
                .await
        ),
        ErrorCode::PlatformNotConnected
    );
}

#[tokio::test]
async fn the_same_people_get_the_same_conversation() {
    let w = World::new().await;
    let service = w.messaging();
    let channel = service
        .open_conversation(
            &w.admin,
            &[
                w.member.id.to_string(),
                w.teammate.id.to_string(),
                w.member.id.to_string().to_uppercase(),
            ],
        )
        .await
        .unwrap();
    let again = service
        .open_conversation(&w.admin, &ids(&[&w.teammate, &w.member]))
        .await
        .unwrap();
    assert_eq!(channel, again);
    let other = service
        .open_conversation(&w.admin, &ids(&[&w.member]))
        .await
        .unwrap();
    assert_ne!(channel, other);
    assert_eq!(
        w.platform.calls()[0],
        crate::testing::PlatformCall::OpenedConversation {
            platform_user_ids: vec!["U-Mia".into(), "U-Tom".into()],
            channel_id: channel,
        }
    );
}

#[tokio::test]
async fn a_system_message_is_queued_once_under_its_callers_id() {
    let w = World::new().await;
    let id = MessageId::new();
    let targets = vec![
        DeliveryTarget::Person(w.member.id),
        DeliveryTarget::Channel {
            channel_id: "C-general".into(),
            thread: None,
        },
    ];
    let messaging = w.messaging();
    let send = || {
        messaging.queue_system_message(
            w.org.id,
            id,
            w.member.id,
            targets.clone(),
            "What did you do yesterday?".into(),
        )
    };
    assert!(send().await.unwrap(), "queued");
    assert!(
        !send().await.unwrap(),
        "the same id again is already queued"
    );
    let message = w.stored(w.org.id, id).await;
    assert_eq!(message.sender, w.member.id);
    assert_eq!(message.content.text, "What did you do yesterday?");
    assert_eq!(
        message
            .deliveries
            .iter()
            .map(|d| d.target.clone())
            .collect::<Vec<_>>(),
        targets
    );
    let jobs = w.queue.all();
    assert_eq!(jobs.len(), 1, "one job for the one message");
    assert_eq!(jobs[0].kind, JobKind::ChatMessage);
}
