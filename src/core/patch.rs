//! The one reader of git's patch text (a unified diff, as `git diff` writes it): each file's
//! part, its header lines and its hunks, every hunk read by the counts its `@@` line gives. So
//! a line inside a hunk is never taken for a header, whatever it holds (an added line
//! `+++ b/x`, a removed `-- a/y`, a context line `diff --git …`): the patch's own text cannot
//! make the reader see another file. Used by the reading (the lines a patch adds), the
//! in-file test split (the hunks between two blobs), the stored mutants' files and the
//! re-proof's check of a mutant's removals. Pure; linear in the text.

/// What a line of a hunk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Removed,
    Added,
}

/// One hunk: `@@ -old_start,old_len +new_start,new_len @@` and its lines (each without its
/// leading `+`, `-` or space; `\ No newline at end of file` is not a line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    pub old_start: u64,
    pub old_len: u64,
    pub new_start: u64,
    pub new_len: u64,
    pub lines: Vec<(LineKind, &'a [u8])>,
}

impl Hunk<'_> {
    /// The lines it adds, each with its line number in the new file.
    pub fn added(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let mut at = self.new_start;
        self.lines
            .iter()
            .filter_map(move |(kind, text)| match kind {
                LineKind::Removed => None,
                LineKind::Context => {
                    at += 1;
                    None
                }
                LineKind::Added => {
                    at += 1;
                    Some((at - 1, *text))
                }
            })
    }

    /// Its runs of removed lines (consecutive `-` lines), in order.
    pub fn removed_runs(&self) -> Vec<Vec<&[u8]>> {
        let mut runs: Vec<Vec<&[u8]>> = Vec::new();
        let mut open = false;
        for (kind, text) in &self.lines {
            match (kind, open) {
                (LineKind::Removed, true) => {
                    if let Some(run) = runs.last_mut() {
                        run.push(text);
                    }
                }
                (LineKind::Removed, false) => {
                    runs.push(vec![text]);
                    open = true;
                }
                _ => open = false,
            }
        }
        runs
    }
}

/// One file's part of a patch: its header lines (`diff --git`, modes, `index`, `---`, `+++`)
/// and its hunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilePart<'a> {
    pub header: Vec<&'a [u8]>,
    pub hunks: Vec<Hunk<'a>>,
}

impl FilePart<'_> {
    /// The path its `--- a/PATH` header names (none for an added file).
    pub fn old_path(&self) -> Option<String> {
        self.header_path(b"--- a/")
    }

    /// The path its `+++ b/PATH` header names (none for a deleted file).
    pub fn new_path(&self) -> Option<String> {
        self.header_path(b"+++ b/")
    }

    fn header_path(&self, prefix: &[u8]) -> Option<String> {
        self.header.iter().find_map(|line| {
            let path = line.strip_prefix(prefix)?;
            let path = path.strip_suffix(b"\r").unwrap_or(path);
            Some(String::from_utf8_lossy(path).into_owned())
        })
    }
}

/// `-a[,b]` or `+c[,d]` of a hunk header: (start, count), a count of 1 left out.
fn range(part: &[u8], sign: u8) -> Option<(u64, u64)> {
    let range = std::str::from_utf8(part.strip_prefix(&[sign])?).ok()?;
    let (start, len) = range.split_once(',').unwrap_or((range, "1"));
    Some((start.parse().ok()?, len.parse().ok()?))
}

/// The hunk an `@@ -a,b +c,d @@` line opens, or `None` when it is not one.
fn hunk_header(line: &[u8]) -> Option<Hunk<'_>> {
    let rest = line.strip_prefix(b"@@ ")?;
    let mut parts = rest.split(|b| *b == b' ').filter(|p| !p.is_empty());
    let (old_start, old_len) = range(parts.next()?, b'-')?;
    let (new_start, new_len) = range(parts.next()?, b'+')?;
    Some(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
        lines: Vec::new(),
    })
}

/// Reads `diff`: a `diff --git` line outside a hunk starts the next file's part (so does a
/// `--- ` line after a part's hunks, in a diff without git's headers); an `@@` line opens a
/// hunk, whose lines are exactly those its counts say. A hunk cut short ends with the text.
pub fn read(diff: &[u8]) -> Vec<FilePart<'_>> {
    let mut parts: Vec<FilePart<'_>> = Vec::new();
    // What the open hunk still holds: old lines, new lines.
    let (mut old, mut new) = (0u64, 0u64);
    for line in diff.split(|b| *b == b'\n') {
        if old > 0 || new > 0 {
            let kind = match line.first() {
                Some(b'+') if new > 0 => {
                    new -= 1;
                    LineKind::Added
                }
                Some(b'-') if old > 0 => {
                    old -= 1;
                    LineKind::Removed
                }
                Some(b' ') => {
                    old = old.saturating_sub(1);
                    new = new.saturating_sub(1);
                    LineKind::Context
                }
                // `\ No newline at end of file` belongs to the line before.
                Some(b'\\') => continue,
                // Not a line of this hunk: it ended early; read the line afresh.
                _ => {
                    (old, new) = (0, 0);
                    read_outside(&mut parts, line, &mut old, &mut new);
                    continue;
                }
            };
            let text = line.get(1..).unwrap_or_default();
            if let Some(hunk) = parts.last_mut().and_then(|p| p.hunks.last_mut()) {
                hunk.lines.push((kind, text));
            }
            continue;
        }
        read_outside(&mut parts, line, &mut old, &mut new);
    }
    parts
}

/// A line outside any hunk: a new file's part, a hunk's header, or a header line.
fn read_outside<'a>(parts: &mut Vec<FilePart<'a>>, line: &'a [u8], old: &mut u64, new: &mut u64) {
    let starts_file = line.starts_with(b"diff --git ")
        || (line.starts_with(b"--- ") && parts.last().is_none_or(|p| !p.hunks.is_empty()));
    if starts_file {
        parts.push(FilePart::default());
    }
    if let Some(hunk) = hunk_header(line) {
        (*old, *new) = (hunk.old_len, hunk.new_len);
        if parts.is_empty() {
            parts.push(FilePart::default());
        }
        if let Some(part) = parts.last_mut() {
            part.hunks.push(hunk);
        }
    } else if let Some(part) = parts.last_mut()
        && part.hunks.is_empty()
        && !line.is_empty()
    {
        part.header.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A patch whose lines look like headers, written by hand: each is read as the line of
    /// its hunk it is, by the counts.
    #[test]
    fn a_hunk_is_read_by_its_counts_whatever_its_lines_hold() {
        // (Joined by hand: a string continuation would eat the context lines' spaces.)
        let diff = [
            "diff --git a/x.py b/x.py",
            "index 1..2 100644",
            "--- a/x.py",
            "+++ b/x.py",
            "@@ -1,3 +1,4 @@",
            " keep",
            "--- a/elsewhere.py",
            "+++ b/elsewhere.py",
            "+diff --git a/y b/y",
            " last",
            "\\ No newline at end of file",
            "diff --git a/z.rs b/z.rs",
            "--- a/z.rs",
            "+++ b/z.rs",
            "@@ -5 +5,2 @@",
            "-old",
            "+new",
            "+@@ -1 +1 @@",
            "",
        ]
        .join("\n");
        let diff = diff.as_bytes();
        let parts = read(diff);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert_eq!(parts[0].old_path().as_deref(), Some("x.py"));
        assert_eq!(parts[0].new_path().as_deref(), Some("x.py"));
        let hunk = &parts[0].hunks[0];
        assert_eq!(
            (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len),
            (1, 3, 1, 4)
        );
        let kinds: Vec<(LineKind, &[u8])> = hunk.lines.clone();
        assert_eq!(
            kinds,
            [
                (LineKind::Context, &b"keep"[..]),
                (LineKind::Removed, b"-- a/elsewhere.py"),
                (LineKind::Added, b"++ b/elsewhere.py"),
                (LineKind::Added, b"diff --git a/y b/y"),
                (LineKind::Context, b"last"),
            ]
        );
        assert_eq!(
            hunk.added().collect::<Vec<_>>(),
            [(2, &b"++ b/elsewhere.py"[..]), (3, b"diff --git a/y b/y")]
        );
        assert_eq!(parts[1].new_path().as_deref(), Some("z.rs"));
        let hunk = &parts[1].hunks[0];
        assert_eq!(
            (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len),
            (5, 1, 5, 2)
        );
        assert_eq!(
            hunk.added().collect::<Vec<_>>(),
            [(5, &b"new"[..]), (6, b"@@ -1 +1 @@")]
        );
        assert_eq!(hunk.removed_runs(), [vec![&b"old"[..]]]);
    }

    /// Runs of removed lines are split by any other line; a diff without git's headers is
    /// read too; text that is no diff gives no part.
    #[test]
    fn removed_runs_plain_diffs_and_no_diff() {
        let diff = b"--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,2 @@\n-a\n-b\n c\n-d\n+e\n";
        let parts = read(diff);
        assert_eq!(parts.len(), 1);
        assert_eq!(
            parts[0].hunks[0].removed_runs(),
            [vec![&b"a"[..], b"b"], vec![&b"d"[..]]]
        );
        assert!(
            read(b"just some text\nno hunks\n")
                .iter()
                .all(|p| p.hunks.is_empty())
        );
        assert!(read(b"").is_empty());
        // A hunk cut short ends with the text; its lines so far are kept.
        let cut = read(b"diff --git a/q b/q\n--- a/q\n+++ b/q\n@@ -1,9 +1,9 @@\n-x\n");
        assert_eq!(cut[0].hunks[0].lines, [(LineKind::Removed, &b"x"[..])]);
    }
}
