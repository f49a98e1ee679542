"""Writes tests/nltk_porter.txt: `word stem_original stem_nltk` per line,
stems from NLTK's PorterStemmer in ORIGINAL_ALGORITHM and NLTK_EXTENSIONS
modes (nothing else is needed: NLTK's stemmer uses no corpus data).

The words are chosen from the Python standard library's own source text
(every `[A-Za-z]+` run, so English from comments and docstrings plus
identifier fragments): the 4000 most frequent, every word on which the two
modes disagree, a deterministic sample of the rest, and hand-written edge
cases (case, Unicode, punctuation inside a token, runs of `y`, NLTK's
irregular forms, words one to three letters long).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install nltk==3.10.4
    cd plugins/porter && /tmp/venv/bin/python reference/make_fixture.py

Run with `--words-from tests/nltk_porter.txt` to keep the committed word
list and only recompute the stems (e.g. to check another nltk version).
"""

import collections
import hashlib
import pathlib
import platform
import re
import sys

import nltk
from nltk.stem.porter import PorterStemmer

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "nltk_porter.txt"

EDGE_CASES = """
a i y s e o u b by be ye yy yyy yyyy yyyyy yyyyyyyyyyyy ay ya yay
is as us ss sss ssss sses ies ied eed ed ing ly ally alli ion
sky skies dying lying tying news innings inning outings outing cannings canning
howe proceed exceed succeed dies died ties tied lies lied flies flied spied cried
caresses ponies ties caress cats feed agreed plastered bled motoring sing
conflated troubled sized hopping tanned falling hissing fizzed failing filing
happy sky relational conditional rational valenci hesitanci digitizer
conformabli radicalli differentli vileli analogousli vietnamization
predication operator feudalism decisiveness hopefulness callousness
formaliti sensitiviti sensibiliti triplicate formative formalize
electriciti electrical hopeful goodness revival allowance inference
airliner gyroscopic adjustable defensible irritant replacement adjustment
dependent adoption homologou communism activate angulariti homologous
effective bowdlerize probate rate cease controll roll generously
enjoy enjoyment spy fly try archaeology geology theology philology
Running SKIES Dying CONDITIONAL McDonald's O'Neill iPhone
don't won't e-mail self-evident state-of-the-art u.s.a. 3rd 1990s 2nd
foo*ding a*ded bu*d x*ding hop*ding ab*d *d **d
café naïve façade résumé Ünïcödé ΣΟΦΙΑΣ Σ σοφίας İstanbul İ straße STRASSE
ẞig Ωmega ﬁnding ŉ ǅemal Ǆ ﬀ ﬃciency µs Ԁ K Å
yelling yyying yying yied yies ayyy ayyyy
""".split()


def stems(words):
    original = PorterStemmer(PorterStemmer.ORIGINAL_ALGORITHM)
    nltk_ext = PorterStemmer(PorterStemmer.NLTK_EXTENSIONS)
    return [(w, original.stem(w), nltk_ext.stem(w)) for w in words]


def choose_words():
    root = pathlib.Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    counts = collections.Counter()
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        counts.update(w.lower() for w in re.findall(r"[A-Za-z]+", text))
    by_frequency = sorted(counts, key=lambda w: (-counts[w], w))
    chosen = set(by_frequency[:4000])
    original = PorterStemmer(PorterStemmer.ORIGINAL_ALGORITHM)
    nltk_ext = PorterStemmer(PorterStemmer.NLTK_EXTENSIONS)
    for w in by_frequency[4000:]:
        if original.stem(w) != nltk_ext.stem(w):
            chosen.add(w)
        elif int(hashlib.sha256(w.encode()).hexdigest(), 16) % 40 == 0:
            chosen.add(w)
    words = sorted(chosen)
    seen = set(words)
    words += [w for w in EDGE_CASES if w not in seen and not seen.add(w)]
    return words


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--words-from":
        lines = pathlib.Path(sys.argv[2]).read_text(encoding="utf-8").splitlines()
        words = [line.split(" ")[0] for line in lines if line and not line.startswith("#")]
    else:
        words = choose_words()
    rows = stems(words)
    for w, a, b in rows:
        assert w and not any(c.isspace() for c in w + a + b), w
    header = [
        "# NLTK PorterStemmer: `word stem_original stem_nltk` per line, fields split on one space",
        "# (stem_original: mode ORIGINAL_ALGORITHM, stem_nltk: mode NLTK_EXTENSIONS, stem(word)",
        "# with its default to_lowercase=True; a stem may be empty).",
        f"# nltk {nltk.__version__}, Python {platform.python_version()}; {len(rows)} words,"
        f" {sum(a != b for _, a, b in rows)} on which the modes differ.",
        f"# Environment: python3 -m venv /tmp/venv && /tmp/venv/bin/pip install nltk=={nltk.__version__}",
        "# Written by: cd plugins/porter && /tmp/venv/bin/python reference/make_fixture.py"
        + (f" --words-from {sys.argv[2]}" if len(sys.argv) == 3 else ""),
    ]
    OUT.write_text("\n".join(header + [f"{w} {a} {b}" for w, a, b in rows]) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(rows)} words")


if __name__ == "__main__":
    main()
