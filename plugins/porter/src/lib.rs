//! The Porter stemmer exactly as NLTK's `nltk.stem.porter.PorterStemmer`
//! computes it, in two of its modes:
//!
//! - [`Mode::Original`] (`PorterStemmer.ORIGINAL_ALGORITHM`): the algorithm
//!   of the 1980 paper.
//! - [`Mode::NltkExtensions`] (`PorterStemmer.NLTK_EXTENSIONS`, NLTK's
//!   default): the paper plus Martin Porter's and NLTK's amendments. This is
//!   the mode both Google's `rouge-score` (`porter.PorterStemmer()`) and
//!   NLTK's METEOR use.
//!
//! "Exactly" includes NLTK's quirks: the word is lowercased the way Python's
//! `str.lower` does it, positions count Unicode scalar values (Python code
//! points), only ASCII `a e i o u` are vowels (and `y` after a consonant),
//! every other character is a consonant, and a word that literally ends in
//! `*d` takes the step 1b double-consonant rule. `tests/nltk_porter.txt`
//! holds NLTK's stems of 5,529 words in both modes and a test compares every
//! one.
//!
//! ```
//! use assay_porter::{Mode, PorterStemmer};
//!
//! let nltk = PorterStemmer::new(Mode::NltkExtensions);
//! assert_eq!(nltk.stem("Generously"), "gener");
//! assert_eq!(nltk.stem("dies"), "die");
//! assert_eq!(PorterStemmer::new(Mode::Original).stem("dies"), "di");
//! ```

#![warn(missing_docs)]

/// Which variant of the algorithm to run, named after NLTK's modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `PorterStemmer.ORIGINAL_ALGORITHM`: faithful to the published paper.
    Original,
    /// `PorterStemmer.NLTK_EXTENSIONS`, NLTK's default: irregular forms,
    /// words of one or two characters left alone, and NLTK's rule changes.
    #[default]
    NltkExtensions,
}

/// A Porter stemmer in one [`Mode`]. It holds no state but its mode, so one
/// value can stem any number of words, from any number of threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PorterStemmer {
    mode: Mode,
}

impl PorterStemmer {
    /// A stemmer in the given mode.
    pub const fn new(mode: Mode) -> Self {
        PorterStemmer { mode }
    }

    /// The stemmer's mode.
    pub const fn mode(&self) -> Mode {
        self.mode
    }

    /// Stems one word as NLTK's `PorterStemmer(mode).stem(word)` does (with
    /// its default `to_lowercase=True`): the result is lowercase.
    pub fn stem(&self, word: &str) -> String {
        let lower = if word.is_ascii() { word.to_ascii_lowercase() } else { word.to_lowercase() };
        if self.mode == Mode::NltkExtensions
            && let Some(stem) = irregular(&lower)
        {
            return stem.to_owned();
        }
        // NLTK compares the length of the word as given, not lowercased.
        if self.mode != Mode::Original && word.chars().count() <= 2 {
            return lower;
        }
        if lower.is_ascii() {
            let mut letters = lower.into_bytes();
            steps(&mut letters, self.mode);
            letters.into_iter().map(char::from).collect()
        } else {
            let mut letters: Vec<char> = lower.chars().collect();
            steps(&mut letters, self.mode);
            letters.into_iter().collect()
        }
    }
}

/// NLTK's table of irregular forms (NLTK_EXTENSIONS only), looked up on the
/// lowercased word before any rule.
fn irregular(word: &str) -> Option<&'static str> {
    Some(match word {
        "sky" | "skies" => "sky",
        "dying" => "die",
        "lying" => "lie",
        "tying" => "tie",
        "news" => "news",
        "innings" | "inning" => "inning",
        "outings" | "outing" => "outing",
        "cannings" | "canning" => "canning",
        "howe" => "howe",
        "proceed" => "proceed",
        "exceed" => "exceed",
        "succeed" => "succeed",
        _ => return None,
    })
}

/// One character of a word: a byte for ASCII words, a `char` otherwise, so
/// the common case runs on bytes.
trait Letter: Copy + Eq {
    /// The letter for an ASCII byte.
    fn ascii(byte: u8) -> Self;

    /// Whether the letter is this ASCII byte.
    fn is(self, byte: u8) -> bool {
        self == Self::ascii(byte)
    }
}

impl Letter for u8 {
    fn ascii(byte: u8) -> Self {
        byte
    }
}

impl Letter for char {
    fn ascii(byte: u8) -> Self {
        char::from(byte)
    }
}

fn is_vowel<T: Letter>(letter: T) -> bool {
    letter.is(b'a') || letter.is(b'e') || letter.is(b'i') || letter.is(b'o') || letter.is(b'u')
}

/// Whether `word[i]` is a consonant: not a vowel, and for `y`, not preceded
/// by a consonant (a `y` that starts the word is one).
fn is_consonant<T: Letter>(word: &[T], mut i: usize) -> bool {
    if is_vowel(word[i]) {
        return false;
    }
    if !word[i].is(b'y') {
        return true;
    }
    let mut negate = false;
    while i > 0 && word[i].is(b'y') {
        negate = !negate;
        i -= 1;
    }
    // NLTK: `(word[i] not in vowels) != negate`.
    is_vowel(word[i]) == negate
}

/// Calls `f` with the consonant flag of every letter, in one pass.
fn for_each_flag<T: Letter>(word: &[T], mut f: impl FnMut(bool)) {
    let mut previous = false;
    for (i, &letter) in word.iter().enumerate() {
        let consonant = if is_vowel(letter) {
            false
        } else if letter.is(b'y') {
            i == 0 || !previous
        } else {
            true
        };
        f(consonant);
        previous = consonant;
    }
}

/// The paper's measure `m`: the number of vowel-to-consonant transitions.
fn measure<T: Letter>(stem: &[T]) -> usize {
    let mut m = 0;
    let mut after_vowel = false;
    for_each_flag(stem, |consonant| {
        if consonant && after_vowel {
            m += 1;
        }
        after_vowel = !consonant;
    });
    m
}

/// `*v*`: the stem contains a vowel.
fn contains_vowel<T: Letter>(stem: &[T]) -> bool {
    let mut found = false;
    for_each_flag(stem, |consonant| found |= !consonant);
    found
}

/// `*d`: the word ends with a double consonant.
fn ends_double_consonant<T: Letter>(word: &[T]) -> bool {
    let n = word.len();
    n >= 2 && word[n - 1] == word[n - 2] && is_consonant(word, n - 1)
}

/// `*o`: the word ends consonant-vowel-consonant, the last not `w`, `x` or
/// `y`; NLTK_EXTENSIONS also accepts a two-letter vowel-consonant word.
fn ends_cvc<T: Letter>(word: &[T], mode: Mode) -> bool {
    let n = word.len();
    (n >= 3
        && is_consonant(word, n - 3)
        && !is_consonant(word, n - 2)
        && is_consonant(word, n - 1)
        && !(word[n - 1].is(b'w') || word[n - 1].is(b'x') || word[n - 1].is(b'y')))
        || (mode == Mode::NltkExtensions && n == 2 && !is_consonant(word, 0) && is_consonant(word, 1))
}

fn ends_with<T: Letter>(word: &[T], suffix: &str) -> bool {
    let suffix = suffix.as_bytes();
    word.len() >= suffix.len() && word[word.len() - suffix.len()..].iter().zip(suffix).all(|(&l, &b)| l.is(b))
}

/// Replaces the last `cut` letters with `replacement`.
fn replace_end<T: Letter>(word: &mut Vec<T>, cut: usize, replacement: &str) {
    word.truncate(word.len() - cut);
    word.extend(replacement.bytes().map(T::ascii));
}

/// The condition of a suffix rule, on the word and the length of its stem
/// (the word without the suffix).
#[derive(Clone, Copy)]
enum Condition {
    Always,
    /// `m > 0` of the stem.
    MeasureAbove0,
    /// `m > 1` of the stem.
    MeasureAbove1,
    /// `m > 1` and the stem ends in `s` or `t` (step 4, `-ion`).
    Ion,
    /// NLTK's `logi -> log`: `m > 0` of the word without its last 3 letters.
    Logi,
    /// Step 5b: `m > 1` of the word without its last letter.
    DoubleL,
}

impl Condition {
    fn holds<T: Letter>(self, word: &[T], stem_len: usize) -> bool {
        let stem = &word[..stem_len];
        match self {
            Condition::Always => true,
            Condition::MeasureAbove0 => measure(stem) > 0,
            Condition::MeasureAbove1 => measure(stem) > 1,
            Condition::Ion => measure(stem) > 1 && stem.last().is_some_and(|l| l.is(b's') || l.is(b't')),
            Condition::Logi => measure(&word[..word.len() - 3]) > 0,
            Condition::DoubleL => measure(&word[..word.len() - 1]) > 1,
        }
    }
}

type Rule = (&'static str, &'static str, Condition);

/// NLTK's `_apply_rule_list`: the first rule whose suffix the word ends with
/// decides; it applies if its condition holds, and no later rule is tried.
/// Returns whether a rule decided, so a list can continue in another.
fn apply_rules<T: Letter>(word: &mut Vec<T>, rules: &[Rule]) -> bool {
    for &(suffix, replacement, condition) in rules {
        if ends_with(word, suffix) {
            if condition.holds(word, word.len() - suffix.len()) {
                replace_end(word, suffix.len(), replacement);
            }
            return true;
        }
    }
    false
}

fn steps<T: Letter>(word: &mut Vec<T>, mode: Mode) {
    step1a(word, mode);
    step1b(word, mode);
    step1c(word, mode);
    step2(word, mode);
    step3(word);
    step4(word);
    step5a(word, mode);
    step5b(word);
}

fn step1a<T: Letter>(word: &mut Vec<T>, mode: Mode) {
    use Condition::Always;
    if mode == Mode::NltkExtensions && word.len() == 4 && ends_with(word, "ies") {
        return replace_end(word, 3, "ie");
    }
    apply_rules(word, &[("sses", "ss", Always), ("ies", "i", Always), ("ss", "ss", Always), ("s", "", Always)]);
}

fn step1b<T: Letter>(word: &mut Vec<T>, mode: Mode) {
    if mode == Mode::NltkExtensions && ends_with(word, "ied") {
        let replacement = if word.len() == 4 { "ie" } else { "i" };
        return replace_end(word, 3, replacement);
    }
    if ends_with(word, "eed") {
        if measure(&word[..word.len() - 3]) > 0 {
            replace_end(word, 3, "ee");
        }
        return;
    }
    let mut removed = false;
    for suffix in ["ed", "ing"] {
        if ends_with(word, suffix) && contains_vowel(&word[..word.len() - suffix.len()]) {
            replace_end(word, suffix.len(), "");
            removed = true;
            break;
        }
    }
    if !removed {
        return;
    }
    // The rule list applied to the intermediate stem.
    if ends_with(word, "at") || ends_with(word, "bl") || ends_with(word, "iz") {
        return word.push(T::ascii(b'e'));
    }
    let n = word.len();
    // NLTK's `*d` rule: a double consonant becomes single unless it is `l`,
    // `s` or `z`. NLTK also tries the rule's marker as a literal suffix, so
    // a stem ending in `*d` loses the `*` (the condition then holds: `d`).
    if ends_double_consonant(word) || ends_with(word, "*d") {
        let last = word[n - 1];
        if !(last.is(b'l') || last.is(b's') || last.is(b'z')) {
            word.truncate(n - 2);
            word.push(last);
        }
        return;
    }
    if measure(word) == 1 && ends_cvc(word, mode) {
        word.push(T::ascii(b'e'));
    }
}

fn step1c<T: Letter>(word: &mut [T], mode: Mode) {
    if !ends_with(word, "y") {
        return;
    }
    let stem = &word[..word.len() - 1];
    let applies = match mode {
        // `(*c and not c) Y -> I`: after a consonant that is not the whole stem.
        Mode::NltkExtensions => stem.len() > 1 && is_consonant(stem, stem.len() - 1),
        Mode::Original => contains_vowel(stem),
    };
    if applies {
        let last = word.len() - 1;
        word[last] = T::ascii(b'i');
    }
}

fn step2<T: Letter>(word: &mut Vec<T>, mode: Mode) {
    use Condition::{Logi, MeasureAbove0 as M0};
    if mode == Mode::NltkExtensions && ends_with(word, "alli") && measure(&word[..word.len() - 4]) > 0 {
        replace_end(word, 4, "al");
        return step2(word, mode);
    }
    const HEAD: [Rule; 5] = [
        ("ational", "ate", M0),
        ("tional", "tion", M0),
        ("enci", "ence", M0),
        ("anci", "ance", M0),
        ("izer", "ize", M0),
    ];
    const TAIL: [Rule; 14] = [
        ("alli", "al", M0),
        ("entli", "ent", M0),
        ("eli", "e", M0),
        ("ousli", "ous", M0),
        ("ization", "ize", M0),
        ("ation", "ate", M0),
        ("ator", "ate", M0),
        ("alism", "al", M0),
        ("iveness", "ive", M0),
        ("fulness", "ful", M0),
        ("ousness", "ous", M0),
        ("aliti", "al", M0),
        ("iviti", "ive", M0),
        ("biliti", "ble", M0),
    ];
    // One rule list, HEAD + the mode's `(a)bli` rule + TAIL + NLTK's two.
    let bli = if mode == Mode::Original { ("abli", "able", M0) } else { ("bli", "ble", M0) };
    let _ = apply_rules(word, &HEAD)
        || apply_rules(word, &[bli])
        || apply_rules(word, &TAIL)
        || (mode == Mode::NltkExtensions && apply_rules(word, &[("fulli", "ful", M0), ("logi", "log", Logi)]));
}

fn step3<T: Letter>(word: &mut Vec<T>) {
    use Condition::MeasureAbove0 as M0;
    apply_rules(
        word,
        &[
            ("icate", "ic", M0),
            ("ative", "", M0),
            ("alize", "al", M0),
            ("iciti", "ic", M0),
            ("ical", "ic", M0),
            ("ful", "", M0),
            ("ness", "", M0),
        ],
    );
}

fn step4<T: Letter>(word: &mut Vec<T>) {
    use Condition::{Ion, MeasureAbove1 as M1};
    apply_rules(
        word,
        &[
            ("al", "", M1),
            ("ance", "", M1),
            ("ence", "", M1),
            ("er", "", M1),
            ("ic", "", M1),
            ("able", "", M1),
            ("ible", "", M1),
            ("ant", "", M1),
            ("ement", "", M1),
            ("ment", "", M1),
            ("ent", "", M1),
            ("ion", "", Ion),
            ("ou", "", M1),
            ("ism", "", M1),
            ("ate", "", M1),
            ("iti", "", M1),
            ("ous", "", M1),
            ("ive", "", M1),
            ("ize", "", M1),
        ],
    );
}

fn step5a<T: Letter>(word: &mut Vec<T>, mode: Mode) {
    if ends_with(word, "e") {
        let stem = &word[..word.len() - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem, mode)) {
            word.pop();
        }
    }
}

fn step5b<T: Letter>(word: &mut Vec<T>) {
    apply_rules(word, &[("ll", "l", Condition::DoubleL)]);
}

#[cfg(test)]
mod tests;
