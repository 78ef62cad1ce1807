//! The `/route/checks` reader (a projected parse of the forge's documents, then validation)
//! never panics; whatever it accepts decides deterministically, and PENDING is never a go.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::checks::{SHAPE, decide_checks, parse_checks_request};
use patchgate::core::json::parse_projected;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = parse_projected(data, &SHAPE)
        && let Ok(request) = parse_checks_request(&value)
    {
        let outcome = decide_checks(&request);
        assert_eq!(outcome, decide_checks(&request));
        if outcome.decision.is_none() {
            assert!(!outcome.pending.is_empty());
            assert_eq!(outcome.exit_code(), 75);
        }
    }
});
