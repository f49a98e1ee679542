"""Writes tests/meteor_reference.json: nltk's METEOR on every case below,
which tests/reference.rs compares with this crate.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install nltk==3.10.4
    cd plugins/meteor && /tmp/venv/bin/python reference/meteor_reference.py

nltk's meteor_score takes pre-tokenized input; the plugin tokenizes with
Python's `str.split()`, so every text here goes through `str.split()` and
nltk's default `preprocess=str.lower`. No WordNet data is installed (or
needed): `wordnet=NoWordNet()` finds no synsets, which leaves exact and
Porter-stem matching (nltk's default `PorterStemmer()`). Besides the score,
each reference records nltk's own alignment (`_enum_align_words`) and chunk
count (`_count_chunks`). Numbers are Python `repr`s of the floats.
"""

import json
import pathlib
import platform
import random
from importlib.metadata import version

from nltk.translate import meteor_score as nltk_meteor

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "meteor_reference.json"


class NoWordNet:
    """A wordnet that knows no word: METEOR without synonym matching."""

    def synsets(self, word):
        return []


HYP1 = "It is a guide to action which ensures that the military always obeys the commands of the party"
HYP2 = "It is to insure the troops forever hearing the activity guidebook that party direct"
REF1 = "It is a guide to action that ensures that the military will forever heed Party commands"
REF2 = "It is the guiding principle which guarantees the military forces always being under the command of the Party"
REF3 = "It is the practical guide for the army always to heed the directions of the party"

DEFAULT = {"alpha": 0.9, "beta": 3.0, "gamma": 0.5}

CASES = [
    ("nltk doctest, one reference", [REF1], HYP1, DEFAULT),
    ("nltk doctest, three references", [REF1, REF2, REF3], HYP1, DEFAULT),
    ("nltk doctest, hypothesis 2", [REF1, REF2, REF3], HYP2, DEFAULT),
    ("identical", ["the cat sat on the mat"], "the cat sat on the mat", DEFAULT),
    ("no match", ["this is a cat"], "non matching hypothesis", DEFAULT),
    ("empty hypothesis", ["a reference"], "", DEFAULT),
    ("empty reference", [""], "a hypothesis", DEFAULT),
    ("whitespace only", ["  \t\n "], " \n", DEFAULT),
    ("an empty reference among others", ["", "the cat", "a cat sat"], "the cat sat", DEFAULT),
    ("stem matches", ["The dog runs and jumps over fences"], "running dogs jumped over the fence", DEFAULT),
    ("stems after exact matches", ["run runs running ran"], "running run runner runs", DEFAULT),
    ("repeated words", ["the the cat the"], "the the the cat", DEFAULT),
    ("case", ["The CAT Sat"], "the cat SAT", DEFAULT),
    ("punctuation stays attached", ["the cat sat."], "the cat, sat", DEFAULT),
    (
        "unicode and Python whitespace",
        ["Café\u00a0naïve ΣΟΦΙΑΣ\u2003İstanbul\x1cstraße émigrés"],
        "café naïve σοφιας İSTANBUL\u3000STRASSE émigré",
        DEFAULT,
    ),
    ("scrambled order", ["a b c d e f g h"], "h g f e d c b a", DEFAULT),
    ("alpha 0.5, beta 2, gamma 0.3", [REF1], HYP1, {"alpha": 0.5, "beta": 2.0, "gamma": 0.3}),
    ("alpha 1 (precision only)", [REF2], HYP1, {"alpha": 1.0, "beta": 3.0, "gamma": 0.5}),
    ("alpha 0 (recall only)", [REF2], HYP1, {"alpha": 0.0, "beta": 3.0, "gamma": 0.5}),
    ("gamma 0 (no penalty)", [REF3], HYP2, {"alpha": 0.9, "beta": 3.0, "gamma": 0.0}),
    ("beta 0 (constant penalty)", [REF3], HYP2, {"alpha": 0.9, "beta": 0.0, "gamma": 0.5}),
    ("fractional beta", [REF2], HYP2, {"alpha": 0.8, "beta": 2.5, "gamma": 0.75}),
    ("equal references: the first counts", ["the cat", "the cat"], "the cat sat", DEFAULT),
]

VOCABULARY = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "model models agent agents testing tested tests running runs ran generously happily quickly cats dogs "
    "relational conditional national connection connections connected connecting summary summaries "
    "evaluated evaluation evaluating evaluates response responses The It Models Agents"
).split()


def long_text(seed, size):
    rng = random.Random(seed)
    words, length = [], 0
    while length < size:
        word = rng.choice(VOCABULARY) + rng.choice(["", "", "", "", ",", "."])
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


CASES += [
    ("long texts, 1 KB", [long_text(1, 1024)], long_text(2, 1024), DEFAULT),
    ("long texts, 10 KB, two references", [long_text(3, 10240), long_text(4, 10240)], long_text(5, 10240), DEFAULT),
]


def main():
    wordnet = NoWordNet()
    cases = []
    for name, references, hypothesis, weights in CASES:
        hyp = hypothesis.split()
        refs = [r.split() for r in references]
        score = nltk_meteor.meteor_score(refs, hyp, wordnet=wordnet, **weights)
        per_reference = []
        for ref in refs:
            single = nltk_meteor.single_meteor_score(ref, hyp, wordnet=wordnet, **weights)
            enum_hyp, enum_ref = nltk_meteor._generate_enums(hyp, ref)
            matches, _, _ = nltk_meteor._enum_align_words(enum_hyp, enum_ref, wordnet=wordnet)
            entry = {
                "score": repr(float(single)),
                "matches": len(matches),
                "chunks": nltk_meteor._count_chunks(matches) if matches else 0,
            }
            if len(hypothesis) < 300:
                entry["alignment"] = [list(pair) for pair in matches]
            per_reference.append(entry)
        cases.append(
            {
                "name": name,
                "references": references,
                "hypothesis": hypothesis,
                "weights": weights,
                "score": repr(float(score)),
                "per_reference": per_reference,
            }
        )
    document = {
        "nltk": version("nltk"),
        "python": platform.python_version(),
        "command": "cd plugins/meteor && python reference/meteor_reference.py",
        "cases": cases,
    }
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
