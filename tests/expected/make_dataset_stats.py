#!/usr/bin/env python3
"""Reference dataset statistics for tests/it/figures/stats.rs, computed straight from the files.

Reads TSTBench's Yelp test set (../shared/anchors/A-Benchmark-of-Text-Style-Transfer/
Dataprepro/datasets/yelp: test.0 / test.1, one sentence a line, 0 = negative; references
reference{0..3}.X line-aligned with test.X) and writes tests/expected/dataset_stats.json with,
per direction (negative->positive from test.0, positive->negative from test.1), the rows
`tstlab stats --tokenizer whitespace` prints: for the sources and for the references,
sentences, tokens, mean and median tokens (numpy's median), vocabulary (distinct lowercased
tokens), type-token ratio, and for the references the references per item and the overlap
(share of lowercased reference tokens found in the item's lowercased source tokens, pooled).

Tokens are Python's str.split() (white space); lines are decoded as UTF-8 with invalid bytes
replaced, line ends removed (CRLF too) and surrounding white space stripped; empty lines are
not references.

Run from the project root:  python3 tests/expected/make_dataset_stats.py
"""
import json
import platform
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2] / "../shared/anchors/A-Benchmark-of-Text-Style-Transfer/Dataprepro/datasets/yelp"
STYLES = {0: "negative", 1: "positive"}


def lines(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    return [l.strip() for l in text.splitlines()]


def row(texts):
    lengths = [len(t.split()) for t in texts]
    types = {w.lower() for t in texts for w in t.split()}
    tokens = sum(lengths)
    return {
        "sentences": len(texts),
        "tokens": tokens,
        "mean_tokens": tokens / len(texts),
        "median_tokens": float(np.median(lengths)),
        "vocabulary": len(types),
        "type_token_ratio": len(types) / tokens,
    }


def main():
    out = {"made_by": f"tests/expected/make_dataset_stats.py with numpy {np.__version__}, Python {platform.python_version()}", "yelp": {}}
    for x in (0, 1):
        sources = lines(ROOT / f"test.{x}")
        refs = [[] for _ in sources]
        for k in range(4):
            for i, r in enumerate(lines(ROOT / f"reference{k}.{x}")):
                if r:
                    refs[i].append(r)
        flat = [r for rs in refs for r in rs]
        found = of = 0
        for s, rs in zip(sources, refs):
            src = {w.lower() for w in s.split()}
            for r in rs:
                toks = r.split()
                found += sum(1 for w in toks if w.lower() in src)
                of += len(toks)
        ref_row = row(flat)
        ref_row["refs_per_item"] = len(flat) / len(sources)
        ref_row["items_with_refs"] = sum(1 for rs in refs if rs)
        ref_row["overlap"] = found / of
        name = f"{STYLES[x]}->{STYLES[1 - x]}"
        out["yelp"][name] = {"sources": row(sources), "references": ref_row}
    path = Path(__file__).with_name("dataset_stats.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["yelp"], indent=1))


if __name__ == "__main__":
    main()
