"""Reference g-PPL of the demo sources under SmolLM2-135M-Instruct (GGUF Q4_1), for
tests/it/gppl_precision.rs and docs/METHODS.md "PPL" (precision across devices).

Independent of tstlab: Hugging Face transformers dequantizes the GGUF (through the `gguf`
package) and runs the model in float32 on the CPU. Each text is tokenised as plain text
(transformers' GGUF tokenizer, no special tokens) after one `<|endoftext|>` start token that is
context only; g-PPL = exp(mean NLL of the text tokens), as docs/METHODS.md "PPL" defines it.
Two weight precisions, both with f32 arithmetic:
  f32: the dequantized weights as they are (tstlab on CUDA and on CPUs without AVX-512 or AVX2);
  f16: the linear layers' weights rounded to f16 (tstlab's packed AVX-512/AVX2 CPU kernel; the
       embedding lookup and the norms stay f32).

    pip install torch transformers gguf
    python3 tests/expected/make_gppl_precision.py PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf

Writes tests/expected/gppl_precision.json and prints the relative differences f16 vs f32.
"""
import csv
import json
import os
import statistics
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

path = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
demo = os.path.join(here, "..", "..", "data", "demo")
texts = []
for name in ("sentiment.items.tsv", "formality.items.tsv"):
    with open(os.path.join(demo, name), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    # The first 25 sources of each file (the header skipped), texts without digits (transformers'
    # converter knows no SmolLM2 digit rule, tests/expected/make_smollm2_token_ids.py).
    texts += [r[1] for r in rows[1:] if not any(c.isdigit() for c in r[1])][:25]

torch.set_num_threads(2)
folder, file = os.path.split(os.path.abspath(path))
tok = AutoTokenizer.from_pretrained(folder, gguf_file=file)
start = tok.convert_tokens_to_ids("<|endoftext|>")


def load():
    m = AutoModelForCausalLM.from_pretrained(folder, gguf_file=file, torch_dtype=torch.float32)
    m.eval()
    return m


def ppl(model, ids):
    x = torch.tensor([[start] + ids])
    with torch.no_grad():
        logits = model(x).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    nll = -sum(logp[i, x[0, i + 1]].item() for i in range(len(ids)))
    return float(torch.exp(torch.tensor(nll / len(ids))))


ids = [tok.encode(t, add_special_tokens=False) for t in texts]
m32 = load()
f32 = [ppl(m32, i) for i in ids]
m16 = load()
with torch.no_grad():
    # Untie the output layer from the embeddings so that only the linear layers are rounded.
    if m16.lm_head.weight is m16.model.embed_tokens.weight:
        m16.lm_head.weight = torch.nn.Parameter(m16.model.embed_tokens.weight.clone())
    for mod in m16.modules():
        if isinstance(mod, torch.nn.Linear):
            mod.weight.copy_(mod.weight.half().float())
f16 = [ppl(m16, i) for i in ids]

rel = [abs(a - b) / b for a, b in zip(f16, f32)]
print(f"{len(texts)} texts; f16 vs f32 weights, relative difference of g-PPL: median {statistics.median(rel):.2e}, max {max(rel):.2e}")
out = {
    "made_by": "tests/expected/make_gppl_precision.py",
    "model": file,
    "transformers": transformers.__version__,
    "torch": torch.__version__,
    "start_token": start,
    "texts": [{"text": t, "ids": i, "f32": a, "f16": b} for t, i, a, b in zip(texts, ids, f32, f16)],
}
with open(os.path.join(here, "gppl_precision.json"), "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
