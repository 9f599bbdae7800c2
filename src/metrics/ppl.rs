//! Fluency under the local causal LM (`models::lm_score`):
//! - `g-ppl`: an output's perplexity under a general LM (SmolLM2 by default), exp(mean token
//!   NLL), natural log; the detail keeps `nll` and `tokens` so that a corpus PPL can be
//!   exp(sum NLL / sum tokens).
//! - `nll-app` (LMStyle's NLL appropriateness): 100 / mean token NLL of the output as the reply
//!   to its item's dialogue context (the chat template with the context as the user turn; only
//!   the reply's tokens are scored). Higher is better. Items without a context are undefined.
//!
//! - Pooling ([`PplPool`]): a corpus PPL from per-output ones, `token` (exp of the mean token NLL
//!   over all outputs, METHODS.md's PPL) or `sentence-mean` (the mean of the outputs' PPLs).
//!
//! t-PPL = sqrt(d-PPL * g-PPL) (METHODS.md section 3) is combined in the result table.

use crate::models::lm_score::{Nll, TextLm};
use crate::models::tokenizer::ChatMessage;
use crate::score::{Scored, Scorer, Target};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// How per-output perplexities become one number for a system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PplPool {
    /// exp(sum NLL / sum tokens) over all outputs: every scored token counts once (METHODS.md;
    /// KenLM's corpus perplexity; TSTBench's d-PPL up to its token count, see the README).
    #[default]
    Token,
    /// The arithmetic mean of the outputs' perplexities: every output counts once.
    SentenceMean,
}

/// One output's perplexity with the NLL (natural log, summed over its tokens) and the number of
/// tokens behind it, when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputPpl {
    pub ppl: f64,
    pub nll_tokens: Option<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoolError {
    #[error("unknown PPL pooling {0:?} (token or sentence-mean)")]
    Unknown(String),
    #[error("token pooling needs each output's NLL and token count; {0} output(s) lack them")]
    NoTokens(usize),
}

impl PplPool {
    pub const NAMES: [&'static str; 2] = ["token", "sentence-mean"];

    pub fn parse(name: &str) -> Result<Self, PoolError> {
        match name {
            "token" => Ok(PplPool::Token),
            "sentence-mean" => Ok(PplPool::SentenceMean),
            _ => Err(PoolError::Unknown(name.to_owned())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PplPool::Token => "token",
            PplPool::SentenceMean => "sentence-mean",
        }
    }

    /// What it computes, in words.
    pub fn about(self) -> &'static str {
        match self {
            PplPool::Token => "exp(sum NLL / sum tokens) over the outputs",
            PplPool::SentenceMean => "mean of the outputs' perplexities",
        }
    }

    /// The pooled perplexity (`None` without outputs).
    pub fn pool(self, outs: &[OutputPpl]) -> Result<Option<f64>, PoolError> {
        if outs.is_empty() {
            return Ok(None);
        }
        match self {
            PplPool::SentenceMean => Ok(Some(outs.iter().map(|o| o.ppl).sum::<f64>() / outs.len() as f64)),
            PplPool::Token => {
                let missing = outs.iter().filter(|o| o.nll_tokens.is_none()).count();
                if missing > 0 {
                    return Err(PoolError::NoTokens(missing));
                }
                let (nll, tokens) = outs.iter().filter_map(|o| o.nll_tokens).fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
                Ok((tokens > 0.0).then(|| (nll / tokens).exp()))
            }
        }
    }
}

fn detail(n: &Option<Nll>) -> String {
    match n {
        Some(n) => json!({"nll": n.nll, "tokens": n.tokens}).to_string(),
        None => json!({"reason": "longer than the model's context"}).to_string(),
    }
}

/// `g-ppl`.
pub struct GpplScorer {
    lm: Arc<TextLm>,
    config: Value,
}

impl GpplScorer {
    pub fn new(lm: Arc<TextLm>) -> anyhow::Result<GpplScorer> {
        let mut config = lm.config()?;
        config["value"] = json!("exp(mean NLL over the text's tokens)");
        Ok(GpplScorer { lm, config })
    }
}

impl Scorer for GpplScorer {
    fn metric(&self) -> String {
        "g-ppl".into()
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(self.score_detailed(batch)?.into_iter().map(|s| s.value).collect())
    }

    fn score_detailed(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Scored>> {
        let texts: Vec<&str> = batch.iter().map(|t| t.text.as_str()).collect();
        let nll = self.lm.nll_texts(&texts)?;
        Ok(nll.iter().map(|n| Scored { value: n.and_then(|n| n.ppl()), detail: Some(detail(n)) }).collect())
    }

    fn batch_size(&self) -> usize {
        128
    }
}

/// `nll-app`: needs the items' dialogue contexts (item id -> context).
pub struct NllAppScorer {
    lm: Arc<TextLm>,
    contexts: HashMap<i64, String>,
    config: Value,
}

impl NllAppScorer {
    pub fn new(lm: Arc<TextLm>, contexts: HashMap<i64, String>) -> anyhow::Result<NllAppScorer> {
        let mut config = lm.config()?;
        config["text"] = json!("the output as the assistant's reply to the item's context (user turn, chat template)");
        config["chat_template"] = json!(lm.generator().tokenizer().chat_source());
        config["value"] = json!("100 / mean NLL over the reply's tokens");
        Ok(NllAppScorer { lm, contexts, config })
    }
}

impl Scorer for NllAppScorer {
    fn metric(&self) -> String {
        "nll-app".into()
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        Ok(self.score_detailed(batch)?.into_iter().map(|s| s.value).collect())
    }

    fn score_detailed(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Scored>> {
        let tk = self.lm.generator().tokenizer();
        let mut out = vec![Scored { value: None, detail: Some(json!({"reason": "the item has no context"}).to_string()) }; batch.len()];
        let mut which = Vec::new();
        let mut prompts = Vec::new();
        let mut texts = Vec::new();
        for (i, t) in batch.iter().enumerate() {
            if let Some(c) = self.contexts.get(&t.item_id).filter(|c| !c.trim().is_empty()) {
                which.push(i);
                prompts.push(tk.encode_chat(&[ChatMessage::user(c)])?);
                texts.push(t.text.as_str());
            }
        }
        let nll = self.lm.nll_after(&prompts, &texts)?;
        for (i, n) in which.into_iter().zip(&nll) {
            out[i] = Scored { value: n.and_then(|n| n.mean()).filter(|m| *m > 0.0).map(|m| 100.0 / m), detail: Some(detail(n)) };
        }
        Ok(out)
    }

    fn batch_size(&self) -> usize {
        64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_by_hand() {
        // Two outputs: NLL 2 over 1 token (PPL e^2) and 3 over 3 tokens (PPL e).
        let e = std::f64::consts::E;
        let outs = [OutputPpl { ppl: e * e, nll_tokens: Some((2.0, 1.0)) }, OutputPpl { ppl: e, nll_tokens: Some((3.0, 3.0)) }];
        assert_eq!(PplPool::Token.pool(&outs).unwrap(), Some((5.0f64 / 4.0).exp()));
        assert_eq!(PplPool::SentenceMean.pool(&outs).unwrap(), Some((e * e + e) / 2.0));
        let bare = [OutputPpl { ppl: 3.0, nll_tokens: None }];
        assert_eq!(PplPool::Token.pool(&bare), Err(PoolError::NoTokens(1)));
        assert_eq!(PplPool::SentenceMean.pool(&bare).unwrap(), Some(3.0));
        assert_eq!(PplPool::Token.pool(&[]).unwrap(), None);
        for n in PplPool::NAMES {
            assert_eq!(PplPool::parse(n).unwrap().name(), n);
        }
    }
}
