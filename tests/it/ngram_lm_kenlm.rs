//! The modified Kneser-Ney LM against KenLM 0.3.0 (`lmplz` + `query`) on anchor text: n-gram
//! counts, discounts, every order's sums of log10 probabilities and backoffs, a sample of
//! n-grams (by hash) and held-out sentence scores. Expected values and the script that made
//! them: `tests/expected/kenlm/`.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tstlab::models::ngram_lm::{Estimate, Model, estimate};
use tstlab::models::words::Tokenizer;

const ANCHORS: &str = "../shared/anchors";

struct Case {
    name: &'static str,
    files: &'static [&'static str],
    order: usize,
    fallback: bool,
    held_out: &'static str,
}

const CASES: &[Case] = &[
    Case { name: "yelp1_o3_fallback", files: &["DualRL/data/yelp/test.1"], order: 3, fallback: true, held_out: "DualRL/data/yelp/test.0" },
    Case {
        name: "yelp_o4",
        files: &["DualRL/data/yelp/test.0", "DualRL/data/yelp/test.1"],
        order: 4,
        fallback: false,
        held_out: "DualRL/references/yelp/reference0.1",
    },
    Case {
        name: "yelp_o5_fallback",
        files: &["DualRL/data/yelp/test.0", "DualRL/data/yelp/test.1"],
        order: 5,
        fallback: true,
        held_out: "DualRL/references/yelp/reference0.0",
    },
    Case {
        name: "amazon_o4",
        files: &["Sentiment-and-Style-Transfer/data/amazon/sentiment.test.0", "Sentiment-and-Style-Transfer/data/amazon/sentiment.test.1"],
        order: 4,
        fallback: false,
        held_out: "DualRL/data/yelp/test.0",
    },
];

fn lines(path: &Path) -> Vec<Vec<String>> {
    let text = String::from_utf8(std::fs::read(path).unwrap()).expect("these anchor files are UTF-8");
    text.lines().map(|l| Tokenizer::Whitespace.tokens(l)).collect()
}

fn name_hash(words: &[&str]) -> String {
    hex::encode(Sha256::digest(words.join(" ").as_bytes()))[..12].to_owned()
}

#[test]
fn kneser_ney_matches_kenlm_lmplz_and_query() {
    if !Path::new(ANCHORS).is_dir() {
        crate::skip::skip(format!("{ANCHORS} is absent"));
        return;
    }
    for case in CASES {
        let mut text = Vec::new();
        for f in case.files {
            text.extend(lines(&PathBuf::from(ANCHORS).join(f)));
        }
        let opts = Estimate { order: case.order, discount_fallback: case.fallback.then_some([0.5, 1.0, 1.5]) };
        let (model, stats) = estimate(&text, &opts).unwrap();
        let expected = std::fs::read_to_string(format!("tests/expected/kenlm/{}.tsv", case.name)).unwrap();
        // The sampled n-grams, found through the ARPA text (its words name them).
        let arpa = model.to_arpa();
        let reread = Model::parse_arpa(&arpa, Path::new("mine.arpa")).unwrap();
        let mut by_hash = std::collections::HashMap::new();
        let mut sums = vec![(0f64, 0f64); case.order];
        let mut section = 0;
        for line in arpa.lines() {
            if let Some(n) = line.strip_prefix('\\').and_then(|s| s.strip_suffix("-grams:")) {
                section = n.parse().unwrap();
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            if section == 0 || f.len() < 2 {
                continue;
            }
            let words: Vec<&str> = f[1].split(' ').collect();
            let e = reread.entry(&words).unwrap();
            sums[section - 1].0 += f64::from(e.prob);
            sums[section - 1].1 += f64::from(e.backoff);
            by_hash.insert(name_hash(&words), (e, section));
        }
        let held_out = lines(&PathBuf::from(ANCHORS).join(case.held_out));
        let (mut grams, mut sents, mut max_gram, mut max_sent) = (0, 0, 0f64, 0f64);
        for line in expected.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            let num = |i: usize| f[i].parse::<f64>().unwrap();
            match f[0] {
                "counts" => {
                    let want: Vec<usize> = f[1..].iter().map(|c| c.parse().unwrap()).collect();
                    assert_eq!(stats.counts, want, "{}", case.name);
                    assert_eq!(model.counts(), want, "{}", case.name);
                }
                "discounts" => {
                    let o: usize = f[1].parse().unwrap();
                    for j in 0..3 {
                        let (got, want) = (f64::from(stats.discounts[o - 1][j]), num(j + 2));
                        assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "{} D{} order {o}: {got} vs {want}", case.name, j + 1);
                    }
                }
                "sum" => {
                    let o: usize = f[1].parse().unwrap();
                    let (p, b) = sums[o - 1];
                    assert!((p - num(2)).abs() < 1e-3, "{} order {o} prob sum {p} vs {}", case.name, num(2));
                    assert!((b - num(3)).abs() < 1e-3, "{} order {o} backoff sum {b} vs {}", case.name, num(3));
                }
                "gram" => {
                    let (e, order) = by_hash.get(f[1]).unwrap_or_else(|| panic!("{}: n-gram {} missing", case.name, f[1]));
                    let dp = (f64::from(e.prob) - num(2)).abs();
                    let db = if f.len() > 3 { (f64::from(e.backoff) - num(3)).abs() } else { f64::from(e.backoff).abs() };
                    assert!(dp < 1e-6 && db < 1e-6, "{} {order}-gram {}: {e:?} vs {line}", case.name, f[1]);
                    max_gram = max_gram.max(dp).max(db);
                    grams += 1;
                }
                "sent" => {
                    let i: usize = f[1].parse::<usize>().unwrap() - 1;
                    let scores = model.score(&held_out[i], true, true);
                    let total: f64 = scores.iter().map(|s| f64::from(s.log10)).sum();
                    let oov = scores.iter().filter(|s| s.oov).count();
                    assert!((total - num(2)).abs() < 1e-4, "{} line {}: {total} vs {}", case.name, i + 1, num(2));
                    assert_eq!(oov.to_string(), f[3], "{} line {} OOVs", case.name, i + 1);
                    max_sent = max_sent.max((total - num(2)).abs());
                    sents += 1;
                }
                other => panic!("unknown line kind {other}"),
            }
        }
        assert!(grams > 500 && sents >= 500, "{}: {grams} n-grams, {sents} sentences", case.name);
        eprintln!("{}: {grams} n-grams (max |diff| {max_gram:.2e}), {sents} sentences (max |diff| {max_sent:.2e})", case.name);
    }
}
