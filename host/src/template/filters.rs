//! Nunjucks' filters that Jinja lacks, written as Nunjucks writes them (its
//! `filters.js`): `truncate`, `wordcount`, `striptags`, `center`, `nl2br`
//! and `forceescape`. Lengths count characters.

use crate::template::value::write_nunjucks;
use minijinja::Environment;
use minijinja::value::Value;
use regex::Regex;
use std::sync::LazyLock;

/// Adds the filters to `env`.
pub(super) fn add_nunjucks_filters(env: &mut Environment<'static>) {
    env.add_filter("truncate", truncate);
    env.add_filter("wordcount", wordcount);
    env.add_filter("striptags", striptags);
    env.add_filter("center", center);
    env.add_filter("nl2br", |value: Value| text(&value).replace("\r\n", "\n").replace('\n', "<br />\n"));
    env.add_filter("forceescape", |value: Value| escape_html(&text(&value)));
}

/// A value as Nunjucks prints it (null and undefined as nothing).
fn text(value: &Value) -> String {
    let mut out = String::new();
    write_nunjucks(&mut out, value);
    out
}

/// `truncate(length = 255, killwords = false, end = "...")`: text longer
/// than `length` is cut at the last space at or before `length` (or at
/// `length` itself, when `killwords` or there is none) and `end` added.
fn truncate(value: Value, length: Option<usize>, killwords: Option<bool>, end: Option<String>) -> String {
    let input = text(&value);
    let length = length.filter(|&n| n > 0).unwrap_or(255);
    let chars: Vec<char> = input.chars().collect();
    if chars.len() <= length {
        return input;
    }
    let cut = match killwords.unwrap_or(false) {
        true => length,
        false => chars[..=length.min(chars.len() - 1)].iter().rposition(|&c| c == ' ').unwrap_or(length),
    };
    let mut out: String = chars[..cut].iter().collect();
    out.push_str(end.as_deref().unwrap_or("..."));
    out
}

/// `wordcount`: how many runs of `[A-Za-z0-9_]` the text holds (nothing
/// for text with none, as Nunjucks gives `null`).
fn wordcount(value: Value) -> Value {
    static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z0-9_]+").expect("a valid pattern"));
    match WORD.find_iter(&text(&value)).count() {
        0 => Value::from(()),
        n => Value::from(n),
    }
}

/// `striptags(preserve_linebreaks = false)`: tags and comments removed,
/// then whitespace collapsed to one space (or, preserving line breaks,
/// spaces trimmed per line and runs of blank lines cut to one).
fn striptags(value: Value, preserve_linebreaks: Option<bool>) -> String {
    static TAGS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)</?([a-z][a-z0-9]*)\b[^>]*>|<!--[\s\S]*?-->").expect("a valid pattern"));
    static EDGE_SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^ +| +$").expect("a valid pattern"));
    static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" +").expect("a valid pattern"));
    static BLANK_LINES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\n\n\n+").expect("a valid pattern"));
    static WHITESPACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("a valid pattern"));
    let input = text(&value);
    let stripped = TAGS.replace_all(&input, "");
    let trimmed = stripped.trim();
    match preserve_linebreaks.unwrap_or(false) {
        true => {
            let lines = EDGE_SPACES.replace_all(trimmed, "");
            let spaced = SPACES.replace_all(&lines, " ").replace("\r\n", "\n");
            BLANK_LINES.replace_all(&spaced, "\n\n").into_owned()
        }
        false => WHITESPACE.replace_all(trimmed, " ").into_owned(),
    }
}

/// `center(width = 80)`: padded with spaces on both sides to `width`, the
/// extra space of an odd padding on the right (as Nunjucks' arithmetic
/// gives it).
fn center(value: Value, width: Option<usize>) -> String {
    let input = text(&value);
    let width = width.filter(|&n| n > 0).unwrap_or(80);
    let length = input.chars().count();
    if length >= width {
        return input;
    }
    let spaces = width - length;
    let (pre, post) = (spaces / 2, spaces.div_ceil(2));
    format!("{}{input}{}", " ".repeat(pre), " ".repeat(post))
}

/// HTML's five special characters escaped.
fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use crate::template::NunjucksTemplate;
    use serde_json::json;

    fn render(template: &str, vars: serde_json::Value) -> String {
        NunjucksTemplate::parse(template).unwrap().render(vars.as_object().unwrap()).unwrap()
    }

    #[test]
    fn nunjucks_own_filters_write_what_nunjucks_writes() {
        let vars = json!({"t": "The quick brown fox", "h": "<p>Hi <b>there</b></p>\n<!-- x -->\n\n\n\n<i> you </i>", "n": "a\nb\r\nc"});
        let cases = [
            ("{{ t | truncate(9) }}", "The quick..."),
            ("{{ t | truncate(7) }}", "The..."),
            ("{{ t | truncate(7, true) }}", "The qui..."),
            ("{{ t | truncate(10, false, '!') }}", "The quick!"),
            ("{{ t | truncate(3) }}", "The..."),
            ("{{ 'abcdef' | truncate(3) }}", "abc..."),
            ("{{ t | truncate(100) }}", "The quick brown fox"),
            ("{{ t | wordcount }}|{{ '' | wordcount }}", "4|"),
            ("{{ h | striptags }}", "Hi there you"),
            ("{{ h | striptags(true) }}", "Hi there\n\nyou"),
            ("[{{ 'ab' | center(7) }}]", "[  ab   ]"),
            ("[{{ 'ab' | center(6) }}]", "[  ab  ]"),
            ("{{ n | nl2br }}", "a<br />\nb<br />\nc"),
            ("{{ '<a href=\"x\">&' | forceescape }}", "&lt;a href=&quot;x&quot;&gt;&amp;"),
        ];
        for (template, rendered) in cases {
            assert_eq!(render(template, vars.clone()), rendered, "{template}");
        }
    }
}
