//! `PollCursors`: where the reply poll of an organization's platform ended reads back as saved,
//! per organization and for its platform's kind only; saving replaces it; it belongs to the
//! connection (none without one, forgotten when the connection is removed).

use teamcomm_messaging::platform::PlatformKind;
use teamcomm_messaging::ports::{PlatformConnection, PlatformSecret};
use time::macros::datetime;

use crate::ports::{Ports, assert_not_found};

contract!(
    a_poll_cursor_reads_back_as_last_saved_for_its_kind,
    a_poll_cursor_belongs_to_the_connection,
);

fn connection(org: teamcomm_kernel::OrgId, kind: PlatformKind) -> PlatformConnection {
    PlatformConnection {
        org_id: org,
        kind,
        base_url: Some("https://chat.acme.test".into()),
        secret: PlatformSecret::new("bot-token-0123456789"),
        signing_secret: None,
    }
}

async fn a_poll_cursor_reads_back_as_last_saved_for_its_kind(p: Ports) {
    let acme = p.org("Acme").await;
    let globex = p.org("Globex").await;
    let (d, c) = (&p.messaging.directory, &p.messaging.cursors);
    let (matrix, slack) = (PlatformKind::Matrix, PlatformKind::Slack);
    d.save_connection(&connection(acme.id, matrix))
        .await
        .unwrap();
    d.save_connection(&connection(globex.id, matrix))
        .await
        .unwrap();
    assert_eq!(c.poll_cursor(acme.id, matrix).await.unwrap(), None);

    let t = datetime!(2026-11-26 01:00 UTC);
    c.save_poll_cursor(acme.id, matrix, "s72594_4483_1934", t)
        .await
        .unwrap();
    assert_eq!(
        c.poll_cursor(acme.id, matrix).await.unwrap().as_deref(),
        Some("s72594_4483_1934")
    );
    // Per organization, and for its kind only.
    assert_eq!(c.poll_cursor(globex.id, matrix).await.unwrap(), None);
    assert_eq!(c.poll_cursor(acme.id, slack).await.unwrap(), None);

    // Saving replaces it, also under another kind.
    c.save_poll_cursor(acme.id, matrix, "s72595_4483_1934", t)
        .await
        .unwrap();
    assert_eq!(
        c.poll_cursor(acme.id, matrix).await.unwrap().as_deref(),
        Some("s72595_4483_1934")
    );
    c.save_poll_cursor(acme.id, slack, "1700000000.000100", t)
        .await
        .unwrap();
    assert_eq!(c.poll_cursor(acme.id, matrix).await.unwrap(), None);
    assert_eq!(
        c.poll_cursor(acme.id, slack).await.unwrap().as_deref(),
        Some("1700000000.000100")
    );
}

async fn a_poll_cursor_belongs_to_the_connection(p: Ports) {
    let acme = p.org("Acme").await;
    let (d, c) = (&p.messaging.directory, &p.messaging.cursors);
    let matrix = PlatformKind::Matrix;
    let t = datetime!(2026-11-26 01:00 UTC);
    // No connection, no cursor; nor for an organization that does not exist.
    assert_not_found(c.save_poll_cursor(acme.id, matrix, "s1", t).await);
    assert_not_found(
        c.save_poll_cursor(teamcomm_kernel::OrgId::new(), matrix, "s1", t)
            .await,
    );

    d.save_connection(&connection(acme.id, matrix))
        .await
        .unwrap();
    c.save_poll_cursor(acme.id, matrix, "s1", t).await.unwrap();
    // Replacing the connection's token keeps where polling stands.
    let mut rotated = connection(acme.id, matrix);
    rotated.secret = PlatformSecret::new("bot-token-rotated-0123");
    d.save_connection(&rotated).await.unwrap();
    assert_eq!(
        c.poll_cursor(acme.id, matrix).await.unwrap().as_deref(),
        Some("s1")
    );
    // Disconnecting forgets it: a new connection polls from its start.
    d.remove_connection(acme.id).await.unwrap();
    d.save_connection(&connection(acme.id, matrix))
        .await
        .unwrap();
    assert_eq!(c.poll_cursor(acme.id, matrix).await.unwrap(), None);
}
