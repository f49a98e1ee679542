//! `assay:plugin@0.3.0`'s typed `value` (a JSON value as a flat list of
//! nodes in pre-order) from and to `serde_json::Value`: a check's expected
//! value going in, a verdict's extras coming back. Extras come from the
//! guest, so reading them is an input path: the nodes are counted against
//! the extras cap before anything is built, nesting is bounded, and a value
//! with nodes missing or left over, a key twice, or a number JSON has not
//! is refused with what is wrong. Both directions walk the value with a
//! stack of their own, so no value's depth can exhaust the host's stack.

use crate::sandbox::bindings::matcher_0_3::assay::plugin::types::{NodeParam, NodeResult};
use serde_json::{Map, Number, Value};

/// The deepest nesting of lists and objects in extras the host reads
/// (serde_json's own limit when it parses JSON text).
pub(crate) const MAX_DEPTH: usize = 128;

/// What one node counts for against the extras cap, besides its strings:
/// the JSON text it stands for is about as long (`null`, a number, the
/// brackets and commas of a list).
const NODE_BYTES: usize = 8;

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

/// How many bytes `nodes` count for against the extras cap: each node
/// [`NODE_BYTES`] plus the bytes of its strings.
pub(crate) fn size_of(nodes: &[NodeResult]) -> usize {
    nodes
        .iter()
        .map(|node| {
            NODE_BYTES
                + match node {
                    NodeResult::Text(s) => s.len(),
                    NodeResult::Object(keys) => keys.iter().map(String::len).sum(),
                    _ => 0,
                }
        })
        .sum()
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
            NodeResult::List(0) => Value::Array(Vec::new()),
            NodeResult::Object(keys) if keys.is_empty() => Value::Object(Map::new()),
            opened => {
                if open.len() == MAX_DEPTH {
                    return Err(format!("node {index} nests deeper than {MAX_DEPTH} lists and objects"));
                }
                open.push(match opened {
                    NodeResult::List(left) => {
                        // Never more room than the nodes left could fill.
                        let room = (left as usize).min(count - index);
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
                        return Err(format!("an object has the key `{key}` twice"));
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
        assert_eq!(refused(vec![Object(vec!["a".into(), "a".into()]), Null, Null]), "an object has the key `a` twice");
        assert_eq!(refused(vec![Float(f64::NAN)]), "node 0 is the number NaN, which JSON cannot hold");
        assert_eq!(refused(vec![Float(f64::INFINITY)]), "node 0 is the number inf, which JSON cannot hold");
        let deep: Vec<NodeResult> = (0..=MAX_DEPTH).map(|_| List(1)).chain([Null]).collect();
        assert_eq!(refused(deep), "node 128 nests deeper than 128 lists and objects");
        let deepest: Vec<NodeResult> = (0..MAX_DEPTH).map(|_| List(1)).chain([Null]).collect();
        assert!(value_of(deepest).is_ok());
    }

    #[test]
    fn a_value_counts_its_nodes_and_strings_against_the_cap() {
        let nodes = returned(&json!({"ab": ["cde", 1]}));
        assert_eq!(size_of(&nodes), 4 * NODE_BYTES + 2 + 3);
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
