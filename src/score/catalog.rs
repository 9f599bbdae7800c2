//! The registry of per-output metrics: every name `tstlab score --metrics` accepts, with a line
//! on what it measures, the paper or package it follows, its section of docs/METHODS.md, how its
//! scorer is built and what must be trained first. `tstlab metric --list`, the `--metrics`
//! parser, the TUI's score menu and METHODS' index all read this one table, so a new metric is
//! its file under `metrics/` plus one entry here.

use super::inputs::{BROKEN, Context, Scoring, Unavailable, contexts, idf_corpus};
use super::Scorer;
use crate::endpoint::Backend;
use crate::metrics::acc::AccScorer;
use crate::metrics::bertscore::{self, BertScore, BertScoreScorer, Component, Idf, SbertScorer};
use crate::metrics::chrf::ChrfConfig;
use crate::metrics::cola::ColaScorer;
use crate::metrics::dppl::{self, DpplScorer, LmOptions};
use crate::metrics::family::Against;
use crate::metrics::judge::{Dimension, JudgeFormat, JudgeScorer};
use crate::metrics::judge_paper::{self, PaperJudge, PaperMetric};
use crate::metrics::ppl::{GpplScorer, NllAppScorer};
use crate::metrics::rouge;
use crate::metrics::scorers::{BleuOrderScorer, BleuScorer, ChrfScorer, GBleuScorer, HammingScorer, RougeScorer};
use crate::metrics::style_classifier::{self, Kind, NgramFit, TrainOptions};
use crate::metrics::style_data::StyleData;
use crate::metrics::{cider, meteor, wordnet};
use crate::models::hf_classifier::HfClassifier;
use crate::store::Store;
use std::sync::Arc;

/// A scorer, or why it cannot run (a missing model: what to install).
pub type Built = anyhow::Result<Result<Scoring, Unavailable>>;

/// A family of metric names that share a description and a builder.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The names `--metrics` takes (matched ignoring case).
    pub names: &'static [&'static str],
    /// What is measured, one line.
    pub about: &'static str,
    /// The paper or package whose numbers it reproduces.
    pub follows: &'static str,
    /// What it needs beyond the store (a model, an option), empty if nothing.
    pub needs: &'static str,
    /// Its `##` section of docs/METHODS.md.
    pub section: &'static str,
    /// Builds the scorer of one of `names` (`cx.name`); never trains anything.
    pub build: fn(&mut Context<'_>) -> Built,
    /// What the dataset must have trained before `build` can open it.
    pub train: Option<&'static Train>,
}

/// A model a metric needs trained on the dataset, a step the plan asks for and reports.
#[derive(Debug)]
pub struct Train {
    /// Whether the dataset still needs it.
    pub needed: fn(dataset: &str) -> bool,
    /// What the step says before it trains.
    pub says: fn(dataset: &str) -> String,
    /// Trains it on the dataset's texts, saying what it made.
    pub run: fn(store: &Store, dataset: &str, note: &mut dyn FnMut(String)) -> anyhow::Result<()>,
}

/// The families, in the order they are listed.
pub const FAMILIES: &[Family] = &[
    Family {
        names: &["acc"],
        about: "style strength: 1 when the dataset's style classifier gives the target style, else 0",
        follows: "TSTBench ACC (its classifier trained on the dataset)",
        needs: "trains the dataset's n-gram classifier when none is there",
        section: "ACC",
        build: build_acc,
        train: Some(&ACC_TRAIN),
    },
    Family {
        names: &["d-ppl"],
        about: "fluency: perplexity under a Kneser-Ney n-gram LM of the target style's texts",
        follows: "TSTBench d-PPL (KenLM, modified Kneser-Ney)",
        needs: "trains the dataset's n-gram LMs when none are there",
        section: "PPL",
        build: build_dppl,
        train: Some(&DPPL_TRAIN),
    },
    Family {
        names: &["s-bleu", "r-bleu", "multi-bleu"],
        about: "content: sentence BLEU against the source (s), the first reference (r), all references (multi)",
        follows: "sacreBLEU 2.6.0 sentence_bleu; --bleu nltk|tstbench|efst: NLTK 3.10.4 sentence_bleu",
        needs: "",
        section: "BLEU",
        build: build_bleu,
        train: None,
    },
    Family {
        names: &["chrf", "chrf++", "s-chrf", "s-chrf++"],
        about: "content: sentence chrF (character 6-grams) / chrF++ (+ word bigrams) against all references; s-: against the source",
        follows: "sacreBLEU 2.6.0 sentence_chrf",
        needs: "",
        section: "chrF",
        build: build_chrf,
        train: None,
    },
    Family {
        names: &["s-rouge1", "r-rouge1", "multi-rouge1", "s-rouge2", "r-rouge2", "multi-rouge2"],
        about: "content: ROUGE-N F1 against the source, the first reference, or the best of all references",
        follows: "Google rouge-score 0.1.2, no stemmer; --rouge stem: its Porter stemmer; --rouge efst: the rouge package 0.3.2 on NLTK 3.4 tokens",
        needs: "",
        section: "ROUGE",
        build: build_rouge,
        train: None,
    },
    Family {
        names: &["s-rougeL", "r-rougeL", "multi-rougeL", "s-rougeLsum", "r-rougeLsum", "multi-rougeLsum"],
        about: "content: ROUGE-L (longest common subsequence) F1; Lsum joins sentences split at newlines",
        follows: "Google rouge-score 0.1.2, no stemmer; --rouge stem: its Porter stemmer; --rouge efst (not Lsum): the rouge package 0.3.2's summary-level ROUGE-L",
        needs: "",
        section: "ROUGE",
        build: build_rouge,
        train: None,
    },
    Family {
        names: &["g-bleu"],
        about: "content: sqrt(s-BLEU x r-BLEU) of each output's sentence BLEUs (their mean is not the corpus g-BLEU)",
        follows: "llm-tst-code gm_bleu, per output; in the --bleu convention",
        needs: "",
        section: "BLEU",
        build: build_gbleu,
        train: None,
    },
    Family {
        names: &[
            "s-bleu1", "r-bleu1", "multi-bleu1", "s-bleu2", "r-bleu2", "multi-bleu2",
            "s-bleu3", "r-bleu3", "multi-bleu3", "s-bleu4", "r-bleu4", "multi-bleu4",
        ],
        about: "content: cumulative BLEU up to order n (n = 1..4) against the source, the first reference, all references",
        follows: "nlg-eval / pycocoevalcap BleuScorer per-sentence Bleu_n (StylePTB)",
        needs: "",
        section: "BLEU",
        build: build_bleu_order,
        train: None,
    },
    Family {
        names: &["s-meteor", "r-meteor", "multi-meteor"],
        about: "content: METEOR (exact, Porter-stem and WordNet-synonym word matches) against the source, the first reference, or the best reference",
        follows: "NLTK 3.10.4 meteor_score on white-space tokens; --meteor nltk36: NLTK 3.6.2 on the raw strings (eval-formality-transfer)",
        needs: "WordNet 3.0 (apt-get install wordnet-base, NLTK's wordnet data, or TSTLAB_WORDNET=DIR)",
        section: "METEOR",
        build: build_meteor,
        train: None,
    },
    Family {
        names: &["s-cider", "r-cider", "multi-cider"],
        about: "content: CIDEr-D (tf-idf n-gram cosine, clipped, length penalty; 0-10) against the source, the first reference, or all references",
        follows: "pycocoevalcap 1.2 Cider; idf per direction over the items with an output; --cider gem (GEM-metrics tokens) | nlgeval (white space)",
        needs: "",
        section: "CIDEr-D",
        build: build_cider,
        train: None,
    },
    Family {
        names: &["s-hamming", "r-hamming", "multi-hamming"],
        about: "edit size: whitespace tokens differing by position, plus the length difference (multi: the fewest)",
        follows: "StylePTB's token-level Hamming distance",
        needs: "",
        section: "Hamming",
        build: build_hamming,
        train: None,
    },
    Family {
        names: &["s-bert", "r-bert", "multi-bert", "s-bert-p", "r-bert-p", "multi-bert-p", "s-bert-r", "r-bert-r", "multi-bert-r"],
        about: "content: BERTScore F1 (-p precision, -r recall) against the source, the first reference, or the best reference (by F1)",
        follows: "bert-score (Zhang et al., 2020): greedy cosine matching, no baseline rescaling",
        needs: "the --encoder model (all-MiniLM-L6-v2 by default); --bertscore-layer N (default: its last), --idf",
        section: "BERTScore",
        build: build_bert,
        train: None,
    },
    Family {
        names: &["s-sbert", "r-sbert", "multi-sbert"],
        about: "content: cosine of mean-pooled sentence embeddings (multi: the highest over the references)",
        follows: "sentence-transformers mean pooling, L2-normalized",
        needs: "the --encoder model (all-MiniLM-L6-v2 by default)",
        section: "SBERT",
        build: build_sbert,
        train: None,
    },
    Family {
        names: &["g-ppl"],
        about: "fluency: perplexity of the output under a causal LM",
        follows: "TSTBench / llm-tst-code g-PPL (GPT-2 there)",
        needs: "the --model LM (SmolLM2 by default) or --endpoint",
        section: "PPL",
        build: build_gppl,
        train: None,
    },
    Family {
        names: &["nll-app"],
        about: "appropriateness: 100 / mean token NLL of the output as the response in `###Speaker: {turn} ###Response: {output}`",
        follows: "LMStyle benchmark NLL appropriateness (its ###Speaker/###Response format)",
        needs: "the --model LM; items with a dialogue context",
        section: "NLL appropriateness",
        build: build_nll_app,
        train: None,
    },
    Family {
        names: &["cola"],
        about: "fluency: 1 when a CoLA-trained classifier finds the output acceptable, else 0",
        follows: "TSTBench CoLA column",
        needs: "--cola-model DIR (a Hugging Face classifier folder trained on CoLA)",
        section: "CoLA",
        build: build_cola,
        train: None,
    },
    Family {
        names: &["judge-content", "judge-style", "judge-fluency", "judge-overall"],
        about: "an LLM's 0-100 score of one aspect (overall: all three), raw reply stored",
        follows: "tstlab's prompts (assets/judge/): content after Lai et al. 2023's, the others analogues",
        needs: "the --model LM or --endpoint",
        section: "LLM judge",
        build: build_judge,
        train: None,
    },
    Family {
        names: &["judge-lai2023-content", "judge-lai2023-style", "judge-lai2023-fluency"],
        about: "an LLM's 0-100 score of one aspect, all outputs of an item in one request (Output 1..n), raw reply stored",
        follows: "Lai, Toral, Nissim 2023, Figures 1-3, word for word (assets/judge/lai2023-*.txt)",
        needs: "the --model LM or --endpoint; formal/informal styles",
        section: "LLM judge",
        build: build_paper_judge,
        train: None,
    },
    Family {
        names: &["judge-lai2023-multi-content", "judge-lai2023-multi-style", "judge-lai2023-multi-fluency"],
        about: "content, style and fluency 0-100 of each output from one request per item, raw reply stored",
        follows: "Lai, Toral, Nissim 2023, Figure 4, word for word (assets/judge/lai2023-multi.txt)",
        needs: "the --model LM or --endpoint; formal/informal styles",
        section: "LLM judge",
        build: build_paper_judge,
        train: None,
    },
    Family {
        names: &["judge-lmstyle-app"],
        about: "appropriateness 0-100 of the output as the response to its dialogue turn, raw reply stored",
        follows: "LMStyle Benchmark's ChatGPT appropriateness prompt (its Figure 2), word for word",
        needs: "the --model LM or --endpoint; items with a dialogue context",
        section: "LLM judge",
        build: build_paper_judge,
        train: None,
    },
];

/// Named groups of metrics.
pub const GROUPS: &[(&str, &str)] = &[
    ("tstbench", TSTBENCH),
    ("judge", "judge-content,judge-style,judge-fluency,judge-overall"),
    ("lai2023", "judge-lai2023-content,judge-lai2023-style,judge-lai2023-fluency,lai2023-multi"),
    ("lai2023-multi", "judge-lai2023-multi-content,judge-lai2023-multi-style,judge-lai2023-multi-fluency"),
    ("all", "tstbench,g-ppl,judge"),
];

/// TSTBench's per-output inputs: ACC, the BLEU family (the table computes corpus BLEU from the
/// texts; these are the sentence-level values for item views and plots), BERTScore and d-PPL
/// (TSTBench's n-gram LM). g-PPL is in `all`.
pub const TSTBENCH: &str = "acc,s-bleu,r-bleu,multi-bleu,d-ppl,s-bert,r-bert,multi-bert";

/// Every name, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|f| f.names.iter().copied())
}

/// The family a name (any case) belongs to.
pub fn family_of(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
}

/// The name as the catalogue spells it.
pub fn canonical(name: &str) -> Option<&'static str> {
    names().find(|n| n.eq_ignore_ascii_case(name))
}

/// The METHODS.md index of the registry: one line per family, its names and section.
pub fn methods_index() -> String {
    let mut out = String::new();
    for f in FAMILIES {
        let anchor: String = f.section.to_lowercase().chars().filter_map(|c| if c == ' ' { Some('-') } else if c.is_alphanumeric() || c == '-' { Some(c) } else { None }).collect();
        out.push_str(&format!("- {}: [{}](#{anchor})\n", f.names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" "), f.section));
    }
    out
}

/// Leaves the builder with the reason when a model cannot be had.
macro_rules! need {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(u) => return Ok(Err(u)),
        }
    };
}

fn plain(s: impl Scorer + 'static) -> Built {
    Ok(Ok(Scoring::Plain(Box::new(s))))
}

/// What a prefixed name (`s-`, `r-`, `multi-`) is compared with, and the rest of the name.
fn against(name: &str) -> (Against, &str) {
    match name.split_once('-') {
        Some(("s", rest)) => (Against::Source, rest),
        Some(("r", rest)) => (Against::FirstReference, rest),
        Some(("multi", rest)) => (Against::AllReferences, rest),
        _ => unreachable!("{name} has no s-, r- or multi- prefix"),
    }
}

fn bert_against(a: Against) -> bertscore::Against {
    match a {
        Against::Source => bertscore::Against::Source,
        Against::FirstReference => bertscore::Against::Reference,
        Against::AllReferences => bertscore::Against::References,
    }
}

/// The selection's dataset name (ACC and d-PPL are per dataset).
fn dataset(cx: &Context<'_>) -> anyhow::Result<String> {
    let id = cx.sel.dataset_id.ok_or_else(|| anyhow::anyhow!("ACC and d-PPL need a dataset"))?;
    Ok(cx.store.dataset_name(id)?)
}

fn ngram_dir(dataset: &str) -> std::path::PathBuf {
    style_classifier::dir(dataset, Kind::Ngram)
}

fn dppl_root(dataset: &str) -> std::path::PathBuf {
    crate::paths::models_dir().join("lm").join(dataset)
}

/// The dataset's n-gram style classifier, unless an embedding classifier can be used.
static ACC_TRAIN: Train = Train {
    needed: |dataset| {
        !ngram_dir(dataset).join("manifest.json").is_file()
            && !(style_classifier::dir(dataset, Kind::Embed).join("manifest.json").is_file() && AccScorer::open_trained(dataset, Kind::Embed).is_ok())
    },
    says: |dataset| format!("no style classifier for {dataset}: training the n-gram classifier (tstlab classifier train --dataset {dataset})"),
    run: |store, dataset, note| {
        let dir = ngram_dir(dataset);
        let data = StyleData::read(store, dataset, false)?;
        let opts = TrainOptions::default();
        let texts = style_classifier::corpus(&data);
        let mut fit = NgramFit { texts: Arc::new(texts), labels: data.styles.clone(), hyper: opts.ngram.clone() };
        let m = style_classifier::train(&data, &mut fit, Kind::Ngram, &opts, &dir)?;
        let refs = m.references.as_ref().map_or(String::new(), |r| format!(", {:.1}% on the human references", 100.0 * r.accuracy));
        note(format!("trained on {}: {:.1}% held-out{refs} -> {}", m.trained_on, 100.0 * m.held_out.accuracy, dir.display()));
        Ok(())
    },
};

/// The dataset's Kneser-Ney LMs, one per style.
static DPPL_TRAIN: Train = Train {
    needed: |dataset| dppl::list_dataset(&dppl_root(dataset)).is_empty(),
    says: |dataset| format!("no d-PPL LMs for {dataset}: training them (tstlab lm train --dataset {dataset})"),
    run: |store, dataset, note| {
        let data = StyleData::read(store, dataset, false)?;
        for (style, r) in dppl::train_all(&data, &LmOptions::default(), &dppl_root(dataset)) {
            match r {
                Ok(m) => note(format!("LM of {style}: order {}, {} tokens of {}", m.order, m.tokens, m.trained_on)),
                Err(e) => note(format!("LM of {style}: {e}")),
            }
        }
        Ok(())
    },
};

/// The dataset's embedding classifier when one was trained (`tstlab classifier train`) and
/// MiniLM is installed; else its n-gram classifier.
fn build_acc(cx: &mut Context<'_>) -> Built {
    let dataset = dataset(cx)?;
    if style_classifier::dir(&dataset, Kind::Embed).join("manifest.json").is_file() {
        match AccScorer::open_trained(&dataset, Kind::Embed) {
            Ok(s) => return Ok(Ok(Scoring::Acc(s))),
            Err(e) => (cx.note)(format!("embed classifier of {dataset} not usable ({e}); using the n-gram one")),
        }
    }
    Ok(Ok(Scoring::Acc(AccScorer::open(&ngram_dir(&dataset), None)?)))
}

fn build_dppl(cx: &mut Context<'_>) -> Built {
    let dataset = dataset(cx)?;
    plain(DpplScorer::open(&dataset, &dppl_root(&dataset))?)
}

fn build_bleu(cx: &mut Context<'_>) -> Built {
    plain(BleuScorer { against: against(cx.name).0, convention: cx.opts.bleu.for_sentences() })
}

fn build_gbleu(cx: &mut Context<'_>) -> Built {
    plain(GBleuScorer { convention: cx.opts.bleu.for_sentences() })
}

fn build_bleu_order(cx: &mut Context<'_>) -> Built {
    let (against, rest) = against(cx.name);
    let order = rest["bleu".len()..].parse().expect("bleu1 to bleu4");
    plain(BleuOrderScorer { against, order })
}

fn build_chrf(cx: &mut Context<'_>) -> Built {
    let config = if cx.name.ends_with("++") { ChrfConfig::chrf_pp() } else { ChrfConfig::chrf() };
    let against = if cx.name.starts_with("s-") { Against::Source } else { Against::AllReferences };
    plain(ChrfScorer { config, against })
}

fn build_rouge(cx: &mut Context<'_>) -> Built {
    let (against, rest) = against(cx.name);
    let kind = rouge::Kind::parse(rest).expect("the ROUGE families' names");
    if !cx.opts.rouge.supports(kind) {
        return Ok(Err(Unavailable::NotInstalled(format!("{} has no {} form (the rouge package 0.3.2 has ROUGE-1, -2 and -L)", kind.name(), cx.opts.rouge.label()))));
    }
    plain(RougeScorer { against, kind, convention: cx.opts.rouge })
}

fn build_hamming(cx: &mut Context<'_>) -> Built {
    plain(HammingScorer { against: against(cx.name).0 })
}

fn build_meteor(cx: &mut Context<'_>) -> Built {
    match wordnet::shared() {
        Ok(wordnet) => plain(meteor::MeteorScorer { meteor: meteor::Meteor { wordnet, convention: cx.opts.meteor }, against: against(cx.name).0 }),
        Err(e @ wordnet::WordNetError::Absent { .. }) => Ok(Err(Unavailable::NotInstalled(e.to_string()))),
        Err(e) => Ok(Err(Unavailable::Broken(format!("{BROKEN} WordNet: {e}")))),
    }
}

fn build_cider(cx: &mut Context<'_>) -> Built {
    let against = against(cx.name).0;
    let (idf, digest) = super::documents::cider_idf(cx.store, cx.sel, against, cx.opts.cider)?;
    plain(cider::CiderScorer { against, tokenize: cx.opts.cider, idf: Arc::new(idf), digest })
}

fn build_bert(cx: &mut Context<'_>) -> Built {
    let (a, rest) = against(cx.name);
    let component = match rest {
        "bert-p" => Component::P,
        "bert-r" => Component::R,
        _ => Component::F1,
    };
    let a = bert_against(a);
    let enc = need!(cx.loaded.encoder(cx.opts));
    let mut bertscore = BertScore::new(enc.clone(), cx.opts.bert_layer)?;
    if cx.opts.idf {
        let docs = idf_corpus(cx.store, cx.sel, a)?;
        let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
        bertscore = bertscore.with_idf(Idf::from_texts(&enc, &docs)?);
    }
    plain(BertScoreScorer { bertscore, against: a, component })
}

fn build_sbert(cx: &mut Context<'_>) -> Built {
    let encoder = need!(cx.loaded.encoder(cx.opts));
    plain(SbertScorer { encoder, against: bert_against(against(cx.name).0) })
}

fn build_cola(cx: &mut Context<'_>) -> Built {
    let Some(dir) = &cx.opts.cola else {
        return Ok(Err(Unavailable::NotInstalled("cola needs a CoLA-trained classifier folder: give it with --cola-model DIR".into())));
    };
    let classifier = match HfClassifier::load(dir) {
        Ok(c) => c,
        Err(e) => return Ok(Err(Unavailable::Broken(format!("{BROKEN} CoLA classifier {}: {e}", dir.display())))),
    };
    plain(ColaScorer::new(classifier, cx.opts.cola_acceptable.as_deref())?)
}

/// The causal LM of `--model`, or the server of `--endpoint`.
enum Lm {
    Local(Arc<crate::models::lm_score::TextLm>),
    Endpoint(Arc<crate::endpoint::Client>),
}

fn lm(cx: &mut Context<'_>) -> Result<Lm, Unavailable> {
    match &cx.opts.endpoint {
        Some(settings) => cx.loaded.client(settings).map(Lm::Endpoint),
        None => cx.loaded.lm(cx.opts).map(Lm::Local),
    }
}

fn backend(lm: Lm) -> Backend {
    match lm {
        Lm::Local(lm) => Backend::Local(lm.generator().clone()),
        Lm::Endpoint(client) => Backend::Endpoint(client),
    }
}

fn build_gppl(cx: &mut Context<'_>) -> Built {
    match need!(lm(cx)) {
        Lm::Local(lm) => plain(GpplScorer::new(lm)?),
        Lm::Endpoint(client) => match GpplScorer::endpoint(client) {
            Ok(s) => plain(s),
            Err(e) => Ok(Err(Unavailable::Broken(format!("{BROKEN} endpoint for g-ppl: {e}")))),
        },
    }
}

fn build_nll_app(cx: &mut Context<'_>) -> Built {
    match need!(lm(cx)) {
        Lm::Local(lm) => plain(NllAppScorer::new(lm, contexts(cx.store, cx.sel)?)?),
        Lm::Endpoint(_) => Ok(Err(Unavailable::NotInstalled("nll-app is computed with a local model only (leave out --endpoint)".into()))),
    }
}

fn build_judge(cx: &mut Context<'_>) -> Built {
    let dimension = Dimension::parse(cx.name).expect("the judge family's names");
    let backend = backend(need!(lm(cx)));
    plain(JudgeScorer::new(backend, dimension, cx.opts.judge_format)?)
}

/// A paper judge over the selection: every output of it (numbered within an item by system
/// name, as `score::missing` orders them) or the items' dialogue turns; absent when Lai et al.'s
/// prompts meet styles that are not formal/informal. The papers' prompts ask for free text.
fn build_paper_judge(cx: &mut Context<'_>) -> Built {
    let m = PaperMetric::parse(cx.name).expect("the paper judges' names");
    let backend = backend(need!(lm(cx)));
    if cx.opts.judge_format != JudgeFormat::Text {
        anyhow::bail!("{}: the paper's prompt asks for free text; --judge-format {} applies to judge-content, -style, -fluency, -overall", m.metric(), cx.opts.judge_format.name());
    }
    let (outputs, contexts) = if m.prompt.per_item() {
        // No score has an empty configuration hash: every output of the selection.
        (super::missing(cx.store, cx.sel, "", "")?.0, Default::default())
    } else {
        (Vec::new(), contexts(cx.store, cx.sel)?)
    };
    if let Err(e) = judge_paper::check_styles(m.prompt, &outputs) {
        return Ok(Err(Unavailable::NotInstalled(e.to_string())));
    }
    plain(PaperJudge::new(backend, m, outputs, contexts, cx.loaded.judge_replies.clone())?)
}

/// Metrics tstlab computes only from whole files or tables, not per stored output, and those
/// it does not compute at all: said in `metric --list` so a user does not look for them.
pub const ELSEWHERE: &[(&str, &str)] = &[
    ("corpus s-/r-/multi-BLEU, G2, Joint, t-PPL", "tstlab table (from the stored texts and scores)"),
    ("BLEU, chrF, ROUGE, METEOR, CIDEr-D of text files", "tstlab metric bleu | chrf | rouge | meteor | cider"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::inputs::{Loaded, Options};
    use crate::score::Selection;

    #[test]
    fn names_are_unique_and_groups_named() {
        let all: Vec<&str> = names().collect();
        for (i, n) in all.iter().enumerate() {
            assert!(!all[..i].iter().any(|m| m.eq_ignore_ascii_case(n)), "{n} twice");
        }
        for (g, _) in GROUPS {
            assert!(canonical(g).is_none(), "group {g} shadows a metric");
        }
        assert_eq!(canonical("MULTI-ROUGEL"), Some("multi-rougeL"));
        assert_eq!(family_of("chrf++").unwrap().follows, "sacreBLEU 2.6.0 sentence_chrf");
    }

    /// Every name whose family needs no model, trained file or option builds a scorer that
    /// stores under that name: the entry and its builder agree.
    #[test]
    fn every_entry_builds_its_own_metric() {
        let store = Store::open_in_memory().unwrap();
        let sel = Selection::default();
        let opts = Options::default();
        let mut loaded = Loaded::default();
        let free = ["BLEU", "chrF", "ROUGE", "Hamming", "CIDEr-D"];
        let mut built = 0;
        for f in FAMILIES.iter().filter(|f| free.contains(&f.section)) {
            for &name in f.names {
                let mut cx = Context { name, opts: &opts, loaded: &mut loaded, store: &store, sel: &sel, note: &mut |_| {} };
                match (f.build)(&mut cx).unwrap() {
                    // The stored id is the name, or the name and its convention (`s-bleu.sacre13a`).
                    Ok(Scoring::Plain(s)) => assert!(s.metric() == name || s.metric().starts_with(&format!("{name}.")), "{name} built {}", s.metric()),
                    Ok(Scoring::Acc(_)) => panic!("{name} built as ACC"),
                    Err(e) => panic!("{name}: {e}"),
                }
                built += 1;
            }
        }
        assert_eq!(built, 3 + 4 + 12 + 1 + 12 + 3 + 3);
    }

    /// docs/METHODS.md's index lists the registry as it is, each family under a section the
    /// file has.
    #[test]
    fn methods_index_is_the_registry() {
        let methods = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/METHODS.md")).unwrap();
        for f in FAMILIES {
            assert!(methods.lines().any(|l| l == format!("## {}", f.section)), "no section `## {}` in docs/METHODS.md", f.section);
        }
        let (start, end) = ("<!-- metrics index: `cargo test methods_index` checks it -->\n", "<!-- end of the metrics index -->");
        let index = methods.split_once(start).and_then(|(_, rest)| rest.split_once(end)).map(|(index, _)| index);
        assert_eq!(index, Some(methods_index().as_str()), "docs/METHODS.md's metrics index, between its markers, should be:\n{}", methods_index());
    }
}
