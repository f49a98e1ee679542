//! promptfoo's `derivedMetrics`: named expressions over a prompt's summed
//! named scores (mathjs in promptfoo), evaluated after each result in
//! order, each seeing the ones before it and `__count` (the prompt's
//! results so far). assay reads the arithmetic subset of mathjs they are
//! written in: numbers, names, `+ - * / % ^`, unary `-`, parentheses and
//! `min`, `max`, `abs`, `sqrt`, `round`, `floor`, `ceil`, `exp`, `log`;
//! anything else is an error when the config is read, naming the metric.
//! They change no verdict: promptfoo shows them beside the prompt, and
//! assay writes them in its output file's `results.prompts[].metrics`.

use std::collections::BTreeMap;

/// One derived metric, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedMetric {
    /// Its name, the key it is written under.
    pub name: String,
    expression: Expr,
}

#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Number(f64),
    Name(String),
    Negate(Box<Expr>),
    Binary(char, Box<Expr>, Box<Expr>),
    Call(Function, Vec<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Function {
    Min,
    Max,
    Abs,
    Sqrt,
    Round,
    Floor,
    Ceil,
    Exp,
    Log,
}

const FUNCTIONS: &[(&str, Function)] = &[
    ("min", Function::Min),
    ("max", Function::Max),
    ("abs", Function::Abs),
    ("sqrt", Function::Sqrt),
    ("round", Function::Round),
    ("floor", Function::Floor),
    ("ceil", Function::Ceil),
    ("exp", Function::Exp),
    ("log", Function::Log),
];

/// The most an expression may nest, so that a hostile one cannot
/// exhaust the stack.
const MAX_DEPTH: usize = 64;

/// The longest expression read, in characters: a chain of `a+a+…` is a
/// tree as deep as it is long, which evaluating (and dropping) walks.
const MAX_LENGTH: usize = 1000;

impl DerivedMetric {
    /// `name` = `text`, parsed; the error says what is not understood.
    pub fn parse(name: &str, text: &str) -> Result<DerivedMetric, String> {
        if text.chars().count() > MAX_LENGTH {
            return Err(format!("it is longer than {MAX_LENGTH} characters"));
        }
        let mut parser = Parser { chars: text.chars().collect(), at: 0, depth: 0 };
        let expression = parser.sum()?;
        parser.skip_spaces();
        if parser.at < parser.chars.len() {
            return Err(format!("unexpected `{}` at character {}", parser.chars[parser.at], parser.at + 1));
        }
        Ok(DerivedMetric { name: name.to_owned(), expression })
    }

    /// Its value over `scores`; an error names a name with no score (as
    /// mathjs's "Undefined symbol").
    pub fn evaluate(&self, scores: &BTreeMap<String, f64>) -> Result<f64, String> {
        self.expression.evaluate(scores)
    }
}

/// promptfoo's `updateDerivedMetrics` over a prompt's final sums: each
/// metric in order, 0 where it cannot be evaluated (promptfoo logs and
/// keeps 0), each seen by the next; `count` is `__count`.
pub fn derive(metrics: &[DerivedMetric], named_scores: &mut BTreeMap<String, f64>, count: usize) {
    let mut context = named_scores.clone();
    context.insert("__count".into(), count as f64);
    for metric in metrics {
        let value = metric.evaluate(&context).unwrap_or(0.0);
        named_scores.insert(metric.name.clone(), value);
        context.insert(metric.name.clone(), value);
    }
}

impl Expr {
    fn evaluate(&self, scores: &BTreeMap<String, f64>) -> Result<f64, String> {
        Ok(match self {
            Expr::Number(n) => *n,
            Expr::Name(name) => *scores.get(name).ok_or_else(|| format!("Undefined symbol {name}"))?,
            Expr::Negate(inner) => -inner.evaluate(scores)?,
            Expr::Binary(op, left, right) => {
                let (a, b) = (left.evaluate(scores)?, right.evaluate(scores)?);
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    '/' => a / b,
                    // mathjs's `mod` takes the sign of the divisor.
                    // mathjs's `mod` takes the sign of the divisor, and
                    // `x mod 0` is x.
                    '%' if b == 0.0 => a,
                    '%' => a - b * (a / b).floor(),
                    _ => a.powf(b),
                }
            }
            Expr::Call(function, args) => {
                let args = args.iter().map(|a| a.evaluate(scores)).collect::<Result<Vec<f64>, String>>()?;
                let one = || args.first().copied().unwrap_or(f64::NAN);
                match function {
                    Function::Min => args.iter().copied().fold(f64::INFINITY, f64::min),
                    Function::Max => args.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    Function::Abs => one().abs(),
                    Function::Sqrt => one().sqrt(),
                    // mathjs rounds halves away from zero, to `n` decimals.
                    Function::Round => match args.get(1) {
                        Some(&digits) => {
                            let scale = 10f64.powi(digits as i32);
                            (one() * scale).round() / scale
                        }
                        None => one().round(),
                    },
                    Function::Floor => one().floor(),
                    Function::Ceil => one().ceil(),
                    Function::Exp => one().exp(),
                    Function::Log => match args.get(1) {
                        Some(&base) => one().ln() / base.ln(),
                        None => one().ln(),
                    },
                }
            }
        })
    }
}

/// A recursive-descent parser: sum → product → power → unary → atom.
struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn skip_spaces(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_spaces();
        self.chars.get(self.at).copied()
    }

    fn nested<T>(&mut self, parse: impl FnOnce(&mut Parser) -> Result<T, String>) -> Result<T, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("it nests deeper than {MAX_DEPTH}"));
        }
        let parsed = parse(self);
        self.depth -= 1;
        parsed
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut left = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.product()?));
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut left = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.power()?));
        }
        Ok(left)
    }

    /// `^` binds right to left, and tighter than unary minus on its left.
    fn power(&mut self) -> Result<Expr, String> {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.at += 1;
            let exponent = self.nested(Parser::power)?;
            return Ok(Expr::Binary('^', Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some('-') => {
                self.at += 1;
                Ok(Expr::Negate(Box::new(self.nested(Parser::power)?)))
            }
            Some('+') => {
                self.at += 1;
                self.nested(Parser::power)
            }
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let inner = self.nested(Parser::sum)?;
                self.expect(')')?;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => {
                let start = self.at;
                while self.chars.get(self.at).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                    self.at += 1;
                }
                let name: String = self.chars[start..self.at].iter().collect();
                if self.peek() != Some('(') {
                    return Ok(Expr::Name(name));
                }
                let Some(&(_, function)) = FUNCTIONS.iter().find(|(known, _)| *known == name) else {
                    let known: Vec<&str> = FUNCTIONS.iter().map(|(n, _)| *n).collect();
                    return Err(format!("`{name}(…)` is not a function assay evaluates; it has {}", known.join(", ")));
                };
                self.at += 1;
                let mut args = vec![self.nested(Parser::sum)?];
                while self.peek() == Some(',') {
                    self.at += 1;
                    args.push(self.nested(Parser::sum)?);
                }
                self.expect(')')?;
                let (least, most) = match function {
                    Function::Min | Function::Max => (1, usize::MAX),
                    Function::Round | Function::Log => (1, 2),
                    _ => (1, 1),
                };
                if !(least..=most).contains(&args.len()) {
                    return Err(format!(
                        "`{name}(…)` takes {} arguments, not {}",
                        if most == 1 {
                            "1".to_owned()
                        } else if most == 2 {
                            "1 or 2".to_owned()
                        } else {
                            "1 or more".to_owned()
                        },
                        args.len()
                    ));
                }
                Ok(Expr::Call(function, args))
            }
            Some(c) => Err(format!("unexpected `{c}` at character {}", self.at + 1)),
            None => Err("it ends where a value should be".into()),
        }
    }

    fn number(&mut self) -> Result<Expr, String> {
        let start = self.at;
        while self.chars.get(self.at).is_some_and(|c| c.is_ascii_digit() || *c == '.') {
            self.at += 1;
        }
        if self.chars.get(self.at).is_some_and(|c| *c == 'e' || *c == 'E') {
            self.at += 1;
            if self.chars.get(self.at).is_some_and(|c| *c == '-' || *c == '+') {
                self.at += 1;
            }
            while self.chars.get(self.at).is_some_and(char::is_ascii_digit) {
                self.at += 1;
            }
        }
        let text: String = self.chars[start..self.at].iter().collect();
        text.parse().map(Expr::Number).map_err(|_| format!("`{text}` is not a number"))
    }

    fn expect(&mut self, wanted: char) -> Result<(), String> {
        match self.peek() {
            Some(c) if c == wanted => {
                self.at += 1;
                Ok(())
            }
            Some(c) => Err(format!("expected `{wanted}` at character {}, found `{c}`", self.at + 1)),
            None => Err(format!("expected `{wanted}` at the end")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, scores: &[(&str, f64)]) -> Result<f64, String> {
        let scores = scores.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        DerivedMetric::parse("m", text)?.evaluate(&scores)
    }

    #[test]
    fn arithmetic_over_named_scores_is_evaluated_as_mathjs_does() {
        let scores = [("A", 3.0), ("B", 1.0), ("Tone_2", 0.5)];
        assert_eq!(value("A * 2", &scores), Ok(6.0));
        assert_eq!(value("(A + B) / 2", &scores), Ok(2.0));
        assert_eq!(value("A + B * 2 - Tone_2", &scores), Ok(4.5));
        assert_eq!(value("2 ^ 3 ^ 2", &scores), Ok(512.0));
        assert_eq!(value("-2 ^ 2", &scores), Ok(-4.0));
        assert_eq!(value("-7 % 3", &scores), Ok(2.0));
        assert_eq!(value("max(A, B, 10) + min(A, B) + sqrt(4) + round(2.5) + abs(-1)", &scores), Ok(17.0));
        assert_eq!(value("1.5e1 + .5", &scores), Ok(15.5));
        assert_eq!(value("A / 0", &scores), Ok(f64::INFINITY));
        assert_eq!(value("Missing + 1", &scores), Err("Undefined symbol Missing".into()));
        assert_eq!(value("round(2.71828, 2)", &scores), Ok(2.72));
        assert!((value("log(8, 2)", &scores).unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(value("5 % 0", &scores), Ok(5.0));
    }

    #[test]
    fn what_is_not_arithmetic_is_an_error_saying_what() {
        for (text, error) in [
            ("A +", "ends where a value should be"),
            ("(A + B", "expected `)` at the end"),
            ("A B", "unexpected `B` at character 3"),
            ("import('fs')", "`import(…)` is not a function assay evaluates"),
            ("A == B", "unexpected `=`"),
            ("x => x", "unexpected `=`"),
        ] {
            let got = DerivedMetric::parse("m", text).unwrap_err();
            assert!(got.contains(error), "{text}: {got}");
        }
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(DerivedMetric::parse("m", &deep).unwrap_err().contains("nests deeper than 64"));
        let deep = format!("{}1", "-".repeat(70));
        assert!(DerivedMetric::parse("m", &deep).unwrap_err().contains("nests deeper than 64"));
        // A long chain is a deep tree too: refused by its length.
        let long = vec!["a"; 10_000].join("+");
        assert!(DerivedMetric::parse("m", &long).unwrap_err().contains("longer than 1000 characters"));
        assert!(DerivedMetric::parse("m", "abs(1, 2)").unwrap_err().contains("`abs(…)` takes 1 arguments, not 2"));
    }

    #[test]
    fn each_metric_sees_the_ones_before_it_and_the_count_and_a_failure_is_zero() {
        let metrics = [
            DerivedMetric::parse("Avg", "(A + B) / __count").unwrap(),
            DerivedMetric::parse("Double", "Avg * 2").unwrap(),
            DerivedMetric::parse("Broken", "Nothing * 2").unwrap(),
        ];
        let mut scores: BTreeMap<String, f64> = [("A".to_owned(), 3.0), ("B".to_owned(), 1.0)].into();
        derive(&metrics, &mut scores, 2);
        assert_eq!((scores["Avg"], scores["Double"], scores["Broken"]), (2.0, 4.0, 0.0));
        assert!(!scores.contains_key("__count"));
    }
}
