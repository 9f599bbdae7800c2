#!/usr/bin/env python3
"""Expected CIDEr-D values (pycocoevalcap 1.2, class Cider) on real files, for
tests/it/meteor_cider/cider.rs.

Run from the project root with the reference implementation installed (the input sets are
read by make_meteor.py's functions):

    python3 -m pip install --user pycocoevalcap==1.2 nltk==3.10.4
    python3 tests/expected/make_cider.py > tests/expected/cider.json

pycocoevalcap's Cider takes {id: [hypothesis]} and {id: [references]} and splits each string at
white space; its idf comes from the references of the call. Two tokenizations are given to it:
- gem: GEM-metrics' `list_tokenized_lower_nopunct` (NLTK word_tokenize, each token lower-cased,
  tokens in string.punctuation dropped), the tokens joined by spaces. word_tokenize runs with
  Punkt's untrained parameters (the trained English model is data NLTK fetches at run time;
  tests/expected/make_bleu_conventions.py does the same);
- nlgeval: the lines as they are (stripped), as nlg-eval passes them.

Inputs (../shared/anchors, read, never copied): GEM-metrics' unit-test predictions (four sets)
against references.json (GEM-metrics' tests/test_cider.py expects 1.89, 10.0, 0.0, 0.0 for them);
TSTBench's ChatGPT zero-shot Yelp outputs (output_cleaned.0) against the four Yelp references;
eval-formality-transfer's 80 xformal inputs (fr.input.80) against their four references.
"""
import json
import os
import string
import sys
import warnings

import nltk
from nltk.tokenize.punkt import PunktSentenceTokenizer
from pycocoevalcap.cider.cider import Cider

from make_meteor import anchor, gem_sets, lines, yelp_set

assert nltk.__version__ == "3.10.4", nltk.__version__
warnings.filterwarnings("ignore")
UNTRAINED = PunktSentenceTokenizer()
nltk.tokenize._get_punkt_tokenizer = lambda language="english": UNTRAINED
PUNCT = set(string.punctuation)


def sets():
    x = anchor("eval-formality-transfer", "data", "xformal")
    streams = [lines(os.path.join(x, f"fr.80.ref{i}")) for i in range(4)]
    xformal = ("eval-formality-transfer/data/xformal/fr.input.80", lines(os.path.join(x, "fr.input.80")), [list(r) for r in zip(*streams)])
    return gem_sets() + [yelp_set(), xformal]


TOKENIZE = {
    "gem": lambda s: " ".join(w for w in (t.lower() for t in nltk.word_tokenize(s)) if w not in PUNCT),
    "nlgeval": lambda s: s.strip(),
}


def main():
    out = {"pycocoevalcap": "1.2", "nltk": nltk.__version__, "sets": {}}
    for name, hyps, refs in sets():
        entry = {}
        for tok, f in TOKENIZE.items():
            gts = {i: [f(r) for r in rs] for i, rs in enumerate(refs)}
            res = {i: [f(h)] for i, h in enumerate(hyps)}
            score, scores = Cider().compute_score(gts, res)
            entry[tok] = {"corpus": float(score), "segments": [float(s) for s in scores]}
        out["sets"][name] = entry
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
