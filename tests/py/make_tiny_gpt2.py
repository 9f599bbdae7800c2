"""Writes tests/fixtures/tiny-gpt2/: a small random GPT-2 as transformers saves it and as GGUF,
with what transformers computes on it (tests/it/gpt2_transformers.rs checks tstlab against it).

    python3 tests/py/make_tiny_gpt2.py tests/fixtures/tiny-gpt2

Needs torch, transformers, tokenizers, tiktoken, gguf and numpy (PyPI). Writes:
- hf/: GPT2LMHeadModel.save_pretrained (config.json, model.safetensors with `transformer.`
  names, head tied) and GPT2Tokenizer.save_pretrained (tokenizer.json, ...), plus the
  tokenizer's vocab.json and merges.txt. The tokenizer is a byte-level BPE of 299 tokens trained here with the
  `tokenizers` package on a few sentences and numbered as GPT-2's (bytes, merges, then
  `<|endoftext|>`, id 299).
- tiny-gpt2-f32.gguf, tiny-gpt2-f16.gguf, tiny-gpt2-q8_0.gguf: the same model as llama.cpp's
  convert_hf_to_gguf.py lays GPT-2 out (Conv1D weights transposed to [out, in], 1-D tensors F32,
  tokenizer metadata `gpt2`/`gpt-2`); the f16 and q8_0 files store the 2-D weights in that
  type, and the q8_0 one also has `output.weight` (as older converters wrote it).
- expected.json: token ids of TEXTS by transformers' GPT-2 tokenizer and by OpenAI's tiktoken
  with GPT-2's split rule (equal);
  the padded batch BATCH; greedy continuations by `generate(do_sample=False)`; and per text
  the NLL as llm-tst-code's `eval_model_loss` counts it (first token context only, natural log).
- expected_logits.safetensors: `<format>.<i>`, the logits [len, vocab] of BATCH[i] by
  GPT2LMHeadModel with the weights as each format stores them (`f32`: the safetensors and the
  f32 GGUF; `f16`, `q8_0`: dequantized by gguf-py), computed as one right-padded batch with an
  attention mask and checked against each sequence alone.
"""

import json
import os
import sys
from importlib.metadata import version

os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the files written here, never a cached copy

import gguf
import numpy as np
import tiktoken
import tiktoken.load
import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

out = sys.argv[1]
hf = os.path.join(out, "hf")
os.makedirs(hf, exist_ok=True)
torch.manual_seed(0)

CORPUS = [
    "the food was cold and the service was slow .",
    "the staff were friendly and the pizza was great !",
    "i would not come back here again , it was bad .",
    "we loved the place : good coffee , nice music and warm bread .",
    "Prices are high but the portions are huge and tasty.",
    "My wife ordered the soup; it was salty. I won't return!",
    "Great service, great food, 10/10 would recommend.",
]
TEXTS = [
    "the food was cold .",
    "The staff were friendly, and the pizza was great!",
    "i won't come back  here : 3 stars at most...",
    "unseen words: zebra quokka, ünïcödé and 🙂",
    "the end<|endoftext|>the start",
]
VOCAB = 300
# GPT-2's pre-tokenizer split (OpenAI's encoder.py; tiktoken's `gpt2` encoding).
GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def byte_order():
    """GPT-2's byte tokens in id order (its `bytes_to_unicode`): the printable bytes, then the
    others, each written as a printable character."""
    shown = [b for b in range(256) if chr(b).isprintable() and b != 32]
    hidden = [b for b in range(256) if b not in shown]
    names = {b: chr(b) for b in shown} | {b: chr(256 + i) for i, b in enumerate(hidden)}
    return [names[b] for b in shown + hidden]


def train_tokenizer():
    """Byte-level BPE trained on CORPUS, numbered as GPT-2's: the 256 bytes in GPT-2's order,
    then the merges in order, `<|endoftext|>` last."""
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB - 1, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator(CORPUS * 20, trainer)
    merges = [m if isinstance(m, str) else " ".join(m) for m in json.loads(tk.to_str())["model"]["merges"]]
    tokens = byte_order() + [m.replace(" ", "") for m in merges] + ["<|endoftext|>"]
    assert len(tokens) == VOCAB and len(set(tokens)) == VOCAB, len(tokens)
    vocab = {t: i for i, t in enumerate(tokens)}
    with open(os.path.join(hf, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(hf, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
    # Two implementations: transformers' GPT-2 tokenizer (on the tokenizers package) and OpenAI's
    # tiktoken with GPT-2's split rule, from the same two files.
    hf_tok = GPT2Tokenizer(vocab=os.path.join(hf, "vocab.json"), merges=os.path.join(hf, "merges.txt"))
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(os.path.join(hf, "merges.txt"), os.path.join(hf, "vocab.json"))
    openai = tiktoken.Encoding("tiny-gpt2", pat_str=GPT2_SPLIT, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": VOCAB - 1})
    return hf_tok, openai, vocab, merges


hf_tok, openai, vocab, merges = train_tokenizer()
hf_tok.save_pretrained(hf)
ids = [hf_tok.encode(t) for t in TEXTS]
assert ids == [openai.encode(t, allowed_special="all") for t in TEXTS], "transformers and tiktoken disagree"
eot = VOCAB - 1
assert ids[-1].count(eot) == 1, ids[-1]

config = GPT2Config(
    vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2,
    bos_token_id=eot, eos_token_id=eot, layer_norm_epsilon=1e-5, activation_function="gelu_new",
)
model = GPT2LMHeadModel(config).eval()
with torch.no_grad():  # larger than the default init (std 0.02) so that every layer matters
    for name, p in model.named_parameters():
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
            p.copy_(1.0 + 0.2 * torch.randn_like(p))
        else:
            p.copy_(0.25 * torch.randn_like(p))
model.save_pretrained(hf)
state = {k: v.clone() for k, v in model.state_dict().items()}

BATCH = [ids[0], ids[1], ids[3][:12], [eot] + ids[2]]


def logits_of(weights):
    """The logits of BATCH as one right-padded batch, each row checked against its sequence alone."""
    m = GPT2LMHeadModel(config).eval()
    m.load_state_dict(weights)
    n = max(len(s) for s in BATCH)
    inp = torch.tensor([s + [eot] * (n - len(s)) for s in BATCH])
    mask = torch.tensor([[1] * len(s) + [0] * (n - len(s)) for s in BATCH])
    with torch.no_grad():
        batch = m(input_ids=inp, attention_mask=mask).logits
        out = []
        for i, s in enumerate(BATCH):
            alone = m(input_ids=torch.tensor([s])).logits[0]
            assert torch.allclose(alone, batch[i, : len(s)], atol=1e-5), i
            out.append(alone.contiguous())
    return out


# GGUF: tensors as convert_hf_to_gguf.py names and lays them out.
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
HF_TO_GGUF = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
              "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}


def gguf_tensors():
    t = {}
    for k, v in state.items():
        k = k.removeprefix("transformer.")
        if k == "lm_head.weight":
            continue
        a = v.numpy().astype(np.float32)
        if k.endswith(CONV1D):
            a = np.ascontiguousarray(a.T)
        if k in ("wte.weight", "wpe.weight"):
            name = {"wte.weight": "token_embd.weight", "wpe.weight": "position_embd.weight"}[k]
        elif k.startswith("ln_f."):
            name = "output_norm." + k.split(".")[1]
        else:
            _, layer, rest = k.split(".", 2)
            module, param = rest.rsplit(".", 1)
            name = f"blk.{layer}.{HF_TO_GGUF[module]}.{param}"
        t[name] = a
    return t


GG = {"token_embd.weight": "wte.weight", "position_embd.weight": "wpe.weight"}
GGUF_TO_HF = {v: k for k, v in HF_TO_GGUF.items()}


def hf_state(tensors):
    """A transformers state dict from GGUF-named f32 arrays."""
    s = {}
    for name, a in tensors.items():
        if name == "output.weight":
            continue
        if name in GG:
            k = GG[name]
        elif name.startswith("output_norm."):
            k = "ln_f." + name.split(".")[1]
        else:
            _, layer, module, param = name.split(".")
            k = f"h.{layer}.{GGUF_TO_HF[module]}.{param}"
        if k.endswith(CONV1D):
            a = a.T
        s["transformer." + k] = torch.tensor(np.ascontiguousarray(a))
    s["lm_head.weight"] = s["transformer.wte.weight"]
    return s


def write_gguf(path, tensors, qtype, with_output):
    w = gguf.GGUFWriter(path, "gpt2")
    w.add_name("tiny-gpt2")
    w.add_block_count(config.n_layer)
    w.add_context_length(config.n_positions)
    w.add_embedding_length(config.n_embd)
    w.add_feed_forward_length(4 * config.n_embd)
    w.add_head_count(config.n_head)
    w.add_layer_norm_eps(config.layer_norm_epsilon)
    w.add_file_type({None: 0, "f16": 1, "q8_0": 7}[qtype])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    w.add_token_list(tokens)
    w.add_token_types([3 if t == "<|endoftext|>" else 1 for t in tokens])
    w.add_token_merges(merges)
    w.add_bos_token_id(eot)
    w.add_eos_token_id(eot)
    stored = {}
    items = list(tensors.items()) + ([("output.weight", tensors["token_embd.weight"])] if with_output else [])
    for name, a in items:
        if a.ndim == 2 and qtype == "f16":
            w.add_tensor(name, a.astype(np.float16))
            stored[name] = a.astype(np.float16).astype(np.float32)
        elif a.ndim == 2 and qtype == "q8_0":
            q = gguf.quants.quantize(a, gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            stored[name] = gguf.quants.dequantize(q, gguf.GGMLQuantizationType.Q8_0).astype(np.float32)
        else:
            w.add_tensor(name, a)
            stored[name] = a
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return stored


expected_logits = {}
base = gguf_tensors()
for qtype, with_output in [(None, False), ("f16", False), ("q8_0", True)]:
    label = qtype or "f32"
    stored = write_gguf(os.path.join(out, f"tiny-gpt2-{label}.gguf"), base, qtype, with_output)
    if with_output:
        assert np.array_equal(stored["output.weight"], stored["token_embd.weight"])
    weights = hf_state(stored)
    if qtype is None:
        for k, v in weights.items():
            assert torch.equal(v, state[k]), k
    for i, l in enumerate(logits_of(weights)):
        expected_logits[f"{label}.{i}"] = l
save_file(expected_logits, os.path.join(out, "expected_logits.safetensors"))

# Greedy continuations, one prompt at a time; the best logit must beat the second by a margin
# (a tie could go either way in another implementation).
greedy = []
for prompt in [ids[0], ids[1][:6], ids[2][:5], [eot] + ids[3][:4]]:
    with torch.no_grad():
        g = model.generate(torch.tensor([prompt]), do_sample=False, max_new_tokens=8, eos_token_id=eot, pad_token_id=eot,
                           output_scores=True, return_dict_in_generate=True)
    new = g.sequences[0, len(prompt):].tolist()
    for s in g.scores:
        top = torch.topk(s[0], 2).values
        assert top[0] - top[1] > 1e-3, (prompt, top)
    greedy.append({"prompt": prompt, "new": new})

# NLL per text as llm-tst-code's eval_model_loss counts it: no token prepended, the first token
# context only, natural log.
nll = []
with torch.no_grad():
    for s in ids:
        t = torch.tensor([s])
        logits = model(t).logits[0, :-1]
        loss = torch.nn.functional.cross_entropy(logits, t[0, 1:], reduction="sum")
        nll.append({"nll": loss.item(), "tokens": len(s) - 1})

with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
    json.dump({
        "made_by": "tests/py/make_tiny_gpt2.py",
        "versions": {p: version(p).split("+")[0] for p in ["torch", "transformers", "tokenizers", "tiktoken", "gguf"]},
        "texts": TEXTS,
        "ids": ids,
        "batch": BATCH,
        "greedy": greedy,
        "nll": nll,
    }, f, ensure_ascii=False, indent=1)
print("wrote", out)
