//! A board's snapshot (`GET boards/{b}/board/`) and its delta feed (`GET boards/{b}/delta/`).
//!
//! The cursor rule, which makes the feed miss nothing and repeat nothing between two cursors:
//! every task write stamps `updated_at` with the store's clock at the write (in Postgres
//! `clock_timestamp()`, inside a short transaction), and a cursor is the store's clock minus
//! [`SAFETY_LAG`], truncated to the second. A delta from `since` answers the rows with
//! `since <= updated_at < cursor` and that cursor; the next call starts where it ended. A write
//! stamped before the cursor has committed by the time the cursor is handed out, as long as its
//! transaction takes less than the lag between its stamp and its commit (task writes take
//! milliseconds). The snapshot hands out the cursor taken before it reads, so a change racing
//! the snapshot comes again in the first delta rather than never.

use teamcomm_kernel::{Error, ErrorCode};
use time::{Duration, OffsetDateTime};

use crate::ports::{ListedBoard, TaskFilter, TaskSort};
use crate::{Board, BoardRef, Plan, PlanActor, State, Task};

/// How far behind the store's clock a cursor stays.
pub const SAFETY_LAG: Duration = Duration::seconds(2);
/// How old an `updated_since` may be (`delta_window_expired`).
pub const MAX_WINDOW_DAYS: i64 = 7;
/// Cards per column in the snapshot.
pub const SNAPSHOT_CARDS: usize = 50;

/// The cursor of the store clock's `now`: `now - SAFETY_LAG`, truncated to the second.
pub fn cursor_at(now: OffsetDateTime) -> OffsetDateTime {
    let lagged = now - SAFETY_LAG;
    lagged.replace_nanosecond(0).unwrap_or(lagged)
}

/// A column of the snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotGroup {
    pub state: State,
    /// The first cards by rank.
    pub tasks: Vec<Task>,
    pub task_count: u64,
    pub has_more: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub board: Board,
    pub groups: Vec<SnapshotGroup>,
    pub delta_cursor: OffsetDateTime,
}

/// What changed on a board between two cursors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Delta {
    /// Live tasks created in the window.
    pub created: Vec<Task>,
    /// Live tasks created before the window and changed in it.
    pub changed: Vec<Task>,
    /// Tasks archived, or moved to another board, in the window.
    pub archived: Vec<Task>,
    pub delta_cursor: Option<OffsetDateTime>,
}

impl Plan {
    /// `GET boards/{b}/board/`: the board's live columns with their first cards by rank.
    pub async fn board_snapshot(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
    ) -> Result<Snapshot, Error> {
        let board = self.visible_board(actor, board).await?;
        let delta_cursor = self.ports.tasks.delta_cursor().await?;
        let states = self.live_states(&board).await?;
        let mut groups = Vec::with_capacity(states.len());
        for state in states {
            let filter = TaskFilter {
                boards: vec![ListedBoard::from(&board)],
                state: Some(state.id),
                ..TaskFilter::default()
            };
            let page = self
                .ports
                .tasks
                .list_tasks(
                    board.org_id,
                    &filter,
                    TaskSort::default(),
                    teamcomm_kernel::PageRequest {
                        offset: 0,
                        limit: SNAPSHOT_CARDS as u64,
                    },
                )
                .await?;
            groups.push(SnapshotGroup {
                state,
                has_more: page.count > page.results.len() as u64,
                task_count: page.count,
                tasks: page.results,
            });
        }
        Ok(Snapshot {
            board,
            groups,
            delta_cursor,
        })
    }

    /// `GET boards/{b}/delta/?updated_since=`: the board's changes since a cursor, at most
    /// 7 days old.
    pub async fn board_delta(
        &self,
        actor: &PlanActor,
        board: &BoardRef,
        since: OffsetDateTime,
    ) -> Result<Delta, Error> {
        let board = self.visible_board(actor, board).await?;
        let cursor = self.ports.tasks.delta_cursor().await?;
        if since < cursor - Duration::days(MAX_WINDOW_DAYS) {
            return Err(Error::new(
                ErrorCode::DeltaWindowExpired,
                "That cursor is older than 7 days; read the board again.",
            )
            .with_extra("max_window_days", MAX_WINDOW_DAYS));
        }
        let mut delta = Delta {
            delta_cursor: Some(cursor.max(since)),
            ..Delta::default()
        };
        if since >= cursor {
            return Ok(delta);
        }
        let rows = self
            .ports
            .tasks
            .board_changes(board.org_id, board.id, since, cursor)
            .await?;
        for task in rows {
            if task.is_archived || task.board_id != board.id {
                delta.archived.push(task);
            } else if task.created_at >= since {
                delta.created.push(task);
            } else {
                delta.changed.push(task);
            }
        }
        Ok(delta)
    }
}

/// `updated_since` as the wire writes it (`YYYY-MM-DDTHH:MM:SSZ`, fractions and offsets
/// taken too); anything else is `invalid_filter_value`.
pub fn parse_cursor(raw: Option<&str>) -> Result<OffsetDateTime, Error> {
    let refuse = || {
        Error::new(
            ErrorCode::InvalidFilterValue,
            "updated_since is a time written YYYY-MM-DDTHH:MM:SSZ.",
        )
        .with_extra("parameter", "updated_since")
    };
    let raw = raw.ok_or_else(refuse)?;
    OffsetDateTime::parse(raw.trim(), &time::format_description::well_known::Rfc3339)
        .map_err(|_| refuse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_lag_and_truncate() {
        let now = time::macros::datetime!(2026-11-26 10:00:05.789 UTC);
        assert_eq!(
            cursor_at(now),
            time::macros::datetime!(2026-11-26 10:00:03 UTC)
        );
    }

    #[test]
    fn cursors_parse_strictly() {
        assert_eq!(
            parse_cursor(Some("2026-11-26T10:00:03Z")).unwrap(),
            time::macros::datetime!(2026-11-26 10:00:03 UTC)
        );
        for bad in [None, Some(""), Some("2026-11-26"), Some("yesterday")] {
            let e = parse_cursor(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidFilterValue);
            assert_eq!(e.extra()["parameter"], "updated_since");
        }
    }
}
