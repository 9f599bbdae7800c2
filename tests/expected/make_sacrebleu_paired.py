#!/usr/bin/env python3
"""Reference values for tests/it/numbers/significance.rs: sacreBLEU's paired significance tests on
DualRL's Yelp outputs (../shared/anchors/DualRL), run by sacreBLEU itself.

BLEU: the command line, `sacrebleu REF... -i BASELINE SYSTEM... --paired-bs|--paired-ar -f json`
(default seed SACREBLEU_SEED=12345, 1000 resamples / 10000 trials, and once 10000 resamples).
chrF: the same test through sacreBLEU's `PairedTest` (what the command line runs), because
sacreBLEU 2.6.0's `-f json` fails on chrF (`Object of type float32 is not JSON serializable`).

tstlab draws its resamples with its own generator, so the test compares scores exactly and
p-values, bootstrap means and intervals within Monte Carlo error.

Run from the project root with sacreBLEU 2.6.0 (`python3 -m pip install sacrebleu==2.6.0`):
    python3 tests/expected/make_sacrebleu_paired.py
Writes tests/expected/sacrebleu_paired.json.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import sacrebleu
from sacrebleu.metrics import CHRF
from sacrebleu.significance import PairedTest

VERSION = "2.6.0"
assert sacrebleu.__version__ == VERSION, f"need sacreBLEU {VERSION}, have {sacrebleu.__version__}"

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = ROOT / ".." / "shared" / "anchors" / "DualRL"
OUT = Path(__file__).resolve().parent / "sacrebleu_paired.json"
SACREBLEU = os.path.join(os.path.dirname(sys.executable), "sacrebleu")


def out(system, d):
    return f"outputs/yelp/{system}/test.{d}.tsf"


CASES = [
    {
        "name": "negative->positive, 1 reference, baseline TemplateBase_Li",
        "refs": ["references/yelp/reference0.0"],
        "inputs": [out(s, 0) for s in ["TemplateBase_Li", "UnsuperMT_Zhang", "StyleEmbedding_Fu", "UnpairedRL_Xu", "DualRL"]],
    },
    {
        "name": "positive->negative, 4 references, baseline UnsuperMT_Zhang",
        "refs": [f"references/yelp/reference{k}.1" for k in range(4)],
        "inputs": [out(s, 1) for s in ["UnsuperMT_Zhang", "TemplateBase_Li", "StyleEmbedding_Fu", "DeleteRetrieve_Li"]],
    },
]
RUNS = [
    {"metric": "bleu", "test": "bs", "n": 1000},
    {"metric": "bleu", "test": "ar", "n": 10000},
    {"metric": "bleu", "test": "bs", "n": 10000},
    {"metric": "chrf", "test": "bs", "n": 1000},
]


def cli(case, run):
    flag = "--paired-bs" if run["test"] == "bs" else "--paired-ar"
    nflag = "--paired-bs-n" if run["test"] == "bs" else "--paired-ar-n"
    cmd = [SACREBLEU, *case["refs"], "-i", *case["inputs"], flag, nflag, str(run["n"]), "-f", "json"]
    env = dict(os.environ, SACREBLEU_SEED="12345")
    res = subprocess.run(cmd, cwd=ANCHOR, env=env, capture_output=True, text=True, check=True)
    rows = json.loads(res.stdout)
    systems = []
    for r in rows:
        b = r["BLEU"]
        systems.append({k: b.get(k) for k in ["score", "p_value", "mean", "ci"]})
    return "sacrebleu " + " ".join(cmd[1:]), systems


def api(case, run):
    read = lambda p: [l.rstrip() for l in open(ANCHOR / p, encoding="utf-8")]
    refs = [read(r) for r in case["refs"]]
    named = [(p, read(p)) for p in case["inputs"]]
    metric = CHRF(references=refs)
    os.environ["SACREBLEU_SEED"] = "12345"
    ps = PairedTest(named, {"chrF2": metric}, references=None, test_type=run["test"], n_samples=run["n"])
    _, scores = ps()
    systems = []
    for res in scores["chrF2"]:
        f = lambda x: None if x is None else float(x)
        systems.append({"score": f(res.score), "p_value": f(res.p_value), "mean": f(res.mean), "ci": f(res.ci)})
    return f"sacrebleu.significance.PairedTest(..., {{'chrF2': CHRF()}}, test_type={run['test']!r}, n_samples={run['n']})", systems


def main():
    results = []
    for case in CASES:
        for run in RUNS:
            how, systems = (cli if run["metric"] == "bleu" else api)(case, run)
            results.append({"case": case["name"], "refs": case["refs"], "inputs": case["inputs"], **run, "sacrebleu": how, "systems": systems})
            print(f"{case['name']} {run}: p = {[s['p_value'] for s in systems]}", file=sys.stderr)
    OUT.write_text(json.dumps({"sacrebleu_version": VERSION, "seed": 12345, "made_by": "tests/expected/make_sacrebleu_paired.py", "results": results}, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
