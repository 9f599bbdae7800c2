#!/usr/bin/env python3
"""Expected values of the `efst` convention (eval-formality-transfer's eval_content.py) for
tests/it/numbers/efst.rs: NLTK 3.4.5's word_tokenize, NLTK sentence_bleu with
SmoothingFunction().method1, and the `rouge` package 0.3.2's ROUGE-1/2/L F, P, R.

eval_content.py (laihuiyuan/eval-formality-transfer) tokenizes output, source and reference with
nltk.word_tokenize, then scores sentence_bleu([src_tokens], out_tokens, method1) and
Rouge().get_scores(' '.join(out_tokens), ' '.join(src_tokens)), and the same against the
reference. Its published values need NLTK 3.4's tokenizer (NLTK 3.5 changed the Treebank rules:
"nose.." stays one token in 3.4, becomes "nose" ".." in 3.5+), so this script runs NLTK 3.4.5,
which imports on Python 3.8 (not on 3.10+):

    python3.8 -m pip install nltk==3.4.5 rouge==0.3.2
    python3.8 tests/expected/make_efst.py > tests/expected/efst.json

word_tokenize's sentence splitter is Punkt; NLTK loads a model trained on English (data fetched
at run time, not in the package), tstlab ports Punkt with untrained parameters, and so this script
runs with those (as tests/expected/make_bleu_conventions.py does); each text's Punkt sentences
are given too, as NLTK 3.4.5's untrained Punkt splits some strings differently from 3.10.4's,
which tstlab ports (its period-context rule was rewritten in NLTK 3.6). NLTK 3.4.5's and 3.10.4's
sentence_bleu agree bit for bit on these inputs, so tstlab's NLTK BLEU (3.10.4) is the reference.

Inputs (../shared/anchors, read, never copied): the texts of eval-formality-transfer's
chatgpt/content.{src,ref}.json (sources, references, outputs of 9 systems), its xformal inputs
and references, the first 300 lines of two DualRL systems' outputs and a reference, and 1,000
seeded random strings made of the pieces the tokenizer rules are about. Pairs: every (output,
source) and (output, reference) of the two JSON files, DualRL outputs against their references,
and 500 seeded random pairs (hypothesis and reference given as indexes into the texts).
"""
import json
import os
import random
import sys

import nltk
import nltk.tokenize
from nltk.tokenize.punkt import PunktSentenceTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge import Rouge

from anchor_lines import ROOT, lines

assert nltk.__version__ == "3.4.5", nltk.__version__

EFT = os.path.join(ROOT, "eval-formality-transfer")
UNTRAINED = PunktSentenceTokenizer()
# NLTK 3.4's word_tokenize calls this module-level function for its sentences.
nltk.tokenize.sent_tokenize = lambda text, language="english": UNTRAINED.tokenize(text)
ROUGE = Rouge()
SMOOTH = SmoothingFunction()




def scores(hyp, ref):
    """What eval_content.py computes for one (output, other) pair, at full precision."""
    h, r = nltk.word_tokenize(hyp), nltk.word_tokenize(ref)
    out = {"bleu": sentence_bleu([r], h, smoothing_function=SMOOTH.method1)}
    try:
        s = ROUGE.get_scores(" ".join(h), " ".join(r), avg=True)
        out["rouge"] = {k: [s[k]["p"], s[k]["r"], s[k]["f"]] for k in ["rouge-1", "rouge-2", "rouge-l"]}
    except ValueError:  # "Collections must contain at least 1 sentence."
        out["rouge"] = None
    return out


texts = []
pairs = []
for side in ["src", "ref"]:
    with open(os.path.join(EFT, "chatgpt", f"content.{side}.json"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            texts += [d["src"], d["ref"]] + [s["out"] for s in d["sys"].values()]
            pairs += [(s["out"], d[side]) for s in d["sys"].values()]
texts += lines("eval-formality-transfer/data/xformal/fr.input.80")
for i in range(4):
    texts += lines(f"eval-formality-transfer/data/xformal/fr.80.ref{i}")
ref = lines("DualRL/references/yelp/reference0.0")[:300]
for system in ["DeleteOnly_Li", "CrossAlignment_Shen"]:
    out = lines(f"DualRL/outputs/yelp/{system}/test.0.tsf")[:300]
    texts += out
    pairs += list(zip(out, ref))
texts += ref

PIECES = ["a", "b", "Z", "x", "I", "dr", ".", "..", "...", "....", ",", ":", ";", "!", "?", "'", "''", '"', "`",
          "``", "(", ")", "[", "]", "{", "}", "<", ">", "-", "--", "\u2014", "\u2013", "*", "@", "#", "$", "%",
          "&", " ", " ", " ", "  ", "\t", "\n", "3", "42", "3.5", "1,000", "'s", "'t", "n't", "'ll", "'re",
          "'ve", "'d", "'m", "'n", "can", "not", "cannot", "gonna", "wanna", "gimme", "'tis", "'twas", "d'ye",
          "mor'n", "more'n", "\u201c", "\u201d", "\u2018", "\u2019", "\u00ab", "\u00bb", "\u201e", "\u00e9",
          "_", "J.", "U.S.", "e.g.", "\u00a0", "Mr.", "!!!", "?!", ". . .", "'a", "'b "]
rng = random.Random(16)
synthetic = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 20))) for _ in range(1000)]
real = len(set(texts))
texts += synthetic
pairs += [(synthetic[2 * i], synthetic[2 * i + 1]) for i in range(500)]

# One entry a line: texts (the first `from_files` from the anchors, then the seeded strings) with
# Punkt's sentences and the tokens, then pairs naming texts by index.
seen = {}
for t in texts:
    seen.setdefault(t, len(seen))
dump = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
print('{"nltk":"%s","rouge":"0.3.2","punkt":"untrained","from_files":%d,' % (nltk.__version__, real))
print('"texts":[')
print(",\n".join(dump([t, UNTRAINED.tokenize(t), nltk.word_tokenize(t)]) for t in seen))
print('],"pairs":[')
print(",\n".join(dump(dict(hyp=seen[h], ref=seen[r], **scores(h, r))) for h, r in pairs))
print("]}")
