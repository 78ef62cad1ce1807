//! What the runner relays of a run's output to its own stderr (the CI log): the code under
//! test wrote it, so it is redacted and fenced in a room (CONTRACT.md sections 13.5, 15.4),
//! and it is capped, per run and over all the runs of one command together (issue 64: a run
//! that printed 256 MiB had 64 MiB of it relayed, and every run of a gate could do as much).

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// The most of one run's output relayed, in bytes.
pub const MAX_RUN_BYTES: u64 = 4 << 20;
/// The most of all runs' output relayed by one command, in bytes.
pub const MAX_TOTAL_BYTES: u64 = 16 << 20;
/// How much of a log's end is read for its tail, beside what is relayed.
const TAIL_READ: u64 = 64 << 10;

static RELAYED: AtomicU64 = AtomicU64::new(0);

/// Takes up to `want` bytes of the command's budget; what was granted.
fn grant(want: u64) -> u64 {
    grant_from(&RELAYED, want)
}

/// Takes up to `want` bytes of the budget `used` counts against; what was granted.
fn grant_from(used: &AtomicU64, want: u64) -> u64 {
    let mut granted = 0;
    let _ = used.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
        granted = want.min(MAX_TOTAL_BYTES.saturating_sub(used));
        Some(used + granted)
    });
    granted
}

/// The patch's text, shown: redacted when it came from a room, its control characters escaped
/// whatever ran it.
fn shown(bytes: &[u8], in_room: bool) -> String {
    let text = String::from_utf8_lossy(bytes);
    if in_room {
        super::redact::text(&text)
    } else {
        crate::core::text::visible(&text).into_owned()
    }
}

/// Relays the run's output `log` (labelled `label`; `must_fail`: the canary's, whose failure
/// is the checker working) to stderr, within the caps, saying how much was left out; returns
/// its last `tail` bytes (whole lines), read from the log's end whatever was relayed.
pub fn relay(
    log: &mut std::fs::File,
    in_room: bool,
    run: (&str, bool),
    tail: Option<usize>,
) -> String {
    let size = log.metadata().map_or(0, |m| m.len());
    let granted = grant(size.min(MAX_RUN_BYTES));
    relay_to(
        &mut std::io::stderr().lock(),
        (log, granted),
        in_room,
        run,
        tail,
    )
}

/// [`relay`], to `err`, of the log's first `granted` bytes.
fn relay_to(
    err: &mut dyn Write,
    (log, granted): (&mut std::fs::File, u64),
    in_room: bool,
    (label, must_fail): (&str, bool),
    tail: Option<usize>,
) -> String {
    let size = log.metadata().map_or(0, |m| m.len());
    let mut text = Vec::new();
    if log.rewind().is_ok() {
        let _ = Read::take(&mut *log, granted).read_to_end(&mut text);
    }
    let shown_text = shown(&text, in_room);
    if must_fail && !shown_text.is_empty() {
        let _ = writeln!(
            err,
            "patchgate: {label}: its output follows; it must fail, so a failure below is the checker working, not a fault"
        );
    }
    // (Nothing to fence when the run printed nothing.)
    let fence = super::redact::fence().filter(|_| in_room && !shown_text.is_empty());
    if let Some((stop, _)) = &fence {
        let _ = err.write_all(stop.as_bytes());
    }
    let _ = err.write_all(shown_text.as_bytes());
    if !shown_text.is_empty() && !shown_text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
    if let Some((_, resume)) = &fence {
        let _ = err.write_all(resume.as_bytes());
    }
    if size > granted {
        let _ = writeln!(
            err,
            "patchgate: {label}: {} more bytes of its output not shown (the gate shows at most {} MiB of a run's output, {} MiB of all runs')",
            size - granted,
            MAX_RUN_BYTES >> 20,
            MAX_TOTAL_BYTES >> 20
        );
    }
    let Some(max_bytes) = tail else {
        return String::new();
    };
    let from = size.saturating_sub(TAIL_READ.max(max_bytes as u64));
    let mut end = Vec::new();
    if log.seek(SeekFrom::Start(from)).is_ok() {
        let _ = Read::take(&mut *log, size - from).read_to_end(&mut end);
    }
    last_lines(&shown(&end, in_room), max_bytes)
}

/// The last `max_bytes` of `text`, whole lines unless one line is all there is, trimmed.
fn last_lines(text: &str, max_bytes: usize) -> String {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let tail = &text[start..];
    let tail = match tail.find('\n') {
        Some(nl) if start > 0 && nl + 1 < tail.len() => &tail[nl + 1..],
        _ => tail,
    };
    tail.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by hand: the budget is shared by every run of the command, each run granted at
    /// most its own cap and what is left.
    #[test]
    fn all_runs_together_relay_at_most_the_budget() {
        let used = AtomicU64::new(0);
        let run = MAX_RUN_BYTES;
        assert_eq!(grant_from(&used, run), run);
        assert_eq!(grant_from(&used, run), run);
        assert_eq!(grant_from(&used, run), run);
        assert_eq!(grant_from(&used, run - 1), run - 1);
        assert_eq!(grant_from(&used, run), 1);
        assert_eq!(grant_from(&used, run), 0);
        assert_eq!(used.load(Ordering::SeqCst), MAX_TOTAL_BYTES);
    }

    /// A run's tail is its log's end, whatever of it was relayed.
    #[test]
    fn the_tail_is_the_log_s_end() {
        let mut log = tempfile::tempfile().unwrap();
        log.write_all(&vec![b'x'; (MAX_RUN_BYTES + 10) as usize])
            .unwrap();
        log.write_all(b"\nlast line\n").unwrap();
        let mut err = Vec::new();
        let tail = relay_to(&mut err, (&mut log, 5), false, ("run", false), Some(100));
        assert_eq!(tail, "last line");
        let said = String::from_utf8(err).unwrap();
        assert_eq!(
            said,
            format!(
                "xxxxx\npatchgate: run: {} more bytes of its output not shown (the gate shows at most 4 MiB of a run's output, 16 MiB of all runs')\n",
                MAX_RUN_BYTES + 5 + 11
            )
        );
    }
}
