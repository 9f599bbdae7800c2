use super::*;

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

/// t-PPL = sqrt(d-PPL * g-PPL) (METHODS.md section 3): d-PPL as the table's PPL (here the mean
/// over outputs: the configuration names no LM tokenizer, so no token counts), g-PPL at corpus
/// level exp(sum NLL / sum tokens) from the stored details.
#[test]
fn table_t_ppl_combines_d_ppl_and_corpus_g_ppl() {
    use crate::score::table::{self, Column};
    use serde_json::json;
    let mut s = demo();
    let d = s.dataset_id("demo-formality").unwrap();
    let x = s.direction_id(d, "informal->formal").unwrap();
    let (todo, _) = missing(&s, &Selection { dataset_id: Some(d), direction_id: Some(x), systems: vec![] }, "m", "h").unwrap();
    let copy: Vec<i64> = todo.iter().filter(|t| t.system == "copy").map(|t| t.output_id).collect();
    let only_d = table::build(&s, "demo-formality", "informal->formal").unwrap();
    assert!(only_d.absent.contains_key(&Column::TPpl), "no PPL scores at all");
    let mut w = s.writer().unwrap();
    let hd = w.metric_config("d-ppl", &json!({"lm": "t"})).unwrap();
    let hg = w.metric_config("g-ppl", &json!({"lm": "g"})).unwrap();
    let ha = w.metric_config("acc", &json!({"classifier": "ngram", "trained_on": "test sources (5-fold CV)"})).unwrap();
    let (mut nll, mut tokens, mut dsum) = (0.0, 0.0, 0.0);
    for (i, id) in todo.iter().map(|t| t.output_id).enumerate() {
        let (n, k, dv) = (2.0 + 0.1 * i as f64, 5.0 + (i % 3) as f64, 50.0 + i as f64);
        w.score(id, "d-ppl", &hd, Some(dv), None).unwrap();
        w.score(id, "acc", &ha, Some(1.0), None).unwrap();
        w.score(id, "g-ppl", &hg, Some((n / k).exp()), Some(&json!({"nll": n, "tokens": k}).to_string())).unwrap();
        if copy.contains(&id) {
            nll += n;
            tokens += k;
            dsum += dv;
        }
    }
    w.commit().unwrap();
    let t = table::build(&s, "demo-formality", "informal->formal").unwrap();
    let row = t.rows.iter().position(|r| r.system == "copy").unwrap();
    let dppl = dsum / copy.len() as f64;
    let gppl = (nll / tokens).exp();
    assert!((t.value(row, Column::Ppl).unwrap() - dppl).abs() < 1e-9);
    assert!((t.value(row, Column::TPpl).unwrap() - (dppl * gppl).sqrt()).abs() < 1e-9);
    assert!(t.sources[&Column::Ppl].contains("pooled mean"), "{}", t.sources[&Column::Ppl]);
    assert!(t.sources[&Column::TPpl].contains("pooled corpus-tokens"), "{}", t.sources[&Column::TPpl]);
    // The ACC note says what the classifier was trained on.
    assert!(t.sources[&Column::Acc].ends_with("ngram classifier trained on test sources (5-fold CV)"), "{}", t.sources[&Column::Acc]);
}
