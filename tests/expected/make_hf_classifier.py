"""Logits of the tiny random sequence-classification folders that tests/it/hf_classifier.rs writes,
computed by transformers' own forward on the same files.

    TSTLAB_WRITE_TINY_CLS=/tmp/tiny-cls cargo test --release --test hf_classifier
    python make_hf_classifier.py /tmp/tiny-cls hf_classifier.json

(The first run of the test fails until the JSON exists; the folders are written first.)
"""

import hashlib
import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForSequenceClassification

root, out = sys.argv[1], sys.argv[2]
IDS = [[2, 5, 6, 7, 8, 5, 9, 13, 3], [2, 10, 11, 3], [2, 24, 26, 27, 28, 3], [2, 3], [2, 25, 26, 29, 16, 17, 6, 15, 3]]
PAD = {"bert": 0, "roberta": 1}

models = {}
for name in ["bert", "roberta"]:
    folder = os.path.join(root, name)
    model, info = AutoModelForSequenceClassification.from_pretrained(folder, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"], info
    model.eval()
    n = max(len(s) for s in IDS)
    ids = torch.tensor([s + [PAD[name]] * (n - len(s)) for s in IDS])
    mask = torch.tensor([[1] * len(s) + [0] * (n - len(s)) for s in IDS])
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    models[name] = {"architecture": type(model).__name__, "sha256": sha, "ids": IDS, "logits": logits.tolist()}

with open(out, "w") as f:
    json.dump({"transformers": transformers.__version__, "torch": torch.__version__, "models": models}, f, indent=1)
    f.write("\n")
