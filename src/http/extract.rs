//! Request extractors that reject in our own problem+json shape: the JSON body (415 for a
//! wrong media type, 413 over the limit, 408 when it is too slow to arrive) and `Accept`
//! negotiation.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, HeaderValue, header};

use super::AppState;
use crate::core::problem::Problem;

/// A JSON request body, checked for its media type and read whole, not yet parsed: the
/// decision endpoints parse it straight into their own shallow document types. It holds the
/// request's concurrency slot, taken once the body had arrived.
pub struct JsonBytes(pub Bytes, pub Slot);

/// What a request holds until its answer is built: its concurrency slot, and its body's share
/// of the budget for bodies in memory.
pub struct Slot {
    _decision: tokio::sync::OwnedSemaphorePermit,
    _body: super::budget::BodyShare,
}

impl Slot {
    /// Takes a concurrency slot for a body that has arrived (503 when none is free).
    pub fn take(state: &AppState, body: super::budget::BodyShare) -> Result<Self, Problem> {
        Ok(Self {
            _decision: state.admit()?,
            _body: body,
        })
    }
}

impl FromRequest<AppState> for JsonBytes {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        require_json_content_type(req.headers())?;
        let (body, slot) = read_body(req, state).await?;
        Ok(JsonBytes(body, slot))
    }
}

/// Reads the whole body within the route's size limit (413 past it) at the server's pace
/// (408 when it trickles or takes too long), then takes a concurrency slot (503 when none is
/// free): a client that sends slowly never holds a slot that decisions need.
pub async fn read_body(req: Request, state: &AppState) -> Result<(Bytes, Slot), Problem> {
    let limit = super::body_limit(state.settings(), req.uri().path());
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let (body, share) = super::budget::read_paced(state, req.into_body(), limit).await?;
    Ok((body, Slot::take(state, share)?))
}

/// The request's media type, lower-cased, without parameters (`""` when it sent none): the one
/// reading of `Content-Type` every body extractor uses.
pub fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// `application/json` (or any `+json` type), in UTF-8; anything else is a 415.
fn require_json_content_type(headers: &HeaderMap) -> Result<(), Problem> {
    let unsupported = |got: &str| {
        Problem::new(
            415,
            "unsupported-media-type",
            format!("this endpoint takes `application/json`, not {got}"),
        )
    };
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err(unsupported("a body without a Content-Type"));
    };
    let text = value
        .to_str()
        .map_err(|_| unsupported("an unreadable Content-Type"))?;
    let mut parts = text.split(';');
    let essence = parts.next().unwrap_or("").trim();
    let is_json = essence.eq_ignore_ascii_case("application/json")
        || essence.split_once('/').is_some_and(|(top, sub)| {
            top.eq_ignore_ascii_case("application")
                && sub.len() > 5
                && sub
                    .get(sub.len() - 5..)
                    .is_some_and(|t| t.eq_ignore_ascii_case("+json"))
        });
    if !is_json {
        return Err(unsupported(&format!("`{}`", essence.to_ascii_lowercase())));
    }
    for param in parts {
        if let Some((name, val)) = param.split_once('=')
            && name.trim().eq_ignore_ascii_case("charset")
        {
            let cs = val.trim().trim_matches('"');
            if !cs.eq_ignore_ascii_case("utf-8") && !cs.eq_ignore_ascii_case("utf8") {
                return Err(unsupported(&format!("charset `{cs}` (JSON is UTF-8)")));
            }
        }
    }
    Ok(())
}

/// The answer's media type, by the request's `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Json,
    Text,
    /// `text/markdown`: offered by `/gate` only.
    Markdown,
}

impl Answer {
    fn media(self) -> &'static str {
        match self {
            Answer::Json => "application/json",
            Answer::Text => "text/plain",
            Answer::Markdown => "text/markdown",
        }
    }
}

/// Picks JSON or the one-line text: text only when the client prefers `text/plain` to JSON.
pub fn negotiate(headers: &HeaderMap) -> Answer {
    negotiate_among(headers.get(header::ACCEPT), &[Answer::Json, Answer::Text])
}

/// The request's `Accept` header alone, for the decision handlers: the one header they read
/// themselves (taking the whole `HeaderMap` copied every header of every request).
pub struct Accept(pub Option<HeaderValue>);

impl<S: Sync> axum::extract::FromRequestParts<S> for Accept {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(parts.headers.get(header::ACCEPT).cloned()))
    }
}

/// Picks among `offers` (JSON first) by the request's `Accept`: the highest q-value wins, each
/// offer's q taken from the most specific range that names it (`text/*` names the first text
/// offer only); a tie goes to the earlier offer, so no `Accept`, or `*/*`, answers JSON.
pub fn negotiate_among(accept: Option<&HeaderValue>, offers: &[Answer]) -> Answer {
    let Some(accept) = accept.and_then(|v| v.to_str().ok()) else {
        return Answer::Json;
    };
    let first_text = offers.iter().position(|a| *a != Answer::Json);
    // (specificity, q) of the best-matching range for each offer (at most three: no
    // allocation on the hot path).
    let mut best = [(0u8, 0.0f32); 3];
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
            .and_then(|(_, v)| v.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        for (i, offer) in offers.iter().enumerate() {
            let (kind, _) = offer.media().split_once('/').unwrap_or_default();
            let specificity = if media == offer.media() {
                3
            } else if media.strip_suffix("/*") == Some(kind)
                && (*offer == Answer::Json || first_text == Some(i))
            {
                2
            } else if media == "*/*" {
                1
            } else {
                0
            };
            if let Some(slot) = best.get_mut(i)
                && specificity > slot.0
            {
                *slot = (specificity, q);
            }
        }
    }
    let mut chosen = Answer::Json;
    let mut chosen_q = 0.0f32;
    for (offer, (specificity, q)) in offers.iter().zip(best) {
        if specificity > 0 && q > chosen_q {
            chosen = *offer;
            chosen_q = q;
        }
    }
    chosen
}

/// A body of rows: a JSON array (`application/json`) or NDJSON (`application/x-ndjson`,
/// `application/jsonl`, or `text/plain`: one JSON value a line).
pub struct Rows {
    pub body: Bytes,
    pub ndjson: bool,
    pub slot: Slot,
}

impl FromRequest<AppState> for Rows {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let media = media_type(req.headers());
        let ndjson = match media.as_str() {
            "application/json" => false,
            "application/x-ndjson"
            | "application/ndjson"
            | "application/jsonl"
            | "application/x-jsonlines"
            | "text/plain" => true,
            other => {
                return Err(Problem::new(
                    415,
                    "unsupported-media-type",
                    format!(
                        "this endpoint takes a JSON array (`application/json`) or NDJSON (`application/x-ndjson`), not {}",
                        if other.is_empty() {
                            "a body without a Content-Type".to_owned()
                        } else {
                            format!("`{other}`")
                        }
                    ),
                ));
            }
        };
        let (body, slot) = read_body(req, state).await?;
        Ok(Rows { body, ndjson, slot })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accept(v: &str) -> Answer {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            HeaderValue::from_str(v).unwrap_or_else(|e| panic!("{e}")),
        );
        negotiate(&h)
    }

    #[test]
    fn text_only_when_preferred() {
        assert_eq!(negotiate(&HeaderMap::new()), Answer::Json);
        assert_eq!(accept("text/plain"), Answer::Text);
        assert_eq!(accept("application/json"), Answer::Json);
        assert_eq!(accept("*/*"), Answer::Json);
        assert_eq!(accept("text/plain, application/json"), Answer::Json);
        assert_eq!(accept("text/plain, application/json;q=0.5"), Answer::Text);
        assert_eq!(accept("text/*"), Answer::Text);
        assert_eq!(accept("text/plain;q=0"), Answer::Json);
        assert_eq!(accept("image/png"), Answer::Json);
    }

    #[test]
    fn markdown_only_where_offered() {
        let offers = [Answer::Json, Answer::Text, Answer::Markdown];
        let among = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, HeaderValue::from_static(v));
            negotiate_among(h.get(header::ACCEPT), &offers)
        };
        assert_eq!(among("text/markdown"), Answer::Markdown);
        assert_eq!(among("text/plain"), Answer::Text);
        assert_eq!(among("text/*"), Answer::Text);
        assert_eq!(among("*/*"), Answer::Json);
        assert_eq!(
            among("text/markdown, application/json;q=0.9"),
            Answer::Markdown
        );
        assert_eq!(among("text/markdown;q=0.5, text/plain"), Answer::Text);
        // `/route` does not offer Markdown.
        assert_eq!(accept("text/markdown"), Answer::Json);
    }
}
