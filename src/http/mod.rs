//! The HTTP edge: axum handlers that parse, call the pure core, and answer.
//!
//! [`app`] builds the whole service (routes and every layer) in one place, so the tests, the
//! benchmark and `patchgate serve` run the same stack.

mod admit;
pub mod budget;
mod checks;
mod decide;
mod error;
mod extract;
mod gate;
mod ladder;
pub mod layers;
pub mod metrics;
pub mod openapi;
mod ops;
mod page;
mod quorum;
mod route;
mod schema;
pub mod seal;
pub mod watchdog;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use tokio::net::TcpListener;
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::core::problem::Problem;

pub use error::problem_response;

/// Service settings that shape every request (each one a flag and environment variable).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Largest accepted decision body, in bytes.
    pub decision_body_limit: usize,
    /// The freeze-debt cap `/quorum` uses when a request names none.
    pub debt_cap: u64,
    /// Largest `/seal` archive as sent (compressed or not), in bytes.
    pub seal_archive_limit: u64,
    /// Largest `/seal` archive after gzip decompression (a gzip bomb stops here), in bytes.
    pub seal_decompressed_limit: u64,
    /// Largest report, review or manifest body (`/seal` manifests and JSON), in bytes.
    pub report_body_limit: usize,
    /// The bearer token every decision endpoint requires; `None`: no auth.
    pub token: Option<BearerToken>,
    /// Requests handled at once; past it, answered 503 with `Retry-After` at once.
    pub max_concurrency: usize,
    /// Longest a client may take to send a request's headers (slowloris guard).
    pub header_read_timeout: Duration,
    /// Longest the drain waits for in-flight requests after SIGTERM before exiting anyway.
    pub drain_timeout: Duration,
    /// After SIGTERM, how long to keep accepting while `/readyz` already says 503, so a load
    /// balancer (a Kubernetes endpoint controller) stops sending before the listener closes.
    pub drain_delay: Duration,
    /// Longest a request body may take to arrive in full before it is answered 408. The
    /// decisions themselves are pure CPU work bounded by the body limits, so a slow client is
    /// the only thing that can hold a request open; a timer is armed only while a body is
    /// still arriving, so a request that comes in one piece pays nothing for it.
    pub request_timeout: Duration,
    /// Longest a `/seal` archive may take to arrive in full (it may be large).
    pub seal_timeout: Duration,
    /// Slowest a body may arrive, in bytes a second, judged over each 5-second window: a
    /// client that trickles is answered 408 within one window.
    pub min_body_rate: u64,
    /// `/seal` uploads streamed at once; past it, 503 with `Retry-After`. They have their own
    /// slots so that slow uploads never take the slots decisions need.
    pub max_seal_uploads: usize,
    /// Caps on one tree sent to `/seal` (members, path bytes).
    pub tree_limits: crate::core::seal::TreeLimits,
    /// Longest an answer may wait to be read before the connection is closed.
    pub write_timeout: Duration,
    /// Most bytes of request bodies held in memory at once, over all requests; a body that
    /// would go past it is answered 503 with `Retry-After`. This and the per-request budget
    /// bound the server's memory whatever its clients do.
    pub max_body_bytes: usize,
}

/// The bearer token the decision endpoints require. It never shows: its `Debug` says only that
/// there is one, and [`BearerToken::matches`] takes the same time whatever the token holds.
#[derive(Clone)]
pub struct BearerToken(Arc<[u8]>);

impl BearerToken {
    /// The token, surrounding whitespace trimmed; `None` when nothing is left.
    pub fn new(token: &str) -> Option<Self> {
        let token = token.trim();
        (!token.is_empty()).then(|| Self(Arc::from(token.as_bytes())))
    }

    /// Whether `given` is the token. The time taken depends only on `given`'s length (which
    /// the client chose): every byte of `given` is compared with the token's bytes taken in
    /// turn, without an exit at the first difference or a branch on the token's length, and
    /// the lengths are compared in the same fold. (A hash of both sides does the same at
    /// ten times the cost.)
    pub fn matches(&self, given: &[u8]) -> bool {
        let expected: &[u8] = &self.0;
        let n = expected.len();
        let mut diff = u8::from(given.len() != n);
        let mut j = 0usize;
        for &g in given {
            diff |= g ^ expected.get(j).copied().unwrap_or(0);
            j += 1;
            // Back to the token's first byte after its last, without a branch.
            j &= usize::from(j != n).wrapping_neg();
        }
        diff == 0
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            decision_body_limit: 4 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            debt_cap: crate::core::freeze_ledger::DEFAULT_DEBT_CAP,
            seal_archive_limit: 1024 * 1024 * 1024,
            seal_decompressed_limit: 4 * 1024 * 1024 * 1024,
            report_body_limit: 64 * 1024 * 1024,
            token: None,
            max_concurrency: 512,
            header_read_timeout: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(25),
            drain_delay: Duration::ZERO,
            seal_timeout: Duration::from_secs(600),
            min_body_rate: 1024,
            max_seal_uploads: 8,
            tree_limits: crate::core::seal::TreeLimits::DEFAULT,
            write_timeout: Duration::from_secs(30),
            max_body_bytes: 256 * 1024 * 1024,
        }
    }
}

/// Shared, cheaply cloned state of one server.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings,
    permits: std::sync::Arc<tokio::sync::Semaphore>,
    cpu_slots: std::sync::Arc<tokio::sync::Semaphore>,
    seal_uploads: std::sync::Arc<tokio::sync::Semaphore>,
    body_bytes: std::sync::Arc<tokio::sync::Semaphore>,
    metrics: metrics::Metrics,
    routes: Routes,
    ready: AtomicBool,
    openapi: String,
}

impl AppState {
    pub fn new(settings: Settings) -> Self {
        let routes = Routes::from_declaration();
        Self {
            inner: Arc::new(Inner {
                permits: Arc::new(tokio::sync::Semaphore::new(settings.max_concurrency.max(1))),
                cpu_slots: Arc::new(tokio::sync::Semaphore::new(
                    std::thread::available_parallelism().map_or(1, usize::from),
                )),
                seal_uploads: Arc::new(tokio::sync::Semaphore::new(
                    settings.max_seal_uploads.max(1),
                )),
                body_bytes: Arc::new(tokio::sync::Semaphore::new(
                    settings
                        .max_body_bytes
                        .min(tokio::sync::Semaphore::MAX_PERMITS),
                )),
                settings,
                metrics: metrics::Metrics::new(routes.labels),
                routes,
                ready: AtomicBool::new(true),
                openapi: openapi::document_json(),
            }),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The concurrency limit's permits.
    pub fn permits(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.permits
    }

    /// Takes one of the concurrency limit's slots for a request whose body has arrived, or
    /// answers 503 at once (load shedding: a request that waited would only time out later).
    pub fn admit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, Problem> {
        Arc::clone(&self.inner.permits)
            .try_acquire_owned()
            .map_err(|_| layers::overloaded_problem())
    }

    /// Takes one of the `/seal` upload slots, or answers 503 at once.
    pub fn admit_upload(&self) -> Result<tokio::sync::OwnedSemaphorePermit, Problem> {
        Arc::clone(&self.inner.seal_uploads)
            .try_acquire_owned()
            .map_err(|_| layers::overloaded_problem())
    }

    /// The budget for request bodies held in memory, in bytes.
    pub fn body_bytes(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.body_bytes
    }

    /// One slot per core for CPU-heavy decisions run off the async workers.
    pub fn cpu_slots(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.cpu_slots
    }

    pub fn metrics(&self) -> &metrics::Metrics {
        &self.inner.metrics
    }

    /// Whether `/readyz` says ready; false once draining starts.
    pub fn is_ready(&self) -> bool {
        self.inner.ready.load(Ordering::Relaxed)
    }

    /// Marks the server as draining: `/readyz` answers 503 from now on.
    pub fn start_draining(&self) {
        self.inner.ready.store(false, Ordering::Relaxed);
    }
}

/// The HTTP status twin of a decision's exit code: only a go is 2xx.
pub fn status_for_exit(exit_code: u8) -> StatusCode {
    crate::exit::Exit::from_decision(exit_code)
        .and_then(crate::exit::Exit::http_status)
        .and_then(|s| StatusCode::from_u16(s).ok())
        // Not a decision: fail closed, never a 2xx.
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// The whole service as one tower service: the observing layer wraps the router from outside.
/// (A `Router::layer` would box and clone every route's stack once per request; measured, that
/// was a tenth of a `/route` request's instructions.) Body limits are enforced by the body
/// readers ([`budget::read_paced`]) and, for a declared length, by the observing layer.
pub type App = layers::Observe<Router>;

/// The whole service: routes, problem+json for every error, and the layers.
pub fn app(state: AppState) -> App {
    let (router, _) = endpoints().split_for_parts();
    let router = router.fallback(error::not_found).with_state(state.clone());
    tower::ServiceBuilder::new()
        .layer(layers::ObserveLayer { state })
        .service(router)
}

/// The largest body `route` accepts, for refusing a declared `Content-Length` before a byte of
/// the body is read (and before `Expect: 100-continue` is answered).
pub fn body_limit(settings: &Settings, route: &str) -> u64 {
    match route {
        "/seal" => settings.seal_archive_limit,
        // A forge's check documents are large (a check run carries its app, output, pull
        // requests...), but only a few fields of each are kept while reading.
        "/ladder/report" | "/review" | "/calibrate" | "/route/checks" => {
            settings.report_body_limit as u64
        }
        _ => settings.decision_body_limit as u64,
    }
}

/// Every endpoint, declared once: the public ones merged with the protected ones. The router,
/// the OpenAPI document's paths and the metric labels all come from this list: a new endpoint
/// is one line in [`public_endpoints`] or [`protected_endpoints`] and its `#[utoipa::path]`.
pub fn endpoints() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(protected_endpoints())
        .merge(public_endpoints())
}

/// The decision endpoints: they need the token when the server has one, and are shed under
/// load. Every endpoint is here unless it is listed as public: openness is decided by which
/// list an endpoint is in, never by its documentation tags.
fn protected_endpoints() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(route::route))
        .routes(routes!(route::route_batch))
        .routes(routes!(checks::route_checks))
        .routes(routes!(quorum::quorum))
        .routes(routes!(admit::admit))
        .routes(routes!(gate::gate))
        .routes(routes!(gate::gate_next))
        .routes(routes!(seal::seal))
        .routes(routes!(ladder::plan))
        .routes(routes!(ladder::report))
        .routes(routes!(ladder::freeze))
        .routes(routes!(ladder::review))
        .routes(routes!(ladder::calibrate))
}

/// The endpoints open to anyone, without a token and never shed: health, readiness, metrics,
/// the API document, the page for people, and the static decision tables it renders.
fn public_endpoints() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(route::route_table))
        .routes(routes!(gate::gate_rules))
        .routes(routes!(page::index))
        .routes(routes!(page::script))
        .routes(routes!(page::style))
        .routes(routes!(page::icon))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::metrics))
        .routes(routes!(ops::openapi))
}

/// What the endpoint declaration says about each served path, read once at start-up.
struct Routes {
    /// Every served path: each is its own metric label.
    labels: &'static [&'static str],
    /// The paths that need no token and are never shed.
    open: Vec<&'static str>,
}

impl Routes {
    fn from_declaration() -> Self {
        let public = public_endpoints().into_openapi();
        let mut labels = Vec::new();
        let mut open = Vec::new();
        for path in endpoints().into_openapi().paths.paths.keys() {
            // Leaked once per path at start-up: labels are `&'static str`, so counting a
            // request allocates nothing.
            let label: &'static str = Box::leak(path.clone().into_boxed_str());
            labels.push(label);
            if public.paths.paths.contains_key(path) {
                open.push(label);
            }
        }
        Self {
            labels: Box::leak(labels.into_boxed_slice()),
            open,
        }
    }
}

impl AppState {
    /// The metric label of a request path: the route it names, as a static string, or
    /// `unmatched`.
    pub fn route_label(&self, path: &str) -> &'static str {
        self.inner
            .routes
            .labels
            .iter()
            .find(|r| **r == path)
            .copied()
            .unwrap_or("unmatched")
    }

    /// Whether a route is open: no token needed, never shed.
    pub fn is_open(&self, route: &'static str) -> bool {
        self.inner.routes.open.contains(&route)
    }

    /// Every served path.
    pub fn route_labels(&self) -> &'static [&'static str] {
        self.inner.routes.labels
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then drains: `/readyz` turns 503, the
/// listener closes, in-flight requests finish (up to the drain timeout), and it returns.
///
/// Connections are served by hyper directly, each watched by the server's [`watchdog`] so the
/// header read timeout holds (a client that trickles its headers, or idles on a keep-alive
/// connection, is cut off while the others are served). HTTP/1.1 only.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::TokioIo;
    use tower::ServiceExt;

    let app = app(state.clone());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // No hyper timer: the watchdog keeps the header read deadline, per connection.
    http.header_read_timeout(None).keep_alive(true);
    let watchdog = watchdog::Watchdog::new(state.settings().header_read_timeout);
    let sweeps = tokio::spawn(Arc::clone(&watchdog).run());
    // After the signal: `/readyz` turns 503 at once, accepting goes on for the drain delay.
    let drain_state = state.clone();
    let delay = state.settings().drain_delay;
    let shutdown = async move {
        shutdown.await;
        drain_state.start_draining();
        tracing::info!(delay = ?delay, "draining: /readyz now answers 503");
        tokio::time::sleep(delay).await;
    };
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let (activity, registration) = watchdog.open();
        let id = registration.id();
        let seen = Arc::clone(&activity);
        let service =
            hyper::service::service_fn(move |req: axum::http::Request<hyper::body::Incoming>| {
                let handling = seen.handling();
                let answer = app.clone().oneshot(req.map(axum::body::Body::new));
                async move {
                    let res = answer.await;
                    drop(handling);
                    res
                }
            });
        let io = TokioIo::new(budget::WriteDeadline::new(
            stream,
            state.settings().write_timeout,
            Arc::clone(&activity),
        ));
        let conn = graceful.watch(http.serve_connection(io, service));
        let task = tokio::spawn(async move {
            let _registration = registration;
            // A client that goes away or times out is not the server's error.
            let _ = conn.await;
        });
        watchdog.watch(
            id,
            activity,
            task.abort_handle(),
            tokio::time::Instant::now(),
        );
    }
    drop(listener);
    tracing::info!("listener closed; finishing in-flight requests");
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(state.settings().drain_timeout) => {
            tracing::warn!(timeout = ?state.settings().drain_timeout, "drain timed out; exiting with requests still in flight");
        }
    }
    sweeps.abort();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::BearerToken;

    /// The open paths, written by hand: everything else needs the token.
    #[test]
    fn only_the_public_list_is_open() {
        let state = super::AppState::new(super::Settings::default());
        let mut open: Vec<&str> = state
            .route_labels()
            .iter()
            .copied()
            .filter(|r| state.is_open(r))
            .collect();
        open.sort_unstable();
        assert_eq!(
            open,
            [
                "/",
                "/gate/rules",
                "/healthz",
                "/icon.svg",
                "/metrics",
                "/openapi.json",
                "/page.css",
                "/page.js",
                "/readyz",
                "/route/table",
            ]
        );
        assert!(state.route_labels().len() > open.len());
    }

    #[test]
    fn the_token_matches_itself_only() {
        let token = BearerToken::new("  s3cret-token \n").expect("a token");
        assert!(token.matches(b"s3cret-token"));
        let refused: [&[u8]; 9] = [
            b"",
            b"s",
            b"s3cret-toke",
            b"s3cret-tokenn",
            b"s3cret-tokens3cret-token",
            b"S3cret-token",
            b"s3cret-tokeN",
            b"s3cret\0token",
            b"  s3cret-token \n",
        ];
        for given in refused {
            assert!(
                !token.matches(given),
                "{:?}",
                String::from_utf8_lossy(given)
            );
        }
        // A difference at any one position is seen.
        for at in 0..12 {
            let mut given = b"s3cret-token".to_vec();
            given[at] ^= 1;
            assert!(!token.matches(&given), "difference at {at}");
        }
        assert!(BearerToken::new(" \t\n").is_none());
        assert_eq!(format!("{token:?}"), "BearerToken(..)");
    }
}
