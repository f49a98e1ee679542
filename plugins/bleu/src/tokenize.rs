//! sacrebleu's `13a` tokenizer (mteval-v13a), character for character, and
//! Python's notion of whitespace, which sacrebleu uses to split tokens.

/// Whitespace as Python's `str.split()` and `str.rstrip()` see it: Unicode
/// White_Space plus the information separators U+001C to U+001F.
pub fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Splits on runs of whitespace, as Python's `str.split()` with no argument.
pub fn split_whitespace(text: &str) -> Vec<&str> {
    text.split(is_python_whitespace).filter(|token| !token.is_empty()).collect()
}

/// Strips trailing whitespace, as Python's `str.rstrip()`.
pub fn rstrip(text: &str) -> &str {
    text.trim_end_matches(is_python_whitespace)
}

/// The symbols 13a's first rule surrounds with spaces: the regex class
/// `[\{-\~\[-\` -\&\(-\+\:-\@\/]`.
fn is_symbol(c: u8) -> bool {
    matches!(c, b'{'..=b'~' | b'['..=b'`' | b' '..=b'&' | b'('..=b'+' | b':'..=b'@' | b'/')
}

/// `[0-9]`: ASCII digits only, as in Python's `re` character class.
fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

/// `[\.,]`.
fn is_period_or_comma(c: u8) -> bool {
    c == b'.' || c == b','
}

/// sacrebleu's `Tokenizer13a.__call__` (which sacrebleu applies to the
/// right-stripped segment): drops `<skipped>`, joins `-` + newline, turns
/// newlines into spaces, unescapes `&quot;`, `&amp;`, `&lt;`, `&gt;`, then
/// applies the four rules of `TokenizerRegexp` and normalizes whitespace to
/// single spaces.
///
/// The rules run over UTF-8 bytes: every character they match or test is
/// ASCII, and no byte of a multi-byte character is, so bytes give the same
/// matches as characters.
pub fn tokenize_13a(line: &str) -> String {
    let mut line = line.replace("<skipped>", "").replace("-\n", "").replace('\n', " ");
    if line.contains('&') {
        line = line.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    }
    // Rule 1: `([\{-\~\[-\` -\&\(-\+\:-\@\/])` → ` \1 `, on the line
    // with a space at each end.
    let mut spaced = Vec::with_capacity(line.len() * 2 + 2);
    spaced.push(b' ');
    for &c in line.as_bytes() {
        if is_symbol(c) {
            spaced.extend([b' ', c, b' ']);
        } else {
            spaced.push(c);
        }
    }
    spaced.push(b' ');
    // Rule 2: period and comma unless preceded by a digit,
    // `([^0-9])([\.,])` → `\1 \2 `.
    let bytes = substitute_pairs(
        &spaced,
        is_period_or_comma,
        |a, b| !is_digit(a) && is_period_or_comma(b),
        |a, b| [a, b' ', b, b' '],
    );
    // Rule 3: period and comma unless followed by a digit,
    // `([\.,])([^0-9])` → ` \1 \2`.
    let bytes = substitute_pairs(
        &bytes,
        is_period_or_comma,
        |a, b| is_period_or_comma(a) && !is_digit(b),
        |a, b| [b' ', a, b' ', b],
    );
    // Rule 4: dash when preceded by a digit, `([0-9])(-)` → `\1 \2 `.
    let bytes = substitute_pairs(&bytes, |c| c == b'-', |a, b| is_digit(a) && b == b'-', |a, b| [a, b' ', b, b' ']);

    // Only ASCII bytes were inserted, next to ASCII bytes or at character
    // boundaries, so the bytes are still UTF-8.
    let text = String::from_utf8(bytes).expect("the rules keep UTF-8 intact");
    split_whitespace(&text).join(" ")
}

/// `re.sub` for a pattern of exactly two single-character classes: scans
/// left to right, replaces each non-overlapping match and resumes after it.
///
/// Every match has a `trigger` byte on one side, so the stretches between
/// trigger bytes are copied whole: no pair starting before the byte ahead
/// of the next trigger can match.
fn substitute_pairs(
    bytes: &[u8],
    trigger: impl Fn(u8) -> bool,
    matches: impl Fn(u8, u8) -> bool,
    replace: impl Fn(u8, u8) -> [u8; 4],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 2);
    let mut i = 0;
    while i < bytes.len() {
        let Some(next) = bytes[i..].iter().position(|&b| trigger(b)) else {
            out.extend_from_slice(&bytes[i..]);
            break;
        };
        let first = (i + next).saturating_sub(1).max(i);
        out.extend_from_slice(&bytes[i..first]);
        i = first;
        // The pairs at the byte before the trigger and at the trigger.
        for _ in 0..2 {
            if i >= bytes.len() {
                break;
            }
            if i + 1 < bytes.len() && matches(bytes[i], bytes[i + 1]) {
                out.extend(replace(bytes[i], bytes[i + 1]));
                i += 2;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}
