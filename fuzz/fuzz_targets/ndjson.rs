//! The NDJSON readers (ladder ledgers, decision logs, calibration rows) never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::ladder::{calibrate, parse_calibration_row, parse_ledger, parse_rows, report, review};

fuzz_target!(|data: &[u8]| {
    for ndjson in [true, false] {
        if let Ok(rows) = parse_ledger(data, ndjson) {
            let _ = report(&rows);
        }
        if let Ok(rows) = parse_rows(data, ndjson, parse_calibration_row) {
            let _ = calibrate(&rows);
        }
    }
    let _ = review(data);
});
