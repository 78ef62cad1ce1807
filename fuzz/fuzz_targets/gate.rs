//! The gate's facts parser never panics; whatever it accepts decides deterministically, and
//! its one-line and Markdown reports are written without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::gate::{decide_gate, markdown, parse_gate_request, text_line};
use patchgate::core::json::parse_json;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = parse_json(data)
        && let Ok(request) = parse_gate_request(&value)
    {
        let decision = decide_gate(&request, 5);
        assert_eq!(decision, decide_gate(&request, 5));
        let answer = decision.answer(&request, "id".to_owned());
        assert_eq!(answer.exit_code, decision.disposition.exit_code());
        let _ = (text_line(&answer), markdown(&answer));
    }
});
