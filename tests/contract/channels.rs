//! `ChannelRepository`: the organization's report channels, one per chat-platform id.

use teamcomm_kernel::OrgId;
use teamcomm_messaging::{Channel, ChannelType, NewChannel};

use crate::ports::{Ports, assert_conflict};

contract!(
    a_channel_reads_back_and_registering_again_updates_it,
    channels_list_by_name_bytewise_and_filter_literally,
    channels_are_scoped_by_organization,
    a_channel_of_an_unknown_organization_is_refused,
);

fn channel(id: &str, name: &str, kind: &str) -> NewChannel {
    NewChannel::new(id, name, "slack", kind).unwrap()
}

async fn names(p: &Ports, org: OrgId, filter: Option<&str>) -> Vec<String> {
    p.channels
        .list_channels(org, filter)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect()
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

async fn a_channel_reads_back_and_registering_again_updates_it(p: Ports) {
    let org = p.org("Acme").await.id;
    let created = p
        .channels
        .upsert_channel(org, &channel("C1", "#general", "channel"))
        .await
        .unwrap();
    assert_eq!(
        (
            created.org_id,
            created.id.as_str(),
            created.name.as_str(),
            created.platform.as_str()
        ),
        (org, "C1", "general", "slack")
    );
    assert_eq!(created.channel_type, ChannelType::Channel);
    assert_eq!(
        p.channels.list_channels(org, None).await.unwrap(),
        vec![created.clone()]
    );
    let moved = NewChannel::new("C1", "town-square", "msteams", "private_channel").unwrap();
    let updated = p.channels.upsert_channel(org, &moved).await.unwrap();
    assert_eq!(
        updated,
        Channel {
            name: "town-square".to_owned(),
            platform: "msteams".to_owned(),
            channel_type: ChannelType::PrivateChannel,
            ..created
        }
    );
    assert_eq!(
        p.channels.list_channels(org, None).await.unwrap(),
        vec![updated]
    );
}

async fn channels_list_by_name_bytewise_and_filter_literally(p: Ports) {
    let org = p.org("Acme").await.id;
    for (id, name) in [
        ("C1", "general"),
        ("C2", "Random"),
        ("C3", "dev_ops"),
        ("C4", "100%"),
        ("C5", "Général"),
        ("C0", "general"),
    ] {
        p.channels
            .upsert_channel(org, &channel(id, name, "channel"))
            .await
            .unwrap();
    }
    let ids: Vec<String> = p
        .channels
        .list_channels(org, None)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, owned(&["C4", "C5", "C2", "C3", "C0", "C1"]));
    assert_eq!(
        names(&p, org, Some("GEN")).await,
        owned(&["general", "general"])
    );
    assert_eq!(names(&p, org, Some("ÉR")).await, owned(&["Général"]));
    assert_eq!(names(&p, org, Some("_")).await, owned(&["dev_ops"]));
    assert_eq!(names(&p, org, Some("%")).await, owned(&["100%"]));
    assert!(names(&p, org, Some("nothing")).await.is_empty());
}

async fn channels_are_scoped_by_organization(p: Ports) {
    let org = p.org("Acme").await.id;
    let other = p.org("Other").await.id;
    p.channels
        .upsert_channel(org, &channel("C1", "ours", "channel"))
        .await
        .unwrap();
    let theirs = p
        .channels
        .upsert_channel(other, &channel("C1", "theirs", "group_chat"))
        .await
        .unwrap();
    assert_eq!(names(&p, org, None).await, owned(&["ours"]));
    assert_eq!(
        p.channels.list_channels(other, None).await.unwrap(),
        vec![theirs]
    );
    assert!(
        p.channels
            .list_channels(OrgId::new(), None)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_channel_of_an_unknown_organization_is_refused(p: Ports) {
    let new = NewChannel::new("C1", "general", "slack", "channel").unwrap();
    assert_conflict(
        p.channels.upsert_channel(OrgId::new(), &new).await,
        "report_channels_organization_id_fkey",
    );
}
