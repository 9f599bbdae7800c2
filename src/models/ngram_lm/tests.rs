use super::*;
use std::path::Path;

fn sents(text: &str) -> Vec<Vec<String>> {
    text.lines().map(|l| l.split_whitespace().map(str::to_owned).collect()).collect()
}

const TINY: &str = "the cat sat on the mat
the dog sat on the log
the cat ate the fish
a dog ate a bone
the cat sat
a cat sat on a mat
the dog ate
the fish sat on the mat";

fn fallback(order: usize) -> Estimate {
    Estimate { order, discount_fallback: Some([0.5, 1.0, 1.5]) }
}

/// p(w | h) over the vocabulary (every word but `<s>`) sums to 1 for every context of the text.
#[test]
fn probabilities_sum_to_one_in_every_context() {
    for order in 1..=4 {
        let (m, _) = estimate(&sents(TINY), &fallback(order)).unwrap();
        let words: Vec<&str> = m.vocab.iter().map(String::as_str).filter(|w| *w != "<s>").collect();
        let mut contexts: Vec<Vec<&str>> = vec![vec![]];
        for s in TINY.lines() {
            let toks: Vec<&str> = std::iter::once("<s>").chain(s.split_whitespace()).collect();
            for i in 0..toks.len() {
                for len in 1..order {
                    if i + 1 >= len {
                        contexts.push(toks[i + 1 - len..=i].to_vec());
                    }
                }
            }
        }
        contexts.push(vec!["unseen", "words"]);
        for ctx in contexts {
            let total: f64 = words
                .iter()
                .map(|w| {
                    let mut ids: Vec<u32> = ctx.iter().map(|c| m.id(c)).collect();
                    if ids.len() >= order {
                        ids.drain(..ids.len() + 1 - order);
                    }
                    10f64.powf(f64::from(m.full_score(&ids, m.id(w)).log10))
                })
                .sum();
            assert!((total - 1.0).abs() < 1e-5, "order {order}, context {ctx:?}: sum {total}");
        }
    }
}

/// Chen & Goodman eq. 26 with the count-of-counts of the adjusted bigram counts, worked by hand.
#[test]
fn discounts_follow_count_of_counts() {
    // Sentences "a b", "a b", "a c", "b c": bigrams (raw counts, highest order for order 2)
    // <s> a:3, a b:2, b </s>:2, a c:1, c </s>:2, <s> b:1, b c:1 -> n1 = 3, n2 = 3, n3 = 1, n4 = 0.
    let (_, st) = estimate(&sents("a b\na b\na c\nb c"), &fallback(2)).unwrap();
    let (n1, n2, n3, n4) = (3f32, 3f32, 1f32, 0f32);
    let y = n1 / (n1 + 2.0 * n2);
    let want = [1.0 - 2.0 * y * n2 / n1, 2.0 - 3.0 * y * n3 / n2, 3.0 - 4.0 * y * n4 / n3];
    assert_eq!(st.discounts[1], want);
    assert_eq!(st.fallback_orders, vec![1], "unigram adjusted counts a:1 b:2 c:2 </s>:2 have no n3");
    assert_eq!(st.counts, vec![6, 7]);
    let strict = estimate(&sents("a b\na b\na c\nb c"), &Estimate { order: 2, discount_fallback: None });
    assert!(matches!(strict, Err(LmError::Discount { order: 1, .. })));
}

#[test]
fn adjusted_counts_are_continuation_counts() {
    // Order 2, "x a" and "y a" and "a": unigram a has left extensions x, y, <s> -> 3.
    let (m, st) = estimate(&sents("x a\ny a\na\nx y"), &fallback(2)).unwrap();
    assert_eq!(st.tokens, 7);
    // Unigram adjusted counts: x:1 (<s>), y:2 (<s>, x), a:3, </s>:2 (a, y) -> 8 in total.
    // Unigram probability of a = (3 - D3) / 8 + gamma * 1/|V| with |V| = 6 (<unk> </s> x y a... ).
    let d = st.discounts[0];
    let gamma = (d[0] * 1.0 + d[1] * 2.0 + d[2] * 1.0) / 8.0;
    let uniform = 1.0 / 5.0f32; // <unk>, </s>, x, a, y
    let p = (3.0 - d[2]) / 8.0 + gamma * uniform;
    assert_eq!(m.entry(&["a"]).unwrap().prob, p.log10());
    assert_eq!(m.entry(&["<unk>"]).unwrap().prob, (gamma * uniform).log10());
    assert_eq!(m.entry(&["<s>"]).unwrap().prob, 0.0);
    assert_eq!(m.entry(&["</s>"]).unwrap().backoff, 0.0, "</s> is no context");
}

#[test]
fn arpa_round_trip_and_scores() {
    let (m, _) = estimate(&sents(TINY), &fallback(3)).unwrap();
    let text = m.to_arpa();
    let back = Model::parse_arpa(&text, Path::new("tiny.arpa")).unwrap();
    assert_eq!(back.counts(), m.counts());
    assert_eq!(back.to_arpa(), text);
    let s: Vec<&str> = "the cat sat on a log".split(' ').collect();
    assert_eq!(back.sentence_log10(&s), m.sentence_log10(&s));
    let scores = m.score(&["the", "zebra"], true, true);
    assert_eq!(scores.len(), 3);
    assert!(scores[1].oov && scores[1].ngram == 1);
    assert_eq!(scores[0].ngram, 2, "<s> the is a bigram of the text");
    let ppl = m.perplexity(&s);
    let log10: f64 = m.score(&s, true, true).iter().map(|w| f64::from(w.log10)).sum();
    assert!((ppl - 10f64.powf(-log10 / 7.0)).abs() < 1e-9);
    assert!((m.corpus_perplexity(&[s.clone()]) - ppl).abs() < 1e-9);
}

#[test]
fn arpa_errors_name_the_line() {
    let bad = "\\data\\\nngram 1=2\n\n\\1-grams:\n-1.0\ta\n-x\tb\n\\end\\\n";
    let e = Model::parse_arpa(bad, Path::new("m.arpa")).unwrap_err().to_string();
    assert!(e.starts_with("m.arpa:6: bad number"), "{e}");
    let short = "\\data\\\nngram 1=3\n\n\\1-grams:\n-1.0\ta\n-1\tb\n\\end\\\n";
    let e = Model::parse_arpa(short, Path::new("m.arpa")).unwrap_err().to_string();
    assert_eq!(e, "m.arpa: header declares 3 1-grams, found 2");
    let twice = "\\data\\\nngram 1=2\n\n\\1-grams:\n-1.0\ta\n-1\tb\n-2\ta\n\\end\\\n";
    let e = Model::parse_arpa(twice, Path::new("m.arpa")).unwrap_err().to_string();
    assert_eq!(e, "m.arpa:7: the 1-gram \"a\" given twice: first at line 5");
    for (p, shown) in [("inf", "inf"), ("NaN", "NaN"), ("0.5", "0.5")] {
        let bad = format!("\\data\\\nngram 1=2\n\n\\1-grams:\n-1.0\ta\n{p}\tb\n\\end\\\n");
        let e = Model::parse_arpa(&bad, Path::new("m.arpa")).unwrap_err().to_string();
        assert_eq!(e, format!("m.arpa:6: log10 probability {shown} is not a finite number at most 0"));
    }
    assert_eq!(Model::parse_arpa(" \n", Path::new("m.arpa")).unwrap_err().to_string(), "m.arpa: empty file");
    // No <unk>: KenLM's -100.
    let ok = "\\data\\\nngram 1=3\n\n\\1-grams:\n-1.0\t<s>\t-0.5\n-0.5\ta\n-0.2\t</s>\n\n\\end\\\n";
    let m = Model::parse_arpa(ok, Path::new("m.arpa")).unwrap();
    assert_eq!(m.entry(&["<unk>"]).unwrap().prob, -100.0);
    assert_eq!(m.score(&["zzz"], true, false)[0].log10, -100.0 - 0.5);
}

#[test]
fn bad_options_and_symbols() {
    assert!(matches!(estimate(&sents("a"), &Estimate { order: 7, discount_fallback: None }), Err(LmError::Order(7))));
    assert!(matches!(estimate::<String>(&[], &Estimate::default()), Err(LmError::Empty)));
    let (_, st) = estimate(&sents("a <s> b </s>\n<unk> a b"), &fallback(2)).unwrap();
    assert_eq!((st.tokens, st.skipped_symbols), (4, 3));
}
