//! Tokenizers for local models and chat prompt rendering.
//!
//! A GGUF file without a `tokenizer.json` beside it carries its tokenizer in the metadata:
//! `tokenizer.ggml.model = "gpt2"` is a byte-level BPE built here from `tokenizer.ggml.tokens`
//! and `tokenizer.ggml.merges` with the tokenizers crate (`BPE::builder().vocab_and_merges`),
//! a byte-level pre-tokenizer without prefix space (after the split rule named by
//! `tokenizer.ggml.pre`, e.g. single digits for `smollm`, as llama.cpp does) and a byte-level
//! decoder. Control tokens (`token_type` 3), user-defined tokens (4) and every `<|...|>` token
//! are added as special tokens, so the rendered chat prompt maps `<|im_start|>` to its id.
//! Beginning/end ids come from `tokenizer.ggml.{bos,eos,eot}_token_id`.
//!
//! Chat prompts are rendered by the model's own chat template (`chat_template.rs`): GGUF
//! `tokenizer.chat_template`, or a Hugging Face folder's `chat_template.jinja` or
//! `tokenizer_config.json` `chat_template`; the built-in ChatML when there is none.
//! [`Tokenizer::chat_source`] says which was used.

use super::error::{ModelError, Result};
pub use super::chat_template::ChatMessage;
use super::chat_template::{ChatTemplate, ChatTemplateError, Origin};
use super::gguf::GgufFile;
use std::path::Path;
use tokenizers::models::bpe::{BPE, Merges, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior};

/// A tokenizer with its special ids and chat template.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    bos: Option<u32>,
    eos: Option<u32>,
    stop: Vec<u32>,
    chat: ChatTemplate,
    add_bos: bool,
    vocab_size: usize,
}

fn tok_err(e: impl std::fmt::Display) -> ModelError {
    ModelError::Tokenizer(e.to_string())
}

// Pre-tokenizer regexes of llama.cpp (`llama-vocab.cpp`) for the byte-level BPE families.
const LLAMA3_RE: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_RE: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

fn pre_tokenizer(pre: &str) -> Result<(PreTokenizerWrapper, Option<String>)> {
    let split = |re: &str| -> Result<PreTokenizerWrapper> {
        Ok(Split::new(SplitPattern::Regex(re.to_owned()), SplitDelimiterBehavior::Isolated, false)
            .map_err(tok_err)?
            .into())
    };
    // The byte-level pre-tokenizer with its own GPT-2 regex (as in Hugging Face's files), or
    // after an explicit split.
    let gpt2 = ByteLevel::new(false, true, true);
    let bytes = ByteLevel::new(false, true, false);
    Ok(match pre {
        // GPT-2 split with every digit on its own (SmolLM, StarCoder).
        "smollm" | "starcoder" | "refact" | "codeshell" | "command-r" | "exaone" | "minerva" => (
            Sequence::new(vec![Digits::new(true).into(), gpt2.into()]).into(),
            None,
        ),
        "gpt2" | "gpt-2" | "default" | "" => (gpt2.into(), None),
        "llama-bpe" | "llama3" | "falcon3" => (Sequence::new(vec![split(LLAMA3_RE)?, bytes.into()]).into(), None),
        "qwen2" | "deepseek-r1-qwen" => (Sequence::new(vec![split(QWEN2_RE)?, bytes.into()]).into(), None),
        other => (
            gpt2.into(),
            Some(format!("unknown pre-tokenizer `{other}`, using the GPT-2 split")),
        ),
    })
}

impl Tokenizer {
    /// Builds the tokenizer from GGUF metadata.
    pub fn from_gguf(g: &GgufFile) -> Result<Tokenizer> {
        let model = g.string("tokenizer.ggml.model").map_err(tok_err)?;
        if model != "gpt2" {
            return Err(ModelError::Tokenizer(format!(
                "{}: tokenizer model `{model}` is not supported from GGUF metadata (only byte-level BPE, `gpt2`); put a tokenizer.json beside the file",
                g.path().display()
            )));
        }
        let tokens = g.strings("tokenizer.ggml.tokens").map_err(tok_err)?;
        let merges = g.strings("tokenizer.ggml.merges").map_err(tok_err)?;
        let types = g.ints("tokenizer.ggml.token_type").unwrap_or_default();
        let pre = g.string("tokenizer.ggml.pre").unwrap_or_default();
        let vocab: Vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let merges: Merges = merges
            .iter()
            .map(|m| {
                m.split_once(' ')
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
                    .ok_or_else(|| ModelError::Tokenizer(format!("bad merge `{m}`")))
            })
            .collect::<Result<_>>()?;
        let mut inner = byte_level_bpe(vocab, merges, &pre)?;
        let mut special = Vec::new();
        let mut added = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let ty = types.get(i).copied().unwrap_or(1);
            if ty == 3 || marked_special(t) {
                special.push(AddedToken::from(t.clone(), true));
            } else if ty == 4 {
                added.push(AddedToken::from(t.clone(), false));
            }
        }
        inner.add_special_tokens(&special);
        inner.add_tokens(&added);
        let id = |k: &str| g.opt_uint(k).map(|v| v as u32).filter(|&v| (v as usize) < tokens.len());
        let (bos, eos, eot) = (id("tokenizer.ggml.bos_token_id"), id("tokenizer.ggml.eos_token_id"), id("tokenizer.ggml.eot_token_id"));
        let add_bos = matches!(g.get("tokenizer.ggml.add_bos_token"), Some(candle_core::quantized::gguf_file::Value::Bool(true)));
        let text = |id: Option<u32>| id.map(|i| tokens[i as usize].clone()).unwrap_or_default();
        let chat = match g.string("tokenizer.chat_template") {
            Ok(t) => {
                let place = format!("{} (GGUF metadata `tokenizer.chat_template`)", g.path().display());
                ChatTemplate::from_jinja(&t, Origin { kind: "GGUF".into(), place }, &text(bos), &text(eos))?
            }
            Err(_) => ChatTemplate::builtin("no chat template in GGUF"),
        };
        let mut tk = Tokenizer::assemble(inner, bos, eos, add_bos, chat);
        if let Some(e) = eot
            && !tk.stop.contains(&e)
        {
            tk.stop.push(e);
        }
        tk.vocab_size = tokens.len();
        Ok(tk)
    }

    /// Loads `tokenizer.json` of a Hugging Face folder (without one, GPT-2's `vocab.json` and
    /// `merges.txt`: [`from_vocab_merges`]); ids and template from `tokenizer_config.json`,
    /// `config.json` and `generation_config.json` when present.
    pub fn from_hf_folder(dir: &Path) -> Result<Tokenizer> {
        let tok_path = dir.join("tokenizer.json");
        let inner = if !tok_path.exists() && dir.join("vocab.json").exists() && dir.join("merges.txt").exists() {
            from_vocab_merges(dir)?
        } else {
            let bytes = crate::input::read(&tok_path).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
            tokenizers::Tokenizer::from_bytes(&bytes)
                .map_err(|e| ModelError::Tokenizer(format!("{}: not a valid tokenizer.json: {e}", tok_path.display())))?
        };
        let read = |name: &str| -> Option<serde_json::Value> {
            let text = crate::input::read_to_string(&dir.join(name)).ok()?;
            serde_json::from_str(&text).ok()
        };
        let tcfg = read("tokenizer_config.json");
        let cfg = read("config.json");
        let gen_cfg = read("generation_config.json");
        let token_id = |v: &serde_json::Value| -> Vec<u32> {
            match v {
                serde_json::Value::Number(n) => n.as_u64().map(|x| vec![x as u32]).unwrap_or_default(),
                serde_json::Value::Array(a) => a.iter().filter_map(|x| x.as_u64().map(|x| x as u32)).collect(),
                _ => vec![],
            }
        };
        let named = |key: &str| -> Option<u32> {
            let v = tcfg.as_ref()?.get(key)?;
            let s = v.as_str().or_else(|| v.get("content").and_then(|c| c.as_str()))?;
            inner.token_to_id(s)
        };
        let mut eos_ids: Vec<u32> = Vec::new();
        for c in [&gen_cfg, &cfg].into_iter().flatten() {
            if let Some(v) = c.get("eos_token_id") {
                eos_ids.extend(token_id(v));
            }
        }
        eos_ids.extend(named("eos_token"));
        let bos = cfg
            .as_ref()
            .and_then(|c| c.get("bos_token_id"))
            .and_then(|v| token_id(v).first().copied())
            .or_else(|| named("bos_token"));
        let token_text = |key: &str| -> String {
            let Some(v) = tcfg.as_ref().and_then(|t| t.get(key)) else { return String::new() };
            v.as_str().or_else(|| v.get("content").and_then(|c| c.as_str())).unwrap_or_default().to_owned()
        };
        let chat = hf_chat_template(dir, tcfg.as_ref(), &token_text("bos_token"), &token_text("eos_token"))?;
        let add_bos = tcfg.as_ref().and_then(|t| t.get("add_bos_token")).and_then(|v| v.as_bool()).unwrap_or(false);
        let vocab_size = inner.get_vocab_size(true);
        let mut tk = Tokenizer::assemble(inner, bos, eos_ids.first().copied(), add_bos, chat);
        for e in eos_ids {
            if !tk.stop.contains(&e) {
                tk.stop.push(e);
            }
        }
        tk.vocab_size = vocab_size;
        Ok(tk)
    }

    fn assemble(inner: tokenizers::Tokenizer, bos: Option<u32>, eos: Option<u32>, add_bos: bool, chat: ChatTemplate) -> Tokenizer {
        let mut stop: Vec<u32> = eos.into_iter().collect();
        for name in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>"] {
            if let Some(id) = inner.token_to_id(name)
                && !stop.contains(&id)
            {
                stop.push(id);
            }
        }
        Tokenizer { inner, bos, eos, stop, chat, add_bos, vocab_size: 0 }
    }

    /// Token ids of `text`; special tokens written in the text (`<|im_start|>`) map to their ids.
    /// A BOS is prepended only when the model asks for it (`add_bos_token`).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self.inner.encode(text, false).map_err(tok_err)?;
        let mut ids = Vec::with_capacity(enc.len() + 1);
        if self.add_bos
            && let Some(b) = self.bos
            && enc.get_ids().first() != Some(&b)
        {
            ids.push(b);
        }
        ids.extend_from_slice(enc.get_ids());
        Ok(ids)
    }

    /// Text of `ids` without special tokens.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.inner.decode(ids, true).map_err(tok_err)
    }

    /// Text of `ids` with special tokens written out.
    pub fn decode_with_special(&self, ids: &[u32]) -> Result<String> {
        self.inner.decode(ids, false).map_err(tok_err)
    }

    /// The rendered chat prompt (generation prompt included).
    pub fn render_chat(&self, messages: &[ChatMessage]) -> Result<String> {
        Ok(self.chat.render(messages, true)?)
    }

    /// Token ids of the chat prompt.
    pub fn encode_chat(&self, messages: &[ChatMessage]) -> Result<Vec<u32>> {
        self.encode(&self.render_chat(messages)?)
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }
    pub fn bos_id(&self) -> Option<u32> {
        self.bos
    }
    /// Whether the model's tokenizer prepends BOS to a text (`add_bos_token`).
    pub fn adds_bos(&self) -> bool {
        self.add_bos
    }
    pub fn eos_id(&self) -> Option<u32> {
        self.eos
    }
    /// Ids that end generation (eos, eot, `<|im_end|>`, ...).
    pub fn stop_ids(&self) -> &[u32] {
        &self.stop
    }
    pub fn chat_template(&self) -> &ChatTemplate {
        &self.chat
    }
    /// Replaces the chat template (e.g. [`ChatTemplate::none`] for GPT-2).
    pub fn set_chat_template(&mut self, chat: ChatTemplate) {
        self.chat = chat;
    }
    /// Which chat template is used and where it came from ([`ChatTemplate::label`]).
    pub fn chat_source(&self) -> &str {
        self.chat.label()
    }
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }
    /// The underlying tokenizers-crate tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }
}

/// A byte-level BPE with the pre-tokenizer named by `pre` (llama.cpp's names) and the byte-level
/// decoder.
fn byte_level_bpe(vocab: Vocab, merges: Merges, pre: &str) -> Result<tokenizers::Tokenizer> {
    let bpe = BPE::builder().vocab_and_merges(vocab, merges).build().map_err(tok_err)?;
    let mut inner = tokenizers::Tokenizer::new(bpe);
    let (pre, _note) = pre_tokenizer(pre)?;
    inner.with_pre_tokenizer(Some(pre));
    inner.with_decoder(Some(ByteLevel::default()));
    Ok(inner)
}

/// Tokens written `<|...|>` are special (`<|endoftext|>`, `<|im_start|>`).
fn marked_special(t: &str) -> bool {
    t.starts_with("<|") && t.ends_with("|>") && t.len() > 4
}

/// GPT-2's files for transformers' slow `GPT2Tokenizer`: `vocab.json` (token -> id),
/// `merges.txt` (a `#version` line, then one merge a line) and, when present,
/// `added_tokens.json` (token -> id, added as special tokens), read as that tokenizer reads them:
/// byte-level BPE with GPT-2's split, no prefix space; `<|...|>` tokens are special.
pub fn from_vocab_merges(dir: &Path) -> Result<tokenizers::Tokenizer> {
    let json_map = |name: &str| -> Result<Vocab> {
        let path = dir.join(name);
        let text = crate::input::read_to_string(&path)?;
        serde_json::from_str(&text).map_err(|e| ModelError::Tokenizer(format!("{}: not a JSON map of tokens to ids: {e}", path.display())))
    };
    let vocab = json_map("vocab.json")?;
    let path = dir.join("merges.txt");
    let text = crate::input::read_to_string(&path)?;
    let mut merges: Merges = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || (i == 0 && line.starts_with("#version")) {
            continue;
        }
        let (a, b) = line.split_once(' ').ok_or_else(|| {
            ModelError::Tokenizer(format!("{}:{}: a merge is two tokens separated by a space: `{}`", path.display(), i + 1, crate::printable::Safe(line)))
        })?;
        merges.push((a.to_owned(), b.to_owned()));
    }
    let mut special: Vec<AddedToken> = vocab.keys().filter(|t| marked_special(t)).map(|t| AddedToken::from(t.clone(), true)).collect();
    if dir.join("added_tokens.json").exists() {
        let mut added: Vec<(String, u32)> = json_map("added_tokens.json")?.into_iter().collect();
        added.sort_by_key(|(_, id)| *id);
        special.extend(added.into_iter().map(|(t, _)| AddedToken::from(t, true)));
    }
    let mut inner = byte_level_bpe(vocab, merges, "gpt2")?;
    inner.add_special_tokens(&special);
    Ok(inner)
}

/// The chat template of a Hugging Face folder: `chat_template.jinja` (where transformers saves it
/// since 4.43), else `chat_template` in `tokenizer_config.json`, a string or a list of named
/// templates of which the one named `default` is used; the built-in ChatML when there is none.
fn hf_chat_template(dir: &Path, tcfg: Option<&serde_json::Value>, bos: &str, eos: &str) -> Result<ChatTemplate> {
    let file = dir.join("chat_template.jinja");
    if file.is_file() {
        let text = crate::input::read_to_string(&file)?;
        let origin = Origin { kind: "chat_template.jinja".into(), place: file.display().to_string() };
        return Ok(ChatTemplate::from_jinja(&text, origin, bos, eos)?);
    }
    let config = dir.join("tokenizer_config.json");
    let place = format!("{} (`chat_template`)", config.display());
    let origin = Origin { kind: "tokenizer_config.json".into(), place: place.clone() };
    let invalid = |detail: &str| ChatTemplateError::Invalid { origin: place.clone(), detail: detail.to_owned() };
    let text = match tcfg.and_then(|t| t.get("chat_template")) {
        None | Some(serde_json::Value::Null) => return Ok(ChatTemplate::builtin("no chat template in tokenizer_config.json")),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(named)) => named
            .iter()
            .find(|x| x.get("name").and_then(|n| n.as_str()) == Some("default"))
            .and_then(|x| x.get("template")?.as_str().map(str::to_owned))
            .ok_or_else(|| invalid("a list of named chat templates without one named `default`"))?,
        Some(_) => return Err(invalid("not a string nor a list of named templates").into()),
    };
    Ok(ChatTemplate::from_jinja(&text, origin, bos, eos)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(v: serde_json::Value) -> Option<serde_json::Value> {
        Some(v)
    }

    #[test]
    fn hf_folders_give_their_own_template_or_chatml() {
        let dir = tempfile::tempdir().unwrap();
        let user = [ChatMessage::user("Hi")];
        // No template: ChatML, said so.
        let t = hf_chat_template(dir.path(), None, "", "").unwrap();
        assert_eq!(t.label(), "built-in ChatML (no chat template in tokenizer_config.json)");
        assert_eq!(t.render(&user, true).unwrap(), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        // A named list: the `default` one, with the BOS text.
        let cfg = config(serde_json::json!({"chat_template": [
            {"name": "tool_use", "template": "tools"},
            {"name": "default", "template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content.strip() }}{% endfor %}"}
        ]}));
        let t = hf_chat_template(dir.path(), cfg.as_ref(), "<s>", "</s>").unwrap();
        assert_eq!(t.label(), "Jinja from the tokenizer_config.json chat template");
        assert_eq!(t.render(&[ChatMessage::user(" Hi ")], true).unwrap(), "<s>[user] Hi");
        // Named templates without a default, or a template that does not compile: errors naming the file.
        let cfg = config(serde_json::json!({"chat_template": [{"name": "tool_use", "template": "tools"}]}));
        let e = hf_chat_template(dir.path(), cfg.as_ref(), "", "").unwrap_err().to_string();
        assert!(e.contains("tokenizer_config.json (`chat_template`): a list of named chat templates without one named `default`"), "{e}");
        let cfg = config(serde_json::json!({"chat_template": "{% if %}"}));
        let e = hf_chat_template(dir.path(), cfg.as_ref(), "", "").unwrap_err().to_string();
        assert!(e.contains("tokenizer_config.json (`chat_template`): the chat template does not compile"), "{e}");
        // chat_template.jinja beside it wins, as in transformers.
        std::fs::write(dir.path().join("chat_template.jinja"), "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}").unwrap();
        let t = hf_chat_template(dir.path(), cfg.as_ref(), "", "").unwrap();
        assert_eq!(t.label(), "Jinja from the chat_template.jinja chat template");
        assert_eq!(t.render(&user, true).unwrap(), "<user>Hi");
    }
}
