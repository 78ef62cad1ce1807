//! `POST /seal`: the fixture seal of a tree sent as a tar stream (plain or gzip), a
//! `sha256sum` manifest, or JSON; with `expected`, a verdict (match 200, mismatch 409).

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio_util::io::{StreamReader, SyncIoBridge};
use utoipa::ToSchema;

use super::AppState;
use super::budget::{BodyFault, Pace, read_paced, run_cpu};
use super::extract::Slot;
use super::extract::{Answer, negotiate};
use super::layers::with_request_id;
use super::route::json_response;
use crate::core::digest::Digest;
use crate::core::json::parse_json;
use crate::core::problem::{FieldError, Problem};
use crate::core::seal::{self, Entry, SealAnswer, parse_manifest_within, seal_file_line};
use crate::ids::new_decision_id;
use crate::tree::{Limited, StreamFault, TarError, Tree, read_tar_tree};

fn problem_for(e: TarError) -> Problem {
    let status = match &e {
        TarError::Corrupt(_) => 400,
        TarError::BadPath { .. }
        | TarError::Duplicate(_)
        | TarError::DanglingLink(..)
        | TarError::Unsupported(_) => 422,
        TarError::TooLarge(_) => 413,
        TarError::Timeout(_) => 408,
    };
    let slug = match status {
        400 => "corrupt-archive",
        413 => "body-too-large",
        408 => "request-timeout",
        _ => "invalid-archive",
    };
    Problem::new(status, slug, e.to_string())
}

/// Streams a tar body into the parser on a blocking thread; the body is never held whole.
/// The body is held to the server's pace (408 when it trickles, or past the seal timeout),
/// and the upload holds one of the `/seal` upload slots, never a decision's.
async fn seal_tar_body(state: &AppState, body: Body, gzip: bool) -> Result<Tree, Problem> {
    let settings = state.settings().clone();
    let _upload = state.admit_upload()?;
    let fault = StreamFault::default();
    let pace = Pace::new(settings.seal_timeout, settings.min_body_rate);
    let chunks = paced_chunks(body, pace, settings.seal_archive_limit, fault.clone());
    // The parser reads the body as a blocking `Read` on its own thread, as it arrives.
    let reader = SyncIoBridge::new(StreamReader::new(Box::pin(chunks)));
    let limits = settings.tree_limits;
    let parser = tokio::task::spawn_blocking(move || {
        if gzip {
            let inflated = flate2::read::MultiGzDecoder::new(reader);
            let limited = Limited::new(
                inflated,
                settings.seal_decompressed_limit,
                "decompressed archive",
                fault.clone(),
            );
            read_tar_tree(limited, &fault, &limits)
        } else {
            read_tar_tree(reader, &fault, &limits)
        }
    });
    match parser.await {
        Ok(result) => result.map_err(problem_for),
        Err(e) => {
            tracing::error!(error = %e, "the tar parser task failed");
            Err(Problem::new(500, "internal", "an internal error occurred"))
        }
    }
}

/// The body's chunks at the server's pace and within the archive limit. What stops it (too
/// slow, too large, a broken connection) is set on `fault`, so the parser's I/O error can be
/// answered with the right status, and ends the stream.
fn paced_chunks(
    body: Body,
    pace: Pace,
    limit: u64,
    fault: StreamFault,
) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    futures_util::stream::unfold(Some((body, pace, 0u64)), move |state| {
        let fault = fault.clone();
        async move {
            let (mut body, mut pace, total) = state?;
            let stop = |e: TarError| Some((Err(fault.set(e)), None));
            match pace.next(&mut body).await {
                Ok(None) => None,
                Ok(Some(chunk)) if total + chunk.len() as u64 > limit => stop(TarError::TooLarge(
                    format!("the archive is larger than {limit} bytes"),
                )),
                Ok(Some(chunk)) => {
                    let total = total + chunk.len() as u64;
                    Some((Ok(chunk), Some((body, pace, total))))
                }
                Err(BodyFault::TooSlow(detail)) => stop(TarError::Timeout(detail)),
                Err(BodyFault::TooLarge(limit)) => stop(TarError::TooLarge(format!(
                    "the archive is larger than {limit} bytes"
                ))),
                Err(BodyFault::Broken(e)) => stop(TarError::Corrupt(format!(
                    "the body could not be read: {e}"
                ))),
            }
        }
    })
}

/// The `?expected=` query parameter (the only one).
fn query_expected(query: Option<&str>) -> Result<Option<Digest>, Problem> {
    let mut expected = None;
    let mut errors = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == "expected" {
            match Digest::parse_hex(v) {
                Ok(d) => expected = Some(d),
                Err(e) => errors.push(FieldError::new(
                    "/expected",
                    format!("the query parameter `expected` {e}"),
                )),
            }
        } else {
            errors.push(FieldError::new(
                format!("/{k}"),
                format!("unknown query parameter `{k}`; the only one is `expected`"),
            ));
        }
    }
    if errors.is_empty() {
        Ok(expected)
    } else {
        Err(Problem::invalid(errors))
    }
}

fn manifest_problem(errs: Vec<seal::ManifestError>) -> Problem {
    Problem::invalid(
        errs.into_iter()
            .map(|m| FieldError::new("", format!("line {}: {}", m.line, m.detail)))
            .collect::<Vec<_>>(),
    )
}

/// Which kind of body this is, by its media type and encoding.
enum Kind {
    Tar { gzip: bool },
    Manifest,
    Json,
}

fn kind_of_body(headers: &HeaderMap) -> Result<Kind, Problem> {
    let media = super::extract::media_type(headers);
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let gzip_encoded = match encoding.as_str() {
        "" | "identity" => false,
        "gzip" | "x-gzip" => true,
        other => {
            return Err(Problem::new(
                415,
                "unsupported-media-type",
                format!("Content-Encoding `{other}` is not supported; send gzip or nothing"),
            ));
        }
    };
    let kind = match media.as_str() {
        "application/x-tar" | "application/tar" => Kind::Tar { gzip: gzip_encoded },
        "application/gzip" | "application/x-gzip" | "application/x-tar+gzip" => {
            Kind::Tar { gzip: true }
        }
        "text/plain" if !gzip_encoded => Kind::Manifest,
        "application/json" if !gzip_encoded => Kind::Json,
        "" => {
            return Err(Problem::new(
                415,
                "unsupported-media-type",
                "send a Content-Type: application/x-tar, application/gzip, text/plain or application/json",
            ));
        }
        other => {
            return Err(Problem::new(
                415,
                "unsupported-media-type",
                format!(
                    "`{other}`{} is not a seal body; send application/x-tar, application/gzip, text/plain (a sha256sum manifest) or application/json",
                    if gzip_encoded {
                        " with gzip encoding"
                    } else {
                        ""
                    }
                ),
            ));
        }
    };
    Ok(kind)
}

/// Seal a fixtures tree; with `expected`, say whether it matches.
///
/// Bodies: `application/x-tar` (as `tar -cf - fixtures` makes it; also gzip-compressed, as
/// `application/gzip` or with `Content-Encoding: gzip`), streamed and hashed without being
/// held; `text/plain`, a `sha256sum` manifest; `application/json`,
/// `{"files":[{"path","sha256"}],"expected"?,"expected_manifest"?}`. `?expected=HEX` gives the
/// expected seal for tar and manifest bodies. A match (or nothing expected: `outcome: sealed`)
/// is 200; a mismatch — a seal other than `expected`, or drift from `expected_manifest` — is
/// 409 with `outcome: fixture_fault`. With `Accept: text/plain` the body is the seal file line
/// `HEX  -`.
#[utoipa::path(
    post,
    path = "/seal",
    tag = "seal",
    params(("expected" = Option<String>, Query, description = "The expected seal (64 hex digits), for tar and manifest bodies", pattern = "^[0-9a-fA-F]{64}$")),
    request_body(content(
        (Vec<u8> = "application/x-tar"),
        (Vec<u8> = "application/gzip"),
        (String = "text/plain"),
        (SealRequestDoc = "application/json"),
    )),
    responses(
        (status = 200, description = "Sealed; matches the expected seal when one was given (exit 0)",
            content((SealAnswer = "application/json"), (String = "text/plain"))),
        (status = 409, description = "The seal does not match the expected one, or the tree drifted from the expected manifest: fixture_fault (exit 1)",
            content((SealAnswer = "application/json"), (String = "text/plain"))),
        (status = 400, description = "A corrupt or truncated archive, bad gzip, or malformed JSON", body = Problem, content_type = "application/problem+json"),
        (status = 408, description = "The body stopped arriving", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Archive (or its decompressed size, or a manifest) over the limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Not one of the four body types", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A `..` or absolute member, a path twice, a bad digest or manifest line, an unknown field", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn seal(State(state): State<AppState>, req: Request) -> Result<Response, Problem> {
    let (parts, body) = req.into_parts();
    let kind = kind_of_body(&parts.headers)?;
    // A declared length over the limit is refused before reading a byte.
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let limit = match kind {
        Kind::Tar { .. } => state.settings().seal_archive_limit,
        Kind::Manifest | Kind::Json => state.settings().report_body_limit as u64,
    };
    if declared.is_some_and(|n| n > limit) {
        return Err(Problem::new(
            413,
            "body-too-large",
            format!("the body is larger than {limit} bytes"),
        ));
    }
    let query_expected = query_expected(parts.uri.query())?;
    let limits = state.settings().tree_limits;
    // Held until the answer is built (manifest and JSON bodies; a tar upload holds an upload
    // slot while it streams instead).
    let mut _slot = None;
    let (tree, expected, expected_manifest) = match kind {
        Kind::Tar { gzip } => (
            seal_tar_body(&state, body, gzip).await?,
            query_expected,
            None,
        ),
        Kind::Manifest => {
            let (bytes, share) = read_paced(&state, body, limit as usize).await?;
            _slot = Some(Slot::take(&state, share)?);
            let entries = run_cpu(&state, bytes.len(), move || {
                parse_manifest_within(&bytes, &limits).map_err(manifest_problem)
            })
            .await??;
            (
                Tree {
                    entries,
                    bytes: 0,
                    non_regular: 0,
                },
                query_expected,
                None,
            )
        }
        Kind::Json => {
            let (bytes, share) = read_paced(&state, body, limit as usize).await?;
            _slot = Some(Slot::take(&state, share)?);
            let doc = run_cpu(&state, bytes.len(), move || {
                parse_json(&bytes)
                    .and_then(|v| seal::parse_json_seal(&v, &limits).map_err(Problem::invalid))
            })
            .await??;
            (
                Tree {
                    entries: doc.entries,
                    bytes: 0,
                    non_regular: 0,
                },
                // The query's `expected` holds for a JSON body too; given in both places,
                // the two must be the same seal.
                match (doc.expected, query_expected) {
                    (Some(body), Some(query)) if body != query => {
                        return Err(Problem::invalid(vec![FieldError::new(
                            "/expected",
                            "the body's `expected` and the query's `expected` are different seals; give one",
                        )]));
                    }
                    (body, query) => body.or(query),
                },
                doc.expected_manifest,
            )
        }
    };
    let text = negotiate(&parts.headers) == Answer::Text;
    let worker = state.clone();
    // Sorting and hashing the lines is linear-logarithmic in the members: off the async
    // workers for a large tree.
    let weight = tree.entries.len().saturating_mul(64);
    run_cpu(&state, weight, move || {
        seal_answer(&worker, tree, expected, expected_manifest, text)
    })
    .await
}

/// Seals a tree read from any body, logs the decision, and answers.
fn seal_answer(
    state: &AppState,
    tree: Tree,
    expected: Option<Digest>,
    expected_manifest: Option<Vec<Entry>>,
    text: bool,
) -> Response {
    let decision = seal::decide_seal(
        &tree.entries,
        tree.bytes,
        tree.non_regular,
        expected,
        expected_manifest.as_deref(),
    );
    let (exit_code, outcome) = (decision.exit_code(), decision.outcome());
    let decision_id = new_decision_id();
    let seal_hex = decision.sealed.seal.to_hex();
    with_request_id(|request_id| {
        use crate::core::decision::{Field, LogFields, log_key};
        crate::telemetry::log_decision_at(
            "seal",
            request_id,
            &decision_id,
            &LogFields::of([
                (log_key!("seal"), Field::Plain(&seal_hex)),
                (log_key!("files"), decision.sealed.files.into()),
                (log_key!("outcome"), Field::Plain(outcome)),
                (log_key!("exit_code"), exit_code.into()),
            ]),
        );
    });
    state.metrics().record_decision("seal", outcome);
    let status = super::status_for_exit(exit_code);
    if text {
        let mut res = (status, seal_file_line(&decision.sealed.seal)).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return res;
    }
    let answer = decision.answer(decision_id);
    json_response(status, &answer)
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// A seal request as JSON: the tree's files (repo-relative paths, SHA-256 digests).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealRequestDoc {
    files: Vec<SealFileDoc>,
    /// The expected seal (64 hex digits).
    #[schema(nullable = false)]
    expected: Option<super::schema::Sha256Doc>,
    /// The expected files, to name what drifted: a list like `files`, or `sha256sum` text.
    #[schema(nullable = false)]
    expected_manifest: Option<ExpectedManifestDoc>,
}

/// The expected files: a list like `files`, or the text `sha256sum` prints.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ExpectedManifestDoc {
    Files(Vec<SealFileDoc>),
    Text(String),
}

/// One file of a tree.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealFileDoc {
    path: super::schema::RepoPathDoc,
    sha256: super::schema::Sha256Doc,
}
