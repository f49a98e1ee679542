//! A long fuzzing run of the case reader (the JSON-with-comments fast path
//! and the full HOCON parser behind its guard) and the planner, ignored by
//! default: a mutational fuzzer over the project's and neuro-san's case
//! files and hostile seeds, run for `ASSAY_FUZZ_SECS` seconds (default 600):
//!
//! ```text
//! nice cargo test -p assay --test integration fuzz -- --ignored --nocapture
//! ```
//!
//! Every input must read to a case or to an error naming the file, plan
//! without a panic, and take under [`SLOW`]: a panic or a slow input fails
//! the run and is written to `target/fuzz-finding.hocon`. An abort (a stack
//! overflow) ends the process; the input being read is always in
//! `target/fuzz-current.hocon`. It prints inputs per second at the end.
//! `ASSAY_FUZZ_SEED=N` repeats a run.

use assay::case::CaseEnv;
use assay::check::{plan_case, plan_response};
use assay::formats::parse_case;
use assay::plugin::Registry;
use serde_json::{Map, Value};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An input slower than this is a finding. Generous: the machine is
/// shared, and the slowest inputs the caps allow take about half a second.
const SLOW: Duration = Duration::from_secs(5);

/// The file name given to the reader.
const FILE: &str = "cases/fuzz.hocon";

/// Pieces of HOCON and of the attacks on it, inserted by the mutator.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "{", "}", "[", "]", ":", "=", "+=", ",", "\n", " ", "\"", "\"\"\"", "\\", "${", "${?", "}", "${ASSAY_CASE_FUZZ}",
    "${HOME}", "${?HOME}", "${agent}", "${a}${a}", "${ASSAY_CASE_FUZZ[]}", "#", "//", "include ", "include file(\"x\")",
    "agent", "interactions", "response", "text", "sly_data", "structure", "value", "valeu", "not_value", "keywords",
    "a.b.c", ".", "1", "-1.5e3", "true", "null", "\u{1b}[2K\r", "\u{0}", "é", "😀", "\t", "\r\n", "{ a { b { c {} } } }",
    "[[[[[[[[", "]]]]]]]]", "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a", "include required(\"/etc/passwd\")",
];

/// A small fast generator (xorshift64*): the run needs millions of numbers
/// and no statistics.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The seeds: every case file of the project and of neuro-san's fixtures,
/// and hostile ones.
fn seeds() -> Vec<Vec<u8>> {
    let root = crate::util::root();
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for pattern in ["fixtures/cases/**/*.hocon", "host/tests/cases/*.hocon", "../shared/reference/neuro-san/**/*.hocon"]
    {
        let pattern = root.join(pattern);
        for path in glob::glob(pattern.to_str().unwrap()).unwrap().flatten() {
            seeds.push(std::fs::read(path).unwrap());
        }
    }
    let mut bomb = String::from("agent = echo\na = \"0123456789\"\n");
    for level in 1..12 {
        bomb.push_str(&format!("l{level} = ${{a}}${{a}}\n"));
    }
    seeds.push(bomb.into_bytes());
    seeds.push(b"agent = echo, interactions = [{ text = hi, response { sly_data { a { valeu {} } } } }]".to_vec());
    seeds.push(format!("{}x = 1{}", "a { ".repeat(120), "}".repeat(120)).into_bytes());
    seeds
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    for _ in 0..=rng.below(8) {
        let at = rng.below(input.len() + 1);
        match rng.below(7) {
            0 if !input.is_empty() => {
                input.remove(at.min(input.len() - 1));
            }
            1 => {
                let punctuation = b"{}[]\":,=$\\#\n.+";
                input.insert(at, punctuation[rng.below(punctuation.len())]);
            }
            2 => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                input.splice(at..at, token.iter().copied());
            }
            3 if !input.is_empty() => {
                // Duplicate a span, up to 64 bytes, up to 16 times.
                let start = at.min(input.len() - 1);
                let end = (start + 1 + rng.below(64)).min(input.len());
                let span = input[start..end].repeat(1 + rng.below(16));
                input.splice(end..end, span);
            }
            4 => {
                // Splice in part of another seed.
                let other = &seeds[rng.below(seeds.len())];
                let start = rng.below(other.len());
                let end = (start + rng.below(256)).min(other.len());
                input.splice(at..at, other[start..end].iter().copied());
            }
            5 if !input.is_empty() => {
                let start = at.min(input.len() - 1);
                let end = (start + 1 + rng.below(32)).min(input.len());
                input.drain(start..end);
            }
            _ => {
                if let Some(byte) = input.get_mut(at) {
                    *byte = rng.next() as u8;
                }
            }
        }
    }
    input.truncate(1 << 16);
}

/// A random response block, up to a few levels deep, with keys near the
/// matcher names.
fn response(rng: &mut Rng, depth: usize) -> Value {
    const KEYS: &[&str] = &[
        "text",
        "sly_data",
        "structure",
        "value",
        "valeu",
        "not_value",
        "keywords",
        "KEYWORDS",
        "less",
        "greater",
        "not_",
        "answer",
        "a",
        "",
        "gist",
        "not_not_value",
    ];
    match rng.below(if depth > 5 { 4 } else { 7 }) {
        0 => Value::Null,
        1 => Value::from(rng.next() as i64),
        2 => Value::from(KEYS[rng.below(KEYS.len())]),
        3 => Value::Array((0..rng.below(3)).map(|_| response(rng, depth + 1)).collect()),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|_| (KEYS[rng.below(KEYS.len())].to_owned(), response(rng, depth + 1)))
                .collect::<Map<_, _>>(),
        ),
    }
}

#[test]
#[ignore = "a long run: see the module docs"]
fn fuzz_the_case_reader_and_the_planner() {
    let seconds = std::env::var("ASSAY_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(600);
    let seed = std::env::var("ASSAY_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
    });
    println!("fuzzing for {seconds} s with ASSAY_FUZZ_SEED={seed}");
    let mut rng = Rng(seed);
    let registry = Registry::with_builtins(crate::util::runtime()).unwrap();
    let env = CaseEnv::new(
        [("ASSAY_CASE_FUZZ", "from the environment"), ("HOME", "/home/fuzz"), ("ASSAY_CASE_FUZZ_0", "0")],
        ["OPENAI_API_KEY"],
        ["ASSAY_JUDGE_API_KEY"],
    );
    let seeds = seeds();
    let target = crate::util::root().join("target");
    let current: PathBuf = target.join("fuzz-current.hocon");
    let finding = |input: &[u8], why: &str| -> ! {
        let path = target.join("fuzz-finding.hocon");
        std::fs::write(&path, input).unwrap();
        panic!("{why}; the input is in {}", path.display());
    };
    let started = Instant::now();
    let (mut inputs, mut read, mut planned) = (0u64, 0u64, 0u64);
    let mut slowest = Duration::ZERO;
    while started.elapsed() < Duration::from_secs(seconds) {
        for _ in 0..256 {
            let mut input = seeds[rng.below(seeds.len())].clone();
            mutate(&mut rng, &mut input, &seeds);
            std::fs::write(&current, &input).unwrap();
            let text = String::from_utf8_lossy(&input);
            let at = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| match parse_case(&text, "fuzz", Path::new(FILE), &env) {
                Ok(case) => {
                    let plan = plan_case(&case, &registry);
                    (true, plan.is_ok(), None)
                }
                Err(error) => {
                    let message = error.to_string();
                    (false, false, (!message.starts_with(&format!("`{FILE}`: "))).then_some(message))
                }
            }));
            let took = at.elapsed();
            slowest = slowest.max(took);
            match outcome {
                Err(_) => finding(&input, "the reader or the planner panicked"),
                Ok((_, _, Some(message))) => finding(&input, &format!("an error does not name the file: {message}")),
                Ok((ok, plan_ok, None)) => {
                    read += u64::from(ok);
                    planned += u64::from(plan_ok);
                }
            }
            if took > SLOW {
                finding(&input, &format!("reading took {took:?}"));
            }
            // The planner alone, on response blocks no reader would make.
            let block = response(&mut rng, 0);
            if let Value::Object(block) = &block
                && catch_unwind(AssertUnwindSafe(|| {
                    plan_response(block, "fuzz.response", &registry, &assay::case::KeyLines::NONE)
                }))
                .is_err()
            {
                finding(Value::Object(block.clone()).to_string().as_bytes(), "the planner panicked");
            }
            inputs += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{inputs} inputs in {elapsed:.0} s ({:.0}/s): {read} read, {planned} planned, the slowest took {slowest:?}; as many response blocks planned alone",
        inputs as f64 / elapsed
    );
}
