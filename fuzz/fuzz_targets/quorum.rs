//! The quorum request parser never panics, and whatever it accepts decides deterministically.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::json::parse_json;
use patchgate::core::quorum::{decide, parse_request};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = parse_json(data)
        && let Ok(request) = parse_request(&value)
    {
        assert_eq!(decide(&request, 5), decide(&request, 5));
    }
});
