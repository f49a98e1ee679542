//! js-rouge 3.2.3's `treeBankTokenize` (the Penn Treebank tokenizer
//! promptfoo's `rouge-n` uses), rule by rule with the same ECMAScript
//! regexes (through `regress`).
//!
//! One simplification: js-rouge's `followsQuotedModifier` (a `"` after a
//! Unicode modifier letter footnote such as `.ᵃ"`) is not ported; such a
//! quote is read as any other.

use crate::js::replace_all;
use regress::Regex;
use std::sync::OnceLock;

/// The compiled rules, built once.
struct Rules {
    spaces: Regex,
    quotes: Regex,
    /// `(pattern, replacement)` in js-rouge's order, before the text is
    /// wrapped in spaces.
    punctuation: Vec<(Regex, &'static str)>,
    /// The same, after wrapping.
    contractions: Vec<(Regex, &'static str)>,
    double_spaces: Regex,
    edge_spaces: Regex,
}

fn compile(pattern: &str, flags: &str) -> Regex {
    Regex::with_flags(pattern, flags).expect("js-rouge's regexes compile")
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let word = r"[\p{ID_Continue}\u200c\u200d]";
        let contraction = |pattern: &str| compile(&format!("(?<!{word}){pattern}(?!{word})"), "giu");
        let mut contractions = vec![
            (compile(r"([^'])' ", "g"), "$1 ' "),
            (compile(r"'([sSmMdD]) ", "g"), " '$1 "),
            (compile(r"('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "g"), " $1 "),
        ];
        for pattern in [
            "(can)(not)",
            "(d)('ye)",
            "(gim)(me)",
            "(gon)(na)",
            "(got)(ta)",
            "(lem)(me)",
            "(more)('n)",
            "(wan)(na)(?= )",
            "('t)(is)",
            "('t)(was)",
        ] {
            contractions.push((contraction(pattern), " $1 $2 "));
        }
        Rules {
            spaces: compile(r"[\s\u0085]+", "g"),
            quotes: compile(r#"``|''|""#, "g"),
            punctuation: vec![
                (compile(r"\.{3}", "g"), " ... "),
                (compile(r"[:,](?!\p{Decimal_Number})", "gu"), " $& "),
                (compile(r"[;@#$%&]", "g"), " $& "),
                (compile(r"([^.])(?<!\b[A-Za-z]\.[A-Za-z])(\.)([\])}>'\s]*)$", "g"), "$1 $2$3 "),
                (compile(r"[?!]", "g"), " $& "),
                (compile(r"[\][(){}<>]", "g"), " $& "),
                (compile(r"--", "g"), " -- "),
            ],
            contractions,
            double_spaces: compile(r" {2,}", "g"),
            edge_spaces: compile(r"^ | $", "g"),
        }
    })
}

/// Splits one sentence into word tokens as js-rouge does.
pub fn tokenize(input: &str) -> Vec<String> {
    let rules = rules();
    let text = replace_all(&rules.spaces, input, " ");
    let text = crate::js::trim(&text);
    if text.is_empty() {
        return Vec::new();
    }
    let mut parse = quotes(&rules.quotes, text);
    for (regex, replacement) in &rules.punctuation {
        parse = replace_all(regex, &parse, replacement);
    }
    parse = format!(" {parse} ");
    for (regex, replacement) in &rules.contractions {
        parse = replace_all(regex, &parse, replacement);
    }
    parse = replace_all(&rules.double_spaces, &parse, " ");
    parse = replace_all(&rules.edge_spaces, &parse, "");
    parse.split(' ').map(str::to_owned).collect()
}

/// Paired quotes classified as opening (`` ` `` ` `` ``) or closing (`''`).
fn quotes(regex: &Regex, text: &str) -> String {
    let mut inside = false;
    let mut out = String::with_capacity(text.len() + 8);
    let mut last = 0;
    for found in regex.find_iter(text) {
        let (index, quote) = (found.start(), &text[found.range()]);
        out.push_str(&text[last..index]);
        let before = text[..index].chars().next_back();
        let opens_context = index == 0
            || before.is_some_and(|c| crate::js::is_space(c) || is_punctuation(c) || c == '<')
            || text[..index].ends_with("``");
        let opens = !inside && opens_context;
        // JavaScript indexes UTF-16 units; two characters on is the same
        // outside the astral planes.
        let two_on = text[index..].char_indices().nth(2).map_or(text.len(), |(offset, _)| index + offset);
        let second_after = text[two_on..].chars().next();
        inside = quote == "``"
            || ((index + quote.len() < text.len()
                || index == 0
                || before.is_some_and(|c| crate::js::is_space(c) || is_open_punctuation(c) || c == '<'))
                && opens
                && !before.is_some_and(|c| matches!(c, '.' | '!' | '?'))
                && (quote == "\""
                    || (index > 0
                        && second_after.is_some_and(starts_quoted_word)
                        && next_quote(&text[two_on..]) == Some("''"))));
        out.push_str(if inside { " `` " } else { " '' " });
        last = found.end();
    }
    out.push_str(&text[last..]);
    out
}

/// The first of ` `` `, `''` or `"` in `text`.
fn next_quote(text: &str) -> Option<&'static str> {
    let at = |needle: &str| text.find(needle);
    [("``", at("``")), ("''", at("''")), ("\"", at("\""))]
        .into_iter()
        .filter_map(|(quote, position)| position.map(|p| (p, quote)))
        .min()
        .map(|(_, quote)| quote)
}

/// `\p{Punctuation}` (the general categories Pc, Pd, Ps, Pe, Pi, Pf, Po).
fn is_punctuation(c: char) -> bool {
    static PUNCTUATION: OnceLock<Regex> = OnceLock::new();
    matches_class(&PUNCTUATION, r"^\p{Punctuation}$", c)
}

/// `\p{Ps}`: opening punctuation.
fn is_open_punctuation(c: char) -> bool {
    static OPEN: OnceLock<Regex> = OnceLock::new();
    matches_class(&OPEN, r"^\p{Ps}$", c)
}

/// `[\p{Letter}\p{Number}\p{Sc}\p{Ps}]`: what may follow a quote that
/// opens.
fn starts_quoted_word(c: char) -> bool {
    static WORD: OnceLock<Regex> = OnceLock::new();
    matches_class(&WORD, r"^[\p{Letter}\p{Number}\p{Sc}\p{Ps}]$", c)
}

fn matches_class(slot: &OnceLock<Regex>, pattern: &str, c: char) -> bool {
    let regex = slot.get_or_init(|| compile(pattern, "u"));
    let mut buffer = [0u8; 4];
    regex.find(c.encode_utf8(&mut buffer)).is_some()
}

#[cfg(test)]
mod tests {
    use super::tokenize;

    #[test]
    fn words_punctuation_and_contractions_split() {
        assert_eq!(tokenize("the cat sat on the mat."), ["the", "cat", "sat", "on", "the", "mat", "."]);
        assert_eq!(tokenize("I can't, won't: cannot!"), ["I", "ca", "n't", ",", "wo", "n't", ":", "can", "not", "!"]);
        assert_eq!(tokenize("  "), Vec::<String>::new());
        assert_eq!(tokenize("a 1,000 b"), ["a", "1,000", "b"]);
    }

    #[test]
    fn quotes_become_treebank_quotes() {
        assert_eq!(tokenize(r#"he said "hi" there"#), ["he", "said", "``", "hi", "''", "there"]);
    }
}
