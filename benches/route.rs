//! Criterion benchmarks of the pure core: the ladder alone, and parse + validate + decide of a
//! typical evidence document (the work `/route` does between the socket and the answer).
//!
//! `cargo bench --bench route`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use patchgate::core::answer::decide_route;
use patchgate::core::evidence::parse_route_bytes;
use patchgate::core::route::{Verdict, Verdicts, route};

fn bench(c: &mut Criterion) {
    let v = Verdicts {
        property_check: Verdict::Fail,
        fixture_check: Verdict::Pass,
        flaky_freeze: Verdict::Unknown,
    };
    c.bench_function("ladder: route(verdicts)", |b| {
        b.iter(|| route(black_box(&v)))
    });

    let all: Vec<Verdicts> = Verdicts::every().collect();
    c.bench_function("ladder: all 64 combinations", |b| {
        b.iter(|| {
            all.iter()
                .map(|v| route(black_box(v)).exit_code() as u32)
                .sum::<u32>()
        })
    });

    let doc = br#"{"patch_id":"pr-1841","property_check":"fail","fixture_check":"pass","flaky_freeze":"unknown"}"#;
    c.bench_function("evidence: parse + validate + decide", |b| {
        b.iter(|| parse_route_bytes(black_box(doc)).map(|r| decide_route(&r).decision.exit_code()))
    });

    let scoped = br#"{"patch_id":"pr-7","property_check":"pass","fixture_check":"pass",
        "changed_files":["api/handlers/x.rs","store/counters/mod.rs","docs/a.md"],
        "frozen_tests":[{"id":"t1","covers":["api/handlers_old"]},{"id":"t2","covers":["store/counters"]}]}"#;
    c.bench_function("evidence: scoped freeze parse + derive + decide", |b| {
        b.iter(|| {
            parse_route_bytes(black_box(scoped)).map(|r| decide_route(&r).decision.exit_code())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
