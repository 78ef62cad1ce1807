//! The report's text helpers: Markdown code spans, prose, a step's summary and capped lists,
//! each shown as it is (control characters escaped, markup escaped).

use std::fmt::Write as _;

/// Longest list the report prints in full; the rest is counted.
pub(super) const MAX_LISTED: usize = 50;

/// A Markdown code span that shows `s` as it is: control characters escaped, `|` escaped for
/// table cells, and a fence longer than any run of backticks inside.
pub(super) fn code(s: &str) -> String {
    let mut shown = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => shown.push_str("\\|"),
            '\n' | '\t' => shown.extend(c.escape_default()),
            c => shown.push_str(&crate::core::text::visible(c.encode_utf8(&mut [0; 4]))),
        }
    }
    let mut longest = 0;
    let mut run = 0;
    for c in shown.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if longest > 0 { " " } else { "" };
    format!("{fence}{pad}{shown}{pad}{fence}")
}

/// Plain text for Markdown prose: characters Markdown would read as markup are escaped.
pub(super) fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) {
            out.push('\\');
        }
        match c {
            '\n' | '\t' => out.extend(c.escape_default()),
            c => out.push_str(&crate::core::text::visible(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// A step's summary for Markdown: its own code spans (a pair of backticks, as the summaries
/// write `[suite] deselect`) shown as code, the rest as [`prose`]; an unpaired backtick is
/// escaped.
pub(super) fn summary_prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`').filter(|&c| c > 0) else {
            break;
        };
        out.push_str(&prose(&rest[..open]));
        out.push_str(&code(&after[..close]));
        rest = &after[close + 1..];
    }
    out.push_str(&prose(rest));
    out
}

pub(super) fn list(out: &mut String, items: impl ExactSizeIterator<Item = String>) {
    let n = items.len();
    for item in items.take(MAX_LISTED) {
        let _ = writeln!(out, "- {item}");
    }
    if n > MAX_LISTED {
        let _ = writeln!(out, "- … and {} more", n - MAX_LISTED);
    }
}
