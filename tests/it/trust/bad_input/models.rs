//! Model files: broken copies of the tiny RoBERTa fixture (encoders, classifier folders) and of
//! a tiny qwen2 folder, broken GGUF files, given to every command that loads a model.

use super::{Arg, At, Make, Setup, Table, cmd};
use crate::trust::store_guard::{copy_dir, cut, fixture, mkfifo, tiny_gguf, tiny_qwen2};
use std::path::{Path, PathBuf};

const AREA: &str = "models";

/// The tiny qwen2 folder, a tiny llama GGUF and a classifier folder (the RoBERTa fixture with
/// labels) the broken ones are copies of.
pub(super) fn setup(s: &Setup) {
    tiny_qwen2(&s.path("qwen2"));
    tiny_gguf(&s.path("llama.gguf"), "llama", true);
    let cls = s.path("classifier");
    copy_dir(&fixture("tiny-hf/roberta"), &cls);
    let p = cls.join("config.json");
    let mut c: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    c["id2label"] = serde_json::json!({"0": "negative", "1": "positive"});
    std::fs::write(&p, c.to_string()).unwrap();
}

/// A broken copy of a model folder: what `edit` did to it, the file named and the reason.
type Edit = fn(&Path);

fn fifo_for(p: &Path) {
    std::fs::remove_file(p).unwrap();
    mkfifo(p);
}

fn folder_for(p: &Path) {
    std::fs::remove_file(p).unwrap();
    std::fs::create_dir(p).unwrap();
}

/// Faults of a Hugging Face folder: name, edit, the file named ("" for the folder), reason.
const FOLDER_FAULTS: [(&str, Edit, &str, &str); 12] = [
    ("config.json not JSON", |d| std::fs::write(d.join("config.json"), "{not json").unwrap(), "config.json", "key must be a string"),
    ("config.json empty", |d| std::fs::write(d.join("config.json"), "").unwrap(), "config.json", "EOF while parsing"),
    ("config.json a FIFO", |d| fifo_for(&d.join("config.json")), "config.json", "is a FIFO"),
    ("config.json a folder", |d| folder_for(&d.join("config.json")), "config.json", "is a folder"),
    ("no tokenizer", |d| std::fs::remove_file(d.join("tokenizer.json")).unwrap(), "", "tokenizer"),
    ("tokenizer.json garbage", |d| std::fs::write(d.join("tokenizer.json"), "garbage").unwrap(), "tokenizer.json", "expected value"),
    ("weights cut short", |d| cut(&d.join("model.safetensors"), 500), "model.safetensors", "safetensors"),
    ("weights empty", |d| cut(&d.join("model.safetensors"), 0), "model.safetensors", "safetensors"),
    ("weights a FIFO", |d| fifo_for(&d.join("model.safetensors")), "model.safetensors", "is a FIFO"),
    ("weights a folder", |d| folder_for(&d.join("model.safetensors")), "model.safetensors", "is a folder"),
    ("no weights", |d| std::fs::remove_file(d.join("model.safetensors")).unwrap(), "", "model.safetensors"),
    ("config.json a list", |d| std::fs::write(d.join("config.json"), "[1, 2]").unwrap(), "config.json", "expected"),
];

/// A case input: a copy of `from` with `edit` applied.
fn broken(from: PathBuf, edit: Edit) -> Make {
    Make::with(move |dir| crate::trust::store_guard::broken(dir, "model", &from, edit))
}

/// How a command loads a model: the messages of its loader differ in wording.
#[derive(Clone, Copy, PartialEq)]
enum Loader {
    /// `models info`, `models list`: the folder or file inspected.
    Info,
    /// BERT-family encoders (BERTScore).
    Bert,
    /// Sequence-classification folders.
    Classifier,
    /// Causal LMs (transfer, g-PPL): Hugging Face folders and GGUF files.
    Causal,
}

/// The reason a loader gives for a fault (where its wording differs from the others').
fn reason(loader: Loader, fault: &str, default: &'static str) -> &'static str {
    match (loader, fault) {
        (Loader::Bert | Loader::Classifier, "weights cut short" | "weights empty") => "(truncated, corrupted or not this model's weights?)",
        (Loader::Causal, "no weights") => "no .safetensors file",
        (Loader::Classifier, "config.json a list") => "not a sequence-classification config",
        // The tiny GGUF files have no model metadata but the architecture: a causal LM loader
        // stops there, before the tokenizer.
        (Loader::Causal, "GGUF without a tokenizer") => "metadata llama.embedding_length is missing",
        _ => default,
    }
}

fn at(file: &str) -> At {
    if file.is_empty() { At::Input(None) } else { At::Under(file.into(), None) }
}

pub(super) fn all(t: &mut Table, s: &Setup) {
    let roberta = fixture("tiny-hf/roberta");
    let classifier = s.path("classifier");
    let qwen = s.path("qwen2");
    // Encoders and classifier folders: the RoBERTa fixture (with labels for classifiers), broken.
    let encoders: [(&str, Loader, fn() -> Vec<Arg>); 6] = [
        ("models info", Loader::Info, || cmd!["models", "info", Arg::In]),
        ("score --encoder", Loader::Bert, || cmd!["score", "--dataset", "demo-sentiment", "--metrics", "s-bert", "--encoder", Arg::In]),
        ("bench bertscore --model", Loader::Bert, || cmd!["bench", "bertscore", "--pairs", "4", "--model", Arg::In]),
        ("classifier eval --model", Loader::Classifier, || cmd!["classifier", "eval", "--dataset", "demo-sentiment", "--model", Arg::In]),
        ("classifier score --model", Loader::Classifier, || cmd!["classifier", "score", "--dataset", "demo-sentiment", "--model", Arg::In]),
        ("classifier cola --model", Loader::Classifier, || cmd!["classifier", "cola", "--dataset", "demo-sentiment", "--model", Arg::In]),
    ];
    for (command, loader, args) in encoders {
        let from = if loader == Loader::Classifier { &classifier } else { &roberta };
        for (name, edit, file, why) in FOLDER_FAULTS {
            t.case(AREA, format!("{command}: encoder folder, {name}"), broken(from.clone(), edit), args()).refused(at(file), reason(loader, name, why));
        }
    }
    // An encoder folder that is not a classifier; a classifier without its head.
    for command in ["eval", "score", "cola"] {
        let args = cmd!["classifier", command, "--dataset", "demo-sentiment", "--model", Arg::In];
        t.case(AREA, format!("classifier {command} --model: an encoder without labels"), broken(roberta.clone(), |_| {}), args.clone()).refused(At::Under("config.json".into(), None), "no id2label: not a sequence-classification config");
        t.case(AREA, format!("classifier {command} --model: labels without a head"), broken(classifier.clone(), |_| {}), args).refused(At::Input(None), "sequence-classification head");
    }
    // Generators: the tiny qwen2 folder broken, GGUF files broken.
    let generators: [(&str, Loader, fn(&Path) -> Vec<Arg>); 5] = [
        ("models info", Loader::Info, |_| cmd!["models", "info", Arg::In]),
        ("transfer --model", Loader::Causal, |_| cmd!["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--limit", "1", "--model", Arg::In]),
        ("score g-ppl --model", Loader::Causal, |_| cmd!["score", "--dataset", "demo-sentiment", "--metrics", "g-ppl", "--model", Arg::In]),
        ("bench transfer --model", Loader::Causal, |_| cmd!["bench", "transfer", "--n", "1", "--batch", "1", "--model", Arg::In]),
        ("bench score --model", Loader::Causal, |_| cmd!["bench", "score", "--texts", "4", "--lm-texts", "2", "--model", Arg::In]),
    ];
    let gen_faults: [(&str, Edit, &str, &str); 7] = [
        FOLDER_FAULTS[0],
        FOLDER_FAULTS[2],
        FOLDER_FAULTS[4],
        FOLDER_FAULTS[6],
        FOLDER_FAULTS[10],
        ("an unsupported architecture", |d| std::fs::write(d.join("config.json"), r#"{"architectures": ["MambaForCausalLM"], "model_type": "mamba"}"#).unwrap(), "config.json", "unsupported architecture"),
        ("no hidden size", |d| {
            let mut c: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("config.json")).unwrap()).unwrap();
            c.as_object_mut().unwrap().remove("hidden_size");
            std::fs::write(d.join("config.json"), c.to_string()).unwrap();
        }, "config.json", "hidden_size"),
    ];
    let gguf = s.path("llama.gguf");
    let gguf_len = std::fs::metadata(&gguf).unwrap().len() as usize;
    type GgufMake = Box<dyn Fn(&Path) -> PathBuf + Send + Sync>;
    let ggufs: Vec<(&str, GgufMake, &str)> = vec![
        ("GGUF cut short", Box::new(move |d: &Path| { let p = d.join("m.gguf"); std::fs::copy(&gguf, &p).unwrap(); cut(&p, gguf_len - 100); p }), "truncated"),
        ("GGUF empty", Box::new(|d: &Path| { let p = d.join("m.gguf"); std::fs::write(&p, b"").unwrap(); p }), "the file has only 0 bytes"),
        ("GGUF of text", Box::new(|d: &Path| { let p = d.join("m.gguf"); std::fs::write(&p, "not a model at all\n").unwrap(); p }), "not a … GGUF file"),
        ("GGUF of mamba", Box::new(|d: &Path| { let p = d.join("m.gguf"); tiny_gguf(&p, "mamba", true); p }), "unsupported architecture `mamba`"),
        ("GGUF without a tokenizer", Box::new(|d: &Path| { let p = d.join("m.gguf"); tiny_gguf(&p, "llama", false); p }), "no tokenizer"),
        ("GGUF a FIFO", Box::new(|d: &Path| { let p = d.join("m.gguf"); mkfifo(&p); p }), "is a FIFO"),
    ];
    let ggufs: Vec<(&str, std::sync::Arc<GgufMake>, &str)> = ggufs.into_iter().map(|(n, f, r)| (n, std::sync::Arc::new(f), r)).collect();
    for (command, loader, args) in generators {
        for (name, edit, file, why) in gen_faults {
            // `models info` reads a folder's header and files, not every key a loader needs.
            if loader == Loader::Info && name == "no hidden size" {
                continue;
            }
            t.case(AREA, format!("{command}: qwen2 folder, {name}"), broken(qwen.clone(), edit), args(&qwen)).refused(at(file), reason(loader, name, why));
        }
        for (name, make, why) in &ggufs {
            let make = make.clone();
            t.case(AREA, format!("{command}: {name}"), Make::with(move |d| make(d)), args(&qwen)).refused(At::Input(None), reason(loader, name, why));
        }
    }
    // `models list` lists what it was given, broken ones with their problem.
    for (name, edit, file, reason) in FOLDER_FAULTS.iter().take(3) {
        t.case(AREA, format!("models list: encoder folder, {name}"), broken(roberta.clone(), *edit), cmd!["models", "list", Arg::In]).listed(at(file), *reason);
    }
}
