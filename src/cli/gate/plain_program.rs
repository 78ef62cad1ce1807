//! The plain program (issue 66; CONTRACT.md 16.2, 16.3; docs/design/replay.md), as the
//! runner runs it: replay_canon.py, replay_neighbours.py and replay_plain.py handed to the
//! suite's interpreter (its flags, but `-W`), twice, on the recorded calls; its lines read
//! strictly, each result written down as the facts hold it (the text shown, cut and redacted;
//! the SHA-256 of the whole).

use std::path::Path;

use serde::Deserialize;
use sha2::Digest as _;

use crate::cli::error::CliError;
use crate::cli::runner::{Outcome, Place, Run};
use crate::cli::sandbox::Room;
use crate::core::gate::{CallEnd, CallResult};

/// The plain program: replay_canon.py, replay_neighbours.py, then replay_plain.py.
const PLAIN: &str = concat!(
    include_str!("programs/replay_canon.py"),
    include_str!("programs/replay_neighbours.py"),
    include_str!("programs/replay_plain.py")
);

/// The most bytes of a plain program's results read.
const MAX_RESULT_BYTES: u64 = 16 << 20;

/// The most characters of a result shown.
const SHOWN_CHARS: usize = 200;

/// A result as the facts hold it: the end, the text shown (cut), the digest of the whole.
pub(super) fn result(end: CallEnd, text: &str) -> CallResult {
    let digest = match end {
        CallEnd::Returned | CallEnd::Raised => {
            Some(crate::core::digest::Digest(sha2::Sha256::digest(text.as_bytes()).into()).to_hex())
        }
        CallEnd::DidNotReturn | CallEnd::Unreplayed => None,
    };
    // (Redacted and its controls escaped first, then cut to fit: of a long text only its
    // first characters are read, the most a secret shown could reach into.)
    let head: String = text.chars().take(SHOWN_CHARS * 8).collect();
    let said = crate::cli::redact::text(&head);
    let mut shown: String = said.chars().take(SHOWN_CHARS).collect();
    if said.chars().nth(SHOWN_CHARS).is_some() || head.len() < text.len() {
        shown.pop();
        shown.push('…');
    }
    CallResult { end, shown, digest }
}

/// One plain program's line for a call (or, `n` from 1 on, one of its neighbours).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlainLine {
    pub i: Option<usize>,
    pub n: Option<usize>,
    pub input: Option<String>,
    pub shown: Option<String>,
    pub result: Option<String>,
    /// What an iterator the call returned yields (compared with the base's in its stead).
    pub items: Option<String>,
    pub raised: Option<String>,
    pub unreplayed: Option<String>,
    pub start: Option<usize>,
    pub end: Option<usize>,
}

/// How the plain programs of one replay run: the interpreter (the suite's, its flags but
/// `-W`), their timeout, the label, the patch's room, and the neighbours' literals and bound
/// when the base is compared.
pub(super) struct PlainRun<'a> {
    pub room: &'a Room,
    pub interpreter: Vec<String>,
    pub timeout: std::time::Duration,
    pub label: &'a str,
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
    pub neighbours: Option<(Vec<i64>, u8)>,
}

impl PlainRun<'_> {
    /// The program run twice in `room` on `specs` (`base`: on the base's tree); `None` when
    /// cancelled.
    pub fn twice(
        &self,
        room: &Room,
        whose: &str,
        specs: &[(usize, String)],
        base: bool,
    ) -> Result<Option<[Vec<PlainLine>; 2]>, CliError> {
        let mut argv = self.interpreter.clone();
        argv.extend(["-c".to_owned(), PLAIN.to_owned()]);
        if base {
            argv.push("--base".to_owned());
        }
        if let Some((literals, most)) = &self.neighbours {
            argv.extend([
                "--most".to_owned(),
                most.to_string(),
                "--neighbours".to_owned(),
                serde_json::to_string(literals).unwrap_or_else(|_| "[]".to_owned()),
            ]);
        }
        argv.push(crate::cli::runner::JUNIT.to_owned());
        argv.extend(specs.iter().map(|(_, s)| s.clone()));
        let one = |n: usize| -> Result<Option<Vec<PlainLine>>, CliError> {
            let label = format!(
                "{}: its recorded calls made again in a plain program on {whose} ({} of 2)",
                self.label,
                n + 1
            );
            let mut run = Run::new(&label, &argv, self.timeout, Place::Room(room));
            if let Some(flag) = self.cancel {
                run = run.cancel(flag);
            }
            Ok(match run.start()? {
                Outcome::Ran(ran) => Some(
                    ran.receipt_at
                        .as_deref()
                        .map(read_lines)
                        .unwrap_or_default(),
                ),
                Outcome::Cancelled => None,
            })
        };
        // The two at once: each its own process, receipt and working directory, so neither
        // sees the other (issue 66's cost: they ran one after the other).
        let (first, second) = std::thread::scope(|s| {
            let second = s.spawn(|| one(1));
            let first = one(0);
            (
                first,
                second
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            )
        });
        let (Some(first), Some(second)) = (first?, second?) else {
            return Ok(None);
        };
        Ok(Some([first, second]))
    }
}

/// The suite command's interpreter and its own flags, but `-W` (warnings as a plain script
/// has them).
pub(super) fn interpreter(suite: &[String]) -> Option<Vec<String>> {
    let at = crate::cli::runner::pytest_module_at(suite)?;
    let mut out: Vec<String> = Vec::new();
    let mut skip = false;
    for a in suite.get(..at)? {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "-W" {
            skip = true;
            continue;
        }
        if !a.starts_with("-W") {
            out.push(a.clone());
        }
    }
    Some(out)
}

/// The plain program's lines (beside its receipt), size-capped, each read strictly; a line that
/// is not one is left out.
pub(super) fn read_lines(receipt: &Path) -> Vec<PlainLine> {
    use std::io::{BufRead, Read};
    let mut path = receipt.as_os_str().to_owned();
    path.push(".replay");
    let Ok(file) = crate::cli::runner::open_report(Path::new(&path)) else {
        return Vec::new();
    };
    std::io::BufReader::new(file.take(MAX_RESULT_BYTES))
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| {
            let v = crate::core::json::strict_value(l.as_bytes()).ok()?;
            serde_json::from_value(v).ok()
        })
        .collect()
}
