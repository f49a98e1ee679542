"""Reference distances for assay-plugin-levenshtein, from rapidfuzz and
python-Levenshtein (two independent implementations that count Unicode code
points, as the plugin does).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install rapidfuzz Levenshtein
    /tmp/venv/bin/python plugins/levenshtein/reference/levenshtein_reference.py

Prints one Rust tuple per case, (a, b, case_sensitive, distance, similarity),
the rows of `reference_cases` in src/tests.rs. The two libraries must agree.
"""

import sys
import unicodedata

import Levenshtein
import rapidfuzz
from rapidfuzz.distance import Levenshtein as RfLevenshtein

CASES = [
    ("kitten", "sitting", True),
    ("", "", True),
    ("", "abc", True),
    ("abc", "", True),
    ("flaw", "lawn", True),
    ("The Beatles were from Liverpool", "The Beatles came from Liverpool.", True),
    ("Motörhead", "Motorhead", True),
    ("naïve café", "naive cafe", True),
    # é precomposed (U+00E9) vs e + combining acute (U+0065 U+0301)
    ("caf\u00e9", "cafe\u0301", True),
    ("日本語のテキスト", "日本語テキスト", True),
    ("😀😃😄", "😀😄", True),
    ("👨‍👩‍👧", "👨‍👩‍👦", True),
    ("Ελληνικά", "ελληνικα", True),
    ("HELLO World", "hello world", False),
    ("HELLO World", "hello world", True),
    ("ΟΔΟΣ", "οδος", False),
    ("Straße", "STRASSE", False),
    ("İstanbul", "istanbul", False),
    ("abcdef", "azced", True),
    ("a" * 50 + "b", "a" * 50 + "c", True),
    ("sunday", "saturday", True),
]


def lower(s, case_sensitive):
    return s if case_sensitive else s.lower()


def rust_str(s):
    """A Rust string literal; invisible characters (combining marks, joiners)
    are written as \\u{...} escapes."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif unicodedata.category(c) in ("Mn", "Cf", "Cc"):
            out.append("\\u{%x}" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


class Lcg:
    """The generator the Rust test also implements (64-bit LCG, Knuth's MMIX
    constants), so that both sides draw the same random strings."""

    def __init__(self, seed):
        self.state = seed

    def next(self, bound):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 33) % bound


def random_string(rng, alphabet, max_len):
    return "".join(alphabet[rng.next(len(alphabet))] for _ in range(rng.next(max_len + 1)))


def main():
    print(f"# python {sys.version.split()[0]}, rapidfuzz {rapidfuzz.__version__}, "
          f"Levenshtein {Levenshtein.__version__}")
    for a, b, cs in CASES:
        x, y = lower(a, cs), lower(b, cs)
        d1 = RfLevenshtein.distance(x, y)
        d2 = Levenshtein.distance(x, y)
        assert d1 == d2, (a, b, d1, d2)
        longest = max(len(x), len(y))
        sim = 1.0 if longest == 0 else 1.0 - d1 / longest
        print(f"({rust_str(a)}, {rust_str(b)}, {str(cs).lower()}, {d1}, {sim!r}),")
    # Random unicode strings: a seeded fuzz whose checksum the tests reproduce.
    rng = Lcg(20240601)
    alphabet = "abcé🙂日本ßİ \u0301"
    total = 0
    for _ in range(500):
        a = random_string(rng, alphabet, 30)
        b = random_string(rng, alphabet, 30)
        d1 = RfLevenshtein.distance(a, b)
        assert d1 == Levenshtein.distance(a, b)
        total += d1
    print(f"# fuzz: 500 random pairs (seed 20240601), sum of distances {total}")
    # Long inputs: 10,000 characters each, same generator continued.
    a = "".join(alphabet[rng.next(len(alphabet))] for _ in range(10_000))
    b = "".join(alphabet[rng.next(len(alphabet))] for _ in range(10_000))
    d1 = RfLevenshtein.distance(a, b)
    assert d1 == Levenshtein.distance(a, b)
    print(f"# long: 10000 x 10000 characters, distance {d1}")


if __name__ == "__main__":
    main()
