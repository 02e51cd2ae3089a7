//! The shape every list port shares: one page of a filtered, ordered query plus the filtered
//! total, and the LIKE pattern of the `search` filters.

use std::pin::Pin;

use diesel::dsl::{CountStar, Limit, Offset, Select};
use diesel::query_dsl::methods::{LimitDsl, OffsetDsl, SelectDsl};
use diesel_async::methods::LoadQuery;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use teamcomm_kernel::{Page, PageRequest, RepoError};

use crate::error::db_error;

/// Page bounds as SQL integers.
pub(crate) fn limits(page: PageRequest) -> (i64, i64) {
    (
        i64::try_from(page.limit).unwrap_or(i64::MAX),
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    )
}

/// A row count from SQL (never negative) as the domain's count.
pub(crate) fn count_from(n: i64) -> Result<u64, RepoError> {
    u64::try_from(n).map_err(|_| RepoError::Other(format!("negative row count {n}")))
}

/// Loads one page of `ordered(filtered())` and counts `filtered()`, decoding each row with
/// `TryFrom`. `filtered` builds the query with its `WHERE` (called twice: once for the page,
/// once for the count); `ordered` adds the `ORDER BY` and the selection.
///
/// The count is skipped when the page itself proves the total: a page that is not empty and
/// not full is the last one, and an empty first page means nothing matches.
///
/// Both statements are built before the returned future, which owns them: they must be
/// `'static` (bind owned values, see `like_pattern`). Boxing the future here is what lets the
/// ports' `async_trait` futures be `Send` (otherwise rustc asks the diesel traits to hold for
/// every lifetime of the boxed queries and fails with "not general enough").
pub(crate) fn load_page<'c, Row, T, Q, P>(
    conn: &'c mut AsyncPgConnection,
    page: PageRequest,
    filtered: impl Fn() -> Q,
    ordered: impl FnOnce(Q) -> P,
) -> Pin<Box<dyn Future<Output = Result<Page<T>, RepoError>> + Send + 'c>>
where
    Q: SelectDsl<CountStar>,
    Select<Q, CountStar>: LoadQuery<'static, AsyncPgConnection, i64> + Send + 'static,
    P: LimitDsl,
    Limit<P>: OffsetDsl,
    Offset<Limit<P>>: LoadQuery<'static, AsyncPgConnection, Row> + Send + 'static,
    Row: Send + 'static,
    T: TryFrom<Row, Error = RepoError> + Send + 'static,
{
    let (limit, offset) = limits(page);
    let rows_query = ordered(filtered()).limit(limit).offset(offset);
    let count_query = filtered().select(diesel::dsl::count_star());
    Box::pin(async move {
        let rows: Vec<Row> = rows_query.load(conn).await.map_err(db_error)?;
        let count = match known_total(page, rows.len()) {
            Some(total) => total,
            None => count_from(count_query.get_result(conn).await.map_err(db_error)?)?,
        };
        Ok(Page {
            count,
            results: rows
                .into_iter()
                .map(T::try_from)
                .collect::<Result<_, _>>()?,
        })
    })
}

/// The total a page of `found` rows proves on its own, if it does.
fn known_total(page: PageRequest, found: usize) -> Option<u64> {
    let found = found as u64;
    let last_page = found > 0 && found < page.limit;
    let nothing_at_all = found == 0 && page.offset == 0 && page.limit > 0;
    (last_page || nothing_at_all).then(|| page.offset + found)
}

/// `%fragment%` with LIKE's wildcards in the fragment escaped.
pub(crate) fn like_pattern(fragment: &str) -> String {
    let escaped = fragment
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(offset: u64, limit: u64) -> PageRequest {
        PageRequest { offset, limit }
    }

    #[test]
    fn a_partial_page_proves_the_total() {
        assert_eq!(known_total(page(0, 25), 3), Some(3));
        assert_eq!(known_total(page(50, 25), 7), Some(57));
        assert_eq!(known_total(page(0, 25), 0), Some(0));
    }

    #[test]
    fn a_full_or_empty_later_page_needs_a_count() {
        assert_eq!(known_total(page(0, 25), 25), None);
        assert_eq!(known_total(page(75, 25), 0), None);
        assert_eq!(known_total(page(0, 0), 0), None);
    }

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(like_pattern("a%b_c\\"), "%a\\%b\\_c\\\\%");
    }

    #[test]
    fn negative_counts_are_errors() {
        assert_eq!(count_from(3).unwrap(), 3);
        assert!(matches!(count_from(-1), Err(RepoError::Other(_))));
    }
}
