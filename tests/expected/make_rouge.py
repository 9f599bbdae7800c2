#!/usr/bin/env python3
"""Expected ROUGE values (Google's rouge-score, without and with its Porter stemmer) on real files,
and NLTK's Porter stems of every rouge-score token of those files, for tests/it/numbers/rouge.rs.

Run from the project root with the reference implementation installed (in a venv or --user):

    python3 -m pip install rouge-score==0.1.2 nltk==3.10.4
    python3 tests/expected/make_rouge.py > tests/expected/rouge.json

Inputs (../shared/anchors, read, never copied): GEM-metrics' unit-test sets (predictions,
identical, reversed and empty predictions against references.json), the same predictions and
references joined into one text a line each and in reverse order (ROUGE-Lsum's sentences), and
the 80 informal inputs of eval-formality-transfer's xformal folder (`fr.input.80`) against their
four references, as multi-reference segments. Every number comes from `RougeScorer.score_multi`,
with use_stemmer=False ("sets") and use_stemmer=True ("stem_sets"); "stems" maps every distinct
token (as rouge-score makes them, before stemming) of those texts and of the files in VOCABULARY
to PorterStemmer().stem of it.
"""
import json
import os
import sys

from nltk.stem import porter
from rouge_score import rouge_scorer, tokenize

from anchor_lines import ROOT, lines

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
# More text for the stems: Yelp, Amazon and Shakespeare test sets.
VOCABULARY = ["DualRL/references/yelp/reference0.0", "DualRL/references/yelp/reference0.1",
              "Sentiment-and-Style-Transfer/data/amazon/sentiment.test.0",
              "Sentiment-and-Style-Transfer/data/amazon/sentiment.test.1",
              "A-Benchmark-of-Text-Style-Transfer/Dataprepro/datasets/shakespeare/test.0",
              "A-Benchmark-of-Text-Style-Transfer/Dataprepro/datasets/shakespeare/test.1"]




def gem(name):
    with open(os.path.join(ROOT, "GEM-metrics/test_data/unit_tests", name), encoding="utf-8") as f:
        return json.load(f)["values"]


def main():
    sets = {}
    refs = [v["target"] for v in gem("references.json")]
    for name in ["predictions", "identical_predictions", "reversed_predictions", "empty_predictions"]:
        sets["GEM-metrics/" + name] = (gem(name + ".json"), refs)
    preds = gem("predictions.json")
    sets["GEM-metrics/joined"] = (["\n".join(preds), "\n".join(reversed(preds))], [["\n".join(r[0] for r in refs)]] * 2)
    x = "eval-formality-transfer/data/xformal"
    hyps = lines(f"{x}/fr.input.80")
    streams = [lines(f"{x}/fr.80.ref{i}") for i in range(4)]
    sets["eval-formality-transfer/data/xformal/fr.input.80"] = (hyps, [list(r) for r in zip(*streams)])
    out = {"rouge_score": "0.1.2", "use_stemmer": False, "sets": {}, "stem_sets": {}}
    for key, stem in [("sets", False), ("stem_sets", True)]:
        scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=stem)
        for name, (hyps, refs) in sets.items():
            rows = []
            for h, r in zip(hyps, refs):
                s = scorer.score_multi(r, h)
                rows.append({t: [s[t].precision, s[t].recall, s[t].fmeasure] for t in TYPES})
            out[key][name] = rows
    texts = []
    for f in VOCABULARY:
        texts += lines(f)
    for hyps, refs in sets.values():
        texts += hyps + [t for r in refs for t in r]
    words = sorted({w for t in texts for w in tokenize.tokenize(t, None)})
    stemmer = porter.PorterStemmer()
    out["stems"] = {w: stemmer.stem(w) for w in words}
    json.dump(out, sys.stdout, indent=1)
    print()


main()
