#!/usr/bin/env python3
"""Expected s-chrf values (sentence chrF / chrF++ of an output against its source), for
tests/it/metric_cli.rs (s_chrf_is_sacrebleu_sentence_chrf_against_the_source).

Run from the project root with sacreBLEU 2.6.0 installed (`python3 -m pip install sacrebleu==2.6.0`):

    python3 tests/expected/make_s_chrf.py > tests/expected/s_chrf.json

Every number comes from sacreBLEU's own `sentence_chrf`; nothing is computed here by hand.
"""
import json

import sacrebleu
from sacrebleu.metrics import CHRF

VERSION = "2.6.0"
assert sacrebleu.__version__ == VERSION, f"need sacreBLEU {VERSION}, have {sacrebleu.__version__}"

# (source, output): one text per line, no tabs.
PAIRS = [
    ("the soup was cold .", "the soup was warm ."),
    ("the room was clean .", "the room was clean ."),
    ("great staff .", "rude staff ."),
    ("I don't like this place at all!", "I really like this place!"),
    ("The Food Was AWFUL", "the food was awful"),
    ("gotta go, ttyl", "I have to leave now; I will talk to you later."),
    ("café au lait, s'il vous plaît", "cafe au lait please"),
    ("東京は大きい都市です。", "東京は小さい都市です。"),
    ("a b c d e f g", "zzz"),
    ("worst service ever , never again .", "best service ever , will come again ."),
]

chrf, chrfpp = CHRF(), CHRF(word_order=2)
cases = [
    {
        "source": s,
        "output": o,
        "s-chrf": chrf.sentence_score(o, [s]).score,
        "s-chrf++": chrfpp.sentence_score(o, [s]).score,
    }
    for s, o in PAIRS
]
print(json.dumps({"sacrebleu_version": VERSION, "made_by": "tests/expected/make_s_chrf.py",
                  "signatures": [chrf.get_signature().format(), chrfpp.get_signature().format()],
                  "cases": cases}, ensure_ascii=False, indent=1))
