#!/usr/bin/env python3
"""Expected ROUGE values (Google's rouge-score, no stemmer) on real files, for
tests/it/numbers/rouge.rs.

Run from the project root with the reference implementation installed (in a venv or --user):

    python3 -m pip install rouge-score==0.1.2 nltk==3.10.4
    python3 tests/expected/make_rouge.py > tests/expected/rouge.json

Inputs (../shared/anchors, read, never copied): GEM-metrics' unit-test sets (predictions,
identical, reversed and empty predictions against references.json), the same predictions and
references joined into one text a line each and in reverse order (ROUGE-Lsum's sentences), and
the 80 informal inputs of eval-formality-transfer's xformal folder (`fr.input.80`) against their
four references, as multi-reference segments. Every number comes from `RougeScorer.score_multi`.
"""
import json
import os
import sys

from rouge_score import rouge_scorer

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "anchors")
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def lines(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        text = f.read().replace("\r\n", "\n")
    out = text.split("\n")
    if out and out[-1] == "":
        out.pop()
    return out


def gem(name):
    with open(os.path.join(ROOT, "GEM-metrics/test_data/unit_tests", name), encoding="utf-8") as f:
        return json.load(f)["values"]


def main():
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=False)
    sets = {}
    refs = [v["target"] for v in gem("references.json")]
    for name in ["predictions", "identical_predictions", "reversed_predictions", "empty_predictions"]:
        sets["GEM-metrics/" + name] = (gem(name + ".json"), refs)
    preds = gem("predictions.json")
    sets["GEM-metrics/joined"] = (["\n".join(preds), "\n".join(reversed(preds))], [["\n".join(r[0] for r in refs)]] * 2)
    x = os.path.join(ROOT, "eval-formality-transfer/data/xformal")
    hyps = lines(os.path.join(x, "fr.input.80"))
    streams = [lines(os.path.join(x, f"fr.80.ref{i}")) for i in range(4)]
    sets["eval-formality-transfer/data/xformal/fr.input.80"] = (hyps, [list(r) for r in zip(*streams)])
    out = {"rouge_score": "0.1.2", "use_stemmer": False, "sets": {}}
    for name, (hyps, refs) in sets.items():
        rows = []
        for h, r in zip(hyps, refs):
            s = scorer.score_multi(r, h)
            rows.append({t: [s[t].precision, s[t].recall, s[t].fmeasure] for t in TYPES})
        out["sets"][name] = rows
    json.dump(out, sys.stdout, indent=1)
    print()


main()
