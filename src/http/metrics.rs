//! Prometheus metrics: requests and latency by route and status, decisions by endpoint and
//! outcome, requests in flight.

use std::sync::{OnceLock, PoisonError, RwLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    endpoint: &'static str,
    outcome: &'static str,
}

fn latency_histogram() -> Histogram {
    // 100 µs .. ~1.6 s
    Histogram::new(exponential_buckets(0.0001, 2.0, 15))
}

pub struct Metrics {
    /// The route labels, one per served path (from the endpoint declaration).
    routes: &'static [&'static str],
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    decisions: Family<DecisionLabels, Counter>,
    in_flight: Gauge,
    /// Resolved counters, by (route, method, status) slot; see [`slot_of`].
    request_handles: Box<[OnceLock<Counter>]>,
    /// Resolved histograms, by route.
    latency_handles: Box<[OnceLock<Histogram>]>,
    /// Resolved decision counters, by the addresses of their (static) label strings.
    decision_handles: RwLock<Vec<(&'static str, &'static str, Counter)>>,
}

/// Most decision counters resolved by label address; past it, each is looked up by label.
const MAX_DECISION_HANDLES: usize = 64;

const METHODS: [&str; 2] = ["GET", "POST"];
const STATUSES: [u16; 16] = [
    200, 400, 401, 404, 405, 408, 409, 413, 415, 422, 423, 424, 429, 500, 503, 504,
];

fn index_of<T: PartialEq + Copy>(list: &[T], item: T) -> Option<usize> {
    list.iter().position(|x| *x == item)
}

/// The cache slot of a (route, method, status), when all three are common ones.
fn slot_of(routes: &[&str], route: &str, method: &str, status: u16) -> Option<usize> {
    let r = index_of(routes, route)?;
    let m = index_of(&METHODS, method)?;
    let s = index_of(&STATUSES, status)?;
    Some((r * METHODS.len() + m) * STATUSES.len() + s)
}

impl Metrics {
    /// Metrics for a server whose route labels are `routes`.
    pub fn new(routes: &'static [&'static str]) -> Self {
        let mut registry = Registry::with_prefix("patchgate");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let decisions = Family::<DecisionLabels, Counter>::default();
        let in_flight = Gauge::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route, method and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "Time from request to response head, by route",
            latency.clone(),
        );
        registry.register(
            "decisions",
            "Decisions made, by endpoint and outcome",
            decisions.clone(),
        );
        registry.register(
            "http_requests_in_flight",
            "Requests being handled now",
            in_flight.clone(),
        );
        Self {
            routes,
            registry,
            requests,
            latency,
            decisions,
            in_flight,
            request_handles: (0..routes.len() * METHODS.len() * STATUSES.len())
                .map(|_| OnceLock::new())
                .collect(),
            latency_handles: (0..routes.len()).map(|_| OnceLock::new()).collect(),
            decision_handles: RwLock::new(Vec::new()),
        }
    }

    pub fn request_started(&self) {
        self.in_flight.inc();
    }

    /// Counts one answered request. The label combinations seen on the hot path resolve their
    /// counter and histogram once; after that a request costs two atomic adds, not two hashed
    /// lookups under a lock.
    pub fn request_finished(
        &self,
        route: &'static str,
        method: &'static str,
        status: u16,
        seconds: f64,
    ) {
        self.in_flight.dec();
        let slot = slot_of(self.routes, route, method, status);
        match slot.and_then(|i| self.request_handles.get(i)) {
            Some(cell) => cell
                .get_or_init(|| {
                    self.requests
                        .get_or_create(&RequestLabels {
                            route,
                            method,
                            status,
                        })
                        .clone()
                })
                .inc(),
            None => self
                .requests
                .get_or_create(&RequestLabels {
                    route,
                    method,
                    status,
                })
                .inc(),
        };
        match index_of(self.routes, route).and_then(|i| self.latency_handles.get(i)) {
            Some(cell) => cell
                .get_or_init(|| self.latency.get_or_create(&RouteLabels { route }).clone())
                .observe(seconds),
            None => self
                .latency
                .get_or_create(&RouteLabels { route })
                .observe(seconds),
        }
    }

    /// Counts one decision. The labels are static strings, so a counter once resolved is found
    /// again by their addresses: a short scan under a read lock, not a hashed lookup.
    pub fn record_decision(&self, endpoint: &'static str, outcome: &'static str) {
        // Address and length: one literal may be stored inside another.
        let same = |(e, o, _): &&(&'static str, &'static str, Counter)| {
            std::ptr::eq(*e, endpoint) && std::ptr::eq(*o, outcome)
        };
        let handles = self
            .decision_handles
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, counter)) = handles.iter().find(same) {
            counter.inc();
            return;
        }
        drop(handles);
        let counter = self
            .decisions
            .get_or_create(&DecisionLabels { endpoint, outcome })
            .clone();
        counter.inc();
        let mut handles = self
            .decision_handles
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if handles.len() < MAX_DECISION_HANDLES && handles.iter().find(same).is_none() {
            handles.push((endpoint, outcome, counter));
        }
    }

    /// The registry in OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
