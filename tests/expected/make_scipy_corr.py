#!/usr/bin/env python3
"""Reference correlations for tests/it/stats_anchor_corr.rs, computed with scipy.

Reads ../shared/anchors/eval-formality-transfer/chatgpt/*.json (JSON Lines: one source per
line, rows 0-39 informal->formal, 40-79 formal->informal; 9 systems each) and writes
tests/expected/scipy_corr.json:

* "pooled": scipy.stats pearsonr / spearmanr / kendalltau (tau-b) of one metric column
  against human_1 or human_2 over all outputs of a scope ("all", "dir0" = rows 0-39,
  "dir1" = rows 40-79), metric values as stored (no sign flip).
* "meta": the three levels exactly as laihuiyuan/eval-formality-transfer chatgpt/correlation.py
  computes them (human = mean of human_1 and human_2; wmd and gpt2_ppl negated; all 9
  systems incl. ref): system level = scipy corr of per-system means and pair_acc (sign of
  differences equal, ties included); sample level = mean over sources of the per-source
  scipy corr with NaN counted as 0; dataset level = scipy corr over all outputs. Plus the
  WMT tau-like sample level (kendalltau.py compute_kenall(human, metric), undefined sources
  skipped), computed here by its O(n^2) definition.
* "kendall_w": Kendall's W of human_1 vs human_2 over the 9 systems of each source, from
  scipy.stats.friedmanchisquare (tie-corrected): W = chi2 / (m (n - 1)), m = 2 raters,
  n = 9 objects. Sources where scipy cannot compute it are left out.

Run from the project root:  python3 tests/expected/make_scipy_corr.py
"""
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import friedmanchisquare, kendalltau, pearsonr, spearmanr

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = ROOT / ".." / "shared" / "anchors" / "eval-formality-transfer" / "chatgpt"
OUT = Path(__file__).resolve().parent / "scipy_corr.json"

FILES = {
    "style.json": ["c-gyafc", "r-pt16", "chatgpt"],
    "content.src.json": ["bleu", "bertscore", "wmd", "comet-22", "chatgpt_multi"],
    "fluency.json": ["gpt2_ppl", "chatgpt"],
}
LOWER_IS_BETTER = {"wmd", "gpt2_ppl"}
# Extra meta cases against one annotator's column: sources with a constant human or metric
# column exist there, so undefined per-source correlations are exercised.
META_EXTRA = [("fluency.json", "gpt2_ppl", "human_1"), ("content.src.json", "chatgpt_multi", "human_2")]
SCOPES = {"all": range(0, 80), "dir0": range(0, 40), "dir1": range(40, 80)}


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def corr3(a, b):
    return {
        "pearson": num(pearsonr(a, b)[0]),
        "spearman": num(spearmanr(a, b)[0]),
        "kendall_tau_b": num(kendalltau(a, b)[0]),
    }


def tau_like(human, metric):
    conc = disc = 0
    for i in range(len(human)):
        for j in range(i + 1, len(human)):
            if human[i] == human[j]:
                continue
            if np.sign(human[i] - human[j]) * np.sign(metric[i] - metric[j]) == 1:
                conc += 1
            else:
                disc += 1
    return None if conc + disc == 0 else (conc - disc) / (conc + disc)


def human_value(v, human):
    return (v["human_1"] + v["human_2"]) / 2 if human == "mean" else v[human]


def meta_case(rows, systems, fname, metric, human, scope, idx):
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    aut = np.array([[sign * rows[i]["sys"][s][metric] for s in systems] for i in idx])
    hum = np.array([[human_value(rows[i]["sys"][s], human) for s in systems] for i in idx])
    am, hm = aut.mean(0), hum.mean(0)
    agree = total = 0
    for a in range(len(am) - 1):
        for b in range(a + 1, len(am)):
            total += 1
            agree += int(np.sign(am[a] - am[b]) == np.sign(hm[a] - hm[b]))
    sample = [corr3(aut[k], hum[k]) for k in range(len(aut))]
    zero = {c: float(np.mean([0.0 if r[c] is None else r[c] for r in sample])) for c in sample[0]}
    defined = {c: [r[c] for r in sample if r[c] is not None] for c in sample[0]}
    likes = [tau_like(list(hum[k]), list(aut[k])) for k in range(len(aut))]
    likes_defined = [t for t in likes if t is not None]
    return {
        "file": fname, "metric": metric, "human": human, "scope": scope, "lower_is_better": metric in LOWER_IS_BETTER,
        "system": corr3(am, hm), "pairwise_accuracy": agree / total,
        "sample_undefined_as_zero": zero,
        "sample_defined_mean": {c: float(np.mean(v)) for c, v in defined.items()},
        "sample_undefined": {c: len(sample) - len(v) for c, v in defined.items()},
        "sample_tau_like": float(np.mean(likes_defined)), "sample_tau_like_undefined": len(likes) - len(likes_defined),
        "dataset": corr3(aut.reshape(-1), hum.reshape(-1)),
    }


def main():
    pooled, meta, wvals = [], [], []
    for fname, metrics in FILES.items():
        rows = [json.loads(l) for l in open(ANCHOR / fname, encoding="utf-8")]
        systems = list(rows[0]["sys"].keys())
        for metric in metrics:
            for human in ["human_1", "human_2"]:
                for scope, idx in SCOPES.items():
                    m = [rows[i]["sys"][s][metric] for i in idx for s in systems]
                    h = [rows[i]["sys"][s][human] for i in idx for s in systems]
                    pooled.append({"file": fname, "metric": metric, "human": human, "scope": scope, "n": len(m), **corr3(m, h)})
            humans = ["mean"] + [h for f, m, h in META_EXTRA if f == fname and m == metric]
            for human, (scope, idx) in [(h, sc) for h in humans for sc in SCOPES.items()]:
                meta.append(meta_case(rows, systems, fname, metric, human, scope, idx))
        for i, r in enumerate(rows):
            h1 = [r["sys"][s]["human_1"] for s in systems]
            h2 = [r["sys"][s]["human_2"] for s in systems]
            try:
                chi2 = friedmanchisquare(*[[a, b] for a, b in zip(h1, h2)]).statistic
            except ValueError:
                continue
            if math.isfinite(chi2):
                wvals.append({"file": fname, "row": i, "w": chi2 / (2 * (len(systems) - 1))})
    out = {
        "made_by": "tests/expected/make_scipy_corr.py",
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "pooled": pooled,
        "meta": meta,
        "kendall_w": wvals,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}: {len(pooled)} pooled, {len(meta)} meta, {len(wvals)} W values", file=sys.stderr)


if __name__ == "__main__":
    main()
