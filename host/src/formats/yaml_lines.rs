//! The lines of a YAML file's keys (YAML's own, and JSON, which is YAML),
//! read from yaml-rust2's marked events: the values themselves are read by
//! `yaml_serde`, which keeps no positions. A failing check then names the
//! `file:line` of the assertion that asked for it.

use crate::case::{KeyLines, key_path};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// The lines of the key paths of `text` for which `wanted` holds
/// (`tests[2].assert[0]`); a list's elements are recorded as `path[i]`.
/// Whatever the parser cannot read ends the reading: the lines found until
/// then are kept (the values were read, and checked, elsewhere).
pub(crate) fn key_lines(text: &str, wanted: impl Fn(&str) -> bool) -> KeyLines {
    let mut reader = Reader { wanted, open: Vec::new(), lines: KeyLines::default() };
    let _ = Parser::new_from_str(text).load(&mut reader, false);
    reader.lines
}

/// One open collection: a mapping (and whether its next scalar is a key,
/// and the last key) or a sequence (and the index of its next element).
enum Open {
    Mapping { path: String, expect_key: bool, key: String },
    Sequence { path: String, next: usize },
}

struct Reader<F> {
    wanted: F,
    open: Vec<Open>,
    lines: KeyLines,
}

impl<F: Fn(&str) -> bool> Reader<F> {
    /// A value starts at `line` in the innermost collection: its path, with
    /// a sequence's element recorded (and counted).
    fn value(&mut self, line: u32) -> String {
        match self.open.last_mut() {
            None => String::new(),
            Some(Open::Mapping { path, expect_key, key }) => {
                *expect_key = true;
                key_path(path, key)
            }
            Some(Open::Sequence { path, next }) => {
                let element = format!("{path}[{next}]");
                *next += 1;
                if (self.wanted)(&element) {
                    self.lines.insert(element.clone(), line);
                }
                element
            }
        }
    }
}

impl<F: Fn(&str) -> bool> MarkedEventReceiver for Reader<F> {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let line = mark.line() as u32;
        match event {
            Event::Scalar(text, ..) => match self.open.last_mut() {
                Some(Open::Mapping { path, expect_key, key }) if *expect_key => {
                    *expect_key = false;
                    *key = text;
                    let full = key_path(path, key);
                    if (self.wanted)(&full) {
                        self.lines.insert(full, line);
                    }
                }
                _ => drop(self.value(line)),
            },
            Event::Alias(_) => drop(self.value(line)),
            Event::MappingStart(..) => {
                let path = self.value(line);
                self.open.push(Open::Mapping { path, expect_key: true, key: String::new() });
            }
            Event::SequenceStart(..) => {
                let path = self.value(line);
                self.open.push(Open::Sequence { path, next: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => drop(self.open.pop()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wanted_key_and_element_has_its_line() {
        let text = "\
description: a config
prompts: [\"hi {{topic}}\"]
tests:
  - vars:
      topic: cats
    assert:
      - type: contains
        value: cat
      - {type: equals, value: \"a: b\"}
  - assert:

      - type: icontains
        value: >
          folded
          text
      - type: regex
defaultTest:
  assert:
    - type: is-json
";
        let lines = key_lines(text, |path| path.contains("assert["));
        let line = |path: &str| lines.line_of(path);
        assert_eq!(line("tests[0].assert[0]"), Some(7));
        assert_eq!(line("tests[0].assert[0].value"), Some(8));
        assert_eq!(line("tests[0].assert[1]"), Some(9));
        assert_eq!(line("tests[1].assert[0]"), Some(12));
        assert_eq!(line("tests[1].assert[1]"), Some(16));
        assert_eq!(line("defaultTest.assert[0]"), Some(19));
        assert_eq!(line("tests[0].vars.topic"), None, "only wanted paths are kept");
    }

    #[test]
    fn json_is_read_as_yaml_and_a_broken_file_keeps_what_came_before() {
        let json = "{\n  \"tests\": [\n    {\"assert\": [\n      {\"type\": \"equals\"}]}]}";
        assert_eq!(key_lines(json, |_| true).line_of("tests[0].assert[0]"), Some(4));
        let broken = "tests:\n  - assert:\n      - type: equals\n  - : : [\n";
        assert_eq!(key_lines(broken, |_| true).line_of("tests[0].assert[0]"), Some(3));
    }
}
