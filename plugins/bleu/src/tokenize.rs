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
fn is_symbol(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// `[0-9]`: ASCII digits only, as in Python's `re` character class.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// `[\.,]`.
fn is_period_or_comma(c: char) -> bool {
    c == '.' || c == ','
}

/// sacrebleu's `Tokenizer13a.__call__` (which sacrebleu applies to the
/// right-stripped segment): drops `<skipped>`, joins `-` + newline, turns
/// newlines into spaces, unescapes `&quot;`, `&amp;`, `&lt;`, `&gt;`, then
/// applies the four rules of `TokenizerRegexp` and normalizes whitespace to
/// single spaces.
pub fn tokenize_13a(line: &str) -> String {
    let mut line = line.replace("<skipped>", "").replace("-\n", "").replace('\n', " ");
    if line.contains('&') {
        line = line.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    }
    let mut chars: Vec<char> = Vec::with_capacity(line.len() + 2);
    chars.push(' ');
    chars.extend(line.chars());
    chars.push(' ');

    // Rule 1: `([\{-\~\[-\` -\&\(-\+\:-\@\/])` → ` \1 `.
    let mut spaced = Vec::with_capacity(chars.len() * 2);
    for c in chars {
        if is_symbol(c) {
            spaced.extend([' ', c, ' ']);
        } else {
            spaced.push(c);
        }
    }
    // Rule 2: period and comma unless preceded by a digit,
    // `([^0-9])([\.,])` → `\1 \2 `.
    let chars = substitute_pairs(&spaced, |a, b| !is_digit(a) && is_period_or_comma(b), |a, b| [a, ' ', b, ' ']);
    // Rule 3: period and comma unless followed by a digit,
    // `([\.,])([^0-9])` → ` \1 \2`.
    let chars = substitute_pairs(&chars, |a, b| is_period_or_comma(a) && !is_digit(b), |a, b| [' ', a, ' ', b]);
    // Rule 4: dash when preceded by a digit, `([0-9])(-)` → `\1 \2 `.
    let chars = substitute_pairs(&chars, |a, b| is_digit(a) && b == '-', |a, b| [a, ' ', b, ' ']);

    let text: String = chars.into_iter().collect();
    split_whitespace(&text).join(" ")
}

/// `re.sub` for a pattern of exactly two single-character classes: scans
/// left to right, replaces each non-overlapping match and resumes after it.
fn substitute_pairs(
    chars: &[char],
    matches: impl Fn(char, char) -> bool,
    replace: impl Fn(char, char) -> [char; 4],
) -> Vec<char> {
    let mut out = Vec::with_capacity(chars.len() + chars.len() / 2);
    let mut i = 0;
    while i < chars.len() {
        if i + 1 < chars.len() && matches(chars[i], chars[i + 1]) {
            out.extend(replace(chars[i], chars[i + 1]));
            i += 2;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}
