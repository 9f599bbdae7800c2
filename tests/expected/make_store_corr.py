#!/usr/bin/env python3
"""Reference values for tests/it/analysis_anchor.rs: every metric column of eval-formality-transfer
against every human aspect, as `tstlab correlate` computes them from a store the
eval-formality importer filled, computed here with scipy from the raw anchor JSON.

What the store holds after `tstlab import eval-formality` (and so what is mirrored here):
* human aspect `content` = human_1/human_2 of chatgpt/content.src.json, `style` of style.json,
  `fluency` of fluency.json; an output's human value = the mean of its two judgments;
* a metric column of one file is one (metric, config) of the store; its label is the column
  name, or `column@file-stem` when the column occurs in several files (`bleu@content.ref`);
* rows 0-39 are direction informal->formal, rows 40-79 formal->informal; 9 systems.

Conventions (tstlab's, see src/analysis/meta.rs): wmd and gpt2_ppl are lower-is-better and
negated; system level = scipy corr of per-system means, pairwise accuracy = share of system
pairs with equal signs of the differences (ties included); sample level = mean over sources of
the per-source scipy corr, undefined (NaN) sources skipped and counted; dataset level = scipy
corr over all outputs. Overall: system level and pairwise accuracy = mean of the two
directions; sample and dataset levels pool both directions.

Run from the project root:  python3 tests/expected/make_store_corr.py
Writes tests/expected/store_corr.json (one case per line).
"""
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import kendalltau, pearsonr, spearmanr

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = ROOT / ".." / "shared" / "anchors" / "eval-formality-transfer" / "chatgpt"
OUT = Path(__file__).resolve().parent / "store_corr.json"

FILES = ["content.src", "content.ref", "style", "fluency"]
ASPECT_FILE = {"content": "content.src", "style": "style", "fluency": "fluency"}
LOWER_IS_BETTER = {"wmd", "gpt2_ppl"}
SKIP = {"out", "human_1", "human_2"}
PARTS = {"informal->formal": range(0, 40), "formal->informal": range(40, 80)}
METHODS = {"pearson": pearsonr, "spearman": spearmanr, "kendall_tau_b": kendalltau}


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def corr(name, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return None  # scipy warns and returns NaN here; tstlab's None
    return num(METHODS[name](a, b)[0])


def pair_acc(m, h):
    agree = total = 0
    for i in range(len(m)):
        for j in range(i + 1, len(m)):
            total += 1
            agree += int(np.sign(m[i] - m[j]) == np.sign(h[i] - h[j]))
    return agree / total


def levels(aut, hum):
    """aut, hum: [sources][systems] arrays of one part."""
    out = {"system": {}, "sample": {}, "sample_undefined": {}, "dataset": {}}
    am, hm = aut.mean(0), hum.mean(0)
    out["pairwise_accuracy"] = pair_acc(am, hm)
    for m in METHODS:
        out["system"][m] = corr(m, am, hm)
        per = [corr(m, aut[k], hum[k]) for k in range(len(aut))]
        defined = [v for v in per if v is not None]
        out["sample"][m] = float(np.mean(defined)) if defined else None
        out["sample_undefined"][m] = len(per) - len(defined)
        out["dataset"][m] = corr(m, aut.reshape(-1), hum.reshape(-1))
    return out


def main():
    rows = {f: [json.loads(l) for l in open(ANCHOR / f"{f}.json", encoding="utf-8")] for f in FILES}
    systems = sorted(rows["content.src"][0]["sys"].keys())
    columns = {f: [c for c in rows[f][0]["sys"][systems[0]] if c not in SKIP] for f in FILES}
    count = {}
    for f in FILES:
        for c in columns[f]:
            count[c] = count.get(c, 0) + 1
    cases = []
    for aspect, hfile in ASPECT_FILE.items():
        hum_all = np.array([[(r["sys"][s]["human_1"] + r["sys"][s]["human_2"]) / 2 for s in systems] for r in rows[hfile]])
        for f in FILES:
            for c in columns[f]:
                label = f"{c}@{f}" if count[c] > 1 else c
                sign = -1.0 if c in LOWER_IS_BETTER else 1.0
                aut_all = np.array([[sign * r["sys"][s][c] for s in systems] for r in rows[f]])
                case = {"aspect": aspect, "metric": label, "lower_is_better": c in LOWER_IS_BETTER, "parts": {}}
                for part, idx in PARTS.items():
                    case["parts"][part] = levels(aut_all[list(idx)], hum_all[list(idx)])
                pooled = levels(aut_all, hum_all)
                d = [case["parts"][p] for p in PARTS]
                mean = lambda vals: float(np.mean(vals)) if vals else None
                pooled["system"] = {m: mean([x["system"][m] for x in d if x["system"][m] is not None]) for m in METHODS}
                pooled["pairwise_accuracy"] = mean([x["pairwise_accuracy"] for x in d])
                case["parts"]["overall"] = pooled
                cases.append(case)
    head = {
        "made_by": "tests/expected/make_store_corr.py",
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "systems": systems,
    }
    with open(OUT, "w") as fh:
        fh.write(json.dumps(head) + "\n")
        for c in cases:
            fh.write(json.dumps(c) + "\n")
    print(f"wrote {OUT}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
