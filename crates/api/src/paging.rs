//! The list envelope `{count, next, previous, results}` and its parameters. Both page styles are
//! accepted: `page`/`page_size` (default 25, max 100) and `limit`/`offset`. `next`/`previous` are
//! absolute URLs on `TEAMCOMM_BASE_URL` carrying every query parameter of the request, so a client
//! that follows them verbatim keeps its filters.

use actix_web::HttpRequest;
use serde::Serialize;
use teamcomm_kernel::{Error, ErrorCode, Page, PageRequest};

/// How the caller asked to page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Page { page: u64, size: u64 },
    Offset { offset: u64, limit: u64 },
}

/// Validated paging parameters of one request.
#[derive(Debug, Clone)]
pub struct Paging {
    style: Style,
    /// The request's query pairs minus the paging ones, in their original order.
    filters: Vec<(String, String)>,
    path: String,
}

const PAGING_KEYS: [&str; 4] = ["page", "page_size", "limit", "offset"];

fn parse_positive(name: &str, raw: &str, min: u64) -> Result<u64, Error> {
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n >= min)
        .ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidFilterValue,
                format!("`{name}` must be a whole number of at least {min}."),
            )
            .with_extra("parameter", name)
        })
}

impl Paging {
    /// Reads `page`, `page_size`, `limit`, `offset` from the request's query string. Every one
    /// that is present must be valid, even when the other style wins; empty values are absent.
    pub fn from_request(req: &HttpRequest) -> Result<Paging, Error> {
        let pairs: Vec<(String, String)> = url_pairs(req.query_string());
        let get = |k: &str| {
            pairs
                .iter()
                .rev()
                .find(|(key, v)| key == k && !v.trim().is_empty())
                .map(|(_, v)| v.as_str())
        };
        let page = get("page")
            .map(|v| parse_positive("page", v, 1))
            .transpose()?;
        let page_size = get("page_size")
            .map(|v| parse_positive("page_size", v, 1))
            .transpose()?;
        let limit = get("limit")
            .map(|v| parse_positive("limit", v, 1))
            .transpose()?;
        let offset = get("offset")
            .map(|v| parse_positive("offset", v, 0))
            .transpose()?;
        let clamp = |size: Option<u64>| {
            size.unwrap_or(PageRequest::DEFAULT_SIZE)
                .min(PageRequest::MAX_SIZE)
        };
        let style = if limit.is_some() || offset.is_some() {
            Style::Offset {
                offset: offset.unwrap_or(0),
                limit: clamp(limit),
            }
        } else {
            Style::Page {
                page: page.unwrap_or(1),
                size: clamp(page_size),
            }
        };
        let filters = pairs
            .into_iter()
            .filter(|(k, _)| !PAGING_KEYS.contains(&k.as_str()))
            .collect();
        Ok(Paging {
            style,
            filters,
            path: req.path().to_owned(),
        })
    }

    pub fn request(&self) -> PageRequest {
        match self.style {
            Style::Page { page, size } => PageRequest {
                offset: (page - 1).saturating_mul(size),
                limit: size,
            },
            Style::Offset { offset, limit } => PageRequest { offset, limit },
        }
    }

    /// Wraps a page into the envelope with absolute links.
    pub fn envelope<T: Serialize>(&self, base_url: &str, page: Page<T>) -> ListEnvelope<T> {
        let req = self.request();
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
            format!("{base_url}{}?{}", self.path, qs.join("&"))
        };
        let (next, previous) = match self.style {
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

/// The list envelope.
#[derive(Debug, Serialize)]
pub struct ListEnvelope<T> {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<T>,
}

/// Decodes `a=1&b=x%20y` into pairs (`+` is a space, as in forms).
pub(crate) fn url_pairs(qs: &str) -> Vec<(String, String)> {
    qs.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'+' {
            out.push(b' ');
        } else if b == b'%' && i + 2 < bytes.len() {
            match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi * 16 + lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            }
        } else {
            out.push(b);
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The request's query parameters; for a repeated key the last value wins, and a parameter
/// sent empty (`?uuid=`) counts as absent.
pub fn query_params(req: &HttpRequest) -> std::collections::HashMap<String, String> {
    url_pairs(req.query_string())
        .into_iter()
        .filter(|(_, v)| !v.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn paging(uri: &str) -> Result<Paging, Error> {
        Paging::from_request(&TestRequest::get().uri(uri).to_http_request())
    }

    fn page(count: u64, n: usize) -> Page<u32> {
        Page {
            count,
            results: vec![0; n],
        }
    }

    #[test]
    fn page_style_defaults_and_clamps() {
        assert_eq!(
            paging("/v1/users/").unwrap().request(),
            PageRequest {
                offset: 0,
                limit: 25
            }
        );
        assert_eq!(
            paging("/v1/users/?page=3&page_size=10").unwrap().request(),
            PageRequest {
                offset: 20,
                limit: 10
            }
        );
        assert_eq!(
            paging("/v1/users/?page_size=1000").unwrap().request().limit,
            100
        );
        assert_eq!(
            paging("/v1/users/?page=0").unwrap_err().code(),
            ErrorCode::InvalidFilterValue
        );
        assert_eq!(
            paging("/v1/users/?page_size=x").unwrap_err().extra()["parameter"],
            "page_size"
        );
    }

    #[test]
    fn links_keep_filters_and_are_absolute() {
        let p = paging("/v1/users/?search=ada%20l&page=2&page_size=10").unwrap();
        let env = p.envelope("https://api.example.com", page(35, 10));
        assert_eq!(
            env.next.as_deref(),
            Some("https://api.example.com/v1/users/?search=ada%20l&page=3&page_size=10")
        );
        assert_eq!(
            env.previous.as_deref(),
            Some("https://api.example.com/v1/users/?search=ada%20l&page=1&page_size=10")
        );
        let last = paging("/v1/users/?page=4&page_size=10")
            .unwrap()
            .envelope("http://h", page(35, 5));
        assert!(last.next.is_none());
    }

    #[test]
    fn offset_style() {
        let p = paging("/v1/x/?limit=10&offset=10").unwrap();
        assert_eq!(
            p.request(),
            PageRequest {
                offset: 10,
                limit: 10
            }
        );
        let env = p.envelope("http://h", page(25, 10));
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
