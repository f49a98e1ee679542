"""Reference numbers for assay-plugin-bleu, computed by sacrebleu.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install sacrebleu==2.6.0
    /tmp/venv/bin/python plugins/bleu/reference/bleu_reference.py

Prints the rows of the tables in src/tests.rs:
- CASES: (name, hypothesis, references, options) -> sacrebleu's BLEU (0-100),
  counts, totals, precisions, bp, sys_len, ref_len, through the same class
  and options the plugin mirrors (`BLEU(...).sentence_score`, which is what
  `sacrebleu.sentence_bleu` calls, with effective_order=True by default);
- TOKENIZE: the 13a tokenizer's output (after sacrebleu's own rstrip);
- fuzz checksums: random strings from a seeded generator the Rust tests also
  implement, tokenized with 13a (FNV-1a hash of the outputs) and scored with
  every smoothing method (sum of the scores).
"""

import sys
import unicodedata

import sacrebleu
from sacrebleu.metrics import BLEU

# (name, hypothesis, references, options)
CASES = [
    ("cat_exp", "The cat sat on the mat.", ["The cat is on the mat."], {}),
    ("cat_none", "The cat sat on the mat.", ["The cat is on the mat."], {"smooth_method": "none"}),
    ("cat_floor", "The cat sat on the mat.", ["The cat is on the mat."], {"smooth_method": "floor"}),
    ("cat_floor_0.5", "The cat sat on the mat.", ["The cat is on the mat."],
     {"smooth_method": "floor", "smooth_value": 0.5}),
    ("cat_addk", "The cat sat on the mat.", ["The cat is on the mat."], {"smooth_method": "add-k"}),
    ("cat_addk_2", "The cat sat on the mat.", ["The cat is on the mat."],
     {"smooth_method": "add-k", "smooth_value": 2}),
    ("no_4gram_match_none", "the quick brown fox jumps", ["the quick red fox leaps over"],
     {"smooth_method": "none"}),
    ("no_4gram_match_exp", "the quick brown fox jumps", ["the quick red fox leaps over"], {}),
    ("no_4gram_match_floor", "the quick brown fox jumps", ["the quick red fox leaps over"],
     {"smooth_method": "floor"}),
    ("papineni_multi_ref",
     "It is a guide to action which ensures that the military always obeys the commands of the party.",
     ["It is a guide to action that ensures that the military will forever heed Party commands.",
      "It is the guiding principle which guarantees the military forces always being under the command of the Party.",
      "It is the practical guide for the army always to heed the directions of the party."], {}),
    ("papineni_multi_ref_none",
     "It is a guide to action which ensures that the military always obeys the commands of the party.",
     ["It is a guide to action that ensures that the military will forever heed Party commands.",
      "It is the guiding principle which guarantees the military forces always being under the command of the Party.",
      "It is the practical guide for the army always to heed the directions of the party."],
     {"smooth_method": "none"}),
    ("closest_ref_len_tie_shorter", "a b c d e", ["a b c d", "a b c d e f", "x y"], {}),
    ("identical", "Paris is the capital of France.", ["Paris is the capital of France."], {}),
    ("short_hypothesis", "the", ["the cat"], {}),
    ("short_hypothesis_no_effective_order", "the cat", ["the cat sat"], {"effective_order": False}),
    ("empty_hypothesis", "", ["the cat"], {}),
    ("empty_reference", "the cat", [""], {}),
    ("both_empty", "", [""], {}),
    ("no_match", "dogs bark", ["cats meow"], {}),
    ("punctuation_13a", "Hello, world! It's 3.14 -- e.g. (a test) & more; x-1 \"quoted\" &amp; 1,000.5 ...",
     ["Hello world! It is 3.14 - e.g. (a test) & more: x-1 \"quoted\" & 1,000.5 ..."], {}),
    ("punctuation_none", "Hello, world! It's 3.14 -- e.g. (a test) & more; x-1 \"quoted\" &amp; 1,000.5 ...",
     ["Hello world! It is 3.14 - e.g. (a test) & more: x-1 \"quoted\" & 1,000.5 ..."],
     {"tokenize": "none"}),
    ("lowercase", "THE Cat sat on the MAT.", ["the cat sat on the mat."], {"lowercase": True}),
    ("mixed_case", "THE Cat sat on the MAT.", ["the cat sat on the mat."], {}),
    ("bigrams_only", "the cat sat on the mat", ["the cat is on the mat"], {"max_ngram_order": 2}),
    ("six_grams", "one two three four five six seven", ["one two three four five six eight"],
     {"max_ngram_order": 6}),
    ("unicode", "Müller’s café – naïve résumé, 東京は大きい。", ["Müller's café - naive résumé, 東京は大きい。"], {}),
    ("newlines_and_skipped", "multi-\nline text <skipped> here\nand there", ["multiline text here and there"], {}),
    ("odd_whitespace", "a\u00a0b\x1cc\u2003d  e\te", ["a b c d e e"], {}),
    ("repeated_words_clipped", "the the the the the the the", ["the cat is on the mat"], {"smooth_method": "none"}),
    ("multi_ref_addk_lowercase", "The Quick brown fox.", ["the quick brown dog.", "A quick brown fox!"],
     {"smooth_method": "add-k", "lowercase": True}),
]

TOKENIZE = [
    "Hello, world!",
    "It's 3.14, e.g. 1,000.5 and 5. and .5 or x.y",
    "a.. b,, 1.. 2,3 .5 5. x-1-2-y 10-20 -3",
    "&quot;quoted&quot; &amp;amp; &lt;tag&gt; & plain",
    "multi-\nline <skipped> text\n",
    "{braces} [brackets] `tick` ~tilde^ _under_ @at #hash $5 %p *star +plus =eq ?q |pipe \\back /slash",
    "  leading and trailing spaces   ",
    "tab\tand\u00a0nbsp and\x1cfile-sep",
    "Müller’s café – naïve 東京。",
    "end with period .",
    "",
    "...",
    "1.2.3 a,b,c 1,2,3",
]


def fnv1a(data: bytes, h=0xcbf29ce484222325):
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) % 2**64
    return h


class Lcg:
    """The generator the Rust tests also implement (64-bit LCG, Knuth's MMIX
    constants)."""

    def __init__(self, seed):
        self.state = seed

    def next(self, bound):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 33) % bound


def rust_str(s):
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif unicodedata.category(c) in ("Mn", "Cf", "Cc", "Zs") and c != " ":
            out.append("\\u{%x}" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def rust_f64(x):
    r = repr(float(x))
    return r if ("." in r or "e" in r or "inf" in r) else r + ".0"


def metric(options):
    return BLEU(
        lowercase=options.get("lowercase", False),
        tokenize=options.get("tokenize", "13a"),
        smooth_method=options.get("smooth_method", "exp"),
        smooth_value=options.get("smooth_value"),
        max_ngram_order=options.get("max_ngram_order", 4),
        effective_order=options.get("effective_order", True),
    )


def options_json(options):
    import json
    return json.dumps(options).replace('"', '\\"')


def main():
    print(f"// python {sys.version.split()[0]}, sacrebleu {sacrebleu.__version__}")
    print("// CASES: (name, hypothesis, references, options, bleu, counts, totals, precisions, bp, sys_len, ref_len)")
    for name, hyp, refs, options in CASES:
        s = metric(options).sentence_score(hyp, refs)
        # sacrebleu.sentence_bleu agrees for the options it exposes
        if "max_ngram_order" not in options:
            t = sacrebleu.sentence_bleu(
                hyp, refs, smooth_method=options.get("smooth_method", "exp"),
                smooth_value=options.get("smooth_value"), lowercase=options.get("lowercase", False),
                tokenize=options.get("tokenize", "13a"),
                use_effective_order=options.get("effective_order", True))
            assert t.score == s.score, name
        counts = ", ".join(rust_f64(c) for c in s.counts)
        totals = ", ".join(rust_f64(c) for c in s.totals)
        precisions = ", ".join(rust_f64(p) for p in s.precisions)
        refs_rust = ", ".join(rust_str(r) for r in refs)
        print(f'Case {{ name: "{name}", hypothesis: {rust_str(hyp)}, references: &[{refs_rust}], '
              f'options: "{options_json(options)}", bleu: {rust_f64(s.score)}, counts: &[{counts}], '
              f'totals: &[{totals}], precisions: &[{precisions}], bp: {rust_f64(s.bp)}, '
              f'sys_len: {s.sys_len}, ref_len: {s.ref_len} }},')
    print("// TOKENIZE: (input, 13a output)")
    tok = BLEU(tokenize="13a")
    for line in TOKENIZE:
        print(f"({rust_str(line)}, {rust_str(tok._preprocess_segment(line))}),")
    # Fuzz the tokenizer.
    rng = Lcg(7)
    pieces = ["a", "b", "Z", "é", "東", "1", "2", "0", ".", ",", "-", "&", "amp;", "quot;", "lt;", "&gt;",
              "<skipped>", "\n", " ", "  ", "\t", "\u00a0", "\x1c", "'", "\"", "(", ")", "!", "?", "$", "/",
              "\\", "~", "_", "`", ";", ":", "@", "#", "%", "+", "=", "[", "]", "{", "}", "|", "^", "*", "’"]
    h = 0xcbf29ce484222325
    for _ in range(2000):
        line = "".join(pieces[rng.next(len(pieces))] for _ in range(rng.next(25)))
        h = fnv1a(tok._preprocess_segment(line).encode() + b"\n", h)
    print(f"// tokenizer fuzz: 2000 lines (seed 7), FNV-1a of outputs {h:#018x}")
    # Fuzz BLEU with every smoothing method.
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", ".", ",", "ran"]
    rng = Lcg(11)
    sums = {"none": 0.0, "floor": 0.0, "add-k": 0.0, "exp": 0.0}
    for _ in range(300):
        hyp = " ".join(words[rng.next(len(words))] for _ in range(rng.next(12)))
        refs = [" ".join(words[rng.next(len(words))] for _ in range(rng.next(12)))
                for _ in range(1 + rng.next(3))]
        for method in sums:
            sums[method] += BLEU(smooth_method=method, effective_order=True).sentence_score(hyp, refs).score
    for method, total in sums.items():
        print(f"// bleu fuzz: 300 cases (seed 11), smooth {method}: sum {rust_f64(total)}")


if __name__ == "__main__":
    main()
