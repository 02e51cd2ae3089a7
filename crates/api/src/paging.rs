//! The list envelope `{count, next, previous, results}` and its parameters. Both page styles are
//! accepted: `page`/`page_size` (default 25, max 100) and `limit`/`offset`. `next`/`previous` are
//! absolute URLs on `TEAMCOMM_BASE_URL` carrying every query parameter of the request, so a client
//! that follows them verbatim keeps its filters.

use std::future::{Ready, ready};

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use teamcomm_kernel::{Error, Page, PageRequest};
use utoipa::{IntoParams, ToSchema};

use crate::error::ApiError;
use crate::extract::query_de::{PAGING, encode, from_query_string, url_pairs};
use crate::params::{AtLeastOne, Offset};
use crate::state::AppState;

/// The paging parameters every list accepts. Every one that is present must be valid, even when
/// the other style wins; `limit`/`offset` win over `page`/`page_size`.
#[derive(Debug, Clone, Copy, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// 1-based page number.
    #[param(inline)]
    pub page: Option<AtLeastOne>,
    /// Results per page: default 25, at most 100.
    #[param(inline)]
    pub page_size: Option<AtLeastOne>,
    /// Results per page in the offset style: default 25, at most 100.
    #[param(inline)]
    pub limit: Option<AtLeastOne>,
    /// Results to skip in the offset style.
    #[param(inline)]
    pub offset: Option<Offset>,
}

/// The filters of a list that has none: only paging.
#[derive(Debug, Deserialize, IntoParams)]
pub struct NoFilters {}

/// How the caller asked to page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Page { page: u64, size: u64 },
    Offset { offset: u64, limit: u64 },
}

impl PageParams {
    /// True when the caller named any paging parameter.
    pub fn given(&self) -> bool {
        self.page.is_some()
            || self.page_size.is_some()
            || self.limit.is_some()
            || self.offset.is_some()
    }

    fn style(&self) -> Style {
        let clamp = |size: Option<AtLeastOne>| {
            size.map_or(PageRequest::DEFAULT_SIZE, |s| s.0)
                .min(PageRequest::MAX_SIZE)
        };
        if self.limit.is_some() || self.offset.is_some() {
            Style::Offset {
                offset: self.offset.map_or(0, |o| o.0),
                limit: clamp(self.limit),
            }
        } else {
            Style::Page {
                page: self.page.map_or(1, |p| p.0),
                size: clamp(self.page_size),
            }
        }
    }

    /// The same parameters with `size` as the page size when the caller names none (lists
    /// whose clients expect another default than 25). With no paging at all the list pages
    /// in the offset style.
    pub fn with_default_size(mut self, size: u64) -> Self {
        if self.limit.is_none() && self.page_size.is_none() {
            if self.page.is_some() && self.offset.is_none() {
                self.page_size = Some(AtLeastOne(size));
            } else {
                self.limit = Some(AtLeastOne(size));
            }
        }
        self
    }

    pub fn request(&self) -> PageRequest {
        match self.style() {
            Style::Page { page, size } => PageRequest {
                offset: (page - 1).saturating_mul(size),
                limit: size,
            },
            Style::Offset { offset, limit } => PageRequest { offset, limit },
        }
    }
}

/// What a list's `next`/`previous` links are made of: the absolute path and the request's
/// filters (every query pair but the paging ones, in their original order).
#[derive(Debug, Clone)]
pub struct Links {
    base_url: String,
    path: String,
    filters: Vec<(String, String)>,
}

impl Links {
    pub fn new(base_url: String, path: &str, query_string: &str) -> Self {
        Links {
            base_url,
            path: path.to_owned(),
            filters: url_pairs(query_string)
                .into_iter()
                .filter(|(k, _)| !PAGING.contains(&k.as_str()))
                .collect(),
        }
    }

    /// Wraps a page into the envelope with absolute links.
    pub fn envelope<T>(&self, params: &PageParams, page: Page<T>) -> ListEnvelope<T> {
        let req = params.request();
        let has_next = req.offset.saturating_add(page.results.len() as u64) < page.count;
        let has_previous = req.offset > 0;
        let link = |style: Style| -> String {
            let mut query: Vec<(String, String)> = self.filters.clone();
            match style {
                Style::Page { page, size } => {
                    query.push(("page".into(), page.to_string()));
                    query.push(("page_size".into(), size.to_string()));
                }
                Style::Offset { offset, limit } => {
                    query.push(("limit".into(), limit.to_string()));
                    query.push(("offset".into(), offset.to_string()));
                }
            }
            let qs: Vec<String> = query
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect();
            format!("{}{}?{}", self.base_url, self.path, qs.join("&"))
        };
        let (next, previous) = match params.style() {
            Style::Page { page, size } => (
                has_next.then(|| {
                    link(Style::Page {
                        page: page + 1,
                        size,
                    })
                }),
                has_previous.then(|| {
                    link(Style::Page {
                        page: page - 1,
                        size,
                    })
                }),
            ),
            Style::Offset { offset, limit } => (
                has_next.then(|| {
                    link(Style::Offset {
                        offset: offset + limit,
                        limit,
                    })
                }),
                has_previous.then(|| {
                    link(Style::Offset {
                        offset: offset.saturating_sub(limit),
                        limit,
                    })
                }),
            ),
        };
        ListEnvelope {
            count: page.count,
            next,
            previous,
            results: page.results,
        }
    }
}

/// A list request: its filters, its paging, and its links.
#[derive(Debug)]
pub struct ListQuery<T> {
    pub filters: T,
    pub paging: PageParams,
    links: Links,
}

impl<T> ListQuery<T> {
    /// Wraps one page into `{count, next, previous, results}`.
    pub fn envelope<R>(&self, page: Page<R>) -> ListEnvelope<R> {
        self.links.envelope(&self.paging, page)
    }
}

impl<T: DeserializeOwned> FromRequest for ListQuery<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let parse = || -> Result<Self, Error> {
            let qs = req.query_string();
            let paging: PageParams = from_query_string(qs)?;
            let filters: T = from_query_string(qs)?;
            let base_url = req
                .app_data::<web::Data<AppState>>()
                .map(|s| s.settings.base_url.clone())
                .unwrap_or_default();
            Ok(ListQuery {
                filters,
                paging,
                links: Links::new(base_url, req.path(), qs),
            })
        };
        ready(parse().map_err(ApiError))
    }
}

/// The list envelope.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListEnvelope<T> {
    /// Results of the whole filtered list.
    pub count: u64,
    /// Absolute URL of the next page, with the same filters.
    pub next: Option<String>,
    /// Absolute URL of the previous page, with the same filters.
    pub previous: Option<String>,
    pub results: Vec<T>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamcomm_kernel::ErrorCode;

    fn paging(uri: &str) -> Result<(PageParams, Links), Error> {
        let (path, qs) = uri.split_once('?').unwrap_or((uri, ""));
        Ok((from_query_string(qs)?, Links::new(String::new(), path, qs)))
    }

    fn request(uri: &str) -> PageRequest {
        paging(uri).unwrap().0.request()
    }

    fn envelope(base: &str, uri: &str, count: u64, n: usize) -> ListEnvelope<u32> {
        let (params, mut links) = paging(uri).unwrap();
        links.base_url = base.to_owned();
        links.envelope(
            &params,
            Page {
                count,
                results: vec![0; n],
            },
        )
    }

    #[test]
    fn page_style_defaults_and_clamps() {
        assert_eq!(
            request("/v1/users/"),
            PageRequest {
                offset: 0,
                limit: 25
            }
        );
        assert_eq!(
            request("/v1/users/?page=3&page_size=10"),
            PageRequest {
                offset: 20,
                limit: 10
            }
        );
        assert_eq!(request("/v1/users/?page_size=1000").limit, 100);
        let e = paging("/v1/users/?page=0").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidFilterValue);
        assert_eq!(e.extra()["parameter"], "page");
        assert_eq!(
            paging("/v1/users/?page_size=x").unwrap_err().extra()["parameter"],
            "page_size"
        );
        assert_eq!(
            paging("/v1/users/?offset=-1").unwrap_err().extra()["parameter"],
            "offset"
        );
    }

    #[test]
    fn links_keep_filters_and_are_absolute() {
        let env = envelope(
            "https://api.example.com",
            "/v1/users/?search=ada%20l&page=2&page_size=10",
            35,
            10,
        );
        assert_eq!(
            env.next.as_deref(),
            Some("https://api.example.com/v1/users/?search=ada%20l&page=3&page_size=10")
        );
        assert_eq!(
            env.previous.as_deref(),
            Some("https://api.example.com/v1/users/?search=ada%20l&page=1&page_size=10")
        );
        assert!(
            envelope("http://h", "/v1/users/?page=4&page_size=10", 35, 5)
                .next
                .is_none()
        );
    }

    #[test]
    fn a_list_may_have_its_own_default_size() {
        let sized = |uri: &str| paging(uri).unwrap().0.with_default_size(20).request();
        assert_eq!(
            sized("/v1/labels/"),
            PageRequest {
                offset: 0,
                limit: 20
            }
        );
        assert_eq!(
            sized("/v1/labels/?offset=40"),
            PageRequest {
                offset: 40,
                limit: 20
            }
        );
        assert_eq!(
            sized("/v1/labels/?page=3"),
            PageRequest {
                offset: 40,
                limit: 20
            }
        );
        // A size the caller names wins.
        assert_eq!(sized("/v1/labels/?limit=5").limit, 5);
        assert_eq!(sized("/v1/labels/?page=2&page_size=7").offset, 7);
        let (params, links) = paging("/v1/labels/?search=a").unwrap();
        let env = links.envelope(
            &params.with_default_size(20),
            Page {
                count: 45,
                results: vec![0; 20],
            },
        );
        assert_eq!(
            env.next.as_deref(),
            Some("/v1/labels/?search=a&limit=20&offset=20")
        );
    }

    #[test]
    fn offset_style() {
        assert_eq!(
            request("/v1/x/?limit=10&offset=10"),
            PageRequest {
                offset: 10,
                limit: 10
            }
        );
        let env = envelope("http://h", "/v1/x/?limit=10&offset=10", 25, 10);
        assert_eq!(
            env.next.as_deref(),
            Some("http://h/v1/x/?limit=10&offset=20")
        );
        assert_eq!(
            env.previous.as_deref(),
            Some("http://h/v1/x/?limit=10&offset=0")
        );
    }
}
