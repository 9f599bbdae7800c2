#!/usr/bin/env python3
"""Expected values of tstlab's three BLEU conventions and of NLTK's word_tokenize on real files,
for tests/it/numbers/bleu.rs, plus the numbers TSTBench's own BLEU evaluation gives on its released
ChatGPT Yelp outputs (the acceptance check of `tstlab score --bleu tstbench`).

Run from the project root with the reference implementations installed (in a venv or --user):

    python3 -m pip install nltk==3.10.4 sacrebleu==2.6.0
    python3 tests/expected/make_bleu_conventions.py > tests/expected/bleu_conventions.json

Every number comes from the libraries' own functions; nothing is computed here by hand.

- sacre13a: sacrebleu.corpus_bleu / sentence_bleu with their defaults (13a, exp smoothing), 0-100.
- nltk:     str.lower(), str.split(), nltk corpus_bleu / sentence_bleu without smoothing, 0-1.
- tstbench: str.lower(), white space runs collapsed and stripped, nltk.word_tokenize, then
            nltk corpus_bleu / sentence_bleu without smoothing, 0-1.

nltk.word_tokenize splits sentences with the Punkt model trained on English, which is data
fetched at run time (`nltk.download('punkt_tab')`), not part of the nltk package. Here it runs
with Punkt's untrained parameters (PunktSentenceTokenizer()), which is what tstlab ports; when
the trained model is installed, the TSTBench numbers are also given with it ("trained_punkt").

Text files are read as tstlab's TextFile reads them (UTF-8 BOM dropped, CRLF and LF line ends,
no empty line after a final newline, invalid bytes replaced with U+FFFD). The TSTBench part reads
files the way TSTBench's evaluation code does (see `tstbench_code` below).
"""
import json
import os
import random
import re
import sys
import warnings

import nltk
import nltk.tokenize
import sacrebleu
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from nltk.translate.bleu_score import corpus_bleu, sentence_bleu

NLTK_VERSION = "3.10.4"
SACREBLEU_VERSION = "2.6.0"
assert nltk.__version__ == NLTK_VERSION, f"need nltk {NLTK_VERSION}, have {nltk.__version__}"
assert sacrebleu.__version__ == SACREBLEU_VERSION, f"need sacreBLEU {SACREBLEU_VERSION}"
warnings.filterwarnings("ignore")  # NLTK warns about zero n-gram counts; the values are what we want

ANCHORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "anchors")
TB = "A-Benchmark-of-Text-Style-Transfer"
YELP = f"{TB}/Dataprepro/datasets/yelp"
CHATGPT = f"{TB}/Algorithms/CHATGPT/outputs"

# nltk.word_tokenize looks its sentence splitter up through this function; give it Punkt with
# untrained parameters instead of the trained English model.
UNTRAINED = PunktSentenceTokenizer()
try:
    TRAINED = nltk.tokenize._get_punkt_tokenizer("english")
except LookupError:
    TRAINED = None
_splitter = UNTRAINED
nltk.tokenize._get_punkt_tokenizer = lambda language="english": _splitter


def word_tokenize(text, splitter=UNTRAINED):
    global _splitter
    _splitter = splitter
    try:
        return nltk.word_tokenize(text)
    finally:
        _splitter = UNTRAINED


def lines(path):
    raw = open(os.path.join(ANCHORS, path), "rb").read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    parts = raw.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return [(p[:-1] if p.endswith(b"\r") else p).decode("utf-8", errors="replace") for p in parts]


def collapse(s):
    return " ".join(s.split())


def tokens(conv, s):
    if conv == "nltk":
        return s.lower().split()
    if conv == "tstbench":
        return word_tokenize(collapse(s.lower()))
    raise ValueError(conv)


# --- word_tokenize on every line of a few files: as read, and as the tstbench convention
# prepares a line (lower-cased, white space collapsed).
# (file, how many of its first lines)
TOKENIZE_FILES = [
    (f"{CHATGPT}/yelp/output_cleaned.0", None),
    (f"{CHATGPT}/yelp/output_cleaned.1", None),
    (f"{CHATGPT}/amazon/output_cleaned.0", None),
    (f"{CHATGPT}/gyafc_fr/output_cleaned.0", 500),
    (f"{TB}/Dataprepro/datasets/shakespeare/test.0", 500),
    ("DualRL/references/yelp/reference2.0", None),
]
tokenize = []
for path, limit in TOKENIZE_FILES:
    for variant, prep in (("raw", lambda s: s), ("tstbench", lambda s: collapse(s.lower()))):
        texts = [prep(s) for s in lines(path)[:limit]]
        tokenize.append({
            "file": path,
            "limit": limit,
            "variant": variant,
            "tokens": [" ".join(word_tokenize(t)) for t in texts],
            "sentences": [len(UNTRAINED.tokenize(t)) for t in texts],
        })

# --- word_tokenize and Punkt's sentences on seeded random strings made of the pieces the rules
# are about (quotes, clitics, contractions, periods, brackets, dashes, white space of all kinds,
# a combining mark), which the anchor files reach only in part.
PIECES = ["a", "b", "Z", "x", "I", "dr", ".", "..", "...", ",", ":", ";", "!", "?", "'", "''", '"', "`", "``",
          "(", ")", "[", "]", "{", "}", "<", ">", "-", "--", "\u2014", "\u2013", "*", "@", "#", "$", "%", "&",
          " ", " ", " ", "  ", "\t", "\n", "3", "42", "3.5", "1,000", "'s", "'t", "n't", "'ll", "'re", "'ve",
          "'d", "'m", "can", "not", "cannot", "gonna", "wanna", "gimme", "'tis", "'twas", "d'ye", "more'n",
          "\u201c", "\u201d", "\u2018", "\u2019", "\u00ab", "\u00bb", "\u201e", "\u00e9", "\u017f",
          "\u212a", "\u0301", "_", "J.", "U.S.", "e.g.", "\u00a0", "\x1c", "Mr.", "!!!", "?!", ". . .", "\r"]
rng = random.Random(15)
synthetic = []
for _ in range(1000):
    s = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 20)))
    synthetic.append({"text": s, "sentences": UNTRAINED.tokenize(s), "tokens": word_tokenize(s)})

# --- corpus and sentence BLEU in each convention.
cases = []


def add(name, hyp, refs, level="corpus", limit=None):
    hyps = lines(hyp)[:limit]
    streams = [lines(r)[:limit] for r in refs]
    for s in streams:
        assert len(s) == len(hyps), (name, len(s), len(hyps))
    per_seg = [[s[i] for s in streams] for i in range(len(hyps))]
    exp = {}
    if level == "corpus":
        exp["sacre13a"] = sacrebleu.corpus_bleu(hyps, streams, force=True).score
        for conv in ("nltk", "tstbench"):
            exp[conv] = corpus_bleu([[tokens(conv, r) for r in rs] for rs in per_seg], [tokens(conv, h) for h in hyps])
    else:
        exp["sacre13a"] = [sacrebleu.sentence_bleu(h, rs).score for h, rs in zip(hyps, per_seg)]
        for conv in ("nltk", "tstbench"):
            exp[conv] = [sentence_bleu([tokens(conv, r) for r in rs], tokens(conv, h)) for h, rs in zip(hyps, per_seg)]
    cases.append({"name": name, "level": level, "hyp": hyp, "refs": refs, "limit": limit, "expected": exp})


for shot, out in (("zero", "output_cleaned"), ("few", "output_fewshot_cleaned")):
    for x in (0, 1):
        hyp = f"{CHATGPT}/yelp/{out}.{x}"
        add(f"tstbench/yelp/{shot}/{x}/self", hyp, [f"{YELP}/test.{x}"])
        add(f"tstbench/yelp/{shot}/{x}/ref0", hyp, [f"{YELP}/reference0.{x}"])
        add(f"tstbench/yelp/{shot}/{x}/multi", hyp, [f"{YELP}/reference{k}.{x}" for k in range(4)])
for x, y in ((0, 1), (1, 0)):
    hyp = f"{CHATGPT}/shakespeare/output_cleaned.{x}"
    add(f"tstbench/shakespeare/{x}/self", hyp, [f"{TB}/Dataprepro/datasets/shakespeare/test.{x}"])
    add(f"tstbench/shakespeare/{x}/ref", hyp, [f"{TB}/Dataprepro/datasets/shakespeare/test.{y}"])
for system in ("DualRL", "CrossAlignment_Shen", "Human1"):
    for x in (0, 1):
        hyp = f"DualRL/outputs/yelp/{system}/test.{x}.tsf"
        add(f"dualrl/{system}/{x}/self", hyp, [f"DualRL/data/yelp/test.{x}"])
        add(f"dualrl/{system}/{x}/multi", hyp, [f"DualRL/references/yelp/reference{k}.{x}" for k in range(4)])
add("sentence/tstbench/yelp/zero/1/multi", f"{CHATGPT}/yelp/output_cleaned.1",
    [f"{YELP}/reference{k}.1" for k in range(4)], level="sentence")
add("sentence/tstbench/shakespeare/0/ref", f"{CHATGPT}/shakespeare/output_cleaned.0",
    [f"{TB}/Dataprepro/datasets/shakespeare/test.1"], level="sentence", limit=300)


# --- TSTBench's own evaluation (github.com/FayeXXX/A-Benchmark-of-Text-Style-Transfer,
# Evaluation/content_preservation/evaluator_bleu.py and Evaluation/utils/dataset.py), step by
# step: outputs and test sentences are read line by line, each lower-cased, tabs made spaces,
# white space runs collapsed to one space and stripped, then nltk.word_tokenize; self-BLEU is
# nltk corpus_bleu(test sentences as single references, outputs) with its defaults (weights
# 0.25 x 4, no smoothing); multi-BLEU takes reference0..3 read with readlines(), each line only
# lower-cased (newline kept) and word-tokenized. Both are on NLTK's 0-1 scale.
def tstbench_read(path):
    with open(os.path.join(ANCHORS, path), "r", encoding="utf8") as f:
        return [re.sub(r"\s+", " ", line.lower().replace("\t", " ")).strip() for line in f]


def tstbench_code(x, splitter):
    wt = lambda s: word_tokenize(s, splitter)
    outputs = [wt(s) for s in tstbench_read(f"{CHATGPT}/yelp/output_cleaned.{x}")]
    test = [[wt(s)] for s in tstbench_read(f"{YELP}/test.{x}")]
    refs = [open(os.path.join(ANCHORS, f"{YELP}/reference{k}.{x}"), encoding="utf-8").readlines() for k in range(4)]
    multi = [[wt(refs[k][i].lower()) for k in range(4)] for i in range(len(refs[0]))]
    return {"self": corpus_bleu(test, outputs), "multi": corpus_bleu(multi, outputs)}


# The English model knows "dr" as an abbreviation; on these files that is where it splits
# differently from untrained Punkt (4 of the 24 places untrained Punkt splits a line).
DR = PunktParameters()
DR.abbrev_types = {"dr"}
acceptance = []
for x, direction in ((0, "negative->positive"), (1, "positive->negative")):
    acceptance.append({
        "direction": direction,
        "hyp": f"{CHATGPT}/yelp/output_cleaned.{x}",
        "untrained_punkt": tstbench_code(x, UNTRAINED),
        "dr_abbreviation": tstbench_code(x, PunktSentenceTokenizer(DR)),
        "trained_punkt": tstbench_code(x, TRAINED) if TRAINED else None,
    })

out = sys.stdout
out.write('{"made_by": "tests/expected/make_bleu_conventions.py", "nltk_version": "%s", "sacrebleu_version": "%s",\n'
          % (NLTK_VERSION, SACREBLEU_VERSION))
out.write('"tstbench_code": [\n' + ",\n".join(json.dumps(a) for a in acceptance) + "],\n")
out.write('"bleu": [\n' + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "],\n")
out.write('"tokenize": [\n' + ",\n".join(json.dumps(t, ensure_ascii=False) for t in tokenize) + "],\n")
out.write('"synthetic": [\n' + ",\n".join(json.dumps(t, ensure_ascii=False) for t in synthetic) + "]}\n")
