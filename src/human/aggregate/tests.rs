use super::*;
use crate::human::ordering::{Ordering, TieRule};

fn judgment(annotator: Id, item: Id, direction: Id, aspect: Id, ordering: &str) -> RankJudgment {
    let ranks = Ordering::parse(ordering, 3).unwrap().ranks(TieRule::Average);
    RankJudgment { annotator, item, direction, aspect, ranks, shown_at: Vec::new(), repeat: false }
}

/// Annotator 1: item 1 "1>2>3" -> [1, 2, 3]; item 2 "2>1=3" -> [2.5, 1, 2.5].
/// Annotator 2: item 1 "1=2>3" -> [1.5, 1.5, 3]; item 2 "1>2>3" -> [1, 2, 3].
/// Per annotator means: a1 [1.75, 1.5, 2.75], a2 [1.25, 1.75, 3].
fn two_annotators() -> Vec<RankJudgment> {
    vec![
        judgment(1, 1, 7, 0, "1>2>3"),
        judgment(1, 2, 7, 0, "2>1=3"),
        judgment(2, 1, 7, 0, "1=2>3"),
        judgment(2, 2, 7, 0, "1>2>3"),
        RankJudgment { repeat: true, ..judgment(2, 2, 7, 0, "3>2>1") },
    ]
}

#[test]
fn average_ranks_mean_and_sd_over_annotators() {
    let cell = average_ranks_in(&two_annotators(), 3, Scope::ALL);
    assert_eq!(cell.judgments, 4, "the repeat is left out");
    assert_eq!(cell.per_annotator[0], (1, vec![Some(1.75), Some(1.5), Some(2.75)]));
    let s0 = &cell.systems[0];
    assert_eq!((s0.mean, s0.annotators), (Some(1.5), 2));
    // sample SD of {1.75, 1.25} = sqrt(2 * 0.25^2 / 1)
    assert!((s0.sd.unwrap() - (0.125f64).sqrt()).abs() < 1e-15);
    assert_eq!(cell.systems[2].mean, Some(2.875));
    let one = average_ranks_in(&two_annotators()[..2], 3, Scope::ALL);
    assert_eq!(one.systems[0].sd, None);
}

#[test]
fn table_has_every_scope_in_order() {
    let mut js = two_annotators();
    js.push(judgment(1, 3, 8, 1, "3>2>1"));
    let t = average_rank_table(&js, 3);
    let scopes: Vec<(Option<Id>, Option<Id>)> = t.iter().map(|c| (c.scope.direction, c.scope.aspect)).collect();
    assert_eq!(
        scopes,
        vec![
            (Some(7), Some(0)), (Some(7), Some(1)), (Some(7), None),
            (Some(8), Some(0)), (Some(8), Some(1)), (Some(8), None),
            (None, Some(0)), (None, Some(1)), (None, None),
        ]
    );
    assert_eq!(t[4].systems[2].mean, Some(1.0));
    assert_eq!(t[1].judgments, 0);
    assert_eq!(t[1].systems[0].mean, None);
    assert_eq!(t[8].judgments, 5);
}

#[test]
fn wins_count_ties_as_halves() {
    let w = pairwise_wins(&two_annotators()[..4], 3);
    // pairs (0,1): 1>2 win0, 2>1 win1, tie, win0 -> w01 = 2.5, w10 = 1.5
    assert_eq!((w[0][1], w[1][0]), (2.5, 1.5));
    // (0,2): win0, tie, win0, win0 -> 3.5 / 0.5
    assert_eq!((w[0][2], w[2][0]), (3.5, 0.5));
    let r = win_rates(&w);
    assert_eq!(r[0][1], Some(2.5 / 4.0));
    assert_eq!(r[1][1], None);
    let mean = item_mean_ranks(&two_annotators(), 3, Scope::ALL);
    assert_eq!((mean[0].mean_rank, mean[0].annotators), (1.25, 2));
}

#[test]
fn bradley_terry_two_systems_closed_form() {
    // 3 wins to 1: p0 / p1 = 3, centred log-strengths ±ln(3)/2.
    let t = bradley_terry(&[vec![0.0, 3.0], vec![1.0, 0.0]], &BtOptions::default()).unwrap();
    assert!((t[0] - 3f64.ln() / 2.0).abs() < 1e-10 && (t[1] + 3f64.ln() / 2.0).abs() < 1e-10, "{t:?}");
    // never beaten: no MLE; a positive alpha gives a MAP estimate.
    let lopsided = [vec![0.0, 3.0], vec![0.0, 0.0]];
    assert_eq!(bradley_terry(&lopsided, &BtOptions::default()), None);
    let map = bradley_terry(&lopsided, &BtOptions { alpha: 1.0, ..BtOptions::default() }).unwrap();
    assert!(map[0] > map[1]);
}

#[test]
fn bradley_terry_bootstrap_is_seeded() {
    let mut js = Vec::new();
    for item in 0..20 {
        for annotator in 0..2 {
            let o = ["1>2>3", "1>3>2", "2>1>3", "1=2>3", "3>1>2"][((item * 3 + annotator) % 5) as usize];
            js.push(judgment(annotator, item, 1, 0, o));
        }
    }
    let spec = BootstrapSpec::new(200, 5);
    let a = bradley_terry_report(&js, 3, Scope::ALL, &BtOptions::default(), Some(&spec));
    assert_eq!(a, bradley_terry_report(&js, 3, Scope::ALL, &BtOptions::default(), Some(&spec)));
    assert_eq!(a.items, 20);
    let t = a.log_strength.clone().unwrap();
    assert!(t[0] > t[1] && t[1] > t[2]);
    for (s, ci) in a.ci.iter().enumerate() {
        let ci = ci.unwrap();
        assert!(ci.lo <= t[s] && t[s] <= ci.hi, "system {s}: {} outside {ci:?}", t[s]);
    }
}

#[test]
fn likert_means_and_identical_output_penalty() {
    let lj = |annotator, system, aspect, score, identical_to_source| LikertJudgment {
        annotator, item: 1, direction: 1, aspect, system, score, identical_to_source,
    };
    let js = vec![lj(1, 0, 9, 5.0, true), lj(2, 0, 9, 4.0, true), lj(1, 1, 9, 3.0, false), lj(1, 0, 2, 5.0, true)];
    let m = likert_means(&js, 2, None, Some(9));
    assert_eq!(m.len(), 4);
    assert_eq!((m[0].aspect, m[0].system, m[0].mean, m[0].penalised_mean), (2, 0, Some(5.0), None));
    assert_eq!(m[1].ratings, 0);
    assert_eq!(m[2].mean, Some(4.5));
    assert!((m[2].penalised_mean.unwrap() - (5.0 + 4.0) * 0.6 / 2.0).abs() < 1e-15);
    assert_eq!((m[3].mean, m[3].penalised_mean), (Some(3.0), Some(3.0)));
    assert!(likert_means(&js, 2, Some(5), Some(9)).iter().all(|m| m.mean.is_none()));
}
