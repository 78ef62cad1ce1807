//! The NDJSON readers (ladder ledgers, decision logs, calibration rows) never panic, and the
//! report gathered row by row equals the report of the parsed rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::ladder::{
    calibrate, parse_calibration_row, parse_ledger, parse_rows, report, report_of_ledger, review,
};

fuzz_target!(|data: &[u8]| {
    for ndjson in [true, false] {
        // The report gathered row by row is the report of the rows.
        let streamed = report_of_ledger(data, ndjson);
        if let Ok(rows) = parse_ledger(data, ndjson) {
            let whole = report(&rows);
            if let Ok(streamed) = streamed {
                assert_eq!(format!("{whole:?}"), format!("{streamed:?}"));
            }
        }
        if let Ok(rows) = parse_rows(data, ndjson, parse_calibration_row) {
            let _ = calibrate(&rows);
        }
    }
    let _ = review(data);
});
