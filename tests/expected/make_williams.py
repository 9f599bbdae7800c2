#!/usr/bin/env python3
"""Reference values for tests/it/numbers/correlation.rs: Williams' test of whether two metrics'
Pearson correlations with the same human scores differ, on eval-formality-transfer's real data
(../shared/anchors/eval-formality-transfer/chatgpt), computed here from the raw JSON with scipy.

The test (Williams 1959; the form of Graham & Baldwin 2014 that the WMT metrics tasks use):
    r12 = r(human, A), r13 = r(human, B), r23 = r(A, B), n units,
    K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,
    t = (r12 - r13) sqrt((n-1)(1+r23)) / sqrt(2K (n-1)/(n-3) + (r12+r13)^2/4 (1-r23)^3),
    p = P(T > |t|) for Student's t with n-3 degrees of freedom (one-sided).
Units: system level = the per-system means over the sources of the part; dataset level = the
outputs. Parts: each direction (rows 0-39 informal->formal, 40-79 formal->informal) and both
pooled. The human value of an output is the mean of human_1 and human_2; lower-is-better metrics
(wmd) are negated, as tstlab orients them. Cases with every system and without REF (the human
reference, `--exclude-systems REF`).

Run from the project root:  python3 tests/expected/make_williams.py
Writes tests/expected/williams.json.
"""
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import pearsonr
from scipy.stats import t as student_t

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = ROOT / ".." / "shared" / "anchors" / "eval-formality-transfer" / "chatgpt"
OUT = Path(__file__).resolve().parent / "williams.json"

ASPECT_FILE = {"content": "content.src", "style": "style"}
LOWER_IS_BETTER = {"wmd"}
# (label in the store, file, column)
PAIRS = [
    ("content", ("bleu@content.ref", "content.ref", "bleu"), ("bertscore@content.ref", "content.ref", "bertscore")),
    ("content", ("chrf@content.src", "content.src", "chrf"), ("comet-22@content.ref", "content.ref", "comet-22")),
    ("content", ("wmd@content.ref", "content.ref", "wmd"), ("meteor@content.ref", "content.ref", "meteor")),
    ("style", ("c-gyafc", "style", "c-gyafc"), ("chatgpt@style", "style", "chatgpt")),
]
# The importer stores the reference `ref` as system `REF` (kind human).
STORE_NAME = {"ref": "REF"}
PARTS = {"informal->formal": range(0, 40), "formal->informal": range(40, 80), "pooled": range(0, 80)}


def williams(r12, r13, r23, n):
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    den = 2 * k * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(den)
    return t, float(student_t.sf(abs(t), n - 3))


def main():
    rows = {f: [json.loads(l) for l in open(ANCHOR / f"{f}.json", encoding="utf-8")] for f in ["content.src", "content.ref", "style"]}
    all_systems = sorted(rows["content.src"][0]["sys"].keys())
    cases = []
    for aspect, a, b in PAIRS:
        for exclude in [[], ["REF"]]:
            systems = [s for s in all_systems if STORE_NAME.get(s, s) not in exclude]
            hum = np.array([[(r["sys"][s]["human_1"] + r["sys"][s]["human_2"]) / 2 for s in systems] for r in rows[ASPECT_FILE[aspect]]])

            def metric(m):
                sign = -1.0 if m[2] in LOWER_IS_BETTER else 1.0
                return np.array([[sign * r["sys"][s][m[2]] for s in systems] for r in rows[m[1]]])

            ma, mb = metric(a), metric(b)
            for part, idx in PARTS.items():
                idx = list(idx)
                for level in ["system", "dataset"]:
                    if level == "system":
                        h, x, y = hum[idx].mean(0), ma[idx].mean(0), mb[idx].mean(0)
                    else:
                        h, x, y = hum[idx].reshape(-1), ma[idx].reshape(-1), mb[idx].reshape(-1)
                    r12, r13, r23 = pearsonr(h, x)[0], pearsonr(h, y)[0], pearsonr(x, y)[0]
                    t, p = williams(r12, r13, r23, len(h))
                    cases.append({
                        "aspect": aspect, "a": a[0], "b": b[0], "exclude_systems": exclude, "part": part, "level": level,
                        "n": len(h), "r12": float(r12), "r13": float(r13), "r23": float(r23), "t": t, "df": len(h) - 3, "p": p,
                    })
    head = {"made_by": "tests/expected/make_williams.py", "python": platform.python_version(), "scipy": scipy.__version__, "numpy": np.__version__}
    OUT.write_text(json.dumps({**head, "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
