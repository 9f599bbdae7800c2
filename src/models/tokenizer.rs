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
//! Chat prompts: the ChatML shape (`<|im_start|>role\n...<|im_end|>\n`, generation prompt
//! `<|im_start|>assistant\n`, no extra BOS) is recognised in the model's `chat_template`,
//! including a default system message the template adds when the conversation has none
//! (SmolLM2 does). A model whose template is missing or not ChatML gets the built-in ChatML
//! without a default system message; [`Tokenizer::chat_source`] says which was used.

use super::{ModelError, Result};
use super::gguf::GgufFile;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tokenizers::models::bpe::{BPE, Merges, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: &str, content: &str) -> ChatMessage {
        ChatMessage { role: role.to_owned(), content: content.to_owned() }
    }
    pub fn user(content: &str) -> ChatMessage {
        ChatMessage::new("user", content)
    }
    pub fn system(content: &str) -> ChatMessage {
        ChatMessage::new("system", content)
    }
}

/// How chat messages become a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatTemplate {
    /// `<|im_start|>{role}\n{content}<|im_end|>\n` per message, then `<|im_start|>assistant\n`.
    ChatMl { default_system: Option<String> },
}

impl ChatTemplate {
    /// Recognises a Jinja chat template of the ChatML shape.
    pub fn recognise(jinja: &str) -> Option<ChatTemplate> {
        if !(jinja.contains("<|im_start|>") && jinja.contains("<|im_end|>") && jinja.contains("message['role']")
            || jinja.contains("message[\"role\"]"))
        {
            return None;
        }
        if !jinja.contains("<|im_start|>assistant") {
            return None;
        }
        let default_system = if jinja.contains("messages[0]['role'] != 'system'")
            || jinja.contains("messages[0][\"role\"] != \"system\"")
        {
            let start = jinja.find("<|im_start|>system")? + "<|im_start|>system".len();
            let rest = &jinja[start..];
            let rest = rest.strip_prefix('\n').or_else(|| rest.strip_prefix("\\n"))?;
            let end = rest.find("<|im_end|>")?;
            Some(rest[..end].replace("\\n", "\n"))
        } else {
            None
        };
        Some(ChatTemplate::ChatMl { default_system })
    }

    /// Renders messages; `add_generation_prompt` opens the assistant's turn.
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> String {
        let ChatTemplate::ChatMl { default_system } = self;
        let mut s = String::new();
        if let Some(sys) = default_system
            && messages.first().is_none_or(|m| m.role != "system")
        {
            s.push_str(&format!("<|im_start|>system\n{sys}<|im_end|>\n"));
        }
        for m in messages {
            s.push_str(&format!("<|im_start|>{}\n{}<|im_end|>\n", m.role, m.content));
        }
        if add_generation_prompt {
            s.push_str("<|im_start|>assistant\n");
        }
        s
    }
}

/// A tokenizer with its special ids and chat template.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    bos: Option<u32>,
    eos: Option<u32>,
    stop: Vec<u32>,
    chat: ChatTemplate,
    chat_source: String,
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
        "gpt2" | "default" | "" => (gpt2.into(), None),
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
        let bpe = BPE::builder().vocab_and_merges(vocab, merges).build().map_err(tok_err)?;
        let mut inner = tokenizers::Tokenizer::new(bpe);
        let (pre, _note) = pre_tokenizer(&pre)?;
        inner.with_pre_tokenizer(Some(pre));
        inner.with_decoder(Some(ByteLevel::default()));
        let mut special = Vec::new();
        let mut added = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let ty = types.get(i).copied().unwrap_or(1);
            if ty == 3 || (t.starts_with("<|") && t.ends_with("|>") && t.len() > 4) {
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
        let template = g.string("tokenizer.chat_template").ok();
        let mut tk = Tokenizer::assemble(inner, bos, eos, add_bos, template.as_deref(), "GGUF")?;
        if let Some(e) = eot
            && !tk.stop.contains(&e)
        {
            tk.stop.push(e);
        }
        tk.vocab_size = tokens.len();
        Ok(tk)
    }

    /// Loads `tokenizer.json` of a Hugging Face folder; ids and template from
    /// `tokenizer_config.json`, `config.json` and `generation_config.json` when present.
    pub fn from_hf_folder(dir: &Path) -> Result<Tokenizer> {
        let tok_path = dir.join("tokenizer.json");
        let bytes = crate::input::read(&tok_path).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let inner = tokenizers::Tokenizer::from_bytes(&bytes)
            .map_err(|e| ModelError::Tokenizer(format!("{}: not a valid tokenizer.json: {e}", tok_path.display())))?;
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
        let template = tcfg.as_ref().and_then(|t| t.get("chat_template")).and_then(|v| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) => a
                .iter()
                .find(|x| x.get("name").and_then(|n| n.as_str()) == Some("default"))
                .and_then(|x| x.get("template")?.as_str().map(str::to_owned)),
            _ => None,
        });
        let add_bos = tcfg.as_ref().and_then(|t| t.get("add_bos_token")).and_then(|v| v.as_bool()).unwrap_or(false);
        let vocab_size = inner.get_vocab_size(true);
        let mut tk = Tokenizer::assemble(inner, bos, eos_ids.first().copied(), add_bos, template.as_deref(), "tokenizer_config.json")?;
        for e in eos_ids {
            if !tk.stop.contains(&e) {
                tk.stop.push(e);
            }
        }
        tk.vocab_size = vocab_size;
        Ok(tk)
    }

    fn assemble(
        inner: tokenizers::Tokenizer,
        bos: Option<u32>,
        eos: Option<u32>,
        add_bos: bool,
        template: Option<&str>,
        origin: &str,
    ) -> Result<Tokenizer> {
        let (chat, chat_source) = match template.and_then(ChatTemplate::recognise) {
            Some(t) => (t, format!("ChatML from the {origin} chat template")),
            None if template.is_some() => (
                ChatTemplate::ChatMl { default_system: None },
                format!("built-in ChatML (the {origin} chat template is not ChatML)"),
            ),
            None => (ChatTemplate::ChatMl { default_system: None }, format!("built-in ChatML (no chat template in {origin})")),
        };
        let mut stop: Vec<u32> = eos.into_iter().collect();
        for name in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>"] {
            if let Some(id) = inner.token_to_id(name)
                && !stop.contains(&id)
            {
                stop.push(id);
            }
        }
        Ok(Tokenizer { inner, bos, eos, stop, chat, chat_source, add_bos, vocab_size: 0 })
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
    pub fn render_chat(&self, messages: &[ChatMessage]) -> String {
        self.chat.render(messages, true)
    }

    /// Token ids of the chat prompt.
    pub fn encode_chat(&self, messages: &[ChatMessage]) -> Result<Vec<u32>> {
        self.encode(&self.render_chat(messages))
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
    /// Where the chat template came from.
    pub fn chat_source(&self) -> &str {
        &self.chat_source
    }
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }
    /// The underlying tokenizers-crate tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }
}
