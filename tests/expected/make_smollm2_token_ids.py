"""Reference token ids for SmolLM2-135M-Instruct (GGUF), for tests/it/models_real.rs.

Builds the tokenizer in Python from the GGUF metadata, independently of tstlab: the `gguf`
package reads tokenizer.ggml.tokens/merges/token_type, and the `tokenizers` package assembles
the byte-level BPE the way Hugging Face's own tokenizer.json of SmolLM2 describes it (digits
split one by one, byte-level pre-tokenizer without prefix space, control tokens special).
When `transformers` is installed, its GGUF tokenizer converter (another independent
implementation) must agree on the texts without digits (it knows no `smollm` digit rule).

    pip install gguf tokenizers [transformers]
    python3 tests/expected/make_smollm2_token_ids.py PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf

Writes tests/expected/smollm2_token_ids.json.
"""
import json
import os
import sys

from gguf import GGUFReader
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

path = sys.argv[1]
r = GGUFReader(path)
tokens = r.fields["tokenizer.ggml.tokens"].contents()
merges = r.fields["tokenizer.ggml.merges"].contents()
types = r.fields["tokenizer.ggml.token_type"].contents()
assert r.fields["tokenizer.ggml.model"].contents() == "gpt2"
assert r.fields["tokenizer.ggml.pre"].contents() == "smollm"

vocab = {t: i for i, t in enumerate(tokens)}
bpe = models.BPE(vocab=vocab, merges=[tuple(m.split(" ", 1)) for m in merges])
tk = Tokenizer(bpe)
tk.pre_tokenizer = pre_tokenizers.Sequence(
    [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
)
tk.decoder = decoders.ByteLevel()
tk.add_special_tokens([AddedToken(t, special=True) for t, ty in zip(tokens, types) if ty == 3])

system = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
instruction = "Rewrite the following sentence, maintain the content and change the sentiment of the sentence from negative to positive:"
sentence = "the pasta was bland and the sauce tasted like it came from a can ."
chat = f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{instruction} {sentence}<|im_end|>\n<|im_start|>assistant\n"
texts = {
    "chat_prompt": chat,
    "digits": "I waited 45 minutes, paid $12.50 and left at 9:30pm.",
    "unicode": "Caf\u00e9 cr\u00e8me \u2014 tr\u00e8s bien! \U0001F600 na\u00efve",
    "spaces": "two  spaces,\ttab and\nnew line   end ",
    "contractions": "I didn't like it, they're rude and we'll never return.",
}
out = {"model": os.path.basename(path), "texts": {k: {"text": v, "ids": tk.encode(v).ids} for k, v in texts.items()}}

try:
    from transformers import AutoTokenizer

    ref = AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(path)), gguf_file=os.path.basename(path))
    for k, v in texts.items():
        if any(c.isdigit() for c in v):
            continue
        theirs = ref(v, add_special_tokens=False)["input_ids"]
        assert theirs == out["texts"][k]["ids"], (k, theirs, out["texts"][k]["ids"])
    out["checked_with"] = "transformers GGUF converter (texts without digits)"
except Exception as e:  # transformers absent, or without torch it cannot read GGUF files
    out["checked_with"] = "none (transformers GGUF converter unavailable: %s)" % type(e).__name__

dest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "smollm2_token_ids.json")
with open(dest, "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(dest, out["checked_with"], len(out["texts"]["chat_prompt"]["ids"]), "chat prompt ids")
