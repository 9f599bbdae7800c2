//! Analysis on a store with known values (tests/common): rows from the store, the three
//! levels per direction and overall, orientation, metric configurations, trade-off points,
//! the Joint table with present and absent inputs, and the report folder.

use crate::common;

use common::*;
use tstlab::analysis::bootstrap::BootstrapSpec;
use tstlab::analysis::corr::{kendall_tau_b, CorrKind};
use tstlab::analysis::correlate::{cell, correlate, CorrOptions, Level, Part, Target};
use tstlab::analysis::data::{self, Names};
use tstlab::analysis::joint_data::{choose, JointOptions};
use tstlab::analysis::joint_table::joint_table;
use tstlab::analysis::matrix::{self, MatrixOptions};
use tstlab::analysis::meta::Undefined;
use tstlab::analysis::orient::Orientations;
use tstlab::analysis::report::{write_report, ReportOptions};
use tstlab::analysis::scope::Scope;
use tstlab::analysis::tradeoff::{tradeoff_data, Grouping};
use tstlab::metrics::family::{r_bleu, Convention};
use tstlab::metrics::joint::{g2, joint, BleuLevel};
use tstlab::store::Store;

fn setup(store: &Store) -> (Names, Vec<data::MetricKey>) {
    let names = Names::load(store, "toy").unwrap();
    let keys = data::metric_keys(store, names.dataset_id).unwrap();
    (names, keys)
}

fn value(r: &tstlab::analysis::meta::MetaReport, part: Part, level: Level) -> Option<f64> {
    cell(r, part, level).unwrap().value
}

#[test]
fn labels_and_human_means_come_from_the_store() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let labels: Vec<&str> = keys.iter().map(|k| k.label.as_str()).collect();
    assert_eq!(labels, ["acc", "dup@x", "dup@y", "ppl.toy", "r-bleu.nltk", "wmd"]);
    assert!(keys.iter().all(|k| k.scores == 32 && k.defined == 32));
    let h = data::human_values(&store, names.dataset_id, "content", None).unwrap();
    // 32 outputs, one judged by one annotator only.
    assert_eq!((h.outputs, h.outputs_multi, h.judgments), (32, 31, 63));
    let d1 = names.find_direction("formal->informal").unwrap();
    let items = data::item_numbers(&store, names.dataset_id).unwrap();
    let gamma = *names.systems.iter().find(|(_, n)| *n == "gamma").unwrap().0;
    let (&(item, _), &(dir, v)) = h.values.iter().find(|((it, s), (d, _))| *s == gamma && *d == d1 && items[it] == 4).unwrap();
    assert_eq!((dir, v), (d1, Some(content(1, 4, 3).0)), "item {item}: the one annotator's value");
    let (&_, &(_, v)) = h.values.iter().find(|((it, s), (d, _))| *s == gamma && *d == d1 && items[it] == 3).unwrap();
    assert_eq!(v, Some(content(1, 3, 3).0 + 1.0), "mean of a and a + 2");
    assert!(data::human_values(&store, names.dataset_id, "fluency", None).unwrap_err().to_string().contains("content, style"));
}

#[test]
fn three_levels_per_direction_and_overall() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let (metrics, notes) = data::resolve_metrics(&keys, "r-bleu.nltk,wmd").unwrap();
    assert!(notes.is_empty());
    let target = Target::human(&store, &names, "content", None).unwrap();
    let opts = CorrOptions { method: CorrKind::KendallTauB, bootstrap: None, direction: None, undefined: Undefined::Skip };
    let entries = correlate(&store, &names, &metrics, &target, &Orientations::default(), &opts, &Scope::all()).unwrap();
    let d0 = Part::Direction(names.find_direction("informal->formal").unwrap());
    let d1 = Part::Direction(names.find_direction("formal->informal").unwrap());
    for e in &entries {
        let r = &e.report;
        // informal->formal: human = 100 bleu + 1: perfect agreement everywhere.
        for l in Level::ALL {
            assert_eq!(value(r, d0, l), Some(1.0), "{} {l:?}", e.metric.label);
        }
        // formal->informal: human falls as bleu rises across systems.
        assert_eq!(value(r, d1, Level::System), Some(-1.0));
        assert_eq!(value(r, d1, Level::PairwiseAccuracy), Some(0.0));
        assert_eq!(value(r, d1, Level::Sample), Some(-1.0));
        let (mut m, mut h) = (Vec::new(), Vec::new());
        for i in 1..=4 {
            for s in 0..4 {
                let (a, b) = content(1, i, s);
                m.push(bleu(i, s));
                h.push(b.map_or(a, |b| (a + b) / 2.0));
            }
        }
        assert!((value(r, d1, Level::Dataset).unwrap() - kendall_tau_b(&m, &h).unwrap()).abs() < 1e-12);
        // overall: system level is the mean of the two directions, the others pool.
        assert_eq!(value(r, Part::Overall, Level::System), Some(0.0));
        assert_eq!(value(r, Part::Overall, Level::PairwiseAccuracy), Some(0.5));
        assert_eq!(value(r, Part::Overall, Level::Sample), Some(0.0));
        let c = cell(r, Part::Overall, Level::Sample).unwrap();
        assert_eq!((c.n, c.n_of, c.undefined), (8, "sources", 0));
        assert_eq!(cell(r, Part::Overall, Level::Dataset).unwrap().n, 32);
    }
    // wmd = 1 - bleu is lower-is-better: negated, the same numbers as bleu.
    assert_eq!(entries[1].report.directions, entries[0].report.directions);
    assert!(entries[1].report.metric_negated && !entries[0].report.metric_negated);
    // Overriding the table flips it.
    let flip = Orientations { higher: vec!["wmd".into()], lower: vec![] };
    let e = correlate(&store, &names, &metrics[1..], &target, &flip, &opts, &Scope::all()).unwrap();
    assert_eq!(value(&e[0].report, d0, Level::Dataset), Some(-1.0));
}

#[test]
fn a_direction_filter_and_bootstrap_intervals() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let (metrics, _) = data::resolve_metrics(&keys, "acc").unwrap();
    let target = Target::human(&store, &names, "style", None).unwrap();
    let d0 = names.find_direction("informal->formal").unwrap();
    let opts = CorrOptions { method: CorrKind::Pearson, bootstrap: Some(BootstrapSpec::new(200, 3)), direction: Some(d0), undefined: Undefined::Skip };
    let e = correlate(&store, &names, &metrics, &target, &Orientations::default(), &opts, &Scope::all()).unwrap();
    let r = &e[0].report;
    assert_eq!(r.directions.len(), 1);
    let c = cell(r, Part::Direction(d0), Level::Dataset).unwrap();
    assert!(c.ci.unwrap().lo <= c.value.unwrap() && c.value.unwrap() <= c.ci.unwrap().hi);
    // Per source, acc is 0/1 and style = 10 acc + i: per-source Pearson is 1 unless acc is
    // constant across systems (never here: alpha 1, beta_v2 0).
    assert!((value(r, Part::Direction(d0), Level::Sample).unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn metric_configs_are_chosen_and_said() {
    let store = toy_store(true);
    let (_, keys) = setup(&store);
    let (k, note) = data::resolve_metric(&keys, "dup").unwrap();
    assert_eq!(k.label, "dup@x");
    assert!(note.unwrap().contains("dup has 2 configurations (dup@x, dup@y): used dup@x"));
    assert_eq!(data::resolve_metric(&keys, "dup@file=y").unwrap().0.label, "dup@y");
}

#[test]
fn metric_by_metric_matrix_is_symmetric_with_a_unit_diagonal() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let m = matrix::metric_matrix(&store, &names, &keys, &Orientations::default(), &MatrixOptions::plain(CorrKind::KendallTauB)).unwrap();
    let v = m.values(Part::Overall, Level::Dataset);
    for r in 0..keys.len() {
        assert_eq!(v[r][r], Some(1.0), "{}", keys[r].label);
        for (c, row) in v.iter().enumerate() {
            assert_eq!(v[r][c], row[r]);
        }
    }
    let i = |l: &str| keys.iter().position(|k| k.label == l).unwrap();
    assert_eq!(v[i("dup@x")][i("dup@y")], Some(-1.0));
    assert_eq!(v[i("r-bleu.nltk")][i("wmd")], Some(1.0), "wmd negated agrees with bleu");
    let h = m.heatmap(&names, Part::Overall, Level::Dataset);
    assert!(h.rows.contains(&"wmd ↓".to_owned()) && h.note.contains("n = 32 outputs per cell"), "{h:?}");
}

#[test]
fn tradeoff_points_and_pareto_front() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let x = data::resolve_metric(&keys, "r-bleu.nltk").unwrap().0;
    let y = data::resolve_metric(&keys, "acc").unwrap().0;
    let d0 = names.find_direction("informal->formal").unwrap();
    let t = tradeoff_data(&store, &names, &x, &y, &Grouping::Direction, Some(d0), &Orientations::default(), false).unwrap();
    let got: Vec<(&str, f64, f64, bool)> = t.points.iter().map(|p| (p.system.as_str(), p.x, p.y, p.on_front)).collect();
    let mean = |s: usize, f: &dyn Fn(usize, usize) -> f64| (1..=4).map(|i| f(i, s)).sum::<f64>() / 4.0;
    for (s, name) in SYSTEMS.iter().enumerate() {
        let p = got.iter().find(|g| g.0 == *name).unwrap();
        assert!((p.1 - mean(s, &bleu)).abs() < 1e-12 && (p.2 - mean(s, &acc)).abs() < 1e-12, "{p:?}");
        assert_eq!(p.3, *name != "gamma", "gamma (0.075, 0.25) is dominated by alpha (0.125, 1)");
    }
    // Runs of one model: beta_v1 and beta_v2 share a prefix and a manifest "model".
    for g in [Grouping::Prefix, Grouping::Manifest("model".into())] {
        let t = tradeoff_data(&store, &names, &x, &y, &g, None, &Orientations::default(), false).unwrap();
        let beta: Vec<&str> = t.points.iter().filter(|p| p.group == "beta").map(|p| p.system.as_str()).collect();
        assert_eq!(beta, ["beta_v1", "beta_v2"], "{g:?}");
        let fig = t.figure("t");
        assert_eq!(fig.series.iter().find(|s| s.name == "beta").unwrap().points[0].label, "v1");
    }
}

#[test]
fn joint_table_with_and_without_ppl() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let (choice, _) = choose(&keys, &JointOptions::default()).unwrap();
    assert_eq!((choice.acc.as_ref().unwrap().label.as_str(), choice.ppl.as_ref().unwrap().label.as_str()), ("acc", "ppl.toy"));
    // Default BLEU: corpus BLEU of the texts in the table's convention, r-BLEU (one reference).
    let t = joint_table(&store, &names, &choice, Some(&BootstrapSpec::new(300, 1))).unwrap();
    assert_eq!(t.rows.len(), 12, "4 systems x (2 directions + all)");
    let sig = &t.part("informal->formal").unwrap().signature;
    assert!(sig.contains("|bleu:r-bleu.nltk|level:corpus|") && sig.contains("|pool:mean|"), "{sig}");
    let alpha = t.rows.iter().find(|r| r.part == "informal->formal" && r.system == "alpha").unwrap();
    let texts: Vec<String> = (1..=4).map(|i| format!("alpha says formal {i}")).collect();
    let refs: Vec<Vec<String>> = (1..=4).map(|i| vec![format!("formal reference {i} & more")]).collect();
    let corpus = 100.0 * r_bleu(&Convention::nltk(), &texts, &refs).unwrap();
    let mean_ppl = (1..=4).map(|i| ppl(i, 0)).sum::<f64>() / 4.0;
    assert_eq!((alpha.acc, alpha.bleu, alpha.outputs), (Some(100.0), Some(corpus), 4));
    assert!((alpha.ppl.unwrap() - mean_ppl).abs() < 1e-9, "no token counts: the mean, named in the signature");
    assert_eq!(alpha.joint, joint(100.0, corpus, alpha.ppl.unwrap()));

    // The stored sentence values on request: BLEU 12.5 (0-1 values, config scale 1, shown 0-100).
    let opts = JointOptions { bleu: Some("r-bleu.nltk".into()), bleu_level: Some(BleuLevel::SentenceMean), ..Default::default() };
    let (choice, _) = choose(&keys, &opts).unwrap();
    let t = joint_table(&store, &names, &choice, Some(&BootstrapSpec::new(300, 1))).unwrap();
    assert!(t.parts[0].signature.contains("|bleu:r-bleu.nltk@") && t.parts[0].signature.contains("|level:sentence-mean|"));
    let alpha = t.rows.iter().find(|r| r.part == "informal->formal" && r.system == "alpha").unwrap();
    assert_eq!((alpha.acc, alpha.outputs), (Some(100.0), 4));
    assert!((alpha.bleu.unwrap() - 12.5).abs() < 1e-9, "0-1 BLEU (config scale 1) shown 0-100");
    assert!((alpha.joint.unwrap() - joint(100.0, 12.5, mean_ppl).unwrap()).abs() < 1e-9);
    assert_eq!(alpha.g2, g2(100.0, alpha.bleu.unwrap()));
    let ci = alpha.ci.unwrap();
    assert!(ci.lo <= alpha.joint.unwrap() && alpha.joint.unwrap() <= ci.hi);
    let beta2 = t.rows.iter().find(|r| r.part == "all directions" && r.system == "beta_v2").unwrap();
    assert_eq!((beta2.acc, beta2.joint, beta2.outputs), (Some(0.0), Some(0.0), 8));
    // A stored metric cannot be recomputed as corpus BLEU: said so, not guessed.
    let err = choose(&keys, &JointOptions { bleu: Some("wmd".into()), ..Default::default() }).unwrap_err().to_string();
    assert!(err.contains("cannot be recomputed as corpus BLEU") && err.contains("sentence-mean"), "{err}");

    let store = toy_store(false);
    let (names, keys) = setup(&store);
    let (choice, _) = choose(&keys, &JointOptions::default()).unwrap();
    assert!(choice.ppl.is_none());
    let t = joint_table(&store, &names, &choice, Some(&BootstrapSpec::new(50, 1))).unwrap();
    assert!(t.rows.iter().all(|r| r.joint.is_none() && r.ci.is_none() && r.ppl.is_none() && r.acc.is_some()));
    let md = tstlab::analysis::report_tables::joint_table(&t, Some(2)).markdown();
    assert!(md.contains("PPL = absent") && md.contains("| absent | absent | — |"), "{md}");
}

fn opts() -> ReportOptions {
    ReportOptions {
        method: CorrKind::KendallTauB,
        bootstrap: Some(BootstrapSpec::new(100, 0)),
        metrics: "all".into(),
        orient: Orientations::default(),
        campaign: None,
        tradeoff_x: None,
        tradeoff_y: None,
        grouping: Grouping::Direction,
        joint: JointOptions::default(),
        items: Some("1".into()),
        rank_metric: None,
        metric_heatmap: true,
        undefined: Undefined::Skip,
        scope: Default::default(),
        significance: Vec::new(),
    }
}

#[test]
fn report_folder_holds_tables_figures_and_an_index() {
    let store = toy_store(true);
    let (names, keys) = setup(&store);
    let dir = tempfile::tempdir().unwrap();
    let sum = write_report(&store, &names, dir.path(), &opts()).unwrap();
    assert!(sum.skipped.is_empty(), "{:?}", sum.skipped);
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    for f in [
        "index.md", "correlations/content.md", "correlations/content.tex", "correlations/content.csv", "correlations/style.csv",
        "correlations.json", "tradeoff.md", "tradeoff.csv", "joint.md", "joint.tex", "joint.csv", "ranks-content.md",
        "ranks-content.csv", "case-study.md", "case-study.tex",
    ] {
        assert!(!read(f).is_empty(), "{f}");
    }
    let index = read("index.md");
    assert!(index.contains("[correlations/content.md](correlations/content.md)"), "{index}");
    assert!(index.contains("| content | overall | sample |"), "{index}");
    assert!(!index.contains(".svg)"), "SVGs are not listed one by one");
    // CSV: one row per metric, part (2 directions, overall, pooled) and level, with the signature.
    let csv = read("correlations/content.csv");
    assert_eq!(csv.lines().count(), 1 + keys.len() * 4 * 4);
    assert!(csv.contains("r-bleu.nltk,r-bleu.nltk,") && csv.contains(",formal->informal,system,-1,"), "{csv}");
    assert!(csv.contains(",pooled,system,") && csv.lines().nth(1).unwrap().ends_with(&format!("|bs:100|seed:0|version:{}\"", env!("CARGO_PKG_VERSION"))), "{csv}");
    assert!(index.contains("signature `method:kendall_tau_b|levels:system,pairacc,sample,dataset|undef:skip|"), "{index}");
    // Figures decode at their stated sizes.
    let m = matrix::human_matrix(&store, &names, &keys, &["content".into(), "style".into()], None, &Orientations::default(), &MatrixOptions::plain(CorrKind::KendallTauB)).unwrap();
    for (file, size) in [
        ("figures/heatmap-human-dataset-overall.png", m.heatmap(&names, Part::Overall, Level::Dataset).size()),
        ("figures/heatmap-human-system-informal-to-formal.png", m.heatmap(&names, Part::Direction(names.find_direction("informal->formal").unwrap()), Level::System).size()),
        ("figures/tradeoff.png", tstlab::plot::Tradeoff::SIZE),
    ] {
        let img = image::open(dir.path().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((img.width(), img.height()), size, "{file}");
        assert!(dir.path().join(file).with_extension("svg").is_file(), "{file} as SVG");
    }
    let joint = image::open(dir.path().join("figures/joint-informal-to-formal.png")).unwrap();
    assert_eq!(joint.width(), 1200);
    assert!(dir.path().join("figures/heatmap-metrics-dataset-overall.png").is_file());
    // The case study escapes LaTeX and Markdown specials of the source.
    let tex = read("case-study.tex");
    assert!(tex.contains(r"u owe me \$5 \& 50\% of it\_ok \{now\} \#1 \textasciitilde{}ya \textbar{} *lol*"), "{tex}");
    let md = read("case-study.md");
    assert!(md.contains(r"| source | u owe me $5 & 50% of it\_ok \{now\} \#1 \~ya \| \*lol\* |"), "{md}");
    assert!(md.contains("## toy/formal-\\>informal/1"), "item 1 of every direction: {md}");
    let ranks = read("ranks-content.md");
    assert!(ranks.contains("item 1 (human / metric)") && ranks.contains("Mean Kendall tau-b"), "{ranks}");
}

#[test]
fn report_says_what_it_left_out() {
    let store = toy_store(false);
    let (names, _) = setup(&store);
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.items = None;
    o.metric_heatmap = false;
    let sum = write_report(&store, &names, dir.path(), &o).unwrap();
    assert!(sum.skipped.iter().any(|s| s.contains("Joint figures: missing inputs PPL")), "{:?}", sum.skipped);
    let index = std::fs::read_to_string(dir.path().join("index.md")).unwrap();
    assert!(index.contains("## Not in this report") && index.contains("missing inputs PPL"), "{index}");
    assert!(!dir.path().join("case-study.md").exists());
}
