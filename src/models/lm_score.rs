//! Log-likelihood of texts under a causal LM, llama family or GPT-2 (g-PPL, NLL
//! appropriateness).
//!
//! [`token_logprobs`] runs whole sequences through the batched forward (packed tokens, padded
//! attention with per-row masks, explicit positions; `llama.rs`, `gpt2.rs`) on the dense weights
//! only ([`Path::Dense`]: never the quantized blocks that steps of a few tokens use in
//! generation), so a sequence gets the same values in any batch, alone or not. For each sequence it returns ln P(token_t | tokens_<t) for the
//! tokens from `first` on; logits are computed only at those positions, a chunk at a time.
//!
//! Text convention ([`TextLm`]): a text is tokenized as plain text (no chat template). GPT-2
//! gets no start token: the first text token is context only, as TSTBench
//! (`evaluator_gpt2.py`) and llm-tst-code (`eval_model_loss`) score it. Other models get one
//! start token that is context only, never scored:
//! - the model's BOS when its tokenizer adds one (`tokenizer.ggml.add_bos_token = true`, as
//!   llama.cpp does when it tokenizes the text);
//! - otherwise `<|endoftext|>` when the vocabulary has it: GPT-2-style families (SmolLM2,
//!   Qwen2) set `add_bos_token = false` and separate their pretraining documents with that
//!   token, so the text is scored as the start of a document. (SmolLM2-Instruct's declared BOS
//!   is `<|im_start|>`, a chat-turn opener: the wrong context for plain text.)
//! - otherwise none: the first text token is context only.
//!
//! Every text token after the start token is scored; no end token is appended. The PPL of a
//! text is exp(NLL / tokens) with natural logs; a corpus PPL is exp(sum NLL / sum tokens).

use super::generate::Generator;
use super::runtime::{CausalLm, Path as StepPath, Step};
use super::error::{ModelError, Result};
use candle_core::{D, Tensor};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// A sequence to score: every token from `first` (at least 1) on.
#[derive(Debug, Clone, Copy)]
pub struct Seq<'a> {
    pub tokens: &'a [u32],
    pub first: usize,
}

/// How sequences are grouped into forward passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batching {
    /// Sequences per pass at most.
    pub rows: usize,
    /// Padded slots (rows x longest sequence) per pass at most.
    pub slots: usize,
}

impl Default for Batching {
    fn default() -> Self {
        Batching { rows: 64, slots: 4096 }
    }
}

/// Logit rows computed at once (rows x vocabulary floats).
const LOGIT_CHUNK: usize = 256;

/// ln P of each scored token of each sequence, in input order (empty when nothing is scored).
pub fn token_logprobs(model: &dyn CausalLm, seqs: &[Seq<'_>], batching: Batching) -> Result<Vec<Vec<f32>>> {
    let ctx = model.context_length();
    for (i, s) in seqs.iter().enumerate() {
        if s.first == 0 {
            return Err(ModelError::Params(format!("sequence {i}: token 0 has no context to be scored from")));
        }
        if s.tokens.len() > ctx {
            return Err(ModelError::Params(format!(
                "sequence {i} has {} tokens, more than the context length {ctx}",
                s.tokens.len()
            )));
        }
    }
    let mut out = vec![Vec::new(); seqs.len()];
    // Longest first, so that each pass holds sequences of similar length.
    let mut order: Vec<usize> = (0..seqs.len()).filter(|&i| seqs[i].first < seqs[i].tokens.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].tokens.len()));
    let mut start = 0;
    while start < order.len() {
        let width = seqs[order[start]].tokens.len();
        let mut end = start + 1;
        while end < order.len() && end - start < batching.rows.max(1) && (end - start + 1) * width <= batching.slots {
            end += 1;
        }
        let group = &order[start..end];
        let lps = batch_logprobs(model, &group.iter().map(|&i| seqs[i]).collect::<Vec<_>>())?;
        for (&i, lp) in group.iter().zip(lps) {
            out[i] = lp;
        }
        start = end;
    }
    Ok(out)
}

/// One forward pass over `seqs` (each from position 0).
fn batch_logprobs(model: &dyn CausalLm, seqs: &[Seq<'_>]) -> Result<Vec<Vec<f32>>> {
    let width = seqs.iter().map(|s| s.tokens.len()).max().unwrap_or(0);
    let mut cache = model.new_cache(seqs.len(), width)?;
    let rows: Vec<(&[u32], usize)> = seqs.iter().map(|s| (s.tokens, 0)).collect();
    let step = Step::new(model, &cache, &rows)?.on(StepPath::Dense);
    let hidden = model.forward(&step, &mut cache)?;
    // Tokens are packed row after row: the hidden state at packed index k predicts token k+1.
    let mut at = Vec::new();
    let mut targets = Vec::new();
    let mut offset = 0;
    for s in seqs {
        for j in s.first..s.tokens.len() {
            at.push((offset + j - 1) as u32);
            targets.push(s.tokens[j]);
        }
        offset += s.tokens.len();
    }
    let dev = model.device();
    let mut flat = Vec::with_capacity(at.len());
    for (a, t) in at.chunks(LOGIT_CHUNK).zip(targets.chunks(LOGIT_CHUNK)) {
        let h = hidden.index_select(&Tensor::new(a, dev)?, 0)?;
        let logp = candle_nn::ops::log_softmax(&model.logits_on(&h, StepPath::Dense)?, D::Minus1)?;
        let picked = logp.gather(&Tensor::new(t, dev)?.unsqueeze(1)?, 1)?.squeeze(1)?;
        flat.extend(picked.to_vec1::<f32>()?);
    }
    let mut rest = flat.as_slice();
    Ok(seqs
        .iter()
        .map(|s| {
            let (mine, tail) = rest.split_at(s.tokens.len() - s.first);
            rest = tail;
            mine.to_vec()
        })
        .collect())
}

/// Negative log-likelihood (natural log) of a text and how many tokens it sums over.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Nll {
    pub nll: f64,
    pub tokens: usize,
}

impl Nll {
    fn of(logprobs: &[f32]) -> Nll {
        Nll { nll: -logprobs.iter().map(|&l| f64::from(l)).sum::<f64>(), tokens: logprobs.len() }
    }

    /// exp(NLL / tokens); `None` for no tokens.
    pub fn ppl(&self) -> Option<f64> {
        (self.tokens > 0).then(|| (self.nll / self.tokens as f64).exp())
    }

    /// Mean NLL per token; `None` for no tokens.
    pub fn mean(&self) -> Option<f64> {
        (self.tokens > 0).then(|| self.nll / self.tokens as f64)
    }
}

/// A causal LM scoring plain texts under the start-token convention of the module docs.
pub struct TextLm {
    generator: Arc<Generator>,
    start: Option<u32>,
    start_label: String,
    pub batching: Batching,
}

impl TextLm {
    pub fn load(path: &Path) -> Result<TextLm> {
        Ok(TextLm::new(Arc::new(Generator::load(path)?)))
    }

    pub fn new(generator: Arc<Generator>) -> TextLm {
        let tk = generator.tokenizer();
        let no_start = generator.arch().no_start_token;
        let (start, start_label) = match (tk.adds_bos(), tk.bos_id(), tk.token_to_id("<|endoftext|>")) {
            _ if no_start.is_some() => (None, format!("none ({})", no_start.unwrap_or_default())),
            (true, Some(b), _) => (Some(b), format!("bos ({}, add_bos_token)", label(&generator, b))),
            (_, _, Some(e)) => (Some(e), "<|endoftext|> (document separator; add_bos_token false)".to_owned()),
            _ => (None, "none (first token is context only)".to_owned()),
        };
        TextLm { generator, start, start_label, batching: Batching::default() }
    }

    /// The device it runs on, as reports name it ("cpu", "cuda:0", with the CPU kernels in use).
    pub fn device_label(&self) -> &str {
        &self.generator.info().device
    }

    pub fn generator(&self) -> &Arc<Generator> {
        &self.generator
    }

    /// The start token id and how it was chosen.
    pub fn start(&self) -> (Option<u32>, &str) {
        (self.start, &self.start_label)
    }

    /// Token ids of a text as it is (no special tokens added).
    pub fn text_tokens(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self.generator.tokenizer().inner().encode(text, false).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        Ok(enc.get_ids().to_vec())
    }

    /// The scored sequence of a text: start token (if any) then its tokens, scored from the
    /// second token on.
    fn sequence(&self, text: &str) -> Result<(Vec<u32>, usize)> {
        let mut ids: Vec<u32> = self.start.into_iter().collect();
        ids.extend(self.text_tokens(text)?);
        Ok((ids, 1))
    }

    /// NLL of each text (each distinct text computed once). A text longer than the context
    /// gets `None`.
    pub fn nll_texts(&self, texts: &[&str]) -> Result<Vec<Option<Nll>>> {
        let seqs = texts.iter().map(|t| self.sequence(t)).collect::<Result<Vec<_>>>()?;
        self.nll_sequences(&seqs)
    }

    /// NLL of each continuation after its context, both plain text: the joint text `context +
    /// continuation` is tokenized whole after the start token, and its tokens past the longest
    /// common prefix with the context's own tokens are scored (with GPT-2-style BPE and a
    /// continuation that starts with a space: exactly the continuation's tokens; a token merged
    /// across the boundary counts as the continuation's).
    pub fn nll_continuations(&self, pairs: &[(String, String)]) -> Result<Vec<Option<Nll>>> {
        let seqs = pairs
            .iter()
            .map(|(context, continuation)| {
                let (alone, _) = self.sequence(context)?;
                let (joint, _) = self.sequence(&format!("{context}{continuation}"))?;
                let first = alone.iter().zip(&joint).take_while(|(a, b)| a == b).count().max(1);
                Ok((joint, first))
            })
            .collect::<Result<Vec<_>>>()?;
        self.nll_sequences(&seqs)
    }

    fn nll_sequences(&self, seqs: &[(Vec<u32>, usize)]) -> Result<Vec<Option<Nll>>> {
        let ctx = self.generator.model().context_length();
        let mut slot: HashMap<&(Vec<u32>, usize), usize> = HashMap::new();
        let mut unique: Vec<Seq<'_>> = Vec::new();
        let idx: Vec<Option<usize>> = seqs
            .iter()
            .map(|s| {
                (s.0.len() <= ctx).then(|| {
                    *slot.entry(s).or_insert_with(|| {
                        unique.push(Seq { tokens: &s.0, first: s.1 });
                        unique.len() - 1
                    })
                })
            })
            .collect();
        let lps = token_logprobs(self.generator.model(), &unique, self.batching)?;
        Ok(idx.into_iter().map(|i| i.map(|i| Nll::of(&lps[i]))).collect())
    }

    /// What changes the values: for metric configurations.
    pub fn config(&self) -> Result<Value> {
        let info = self.generator.info();
        Ok(json!({
            "implementation": format!("tstlab lm_score 2 (f32 {} forward, dense weights at any batch, natural log)", self.generator.family()),
            "weights": self.generator.model().dense_precision(),
            "model": info.path.file_name().map(|n| n.to_string_lossy().into_owned()),
            "model_sha256": self.generator.sha256()?,
            "start_token": self.start_label,
            "end_token": false,
            "text": "plain text as stored (no chat template)",
        }))
    }
}

fn label(generator: &Generator, id: u32) -> String {
    generator.tokenizer().decode_with_special(&[id]).unwrap_or_else(|_| id.to_string())
}
