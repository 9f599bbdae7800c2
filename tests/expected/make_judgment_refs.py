#!/usr/bin/env python3
"""Reference agreement and rank values for tests/it/numbers/judgments.rs, written to
judgment_refs.json, from eval-formality-transfer's human scores (chatgpt/content.src.json,
style.json, fluency.json: 80 sources x 9 systems, annotators human_1 and human_2, 0-100).

Per aspect, over all 80 sources (both directions), as `tstlab campaign results` defines them:
* Krippendorff's alpha, ordinal and interval, with the `krippendorff` package (Castro &
  Krippendorff): 2 coders x 720 units (source, system).
* Kendall's W per source across the two annotators' scores of the 9 systems, with tie
  correction (scipy's Friedman statistic / (m (n - 1)), m = 2 raters, n = 9 systems), averaged
  over the sources where it is defined; and at system level, W of the two annotators' average
  ranks per system.
* Kendall tau-b (scipy) between the two annotators per source, averaged over the sources where
  it is defined, and between their average ranks per system.
* Average rank per system: each annotator's scores of a source ranked (1 = highest score, ties
  averaged, scipy.stats.rankdata), averaged over sources per annotator; mean and sample SD
  (n - 1) of the two annotators' averages, per direction (sources 1-40 informal->formal,
  41-80 formal->informal) and over all.

Run from the project root with the anchors beside it (../shared/anchors):
    python3 -m venv /tmp/refs && /tmp/refs/bin/pip install krippendorff scipy
    /tmp/refs/bin/python tests/expected/make_judgment_refs.py
"""
import importlib.metadata
import json
import platform
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import scipy
from scipy.stats import friedmanchisquare, kendalltau, rankdata

HERE = Path(__file__).resolve().parent
CHATGPT = HERE.parents[1] / ".." / "shared" / "anchors" / "eval-formality-transfer" / "chatgpt"
FILES = [("content", "content.src.json"), ("style", "style.json"), ("fluency", "fluency.json")]
ANNOTATORS = ["human_1", "human_2"]


def kendalls_w(rows):
    """Tie-corrected W of m raters (rows) over n objects, or None."""
    m, n = len(rows), len(rows[0])
    cols = [[r[j] for r in rows] for j in range(n)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            stat = friedmanchisquare(*cols).statistic
        except ValueError:
            return None
    if not np.isfinite(stat):
        return None
    return float(stat) / (m * (n - 1))


def tau_b(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = kendalltau(x, y, variant="b").statistic
    return None if not np.isfinite(t) else float(t)


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def aspect_refs(path):
    rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    assert len(rows) == 80, path
    systems = sorted(k.upper() for k in rows[0]["sys"])
    # scores[a][i][s]: annotator a's score of system s on source i.
    scores = [[[r["sys"][s.lower()][a] for s in systems] for r in rows] for a in ANNOTATORS]
    coders = [[v for row in scores[a] for v in row] for a in range(2)]
    alpha = {
        level: float(krippendorff.alpha(reliability_data=coders, level_of_measurement=level))
        for level in ["ordinal", "interval"]
    }
    # Ranks: 1 = highest score.
    ranks = [[list(rankdata([-v for v in row], method="average")) for row in scores[a]] for a in range(2)]
    item_w = [kendalls_w([scores[0][i], scores[1][i]]) for i in range(80)]
    item_tau = [tau_b(scores[0][i], scores[1][i]) for i in range(80)]

    def avg_ranks(a, idx):
        return [sum(ranks[a][i][s] for i in idx) / len(idx) for s in range(len(systems))]

    per_dir = {"informal->formal": range(0, 40), "formal->informal": range(40, 80), "all": range(80)}
    avg = {d: [avg_ranks(a, list(idx)) for a in range(2)] for d, idx in per_dir.items()}
    rank_stats = {
        d: {
            s: {"mean": (v[0][k] + v[1][k]) / 2, "sd": float(np.std([v[0][k], v[1][k]], ddof=1))}
            for k, s in enumerate(systems)
        }
        for d, v in avg.items()
    }
    return {
        "systems": systems,
        "alpha": alpha,
        "kendall_w": mean(item_w),
        "w_items_defined": sum(w is not None for w in item_w),
        "system_level_w": kendalls_w(avg["all"]),
        "mean_item_tau": mean(item_tau),
        "system_level_tau": tau_b(avg["all"][0], avg["all"][1]),
        "ranks": rank_stats,
    }


def main():
    out = {
        "made_by": "tests/expected/make_judgment_refs.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "krippendorff": importlib.metadata.version("krippendorff"),
        "eval_formality": {aspect: aspect_refs(CHATGPT / name) for aspect, name in FILES},
    }
    (HERE / "judgment_refs.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
