//! Pinned cases from the sealed fixtures (fixtures/cases.txt): `VERSION MAJOR MINOR PATCH`
//! per line; each version parses to its numbers and prints back as written.

use semver::Version;

#[test]
fn pinned_versions_parse_and_print() {
    let text = std::fs::read_to_string("fixtures/cases.txt").unwrap();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let v = Version::parse(words[0]).unwrap();
        let numbers: Vec<u64> = words[1..].iter().map(|w| w.parse().unwrap()).collect();
        assert_eq!(vec![v.major, v.minor, v.patch], numbers, "{line}");
        assert_eq!(v.to_string(), words[0], "{line}");
    }
}
