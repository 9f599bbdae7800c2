#!/usr/bin/env python3
"""Expected sacreBLEU scores on real data files, for tests/it/sacrebleu_parity.rs.

Run from the project root with sacreBLEU 2.6.0 installed (`python3 -m pip install sacrebleu==2.6.0`)
and the anchors at ../shared/anchors:

    python3 tests/expected/make_sacrebleu.py > tests/expected/sacrebleu.json

Every number comes from sacreBLEU's own API; nothing is computed here by hand. Text files are
read as tstlab's TextFile reads them (UTF-8 BOM dropped, CRLF and LF line ends, no empty line
after a final newline, invalid bytes replaced with U+FFFD), then a TSV column is taken if asked.
"""
import json
import os
import sys

import sacrebleu
from sacrebleu.metrics import BLEU, CHRF

VERSION = "2.6.0"
assert sacrebleu.__version__ == VERSION, f"need sacreBLEU {VERSION}, have {sacrebleu.__version__}"
ANCHORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "anchors")


def lines(spec):
    if "json" in spec:
        vals = json.load(open(os.path.join(ANCHORS, spec["json"]), encoding="utf-8"))["values"]
        return [v["target"][spec["target"]] for v in vals] if "target" in spec else vals
    raw = open(os.path.join(ANCHORS, spec["file"]), "rb").read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    parts = raw.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    out = []
    for p in parts:
        if p.endswith(b"\r"):
            p = p[:-1]
        s = p.decode("utf-8", errors="replace")
        if spec.get("column") is not None:
            s = s.split("\t")[spec["column"]]
        out.append(s)
    return out


def f(path, column=None):
    return {"file": path, "column": column}


BLEU_DEFAULT = {"tokenize": "13a", "lowercase": False, "smooth": "exp", "smooth_value": None, "effective_order": False}
CHRF_DEFAULT = {"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False, "whitespace": False, "eps_smoothing": False}

cases = []


def bleu_metric(opts):
    # force=True only silences the "tokenized period" warning; it does not change a score.
    return BLEU(tokenize=opts["tokenize"], lowercase=opts["lowercase"], smooth_method=opts["smooth"],
                smooth_value=opts["smooth_value"], effective_order=opts["effective_order"], force=True)


def chrf_metric(opts):
    return CHRF(**opts)


def add(name, metric, hyp, refs, level="corpus", **over):
    opts = dict(BLEU_DEFAULT if metric == "bleu" else CHRF_DEFAULT)
    if level == "sentence" and metric == "bleu":
        opts["effective_order"] = True  # sentence_bleu's default
    opts.update(over)
    hyps = lines(hyp)
    streams = [lines(r) for r in refs]
    for s in streams:
        assert len(s) == len(hyps), (name, len(s), len(hyps))
    m = bleu_metric(opts) if metric == "bleu" else chrf_metric(opts)
    if level == "corpus":
        sc = m.corpus_score(hyps, streams)
        exp = {"score": sc.score, "signature": m.get_signature().format()}
        if metric == "bleu":
            exp.update(counts=list(sc.counts), totals=list(sc.totals), precisions=list(sc.precisions),
                       bp=sc.bp, sys_len=sc.sys_len, ref_len=sc.ref_len)
    else:
        exp = {"scores": [m.sentence_score(h, [s[i] for s in streams]).score for i, h in enumerate(hyps)]}
    cases.append({"name": name, "metric": metric, "level": level, "hyp": hyp, "refs": refs,
                  "options": opts, "expected": exp})


# DualRL: 15 systems' Yelp outputs, 4 human references per sentence.
D = "DualRL"
systems = sorted(os.listdir(os.path.join(ANCHORS, D, "outputs", "yelp")))
for sysname in systems:
    for d in (0, 1):
        hyp = f(f"{D}/outputs/yelp/{sysname}/test.{d}.tsf")
        r1 = [f(f"{D}/references/yelp/reference0.{d}")]
        r4 = [f(f"{D}/references/yelp/reference{k}.{d}") for k in range(4)]
        add(f"dualrl/{sysname}/{d}/bleu-1ref", "bleu", hyp, r1)
        add(f"dualrl/{sysname}/{d}/bleu-4ref", "bleu", hyp, r4)
        add(f"dualrl/{sysname}/{d}/chrf-1ref", "chrf", hyp, r1)
        add(f"dualrl/{sysname}/{d}/chrf-4ref", "chrf", hyp, r4)
        add(f"dualrl/{sysname}/{d}/chrf++-4ref", "chrf", hyp, r4, word_order=2)
        # s-BLEU against the sources.
        add(f"dualrl/{sysname}/{d}/s-bleu", "bleu", hyp, [f(f"{D}/data/yelp/test.{d}")])

# Every option on one system.
hyp = f(f"{D}/outputs/yelp/DualRL/test.0.tsf")
r1 = [f(f"{D}/references/yelp/reference1.0")]
r4 = [f(f"{D}/references/yelp/reference{k}.0") for k in range(4)]
for refs, tag in ((r1, "1ref"), (r4, "4ref")):
    add(f"options/{tag}/lowercase", "bleu", hyp, refs, lowercase=True)
    add(f"options/{tag}/tok-none", "bleu", hyp, refs, tokenize="none")
    add(f"options/{tag}/floor", "bleu", hyp, refs, smooth="floor")
    add(f"options/{tag}/floor-0.3", "bleu", hyp, refs, smooth="floor", smooth_value=0.3)
    add(f"options/{tag}/add-k", "bleu", hyp, refs, smooth="add-k")
    add(f"options/{tag}/none", "bleu", hyp, refs, smooth="none")
    add(f"options/{tag}/effective-order", "bleu", hyp, refs, effective_order=True)
    add(f"options/{tag}/chrf-lowercase", "chrf", hyp, refs, lowercase=True)
    add(f"options/{tag}/chrf-eps", "chrf", hyp, refs, eps_smoothing=True)
    add(f"options/{tag}/chrf++-eps", "chrf", hyp, refs, word_order=2, eps_smoothing=True)
    add(f"options/{tag}/chrf-whitespace", "chrf", hyp, refs, whitespace=True)
    add(f"options/{tag}/chrf-beta3-order4", "chrf", hyp, refs, beta=3, char_order=4, word_order=1)

# Sentence level, every line.
for sysname in ("DualRL", "CrossAlignment_Shen", "Human1"):
    for d in (0, 1):
        hyp = f(f"{D}/outputs/yelp/{sysname}/test.{d}.tsf")
        r1 = [f(f"{D}/references/yelp/reference0.{d}")]
        r4 = [f(f"{D}/references/yelp/reference{k}.{d}") for k in range(4)]
        add(f"sentence/{sysname}/{d}/bleu-1ref", "bleu", hyp, r1, level="sentence")
        add(f"sentence/{sysname}/{d}/bleu-4ref", "bleu", hyp, r4, level="sentence")
        add(f"sentence/{sysname}/{d}/chrf-4ref", "chrf", hyp, r4, level="sentence")
        add(f"sentence/{sysname}/{d}/chrf++-1ref", "chrf", hyp, r1, level="sentence", word_order=2)
hyp = f(f"{D}/outputs/yelp/UnsuperMT_Zhang/test.1.tsf")
r4 = [f(f"{D}/references/yelp/reference{k}.1") for k in range(4)]
for smooth in ("floor", "add-k", "none"):
    add(f"sentence/UnsuperMT_Zhang/1/bleu-4ref-{smooth}", "bleu", hyp, r4, level="sentence", smooth=smooth)
add("sentence/UnsuperMT_Zhang/1/bleu-4ref-no-eff", "bleu", hyp, r4, level="sentence", effective_order=False)
add("sentence/UnsuperMT_Zhang/1/bleu-4ref-lc-none", "bleu", hyp, r4, level="sentence", lowercase=True, tokenize="none")

# Li et al. (2018) system outputs: TSV source<TAB>output[<TAB>label]; s-BLEU against the source
# column, r-BLEU against the human rewrite when its file lists the same sources line by line.
L = "Sentiment-and-Style-Transfer/evaluation/outputs"
for ds, human in (("yelp", "human"), ("amazon", "human"), ("captions", "target")):
    for name in sorted(os.listdir(os.path.join(ANCHORS, L, ds))):
        path = f"{L}/{ds}/{name}"
        if name.split(".")[-1] in (human,):
            continue
        d = name.split(".")[2]
        add(f"li/{ds}/{name}/s-bleu", "bleu", f(path, 1), [f(path, 0)])
        add(f"li/{ds}/{name}/s-chrf", "chrf", f(path, 1), [f(path, 0)])
        hpath = f"{L}/{ds}/sentiment.test.{d}.{human}"
        if lines(f(hpath, 0)) == lines(f(path, 0)):
            add(f"li/{ds}/{name}/r-bleu", "bleu", f(path, 1), [f(hpath, 1)])
            add(f"li/{ds}/{name}/r-chrf++", "chrf", f(path, 1), [f(hpath, 1)], word_order=2)

# GEM-metrics unit-test sets, with GEM's options (BLEU lowercased; chrF with eps smoothing).
G = "GEM-metrics/test_data/unit_tests"
gref = [{"json": f"{G}/references.json", "target": 0}]
for p in ("predictions", "identical_predictions", "reversed_predictions", "empty_predictions"):
    hyp = {"json": f"{G}/{p}.json"}
    add(f"gem/{p}/bleu", "bleu", hyp, gref, lowercase=True)
    for w in range(3):
        add(f"gem/{p}/chrf{'+' * w}", "chrf", hyp, gref, word_order=w, eps_smoothing=True)

# The sacreBLEU command line's text output (`-f text`), for `tstlab metric`. reference2.0 is left
# out: its invalid UTF-8 byte stops sacreBLEU's reader.
import subprocess

hyp = f"{D}/outputs/yelp/DualRL/test.0.tsf"
refs = [f"{D}/references/yelp/reference{k}.0" for k in (0, 1, 3)]
cli = []
for tstlab_args, sacre_args, keep in (
    (["bleu"], ["-m", "bleu"], None),
    (["chrf", "--word-order", "2"], ["-m", "chrf", "--chrf-word-order", "2"], None),
    (["bleu", "--lowercase", "--tokenize", "none", "--smooth", "floor"], ["-m", "bleu", "-lc", "-tok", "none", "-s", "floor"], None),
    (["bleu", "--sentence"], ["-m", "bleu", "-sl"], 20),
    (["chrf", "--sentence"], ["-m", "chrf", "-sl"], 20),
):
    cmd = ["sacrebleu", "-f", "text", *[os.path.join(ANCHORS, r) for r in refs], "-i", os.path.join(ANCHORS, hyp), *sacre_args]
    lines_out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    cli.append({"hyp": hyp, "refs": refs, "tstlab": tstlab_args, "sacrebleu": sacre_args, "stdout": lines_out[:keep]})

# One case per line.
out = sys.stdout
out.write('{"sacrebleu_version": "%s", "made_by": "tests/expected/make_sacrebleu.py",\n"cli": [\n' % VERSION)
out.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cli))
out.write('],\n"cases": [\n')
out.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
out.write("\n]}\n")
