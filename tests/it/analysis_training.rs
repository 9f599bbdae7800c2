//! Judgments of a campaign's training items are stored and exported, never counted: not in
//! the analysis (aspects, human values, correlations, the report's heatmap), nor in results and
//! agreement (issue 17: the demo-formality cell was one training judgment).

use std::path::{Path, PathBuf};
use tstlab::analysis::correlate::Target;
use tstlab::analysis::data::{self, Names};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign};
use tstlab::human::session::Session;
use tstlab::human::{exchange, results};
use tstlab::store::Store;

fn demo(dir: &Path) -> PathBuf {
    let path = dir.join("s.sqlite");
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    path
}

/// A Likert campaign of `overall` with one real and one training item per direction.
fn create(path: &Path) {
    let def = Definition {
        dataset: "demo-sentiment".into(),
        mode: Mode::Likert,
        directions: vec!["negative->positive".into(), "positive->negative".into()],
        systems: vec!["copy".into(), "lexicon-swap".into()],
        human_reference: false,
        aspects: vec!["overall".into()],
        per_direction: 1,
        training_per_direction: 1,
        repeats: 0.0,
        seed: 5,
        show_reference: false,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    };
    let new = NewCampaign { name: "c".into(), def, annotators: vec!["a".into()] };
    campaign::create(&mut Store::open(path).unwrap(), &new).unwrap();
}

/// Gives every output of the entries `pick` chooses the score `value`; returns their item ids.
fn judge(path: &Path, pick: impl Fn(bool) -> bool, value: f64) -> Vec<i64> {
    let mut s = Session::open(path, "c", "a", false).unwrap();
    let mut items = Vec::new();
    for seq in 0..s.entries.len() {
        if !pick(s.entries[seq].training) {
            continue;
        }
        s.goto(seq, Some(0)).unwrap();
        let m = s.view.rows.len();
        s.commit(vec![Some(value); m]).unwrap();
        items.push(s.entries[seq].item_id);
    }
    items
}

#[test]
fn training_judgments_are_stored_and_exported_but_never_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo(dir.path());
    create(&path);
    // Only training items judged: the aspect is stored but there is nothing to analyse.
    let training = judge(&path, |t| t, 1.0);
    assert_eq!(training.len(), 2);
    let store = Store::open(&path).unwrap();
    let stored = store.counts().unwrap().judgments;
    assert_eq!(stored, 4, "two training items x two systems are stored");
    let names = Names::load(&store, "demo-sentiment").unwrap();
    assert!(data::aspects(&store, names.dataset_id).unwrap().is_empty(), "no aspect from training judgments");
    let e = data::human_values(&store, names.dataset_id, "overall", None).unwrap_err().to_string();
    assert!(e.contains("no human judgments of \"overall\""), "{e}");
    let r = results::compute(&store, "c", Some(20)).unwrap();
    assert_eq!((r.judgments, r.training_judgments), (0, 2));
    drop(store);

    // Real items judged too: only they count.
    let real = judge(&path, |t| !t, 4.0);
    assert_eq!(real.len(), 2);
    let store = Store::open(&path).unwrap();
    let aspects = data::aspects(&store, names.dataset_id).unwrap();
    assert_eq!(aspects.len(), 1);
    assert_eq!((aspects[0].name.as_str(), aspects[0].campaigns[0].judgments), ("overall", 4));
    let h = data::human_values(&store, names.dataset_id, "overall", None).unwrap();
    assert_eq!((h.judgments, h.outputs), (4, 4));
    assert!(h.values.keys().all(|(item, _)| real.contains(item) && !training.contains(item)), "{:?}", h.values);
    assert!(h.values.values().all(|(_, v)| *v == Some(4.0)), "training scores (1) not averaged in: {:?}", h.values);
    let Target::Human(t) = Target::human(&store, &names, "overall", Some("c")).unwrap() else { unreachable!() };
    assert_eq!(t.judgments, 4, "correlations see the real judgments only");
    let r = results::compute(&store, "c", Some(20)).unwrap();
    assert_eq!((r.judgments, r.training_judgments), (2, 2));
    assert!(r.likert.iter().all(|l| l.mean == Some(4.0)), "{:?}", r.likert);
    // The export keeps every judgment, training ones marked by their item's role.
    let lines = exchange::export(&store, "c", "a").unwrap();
    let judgments = lines.iter().filter(|l| matches!(l, exchange::Line::Judgment { .. })).count();
    assert_eq!(judgments, 8);
    let Some(exchange::Line::Campaign { items, .. }) = lines.first() else { panic!("campaign line first") };
    assert_eq!(items.iter().filter(|i| i.role == "training").count(), 2);
}
