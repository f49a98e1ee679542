//! The lines of a case file's `response` keys, so that a failing check
//! names `file:line`: read from the text itself on the fast path (JSON
//! with comments and `"""` strings) and from the HOCON parser's syntax
//! tree on the full path.

use crate::case::{KeyLines, key_path};
use hocon::parser::AstNode;
use std::fmt::Write;

/// Whether the path is one the planner may make a check of: a key or list
/// element inside some interaction's `response` (the rest of a file is
/// never a check, and a large `sly_data` need not be indexed).
fn wanted(path: &str) -> bool {
    path.contains(".response")
}

/// One open container of the text being scanned: an object, or a list
/// (with the index of its next element); `base` is the length of the
/// scanner's path at the container itself.
#[derive(Clone, Copy)]
enum Open {
    Object { base: usize },
    List { base: usize, next: usize },
}

/// The scanner's place: the path of what it is at, in one buffer that
/// each key and element truncates back to its container's and extends.
struct Place {
    open: Vec<Open>,
    path: String,
    lines: KeyLines,
}

impl Place {
    /// A value starts on `line`: in a list, it is the next element (its
    /// path is set, and recorded when wanted); in an object, the path is
    /// already its key's.
    fn value(&mut self, line: u32) {
        if let Some(Open::List { base, next }) = self.open.last_mut() {
            self.path.truncate(*base);
            let _ = write!(self.path, "[{next}]");
            *next += 1;
            if wanted(&self.path) {
                self.lines.insert(self.path.clone(), line);
            }
        }
    }

    /// The key `name` of the innermost object, on `line`.
    fn key(&mut self, base: usize, name: &str, line: u32) {
        self.path.truncate(base);
        if base > 0 {
            self.path.push('.');
        }
        self.path.push_str(name);
        if wanted(&self.path) {
            self.lines.insert(self.path.clone(), line);
        }
    }
}

/// The lines of the `response` keys of `text`, a file the fast path read
/// (so its syntax is JSON's, with `#` and `//` comments and `"""`
/// strings). Only the paths recorded are allocated.
pub(super) fn of_json_subset(text: &str) -> KeyLines {
    let bytes = text.as_bytes();
    let mut place = Place { open: Vec::new(), path: String::new(), lines: KeyLines::default() };
    let mut line: u32 = 1;
    // Whether the next string in the innermost object is a key.
    let mut expect_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'{' => {
                place.value(line);
                place.open.push(Open::Object { base: place.path.len() });
                expect_key = true;
            }
            b'[' => {
                place.value(line);
                place.open.push(Open::List { base: place.path.len(), next: 0 });
            }
            b'}' | b']' => {
                place.open.pop();
                expect_key = false;
            }
            b',' => expect_key = matches!(place.open.last(), Some(Open::Object { .. })),
            b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                place.value(line);
                let mut end = text[i + 3..].find("\"\"\"").map_or(bytes.len(), |n| i + 3 + n + 3);
                while bytes.get(end) == Some(&b'"') {
                    end += 1;
                }
                line += bytes[i..end.min(bytes.len())].iter().filter(|&&b| b == b'\n').count() as u32;
                i = end;
                continue;
            }
            b'"' => {
                let start = i + 1;
                i = start;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let raw = &text[start..i.min(bytes.len())];
                match place.open.last() {
                    Some(&Open::Object { base }) if expect_key => {
                        match raw.contains('\\') {
                            true => {
                                let name = serde_json::from_str::<String>(&format!("\"{raw}\""))
                                    .unwrap_or_else(|_| raw.to_owned());
                                place.key(base, &name, line);
                            }
                            false => place.key(base, raw, line),
                        }
                        expect_key = false;
                    }
                    _ => place.value(line),
                }
            }
            b'#' => i = skip_line(bytes, i) - 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = skip_line(bytes, i) - 1,
            b' ' | b'\t' | b'\r' | b':' => {}
            // A number, `true`, `false` or `null`: recorded where it starts.
            _ => {
                place.value(line);
                while i + 1 < bytes.len() && !b",]}\n \t\r#/".contains(&bytes[i + 1]) {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    place.lines
}

/// The index of the newline ending the line at `i`, or the text's end.
fn skip_line(bytes: &[u8], i: usize) -> usize {
    bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |n| i + n)
}

/// The lines of the `response` keys of a syntax tree the full HOCON parser
/// built (`a.b.c = 1` is the key path `a.b.c`).
pub(super) fn of_ast(root: &AstNode) -> KeyLines {
    let mut lines = KeyLines::default();
    walk(root, "", &mut lines);
    lines
}

fn walk(node: &AstNode, path: &str, lines: &mut KeyLines) {
    match node {
        AstNode::Object { fields, .. } => {
            for field in fields {
                let mut at = path.to_owned();
                for segment in &field.key {
                    at = key_path(&at, segment);
                    if wanted(&at) {
                        lines.insert(at.clone(), field.pos.line as u32);
                    }
                }
                walk(&field.value, &at, lines);
            }
        }
        AstNode::Array { items, .. } => {
            for (index, item) in items.iter().enumerate() {
                let at = format!("{path}[{index}]");
                if wanted(&at) {
                    lines.insert(at.clone(), position(item));
                }
                walk(item, &at, lines);
            }
        }
        AstNode::Concat { nodes, .. } => {
            for node in nodes {
                walk(node, path, lines);
            }
        }
        _ => {}
    }
}

/// The line a node starts on.
fn position(node: &AstNode) -> u32 {
    let pos = match node {
        AstNode::Object { pos, .. }
        | AstNode::Array { pos, .. }
        | AstNode::Scalar { pos, .. }
        | AstNode::Concat { pos, .. }
        | AstNode::Substitution { pos, .. }
        | AstNode::Include { pos, .. } => pos,
        #[allow(unreachable_patterns)]
        _ => return 0,
    };
    pos.line as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: &str = r#"# a case
{
    "agent": "echo",
    "interactions": [
        {
            "text": "a \"quoted\" {not a brace}",
            "response": {
                "text": {
                    "keywords": ["one",
                                 "two"],
                    # a comment with "quotes" and { braces
                    "gist": """a long
answer""",
                    "not_equals": 5
                }
            }
        },
        {
            "response": { "structure": { "answer": { "value": true } } }
        }
    ]
}
"#;

    fn lines_of(lines: &KeyLines, paths: &[&str]) -> Vec<Option<u32>> {
        paths.iter().map(|path| lines.line_of(path)).collect()
    }

    const PATHS: &[&str] = &[
        "interactions[0].response",
        "interactions[0].response.text.keywords[0]",
        "interactions[0].response.text.keywords[1]",
        "interactions[0].response.text.gist",
        "interactions[0].response.text.not_equals",
        "interactions[1].response.structure.answer.value",
    ];

    #[test]
    fn the_fast_path_finds_each_response_key_and_list_element() {
        let lines = of_json_subset(CASE);
        assert_eq!(lines_of(&lines, PATHS), [Some(7), Some(9), Some(10), Some(12), Some(14), Some(19)]);
        assert_eq!(lines.line_of("agent"), None, "only response keys are indexed");
    }

    #[test]
    fn the_full_parser_finds_the_same_lines_and_dotted_keys() {
        let tokens = hocon::tokenize(CASE).unwrap();
        let ast = hocon::parser::parse_tokens(&tokens).unwrap();
        assert_eq!(lines_of(&of_ast(&ast), PATHS), [Some(7), Some(9), Some(10), Some(12), Some(14), Some(19)]);

        let dotted = "agent = echo\ninteractions = [\n  {\n    text = hi\n    response.text.keywords = x\n  }\n]\n";
        let tokens = hocon::tokenize(dotted).unwrap();
        let ast = hocon::parser::parse_tokens(&tokens).unwrap();
        assert_eq!(of_ast(&ast).line_of("interactions[0].response.text.keywords"), Some(5));
    }
}
