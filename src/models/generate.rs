//! Batched generation.
//!
//! [`Generator`] loads a model (GGUF file, or a Hugging Face folder) into the f32 llama or
//! GPT-2 forward (any [`CausalLm`]) and generates for many prompts at once:
//!
//! - prompts go in waves of `batch_size` rows that prefill together and then decode together;
//!   a finished row stops costing linear-layer work at once (tokens are packed) and its cache
//!   row is dropped when a quarter of the rows are finished;
//! - the prompt prefix all prompts of a call share (instruction and chat template head) is
//!   computed once and its keys/values copied into every row; prompts that continue alike
//!   beyond it (one direction's instruction among several) get a longer group prefix; the last
//!   few prefixes are kept between calls, so one-prompt calls of the same template reuse them;
//! - logits are computed only for each row's last prompt token and for generated tokens;
//! - greedy or temperature/top-p sampling, seeded per prompt index; generation stops at an
//!   end-of-turn/eos token, at `max_new_tokens`, or at the context length.
//!
//! Results are reported through a callback as sequences finish, so they may arrive out of order.

use super::chat_template::ChatTemplate;
use super::device;
use super::arch::{self, Arch};
use super::gguf::GgufFile;
use super::llama::Llama;
use super::runtime::{CausalLm, KvCache, Shape, Step};
use super::sampling::Sampler;
use super::tokenizer::Tokenizer;
use super::error::{ModelError, Result};
use candle_core::{D, Tensor};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

pub use super::tokenizer::ChatMessage;

/// A prompt: token ids as they are, raw text, or chat messages rendered with the model's chat
/// template (generation prompt appended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    Tokens(Vec<u32>),
    Text(String),
    Chat(Vec<ChatMessage>),
}

impl Prompt {
    /// A one-turn chat: the user says `text`.
    pub fn user(text: &str) -> Prompt {
        Prompt::Chat(vec![ChatMessage::user(text)])
    }
}

/// Decoding parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenParams {
    pub max_new_tokens: usize,
    /// 0 means greedy.
    pub temperature: f64,
    /// Nucleus sampling mass (1 keeps every token).
    pub top_p: f64,
    pub seed: u64,
    /// Sequences decoded together.
    pub batch_size: usize,
    /// Compute the prompts' common prefix once.
    pub share_prefix: bool,
    /// Greedy only: verify up to this many draft tokens per step, looked up in the prompt
    /// (rewrites copy their source), while at most 8 rows are still decoding (larger steps are
    /// bound by arithmetic, and drafts only add to it); 0 (the default) turns it off. Outputs
    /// are the same either way; on the 2-core development machine 3 and 5 were within the noise
    /// of 0 (a third of the drafts accepted), so it stays off by default.
    pub lookahead: usize,
    /// Sampling only: the random stream of prompt `i` is `streams[i]` instead of `i`, so a
    /// sampled output can depend on a stable key (an item) rather than on its place in the call.
    /// Empty: the prompt index.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<u64>,
    /// Structured output: the `response_format` a server gets with each chat request, as JSON
    /// text sent as written (e.g. the judge's schema, its properties in order). The local model
    /// refuses one rather than ignore it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<String>,
}

impl Default for GenParams {
    fn default() -> Self {
        GenParams {
            max_new_tokens: 40,
            temperature: 0.0,
            top_p: 1.0,
            seed: 0,
            batch_size: 64,
            share_prefix: true,
            lookahead: 0,
            streams: Vec::new(),
            response_format: None,
        }
    }
}

impl GenParams {
    fn check(&self) -> Result<()> {
        if self.batch_size == 0 {
            return Err(ModelError::Params("batch size must be at least 1".into()));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(ModelError::Params(format!("temperature {} must be >= 0", self.temperature)));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(ModelError::Params(format!("top-p {} must be in (0, 1]", self.top_p)));
        }
        if self.response_format.is_some() {
            return Err(ModelError::Params(
                "the local model cannot constrain its output to a JSON schema (response_format); only a server can (--endpoint)".into(),
            ));
        }
        Ok(())
    }

    /// The sampling stream of prompt `i`.
    fn stream(&self, i: usize) -> u64 {
        self.streams.get(i).copied().unwrap_or(i as u64)
    }
}

/// Why a sequence stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// An end-of-turn or end-of-sequence token (not included in the output).
    EndOfTurn,
    /// `max_new_tokens` reached.
    MaxTokens,
    /// The context length reached.
    ContextFull,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndOfTurn => "end_of_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::ContextFull => "context_full",
        }
    }
}

/// One finished sequence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generated {
    /// The generated text (special tokens left out).
    pub text: String,
    /// The generated token ids (the stop token left out).
    pub tokens: Vec<u32>,
    pub prompt_tokens: usize,
    pub new_tokens: usize,
    pub stop_reason: StopReason,
}

/// Counts and timings of one `generate` call.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GenStats {
    pub sequences: usize,
    /// Prompt tokens of all sequences.
    pub prompt_tokens: usize,
    /// Prompt tokens actually computed (the shared prefix counts once; a reused one not at all).
    pub prefill_tokens: usize,
    /// Length of the longest shared prefix used (0 when none).
    pub shared_prefix: usize,
    /// Prompt tokens taken from shared prefixes instead of computed, summed over prompts.
    pub reused_prefix_tokens: usize,
    pub new_tokens: usize,
    /// Draft tokens verified, and accepted (greedy lookahead).
    pub draft_tokens: usize,
    pub accepted_draft_tokens: usize,
    pub prefill_secs: f64,
    pub decode_secs: f64,
    pub cancelled: bool,
}

/// What a loaded model is.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    pub path: PathBuf,
    /// `gguf` or `huggingface`.
    pub format: String,
    /// Its architecture and sizes (the keys of the JSON object itself).
    #[serde(flatten)]
    pub shape: Shape,
    pub device: String,
    /// Where the chat template came from.
    pub chat_template: String,
}

/// A computed prompt prefix: its tokens and their keys/values (one row).
pub struct PrefixEntry {
    tokens: Vec<u32>,
    cache: KvCache,
}

/// Key/value caches of shared prompt prefixes, most recent first.
#[derive(Default)]
pub struct PrefixCache {
    entries: Vec<Arc<PrefixEntry>>,
}

const PREFIX_ENTRIES: usize = 16;
/// Shorter common prefixes are not worth a separate pass.
const MIN_PREFIX: usize = 4;
/// Greedy lookahead drafts are verified only while at most this many rows are decoding.
const LOOKAHEAD_ROWS: usize = 8;
/// A group prefix beyond the common one must save at least this many token computations.
const MIN_GROUP_GAIN: usize = 8;

impl PrefixCache {
    pub fn new() -> PrefixCache {
        PrefixCache::default()
    }
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The longest entry that is a strict prefix of `prompt`.
    fn longest_for(&self, prompt: &[u32]) -> Option<Arc<PrefixEntry>> {
        self.entries
            .iter()
            .filter(|e| e.tokens.len() < prompt.len() && prompt.starts_with(&e.tokens))
            .max_by_key(|e| e.tokens.len())
            .cloned()
    }

    /// Makes sure `tokens` has an entry (computing it, from the longest cached entry it
    /// extends), most recent first.
    fn ensure(&mut self, model: &dyn CausalLm, tokens: &[u32], stats: &mut GenStats) -> Result<()> {
        if let Some(i) = self.entries.iter().position(|e| e.tokens == tokens) {
            let e = self.entries.remove(i);
            self.entries.insert(0, e);
            return Ok(());
        }
        let base = self.longest_for(tokens);
        let mut cache = model.new_cache(1, tokens.len())?;
        let start = match &base {
            Some(b) => {
                cache.fill_prefixes(&[&b.cache], &[Some(0)])?;
                b.tokens.len()
            }
            None => 0,
        };
        let step = Step::new(model, &cache, &[(&tokens[start..], start)])?;
        model.forward(&step, &mut cache)?;
        stats.prefill_tokens += tokens.len() - start;
        self.entries.insert(0, Arc::new(PrefixEntry { tokens: tokens.to_vec(), cache }));
        self.entries.truncate(PREFIX_ENTRIES);
        Ok(())
    }
}

/// Chooses the cached prefix each prompt starts from, computing new ones: the prefix common
/// to all prompts, then, among prompts that continue alike after it (e.g. one transfer
/// direction among several), a longer group prefix when it saves enough work.
fn plan_prefixes(
    model: &dyn CausalLm,
    prompts: &[Vec<u32>],
    prefixes: &mut PrefixCache,
    stats: &mut GenStats,
) -> Result<Vec<Option<Arc<PrefixEntry>>>> {
    let n = prompts.len();
    let min_len = prompts.iter().map(Vec::len).min().unwrap_or(1);
    if n > 1 {
        let l0 = prompts[1..].iter().fold(min_len - 1, |acc, p| acc.min(common_prefix(&prompts[0], p)));
        if l0 >= MIN_PREFIX {
            prefixes.ensure(model, &prompts[0][..l0], stats)?;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| prompts[a].cmp(&prompts[b]));
        let mut start = 0;
        for j in 1..=n {
            if j < n && common_prefix(&prompts[order[j - 1]], &prompts[order[j]]) > l0 {
                continue;
            }
            let group = &order[start..j];
            start = j;
            if group.len() < 2 {
                continue;
            }
            let first = &prompts[group[0]];
            let lg = group
                .iter()
                .map(|&m| common_prefix(first, &prompts[m]).min(prompts[m].len() - 1))
                .min()
                .unwrap_or(0);
            if lg >= MIN_PREFIX && lg > l0 && (group.len() - 1) * (lg - l0) >= MIN_GROUP_GAIN {
                prefixes.ensure(model, &first[..lg], stats)?;
            }
        }
    }
    Ok(prompts.iter().map(|p| prefixes.longest_for(p)).collect())
}

/// A model ready to generate.
pub struct Generator {
    model: Box<dyn CausalLm>,
    arch: &'static Arch,
    tokenizer: Tokenizer,
    info: ModelInfo,
    files: Vec<PathBuf>,
    sha256: OnceLock<String>,
    prefixes: Mutex<PrefixCache>,
}

impl Generator {
    /// Loads a GGUF file, a folder holding one GGUF file, or a Hugging Face folder
    /// (`config.json`, `*.safetensors`, `tokenizer.json`), on the device `device::choose()` gives.
    pub fn load(path: &Path) -> Result<Generator> {
        Generator::load_on(path, &device::choose())
    }

    pub fn load_on(path: &Path, dev: &candle_core::Device) -> Result<Generator> {
        if !path.exists() {
            return Err(ModelError::NotFound(path.to_path_buf()));
        }
        if path.is_dir() {
            if path.join("config.json").exists() {
                let (arch, (model, files)) = arch::load_hf(path, dev)?;
                let tokenizer = Tokenizer::from_hf_folder(path)?;
                return Ok(Generator::assemble(arch, model, tokenizer, path, "huggingface", files));
            }
            let ggufs: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| ModelError::Io { path: path.to_path_buf(), source: e })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("gguf")))
                .collect();
            return match ggufs.as_slice() {
                [one] => Generator::load_on(one, dev),
                [] => Err(ModelError::Invalid {
                    path: path.to_path_buf(),
                    detail: "no config.json (Hugging Face model) and no .gguf file in this folder".into(),
                }),
                _ => Err(ModelError::Invalid {
                    path: path.to_path_buf(),
                    detail: format!("{} .gguf files in this folder; name one", ggufs.len()),
                }),
            };
        }
        let mut g = GgufFile::open(path)?;
        let (arch, model) = arch::load_gguf(&mut g, dev)?;
        let beside = path.parent().map(|d| d.join("tokenizer.json"));
        let tokenizer = match beside {
            Some(tj) if tj.exists() => Tokenizer::from_hf_folder(tj.parent().unwrap_or(Path::new(".")))?,
            _ => Tokenizer::from_gguf(&g)?,
        };
        Ok(Generator::assemble(arch, model, tokenizer, path, "gguf", vec![path.to_path_buf()]))
    }

    /// A generator from parts (tests, custom models). `files` are hashed by [`Generator::sha256`].
    pub fn from_parts(model: impl CausalLm, tokenizer: Tokenizer, path: &Path, format: &str, files: Vec<PathBuf>) -> Result<Generator> {
        let family = model.shape().family;
        let arch = arch::of_family(family).ok_or_else(|| ModelError::Params(format!("no architecture `{family}` in models::arch")))?;
        Ok(Generator::assemble(arch, Box::new(model), tokenizer, path, format, files))
    }

    fn assemble(arch: &'static Arch, model: Box<dyn CausalLm>, mut tokenizer: Tokenizer, path: &Path, format: &str, files: Vec<PathBuf>) -> Generator {
        // A model not trained on chat turns (GPT-2): without a template of its own, no ChatML.
        if !arch.chat && tokenizer.chat_template().origin().is_none() {
            tokenizer.set_chat_template(ChatTemplate::none("GPT-2 has no chat template"));
        }
        let lm = model.as_ref();
        let info = ModelInfo {
            path: path.to_path_buf(),
            format: format.to_owned(),
            shape: lm.shape(),
            device: match lm.kernels() {
                Some(k) => format!("{} ({k})", device::describe(lm.device())),
                None => device::describe(lm.device()),
            },
            chat_template: tokenizer.chat_source().to_owned(),
        };
        Generator { model, arch, tokenizer, info, files, sha256: OnceLock::new(), prefixes: Mutex::new(PrefixCache::new()) }
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }
    /// The model, as the generation and scoring loops drive it.
    pub fn model(&self) -> &dyn CausalLm {
        self.model.as_ref()
    }
    /// Its architecture's entry in [`arch::ARCHITECTURES`].
    pub fn arch(&self) -> &'static Arch {
        self.arch
    }
    /// The forward that runs it: `llama` or `gpt2`.
    pub fn family(&self) -> &'static str {
        self.arch.family
    }
    /// The llama-family model, if it is one.
    pub fn llama(&self) -> Option<&Llama> {
        self.model.as_any().downcast_ref()
    }
    /// The llama-family model, to change how it computes (e.g. [`Llama::set_quant_rows`]).
    pub fn llama_mut(&mut self) -> Option<&mut Llama> {
        self.model.as_any_mut().downcast_mut()
    }
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// SHA-256 (hex) of the model file, computed on first use. A folder model hashes the
    /// SHA-256 digests of its files in name order.
    pub fn sha256(&self) -> Result<String> {
        if let Some(s) = self.sha256.get() {
            return Ok(s.clone());
        }
        let hex = match self.files.as_slice() {
            [one] => hex::encode(crate::input::sha256(one)?),
            files => {
                let mut files = files.to_vec();
                files.sort();
                let mut h = Sha256::new();
                for f in &files {
                    h.update(crate::input::sha256(f)?);
                }
                hex::encode(h.finalize())
            }
        };
        Ok(self.sha256.get_or_init(|| hex).clone())
    }

    /// Token ids of a prompt.
    pub fn encode(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        match prompt {
            Prompt::Tokens(t) => Ok(t.clone()),
            Prompt::Text(s) => self.tokenizer.encode(s),
            Prompt::Chat(m) => self.tokenizer.encode_chat(m),
        }
    }

    /// Generates for every prompt; `on_result(index, generated)` is called as each finishes.
    /// On cancel, returns with `cancelled` set; unfinished prompts are not reported.
    pub fn generate(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        cancel: &AtomicBool,
        mut on_result: impl FnMut(usize, Generated),
    ) -> Result<GenStats> {
        let ids: Vec<Vec<u32>> = prompts.iter().map(|p| self.encode(p)).collect::<Result<_>>()?;
        let mut err = None;
        let stats = {
            let mut prefixes = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
            run(self.model.as_ref(), &ids, params, self.tokenizer.stop_ids(), &mut prefixes, cancel, &mut |i, tokens, reason| {
                if err.is_some() {
                    return;
                }
                match self.tokenizer.decode(&tokens) {
                    Ok(text) => on_result(
                        i,
                        Generated {
                            text,
                            prompt_tokens: ids[i].len(),
                            new_tokens: tokens.len(),
                            tokens,
                            stop_reason: reason,
                        },
                    ),
                    Err(e) => err = Some(e),
                }
            })?
        };
        match err {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    }

    /// Forgets the cached prompt prefixes.
    pub fn clear_prefix_cache(&self) {
        self.prefixes.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A sequence being decoded.
struct Row {
    index: usize,
    prompt_len: usize,
    max_new: usize,
    capped_by_context: bool,
    out: Vec<u32>,
    next: u32,
    done: bool,
    sampler: Sampler,
}

/// The generation loop on token ids: `on_result(index, tokens, reason)` per finished prompt.
pub fn run(
    model: &dyn CausalLm,
    prompts: &[Vec<u32>],
    params: &GenParams,
    stop: &[u32],
    prefixes: &mut PrefixCache,
    cancel: &AtomicBool,
    on_result: &mut dyn FnMut(usize, Vec<u32>, StopReason),
) -> Result<GenStats> {
    params.check()?;
    if !params.streams.is_empty() && params.streams.len() != prompts.len() {
        return Err(ModelError::Params(format!("{} sampling streams for {} prompts", params.streams.len(), prompts.len())));
    }
    let ctx = model.context_length();
    for (i, p) in prompts.iter().enumerate() {
        if p.is_empty() {
            return Err(ModelError::EmptyPrompt(i));
        }
        if p.len() >= ctx {
            return Err(ModelError::PromptTooLong { index: i, len: p.len(), max_new: params.max_new_tokens, context: ctx });
        }
    }
    let mut stats = GenStats { sequences: prompts.len(), ..Default::default() };
    stats.prompt_tokens = prompts.iter().map(Vec::len).sum();
    if prompts.is_empty() {
        return Ok(stats);
    }
    if params.max_new_tokens == 0 {
        for i in 0..prompts.len() {
            on_result(i, Vec::new(), StopReason::MaxTokens);
        }
        return Ok(stats);
    }

    // Shared prefixes, computed once.
    let t0 = Instant::now();
    let plan: Vec<Option<Arc<PrefixEntry>>> =
        if params.share_prefix { plan_prefixes(model, prompts, prefixes, &mut stats)? } else { vec![None; prompts.len()] };
    let plen: Vec<usize> = plan.iter().map(|e| e.as_ref().map_or(0, |e| e.tokens.len())).collect();
    stats.shared_prefix = plen.iter().copied().max().unwrap_or(0);
    stats.reused_prefix_tokens = plen.iter().sum();
    stats.prefill_secs += t0.elapsed().as_secs_f64();

    let trace = std::env::var_os("TSTLAB_TRACE_STEPS").is_some();
    let lookahead = if params.temperature <= 0.0 { params.lookahead } else { 0 };
    let order: Vec<usize> = (0..prompts.len()).collect();
    for wave in order.chunks(params.batch_size) {
        if cancel.load(Ordering::Relaxed) {
            stats.cancelled = true;
            return Ok(stats);
        }
        let t_prefill = Instant::now();
        let mut rows: Vec<Row> = wave
            .iter()
            .map(|&i| {
                let room = ctx - prompts[i].len();
                Row {
                    index: i,
                    prompt_len: prompts[i].len(),
                    max_new: params.max_new_tokens.min(room),
                    capped_by_context: params.max_new_tokens > room,
                    out: Vec::new(),
                    next: 0,
                    done: false,
                    sampler: Sampler::new(params.temperature, params.top_p, params.seed, params.stream(i)),
                }
            })
            .collect();
        // The wave's prefixes (distinct entries) and each row's.
        let mut used: Vec<&Arc<PrefixEntry>> = Vec::new();
        let row_prefix: Vec<Option<usize>> = wave
            .iter()
            .map(|&i| {
                plan[i].as_ref().map(|e| match used.iter().position(|u| Arc::ptr_eq(u, e)) {
                    Some(k) => k,
                    None => {
                        used.push(e);
                        used.len() - 1
                    }
                })
            })
            .collect();
        let p_max = wave.iter().map(|&i| plen[i]).max().unwrap_or(0);
        let suffix_max = wave.iter().map(|&i| prompts[i].len() - plen[i]).max().unwrap_or(1);
        let new_max = rows.iter().map(|r| r.max_new).max().unwrap_or(1);
        let mut cache = model.new_cache(rows.len(), p_max + suffix_max + new_max)?;
        let caches: Vec<&KvCache> = used.iter().map(|e| &e.cache).collect();
        cache.fill_prefixes(&caches, &row_prefix)?;
        // Prefill the suffixes.
        let inputs: Vec<(&[u32], usize)> = wave.iter().map(|&i| (&prompts[i][plen[i]..], plen[i])).collect();
        let step = Step::new(model, &cache, &inputs)?;
        stats.prefill_tokens += step.len();
        let hidden = model.forward(&step, &mut cache)?;
        let last: Vec<u32> = step.last_indices().iter().map(|l| l.unwrap_or(0) as u32).collect();
        let last = Tensor::new(last.as_slice(), model.device())?;
        let logits = model.logits(&hidden.index_select(&last, 0)?)?;
        let active: Vec<usize> = (0..rows.len()).collect();
        choose_next(&logits, &mut rows, &active, stop, &mut stats, on_result)?;
        stats.prefill_secs += t_prefill.elapsed().as_secs_f64();
        if trace {
            eprintln!("prefill: {} rows, {} tokens, {:.1} ms", rows.len(), step.len(), t_prefill.elapsed().as_secs_f64() * 1e3);
        }

        // Decode.
        let t_decode = Instant::now();
        loop {
            let active: Vec<usize> = (0..rows.len()).filter(|&r| !rows[r].done).collect();
            if active.is_empty() {
                break;
            }
            if cancel.load(Ordering::Relaxed) {
                stats.cancelled = true;
                stats.decode_secs += t_decode.elapsed().as_secs_f64();
                return Ok(stats);
            }
            // Drop finished rows once they are a quarter of the cache.
            if (rows.len() - active.len()) * 4 >= rows.len() {
                cache.keep_rows(&active)?;
                let mut kept = Vec::with_capacity(active.len());
                for (r, row) in rows.into_iter().enumerate() {
                    if active.contains(&r) {
                        kept.push(row);
                    }
                }
                rows = kept;
                continue;
            }
            // Each row feeds its next token, plus (greedy) draft tokens looked up in its prompt
            // and output, all verified in this one step.
            // Drafts only pay where a step is bound by reading the weights, not by arithmetic.
            let lookahead = if active.len() <= LOOKAHEAD_ROWS { lookahead } else { 0 };
            let feeds: Vec<Vec<u32>> = rows
                .iter()
                .map(|r| {
                    if r.done {
                        return Vec::new();
                    }
                    let mut f = vec![r.next];
                    if lookahead > 0 {
                        let room = r.max_new - r.out.len();
                        f.extend(draft(&prompts[r.index], &r.out, lookahead.min(room.saturating_sub(1))));
                    }
                    f
                })
                .collect();
            let width = feeds.iter().map(Vec::len).max().unwrap_or(1);
            if cache.len() + width > cache.capacity() {
                let more = cache.capacity().max(16);
                cache.grow(cache.capacity() + more)?;
            }
            let inputs: Vec<(&[u32], usize)> =
                rows.iter().zip(&feeds).map(|(r, f)| (f.as_slice(), r.prompt_len + r.out.len().max(1) - 1)).collect();
            let ts = Instant::now();
            let slot0 = cache.len();
            let step = Step::new(model, &cache, &inputs)?;
            let hidden = model.forward(&step, &mut cache)?;
            let tf = ts.elapsed().as_secs_f64();
            let logits = model.logits(&hidden)?;
            if lookahead > 0 {
                let picks = logits.argmax(D::Minus1)?.to_vec1::<u32>()?;
                let mut k = 0;
                for (r, f) in feeds.iter().enumerate() {
                    if f.is_empty() {
                        continue;
                    }
                    let got = &picks[k..k + f.len()];
                    k += f.len();
                    // Drafts are accepted while they equal the model's own choice.
                    let accepted = f[1..].iter().zip(got).take_while(|(d, g)| d == g).count();
                    let first_slot = slot0 + width - f.len();
                    for j in accepted + 1..f.len() {
                        cache.invalidate(r, first_slot + j);
                    }
                    stats.draft_tokens += f.len() - 1;
                    stats.accepted_draft_tokens += accepted;
                    for &tok in &got[..=accepted] {
                        if rows[r].done {
                            break;
                        }
                        push_token(&mut rows[r], tok, stop, &mut stats, on_result);
                    }
                }
            } else {
                choose_next(&logits, &mut rows, &active, stop, &mut stats, on_result)?;
            }
            if trace {
                eprintln!(
                    "decode step: {} rows ({} active), {} slots, forward {:.1} ms, logits+pick {:.1} ms",
                    rows.len(),
                    active.len(),
                    cache.len(),
                    tf * 1e3,
                    (ts.elapsed().as_secs_f64() - tf) * 1e3
                );
            }
        }
        stats.decode_secs += t_decode.elapsed().as_secs_f64();
    }
    Ok(stats)
}

/// Appends a chosen token to a row, finishing it on a stop token or at its token limit.
fn push_token(
    row: &mut Row,
    tok: u32,
    stop: &[u32],
    stats: &mut GenStats,
    on_result: &mut dyn FnMut(usize, Vec<u32>, StopReason),
) {
    if stop.contains(&tok) {
        row.done = true;
        on_result(row.index, std::mem::take(&mut row.out), StopReason::EndOfTurn);
        return;
    }
    row.out.push(tok);
    row.next = tok;
    stats.new_tokens += 1;
    if row.out.len() >= row.max_new {
        row.done = true;
        let reason = if row.capped_by_context { StopReason::ContextFull } else { StopReason::MaxTokens };
        on_result(row.index, std::mem::take(&mut row.out), reason);
    }
}

/// Shortest n-gram a draft is looked up by (single tokens match too often by chance).
const MIN_NGRAM: usize = 2;

/// Draft tokens by prompt lookup: the continuation after the latest earlier occurrence of the
/// last 3 (else 2) tokens of prompt + output. Rewrites copy much of their source, so
/// these drafts are often right; they are only ever accepted when greedy decoding would have
/// produced them.
fn draft(prompt: &[u32], out: &[u32], max: usize) -> Vec<u32> {
    if max == 0 {
        return Vec::new();
    }
    let hist: Vec<u32> = prompt.iter().chain(out).copied().collect();
    for n in (MIN_NGRAM..=3usize).rev() {
        if hist.len() <= n {
            continue;
        }
        let tail = &hist[hist.len() - n..];
        for start in (0..hist.len() - n).rev() {
            if &hist[start..start + n] == tail {
                let d: Vec<u32> = hist[start + n..].iter().take(max).copied().collect();
                if !d.is_empty() {
                    return d;
                }
            }
        }
    }
    Vec::new()
}

/// Picks the next token of each active row from its logits row, and finishes rows.
fn choose_next(
    logits: &Tensor,
    rows: &mut [Row],
    active: &[usize],
    stop: &[u32],
    stats: &mut GenStats,
    on_result: &mut dyn FnMut(usize, Vec<u32>, StopReason),
) -> Result<()> {
    let greedy = rows.first().is_none_or(|r| r.sampler.is_greedy());
    let picks: Vec<u32> = if greedy {
        logits.argmax(D::Minus1)?.to_vec1::<u32>()?
    } else {
        let all = logits.to_vec2::<f32>()?;
        active.iter().zip(all).map(|(&r, l)| rows[r].sampler.sample(&l)).collect()
    };
    for (&r, tok) in active.iter().zip(picks) {
        push_token(&mut rows[r], tok, stop, stats, on_result);
    }
    Ok(())
}
