//! Text from outside (case files and their names, agents, plugins) made
//! safe to print: control characters escaped, so that no answer or message
//! can move the cursor, clear a line or recolour the terminal, and so
//! print something that looks like a line of assay's own (`\u001b[2K\r
//! PASS …`).
//!
//! Escaped are the C0 and C1 control characters and DEL, the Unicode line
//! and paragraph separators, and the bidirectional formatting characters
//! (which reorder how a line reads): `\n`, `\r` and `\t` as such, anything
//! else as `\u001b`. [`one_line`] escapes line breaks too; [`lines`] keeps
//! them for messages that span lines (a "Consider …" paragraph) and indents
//! every line after the first, so that outside text can still never begin
//! a line of its own.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is escaped.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c => {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
    }
}

/// `text` for one line of output: every control character escaped, line
/// breaks included.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) { push_escaped(&mut out, c) } else { out.push(c) }
    }
    Cow::Owned(out)
}

/// `text` for output that may span lines: every control character but the
/// line break escaped, and each line after the first indented by `indent`.
pub fn lines<'a>(text: &'a str, indent: &str) -> Cow<'a, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => {
                out.push('\n');
                out.push_str(indent);
            }
            c if needs_escape(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spoofed_pass_line_prints_as_text() {
        assert_eq!(one_line("x\u{1b}[2K\r  PASS [ 0.001s] y"), "x\\u001b[2K\\r  PASS [ 0.001s] y");
        assert_eq!(one_line("a\nb\tc\u{7f}\u{9b}\u{202e}"), "a\\nb\\tc\\u007f\\u009b\\u202e");
        assert!(matches!(one_line("plain é 😀"), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_keep_their_breaks_indented() {
        assert_eq!(lines("first\n\nConsider\u{1b}[31m", "    "), "first\n    \n    Consider\\u001b[31m");
        assert_eq!(lines("one\nPASS", "  "), "one\n  PASS");
        assert!(matches!(lines("plain", "  "), Cow::Borrowed(_)));
    }
}
