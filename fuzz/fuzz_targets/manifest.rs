//! The sha256sum manifest parser never panics; what it accepts round-trips through the lines
//! `sha256sum` would write.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::seal::{parse_manifest, push_line, seal};

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = parse_manifest(data) {
        let mut text = Vec::new();
        for e in &entries {
            push_line(&mut text, &e.path, &e.sha256);
        }
        assert_eq!(parse_manifest(&text).as_ref(), Ok(&entries));
        let _ = seal(&entries);
    }
});
