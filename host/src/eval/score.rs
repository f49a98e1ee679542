//! Weighted scores: a [`Tally`] of the weight that matched out of the
//! weight that was judged. Scenario scores, category scores and judge
//! agreement are all tallies.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::collections::BTreeMap;

/// Matched weight out of judged weight. Judgments that could not be made
/// (errors) are counted apart and are in neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// The weight of the judgments that matched.
    pub matched: u64,
    /// The weight of every judgment made.
    pub total: u64,
    /// How many judgments could not be made.
    pub errors: u64,
}

impl Tally {
    /// Counts one judgment of `weight`: matched or not, or `None` for one
    /// that could not be made.
    pub fn add(&mut self, weight: u32, matched: Option<bool>) {
        match matched {
            Some(matched) => {
                self.total += u64::from(weight);
                if matched {
                    self.matched += u64::from(weight);
                }
            }
            None => self.errors += 1,
        }
    }

    /// Adds another tally.
    pub fn merge(&mut self, other: &Tally) {
        self.matched += other.matched;
        self.total += other.total;
        self.errors += other.errors;
    }

    /// `matched / total`, or `None` when nothing was judged.
    pub fn score(&self) -> Option<f64> {
        (self.total > 0).then(|| self.matched as f64 / self.total as f64)
    }

    /// `0.75 (3/4)`, with the errors when there are any.
    pub fn describe(&self) -> String {
        let score = match self.score() {
            Some(score) => format!("{score:.2} ({}/{})", self.matched, self.total),
            None => "n/a (nothing judged)".to_owned(),
        };
        match self.errors {
            0 => score,
            1 => format!("{score}, 1 error"),
            n => format!("{score}, {n} errors"),
        }
    }
}

impl Serialize for Tally {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tally = serializer.serialize_struct("Tally", 4)?;
        tally.serialize_field("score", &self.score())?;
        tally.serialize_field("matched_weight", &self.matched)?;
        tally.serialize_field("total_weight", &self.total)?;
        tally.serialize_field("errors", &self.errors)?;
        tally.end()
    }
}

/// Tallies by category.
pub type CategoryTallies = BTreeMap<String, Tally>;

/// Counts one judgment of `weight` towards each of `categories`.
pub(crate) fn add_to_categories(
    tallies: &mut CategoryTallies,
    categories: &[String],
    weight: u32,
    matched: Option<bool>,
) {
    for category in categories {
        tallies.entry(category.clone()).or_default().add(weight, matched);
    }
}

/// Adds every category of `other` into `tallies`.
pub(crate) fn merge_categories(tallies: &mut CategoryTallies, other: &CategoryTallies) {
    for (category, tally) in other {
        tallies.entry(category.clone()).or_default().merge(tally);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_matched_weight_counts_and_errors_stand_apart() {
        let mut tally = Tally::default();
        tally.add(2, Some(true));
        tally.add(1, Some(false));
        tally.add(5, None);
        assert_eq!(tally, Tally { matched: 2, total: 3, errors: 1 });
        assert_eq!(tally.score(), Some(2.0 / 3.0));
        assert_eq!(tally.describe(), "0.67 (2/3), 1 error");
        assert_eq!(Tally::default().score(), None);
        let json = serde_json::to_value(tally).unwrap();
        assert_eq!(json, serde_json::json!({"score": 2.0 / 3.0, "matched_weight": 2, "total_weight": 3, "errors": 1}));
    }

    #[test]
    fn category_scores_count_only_matched_expectations() {
        // The seed's code added every expectation's weight to the
        // numerator of its categories; only matched ones belong there.
        let mut tallies = CategoryTallies::new();
        add_to_categories(&mut tallies, &["a".into(), "b".into()], 2, Some(true));
        add_to_categories(&mut tallies, &["a".into()], 3, Some(false));
        assert_eq!(tallies["a"], Tally { matched: 2, total: 5, errors: 0 });
        assert_eq!(tallies["b"], Tally { matched: 2, total: 2, errors: 0 });
    }
}
