"""The `readability` matcher: Flesch reading ease of a text, checked
against a minimum and/or a maximum.

Plain Python with no WIT imports, so that it runs and is tested with the
standard library alone (`python3 -m unittest`); `app.py` adapts it to the
`assay:plugin/matcher` interface.

Reading ease (Flesch, 1948):

    ease = 206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words)

Higher is easier: 90-100 very easy, 60-70 plain English, 0-30 very hard to
read. The value is not bounded (a text of one-syllable words in short
sentences scores above 100; long words in long sentences score below 0).

Counting, deliberately simple so that it is predictable:

- A word is a run of letters, with apostrophes inside it (`don't`, `it's`).
  Digits, punctuation and symbols are not words; a hyphen splits two words
  (`well-known` is two).
- A sentence ends at a run of `.`, `!` or `?`. Text after the last end mark
  counts as a sentence too, and a text with words has at least one sentence.
  Abbreviations (`e.g.`, `Dr.`) therefore end sentences.
- Syllables, per word (accents stripped, lower case): the number of runs of
  the vowels `a e i o u y`; minus one for a silent final `e` (`make`, but
  not `table`, `free`, `the` or `café`); minus one for a final `ed` after a
  consonant other than `t` or `d` (`jumped`, but not `wanted`); at least
  one. It is a heuristic, not a dictionary: expect it to be off by a
  syllable on some words (`recipe`, `created`).
"""

import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

KEY = "readability"
SUMMARY = "the Flesch reading ease of the text is at least the expected number, or within {min, max}"

# A run of letters ([^\W\d_] is a Unicode letter), apostrophes allowed inside.
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
# A run of sentence end marks.
_SENTENCE_END = re.compile(r"[.!?]+")
# A run of vowels.
_VOWELS = re.compile(r"[aeiouy]+")
_CONSONANTS = frozenset("bcdfghjklmnpqrstvwxz")
_CONSONANTS_BUT_T_D = _CONSONANTS - {"t", "d"}
# Anything but a to z: accents once decomposed (NFD), apostrophes.
_NOT_A_TO_Z = re.compile(r"[^a-z]+")


class CannotEvaluate(Exception):
    """The check cannot be evaluated: a wrong type of actual value or a
    malformed parameter. The host reports it as an error, never negated."""


@dataclass(frozen=True)
class Stats:
    """What was counted in a text, and its reading ease."""

    words: int
    sentences: int
    syllables: int

    @property
    def ease(self) -> float:
        """Flesch reading ease."""
        return 206.835 - 1.015 * (self.words / self.sentences) - 84.6 * (self.syllables / self.words)


@dataclass(frozen=True)
class Bounds:
    """The reading ease a check accepts: at least `min`, at most `max`."""

    min: float | None = None
    max: float | None = None


@dataclass
class Verdict:
    """The outcome of one check, in plain Python types."""

    passed: bool
    score: float
    message: str
    extras: dict = field(default_factory=dict)


def syllables(word: str) -> int:
    """Estimates the syllables of one word (see the module documentation)."""
    lower = word.lower()
    letters = _NOT_A_TO_Z.sub("", unicodedata.normalize("NFD", lower))
    count = len(_VOWELS.findall(letters))
    if count > 1 and lower.endswith("e") and not letters.endswith("ee"):
        # Silent final e, unless consonant + "le" (ta-ble, lit-tle).
        if not (letters.endswith("le") and len(letters) > 2 and letters[-3] in _CONSONANTS):
            count -= 1
    if count > 1 and len(letters) > 3 and letters.endswith("ed") and letters[-3] in _CONSONANTS_BUT_T_D:
        # A final -ed after a consonant other than t or d adds no syllable
        # (jumped, used; not wanted, faded, agreed, studied).
        count -= 1
    return max(count, 1)


def words(text: str) -> list[str]:
    """The words of a text (see the module documentation)."""
    return _WORD.findall(text)


def sentence_count(text: str) -> int:
    """The sentences of a text that contain at least one word."""
    return sum(1 for part in _SENTENCE_END.split(text) if _WORD.search(part))


def analyze(text: str) -> Stats:
    """Counts words, sentences and syllables. Raises `CannotEvaluate` for a
    text with no words, whose reading ease is undefined."""
    found = words(text)
    if not found:
        raise CannotEvaluate(
            f"readability needs text with at least one word, found {describe_text(text)}"
        )
    return Stats(
        words=len(found),
        sentences=max(sentence_count(text), 1),
        # Each distinct word once: long texts repeat most of their words.
        syllables=sum(syllables(w) * n for w, n in Counter(w.lower() for w in found).items()),
    )


def parse_bounds(expected: str) -> Bounds:
    """Parses the expected value (JSON text): a number, the minimum reading
    ease, or an object with `min` and/or `max`."""
    try:
        value = json.loads(expected)
    except ValueError as error:
        raise CannotEvaluate(f"readability's expected value is not valid JSON ({error}): {expected!r}")
    if _is_number(value):
        return Bounds(min=_finite(value, "the minimum"))
    if not isinstance(value, dict):
        raise CannotEvaluate(
            "readability expects a number (the minimum reading ease) or an object "
            f'like {{"min": 60}}, {{"max": 30}} or both, found {describe_json(value)}'
        )
    unknown = sorted(set(value) - {"min", "max"})
    if unknown:
        raise CannotEvaluate(
            f"readability takes the parameters min and max, found unknown {', '.join(map(repr, unknown))}"
        )
    if not value:
        raise CannotEvaluate('readability needs min or max (or both), found an empty object')
    bounds = {}
    for name in ("min", "max"):
        if name in value:
            if not _is_number(value[name]):
                raise CannotEvaluate(f"readability's {name} must be a number, found {describe_json(value[name])}")
            bounds[name] = _finite(value[name], f"the {name}")
    if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
        raise CannotEvaluate(
            f"readability's min {_fmt(bounds['min'])} is greater than its max {_fmt(bounds['max'])}: no text can pass"
        )
    return Bounds(**bounds)


def evaluate(actual, expected: str) -> Verdict:
    """Evaluates one check. `actual` is the value looked at (a `str` for
    text; any other decoded JSON value is an error), `expected` the JSON
    text of the parameters. Raises `CannotEvaluate` when the check cannot be
    evaluated."""
    if not isinstance(actual, str):
        raise CannotEvaluate(f"readability measures text, found {describe_json(actual)}")
    bounds = parse_bounds(expected)
    stats = analyze(actual)
    ease = stats.ease
    counted = (
        f"{stats.words} {_plural(stats.words, 'word')}, {stats.sentences} {_plural(stats.sentences, 'sentence')}, "
        f"{stats.syllables} {_plural(stats.syllables, 'syllable')}"
    )
    too_low = bounds.min is not None and ease < bounds.min
    too_high = bounds.max is not None and ease > bounds.max
    if too_low:
        relation = f"is below the minimum {_fmt(bounds.min)}"
    elif too_high:
        relation = f"is above the maximum {_fmt(bounds.max)}"
    elif bounds.min is not None and bounds.max is not None:
        relation = f"is within [{_fmt(bounds.min)}, {_fmt(bounds.max)}]"
    elif bounds.min is not None:
        relation = f"is at least {_fmt(bounds.min)}"
    else:
        relation = f"is at most {_fmt(bounds.max)}"
    return Verdict(
        passed=not (too_low or too_high),
        score=min(max(ease / 100.0, 0.0), 1.0),
        message=f"Flesch reading ease {ease:.2f} ({counted}) {relation}",
        extras={"words": stats.words, "sentences": stats.sentences, "syllables": stats.syllables, "ease": ease},
    )


def describe_json(value) -> str:
    """Names a decoded JSON value's type and shows it, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if _is_number(value):
        return f"the number {json.dumps(value)}"
    if isinstance(value, str):
        return f"the string {_clip(json.dumps(value, ensure_ascii=False))}"
    if isinstance(value, list):
        return f"a list of {len(value)} {_plural(len(value), 'element')}"
    if isinstance(value, dict):
        return f"an object with {len(value)} {_plural(len(value), 'key')}"
    return type(value).__name__


def describe_text(text: str) -> str:
    """Describes a text with no words, for messages."""
    if not text:
        return "an empty string"
    return f"a {len(text)}-character string with no letters: {_clip(json.dumps(text, ensure_ascii=False))}"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value, what: str) -> float:
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise CannotEvaluate(f"readability's {what} must be a finite number, found {_clip(str(value))}")
    return number


def _fmt(number: float) -> str:
    """60.0 -> 60, 62.5 -> 62.5."""
    return f"{number:g}" if number == int(number) and abs(number) < 1e15 else repr(number)


def _plural(n: int, noun: str) -> str:
    return noun if n == 1 else noun + "s"


def _clip(shown: str, limit: int = 80) -> str:
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
