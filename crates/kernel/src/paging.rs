//! Paging types shared by every list.

use serde::Serialize;

/// Which slice of a list the caller asked for, already validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRequest {
    pub offset: u64,
    pub limit: u64,
}

impl PageRequest {
    pub const DEFAULT_SIZE: u64 = 25;
    pub const MAX_SIZE: u64 = 100;

    /// Everything (used for small, bounded lists).
    pub const fn all() -> Self {
        PageRequest {
            offset: 0,
            limit: u64::MAX,
        }
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest {
            offset: 0,
            limit: Self::DEFAULT_SIZE,
        }
    }
}

/// One page of results plus the total count of the filtered list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page<T> {
    pub count: u64,
    pub results: Vec<T>,
}

impl<T> Page<T> {
    /// A page of views borrowing from this page's rows.
    pub fn map_ref<'a, U>(&'a self, f: impl FnMut(&'a T) -> U) -> Page<U> {
        Page {
            count: self.count,
            results: self.results.iter().map(f).collect(),
        }
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            count: self.count,
            results: self.results.into_iter().map(f).collect(),
        }
    }
}
