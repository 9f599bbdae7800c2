#!/usr/bin/env python3
"""Reference values for tests/it/stats_agreement_refs.rs, written to agreement_refs.json.

* Fleiss' kappa: the 10-subject, 5-category, 14-rater worked example (Wikipedia "Fleiss'
  kappa"; published kappa 0.210), computed with statsmodels.stats.inter_rater.fleiss_kappa.
* Krippendorff's alpha with the `krippendorff` package (Castro & Krippendorff):
  - "krippendorff_2011": the 4-coder, 12-unit reliability data with missing values from
    Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", p. 8 (published:
    nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797);
  - "three_coders": the 3-coder, 15-unit example of the package's docstring;
  - "anchor_style" (only when the anchors are present): human_1 and human_2 of
    eval-formality-transfer chatgpt/style.json as two coders of 720 units.
* Bradley-Terry with choix: orderings of 4 systems (ties allowed) turned into pairwise data
  (a strict preference twice, a tie once each way = ties as half wins), fitted by
  choix.mm_pairwise (MLE, alpha=0) and choix.ilsr_pairwise as a cross-check; and a
  disconnected set of comparisons fitted by mm_pairwise with alpha=1 (MAP).

Run from the project root:  python3 tests/expected/make_agreement_refs.py
"""
import json
import platform
from pathlib import Path

import choix
import krippendorff
import numpy as np
import statsmodels
from statsmodels.stats.inter_rater import fleiss_kappa

HERE = Path(__file__).resolve().parent
ANCHOR = HERE.parents[1] / ".." / "shared" / "anchors" / "eval-formality-transfer" / "chatgpt" / "style.json"
NAN = float("nan")

FLEISS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
THREE = [
    [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
    [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
    [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
]
LEVELS = ["nominal", "ordinal", "interval", "ratio"]
ORDERINGS = ["1>2>3>4", "2>1>3=4", "1=2>4>3", "3>1>2>4", "1>3>2=4", "4>1>2>3",
             "2>3>1>4", "1>2=3=4", "2>1>4>3", "1>4>3>2", "3=4>1>2", "1>2>3>4"]
# (winner, loser) pairs among 4 items; item 3 never wins, so there is no MLE.
DISCONNECTED = [(0, 1), (1, 0), (0, 2), (2, 1), (1, 2), (0, 3), (1, 3), (2, 3), (0, 1)]


def ranks(ordering):
    """Average ranks of positions 1..n from an ordering like '2>1>3=4' (index = position-1)."""
    groups = [[int(p) for p in g.split("=")] for g in ordering.split(">")]
    out, place = {}, 1
    for g in groups:
        for p in g:
            out[p] = place + (len(g) - 1) / 2
        place += len(g)
    return [out[p] for p in sorted(out)]


def pairwise(orderings):
    data = []
    for o in orderings:
        r = ranks(o)
        for a in range(len(r)):
            for b in range(a + 1, len(r)):
                if r[a] < r[b]:
                    data += [(a, b), (a, b)]
                elif r[b] < r[a]:
                    data += [(b, a), (b, a)]
                else:
                    data += [(a, b), (b, a)]
    return data


def alphas(data):
    return {lv: float(krippendorff.alpha(reliability_data=data, level_of_measurement=lv)) for lv in LEVELS}


def main():
    k2011 = alphas(K2011)
    assert [round(k2011[lv], 3) for lv in LEVELS] == [0.743, 0.815, 0.849, 0.797], k2011
    out = {
        "made_by": "tests/expected/make_agreement_refs.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "statsmodels": statsmodels.__version__,
        "krippendorff": getattr(krippendorff, "__version__", "0.9.0"),
        "choix": getattr(choix, "__version__", "0.4.1"),
        "fleiss": {"table": FLEISS, "kappa": float(fleiss_kappa(np.array(FLEISS), method="fleiss")), "published": 0.210},
        "krippendorff": {
            "krippendorff_2011": {"data": K2011, "alpha": k2011,
                                  "published": {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}},
            "three_coders": {"data": THREE, "alpha": alphas(THREE)},
        },
        "bradley_terry": {
            "orderings": ORDERINGS,
            "n": 4,
            "mm": list(map(float, choix.mm_pairwise(4, pairwise(ORDERINGS), alpha=0.0, tol=1e-14, max_iter=1_000_000))),
            "ilsr": list(map(float, choix.ilsr_pairwise(4, pairwise(ORDERINGS), alpha=0.0, tol=1e-14, max_iter=1_000_000))),
            "disconnected": {"pairs": DISCONNECTED, "alpha": 1.0,
                             "mm": list(map(float, choix.mm_pairwise(4, DISCONNECTED, alpha=1.0, tol=1e-14, max_iter=1_000_000)))},
        },
    }
    if ANCHOR.exists():
        rows = [json.loads(l) for l in open(ANCHOR, encoding="utf-8")]
        coders = [[v[h] for r in rows for v in r["sys"].values()] for h in ["human_1", "human_2"]]
        out["krippendorff"]["anchor_style"] = {"file": "eval-formality-transfer/chatgpt/style.json", "alpha": alphas(coders)}
    # JSON has no NaN: missing values are written as null.
    text = json.dumps(out, indent=1).replace("NaN", "null")
    (HERE / "agreement_refs.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
