"""Writes tests/rouge_reference.json: Google's rouge-score on every case
below, which tests/reference.rs compares bit for bit with this crate.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install rouge-score==0.1.2 nltk==3.10.4
    cd plugins/rouge && /tmp/venv/bin/python reference/rouge_reference.py

Each case is scored with `RougeScorer(TYPES, use_stemmer=...)` and
`scorer.score(target=reference, prediction=prediction)`; numbers are stored
as Python's `repr` of the float (shortest round-trip form), so the Rust side
parses them to the identical f64. Short texts also record the tokenizer's
output.
"""

import json
import pathlib
import platform
import random
from importlib.metadata import version

from rouge_score import rouge_scorer, tokenizers

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "rouge_reference.json"
TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rouge9", "rougeL", "rougeLsum"]

FOX = "The quick brown fox jumps over the lazy dog"
FOX_PRED = "The quick brown dog jumps on the log."

CASES = [
    ("rouge-score docstring example", FOX, FOX_PRED, False),
    ("rouge-score docstring example, stemmed", FOX, FOX_PRED, True),
    ("identical", "the cat sat on the mat", "the cat sat on the mat", False),
    ("disjoint", "alpha beta gamma", "delta epsilon", False),
    ("empty reference", "", "some words here", False),
    ("empty prediction", "some words here", "", False),
    ("both empty", "", "", True),
    ("punctuation only prediction", "a real sentence.", "!!! ... ??? --- ,,,", False),
    ("whitespace only lines", "   \n\t\n", "words\n \n", False),
    (
        "punctuation inside words",
        "State-of-the-art models (e.g. GPT-4) score 3.14% on U.S.A. tests; e-mail me@example.com!",
        "state of the art: GPT 4 scored 3,14 % on the u s a test... email me at example dot com",
        False,
    ),
    (
        "unicode and Python lowercasing",
        "Café naïve İstanbul \u212aelvin Ωmega résumé ΣΟΦΙΑΣ straße 東京 emoji 🎉 ok",
        "cafe naive istanbul kelvin omega resume sofias strasse tokyo emoji ok İ",
        False,
    ),
    ("uppercase and digits", "THE 2 QUICK FOXES in 1999", "the 2 quick foxes IN 1999 AND 2000", True),
    ("repeated tokens", "the the the the cat cat", "the cat the cat the dog the", False),
    ("repeated tokens, n-gram clipping", "a a a a a a a a", "a a a", False),
    ("shorter than n", "one two", "one two three", False),
    (
        "stemming: NLTK_EXTENSIONS mode shows",
        "The dies were lying under the skies, generously running happily",
        "the die was lie under the sky generous run happy dying skies",
        True,
    ),
    ("stemming ignores tokens of 3 characters or fewer", "cats dogs ran runs", "cat dog run running", True),
    (
        "multi-sentence Lsum",
        "The cat was found under the bed.\nThe dog sat on the mat.\nNobody saw the bird.",
        "The cat was under the bed.\nA bird was seen by nobody.\nThe dog lay on a mat.",
        False,
    ),
    (
        "Lsum double counting across sentences",
        "the cat the cat\nthe cat sat\ncat cat",
        "the cat\ncat the the\ncat sat the cat\nthe",
        False,
    ),
    (
        "Lsum with blank lines and CRLF",
        "first line here\r\n\r\nsecond line there\n\n\nthird line\n",
        "\nsecond line here\r\nfirst line there\n",
        True,
    ),
    ("Lsum single-line prediction, multi-line reference", "a b c\nd e f\ng h i", "a b c d e f g h i", False),
]

VOCABULARY = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so no will more can out up about "
    "model models agent agents testing tested tests running runs ran generously happily quickly cats dogs "
    "relational conditional national rationality electrical electricity hopeful hopefulness goodness "
    "connection connections connected connecting connective replacement adjustment dependent adoption "
    "summary summaries summarization summarize evaluated evaluation evaluating evaluates response responses"
).split()


def long_text(seed, size):
    rng = random.Random(seed)
    words = []
    length = 0
    while length < size:
        word = rng.choice(VOCABULARY)
        if rng.random() < 0.1:
            word = word.capitalize()
        sep = rng.choices([" ", ", ", ".\n", " - ", "; "], weights=[80, 8, 6, 3, 3])[0]
        words.append(word + sep)
        length += len(word) + len(sep)
    return "".join(words).strip()


CASES += [
    ("long texts, 1 KB", long_text(1, 1024), long_text(2, 1024), False),
    ("long texts, 1 KB, stemmed", long_text(1, 1024), long_text(2, 1024), True),
    ("long texts, 10 KB, stemmed", long_text(3, 10240), long_text(4, 10240), True),
    ("long texts, 10 KB reference, 1 KB prediction", long_text(5, 10240), long_text(6, 1024), False),
]


def main():
    cases = []
    for name, reference, prediction, use_stemmer in CASES:
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
        scores = scorer.score(reference, prediction)
        case = {
            "name": name,
            "reference": reference,
            "prediction": prediction,
            "use_stemmer": use_stemmer,
            "scores": {
                t: {"precision": repr(float(s.precision)), "recall": repr(float(s.recall)), "fmeasure": repr(float(s.fmeasure))}
                for t, s in scores.items()
            },
        }
        if len(reference) + len(prediction) < 400:
            tokenizer = tokenizers.DefaultTokenizer(use_stemmer)
            case["reference_tokens"] = tokenizer.tokenize(reference)
            case["prediction_tokens"] = tokenizer.tokenize(prediction)
        cases.append(case)
    document = {
        "rouge_score": version("rouge-score"),
        "nltk": version("nltk"),
        "python": platform.python_version(),
        "command": "cd plugins/rouge && python reference/rouge_reference.py",
        "types": TYPES,
        "cases": cases,
    }
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
