use super::*;
use serde_json::Value;

/// Counts words; fails on demand, to test partial progress.
struct WordCount {
    calls: usize,
    fail_on_call: Option<usize>,
}

impl Scorer for WordCount {
    fn metric(&self) -> String {
        "words".into()
    }
    fn config(&self) -> Value {
        serde_json::json!({"split": "whitespace"})
    }
    fn score(&mut self, batch: &[Target]) -> anyhow::Result<Vec<Option<f64>>> {
        self.calls += 1;
        if Some(self.calls) == self.fail_on_call {
            anyhow::bail!("interrupted");
        }
        Ok(batch
            .iter()
            .map(|t| (!t.text.is_empty()).then(|| t.text.split_whitespace().count() as f64))
            .collect())
    }
    fn batch_size(&self) -> usize {
        50
    }
}

fn demo() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    crate::demo::build(&mut s).unwrap();
    s
}

/// The demo store in a file under `dir`, for a test that changes the file as another program does.
fn demo_file(dir: &std::path::Path) -> Store {
    let mut s = Store::open(&dir.join("demo.sqlite")).unwrap();
    crate::demo::build(&mut s).unwrap();
    s
}

#[test]
fn scores_are_cached_and_only_missing_ones_computed() {
    let mut s = demo();
    let total = s.counts().unwrap().outputs as usize;
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    let mut scorer = WordCount { calls: 0, fail_on_call: None };
    let o = run(&mut s, &mut scorer, &Selection::default(), &cancel, &mut |p| seen.push(p)).unwrap();
    assert_eq!((o.computed, o.cached), (total, 0));
    assert_eq!(seen.last().unwrap().done, total);
    let o = run(&mut s, &mut scorer, &Selection::default(), &cancel, &mut |_| {}).unwrap();
    assert_eq!((o.computed, o.cached), (0, total));
    let item = s.find_item("demo-sentiment/negative->positive/1").unwrap();
    let d = s.item_detail(item).unwrap();
    let copy = d.outputs.iter().find(|o| o.system == "copy").unwrap();
    assert_eq!(copy.scores[0].value, Some(d.source.split_whitespace().count() as f64));
}

#[test]
fn an_interrupted_run_keeps_finished_batches() {
    let mut s = demo();
    let cancel = AtomicBool::new(false);
    let mut failing = WordCount { calls: 0, fail_on_call: Some(3) };
    assert!(run(&mut s, &mut failing, &Selection::default(), &cancel, &mut |_| {}).is_err());
    assert_eq!(s.counts().unwrap().scores, 100, "two batches of 50 landed");
    let mut ok = WordCount { calls: 0, fail_on_call: None };
    let o = run(&mut s, &mut ok, &Selection::default(), &cancel, &mut |_| {}).unwrap();
    assert_eq!(o.cached, 100);
    cancel.store(true, Ordering::Relaxed);
    let o = run(&mut s, &mut ok, &Selection::default(), &cancel, &mut |_| {}).unwrap();
    assert!(!o.cancelled, "nothing left to do");
}

#[test]
fn selection_by_direction_and_system() {
    let s = demo();
    let d = s.dataset_id("demo-formality").unwrap();
    let x = s.direction_id(d, "informal->formal").unwrap();
    let sel = Selection { dataset_id: Some(d), direction_id: Some(x), systems: vec!["copy".into()] };
    let (todo, _) = missing(&s, &sel, "m", "h").unwrap();
    assert_eq!(todo.len(), 35);
    assert!(todo.iter().all(|t| t.system == "copy" && t.text == t.source && !t.references.is_empty()));
}

/// t-PPL = sqrt(d-PPL * g-PPL) (docs/METHODS.md, PPL) and the PPL column, pooled the most
/// faithful way the scores allow or as asked: d-PPL's token counts come through its LM's
/// tokenizer (words, and `</s>` as a predicted token), g-PPL's from the stored details. A pooling
/// the scores cannot give is absent, never shown pooled another way.
#[test]
fn table_t_ppl_combines_d_ppl_and_g_ppl_pooled_as_asked() {
    use crate::metrics::joint::PplPooling;
    use crate::models::words::Tokenizer;
    use crate::score::table::{self, Column, Options};
    use serde_json::json;
    let home = tempfile::tempdir().unwrap();
    let mut s = demo_file(home.path());
    let d = s.dataset_id("demo-formality").unwrap();
    let x = s.direction_id(d, "informal->formal").unwrap();
    let (todo, _) = missing(&s, &Selection { dataset_id: Some(d), direction_id: Some(x), systems: vec![] }, "m", "h").unwrap();
    let only_d = table::build(&s, "demo-formality", "informal->formal").unwrap();
    assert!(only_d.absent.contains_key(&Column::TPpl), "no PPL scores at all");
    let mut w = s.writer().unwrap();
    let hd = w.metric_config("d-ppl", &json!({"lm": "t", "styles": {"formal": {"tokenizer": "lower"}}})).unwrap();
    let hg = w.metric_config("g-ppl", &json!({"lm": "g"})).unwrap();
    let ha = w.metric_config("acc", &json!({"classifier": "ngram", "trained_on": "test sources (5-fold CV)"})).unwrap();
    let (mut nll, mut tokens, mut gsum, mut dsum, mut dnll, mut dtok, mut dwords, mut n) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (i, t) in todo.iter().enumerate() {
        let (nl, k, dv) = (2.0 + 0.1 * i as f64, 5.0 + (i % 3) as f64, 50.0 + i as f64);
        w.score(t.output_id, "d-ppl", &hd, Some(dv), None).unwrap();
        w.score(t.output_id, "acc", &ha, Some(1.0), None).unwrap();
        w.score(t.output_id, "g-ppl", &hg, Some((nl / k).exp()), Some(&json!({"nll": nl, "tokens": k}).to_string())).unwrap();
        if t.system == "copy" {
            let words = Tokenizer::Lower.tokens(&t.text).len() as f64;
            (nll, tokens, gsum, dsum) = (nll + nl, tokens + k, gsum + (nl / k).exp(), dsum + dv);
            (dnll, dtok, dwords, n) = (dnll + dv.ln() * (words + 1.0), dtok + words + 1.0, dwords + words, n + 1.0);
        }
    }
    w.commit().unwrap();
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-12;
    let gppl = (nll / tokens).exp();
    // By default: d-PPL over words (TSTBench), g-PPL over tokens (it keeps no word counts).
    let t = table::build(&s, "demo-formality", "informal->formal").unwrap();
    let row = t.rows.iter().position(|r| r.system == "copy").unwrap();
    let dppl = (dnll / dwords).exp();
    assert!(close(t.value(row, Column::Ppl).unwrap(), dppl));
    assert!(close(t.value(row, Column::TPpl).unwrap(), (dppl * gppl).sqrt()));
    assert_eq!(t.header(Column::Ppl), "PPL.corpus-words");
    assert!(t.sources[&Column::Ppl].contains("pooled corpus-words"), "{}", t.sources[&Column::Ppl]);
    assert!(t.sources[&Column::TPpl].contains("pooled corpus-tokens"), "{}", t.sources[&Column::TPpl]);
    // The ACC note says what the classifier was trained on.
    assert!(t.sources[&Column::Acc].ends_with("ngram classifier trained on test sources (5-fold CV)"), "{}", t.sources[&Column::Acc]);
    let asked = |s: &Store, p: PplPooling| table::build_with(s, "demo-formality", "informal->formal", &Options { bleu: None, ppl_pooling: Some(p) }).unwrap();
    let t = asked(&s, PplPooling::CorpusTokens);
    let dppl = (dnll / dtok).exp();
    assert!(close(t.value(row, Column::Ppl).unwrap(), dppl));
    assert!(close(t.value(row, Column::TPpl).unwrap(), (dppl * gppl).sqrt()));
    assert_eq!(t.header(Column::Ppl), "PPL.corpus-tokens");
    let t = asked(&s, PplPooling::Mean);
    let (dppl, gppl) = (dsum / n, gsum / n);
    assert!(close(t.value(row, Column::Ppl).unwrap(), dppl));
    assert!(close(t.value(row, Column::TPpl).unwrap(), (dppl * gppl).sqrt()));
    assert_eq!(t.header(Column::Ppl), "PPL.mean");
    // d-PPL scores whose configuration names no tokenizer have no token counts: pooled as a
    // mean by default (and named so); a corpus pooling asked for is absent, and so is Joint.
    let mut w = s.writer().unwrap();
    let bare = w.metric_config("d-ppl", &json!({"lm": "imported"})).unwrap();
    for t in &todo {
        w.score(t.output_id, "d-ppl", &bare, Some(40.0), None).unwrap();
    }
    w.commit().unwrap();
    rusqlite::Connection::open(s.path()).unwrap().execute("DELETE FROM scores WHERE config = ?1", [&hd]).unwrap();
    let t = table::build(&s, "demo-formality", "informal->formal").unwrap();
    assert_eq!(t.value(row, Column::Ppl), Some(40.0));
    assert_eq!(t.header(Column::Ppl), "PPL.mean");
    let t = asked(&s, PplPooling::CorpusWords);
    assert!(t.rows.iter().all(|r| r.values[Column::ALL.iter().position(|c| *c == Column::Ppl).unwrap()].is_none()));
    assert!(t.absent[&Column::Ppl].contains("cannot be pooled corpus-words"), "{}", t.absent[&Column::Ppl]);
    assert!(t.absent.contains_key(&Column::TPpl) && t.absent.contains_key(&Column::Joint));
}
