//! Campaigns on the demo data: seeded sampling, sessions committing judgments, results,
//! export/import between stores, and two annotators writing to one store at once.

use std::path::{Path, PathBuf};
use tstlab::human::campaign::{self, Definition, Mode, NewCampaign, DEFAULT_ASPECTS};
use tstlab::human::session::{Row, Session};
use tstlab::human::{exchange, rankedit, results};
use tstlab::store::Store;
use crate::common::sql;

fn demo_file(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    tstlab::demo::build(&mut Store::open(&path).unwrap()).unwrap();
    path
}

fn def(seed: u64, mode: Mode) -> Definition {
    Definition {
        dataset: "demo-sentiment".into(),
        mode,
        directions: vec!["negative->positive".into(), "positive->negative".into()],
        systems: vec!["copy".into(), "lexicon-swap".into(), "reference".into()],
        human_reference: true,
        aspects: DEFAULT_ASPECTS.iter().map(|s| s.to_string()).collect(),
        per_direction: 6,
        training_per_direction: 1,
        repeats: 0.25,
        seed,
        show_reference: false,
        design: Default::default(),
        k: None,
        stop: Default::default(),
    }
}

fn create(path: &Path, name: &str, d: Definition, annotators: &[&str]) -> campaign::Campaign {
    let mut store = Store::open(path).unwrap();
    let new = NewCampaign { name: name.into(), def: d, annotators: annotators.iter().map(|s| s.to_string()).collect() };
    campaign::create(&mut store, &new).unwrap()
}

fn addresses(c: &campaign::Campaign) -> Vec<(String, i64, bool)> {
    c.items.iter().map(|i| (i.direction.clone(), i.idx, i.training)).collect()
}

#[test]
fn sampling_is_seeded_and_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let a = create(&demo_file(dir.path(), "a.sqlite"), "c", def(11, Mode::Rank), &["ann"]);
    let b = create(&demo_file(dir.path(), "b.sqlite"), "c", def(11, Mode::Rank), &["ann"]);
    let other = create(&demo_file(dir.path(), "o.sqlite"), "c", def(12, Mode::Rank), &["ann"]);
    assert_eq!(addresses(&a), addresses(&b));
    assert_ne!(addresses(&a), addresses(&other));
    assert_eq!((a.n_real(), a.n_training()), (12, 2));
    // Six real and one training item per direction, no item twice.
    for dir_name in ["negative->positive", "positive->negative"] {
        let n = a.items.iter().filter(|i| i.direction == dir_name && !i.training).count();
        assert_eq!(n, 6);
    }
    let mut idx: Vec<_> = addresses(&a).into_iter().map(|(d, i, _)| (d, i)).collect();
    idx.sort();
    idx.dedup();
    assert_eq!(idx.len(), 14);
    assert_eq!(a.def.seed, 11, "the seed is recorded");
    // The reference system holds each item's first reference.
    let s = Store::open(&dir.path().join("a.sqlite")).unwrap();
    let item = s.item_detail(a.items[0].item_id).unwrap();
    let reference = item.outputs.iter().find(|o| o.system == "reference").unwrap();
    assert_eq!(reference.kind, "human");
    assert_eq!(reference.text, item.references[0]);
    // Same queue in both stores: training first, repeats marked.
    assert_eq!(a.queue("ann"), b.queue("ann"));
    assert!(a.queue("ann")[..2].iter().all(|s| s.training));
    assert_eq!(a.queue("ann").iter().filter(|s| s.repeat).count(), 3);
}

/// Rows best first: display order.
fn as_shown(_: usize, rows: &[Row]) -> Vec<usize> {
    (0..rows.len()).collect()
}

/// Rows best first: by a fixed preference for systems (lowest id first), whatever the display.
fn by_system(_: usize, rows: &[Row]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&r| rows[r].systems.iter().min().copied());
    order
}

/// Ranks every entry of an annotator's queue: the ranking given by `pick` (rows, best first).
fn annotate_all(path: &Path, campaign: &str, annotator: &str, pick: impl Fn(usize, &[Row]) -> Vec<usize>) {
    let mut s = Session::open(path, campaign, annotator, false).unwrap();
    for seq in 0..s.entries.len() {
        s.goto(seq, Some(0)).unwrap();
        for aspect in 0..s.campaign.def.aspects.len() {
            s.set_aspect(aspect).unwrap();
            let order = pick(seq, &s.view.rows);
            let groups: Vec<Vec<usize>> = order.into_iter().map(|r| vec![r]).collect();
            let sizes: Vec<usize> = s.view.rows.iter().map(|r| r.systems.len()).collect();
            let ranks = rankedit::row_ranks(&groups, &sizes);
            s.commit(ranks.into_iter().map(Some).collect()).unwrap();
        }
    }
    assert_eq!(s.progress().real_done, s.progress().real);
}

#[test]
fn results_from_two_annotators() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_file(dir.path(), "s.sqlite");
    create(&path, "c", def(3, Mode::Rank), &["a", "b"]);
    annotate_all(&path, "c", "a", by_system);
    annotate_all(&path, "c", "b", as_shown);
    let store = Store::open(&path).unwrap();
    let r = results::compute(&store, "c", Some(200)).unwrap();
    assert_eq!(r.annotators, ["a", "b"]);
    // 12 real items x 3 aspects x 2 annotators; training left out.
    assert_eq!(r.judgments, 72);
    assert_eq!(r.training_judgments, 2 * 3 * 2);
    let all = r.ranks.iter().find(|c| c.direction == "all" && c.aspect == "all").unwrap();
    for s in &all.systems {
        let m = s.mean.unwrap();
        assert!((1.0..=3.0).contains(&m), "{s:?}");
        assert!(s.sd.is_some(), "two annotators give an SD");
    }
    // Each annotator's mean ranks sum to 6 over three systems (no identical outputs) or less.
    let bt = r.bradley_terry.iter().find(|b| b.aspect == "all").unwrap();
    assert!(bt.strengths.iter().all(|s| s.log_strength.is_some() && s.ci.is_some()), "{bt:?}");
    assert!(bt.win_rate[0][1].is_some());
    let w = &r.agreement[0];
    assert!(w.kendall_w.is_some() && w.alpha_ordinal.is_some() && w.alpha_interval.is_some(), "{w:?}");
    assert_eq!(w.pairwise_tau.len(), 1);
    let a = &r.per_annotator[0];
    assert_eq!(a.judged_items, 15, "12 real items and 3 repeats");
    assert_eq!(a.repeat_pairs, 9, "3 repeats x 3 aspects");
    assert_eq!(a.self_tau, Some(1.0), "a ranks by system whatever the display order");
    let b = &r.per_annotator[1];
    assert!(b.self_tau.unwrap() < 1.0, "b ranks by display order, and repeats come in a new order: {b:?}");
    assert!(b.first_shown_wins.unwrap() > b.first_shown_expected.unwrap(), "b always puts the first shown first: {b:?}");
    assert!(a.first_shown_wins.unwrap() < b.first_shown_wins.unwrap());
    // a and b disagree on training items whose display order is not the system order.
    let d = results::disagreements(&store, "c").unwrap();
    assert!(!d.is_empty());
    assert!(d.iter().all(|x| x.values.len() == 2 && x.spread > 0.0));
    let text = tstlab::human::report::full(&r).join("\n");
    assert!(text.contains("Kendall's W") && text.contains("±") && text.contains("["), "{text}");
}

#[test]
fn likert_penalises_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_file(dir.path(), "s.sqlite");
    let mut d = def(4, Mode::Likert);
    d.aspects = vec!["overall".into()];
    d.repeats = 0.0;
    create(&path, "l", d, &["a", "b"]);
    for who in ["a", "b"] {
        let mut s = Session::open(&path, "l", who, false).unwrap();
        for seq in 0..s.entries.len() {
            s.goto(seq, Some(0)).unwrap();
            let m = s.view.rows.len();
            s.commit(vec![Some(5.0); m]).unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let r = results::compute(&store, "l", Some(50)).unwrap();
    let copy = r.likert.iter().find(|l| l.direction == "all" && l.system == "copy").unwrap();
    assert_eq!(copy.mean, Some(5.0));
    assert_eq!(copy.penalised_mean, Some(3.0), "copy outputs are identical to their source");
    let lex = r.likert.iter().find(|l| l.direction == "all" && l.system == "lexicon-swap").unwrap();
    assert!(lex.penalised_mean.unwrap() > 3.0);
}

#[test]
fn export_import_round_trip_is_idempotent_and_reports_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let here = demo_file(dir.path(), "here.sqlite");
    let there = demo_file(dir.path(), "there.sqlite");
    create(&here, "c", def(9, Mode::Rank), &["a"]);
    annotate_all(&here, "c", "a", by_system);
    let lines = exchange::export(&Store::open(&here).unwrap(), "c", "a").unwrap();
    let mut file = Vec::new();
    exchange::write(&lines, &mut file).unwrap();
    let parsed = exchange::parse(std::str::from_utf8(&file).unwrap(), "a.jsonl").unwrap();
    assert_eq!(parsed, lines);
    let mut other = Store::open(&there).unwrap();
    let r = exchange::import(&mut other, &parsed).unwrap();
    assert!(r.created);
    assert_eq!(r.annotators, ["a"]);
    assert!(r.judgments_added > 0 && r.conflicts.is_empty());
    // The same results in both stores.
    let ra = results::compute(&Store::open(&here).unwrap(), "c", Some(20)).unwrap();
    let rb = results::compute(&other, "c", Some(20)).unwrap();
    assert_eq!(ra.ranks, rb.ranks);
    assert_eq!(ra.per_annotator, rb.per_annotator);
    // Again: nothing new.
    let again = exchange::import(&mut other, &parsed).unwrap();
    assert!(!again.created);
    assert_eq!((again.judgments_added, again.entries_added), (0, 0));
    assert_eq!(again.judgments_unchanged, r.judgments_added);
    // A changed value is a conflict; the stored one stays. Ranks change in pairs (two systems
    // swapped): a single changed rank is no ranking and is refused (issue 14).
    let mut changed = parsed.clone();
    let key = |l: &exchange::Line| match l {
        exchange::Line::Judgment { at, repeat, aspect, value, .. } => Some((at.clone(), *repeat, aspect.clone(), *value)),
        _ => None,
    };
    // Two judgments of one ranking (same item, showing and aspect) with different ranks.
    let (k, m) = (0..changed.len() - 1)
        .find(|&k| match (key(&changed[k]), key(&changed[k + 1])) {
            (Some(a), Some(b)) => (&a.0, a.1, &a.2) == (&b.0, b.1, &b.2) && a.3 != b.3,
            _ => false,
        })
        .map(|k| (k, k + 1))
        .expect("a ranking without a tie");
    let (vk, vm) = (key(&changed[k]).unwrap().3, key(&changed[m]).unwrap().3);
    let mut single = parsed.clone();
    if let exchange::Line::Judgment { value, .. } = &mut single[k] {
        *value += 0.5;
    }
    let err = exchange::import(&mut other, &single).unwrap_err().to_string();
    assert!(err.starts_with("line ") && err.contains("not a ranking 1..3 with ties averaged"), "{err}");
    for (i, v) in [(k, vm), (m, vk)] {
        if let exchange::Line::Judgment { value, .. } = &mut changed[i] {
            *value = v;
        }
    }
    let c = exchange::import(&mut other, &changed).unwrap();
    assert_eq!(c.conflicts.len(), 2);
    assert_eq!(results::compute(&other, "c", Some(20)).unwrap().ranks, ra.ranks);
    // Another definition under the same name is refused.
    let mut d = def(10, Mode::Rank);
    d.per_direction = 5;
    let third = demo_file(dir.path(), "third.sqlite");
    create(&third, "c", d, &[]);
    let err = exchange::import(&mut Store::open(&third).unwrap(), &parsed).unwrap_err().to_string();
    assert!(err.contains("another definition"), "{err}");
}

#[test]
fn two_annotators_write_at_once_without_errors_or_lost_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_file(dir.path(), "s.sqlite");
    let mut d = def(5, Mode::Slider);
    d.per_direction = 12;
    d.training_per_direction = 2;
    create(&path, "c", d, &["a", "b"]);
    let rounds = 6;
    let threads: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|who| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each thread has its own connection (its own Session and Store).
                let mut s = Session::open(&path, "c", who, false).unwrap();
                let mut writes = 0;
                for round in 0..rounds {
                    for seq in 0..s.entries.len() {
                        s.goto(seq, Some(round % 3)).unwrap();
                        let m = s.view.rows.len();
                        let v = (round * 10 + seq % 7) as f64;
                        assert!(s.commit(vec![Some(v); m]).unwrap());
                        writes += 1;
                    }
                }
                (who, writes, s.entries.len())
            })
        })
        .collect();
    let store = Store::open(&path).unwrap();
    let db = sql(&store);
    for t in threads {
        let (who, writes, entries) = t.join().expect("no panic, no error");
        assert_eq!(writes, rounds * entries);
        let logged: i64 = db
            .query_row(
                "SELECT COUNT(*) FROM judgment_log l JOIN annotators a ON l.annotator_id = a.id WHERE a.name = ?1",
                [who],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(logged as usize, writes, "every change of {who} has its history row");
        let c = campaign::load(&store, "c").unwrap();
        let stored: i64 = db
            .query_row(
                "SELECT (SELECT COUNT(*) FROM judgments j JOIN annotators a ON j.annotator_id = a.id
                         WHERE a.name = ?1 AND j.campaign_id = ?2)
                      + (SELECT COUNT(*) FROM repeat_judgments j JOIN annotators a ON j.annotator_id = a.id
                         WHERE a.name = ?1 AND j.campaign_id = ?2)",
                rusqlite::params![who, c.id],
                |r| r.get(0),
            )
            .unwrap();
        // Every entry x 3 aspects x 3 systems.
        assert_eq!(stored as usize, entries * 3 * 3, "{who}");
    }
}

/// A note (comment and flag) is stored through the session's writer, read back, kept through
/// reopening; its changes are undone and redone with the judgments; an empty note is no row;
/// the store refuses a flag other than `unsure` and `skip`.
#[test]
fn item_notes_are_stored_and_survive_reopening() {
    use tstlab::human::note::{Flag, Note};
    let dir = tempfile::tempdir().unwrap();
    let path = demo_file(dir.path(), "s.sqlite");
    let c = create(&path, "c", def(3, Mode::Rank), &["ann"]);
    let mut s = Session::open(&path, "c", "ann", false).unwrap();
    let (item, a) = (s.entry().item_id, s.annotator_id);
    let unsure = Note { comment: "tone is odd".into(), flag: Some(Flag::Unsure) };
    assert!(s.commit_note(unsure.clone()).unwrap());
    assert!(!s.commit_note(unsure.clone()).unwrap(), "the same note changes nothing");
    let row = Store::open(&path).unwrap().item_note(c.id, a, item, false).unwrap().unwrap();
    assert_eq!((row.comment.as_str(), row.flag.as_deref()), ("tone is odd", Some("unsure")));
    // Skipped: done without judgments, passed by next-unfinished.
    assert!(s.commit_note(Note { comment: "tone is odd".into(), flag: Some(Flag::Skip) }).unwrap());
    assert!(s.entry().finished() && s.entry().skipped);
    assert_eq!(s.progress().training_done, 1);
    assert_ne!(s.next_unfinished().map(|(seq, _)| seq), Some(0));
    assert!(s.commit(vec![Some(1.0); s.view.rows.len()]).is_err(), "a skipped item takes no judgment");
    drop(s);
    let mut s = Session::open(&path, "c", "ann", false).unwrap();
    assert_eq!(s.view.note, Note { comment: "tone is odd".into(), flag: Some(Flag::Skip) });
    assert!(s.entries[0].skipped, "skipped after reopening");
    // Undo puts the earlier note back, redo the later; both in the history with the judgments.
    assert!(s.undo().unwrap());
    assert_eq!(s.view.note, unsure);
    assert!(!s.entries[0].skipped);
    assert!(s.redo().unwrap());
    assert!(s.entries[0].skipped);
    // A judged item is never skipped: judge it (unflagged first), then skip is refused.
    assert!(s.commit_note(Note::default()).unwrap());
    assert!(Store::open(&path).unwrap().item_note(c.id, a, item, false).unwrap().is_none(), "an empty note is no row");
    let sizes: Vec<usize> = s.view.rows.iter().map(|r| r.systems.len()).collect();
    let ranks = rankedit::row_ranks(&rankedit::initial(sizes.len()), &sizes);
    s.commit(ranks.into_iter().map(Some).collect()).unwrap();
    let err = s.commit_note(Note { comment: String::new(), flag: Some(Flag::Skip) }).unwrap_err().to_string();
    assert!(err.contains("undo them before skipping"), "{err}");
    let conn = sql(&Store::open(&path).unwrap());
    let bad = conn.execute(
        &format!("INSERT INTO item_notes(campaign_id, annotator_id, item_id, repeat, flag) VALUES ({}, {a}, {item}, 1, 'maybe')", c.id),
        [],
    );
    assert!(bad.is_err(), "the schema refuses another flag");
}
