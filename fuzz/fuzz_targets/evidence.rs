//! The router's evidence parser (single documents and batches) never panics, and whatever it
//! accepts decides deterministically.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::answer::decide_route;
use patchgate::core::evidence::{BatchDoc, parse_route_bytes, validate};
use patchgate::core::json::parse_json_as;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = parse_route_bytes(data) {
        assert_eq!(decide_route(&request), decide_route(&request));
    }
    if let Ok(BatchDoc::Docs(docs)) = parse_json_as::<BatchDoc>(data) {
        for doc in docs {
            let _ = validate(doc);
        }
    }
});
