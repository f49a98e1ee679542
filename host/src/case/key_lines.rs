//! Where a case file's keys are: the line of each key path
//! (`interactions[0].response.text.keywords`), as the format's reader
//! found it, so that a failing check can be reported as `file:line`.

use std::collections::HashMap;

/// The line (from 1) of each key path of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyLines {
    lines: Option<HashMap<Box<str>, u32>>,
}

impl KeyLines {
    /// No lines known: checks planned with it name no line.
    pub const NONE: KeyLines = KeyLines { lines: None };

    /// Records that `path` is at `line`; a path met twice keeps its first
    /// line.
    pub fn insert(&mut self, path: String, line: u32) {
        self.lines.get_or_insert_default().entry(path.into_boxed_str()).or_insert(line);
    }

    /// The line of `path`, or of its nearest recorded ancestor (a list's
    /// element is at its list's key when the element was not recorded).
    pub fn line_of(&self, path: &str) -> Option<u32> {
        let lines = self.lines.as_ref()?;
        let mut path = path;
        loop {
            if let Some(line) = lines.get(path) {
                return Some(*line);
            }
            path = parent(path)?;
        }
    }
}

/// `path` without its last step (`.key` or `[index]`); `None` at the root.
fn parent(path: &str) -> Option<&str> {
    let cut = path.rfind(['.', '['])?;
    Some(&path[..cut])
}

/// The path of `key` inside the object at `parent` (`""` at the root).
pub fn key_path(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_owned() } else { format!("{parent}.{key}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_found_or_its_nearest_ancestor_is() {
        let mut lines = KeyLines::default();
        lines.insert("interactions".into(), 2);
        lines.insert("interactions[0].response.text".into(), 5);
        lines.insert("interactions[0].response.text.keywords".into(), 6);
        lines.insert("interactions[0].response.text.keywords".into(), 9);
        assert_eq!(lines.line_of("interactions[0].response.text.keywords"), Some(6));
        assert_eq!(lines.line_of("interactions[0].response.text.keywords[2]"), Some(6));
        assert_eq!(lines.line_of("interactions[0].response.text.gist"), Some(5));
        assert_eq!(lines.line_of("interactions[1].response"), Some(2));
        assert_eq!(lines.line_of("agent"), None);
        assert_eq!(KeyLines::NONE.line_of("agent"), None);
    }
}
