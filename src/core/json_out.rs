//! Writing JSON text by hand on the hot path: string literals with RFC 8259 escaping, checked
//! eight bytes at a time. serde_json scans every byte through a table; for the short, almost
//! always clean strings of a decision answer and its log line, a word-at-a-time check that
//! finds nothing to escape and copies the string whole is several times cheaper. Anything
//! written with this is tested byte for byte against serde_json.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is zero (exact: no false positives for "any").
fn has_zero(word: u64) -> bool {
    word.wrapping_sub(ONES) & !word & HIGHS != 0
}

/// Whether any byte of `word` is below 0x20 (exact for thresholds up to 0x80).
fn has_control(word: u64) -> bool {
    word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0
}

/// Whether `s` holds a byte JSON must escape: `"`, `\` or a control character.
pub fn needs_escape(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(8);
    for chunk in &mut chunks {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        let w = u64::from_le_bytes(b);
        if has_control(w)
            || has_zero(w ^ (ONES * u64::from(b'"')))
            || has_zero(w ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends `s` as a JSON string literal, escaped exactly as serde_json escapes it.
pub fn push_str_literal(out: &mut String, s: &str) {
    out.push('"');
    if !needs_escape(s.as_bytes()) {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(s.get(start..i).unwrap_or(""));
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(
                HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'),
            ));
            out.push(char::from(
                HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0'),
            ));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(s.get(start..).unwrap_or(""));
    out.push('"');
}

/// A `fmt::Write` that appends what is written to it JSON-escaped (without the quotes), so a
/// formatted message goes into a JSON line without an intermediate `String`.
pub struct Escaping<'a>(pub &'a mut String);

impl std::fmt::Write for Escaping<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let start = self.0.len();
        push_str_literal(self.0, s);
        // Drop the quotes push_str_literal put around the fragment.
        self.0.pop();
        self.0.remove(start);
        Ok(())
    }
}

/// Appends `"key":` for a key that needs no escaping (a field name of ours).
pub fn push_key(out: &mut String, key: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
}

/// Appends an unsigned integer.
pub fn push_u64(out: &mut String, n: u64) {
    let mut buf = itoa::Buffer::new();
    out.push_str(buf.format(n));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_exactly_as_serde_json() {
        let mut all_bytes = String::new();
        for c in (0u8..0x80).map(char::from) {
            all_bytes.push(c);
        }
        let cases = [
            "",
            "plain",
            "exactly8",
            "sixteen-bytes-ok",
            "quote\"back\\slash",
            "new\nline\ttab\r\u{8}\u{c}",
            "\u{1}ctl\u{1f}\u{7f}",
            "é ünï 日本 🦀",
            "0123456\"",
            "01234567\\",
            all_bytes.as_str(),
        ];
        for s in cases {
            let mut out = String::new();
            push_str_literal(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap_or_default(), "{s:?}");
        }
    }

    #[test]
    fn the_word_check_agrees_with_the_byte_check_at_every_offset() {
        for special in [b'"', b'\\', 0x00, 0x1f, 0x0a] {
            for len in 0..24 {
                for at in 0..len {
                    let mut v = vec![b'a'; len];
                    v[at] = special;
                    assert!(needs_escape(&v), "{special:#x} at {at} of {len}");
                }
                assert!(!needs_escape(&vec![b'a'; len]));
            }
        }
        // Bytes around the thresholds that must not count.
        assert!(!needs_escape(b" !#$[]^~\x7f\x80\xff\xc3\xa9 abc"));
    }
}
