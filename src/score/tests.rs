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
