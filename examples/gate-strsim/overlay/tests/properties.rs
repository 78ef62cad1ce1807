//! Properties of strsim over short words (the adopter's own, no dev-dependencies).

const WORDS: [&str; 8] = ["", "a", "kitten", "sitting", "saturday", "sunday", "rosettacode", "raisethysword"];

/// Levenshtein distance is symmetric and zero only between equal strings.
#[test]
fn levenshtein_is_a_distance() {
    for a in WORDS {
        for b in WORDS {
            let d = strsim::levenshtein(a, b);
            assert_eq!(d, strsim::levenshtein(b, a), "{a:?} {b:?}");
            assert_eq!(d == 0, a == b, "{a:?} {b:?}");
        }
    }
}
