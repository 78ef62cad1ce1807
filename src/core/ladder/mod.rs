//! The gate ladder (the second article) and the review of the router (the first article's
//! steps 4-6): scope routing before expensive suites, exit codes read honestly (only 1 is a
//! catch), yield per second, the evidence rule for freezing a flaky test, and the reviews of
//! the decision log and of attributions. Pure: the CLI runs the tiers; this only judges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use strum::{IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use super::fields::{self, Errors, kind_of, object};
use super::json::ArrayRead;
use super::path::RepoPath;
use super::problem::{Problem, pointer_index};
use super::route::{Attribution, Disposition};

mod charts;
mod freeze;
mod history;
mod plan;
mod report;
mod review;
mod rows;

pub use charts::*;
pub use freeze::*;
pub use history::*;
pub use plan::*;
pub use report::*;
pub use review::*;
pub use rows::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_catch_is_a_failure() {
        use crate::core::runs::CatchCodes;
        let pytest = CatchCodes::default();
        assert_eq!(TierVerdict::of_run(Some(0), &pytest), TierVerdict::Pass);
        assert_eq!(TierVerdict::of_run(Some(1), &pytest), TierVerdict::Caught);
        for code in [2, 3, 4, 5, 101, 127, 255] {
            assert_eq!(
                TierVerdict::of_run(Some(code), &pytest),
                TierVerdict::Error,
                "{code}"
            );
        }
        // Killed by its timeout or a signal: no exit code, an error.
        assert_eq!(TierVerdict::of_run(None, &pytest), TierVerdict::Error);
        // A Rust tier declares `catch = [101]`: its failing `cargo test` is a catch.
        let cargo = CatchCodes::new([101]).unwrap_or_default();
        assert_eq!(TierVerdict::of_run(Some(101), &cargo), TierVerdict::Caught);
        assert_eq!(TierVerdict::of_run(Some(1), &cargo), TierVerdict::Error);
    }

    #[test]
    fn median_is_pythons() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
