//! Pinned cases from the sealed fixtures (fixtures/cases.txt): `KIND VALUE` per line, each
//! zeroized; strings become empty, options None, numbers 0.

use zeroize::Zeroize;

fn cases() -> Vec<(String, String)> {
    std::fs::read_to_string("fixtures/cases.txt")
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (kind, value) = l.split_once(' ').unwrap();
            (kind.to_owned(), value.to_owned())
        })
        .collect()
}

/// The same name as a test of tests/zeroize.rs: another test binary, another id.
#[test]
fn zeroize_string() {
    for (kind, value) in cases().into_iter().filter(|(k, _)| k == "string") {
        let mut s = value.clone();
        s.zeroize();
        assert_eq!(s, "", "{kind} {value:?}");
    }
}

#[test]
fn zeroize_option_and_numbers() {
    for (kind, value) in cases() {
        match kind.as_str() {
            "option" => {
                let mut o = Some(value.parse::<u32>().unwrap());
                o.zeroize();
                assert_eq!(o, None, "{kind} {value}");
            }
            "number" => {
                let mut n = value.parse::<i64>().unwrap();
                n.zeroize();
                assert_eq!(n, 0, "{kind} {value}");
            }
            _ => {}
        }
    }
}
