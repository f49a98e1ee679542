//! Hand-computed cases: each says what the matching must find and why.

use super::*;
use serde_json::json;

fn check(actual: Json, expected: Json) -> Result<Verdict, String> {
    TableEquivalence::evaluate("table_equivalence", &Actual::value(actual), &expected)
}

/// The verdict's extras.
fn extras(v: &Verdict) -> &Json {
    v.extras.as_ref().unwrap()
}

/// (pass, score, matched, missing rows, extra rows) of a verdict.
fn summary(v: &Verdict) -> (bool, f64, u64, u64, u64) {
    let x = extras(v);
    let n = |k: &str| x[k].as_u64().unwrap();
    (v.pass, v.score.unwrap(), n("matched_rows"), n("missing_rows"), n("extra_rows"))
}

fn people() -> Json {
    json!([
        {"name": "Ann", "age": 31, "city": "Oslo"},
        {"name": "Bob", "age": 45, "city": "Rome"},
        {"name": "Cid", "age": 27, "city": "Lima"},
    ])
}

#[test]
fn identical_tables_are_equivalent() {
    let v = check(people(), json!({"rows": people()})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3, 0, 0));
    assert_eq!(v.message, "the tables are equivalent: 3 of 3 expected rows matched, the actual table has 3 rows");
    let x = extras(&v);
    assert_eq!(x["column_mapping"], json!({"name": "name", "age": "age", "city": "city"}));
    assert_eq!(x["equivalent"], json!(true));
    assert_eq!(x["unmatched_expected"], json!([]));
}

#[test]
fn row_and_key_order_do_not_matter_unless_ordered() {
    let shuffled = json!([
        {"city": "Lima", "age": 27, "name": "Cid"},
        {"city": "Oslo", "name": "Ann", "age": 31},
        {"age": 45, "name": "Bob", "city": "Rome"},
    ]);
    let v = check(shuffled.clone(), json!({"rows": people()})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3, 0, 0));

    // In order, row i is compared with row i only: none of the three is in
    // its place.
    let v = check(shuffled, json!({"rows": people(), "ordered": true})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 3, 3));
    assert!(
        v.message.starts_with("0 of 3 expected rows matched in order (score 0.0), 3 of the actual 3 rows unmatched")
    );

    // Swapping the last two rows leaves the first in place: 1 of 3.
    let swapped = json!([people()[0], people()[2], people()[1]]);
    let v = check(swapped, json!({"rows": people(), "ordered": true})).unwrap();
    assert_eq!(summary(&v), (false, 1.0 / 3.0, 1, 2, 2));
    let v = check(people(), json!({"rows": people(), "ordered": true})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3, 0, 0));
}

#[test]
fn renamed_columns_match_by_value() {
    let v = check(json!([{"cnt": 3}]), json!({"rows": [{"count": 3}]})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 1, 0, 0));
    assert_eq!(
        v.message,
        "the tables are equivalent: 1 of 1 expected rows matched, the actual table has 1 row; \
         columns matched by value: count→cnt"
    );
    assert_eq!(extras(&v)["column_mapping"], json!({"count": "cnt"}));

    // Renamed and reordered: `years` holds the ages, `who` the names.
    let actual = json!([
        {"years": 45, "who": "Bob", "town": "Rome"},
        {"years": 31, "who": "Ann", "town": "Oslo"},
        {"years": 27, "who": "Cid", "town": "Lima"},
    ]);
    let v = check(actual, json!({"rows": people()})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3, 0, 0));
    assert_eq!(extras(&v)["column_mapping"], json!({"name": "who", "age": "years", "city": "town"}));
}

#[test]
fn positional_rows_match_named_rows_and_each_other() {
    let v = check(json!([["Ann", 31, "Oslo"], ["Cid", 27, "Lima"], ["Bob", 45, "Rome"]]), json!({"rows": people()}))
        .unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3, 0, 0));
    assert_eq!(extras(&v)["column_mapping"], json!({"name": "#1", "age": "#2", "city": "#3"}));

    // Columns swapped by position.
    let v = check(json!([[1, "a"], [2, "b"]]), json!({"rows": [["a", 1], ["b", 2]]})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
    assert_eq!(extras(&v)["column_mapping"], json!({"#1": "#2", "#2": "#1"}));
    assert!(v.message.ends_with("columns matched by value: #1→#2, #2→#1"), "{}", v.message);
}

/// `id` and `rank` hold the same numbers, so their values alone cannot tell
/// them apart, and the names differ: the first mapping (by position) matches
/// no row, swapping the two matches all three.
#[test]
fn columns_with_the_same_values_are_settled_by_the_rows() {
    let expected = json!([{"id": 1, "rank": 3}, {"id": 2, "rank": 1}, {"id": 3, "rank": 2}]);
    let actual = json!([{"r": 1, "i": 2}, {"r": 3, "i": 1}, {"r": 2, "i": 3}]);
    let v = check(actual, json!({"rows": expected})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3, 0, 0));
    assert_eq!(extras(&v)["column_mapping"], json!({"id": "i", "rank": "r"}));
}

#[test]
fn duplicate_rows_are_counted() {
    // Expected a, a, b; actual a, b, b: one a and one b match (2 of 3), the
    // second a is missing and the second b is extra.
    let v = check(json!([["a"], ["b"], ["b"]]), json!({"rows": [["a"], ["a"], ["b"]]})).unwrap();
    assert_eq!(summary(&v), (false, 2.0 / 3.0, 2, 1, 1));
    assert_eq!(
        v.message,
        "2 of 3 expected rows matched (score 0.67), 1 of the actual 3 rows unmatched; \
         first unmatched expected row [\"a\"]; first unmatched actual row [\"b\"]"
    );
    assert_eq!(extras(&v)["unmatched_expected"], json!([["a"]]));
    assert_eq!(extras(&v)["unmatched_actual"], json!([["b"]]));

    // The same rows twice do not stand in for a row given once more.
    let v = check(json!([[1, "x"], [1, "x"]]), json!({"rows": [[1, "x"], [1, "x"], [1, "x"]]})).unwrap();
    assert_eq!(summary(&v), (false, 2.0 / 3.0, 2, 1, 0));
}

/// With tolerance 0.5, expected 1.0 fits actual 1.2 and 0.9, expected 1.5
/// fits only 1.2: taking 1.2 for 1.0 first (greedy) leaves 1.5 without a
/// partner; the matching reassigns 1.0 to 0.9 and matches both.
#[test]
fn the_matching_is_maximum_not_greedy() {
    let v = check(json!([[1.2], [0.9]]), json!({"rows": [[1.0], [1.5]], "tolerance": 0.5})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
    // With the default tolerance nothing matches.
    let v = check(json!([[1.2], [0.9]]), json!({"rows": [[1.0], [1.5]]})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 2, 2));
}

#[test]
fn numbers_tolerance_and_decimals() {
    // 0.1 + 0.2 is 0.30000000000000004: within the default 1e-6.
    let sum = 0.1 + 0.2;
    assert!(check(json!([[sum]]), json!({"rows": [[0.3]]})).unwrap().pass);
    assert!(check(json!([[5]]), json!({"rows": [[5.0]]})).unwrap().pass);
    assert!(check(json!([[1.0000005]]), json!({"rows": [[1]]})).unwrap().pass);
    assert!(!check(json!([[1.00001]]), json!({"rows": [[1]]})).unwrap().pass);
    // 1.23456 vs 1.23: different by default, equal rounded to 2 decimals
    // or within 0.01.
    assert!(!check(json!([[1.23456]]), json!({"rows": [[1.23]]})).unwrap().pass);
    assert!(check(json!([[1.23456]]), json!({"rows": [[1.23]], "decimals": 2})).unwrap().pass);
    assert!(check(json!([[1.23456]]), json!({"rows": [[1.23]], "tolerance": 0.01})).unwrap().pass);
    // Rounding to 1 decimal: 2.46 → 2.5 and 2.54 → 2.5.
    assert!(check(json!([[2.46]]), json!({"rows": [[2.54]], "decimals": 1, "tolerance": 0})).unwrap().pass);
    // Integers beyond 2^53 compare exactly.
    assert!(!check(json!([[9007199254740993_i64]]), json!({"rows": [[9007199254740992_i64]]})).unwrap().pass);
    assert!(check(json!([[9007199254740993_i64]]), json!({"rows": [[9007199254740993_i64]]})).unwrap().pass);
}

#[test]
fn numeric_strings_equal_numbers_only_with_coerce() {
    let v = check(json!([{"n": "3"}]), json!({"rows": [{"n": 3}]})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 1, 1));
    let v = check(json!([{"n": " 3.50 "}]), json!({"rows": [{"n": 3.5}], "coerce": true})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 1, 0, 0));
    // Booleans are never numbers; non-numeric strings stay strings.
    assert!(!check(json!([[true]]), json!({"rows": [[1]], "coerce": true})).unwrap().pass);
    assert!(!check(json!([["three"]]), json!({"rows": [[3]], "coerce": true})).unwrap().pass);
    assert!(check(json!([["abc"]]), json!({"rows": [["abc"]], "coerce": true})).unwrap().pass);
}

#[test]
fn extra_and_missing_rows() {
    // Every expected row matched (score 1), one more actual row: not
    // equivalent, but a threshold of 1 passes.
    let actual = json!([["a"], ["b"], ["c"]]);
    let v = check(actual.clone(), json!({"rows": [["a"], ["b"]]})).unwrap();
    assert_eq!(summary(&v), (false, 1.0, 2, 0, 1));
    assert_eq!(
        v.message,
        "2 of 2 expected rows matched (score 1.0), 1 of the actual 3 rows unmatched; \
         first unmatched actual row [\"c\"]"
    );
    let v = check(actual, json!({"rows": [["a"], ["b"]], "threshold": 1})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 1));
    assert!(v.message.ends_with("; threshold 1"));

    // Half the expected rows.
    let v = check(json!([["a"], ["b"]]), json!({"rows": [["a"], ["b"], ["c"], ["d"]]})).unwrap();
    assert_eq!(summary(&v), (false, 0.5, 2, 2, 0));
    let v = check(json!([["a"], ["b"]]), json!({"rows": [["a"], ["b"], ["c"], ["d"]], "min": 0.5})).unwrap();
    assert!(v.pass);
    let v = check(json!([["a"], ["b"]]), json!({"rows": [["a"], ["b"], ["c"], ["d"]], "threshold": 0.51})).unwrap();
    assert!(!v.pass);
}

#[test]
fn extra_and_missing_columns() {
    let actual = json!([{"name": "a", "n": 1, "debug": "x"}, {"name": "b", "n": 2, "debug": "y"}]);
    let expected = json!([{"name": "a", "n": 1}, {"name": "b", "n": 2}]);
    let v = check(actual.clone(), json!({"rows": expected})).unwrap();
    assert_eq!(summary(&v), (false, 1.0, 2, 0, 0));
    assert_eq!(
        v.message,
        "2 of 2 expected rows matched (score 1.0), the actual table has 2 rows; extra actual columns: debug"
    );
    assert_eq!(extras(&v)["extra_columns"], json!(["debug"]));
    let v = check(actual, json!({"rows": expected, "allow_extra_columns": true})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
    assert!(v.message.ends_with("; extra actual columns: debug (allowed)"), "{}", v.message);

    // The actual table lacks `n`: no row is complete.
    let v = check(json!([{"name": "a"}, {"name": "b"}]), json!({"rows": expected})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 2, 2));
    assert_eq!(extras(&v)["missing_columns"], json!(["n"]));
    assert_eq!(extras(&v)["column_mapping"], json!({"name": "name", "n": null}));
    assert!(v.message.contains("; no actual column for expected n;"), "{}", v.message);
}

#[test]
fn missing_keys_read_as_null() {
    let v =
        check(json!([{"a": 1, "b": 2}, {"a": 3}]), json!({"rows": [{"a": 3, "b": null}, {"a": 1, "b": 2}]})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
}

#[test]
fn the_actual_may_be_a_string_holding_json() {
    let expected = json!({"rows": [{"count": 3}]});
    assert!(check(json!("[{\"count\": 3}]"), expected.clone()).unwrap().pass);
    assert!(check(json!("```json\n[[3]]\n```"), expected.clone()).unwrap().pass);
    assert!(check(json!("  ```\n[[3]]\n```  "), expected.clone()).unwrap().pass);
    assert_eq!(
        check(json!("three"), expected.clone()).unwrap_err(),
        "the actual value is a string that does not hold JSON (expected ident at line 1 column 2)"
    );
    assert_eq!(
        check(json!("\"[[3]]\""), expected).unwrap_err(),
        "the actual value is a string holding a JSON string, not a table"
    );
    // The expected table may be given as a string too (the scalar form).
    let v = check(json!([[3]]), json!("[{\"count\": 3}]")).unwrap();
    assert!(v.pass);
}

#[test]
fn opensearch_responses_are_tables() {
    let response = json!({
        "schema": [{"name": "count(*)", "type": "integer"}, {"name": "Origin", "alias": "o", "type": "keyword"}],
        "datarows": [[3, "SFO"], [5, "PSA"]],
        "total": 2, "size": 2, "status": 200
    });
    let v = check(response.clone(), json!({"rows": [{"origin": "PSA", "count": 5}, {"origin": "SFO", "count": 3}]}))
        .unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
    assert_eq!(extras(&v)["column_mapping"], json!({"origin": "o", "count": "count(*)"}));
    // As a string, too, and as the expected rows.
    assert!(check(json!(response.to_string()), json!({"rows": response.clone()})).unwrap().pass);
    // Without a schema the columns are positional.
    let v = check(json!({"datarows": [[3]]}), json!({"rows": [[3]]})).unwrap();
    assert!(v.pass);
    assert_eq!(
        check(json!({"schema": [{"name": "a"}], "datarows": [[1, 2]]}), json!({"rows": [[1, 2]]})).unwrap_err(),
        "the actual value has a `schema` of 1 columns and `datarows` of 2 values"
    );
}

#[test]
fn single_value_rows_are_one_column() {
    let v = check(json!([3, 4]), json!({"rows": [[4], [3]]})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
    let v = check(json!(["x", null]), json!({"rows": [{"v": null}, {"v": "x"}]})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 2, 0, 0));
}

#[test]
fn nested_values_compare_deeply() {
    let v = check(json!([{"tags": ["a", 1.0]}]), json!({"rows": [{"tags": ["a", 1]}]})).unwrap();
    assert!(v.pass);
    let v = check(json!([{"tags": ["a", 2]}]), json!({"rows": [{"tags": ["a", 1]}]})).unwrap();
    assert!(!v.pass);
    let v = check(json!([[{"x": 1, "y": "z"}]]), json!({"rows": [[{"y": "z", "x": 1}]]})).unwrap();
    assert!(v.pass);
}

#[test]
fn empty_tables() {
    let v = check(json!([]), json!({"rows": []})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 0, 0, 0));
    assert_eq!(v.message, "the tables are equivalent: 0 of 0 expected rows matched, the actual table has 0 rows");
    let v = check(json!([[1]]), json!({"rows": []})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 0, 1));
    let v = check(json!([]), json!({"rows": [[1]]})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 1, 0));
    assert_eq!(
        v.message,
        "0 of 1 expected rows matched (score 0.0), the actual table has 0 rows; first unmatched expected row [1]"
    );
    let v = check(json!("[]"), json!("[]")).unwrap();
    assert!(v.pass);
}

#[test]
fn bad_input_is_an_error() {
    let known = "rows, ordered, tolerance, decimals, coerce, allow_extra_columns, threshold, min";
    let rows = [
        (
            json!([[1]]),
            json!({"rows": [[1]], "order": true}),
            format!("table_equivalence has no parameter `order` (its parameters: {known})"),
        ),
        (
            json!([[1]]),
            json!({"ordered": true}),
            "table_equivalence needs the parameter `rows` (the expected table)".to_owned(),
        ),
        (
            json!([[1]]),
            json!([1]),
            "table_equivalence needs the expected table as {\"rows\": [...]} or as a string holding JSON \
             (assay splits a list given directly into one check per element), found the list [1]"
                .to_owned(),
        ),
        (
            json!([[1]]),
            json!(5),
            "the expected table needs a table: a JSON list of rows (objects or lists), or a string holding one; \
             found the number 5"
                .to_owned(),
        ),
        (
            json!(5),
            json!({"rows": [[5]]}),
            "the actual value needs a table: a JSON list of rows (objects or lists), or a string holding one; \
             found the number 5"
                .to_owned(),
        ),
        (
            json!({"a": 1}),
            json!({"rows": [[1]]}),
            "the actual value needs a table: a JSON list of rows (objects or lists), or a string holding one; \
             found the object {\"a\":1}"
                .to_owned(),
        ),
        (
            json!([{"a": 1}, [1]]),
            json!({"rows": [[1]]}),
            "the actual value mixes kinds of rows: row 1 is an object, row 2 is a list".to_owned(),
        ),
        (
            json!([[1, 2], [1]]),
            json!({"rows": [[1]]}),
            "the actual value has rows of different lengths: row 1 has 2 values, row 2 has 1".to_owned(),
        ),
        (
            json!([[1]]),
            json!({"rows": [[1]], "tolerance": -1}),
            "table_equivalence needs `tolerance` to be a non-negative number, found the number -1".to_owned(),
        ),
        (
            json!([[1]]),
            json!({"rows": [[1]], "decimals": 16}),
            "table_equivalence needs `decimals` between 0 and 15, found 16".to_owned(),
        ),
        (
            json!([[1]]),
            json!({"rows": [[1]], "coerce": "yes"}),
            "table_equivalence needs `coerce` to be true or false, found the string \"yes\"".to_owned(),
        ),
        (
            json!([[1]]),
            json!({"rows": [[1]], "threshold": 2}),
            "table_equivalence needs `threshold` to be a number between 0 and 1, found the number 2".to_owned(),
        ),
    ];
    for (actual, expected, message) in rows {
        assert_eq!(check(actual.clone(), expected.clone()).unwrap_err(), message, "{actual} vs {expected}");
    }
    assert_eq!(
        TableEquivalence::evaluate("table", &Actual::text("[]"), &json!("[]")).unwrap_err(),
        "the table-equivalence plugin has no matcher `table`"
    );
}

#[test]
fn unmatched_rows_in_extras_are_capped() {
    let actual: Vec<Json> = (0..10).map(|i| json!([i])).collect();
    let expected: Vec<Json> = (100..110).map(|i| json!([i])).collect();
    let v = check(json!(actual), json!({"rows": expected})).unwrap();
    assert_eq!(summary(&v), (false, 0.0, 0, 10, 10));
    assert_eq!(extras(&v)["unmatched_expected"], json!([[100], [101], [102], [103], [104]]));
    assert_eq!(extras(&v)["unmatched_actual"], json!([[0], [1], [2], [3], [4]]));
}

#[test]
fn core_functions_are_public() {
    let actual = parse_table(&json!([[2, "b"], [1, "a"]]), "actual").unwrap();
    let expected = parse_table(&json!([{"k": "a", "v": 1}, {"k": "b", "v": 2}]), "expected").unwrap();
    assert_eq!(expected.columns, ["k", "v"]);
    assert!(expected.named && !actual.named);
    let c = compare_tables(&actual, &expected, &Options::default());
    assert!(c.equivalent);
    assert_eq!(c.mapping, [Some(1), Some(0)]);
    assert_eq!(c.matches, [Some(1), Some(0)]);
}

/// Larger tables stay quick: 3,000 distinct named rows shuffled, and 1,500
/// rows of numbers only (one group, compared pairwise).
#[test]
fn larger_tables() {
    let expected: Vec<Json> = (0..3000).map(|i| json!({"id": format!("k{i}"), "v": i as f64 / 7.0})).collect();
    let actual: Vec<Json> = (0..3000)
        .map(|i| (i * 7919) % 3000)
        .map(|i| json!({"key": format!("k{i}"), "value": i as f64 / 7.0}))
        .collect();
    let v = check(json!(actual), json!({"rows": expected})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 3000, 0, 0));

    let expected: Vec<Json> = (0..1500).map(|i| json!([i % 10, i / 10])).collect();
    let actual: Vec<Json> = (0..1500).rev().map(|i| json!([i / 10, i % 10])).collect();
    let v = check(json!(actual), json!({"rows": expected})).unwrap();
    assert_eq!(summary(&v), (true, 1.0, 1500, 0, 0));
}

/// The reference script's kind of generator: a 64-bit LCG.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

/// Kuhn's augmenting paths over the full adjacency: the textbook maximum
/// matching, to check the grouped and indexed one against.
fn textbook_matching(adjacency: &[Vec<usize>], right: usize) -> usize {
    fn augment(l: usize, adjacency: &[Vec<usize>], seen: &mut [bool], owner: &mut [Option<usize>]) -> bool {
        for &r in &adjacency[l] {
            if !seen[r] {
                seen[r] = true;
                if owner[r].is_none_or(|o| augment(o, adjacency, seen, owner)) {
                    owner[r] = Some(l);
                    return true;
                }
            }
        }
        false
    }
    let mut owner = vec![None; right];
    (0..adjacency.len()).filter(|&l| augment(l, adjacency, &mut vec![false; right], &mut owner)).count()
}

/// 300 random pairs of small tables (numbers near each other, strings,
/// nulls, numeric strings, duplicates) under random options: the matching
/// is a valid one-to-one matching of equal rows and as large as the
/// textbook maximum matching under the same column mapping.
#[test]
fn matching_is_maximum_on_random_tables() {
    let mut rng = Lcg(99);
    let cells =
        [json!(1), json!(1.05), json!(1.1), json!(2), json!("a"), json!("b"), json!(null), json!("1"), json!(true)];
    for round in 0..300 {
        let width = 1 + rng.next(3);
        let table = |rng: &mut Lcg, rows: usize| -> Json {
            json!(
                (0..rows)
                    .map(|_| (0..width).map(|_| cells[rng.next(cells.len())].clone()).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            )
        };
        let (expected_rows, actual_rows) = (rng.next(8), rng.next(8));
        let (expected, actual) = (table(&mut rng, expected_rows), table(&mut rng, actual_rows));
        let options =
            Options { tolerance: [0.0, 0.06, 0.2][rng.next(3)], coerce: rng.next(2) == 1, ..Options::default() };
        let (e, a) = (parse_table(&expected, "e").unwrap(), parse_table(&actual, "a").unwrap());
        let c = compare_tables(&a, &e, &options);
        let context = format!("round {round}: {actual} vs {expected} under {options:?}");
        // One-to-one, and every matched pair equal on the mapped columns.
        let used: Vec<usize> = c.matches.iter().flatten().copied().collect();
        let mut unique = used.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), used.len(), "{context}");
        let equal = |er: usize, ar: usize| {
            c.mapping
                .iter()
                .enumerate()
                .all(|(ec, ac)| ac.is_some_and(|ac| options.cells_equal(&e.rows[er][ec], &a.rows[ar][ac])))
        };
        for (er, ar) in c.matches.iter().enumerate() {
            if let Some(ar) = ar {
                assert!(equal(er, *ar), "{context}");
            }
        }
        let adjacency: Vec<Vec<usize>> =
            (0..e.len()).map(|er| (0..a.len()).filter(|&ar| equal(er, ar)).collect()).collect();
        assert_eq!(c.matched, textbook_matching(&adjacency, a.len()), "{context}");
    }
}
