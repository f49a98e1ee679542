//! What a file may ask of the full HOCON parser, checked on its syntax tree
//! before anything is resolved.
//!
//! HOCON is a configuration language: it can read other files (`include`),
//! the whole environment, and copy values of the document into others
//! (`b = ${a} ${a}` doubles `a`; chained, a few hundred bytes become
//! gigabytes). A test case file is input, not code, so:
//!
//! - `include` is refused;
//! - a substitution names an environment variable that the [`CaseEnv`]
//!   makes visible, never a value of the file itself: its first path
//!   segment may not be a key of the root object (HOCON looks substitutions
//!   up from the root, and only then in the environment). `+=`, which reads
//!   the value it appends to, is refused too. Nothing of the file can be
//!   copied, so the resolved document is the file plus the substituted
//!   values, which may total at most [`MAX_SUBSTITUTED_BYTES`];
//! - `${VAR[]}` (a list read from `VAR_0`, `VAR_1`, …) is refused;
//! - nesting is at most [`MAX_DEPTH`] levels, each segment of a dotted key
//!   counting as one (`a.b.c { }` is three): the resolver, the deserializer
//!   and the planner recurse once per level on a reader thread's stack;
//! - merging a key given twice costs the resolver time in proportion to the
//!   object merged into, so a file of thousands of `a.xN = 1` lines takes
//!   minutes: (keys given again) × (values in the file) is at most
//!   [`MAX_MERGE_WORK`];
//! - the resolver's time grows with the depth of every object and list (a
//!   few microseconds per level: 200 siblings 90 levels deep, 90 KB, take
//!   seconds), so the sum of their depths is at most [`MAX_NESTING_WORK`].
//!
//! Within these caps a file of the largest size the full parser takes
//! resolves in well under a second.

use crate::case::{CaseEnv, Lookup};
use crate::errors::CaseErrorKind;
use hocon::parser::{AstNode, Pos};
use std::collections::{HashMap, HashSet};

/// The most bytes the substitutions of one file may add.
pub(crate) const MAX_SUBSTITUTED_BYTES: usize = 1 << 20;

/// The deepest a file may nest objects and lists, counting each segment of
/// a dotted key as a level: 128, the depth serde_json (and so the
/// JSON-with-comments fast path) accepts.
pub(crate) const MAX_DEPTH: usize = 128;

/// The most merge work a file may cause: (keys given again in an object) ×
/// (values in the file). About half a second of the resolver's time.
pub(crate) const MAX_MERGE_WORK: usize = 1 << 22;

/// The most nesting work a file may cause: the sum of the depths of its
/// objects and lists. About half a second of the resolver's time.
pub(crate) const MAX_NESTING_WORK: usize = 1 << 17;

/// Checks the tree of a whole file against `env`: the variables its
/// substitutions read (for the resolver), or why it is refused.
pub(super) fn inspect(root: &AstNode, env: &CaseEnv) -> Result<HashMap<String, String>, CaseErrorKind> {
    let AstNode::Object { fields, .. } = root else {
        return Err(CaseErrorKind::Syntax {
            line: Some((1, 1)),
            message: "the file holds a list; it must hold a dictionary of keys".into(),
        });
    };
    let root_keys = fields.iter().filter_map(|field| field.key.first()).map(String::as_str).collect();
    let mut walk = Walk { root_keys, env, used: HashMap::new(), substituted: 0, values: 0, again: 0, nesting: 0 };
    walk.node(root, 0)?;
    if walk.nesting > MAX_NESTING_WORK {
        return Err(CaseErrorKind::Refused {
            line: None,
            message: format!(
                "the depths of the file's objects and lists add up to {}: resolving them would take the HOCON resolver seconds (the cap is {MAX_NESTING_WORK})\n\nConsider a flatter structure, or writing the file as JSON with comments, which a faster reader takes",
                walk.nesting
            ),
        });
    }
    if walk.again.saturating_mul(walk.values) > MAX_MERGE_WORK {
        return Err(CaseErrorKind::Refused {
            line: None,
            message: format!(
                "the file gives {} keys again to be merged, among {} values: merging them would take the HOCON resolver minutes (the cap on keys given again × values is {MAX_MERGE_WORK})\n\nConsider giving each key once, with all of its values",
                walk.again, walk.values
            ),
        });
    }
    Ok(walk.used)
}

/// The state of one walk over a tree.
struct Walk<'a> {
    /// The first segments of the root object's keys.
    root_keys: HashSet<&'a str>,
    env: &'a CaseEnv,
    /// The variables substitutions read, with their values.
    used: HashMap<String, String>,
    /// The bytes substitutions add.
    substituted: usize,
    /// The nodes seen.
    values: usize,
    /// The keys given again in the same object.
    again: usize,
    /// The sum of the depths of objects and lists.
    nesting: usize,
}

impl<'a> Walk<'a> {
    fn node(&mut self, node: &'a AstNode, depth: usize) -> Result<(), CaseErrorKind> {
        self.values += 1;
        match node {
            AstNode::Object { fields, pos } => {
                too_deep(depth, pos)?;
                self.nesting += depth;
                let mut seen = HashSet::new();
                for field in fields {
                    if field.append {
                        return Err(refused(
                            &field.pos,
                            format!(
                                "`{} += …` appends to a value of this file, and case files may not read their own values\n\nConsider writing the whole list in one place",
                                field.key.join(".")
                            ),
                        ));
                    }
                    if field.key.first().is_some_and(|first| !seen.insert(first)) {
                        self.again += 1;
                    }
                    let depth = depth + field.key.len();
                    too_deep(depth, &field.pos)?;
                    self.node(&field.value, depth)?;
                }
                Ok(())
            }
            AstNode::Array { items, pos } => {
                too_deep(depth + 1, pos)?;
                self.nesting += depth + 1;
                items.iter().try_for_each(|item| self.node(item, depth + 1))
            }
            AstNode::Concat { nodes, .. } => nodes.iter().try_for_each(|node| self.node(node, depth)),
            AstNode::Scalar { .. } => Ok(()),
            AstNode::Substitution { segments, optional, list_suffix, pos, .. } => {
                let texts: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
                self.substitution(&texts, *optional, *list_suffix, pos)
            }
            AstNode::Include { pos, path, .. } => Err(refused(
                pos,
                format!(
                    "`include` of {path:?}: case files may not read other files\n\nConsider copying what you need into this file"
                ),
            )),
        }
    }

    fn substitution(&mut self, segments: &[&str], optional: bool, list: bool, pos: &Pos) -> Result<(), CaseErrorKind> {
        let name = segments.join(".");
        let question = if optional { "?" } else { "" };
        if let Some(first) = segments.first().filter(|first| self.root_keys.contains(**first)) {
            return Err(refused(
                pos,
                format!(
                    "${{{question}{name}}} refers to `{first}`, a value of this file: case files may substitute only environment variables, so that no file can copy its own values\n\nConsider writing the value out where it is needed"
                ),
            ));
        }
        if list {
            return Err(refused(
                pos,
                format!(
                    "${{{question}{name}[]}} reads a list of environment variables; case files may substitute single variables only"
                ),
            ));
        }
        let (line, col) = (pos.line, pos.col);
        match self.env.lookup(&name) {
            Lookup::Value(value) => {
                self.substituted += value.len();
                if self.substituted > MAX_SUBSTITUTED_BYTES {
                    return Err(refused(
                        pos,
                        format!(
                            "the substitutions up to ${{{question}{name}}} add {} bytes, over the cap of {} MiB for one file",
                            self.substituted,
                            MAX_SUBSTITUTED_BYTES >> 20
                        ),
                    ));
                }
                self.used.entry(name).or_insert_with(|| value.to_owned());
                Ok(())
            }
            Lookup::Unset | Lookup::NotAllowed { .. } if optional => Ok(()),
            Lookup::Unset => Err(CaseErrorKind::UnsetVariable { variable: name, line, col }),
            Lookup::NotAllowed { protected } => {
                let prefix = self.env.unasked_prefix();
                Err(CaseErrorKind::VariableNotAllowed { variable: name, line, col, protected, prefix })
            }
        }
    }
}

fn too_deep(depth: usize, pos: &Pos) -> Result<(), CaseErrorKind> {
    if depth <= MAX_DEPTH {
        return Ok(());
    }
    Err(refused(
        pos,
        format!(
            "objects and lists nest more than {MAX_DEPTH} levels deep here (each segment of a dotted key counts as a level)\n\nConsider a flatter structure"
        ),
    ))
}

fn refused(pos: &Pos, message: String) -> CaseErrorKind {
    CaseErrorKind::Refused { line: Some((pos.line, pos.col)), message }
}
