"""Writes tests/fixtures/tiny-hf/: tiny random BERT and RoBERTa models saved by transformers,
with the hidden states of every layer that transformers computes for a padded batch.

    python make_tiny_hf.py OUT_DIR TOKENIZER_JSON

- bert-bin/: BertModel, weights as pytorch_model.bin (torch.save of the state dict), gelu;
- roberta/: RobertaModel (pad_token_id 1, positions from 2, type_vocab_size 1) as
  model.safetensors, gelu_new.
TOKENIZER_JSON is copied into both folders (the loader needs one; the expected values are
computed from token ids, so any tokenizer with [CLS]/[SEP] ids below the vocabulary size fits).
"""

import json
import os
import shutil
import sys

import torch
import transformers
from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel

out, tok = sys.argv[1], sys.argv[2]
torch.manual_seed(0)

IDS = [[2, 5, 6, 7, 8, 5, 9, 13, 3], [2, 10, 11, 3], [2, 24, 26, 27, 28, 3], [2, 3]]


def dump(model, folder, pad, safetensors):
    os.makedirs(folder, exist_ok=True)
    model.eval()
    with torch.no_grad():
        for p in model.parameters():  # larger than the default init so layers matter
            p.add_(torch.randn_like(p) * 0.3)
    if safetensors:
        model.save_pretrained(folder)
    else:
        model.config.to_json_file(os.path.join(folder, "config.json"))
        torch.save(model.state_dict(), os.path.join(folder, "pytorch_model.bin"))
    shutil.copy(tok, os.path.join(folder, "tokenizer.json"))
    n = max(len(s) for s in IDS)
    ids = torch.tensor([s + [pad] * (n - len(s)) for s in IDS])
    mask = torch.tensor([[1] * len(s) + [0] * (n - len(s)) for s in IDS])
    with torch.no_grad():
        o = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    states = [[h[i, : len(s)].tolist() for i, s in enumerate(IDS)] for h in o.hidden_states]
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "torch": torch.__version__,
                   "ids": IDS, "hidden_states": states}, f)


common = dict(vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=24, max_position_embeddings=40)
dump(BertModel(BertConfig(**common, hidden_act="gelu", pad_token_id=0), add_pooling_layer=False),
     os.path.join(out, "bert-bin"), 0, safetensors=False)
dump(RobertaModel(RobertaConfig(**common, hidden_act="gelu_new", pad_token_id=1, type_vocab_size=1),
                  add_pooling_layer=False),
     os.path.join(out, "roberta"), 1, safetensors=True)
