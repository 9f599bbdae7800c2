#!/usr/bin/env python3
"""Expected per-sentence and corpus BLEU-1..4 of nlg-eval (its scorer is pycocoevalcap's
BleuScorer), for tests/it/numbers/bleu_orders.rs.

    python3 -m pip install pycocoevalcap==1.2
    python3 tests/expected/make_nlgeval.py > tests/expected/nlgeval.json

nlg-eval strips each hypothesis and reference and calls Bleu(4).compute_score(refs, hyps), which
runs BleuScorer.compute_score(option='closest') and returns the corpus Bleu_1..4 and, per
sentence, the same formula on that sentence's counts. Inputs (../shared/anchors, read, never
copied): the first 300 lines of two DualRL Yelp systems (negative -> positive) against DualRL's
references 0, 1 and 3 (reference2.0 holds invalid UTF-8), and of TSTBench's ChatGPT Yelp
outputs against their source sentences.
"""
import json
import sys

from pycocoevalcap.bleu.bleu import Bleu

from anchor_lines import lines

N = 300


def first(path):
    """The first N lines, stripped as nlg-eval strips them."""
    return [l.strip() for l in lines(path)[:N]]




refs = [first(f"DualRL/references/yelp/reference{i}.0") for i in (0, 1, 3)]
sets = {}
for system in ["DeleteOnly_Li", "CrossAlignment_Shen"]:
    sets[f"DualRL/outputs/yelp/{system}/test.0.tsf"] = (first(f"DualRL/outputs/yelp/{system}/test.0.tsf"), [list(r) for r in zip(*refs)])
chatgpt = "A-Benchmark-of-Text-Style-Transfer/Algorithms/CHATGPT/outputs/yelp/output_cleaned.0"
sources = first("A-Benchmark-of-Text-Style-Transfer/Dataprepro/datasets/yelp/test.0")
sets[chatgpt] = (first(chatgpt), [[s] for s in sources])
out = {"pycocoevalcap": "1.2", "n": N, "sets": {}}
for name, (hyps, rs) in sets.items():
    score, scores = Bleu(4).compute_score({i: r for i, r in enumerate(rs)}, {i: [h] for i, h in enumerate(hyps)}, verbose=0)
    out["sets"][name] = {"corpus": score, "sentences": [list(s) for s in zip(*scores)]}
json.dump(out, sys.stdout)
print()
