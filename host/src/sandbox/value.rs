//! `assay:plugin@0.3.0`'s typed `value` (a JSON value as a flat list of
//! nodes in pre-order) from and to `serde_json::Value`: a check's expected
//! value going in, a verdict's extras coming back. Extras come from the
//! guest, so reading them is an input path: the nodes are counted against
//! the extras cap (as the longest JSON text they could print as) before a
//! value is built from them, nesting is bounded, and a value with nodes
//! missing or left over, a key twice, or a number JSON has not is refused
//! with what is wrong. Both directions walk the value with a stack of their
//! own, so no value's depth can exhaust the host's stack.

use crate::sandbox::bindings::matcher_0_3::assay::plugin::types::{NodeParam, NodeResult};
use serde_json::{Map, Number, Value};

/// The deepest nesting of lists and objects in a plugin's extras, in
/// either version's form: well inside the 127 levels serde_json reads back,
/// so that a results line holding them (a few levels more) always reads
/// back in `assay report`, `merge` and `--replay`.
pub(crate) const MAX_DEPTH: usize = 64;

/// How many levels of lists and objects `value` nests (a scalar: 0).
pub(crate) fn depth_of(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, depth + 1))),
            _ => continue,
        }
        deepest = deepest.max(depth);
    }
    deepest
}

/// The object keys of `value`'s objects, in pre-order: what
/// [`nodes_of`] borrows its object nodes' key lists from.
pub(crate) fn keys_of(value: &Value) -> Vec<Vec<&str>> {
    let mut keys = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => {
                keys.push(map.keys().map(String::as_str).collect());
                stack.extend(map.values().rev());
            }
            _ => {}
        }
    }
    keys
}

/// `value` as nodes in pre-order, its objects' keys borrowed from `keys`
/// (`keys_of(value)`).
pub(crate) fn nodes_of<'a>(value: &'a Value, keys: &'a [Vec<&'a str>]) -> Vec<NodeParam<'a>> {
    let mut nodes = Vec::new();
    let mut objects = keys.iter();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        nodes.push(match value {
            Value::Null => NodeParam::Null,
            Value::Bool(b) => NodeParam::Boolean(*b),
            Value::Number(n) => number_node(n),
            Value::String(s) => NodeParam::Text(s),
            Value::Array(items) => {
                stack.extend(items.iter().rev());
                NodeParam::List(u32::try_from(items.len()).unwrap_or(u32::MAX))
            }
            Value::Object(map) => {
                stack.extend(map.values().rev());
                NodeParam::Object(objects.next().expect("keys_of walks the same value"))
            }
        });
    }
    nodes
}

/// A JSON number's node: an integer when it is one, else a float.
fn number_node<'a>(n: &Number) -> NodeParam<'a> {
    if let Some(i) = n.as_i64() {
        NodeParam::Integer(i)
    } else if let Some(u) = n.as_u64() {
        NodeParam::Unsigned(u)
    } else {
        NodeParam::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// How many bytes `nodes` count for against the extras cap: the longest
/// JSON text they could print as (every number at its longest, every
/// string with its escapes), so that extras under the cap never print
/// longer than it.
pub(crate) fn size_of(nodes: &[NodeResult]) -> usize {
    /// A string's JSON text: its quotes, and each character escaped as
    /// serde_json escapes it.
    fn quoted(s: &str) -> usize {
        2 + s.bytes().map(|b| if b < 0x20 { 6 } else if b == b'"' || b == b'\\' { 2 } else { 1 }).sum::<usize>()
    }
    // Every node but the first follows a comma (or a key's colon, counted
    // with the key): one byte each, counted for the nodes there are, not
    // for the items a list says it has.
    let separators = nodes.len().saturating_sub(1);
    nodes
        .iter()
        .map(|node| match node {
            NodeResult::Null => 4,
            NodeResult::Boolean(_) => 5,
            NodeResult::Integer(_) | NodeResult::Unsigned(_) => 20,
            NodeResult::Float(_) => 24,
            NodeResult::Text(s) => quoted(s),
            NodeResult::List(_) => 2,
            // Its braces, and each key quoted with its colon.
            NodeResult::Object(keys) => 2 + keys.iter().map(|key| quoted(key) + 1).sum::<usize>(),
        })
        .fold(separators, usize::saturating_add)
}

/// A list or an object being read, with how many items it still needs.
enum Open {
    List { items: Vec<Value>, left: u32 },
    Object { keys: std::vec::IntoIter<String>, map: Map<String, Value> },
}

/// The value `nodes` lay out, or why they do not lay out one.
pub(crate) fn value_of(nodes: Vec<NodeResult>) -> Result<Value, String> {
    let count = nodes.len();
    let mut open: Vec<Open> = Vec::new();
    for (index, node) in nodes.into_iter().enumerate() {
        let mut done = match node {
            NodeResult::Null => Value::Null,
            NodeResult::Boolean(b) => Value::Bool(b),
            NodeResult::Integer(i) => Value::from(i),
            NodeResult::Unsigned(u) => Value::from(u),
            NodeResult::Float(f) => match Number::from_f64(f) {
                Some(n) => Value::Number(n),
                None => return Err(format!("node {index} is the number {f}, which JSON cannot hold")),
            },
            NodeResult::Text(s) => Value::String(s),
            NodeResult::List(_) | NodeResult::Object(_) if open.len() == MAX_DEPTH => {
                return Err(format!("node {index} nests deeper than {MAX_DEPTH} lists and objects"));
            }
            NodeResult::List(0) => Value::Array(Vec::new()),
            NodeResult::Object(keys) if keys.is_empty() => Value::Object(Map::new()),
            opened => {
                open.push(match opened {
                    NodeResult::List(left) => {
                        // Never more room than the nodes left could fill,
                        // nor a guest's count's worth up front.
                        let room = (left as usize).min(count - index).min(64);
                        Open::List { items: Vec::with_capacity(room), left }
                    }
                    NodeResult::Object(keys) => Open::Object { keys: keys.into_iter(), map: Map::new() },
                    _ => unreachable!("only lists and objects are opened"),
                });
                continue;
            }
        };
        // `done` goes into the innermost open list or object; one that
        // fills up is done in turn, and goes into the one around it.
        loop {
            match open.last_mut() {
                None if index + 1 == count => return Ok(done),
                None => return Err(format!("the value ends at node {index}, but {} nodes follow", count - index - 1)),
                Some(Open::List { items, left }) => {
                    items.push(done);
                    *left -= 1;
                    if *left > 0 {
                        break;
                    }
                }
                Some(Open::Object { keys, map }) => {
                    let key = keys.next().expect("an open object has a key left");
                    if map.contains_key(&key) {
                        // Quoted short and escaped: the message is the
                        // guest's text past its cap otherwise.
                        let shown: String = key.chars().take(64).collect();
                        return Err(format!("an object has the key {shown:?} twice"));
                    }
                    map.insert(key, done);
                    if keys.len() > 0 {
                        break;
                    }
                }
            }
            done = match open.pop().expect("matched above") {
                Open::List { items, .. } => Value::Array(items),
                Open::Object { map, .. } => Value::Object(map),
            };
        }
    }
    match open.len() {
        0 => Err("the value has no nodes".to_owned()),
        n => Err(format!("the value ends inside {n} unfinished lists or objects ({count} nodes)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The nodes of `value` as the guest would return them.
    fn returned(value: &Value) -> Vec<NodeResult> {
        let keys = keys_of(value);
        nodes_of(value, &keys)
            .into_iter()
            .map(|node| match node {
                NodeParam::Null => NodeResult::Null,
                NodeParam::Boolean(b) => NodeResult::Boolean(b),
                NodeParam::Integer(i) => NodeResult::Integer(i),
                NodeParam::Unsigned(u) => NodeResult::Unsigned(u),
                NodeParam::Float(f) => NodeResult::Float(f),
                NodeParam::Text(s) => NodeResult::Text(s.to_owned()),
                NodeParam::List(n) => NodeResult::List(n),
                NodeParam::Object(keys) => NodeResult::Object(keys.iter().map(|k| (*k).to_owned()).collect()),
            })
            .collect()
    }

    #[test]
    fn values_go_out_as_nodes_in_pre_order_and_come_back_the_same() {
        let value = json!({"min": 0.5, "tags": ["a", {"b": null}], "n": 3, "big": 18446744073709551615u64,
                           "neg": -7, "t": true, "e": [], "o": {}, "ünï": "✓"});
        let keys = keys_of(&value);
        let nodes = nodes_of(&value, &keys);
        assert!(matches!(nodes[0], NodeParam::Object(k) if k == ["min", "tags", "n", "big", "neg", "t", "e", "o", "ünï"]));
        assert!(matches!(nodes[1], NodeParam::Float(f) if f == 0.5));
        assert!(matches!(nodes[2], NodeParam::List(2)));
        assert!(matches!(nodes[3], NodeParam::Text("a")));
        assert!(matches!(nodes[4], NodeParam::Object(k) if k == ["b"]));
        assert!(matches!(nodes[5], NodeParam::Null));
        assert!(matches!(nodes[6], NodeParam::Integer(3)));
        assert!(matches!(nodes[7], NodeParam::Unsigned(u64::MAX)));
        assert_eq!(nodes.len(), 13);
        for value in [value, json!(1), json!("x"), json!(null), json!([[[]]]), json!(1.0), json!(-0.0)] {
            assert_eq!(value_of(returned(&value)).unwrap(), value);
        }
    }

    #[test]
    fn malformed_values_are_refused_saying_what_is_wrong() {
        use NodeResult::*;
        let refused = |nodes: Vec<NodeResult>| value_of(nodes).unwrap_err();
        assert_eq!(refused(vec![]), "the value has no nodes");
        assert_eq!(refused(vec![Null, Null]), "the value ends at node 0, but 1 nodes follow");
        assert_eq!(refused(vec![List(3), Null]), "the value ends inside 1 unfinished lists or objects (2 nodes)");
        assert_eq!(refused(vec![List(u32::MAX)]), "the value ends inside 1 unfinished lists or objects (1 nodes)");
        assert_eq!(refused(vec![Object(vec!["a".into(), "a".into()]), Null, Null]), "an object has the key \"a\" twice");
        let long = "\u{1b}[2J".repeat(1000);
        let twice = refused(vec![Object(vec![long.clone(), long]), Null, Null]);
        assert_eq!(twice, format!("an object has the key {:?} twice", "\u{1b}[2J".repeat(16)));
        assert_eq!(refused(vec![Float(f64::NAN)]), "node 0 is the number NaN, which JSON cannot hold");
        assert_eq!(refused(vec![Float(f64::INFINITY)]), "node 0 is the number inf, which JSON cannot hold");
        let deep: Vec<NodeResult> = (0..=MAX_DEPTH).map(|_| List(1)).chain([Null]).collect();
        assert_eq!(refused(deep), "node 64 nests deeper than 64 lists and objects");
        // An empty list counts as a level too.
        let deep: Vec<NodeResult> = (0..MAX_DEPTH).map(|_| List(1)).chain([List(0)]).collect();
        assert_eq!(refused(deep), "node 64 nests deeper than 64 lists and objects");
        let deepest: Vec<NodeResult> = (0..MAX_DEPTH - 1).map(|_| List(1)).chain([List(0)]).collect();
        let deepest = value_of(deepest).unwrap();
        assert_eq!(depth_of(&deepest), MAX_DEPTH);
        // And what is read prints as JSON that reads back.
        assert_eq!(serde_json::from_str::<Value>(&deepest.to_string()).unwrap(), deepest);
    }

    #[test]
    fn a_value_counts_as_the_longest_json_text_it_could_print_as() {
        let nodes = returned(&json!({"ab": ["c\"\u{1}", 1, -2.5e-300, null, true]}));
        // {"ab":…} 2 + 5, […] 2, "c\"\u0001" 2 + 1 + 2 + 6, 20, 24, 4, 5, and 6 commas
        assert_eq!(size_of(&nodes), 7 + 2 + 11 + 20 + 24 + 4 + 5 + 6);
        // A list's count of items it does not have counts for nothing.
        assert_eq!(size_of(&[NodeResult::List(u32::MAX)]), 2);
        let cases = [json!({"ab": ["c\"\u{1}", 1, -2.5e-300, null, true]}), json!("\u{1}".repeat(100)),
                     json!([-2.2250738585072014e-308, i64::MIN, u64::MAX]), json!({"\\": {"": []}})];
        for value in cases {
            assert!(size_of(&returned(&value)) >= value.to_string().len(), "{value}");
        }
    }

    #[test]
    fn depth_counts_levels_of_lists_and_objects() {
        assert_eq!(depth_of(&json!(1)), 0);
        assert_eq!(depth_of(&json!([])), 1);
        assert_eq!(depth_of(&json!({"a": [1, {"b": []}], "c": 2})), 4);
    }

    #[test]
    fn a_value_nested_a_hundred_thousand_deep_goes_out_without_recursion() {
        let mut value = json!(null);
        for _ in 0..100_000 {
            value = Value::Array(vec![value]);
        }
        let keys = keys_of(&value);
        assert_eq!(nodes_of(&value, &keys).len(), 100_001);
        // serde_json's own drop of such a value recurses: leak it instead.
        std::mem::forget(value);
    }
}
