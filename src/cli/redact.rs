//! Untrusted text (CONTRACT.md section 13.5): what a run writes is the patch's text, and it
//! reaches the answer, the Markdown report (a pull-request comment) and the CI log. Before it
//! does, the values of the runner's secret variables and token-shaped strings are replaced by
//! `[redacted]`; on GitHub Actions the runs' echoed output is fenced so it cannot issue
//! workflow commands.

use std::sync::OnceLock;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Token shapes, whoever's they are: GitHub (classic and fine-grained), GitLab, Slack, AWS
/// access key ids, PyPI and npm tokens, private keys, HTTP authorization headers (the form
/// `actions/checkout` leaves in `.git/config`), and credentials in URLs.
const SHAPES: [&str; 10] = [
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{22,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"pypi-[A-Za-z0-9_\-]{50,}",
    r"\bnpm_[A-Za-z0-9]{36}\b",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(-----END [A-Z ]*PRIVATE KEY-----|\z)",
    r"(?i)\b(authorization|proxy-authorization)\s*:\s*(basic|bearer|token)\s+[A-Za-z0-9+/=._\-]+",
    r"(?i)\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@",
];

/// Names of the runner's variables whose values are secrets (case-insensitive, anywhere in the
/// name).
const SECRET_NAMES: [&str; 8] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "API_KEY",
    "PRIVATE_KEY",
    "ACCESS_KEY",
];

/// The shortest variable value taken for a secret (shorter ones, `1` or `true`, would redact
/// ordinary text).
const SHORTEST_SECRET: usize = 8;

struct Redactor {
    shapes: regex::Regex,
    values: Vec<String>,
}

fn redactor() -> &'static Redactor {
    static R: OnceLock<Redactor> = OnceLock::new();
    R.get_or_init(|| {
        #[expect(
            clippy::expect_used,
            reason = "a constant pattern; every test that redacts compiles it"
        )]
        let shapes = regex::Regex::new(&SHAPES.join("|")).expect("the token shapes are valid");
        let mut values: Vec<String> = std::env::vars_os()
            .filter_map(|(k, v)| {
                let k = k.to_str()?.to_ascii_uppercase();
                let v = v.into_string().ok()?;
                (SECRET_NAMES.iter().any(|n| k.contains(n)) && v.len() >= SHORTEST_SECRET)
                    .then_some(v)
            })
            .collect();
        // The longest first, so a secret that holds another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { shapes, values }
    })
}

/// `text` with every secret value and token shape replaced by [`REDACTED`], and its control
/// characters but line breaks and tabs escaped (CONTRACT.md section 15.4).
pub fn text(text: &str) -> String {
    let r = redactor();
    let mut out = crate::core::text::visible(text).into_owned();
    for v in &r.values {
        if out.contains(v.as_str()) {
            out = out.replace(v.as_str(), REDACTED);
        }
    }
    match r.shapes.replace_all(&out, REDACTED) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(o) => o,
    }
}

/// Every string of `v` (keys kept) redacted as [`text`] does.
pub fn value(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            let r = text(s);
            if r != *s {
                *s = r;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(value),
        serde_json::Value::Object(map) => map.values_mut().for_each(value),
        _ => {}
    }
}

/// On GitHub Actions, the fence around echoed run output: `::stop-commands::TOKEN` before it
/// and `::TOKEN::` after it (a fresh token per gate, which the code under test cannot know), so
/// no line the runs print is read as a workflow command. `None` elsewhere.
pub fn fence() -> Option<&'static (String, String)> {
    static F: OnceLock<Option<(String, String)>> = OnceLock::new();
    F.get_or_init(|| {
        if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
            let mut bytes = [0u8; 16];
            let token = match std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            {
                Ok(()) => bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                Err(_) => format!(
                    "{:x}{:x}",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos())
                ),
            };
            Some((
                format!("::stop-commands::{token}\n"),
                format!("::{token}::\n"),
            ))
        } else {
            None
        }
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shapes_are_redacted_and_ordinary_text_is_not() {
        for (given, shown) in [
            (
                "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 leaked",
                "token [redacted] leaked",
            ),
            (
                "extraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==",
                "extraheader = [redacted]",
            ),
            (
                "https://user:hunter2hunter2@github.com/o/r",
                "[redacted]github.com/o/r",
            ),
            ("key AKIAIOSFODNN7EXAMPLE here", "key [redacted] here"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\nafter",
                "[redacted]\nafter",
            ),
            ("assert 3 == 4 (ghp_short)", "assert 3 == 4 (ghp_short)"),
            ("https://github.com/o/r", "https://github.com/o/r"),
        ] {
            assert_eq!(text(given), shown, "{given}");
        }
    }

    #[test]
    fn every_string_of_a_document_is_redacted() {
        let mut v = serde_json::json!({
            "failures": [{"id": "t::x", "message": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}],
            "n": 3
        });
        value(&mut v);
        assert_eq!(v["failures"][0]["message"], REDACTED);
        assert_eq!(v["failures"][0]["id"], "t::x");
        assert_eq!(v["n"], 3);
    }
}
