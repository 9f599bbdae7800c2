//! `tstlab score`: score a dataset's outputs with automatic metrics, cached per output (metric,
//! configuration, output): a second run computes only what is missing.

use crate::metrics::family::Convention;
use crate::metrics::judge::JudgeFormat;
use crate::metrics::rouge_conv::RougeConvention;
use crate::score::plan::{self, Event, Options};
use crate::score::Selection;
use crate::human::campaign::REFERENCE_SYSTEM;
use crate::store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use anyhow::Context;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct ScoreArgs {
    #[arg(long)]
    pub dataset: String,
    /// Only this direction (SOURCE->TARGET).
    #[arg(long)]
    pub direction: Option<String>,
    #[command(flatten)]
    pub systems: super::Systems,
    /// Score the human reference as a system too: `reference` (kind human; each item's first
    /// reference as its output, added to the store where missing, as `campaign new
    /// --human-reference` makes it). Joins --systems when that is given.
    #[arg(long)]
    pub reference: bool,
    /// Metrics, comma-separated (`tstlab metric --list` lists every one with what it follows):
    /// acc, d-ppl, s-/r-/multi-bleu, g-bleu, s-/r-/multi-bleu1..4 (nlg-eval), chrf, chrf++, s-chrf, s-chrf++,
    /// s-/r-/multi-rouge1|rouge2|rougeL|rougeLsum,
    /// s-/r-/multi-hamming, s-/r-/multi-meteor, s-/r-/multi-cider, s-/r-/multi-bert,
    /// s-/r-/multi-sbert, g-ppl, nll-app, cola,
    /// judge-content|style|fluency|overall (tstlab's prompts), the papers' prompts word for word:
    /// judge-lai2023-content|style|fluency, judge-lai2023-multi-content|style|fluency (formality;
    /// all outputs of an item in one request), judge-lmstyle-app; groups: tstbench (acc, the BLEU
    /// and BERTScore families, d-ppl), judge, lai2023, lai2023-multi, all. ACC and d-PPL train the
    /// dataset's n-gram classifier and LMs first when they are missing.
    #[arg(long, default_value = "tstbench")]
    pub metrics: String,
    /// Causal LM for g-PPL, nll-app and the judge: GGUF file, model folder or installed name;
    /// with --endpoint, the model name the server knows.
    #[arg(long, default_value = crate::models::registry::SMOLLM2)]
    pub model: String,
    /// g-PPL and the judge through an OpenAI-compatible server (--endpoint).
    #[command(flatten)]
    pub server: super::server::ServerArgs,
    /// How the judge-content..overall judges answer (the papers' prompts always get free text):
    /// text (free text, as the published prompts ask; the score parsed from it), json (the server is held to JSON {score 0-100, explanation} with OpenAI's
    /// `response_format` json_schema: OpenAI, vLLM, llama.cpp's llama-server, Ollama) or
    /// json-object (the same schema as `{"type": "json_object", "schema": ..}`: llama-cpp-python's
    /// server, llama-server). json and json-object need --endpoint.
    #[arg(long, default_value = "text", value_parser = JudgeFormat::NAMES)]
    pub judge_format: String,
    /// BERT-family encoder for BERTScore and SBERT: folder or installed name.
    #[arg(long, visible_alias = "bertscore-model", default_value = crate::models::registry::MINILM)]
    pub encoder: String,
    /// BLEU convention of the stored per-output values, one of those listed (sacre13a: sacreBLEU
    /// sentence_bleu). Stored under its own metric ids (`s-bleu.tstbench`), so conventions sit
    /// side by side; `tstlab table` computes its corpus BLEU in the convention most BLEU scores
    /// are stored in.
    #[arg(long, default_value = "sacre13a", value_parser = super::bleu_conventions())]
    pub bleu: String,
    /// METEOR convention: nltk (NLTK 3.10.4 meteor_score on lower-cased white-space tokens) or
    /// nltk36 (NLTK 3.6.2 on the raw strings, as eval-formality-transfer scored). Stored under
    /// its own ids (`r-meteor.nltk36`). Needs WordNet 3.0 (apt-get install wordnet-base, or
    /// TSTLAB_WORDNET=DIR).
    #[arg(long, default_value = "nltk", value_parser = crate::metrics::meteor::Convention::NAMES)]
    pub meteor: String,
    /// CIDEr-D tokens: gem (NLTK word_tokenize, lower-cased, punctuation dropped, as GEM-metrics)
    /// or nlgeval (white-space split, case kept, as nlg-eval); stored as `r-cider.gem`, ... The
    /// idf of a direction comes from the items of that direction that have an output.
    #[arg(long, default_value = "gem", value_parser = crate::metrics::cider::Tokenize::NAMES)]
    pub cider: String,
    /// ROUGE convention of the stored per-output values: rouge-score (Google's rouge-score
    /// 0.1.2, no stemmer), stem (the same with its Porter stemmer) or efst
    /// (eval-formality-transfer: NLTK 3.4 word_tokenize, then the rouge package 0.3.2; ROUGE-1,
    /// -2, -L). Stored under their own ids (`s-rouge1`, `s-rouge1.stem`, `s-rouge1.efst`).
    #[arg(long, default_value = "rouge-score", value_parser = RougeConvention::NAMES)]
    pub rouge: String,
    /// BERTScore's layer of --encoder, counted as bert_score's num_layers (0 = the embeddings,
    /// N = the output of the N-th transformer layer; default: the last).
    #[arg(long, value_name = "N")]
    pub bertscore_layer: Option<usize>,
    /// BERTScore with idf weights (bert_score's `idf=True`), over the texts the outputs are
    /// compared with: each item's source, first reference or every reference, once.
    #[arg(long)]
    pub idf: bool,
    /// CoLA classifier for `cola`: a Hugging Face sequence-classification folder trained on CoLA.
    #[arg(long, value_name = "DIR")]
    pub cola_model: Option<std::path::PathBuf>,
    /// The class of the CoLA classifier that means acceptable, by name or number (default: the
    /// class named "acceptable"; GLUE CoLA models usually call it 1 or LABEL_1).
    #[arg(long, value_name = "CLASS")]
    pub cola_acceptable: Option<String>,
    /// Only the outputs of the I-th of N parts of the items (1 <= I <= N): the item at index k
    /// of its split goes to part k mod N + 1. Each part can be scored on its own machine, in its
    /// own copy of the store; `tstlab merge` puts the copies together.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::store::Shard>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(store: &mut Store, mut args: ScoreArgs) -> anyhow::Result<()> {
    let dataset_id = store.dataset_id(&args.dataset)?;
    if args.reference {
        let added = crate::score::reference::add_reference_outputs(store, dataset_id)?;
        crate::errln!("system {REFERENCE_SYSTEM}: {added} first references added as its outputs");
        if !args.systems.names.is_empty() && !args.systems.names.iter().any(|s| s == REFERENCE_SYSTEM) {
            args.systems.names.push(REFERENCE_SYSTEM.into());
        }
    }
    let direction_id = args.direction.as_deref().map(|x| store.direction_id(dataset_id, x)).transpose()?;
    let known: Vec<String> = store.systems(Some(dataset_id))?.into_iter().map(|s| s.name).collect();
    if let Some(bad) = args.systems.names.iter().find(|s| !known.contains(s)) {
        anyhow::bail!("no system {bad:?} in {}; it has: {}", args.dataset, known.join(", "));
    }
    let metrics = plan::parse(&args.metrics)?;
    let endpoint = args.server.settings(&args.model)?;
    let judge_format = JudgeFormat::parse(&args.judge_format).context("--judge-format is text, json or json-object")?;
    if judge_format != JudgeFormat::Text && endpoint.is_none() {
        anyhow::bail!(
            "--judge-format {} needs a server (--endpoint URL --model NAME): the local model cannot be held to a JSON schema; use --judge-format text",
            judge_format.name()
        );
    }
    let opts = Options {
        judge_format,
        endpoint,
        model: args.model,
        encoder: args.encoder,
        bleu: Convention::parse(&args.bleu)?,
        rouge: RougeConvention::parse(&args.rouge)?,
        shard: args.shard,
        bert_layer: args.bertscore_layer,
        idf: args.idf,
        cola: args.cola_model,
        cola_acceptable: args.cola_acceptable,
        meteor: crate::metrics::meteor::Convention::parse(&args.meteor)?,
        cider: crate::metrics::cider::Tokenize::parse(&args.cider)?,
    };
    if let Some(s) = args.shard {
        crate::errln!("shard {s}: only the outputs of items at index k with k mod {} = {}", s.count(), s.index() - 1);
    }
    let sel = Selection { dataset_id: Some(dataset_id), direction_id, systems: args.systems.names };
    let style = ProgressStyle::with_template("{prefix:>16} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
        .expect("valid template")
        .progress_chars("=> ");
    let mut bar: Option<ProgressBar> = None;
    let mut started = Instant::now();
    let started_all = Instant::now();
    let report = plan::run(store, &sel, &metrics, &opts, &AtomicBool::new(false), &mut |e| match e {
        Event::Start { metric, index, of } => {
            started = Instant::now();
            crate::errln!("[{}/{of}] {metric}", index + 1);
        }
        Event::Progress { metric, progress } => {
            let b = bar.get_or_insert_with(|| {
                let b = ProgressBar::new(progress.total as u64).with_style(style.clone()).with_prefix(metric);
                b.set_position(0);
                b
            });
            b.set_position(progress.done as u64);
        }
        Event::Done(o) => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            crate::errln!(
                "{:>16}: {} computed ({} undefined), {} cached, {:.1} s",
                o.metric,
                o.computed,
                o.undefined,
                o.cached,
                started.elapsed().as_secs_f64()
            );
        }
        Event::Absent { metric, reason } => crate::errln!("{metric:>16}: absent: {reason}"),
        Event::Note { metric, text } | Event::Training { metric, what: text } => crate::errln!("{metric:>16}: {text}"),
    })?;
    crate::errln!("done in {:.1} s", started_all.elapsed().as_secs_f64());
    if args.json {
        let v = serde_json::json!({
            "done": report.done,
            "absent": report.absent.iter().map(|(m, r)| serde_json::json!({"metric": m, "reason": r})).collect::<Vec<_>>(),
            "trained": report.trained,
            "seconds": started_all.elapsed().as_secs_f64(),
        });
        super::print_json(&v)?;
    }
    if let Some((metric, reason)) = report.absent.iter().find(|(_, r)| plan::is_broken(r)) {
        anyhow::bail!("{metric}: {reason}");
    }
    Ok(())
}
