//! Table-driven tests of every stock matcher: each row is (key, actual,
//! expected, the exact verdict or error).

use super::Stock;
use assay_plugin_sdk::{Actual, Matcher};
use serde_json::{Value, json};

/// What a row expects: a verdict (pass, message) or an error message.
enum Want {
    Pass(&'static str),
    Fail(&'static str),
    Error(&'static str),
}
use Want::*;

fn run(rows: &[(&str, Value, Value, Want)]) {
    for (key, actual, expected, want) in rows {
        let got = Stock::evaluate(key, &Actual::value(actual.clone()), expected);
        let context = format!("{key}: actual {actual}, expected {expected}");
        match (want, got) {
            (Pass(message), Ok(v)) => assert!(v.pass && v.message == *message, "{context}: got {v:?}"),
            (Fail(message), Ok(v)) => assert!(!v.pass && v.message == *message, "{context}: got {v:?}"),
            (Error(message), Err(e)) => assert_eq!(e, *message, "{context}"),
            (_, got) => panic!("{context}: got {got:?}"),
        }
    }
}

#[test]
fn value() {
    run(&[
        ("value", json!(19481.0), json!(19481.0), Pass("19481.0 equals 19481.0")),
        ("value", json!(5), json!(5.0), Pass("5 equals 5.0")),
        ("value", json!(5.0), json!(5), Pass("5.0 equals 5")),
        ("value", json!(-3), json!(-3), Pass("-3 equals -3")),
        ("value", json!(5), json!(6), Fail("5 does not equal 6")),
        ("value", json!("5"), json!(5), Fail("\"5\" does not equal 5")),
        ("value", json!(true), json!(1), Fail("true does not equal 1")),
        ("value", json!("Beatles"), json!("Beatles"), Pass("\"Beatles\" equals \"Beatles\"")),
        ("value", json!("beatles"), json!("Beatles"), Fail("\"beatles\" does not equal \"Beatles\"")),
        ("value", json!([1, 2.0]), json!([1.0, 2]), Pass("[1,2.0] equals [1.0,2]")),
        ("value", json!([1, 2]), json!([2, 1]), Fail("[1,2] does not equal [2,1]")),
        (
            "value",
            json!({"a": 1, "b": [2]}),
            json!({"b": [2.0], "a": 1}),
            // Objects compare as maps; messages keep the order as written.
            Pass("{\"a\":1,\"b\":[2]} equals {\"b\":[2.0],\"a\":1}"),
        ),
        ("value", json!({"a": 1}), json!({"a": 1, "b": 2}), Fail("{\"a\":1} does not equal {\"a\":1,\"b\":2}")),
        ("value", json!(null), json!(null), Pass("null equals null")),
        ("value", json!(u64::MAX), json!(u64::MAX), Pass("18446744073709551615 equals 18446744073709551615")),
    ]);
}

#[test]
fn value_shows_long_values_cut() {
    let long = "x".repeat(200);
    let v = Stock::evaluate("value", &Actual::text(long.clone()), &json!("y")).unwrap();
    assert!(!v.pass);
    assert!(v.message.starts_with(&format!("\"{}…", "x".repeat(79))), "{}", v.message);
}

#[test]
fn less() {
    run(&[
        ("less", json!(3), json!(5), Pass("3 is less than 5")),
        ("less", json!(5), json!(5), Fail("5 is not less than 5")),
        ("less", json!(7.5), json!(5), Fail("7.5 is not less than 5")),
        ("less", json!(4.99), json!(5), Pass("4.99 is less than 5")),
        ("less", json!(-1), json!(0.0), Pass("-1 is less than 0.0")),
        ("less", json!("apple"), json!("banana"), Pass("\"apple\" is less than \"banana\"")),
        ("less", json!("Zebra"), json!("apple"), Pass("\"Zebra\" is less than \"apple\"")),
        ("less", json!("b"), json!("a"), Fail("\"b\" is not less than \"a\"")),
        (
            "less",
            json!("5"),
            json!(6),
            Error(
                "less cannot compare the string \"5\" with the number 6: compare numbers with numbers and strings with strings",
            ),
        ),
        ("less", json!(5), json!([6]), Error("less needs a number or a string to compare with, found the list [6]")),
        ("less", json!([1]), json!(6), Error("less compares numbers or strings, found the list [1]")),
        ("less", json!(null), json!(6), Error("less compares numbers or strings, found null")),
        ("less", json!(true), json!(6), Error("less compares numbers or strings, found the boolean true")),
    ]);
}

#[test]
fn greater() {
    run(&[
        ("greater", json!(7), json!(5), Pass("7 is greater than 5")),
        ("greater", json!(5), json!(5.0), Fail("5 is not greater than 5.0")),
        ("greater", json!(2), json!(5), Fail("2 is not greater than 5")),
        (
            "greater",
            json!(9007199254740993_i64),
            json!(9007199254740992_i64),
            Pass("9007199254740993 is greater than 9007199254740992"),
        ),
        ("greater", json!("b"), json!("a"), Pass("\"b\" is greater than \"a\"")),
        ("greater", json!("a"), json!("a"), Fail("\"a\" is not greater than \"a\"")),
        (
            "greater",
            json!(5),
            json!("4"),
            Error(
                "greater cannot compare the number 5 with the string \"4\": compare numbers with numbers and strings with strings",
            ),
        ),
        (
            "greater",
            json!({"a": 1}),
            json!(1),
            Error("greater compares numbers or strings, found the object {\"a\":1}"),
        ),
    ]);
}

#[test]
fn keywords() {
    run(&[
        (
            "keywords",
            json!("The Beatles were from Liverpool"),
            json!("Beatles"),
            Pass("found \"Beatles\" in a 31-character string"),
        ),
        (
            "keywords",
            json!("The Beatles"),
            json!("beatles"),
            Fail("\"beatles\" does not occur in a 11-character string"),
        ),
        ("keywords", json!("Motörhead"), json!("ö"), Pass("found \"ö\" in a 9-character string")),
        ("keywords", json!("anything"), json!(""), Pass("found \"\" in a 8-character string")),
        (
            "keywords",
            json!("abc 5"),
            json!(5),
            Error("keywords looks for strings in a string, but the keyword is the number 5"),
        ),
        ("keywords", json!(["a", 5, [1]]), json!(5.0), Pass("the list of 3 elements contains 5.0")),
        ("keywords", json!(["a", 5, [1]]), json!("b"), Fail("the list of 3 elements does not contain \"b\"")),
        ("keywords", json!(["a", 5, [1]]), json!([1]), Pass("the list of 3 elements contains [1]")),
        ("keywords", json!(["5"]), json!(5), Fail("the list of 1 elements does not contain 5")),
        ("keywords", json!({"answer": 1, "cost": 2}), json!("answer"), Pass("the object has the key \"answer\"")),
        (
            "keywords",
            json!({"answer": 1, "cost": 2}),
            json!("name"),
            Fail("the object has no key \"name\" (its keys: answer, cost)"),
        ),
        (
            "keywords",
            json!({"a": 1}),
            json!(1),
            Error("keywords looks for keys in an object, but the keyword is the number 1"),
        ),
        ("keywords", json!(42), json!("4"), Error("keywords looks in a string, list or object, found the number 42")),
        ("keywords", json!(null), json!("x"), Error("keywords looks in a string, list or object, found null")),
    ]);
}

#[test]
fn unknown_key_is_an_error() {
    run(&[("gist", json!("x"), json!("y"), Error("the stock plugin has no matcher `gist`"))]);
}

#[test]
fn describe_names_every_key() {
    let info = Stock::describe();
    assert_eq!(info.name, "stock");
    let keys: Vec<&str> = info.matchers.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["value", "less", "greater", "keywords"]);
}
