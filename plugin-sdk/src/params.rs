//! Parameters of a metric-style matcher. The expected value comes in two
//! forms: a scalar (the one main parameter, every other parameter at its
//! default), or an object of named parameters. Unknown names and wrongly
//! typed values are errors that name what is accepted.
//!
//! ```
//! use assay_plugin_sdk::params::{Params, show_score};
//! use serde_json::json;
//!
//! const KNOWN: &[&str] = &["reference", "threshold", "min"];
//! let params = Params::parse("overlap", &json!({"reference": "abc", "min": 0.5}), "reference", KNOWN).unwrap();
//! assert_eq!(params.required_string("reference").unwrap(), "abc");
//! assert_eq!(params.threshold().unwrap(), Some(0.5));
//! assert_eq!(show_score(0.7996, Some(0.8)), "0.7996");
//!
//! let error = Params::parse("overlap", &json!({"refrence": "abc"}), "reference", KNOWN).err().unwrap();
//! assert_eq!(error, "overlap has no parameter `refrence` (its parameters: reference, threshold, min)");
//! ```

use crate::Json;
use serde_json::Map;

/// The parameters of one check.
pub struct Params<'a> {
    /// The matcher key, for messages.
    key: &'a str,
    /// Every parameter name the key accepts.
    known: &'a [&'a str],
    /// The parameters given.
    map: Map<String, Json>,
    /// Whether the expected value was the scalar form.
    scalar: bool,
}

impl<'a> Params<'a> {
    /// Reads the expected value: an object is the parameters, anything else
    /// is the value of the parameter `scalar`.
    pub fn parse(key: &'a str, expected: &Json, scalar: &str, known: &'a [&'a str]) -> Result<Self, String> {
        match expected {
            Json::Object(map) => {
                if let Some(unknown) = map.keys().find(|name| !known.contains(&name.as_str())) {
                    return Err(format!("{key} has no parameter `{unknown}` (its parameters: {})", known.join(", ")));
                }
                Ok(Params { key, known, map: map.clone(), scalar: false })
            }
            other => {
                let mut map = Map::new();
                map.insert(scalar.to_owned(), other.clone());
                Ok(Params { key, known, map, scalar: true })
            }
        }
    }

    /// The error for a parameter of the wrong type.
    fn wrong(&self, name: &str, wanted: &str, found: &Json) -> String {
        if self.scalar {
            format!(
                "{} needs {wanted} or an object of parameters ({}), found {}",
                self.key,
                self.known.join(", "),
                describe(found)
            )
        } else {
            format!("{} needs `{name}` to be {wanted}, found {}", self.key, describe(found))
        }
    }

    /// The raw value of a parameter, if given.
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.map.get(name)
    }

    /// A string parameter that must be given.
    pub fn required_string(&self, name: &str) -> Result<&str, String> {
        self.string(name)?.ok_or_else(|| format!("{} needs the parameter `{name}` (a string)", self.key))
    }

    /// An optional string parameter.
    pub fn string(&self, name: &str) -> Result<Option<&str>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    /// One string parameter or a list of them: `singular` (a string, or
    /// the scalar expected value) or `plural` (a non-empty list of
    /// strings), not both, e.g. `reference` / `references`.
    pub fn one_or_many(&self, singular: &str, plural: &str) -> Result<Vec<&str>, String> {
        let key = self.key;
        match (self.get(singular), self.get(plural)) {
            (Some(_), Some(_)) => Err(format!("{key} takes `{singular}` or `{plural}`, not both")),
            (Some(_), None) => Ok(vec![self.required_string(singular)?]),
            (None, Some(Json::Array(list))) if !list.is_empty() => list
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    item.as_str().ok_or_else(|| {
                        format!("{key} needs `{plural}` to be a list of strings, element {i} is {}", describe(item))
                    })
                })
                .collect(),
            (None, Some(other)) => {
                Err(format!("{key} needs `{plural}` to be a non-empty list of strings, found {}", describe(other)))
            }
            (None, None) => Err(format!("{key} needs `{singular}` (a string) or `{plural}` (a list of strings)")),
        }
    }

    /// An optional boolean parameter.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(name, "true or false", other)),
        }
    }

    /// An optional non-negative whole number (`3` or `3.0`).
    pub fn count(&self, name: &str) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::Number(n)) => match n.as_u64() {
                Some(count) => Ok(Some(count)),
                None => match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 => Ok(Some(f as u64)),
                    _ => Err(self.wrong(name, "a non-negative whole number", &Json::Number(n.clone()))),
                },
            },
            Some(other) => Err(self.wrong(name, "a non-negative whole number", other)),
        }
    }

    /// The pass threshold, `threshold` or its alias `min`: a number in
    /// [0, 1]; `None` when neither is given; an error when both are.
    pub fn threshold(&self) -> Result<Option<f64>, String> {
        let name = match (self.get("threshold"), self.get("min")) {
            (Some(_), Some(_)) => {
                return Err(format!("{} takes `threshold` or its alias `min`, not both", self.key));
            }
            (Some(_), None) => "threshold",
            (None, Some(_)) => "min",
            (None, None) => return Ok(None),
        };
        let value = &self.map[name];
        match value.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => Ok(Some(t)),
            _ => Err(self.wrong(name, "a number between 0 and 1", value)),
        }
    }
}

/// A JSON value's type and value, for messages, e.g. `the number 5`.
pub fn describe(value: &Json) -> String {
    let kind = match value {
        Json::Null => return "null".to_owned(),
        Json::Bool(_) => "the boolean",
        Json::Number(_) => "the number",
        Json::String(_) => "the string",
        Json::Array(_) => "the list",
        Json::Object(_) => "the object",
    };
    let text = value.to_string();
    if text.chars().count() <= 60 {
        format!("{kind} {text}")
    } else {
        format!("{kind} {}…", text.chars().take(60).collect::<String>())
    }
}

/// A score for messages: two decimals, or more when two decimals would put
/// it on the other side of `threshold` (0.7996 shows as `0.7996`, not
/// `0.80`, against a threshold of 0.8). Trailing zeros are dropped, keeping
/// one decimal.
pub fn show_score(score: f64, threshold: Option<f64>) -> String {
    for decimals in 2..=6 {
        let shown = format!("{score:.decimals$}");
        let same_side = match (threshold, shown.parse::<f64>()) {
            (Some(t), Ok(s)) => (s >= t) == (score >= t),
            _ => true,
        };
        if same_side {
            return trim_zeros(&shown);
        }
    }
    format!("{score}")
}

/// `0.50` → `0.5`, `1.00` → `1.0`.
fn trim_zeros(text: &str) -> String {
    if !text.contains('.') {
        return text.to_owned();
    }
    let trimmed = text.trim_end_matches('0');
    if trimmed.ends_with('.') { format!("{trimmed}0") } else { trimmed.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KNOWN: &[&str] = &["reference", "count", "strict", "threshold", "min"];

    #[test]
    fn a_scalar_is_the_main_parameter() {
        let params = Params::parse("m", &json!("text"), "reference", KNOWN).unwrap();
        assert_eq!(params.required_string("reference").unwrap(), "text");
        assert_eq!(params.threshold().unwrap(), None);
        let number = Params::parse("m", &json!(5), "reference", KNOWN).unwrap();
        assert_eq!(
            number.required_string("reference").unwrap_err(),
            "m needs a string or an object of parameters (reference, count, strict, threshold, min), found the number 5"
        );
    }

    #[test]
    fn typed_getters_name_what_they_need() {
        let params =
            Params::parse("m", &json!({"count": 3.0, "strict": "yes", "threshold": 2}), "reference", KNOWN).unwrap();
        assert_eq!(params.count("count").unwrap(), Some(3));
        assert_eq!(
            params.bool("strict").unwrap_err(),
            "m needs `strict` to be true or false, found the string \"yes\""
        );
        assert_eq!(
            params.threshold().unwrap_err(),
            "m needs `threshold` to be a number between 0 and 1, found the number 2"
        );
        assert_eq!(params.required_string("reference").unwrap_err(), "m needs the parameter `reference` (a string)");
        let both = Params::parse("m", &json!({"threshold": 0.1, "min": 0.2}), "reference", KNOWN).unwrap();
        assert_eq!(both.threshold().unwrap_err(), "m takes `threshold` or its alias `min`, not both");
    }

    #[test]
    fn scores_show_enough_decimals_to_stay_on_their_side() {
        assert_eq!(show_score(0.5, None), "0.5");
        assert_eq!(show_score(1.0, Some(0.5)), "1.0");
        assert_eq!(show_score(0.7996, Some(0.8)), "0.7996");
        assert_eq!(show_score(0.8004, Some(0.8)), "0.8");
        assert_eq!(describe(&json!("x".repeat(100))).chars().count(), "the string ".len() + 61);
    }
}
