//! Untrusted text made safe to show (CONTRACT.md section 15.4): what a run printed, a test
//! id, a file name a patch chose reach a terminal, a log, a job summary or an annotation, and a
//! control character there is an instruction to the terminal (a clipboard write, a title, text
//! hidden by "conceal"), not text. Every C0 and C1 control character but a line break and a tab
//! is shown as its escape (`\u{1b}`).

use std::borrow::Cow;

/// `text` with its control characters but `\n` and `\t` escaped.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A control character a terminal may act on: C0 (but line break and tab), DEL and C1.
fn hidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_shown_as_escapes() {
        for (given, shown) in [
            ("plain text\n\tindented", "plain text\n\tindented"),
            ("\u{1b}]52;c;Y3VybA==\u{7}", "\\u{1b}]52;c;Y3VybA==\\u{7}"),
            ("\u{1b}[8mhidden", "\\u{1b}[8mhidden"),
            ("over\rwritten", "over\\rwritten"),
            ("csi \u{9b}2J", "csi \\u{9b}2J"),
            ("del \u{7f}", "del \\u{7f}"),
            ("é ✓", "é ✓"),
        ] {
            assert_eq!(visible(given), shown, "{given:?}");
        }
    }
}
