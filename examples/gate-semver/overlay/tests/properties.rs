//! Properties of semver over generated inputs (a small xorshift: the gate builds offline).

use semver::{Version, VersionReq};

struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number, small most of the time (where versions live), sometimes anywhere in u64.
    fn number(&mut self) -> u64 {
        match self.next() % 4 {
            0 => self.next(),
            _ => self.next() % 30,
        }
    }

    /// A dot-separated identifier list of alphanumerics and hyphens, or nothing.
    fn identifiers(&mut self) -> String {
        const CHARS: &[u8] = b"abcxyzAZ09-";
        let parts = self.next() % 3;
        (0..parts)
            .map(|_| {
                if self.next() % 2 == 0 {
                    (self.next() % 1000).to_string()
                } else {
                    let len = 1 + self.next() % 5;
                    (0..len)
                        .map(|_| CHARS[(self.next() % CHARS.len() as u64) as usize] as char)
                        .collect::<String>()
                        .replace(|c: char| c.is_ascii_digit(), "a")
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    }
}

/// A version printed and parsed back is the same version, printed the same.
#[test]
fn version_display_parse_roundtrip() {
    let mut g = Xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2000 {
        let (major, minor, patch) = (g.number(), g.number(), g.number());
        let (pre, build) = (g.identifiers(), g.identifiers());
        let mut text = format!("{major}.{minor}.{patch}");
        if !pre.is_empty() {
            text = format!("{text}-{pre}");
        }
        if !build.is_empty() {
            text = format!("{text}+{build}");
        }
        let v = Version::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!((v.major, v.minor, v.patch), (major, minor, patch), "{text}");
        assert_eq!(v.pre.as_str(), pre, "{text}");
        assert_eq!(v.build.as_str(), build, "{text}");
        assert_eq!(v.to_string(), text);
        assert_eq!(Version::parse(&v.to_string()).unwrap(), v, "{text}");
    }
}

/// `>=a`, `<a` and `=a` match a release version exactly as its numbers compare with a's.
#[test]
fn requirement_matches_as_the_numbers_compare() {
    let mut g = Xorshift(0x2545_f491_4f6c_dd1d);
    for _ in 0..2000 {
        let a = (g.next() % 4, g.next() % 4, g.next() % 4);
        let b = (g.next() % 4, g.next() % 4, g.next() % 4);
        let v = Version::new(b.0, b.1, b.2);
        let at = format!("{}.{}.{}", a.0, a.1, a.2);
        for (op, want) in [(">=", b >= a), ("<", b < a), ("=", b == a), (">", b > a)] {
            let req = VersionReq::parse(&format!("{op}{at}")).unwrap();
            assert_eq!(req.matches(&v), want, "{op}{at} against {v}");
        }
    }
}
