//! Fluency under the local causal LM (`models::lm_score`):
//! - `g-ppl`: an output's perplexity under a general LM (SmolLM2 by default), exp(mean token
//!   NLL), natural log; the detail keeps `nll` and `tokens` so that a corpus PPL can be
//!   exp(sum NLL / sum tokens).
//! - `nll-app` (LMStyle's NLL appropriateness): 100 / mean token NLL of the output as the
//!   response in LMStyle's format, `###Speaker: {context} ###Response: {output}` as plain text
//!   ([`dialogue`], `TextLm::nll_continuations`: only the response's tokens are scored). Higher
//!   is better. Items without a context, and empty outputs, are undefined.
//!
//! Through a server (`endpoint::Client`), `g-ppl` sends each output alone to `/completions` with
//! `echo` and `logprobs` and sums the log-probabilities the server gives the prompt's tokens: the
//! server's own start convention (its BOS when its tokenizer adds one); the first token has none
//! and is not scored. Servers without prompt log-probabilities make the metric fail with a clear
//! message (checked once when the scorer is built).
//!
//! t-PPL = sqrt(d-PPL * g-PPL) (docs/METHODS.md, PPL) is `metrics::joint::t_ppl`, shown in the
//! result table; its PPL column is d-PPL when scored, else g-PPL.

use crate::endpoint::Client;
use crate::models::lm_score::{Nll, TextLm};
use super::scorer::{Scored, Scorer, Target};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

fn detail(n: &Option<Nll>) -> String {
    match n {
        Some(n) => json!({"nll": n.nll, "tokens": n.tokens}).to_string(),
        None => json!({"reason": "longer than the model's context"}).to_string(),
    }
}

/// Where g-PPL's log-probabilities come from.
enum Source {
    Local(Arc<TextLm>),
    Endpoint(Arc<Client>),
}

/// `g-ppl`.
pub struct GpplScorer {
    source: Source,
    config: Value,
}

impl GpplScorer {
    pub fn new(lm: Arc<TextLm>) -> anyhow::Result<GpplScorer> {
        let mut config = lm.config()?;
        config["value"] = json!("exp(mean NLL over the text's tokens)");
        Ok(GpplScorer { source: Source::Local(lm), config })
    }

    /// Through a server; asks it once whether it gives prompt log-probabilities.
    pub fn endpoint(client: Arc<Client>) -> Result<GpplScorer, crate::endpoint::EndpointError> {
        client.prompt_logprobs("The weather is nice today.", &|| false)?;
        let config = json!({
            "implementation": "tstlab endpoint g-ppl 1 (/completions, echo, logprobs; natural log)",
            "endpoint": client.public_url(),
            "model": client.settings().model,
            "start_token": "the server's (its BOS when its tokenizer adds one)",
            "scored": "every prompt token the server gives a log-probability (never the first)",
            "text": "plain text as stored (no chat template)",
            "value": "exp(mean NLL over the scored tokens)",
        });
        Ok(GpplScorer { source: Source::Endpoint(client), config })
    }

    fn endpoint_nll(client: &Client, texts: &[&str]) -> anyhow::Result<Vec<Option<Nll>>> {
        let wanted: Vec<usize> = (0..texts.len()).filter(|&i| !texts[i].trim().is_empty()).collect();
        let prompts: Vec<&str> = wanted.iter().map(|&i| texts[i]).collect();
        let got = client
            .prompt_logprobs_many(&prompts, &std::sync::atomic::AtomicBool::new(false))?
            .ok_or_else(|| anyhow::anyhow!("cancelled"))?;
        let mut out = vec![Some(Nll { nll: 0.0, tokens: 0 }); texts.len()];
        for (i, r) in wanted.into_iter().zip(got) {
            let lps: Vec<f64> = r?.into_iter().filter_map(|(_, lp)| lp).collect();
            out[i] = Some(Nll { nll: -lps.iter().sum::<f64>(), tokens: lps.len() });
        }
        Ok(out)
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
        let nll = match &self.source {
            Source::Local(lm) => lm.nll_texts(&texts)?,
            Source::Endpoint(client) => GpplScorer::endpoint_nll(client, &texts)?,
        };
        Ok(nll.iter().map(|n| Scored { value: n.and_then(|n| n.ppl()), detail: Some(detail(n)) }).collect())
    }

    fn batch_size(&self) -> usize {
        match &self.source {
            Source::Local(_) => 128,
            Source::Endpoint(c) => (c.settings().concurrency * 4).max(16),
        }
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
        config["text"] = json!("LMStyle's format, plain text (no chat template): `###Speaker: {context} ###Response:` then ` {output}`");
        config["scored"] = json!("the joint text's tokens past its common prefix with the context's tokens");
        config["value"] = json!("100 / mean NLL over the scored tokens");
        Ok(NllAppScorer { lm, contexts, config })
    }
}

/// LMStyle's dialogue format: the context `###Speaker: {turn} ###Response:` and the response
/// ` {output}` that follows it (docs/METHODS.md, NLL appropriateness).
pub fn dialogue(turn: &str, output: &str) -> (String, String) {
    (format!("###Speaker: {turn} ###Response:"), format!(" {output}"))
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
        let mut out = vec![Scored { value: None, detail: Some(json!({"reason": "the item has no context"}).to_string()) }; batch.len()];
        let mut which = Vec::new();
        let mut pairs = Vec::new();
        for (i, t) in batch.iter().enumerate() {
            let Some(c) = self.contexts.get(&t.item_id).filter(|c| !c.trim().is_empty()) else { continue };
            if t.text.trim().is_empty() {
                out[i].detail = Some(json!({"reason": "the output is empty"}).to_string());
                continue;
            }
            which.push(i);
            pairs.push(dialogue(c, &t.text));
        }
        let nll = self.lm.nll_continuations(&pairs)?;
        for (i, n) in which.into_iter().zip(&nll) {
            out[i] = Scored { value: n.and_then(|n| n.mean()).filter(|m| *m > 0.0).map(|m| 100.0 / m), detail: Some(detail(n)) };
        }
        Ok(out)
    }

    fn batch_size(&self) -> usize {
        64
    }
}
