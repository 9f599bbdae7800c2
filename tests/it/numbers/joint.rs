//! One Joint (issue 15, point 2). A store built from DualRL's Yelp outputs (15 systems, two
//! directions; ACC from the n-gram classifier and d-PPL from TSTBench-style n-gram LMs, both
//! trained and scored offline in seconds) must show the same Joint and G2 for every system and
//! direction everywhere: `tstlab table` as text, CSV, JSON, Markdown and LaTeX files, the
//! report's joint.csv, joint.md and index.md, the Joint intervals plot (its data and the CLI),
//! the TUI Scores screen and the Analysis screen's trade-off list (ratatui's TestBackend). The
//! number itself is checked against TSTBench's formula computed by hand from the anchor files
//! and the trained LM files.

use crate::anchor;
use crate::bin::{json, tstlab};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tstlab::analysis::bootstrap::BootstrapSpec;
use tstlab::analysis::data::{metric_keys, Names};
use tstlab::analysis::joint_data::{self, JointOptions};
use tstlab::analysis::joint_table::{figure, joint_table};
use tstlab::jobs::Jobs;
use tstlab::metrics::family::{multi_bleu, Convention};
use tstlab::models::ngram_lm::Model;
use tstlab::models::words::Tokenizer;
use tstlab::store::Store;
use tstlab::tui::{App, Loader};

const DIRECTIONS: [(&str, usize); 2] = [("negative->positive", 0), ("positive->negative", 1)];

/// The one function's numbers for a (direction, system).
#[derive(Debug, Clone, Copy)]
struct Want {
    joint: f64,
    g2: f64,
    acc: f64,
    bleu: f64,
    ppl: f64,
}

fn lines(p: &Path) -> Vec<String> {
    String::from_utf8_lossy(&std::fs::read(p).unwrap()).lines().map(str::to_owned).collect()
}

fn run(home: &Path, args: &[&str]) -> String {
    let out = tstlab(home).args(args).output().unwrap();
    assert!(out.status.success(), "tstlab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn close(what: &str, got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{what}: {got} != {want}");
}

#[test]
fn every_surface_shows_the_one_joint() {
    let Some(root) = anchor::dir("DualRL") else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let path = dir.path().join("yelp.sqlite");
    let p = path.to_str().unwrap();
    run(&home, &["--store", p, "import", "dualrl", root.to_str().unwrap()]);
    // BLEU stored in TSTBench's convention makes it the table's, hence Joint's.
    run(&home, &["--store", p, "score", "--dataset", "yelp", "--metrics", "acc,d-ppl,multi-bleu", "--bleu", "tstbench"]);

    // The one function: analysis::joint_data + metrics::joint.
    let store = Store::open(&path).unwrap();
    let names = Names::load(&store, "yelp").unwrap();
    let (choice, _) = joint_data::choose(&metric_keys(&store, names.dataset_id).unwrap(), &JointOptions::default()).unwrap();
    let mut want: BTreeMap<(String, String), Want> = BTreeMap::new();
    let mut signature: BTreeMap<String, (String, String)> = BTreeMap::new();
    for part in joint_data::load(&store, &names, &choice, None).unwrap() {
        signature.insert(part.label.clone(), (part.spec.signature(), part.spec.g2_signature()));
        for s in &part.systems {
            let p = s.pool(&part.spec, None);
            let w = Want { joint: p.joint.unwrap(), g2: p.g2.unwrap(), acc: p.acc.unwrap(), bleu: p.bleu.unwrap(), ppl: p.ppl.unwrap() };
            want.insert((part.label.clone(), s.name.clone()), w);
        }
    }
    let systems: Vec<String> = std::fs::read_dir(root.join("outputs/yelp")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(systems.len(), 15);
    assert_eq!(want.len(), 15 * 3, "15 systems x (2 directions + all directions)");
    let sig = &signature["negative->positive"].0;
    assert_eq!(sig.split('|').next(), Some("joint:tstbench"));
    assert!(sig.contains("|bleu:multi-bleu.tstbench|level:corpus|") && sig.contains("|pool:corpus-words|") && sig.ends_with("|scale:100"), "{sig}");

    by_hand_from_the_files(&root, &home, &store, &want);
    table_cli(&home, p, &want, &signature);
    report_and_plot(&home, p, &dir.path().join("report"), &want, &signature);
    let spec = BootstrapSpec::new(50, 1);
    let t = joint_table(&store, &names, &choice, Some(&spec)).unwrap();
    for (d, _) in DIRECTIONS {
        let fig = figure(&t, d);
        assert_eq!(fig.rows.len(), 15);
        assert_eq!(fig.note, signature[d].0);
        for r in &fig.rows {
            assert_eq!(r.value, Some(want[&(d.to_owned(), r.label.clone())].joint), "plot data {d} {}", r.label);
            assert!(r.lo.unwrap() <= r.value.unwrap() && r.value.unwrap() <= r.hi.unwrap());
        }
    }
    drop(store);
    tui_screens(&path, &want);
}

/// TSTBench's Joint from the files: ACC from the stored classifier decisions, multi-BLEU with
/// NLTK's corpus BLEU after NLTK's word_tokenize (the `tstbench` convention) on the anchor files, PPL = 10^(-Σ log10 P / Σ words) with the trained LM.
fn by_hand_from_the_files(root: &Path, home: &Path, store: &Store, want: &BTreeMap<(String, String), Want>) {
    let db = crate::common::sql(store);
    let refs_of = |d: usize| -> Vec<Vec<String>> {
        let r: Vec<Vec<String>> = (0..4).map(|k| lines(&root.join(format!("references/yelp/reference{k}.{d}")))).collect();
        (0..r[0].len()).map(|i| r.iter().map(|x| x[i].clone()).collect()).collect()
    };
    for (direction, d) in DIRECTIONS {
        let target = direction.split("->").nth(1).unwrap();
        let lm_dir = home.join("models/lm/yelp").join(target);
        let lm = Model::read_arpa(&lm_dir.join("model.arpa")).unwrap();
        let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(lm_dir.join("manifest.json")).unwrap()).unwrap();
        let tok = Tokenizer::parse(manifest["tokenizer"].as_str().unwrap()).unwrap();
        let refs = refs_of(d);
        for sys in want.keys().filter(|k| k.0 == direction).map(|k| k.1.clone()) {
            let hyps = lines(&root.join(format!("outputs/yelp/{sys}/test.{d}.tsf")));
            assert_eq!(hyps.len(), 500);
            let bleu = 100.0 * multi_bleu(&Convention::tstbench(), &hyps, &refs).unwrap();
            let (mut log10, mut words) = (0.0, 0usize);
            for h in &hyps {
                let t = tok.tokens(h);
                log10 += lm.sentence_log10(&t);
                words += t.len();
            }
            let ppl = 10f64.powf(-log10 / words as f64);
            let acc: f64 = db
                .query_row(
                    "SELECT 100.0 * AVG(c.value) FROM scores c JOIN outputs o ON c.output_id = o.id JOIN runs u ON o.run_id = u.id
                     JOIN systems y ON u.system_id = y.id JOIN items i ON o.item_id = i.id JOIN directions x ON i.direction_id = x.id
                     JOIN styles s ON x.source_style_id = s.id WHERE c.metric = 'acc' AND y.name = ?1 AND s.name = ?2",
                    [&sys, direction.split("->").next().unwrap()],
                    |r| r.get(0),
                )
                .unwrap();
            let w = want[&(direction.to_owned(), sys.clone())];
            let what = format!("{direction} {sys}");
            close(&format!("{what} ACC"), w.acc, acc);
            close(&format!("{what} multi-BLEU"), w.bleu, bleu);
            assert!((w.ppl - ppl).abs() <= 1e-6 * ppl, "{what} PPL: {} != {ppl}", w.ppl);
            let joint = (acc * bleu / ppl.ln()).powf(1.0 / 3.0);
            assert!((w.joint - joint).abs() < 1e-6, "{what} Joint: {} != {joint}", w.joint);
            close(&format!("{what} G2"), w.g2, (acc * bleu).sqrt());
        }
    }
}

/// `tstlab table`: CSV and JSON exact, text and files at their precision, signatures shown.
fn table_cli(home: &Path, p: &str, want: &BTreeMap<(String, String), Want>, signature: &BTreeMap<String, (String, String)>) {
    let csv = run(home, &["--store", p, "table", "--dataset", "yelp", "--format", "csv"]);
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} in {head:?}"));
    let mut n = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let (d, s) = (rec[col("direction")].to_owned(), rec[col("system")].to_owned());
        let w = want[&(d.clone(), s.clone())];
        assert_eq!(rec[col("Joint")].parse::<f64>().unwrap(), w.joint, "table CSV {d} {s}");
        assert_eq!(rec[col("G2")].parse::<f64>().unwrap(), w.g2, "table CSV G2 {d} {s}");
        assert_eq!(rec[col("ACC")].parse::<f64>().unwrap(), w.acc);
        assert_eq!(rec[col("multi-BLEU.tstbench")].parse::<f64>().unwrap(), w.bleu, "Joint's BLEU is the multi-BLEU column");
        assert_eq!(rec[col("PPL.corpus-words")].parse::<f64>().unwrap(), w.ppl, "Joint's PPL is the PPL column");
        assert_eq!((&rec[col("Joint signature")], &rec[col("G2 signature")]), (signature[&d].0.as_str(), signature[&d].1.as_str()));
        n += 1;
    }
    assert_eq!(n, 30);

    let v = json(run(home, &["--store", p, "table", "--dataset", "yelp", "--json"]).as_bytes());
    for t in v.as_array().unwrap() {
        let d = t["direction"].as_str().unwrap().to_owned();
        let cols: Vec<&str> = t["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let j = cols.iter().position(|c| *c == "joint").unwrap();
        assert_eq!(t["sources"]["joint"], signature[&d].0.as_str());
        for row in t["rows"].as_array().unwrap() {
            let s = row["system"].as_str().unwrap().to_owned();
            assert_eq!(row["values"][j].as_f64(), Some(want[&(d.clone(), s.clone())].joint), "table --json {d} {s}");
        }
    }

    // Text: one decimal, `*` on the best.
    let text = run(home, &["--store", p, "table", "--dataset", "yelp"]);
    let mut checked = 0;
    for block in text.split("yelp · ").skip(1) {
        let d = block.lines().next().unwrap().trim().to_owned();
        let mut rows = block.lines().skip(1);
        let head: Vec<&str> = rows.next().unwrap().split_whitespace().collect();
        let j = head.iter().position(|h| *h == "Joint↑").unwrap();
        for line in rows.take_while(|l| !l.starts_with("  ")) {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let w = want[&(d.clone(), cells[0].to_owned())];
            assert_eq!(cells[j].trim_end_matches('*'), format!("{:.1}", w.joint), "table text {d} {}", cells[0]);
            checked += 1;
        }
        assert!(block.contains(&format!("Joint: {}", signature[&d].0)), "the text notes name the inputs");
    }
    assert_eq!(checked, 30);

    // Files: Markdown (bold best) and LaTeX (caption with the signature).
    let dir = Path::new(p).parent().unwrap();
    let md = dir.join("yelp.md");
    run(home, &["--store", p, "table", "--dataset", "yelp", "--format", "md", "-o", md.to_str().unwrap()]);
    let md = std::fs::read_to_string(md).unwrap();
    let mut checked = 0;
    for block in md.split("### yelp · ").skip(1) {
        let d = block.lines().next().unwrap().replace("\\", "");
        let head: Vec<&str> = block.lines().find(|l| l.starts_with("| system")).unwrap().split('|').map(str::trim).collect();
        let j = head.iter().position(|h| *h == "Joint↑").unwrap();
        for line in block.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| system")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let sys = cells[1].replace("\\_", "_");
            assert_eq!(cells[j].trim_matches('*'), format!("{:.1}", want[&(d.clone(), sys)].joint));
            checked += 1;
        }
    }
    assert_eq!(checked, 30);
    let tex = dir.join("yelp.tex");
    run(home, &["--store", p, "table", "--dataset", "yelp", "--format", "latex", "-o", tex.to_str().unwrap()]);
    let tex = std::fs::read_to_string(tex).unwrap();
    assert_eq!(tex.matches("Joint: joint:tstbench\\textbar{}acc:").count(), 2, "{tex}");
}

/// `tstlab report`: joint.csv exact, joint.md at two decimals, index.md's best system per part;
/// `tstlab plot joint` names the inputs.
fn report_and_plot(home: &Path, p: &str, out: &Path, want: &BTreeMap<(String, String), Want>, signature: &BTreeMap<String, (String, String)>) {
    run(home, &["--store", p, "report", "--dataset", "yelp", "-o", out.to_str().unwrap(), "--bootstrap", "50"]);
    let mut r = csv::Reader::from_path(out.join("joint.csv")).unwrap();
    let mut n = 0;
    for rec in r.deserialize::<BTreeMap<String, String>>() {
        let rec = rec.unwrap();
        let key = (rec["part"].clone(), rec["system"].clone());
        let w = want[&key];
        assert_eq!(rec["Joint"].parse::<f64>().unwrap(), w.joint, "report joint.csv {key:?}");
        assert_eq!(rec["G2"].parse::<f64>().unwrap(), w.g2);
        assert_eq!((rec["ACC"].parse::<f64>().unwrap(), rec["BLEU"].parse::<f64>().unwrap(), rec["PPL"].parse::<f64>().unwrap()), (w.acc, w.bleu, w.ppl));
        assert_eq!(rec["signature"], signature[&key.0].0);
        n += 1;
    }
    assert_eq!(n, 45, "15 systems x 3 parts");
    let md = std::fs::read_to_string(out.join("joint.md")).unwrap();
    for ((part, sys), w) in want {
        let line = format!("| {} | {} | 500 | ", part.replace('>', "\\>"), sys.replace('_', "\\_"));
        let row = md.lines().find(|l| l.starts_with(&line)).unwrap_or_else(|| {
            assert_eq!(part, "all directions");
            md.lines().find(|l| l.starts_with(&format!("| all directions | {} | 1000 | ", sys.replace('_', "\\_")))).unwrap()
        });
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[7], format!("{:.2}", w.joint), "joint.md {part} {sys}");
    }
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(index.contains(&format!("signature `{}`", signature["negative->positive"].0)), "{index}");
    for part in ["negative->positive", "positive->negative", "all directions"] {
        let human = |s: &str| s.starts_with("Human");
        let (best, w) = want.iter().filter(|(k, _)| k.0 == part && !human(&k.1)).max_by(|a, b| a.1.joint.total_cmp(&b.1.joint)).unwrap();
        let line = format!("| {} | {} | {:.2} |", part.replace('>', "\\>"), best.1.replace('_', "\\_"), w.joint);
        assert!(index.contains(&line), "{line} in {index}");
    }

    let png = out.join("joint.png");
    let text = run(home, &["--store", p, "plot", "joint", "--part", "positive->negative", "--bootstrap", "20", "-o", png.to_str().unwrap()]);
    assert!(text.contains(&signature["positive->negative"].0), "{text}");
    assert_eq!(image::open(&png).unwrap().width(), 1200);
}

fn press(app: &mut App, c: char) {
    app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    assert!(app.settle(Duration::from_secs(60)));
}

fn screen(app: &mut App, w: u16, h: u16) -> Vec<Vec<char>> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    assert!(app.settle(Duration::from_secs(60)));
    t.draw(|f| app.draw(f)).unwrap();
    let buf = t.backend().buffer().clone();
    (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol().chars().next().unwrap_or(' ')).collect()).collect()
}

/// The whitespace-separated word of `line` that ends at char column `end` (exclusive).
fn word_ending_at(line: &[char], end: usize) -> String {
    let mut start = end;
    while start > 0 && !line[start - 1].is_whitespace() {
        start -= 1;
    }
    line[start..end].iter().collect()
}

/// The Scores screen (tab 7), both directions, and the Analysis screen's trade-off list.
fn tui_screens(path: &Path, want: &BTreeMap<(String, String), Want>) {
    let mut app = App::new(Loader::inline(Store::open(path).unwrap()), Jobs::new(), path);
    app.start();
    assert!(app.settle(Duration::from_secs(60)));
    press(&mut app, '7');
    let mut checked = 0;
    for k in 0..2 {
        if k > 0 {
            press(&mut app, 'd');
        }
        let rows = screen(&mut app, 230, 40);
        let text: Vec<String> = rows.iter().map(|r| r.iter().collect()).collect();
        let d = DIRECTIONS.iter().map(|d| d.0).find(|d| text.iter().any(|l| l.contains(&format!("Scores · yelp · {d}")))).unwrap();
        let hy = text.iter().position(|l| l.contains("Joint↑")).unwrap();
        let start = text[hy].find("Joint↑").unwrap();
        let end = text[hy][..start].chars().count() + "Joint↑".chars().count();
        for (y, line) in text.iter().enumerate().skip(hy + 1) {
            let Some(sys) = want.keys().filter(|k| k.0 == d).map(|k| &k.1).find(|s| line.contains(&format!("┃{s} "))) else { continue };
            assert_eq!(word_ending_at(&rows[y], end), format!("{:.1}", want[&(d.to_owned(), sys.clone())].joint), "Scores screen {d} {sys}");
            checked += 1;
        }
        assert!(text.iter().any(|l| l.contains("Joint: joint:tstbench|acc:")), "the notes name the inputs");
    }
    assert_eq!(checked, 30, "every system of both directions on the Scores screen");

    // Analysis, trade-off view: one row per (direction, non-human system) with its Joint.
    press(&mut app, '6');
    press(&mut app, 't');
    let rows = screen(&mut app, 200, 60);
    let text: Vec<String> = rows.iter().map(|r| r.iter().collect()).collect();
    let hy = text.iter().position(|l| l.contains("system") && l.contains("Joint") && l.split("Joint").nth(1).is_some_and(|r| r.contains('*'))).unwrap_or_else(|| panic!("{}", text.join("\n")));
    let left = text[hy][..text[hy].find(" system").unwrap()].chars().count();
    let (mut part, mut checked) = (String::new(), 0);
    for line in &rows[hy + 1..] {
        let list: String = line[left..].iter().collect::<String>().trim_end_matches([' ', '┃']).to_owned();
        if let Some(d) = DIRECTIONS.iter().map(|d| d.0).find(|d| list.trim() == *d) {
            part = d.to_owned();
            continue;
        }
        let cells: Vec<&str> = list.split_whitespace().collect();
        if cells.len() < 4 || part.is_empty() {
            continue;
        }
        let Some(sys) = want.keys().filter(|k| k.0 == part).map(|k| &k.1).find(|s| **s == cells[0] || (cells[0].ends_with('…') && s.starts_with(cells[0].trim_end_matches('…')))) else { continue };
        assert_eq!(cells[3], format!("{:.2}", want[&(part.clone(), sys.clone())].joint), "trade-off list {part} {sys}");
        checked += 1;
    }
    assert_eq!(checked, 22, "11 non-human systems x 2 directions:\n{}", text.join("\n"));
}
