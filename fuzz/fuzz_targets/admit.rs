//! The admission request parser never panics; whatever it accepts decides deterministically;
//! and the record of an admission is itself accepted as a proof (what `--write` commits, a
//! `/quorum` or `/gate` catalog row reads back).
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::admit::{AdmitOutcome, decide, parse_record, parse_request};
use patchgate::core::json::parse_json;
use patchgate::core::problem::Errors;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = parse_json(data)
        && let Ok(request) = parse_request(&value)
    {
        let decision = decide(&request);
        assert_eq!(decision, decide(&request));
        let answer = decision.answer(&request, "id".into());
        assert_eq!(answer.record.is_some(), decision.outcome == AdmitOutcome::Admitted);
        if let Some(record) = answer.record {
            let v = serde_json::to_value(&record).expect("a record serializes");
            let mut e = Errors::default();
            let read = parse_record(&v, "/admitted", Some(&request.catch_exit_codes), &mut e);
            assert_eq!(read.as_ref(), Some(&record), "{e:?}");
        }
    }
});
