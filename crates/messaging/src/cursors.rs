//! Where the last poll of an organization's chat platform ended, kept so that polling resumes
//! there after a restart (issue 8 §5). The reply loop reads the cursor before a poll and saves
//! the batch's next cursor only once the batch's events were handed over: a crash in between
//! reads the batch again (whoever takes the events takes each once), and no reply is lost.

use async_trait::async_trait;
use teamcomm_kernel::{OrgId, RepoError};
use time::OffsetDateTime;

use crate::platform::PlatformKind;

/// The poll cursors of the organizations' platform connections. A cursor belongs to the
/// connection: removing the connection forgets it.
#[async_trait]
pub trait PollCursors: Send + Sync + 'static {
    /// Where the last poll of `org`'s platform `kind` ended; `None` when it was never saved,
    /// or saved for another kind.
    async fn poll_cursor(
        &self,
        org: OrgId,
        kind: PlatformKind,
    ) -> Result<Option<String>, RepoError>;

    /// Records where the last poll of `org`'s platform `kind` ended, replacing the cursor it
    /// had; `NotFound` when `org` has no platform connected.
    async fn save_poll_cursor(
        &self,
        org: OrgId,
        kind: PlatformKind,
        cursor: &str,
        at: OffsetDateTime,
    ) -> Result<(), RepoError>;
}
