//! A source file as its interpreter reads it (CONTRACT.md section 15.1), or why the reader
//! cannot say: a reader that decodes or splits lines differently from the interpreter reads
//! another program. Python is decoded as CPython's tokenizer does (PEP 263: a coding cookie on
//! the first or second line, a UTF-8 byte-order mark) and split into lines at `\r\n`, `\r` and
//! `\n` alike; a form feed inside a line's indentation (which CPython and the parser may count
//! differently) or a NUL byte (which CPython refuses) leaves the file unread. Rust is UTF-8
//! and rustc ends lines at `\n` only, as the parser does.

use crate::core::gate::UnreadReason;

/// A file's text as the interpreter reads it, split into lines as it splits them, each line
/// mapped to the line git counts it on (what a reviewer sees in the diff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// UTF-8, lines ended by `\n` only.
    pub text: Vec<u8>,
    /// For each line of `text` (0-based), its 1-based line in the file as git splits it.
    git_line: Vec<usize>,
}

impl Source {
    /// The git line of 1-based line `line` of [`Source::text`].
    pub fn git_line(&self, line: usize) -> usize {
        self.git_line
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(line)
    }

    /// The interpreter's lines (1-based) that lie on the git lines `added` (sorted): one git
    /// line may hold several (a bare `\r` splits it).
    pub fn lines_on(&self, added: &[usize]) -> Vec<usize> {
        self.git_line
            .iter()
            .enumerate()
            .filter(|(_, g)| added.binary_search(g).is_ok())
            .map(|(i, _)| i + 1)
            .collect()
    }

    /// Each line (1-based) of the text, trimmed and clipped for a report, the text split once
    /// (split again for each hit, a hostile file's many hits were quadratic).
    pub fn line_texts(&self) -> impl Fn(usize) -> String + '_ {
        let lines: Vec<&[u8]> = self.text.split(|b| *b == b'\n').collect();
        move |line| clip_line(lines.get(line.wrapping_sub(1)).copied().unwrap_or_default())
    }
}

/// A line of code for a report: trimmed, its first 200 characters.
fn clip_line(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// Why a file is unread, and what exactly.
pub type Unread = (UnreadReason, Option<String>);

/// A Python file as CPython reads it.
pub fn python(raw: &[u8]) -> Result<Source, Unread> {
    let body = raw.strip_prefix(b"\xef\xbb\xbf").unwrap_or(raw);
    if let Some(codec) = coding_cookie(body)
        && normal_codec(&codec) != "utf-8"
    {
        return Err((UnreadReason::CodingCookie, Some(clip(&codec))));
    }
    if let Err(e) = std::str::from_utf8(body) {
        return Err((
            UnreadReason::NotUtf8,
            Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
        ));
    }
    if body.contains(&0) {
        return Err((UnreadReason::Unparsed, Some("a NUL byte".to_owned())));
    }
    let source = split(body, true);
    if let Some(line) = feed_in_indentation(&source.text) {
        return Err((
            UnreadReason::AmbiguousIndentation,
            Some(format!("line {}", source.git_line(line))),
        ));
    }
    Ok(source)
}

/// A Rust file as rustc reads it: UTF-8 (a byte-order mark allowed), lines at `\n`.
pub fn rust(raw: &[u8]) -> Result<Source, Unread> {
    let body = raw.strip_prefix(b"\xef\xbb\xbf").unwrap_or(raw);
    if let Err(e) = std::str::from_utf8(body) {
        return Err((
            UnreadReason::NotUtf8,
            Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
        ));
    }
    Ok(split(body, false))
}

/// The longest line a JavaScript file may have to be read: past it, the file is minified or
/// generated, which no reviewer reads.
const MAX_JAVASCRIPT_LINE: usize = 1000;

/// A JavaScript or TypeScript file as Node reads it: UTF-8 (a byte-order mark allowed), lines
/// at `\n`, `\r\n` and a bare `\r`. Unread: a NUL byte, a U+2028 or U+2029 (JavaScript ends
/// a line there, where a comment ends: the parser may not), a line over
/// [`MAX_JAVASCRIPT_LINE`] characters (minified).
pub fn javascript(raw: &[u8]) -> Result<Source, Unread> {
    let body = raw.strip_prefix(b"\xef\xbb\xbf").unwrap_or(raw);
    let text = std::str::from_utf8(body).map_err(|e| {
        (
            UnreadReason::NotUtf8,
            Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
        )
    })?;
    if body.contains(&0) {
        return Err((UnreadReason::Unparsed, Some("a NUL byte".to_owned())));
    }
    if text.contains(['\u{2028}', '\u{2029}']) {
        return Err((
            UnreadReason::Unparsed,
            Some("a U+2028 or U+2029, where JavaScript ends a line".to_owned()),
        ));
    }
    if let Some((n, _)) = text
        .split(['\n', '\r'])
        .enumerate()
        .find(|(_, l)| l.chars().count() > MAX_JAVASCRIPT_LINE)
    {
        return Err((
            UnreadReason::OverReadLimit,
            Some(format!(
                "a line over {MAX_JAVASCRIPT_LINE} characters (minified or generated), near line {}",
                n + 1
            )),
        ));
    }
    Ok(split(body, true))
}

/// `body` with its lines ended by `\n` only: with `carriage`, a `\r\n` or a bare `\r` ends a
/// line too (CPython's universal newlines), each mapped to the git line it lies on.
fn split(body: &[u8], carriage: bool) -> Source {
    let mut text = Vec::with_capacity(body.len());
    let mut git_line = vec![1];
    let mut at_git = 1;
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        match b {
            b'\n' => {
                at_git += 1;
                text.push(b'\n');
                git_line.push(at_git);
            }
            b'\r' if carriage => {
                text.push(b'\n');
                if body.get(i + 1) == Some(&b'\n') {
                    // `\r\n` is one line break.
                    i += 1;
                    at_git += 1;
                }
                git_line.push(at_git);
            }
            _ => text.push(b),
        }
        i += 1;
    }
    Source { text, git_line }
}

/// The PEP 263 cookie, as CPython's tokenizer finds it: on the first line, or on the second
/// when the first is blank or a comment only; `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`.
fn coding_cookie(body: &[u8]) -> Option<String> {
    let mut lines = body.split(|b| *b == b'\n' || *b == b'\r');
    let first = lines.next()?;
    if let Some(c) = cookie_on(first) {
        return Some(c);
    }
    let blank_or_comment = {
        let t = first.trim_ascii_start();
        t.is_empty() || t.starts_with(b"#")
    };
    if !blank_or_comment {
        return None;
    }
    cookie_on(lines.next()?)
}

fn cookie_on(line: &[u8]) -> Option<String> {
    let start = line
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\x0c'))?;
    let comment = line.get(start..)?.strip_prefix(b"#")?;
    let text = String::from_utf8_lossy(comment);
    // The first `coding` followed by `:` or `=` (`.*?` is lazy).
    let mut from = 0;
    while let Some(at) = text[from..].find("coding") {
        let after = &text[from + at + "coding".len()..];
        if let Some(rest) = after.strip_prefix([':', '=']) {
            let name: String = rest
                .trim_start_matches([' ', '\t'])
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .collect();
            if !name.is_empty() {
                return Some(name);
            }
        }
        from += at + "coding".len();
    }
    None
}

/// CPython's `get_normal_name`: the names it reads as UTF-8 or Latin-1 under one spelling.
fn normal_codec(name: &str) -> String {
    let lower = name.to_ascii_lowercase().replace('_', "-");
    if lower == "utf-8" || lower.starts_with("utf-8-") {
        "utf-8".to_owned()
    } else if ["latin-1", "iso-8859-1", "iso-latin-1"]
        .iter()
        .any(|l| lower == *l || lower.starts_with(&format!("{l}-")))
    {
        "iso-8859-1".to_owned()
    } else {
        lower
    }
}

/// The first line (1-based) whose indentation holds a form feed after a space or a tab: the
/// language reference leaves its effect undefined there, and CPython and the parser differ.
fn feed_in_indentation(text: &[u8]) -> Option<usize> {
    text.split(|b| *b == b'\n')
        .position(|line| {
            let indent = line
                .iter()
                .position(|b| !matches!(b, b' ' | b'\t' | b'\x0c'))
                .unwrap_or(line.len());
            let indent = line.get(..indent).unwrap_or_default();
            indent
                .iter()
                .skip_while(|b| **b == b'\x0c')
                .any(|b| *b == b'\x0c')
        })
        .map(|i| i + 1)
}

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPython's decisions, by hand from PEP 263 and the tokenizer's universal newlines.
    #[test]
    fn python_is_read_as_cpython_reads_it() {
        type Case = (
            &'static [u8],
            Result<(&'static str, Vec<usize>), UnreadReason>,
        );
        let cases: Vec<Case> = vec![
            (b"a = 1\nb = 2\n", Ok(("a = 1\nb = 2\n", vec![1, 2, 3]))),
            // A bare CR ends a line: the code after it is a line of its own, on git's line 1.
            (
                b"# x\rimport sys\nb\n",
                Ok(("# x\nimport sys\nb\n", vec![1, 1, 2, 3])),
            ),
            (b"a\r\nb\r\n", Ok(("a\nb\n", vec![1, 2, 3]))),
            (b"\xef\xbb\xbfa\n", Ok(("a\n", vec![1, 2]))),
            (
                b"# -*- coding: utf-8 -*-\na\n",
                Ok(("# -*- coding: utf-8 -*-\na\n", vec![1, 2, 3])),
            ),
            (
                b"#!/usr/bin/env python\n# vim: set fileencoding=UTF_8 :\n",
                Ok((
                    "#!/usr/bin/env python\n# vim: set fileencoding=UTF_8 :\n",
                    vec![1, 2, 3],
                )),
            ),
            (
                b"# -*- coding: utf-7 -*-\na = 1\n",
                Err(UnreadReason::CodingCookie),
            ),
            (
                b"#!/usr/bin/python\n# coding=latin-1\n",
                Err(UnreadReason::CodingCookie),
            ),
            // Only on the second line when the first is blank or a comment.
            (
                b"a = 1\n# coding: utf-7\n",
                Ok(("a = 1\n# coding: utf-7\n", vec![1, 2, 3])),
            ),
            (b"a = '\xe9'\n", Err(UnreadReason::NotUtf8)),
            (b"a = 1\x00\n", Err(UnreadReason::Unparsed)),
            (
                b"\x0cdef f():\n    pass\n",
                Ok(("\x0cdef f():\n    pass\n", vec![1, 2, 3])),
            ),
            (
                b"class A:\n  \x0c  def f(self):\n        pass\n",
                Err(UnreadReason::AmbiguousIndentation),
            ),
        ];
        for (raw, want) in cases {
            let got = python(raw)
                .map(|s| {
                    (
                        String::from_utf8(s.text.clone()).unwrap(),
                        s.git_line.clone(),
                    )
                })
                .map_err(|(r, _)| r);
            let want = want.map(|(t, l)| (t.to_owned(), l));
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn the_lines_on_git_s_added_lines() {
        let s = python(b"a\r# x\rb\nc\n").unwrap();
        assert_eq!(s.lines_on(&[1]), vec![1, 2, 3]);
        assert_eq!(s.lines_on(&[2]), vec![4]);
        assert_eq!(s.git_line(3), 1);
        assert_eq!(s.line_texts()(3), "b");
    }

    #[test]
    fn rust_ends_lines_at_newline_only() {
        let s = rust(b"// a\rb\nc\n").unwrap();
        assert_eq!(s.text, b"// a\rb\nc\n");
        assert_eq!(
            rust(b"\xff").map_err(|(r, _)| r),
            Err(UnreadReason::NotUtf8)
        );
    }
}
