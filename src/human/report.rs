//! Campaign results as plain text, one section at a time (the CLI prints them all, the results
//! screen shows one per tab). Names and texts from the store are made terminal-safe here
//! (`printable`), so both front ends show them the same way.

use crate::stats::bootstrap::Interval;
use crate::human::campaign::Mode;
use crate::human::results::{Disagreement, Results};
use crate::printable::{line, Safe};
use unicode_width::UnicodeWidthStr;

/// The annotators section lists this many; `--json` has every one.
pub const MAX_ANNOTATOR_ROWS: usize = 50;
/// Notes listed in the text results (`--json` has all).
pub const MAX_NOTE_ROWS: usize = 50;

/// Section names, in order.
pub const SECTIONS: [&str; 5] = ["ranks", "bradley-terry", "scores", "agreement", "annotators"];

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn ci(c: &Option<Interval>) -> String {
    c.map_or(String::new(), |c| format!(" [{:.2}, {:.2}]", c.lo, c.hi))
}

/// Display width of `s` as shown (made safe).
fn shown_width(s: &str) -> usize {
    line(s).width()
}

fn pad(s: &str, w: usize) -> String {
    let s = line(s);
    format!("{s}{}", " ".repeat(w.saturating_sub(s.width())))
}

fn lpad(s: &str, w: usize) -> String {
    let s = line(s);
    format!("{}{s}", " ".repeat(w.saturating_sub(s.width())))
}

/// The first column: system names and (for headings) direction labels.
fn name_width(r: &Results) -> usize {
    let dirs = r.directions.iter().map(|d| shown_width(d)).chain(["all directions".len()]);
    r.systems.iter().map(|s| shown_width(s)).chain(dirs).max().unwrap_or(6) + 2
}

/// The width of an aspect column: `least`, or wider for long aspect names.
fn aspect_width(r: &Results, least: usize) -> usize {
    r.aspects.iter().map(|a| shown_width(a) + 2).max().unwrap_or(0).max(least)
}

/// The lines of one section (see [`SECTIONS`]).
pub fn section(r: &Results, name: &str) -> Vec<String> {
    match name {
        "ranks" => ranks(r),
        "bradley-terry" => bradley_terry(r),
        "scores" => scores(r),
        "agreement" => agreement(r),
        "annotators" => annotators(r),
        _ => Vec::new(),
    }
}

/// What the campaign is, in one line (names as stored: print it through `Safe`).
pub fn heading(r: &Results) -> String {
    let design = if r.model.is_empty() { String::new() } else { format!(" · design {}", r.design) };
    format!(
        "campaign {} · {} · {}{}{design} · {} system(s) · {} annotator(s) · {} judgment(s) of real items, one per output, annotator and aspect, in {} complete screen(s) ({} training and {} repeat judgment(s) left out) · bootstrap {} resamples",
        r.campaign,
        r.dataset,
        r.mode.as_str(),
        if r.read_only { " · read-only" } else { "" },
        r.systems.len(),
        r.annotators.len(),
        r.judgment_values,
        r.judgments,
        r.training_values,
        r.repeat_values,
        r.bootstrap.resamples
    )
}

/// Everything, with headings.
pub fn full(r: &Results) -> Vec<String> {
    let mut out = vec![Safe(&heading(r)).to_string()];
    out.extend(r.notes.iter().map(|n| format!("note: {}", Safe(n))));
    for s in SECTIONS {
        if s == "scores" && r.mode == Mode::Rank {
            continue;
        }
        out.push(String::new());
        out.push(format!("== {s}"));
        out.extend(section(r, s));
    }
    out
}

/// The line a section shows when the campaign has no items (ratings published per system).
fn no_items(r: &Results, what: &str) -> Option<Vec<String>> {
    (r.ranks.is_empty() && r.bradley_terry.is_empty())
        .then(|| vec![format!("(no {what}: the ratings are published per system without the items they rate)")])
}

/// An adaptive campaign's ranking by the model, per aspect, with intervals.
fn model(r: &Results) -> Vec<String> {
    let nw = name_width(r);
    let mut out = vec![format!(
        "Design {}: ranking by the additive model (block = one annotator's screen of one item), best first; effect with its 95% interval, values in screens of two or more, z with the next system (apart at 95% when z >= 1.96)",
        r.design
    )];
    for m in &r.model {
        out.push(String::new());
        out.push(format!("{} · {}/{} adjacent pair(s) apart at 95% · sigma {:.3}", line(&m.aspect), m.settled, m.pairs, m.sigma));
        for (i, row) in m.systems.iter().enumerate() {
            let ci = row.ci.map_or("-".into(), |(lo, hi)| format!("[{lo:.3}, {hi:.3}]"));
            out.push(format!(
                "{:>2}. {}{:>9} {:>20} {:>5} values  z {}",
                i + 1,
                pad(&row.system, nw),
                num(row.effect, 3),
                ci,
                row.values,
                num(row.z_next, 2)
            ));
        }
    }
    out
}

fn ranks(r: &Results) -> Vec<String> {
    if let Some(l) = no_items(r, "ranks") {
        return l;
    }
    if !r.model.is_empty() {
        let mut out = model(r);
        if r.ranks.is_empty() {
            out.push(String::new());
            out.push("Average ranks: undefined (each screen ranks some of the systems; Bradley-Terry uses every pair shown together)".into());
            return out;
        }
        out.push(String::new());
        out.extend(ranks_table(r));
        return out;
    }
    ranks_table(r)
}

fn ranks_table(r: &Results) -> Vec<String> {
    let nw = name_width(r);
    let mut out = vec![format!(
        "Average rank per system (lower is better): mean ± SD over annotators{}",
        if r.mode == Mode::Rank { "" } else { " (ranks from the scores)" }
    )];
    let mut dirs: Vec<String> = r.directions.clone();
    dirs.push("all".into());
    let mut aspects = r.aspects.clone();
    aspects.push("all".into());
    for d in &dirs {
        out.push(String::new());
        let label = if d == "all" { "all directions".to_owned() } else { d.clone() };
        let mut head = pad(&label, nw);
        for a in &aspects {
            head += &lpad(a, aspect_width(r, 14));
        }
        out.push(head);
        for (si, s) in r.systems.iter().enumerate() {
            let mut line = pad(s, nw);
            for a in &aspects {
                let cell = r.ranks.iter().find(|c| &c.direction == d && &c.aspect == a);
                let text = cell.map_or("-".into(), |c| {
                    let st = &c.systems[si];
                    match (st.mean, st.sd) {
                        (Some(m), Some(sd)) => format!("{m:.2}±{sd:.2}"),
                        (Some(m), None) => format!("{m:.2}"),
                        _ => "-".into(),
                    }
                });
                line += &lpad(&text, aspect_width(r, 14));
            }
            out.push(line);
        }
    }
    out
}

fn bradley_terry(r: &Results) -> Vec<String> {
    if let Some(l) = no_items(r, "Bradley-Terry strengths") {
        return l;
    }
    let nw = name_width(r);
    let mut out = vec!["Bradley-Terry log-strengths (centred; higher is better) with bootstrap 95% intervals over items".to_owned()];
    for bt in &r.bradley_terry {
        out.push(String::new());
        out.push(format!("{} · {} · {} item(s)", Safe(&bt.aspect), Safe(&bt.estimate), bt.items));
        for s in &bt.strengths {
            out.push(format!("  {}{:>8}{}", pad(&s.system, nw), num(s.log_strength, 3), ci(&s.ci)));
        }
    }
    if let Some(all) = r.bradley_terry.iter().find(|b| b.aspect == "all") {
        out.push(String::new());
        out.push("Win rate of the row system over the column system (all aspects; ties count half)".into());
        let mut head = format!("  {}", pad("", nw));
        for (j, _) in r.systems.iter().enumerate() {
            head += &lpad(&format!("[{}]", j + 1), 8);
        }
        out.push(head);
        for (i, s) in r.systems.iter().enumerate() {
            let mut line = format!("  {}", pad(&format!("[{}] {s}", i + 1), nw));
            for j in 0..r.systems.len() {
                let v = all.win_rate.get(i).and_then(|row| row.get(j)).copied().flatten();
                line += &lpad(&num(v, 2), 8);
            }
            out.push(line);
        }
    }
    out
}

fn scores(r: &Results) -> Vec<String> {
    if r.mode == Mode::Rank {
        return vec!["(a ranking campaign: no scores; see ranks)".into()];
    }
    let nw = name_width(r);
    let what = match (&r.imported, r.mode) {
        (Some(i), Mode::Likert) => format!("Likert ({})", Safe(&i.scale)),
        (Some(i), _) => format!("slider ({})", Safe(&i.scale)),
        (None, Mode::Likert) => "Likert 1-5".into(),
        (None, _) => "slider 0-100".into(),
    };
    let penalised = r.likert.iter().any(|l| l.penalised_mean.is_some());
    let mut out = vec![format!(
        "Mean {what} score per system (higher is better){}",
        if penalised || r.imported.is_none() { "; overall x0.6 for outputs identical to the source" } else { "" }
    )];
    let mut dirs: Vec<String> = r.directions.clone();
    dirs.push("all".into());
    for d in &dirs {
        out.push(String::new());
        let mut head = pad(if d == "all" { "all directions" } else { d }, nw);
        for a in &r.aspects {
            head += &lpad(a, aspect_width(r, 10));
        }
        if penalised {
            head += &lpad("overall×0.6", 13);
        }
        out.push(head);
        for s in &r.systems {
            let mut line = pad(s, nw);
            let mut pen = None;
            for a in &r.aspects {
                let row = r.likert.iter().find(|l| &l.direction == d && &l.aspect == a && &l.system == s);
                line += &lpad(&num(row.and_then(|l| l.mean), 2), aspect_width(r, 10));
                if let Some(p) = row.and_then(|l| l.penalised_mean) {
                    pen = Some(p);
                }
            }
            if penalised {
                line += &lpad(&num(pen, 2), 13);
            }
            out.push(line);
        }
    }
    out
}

fn agreement(r: &Results) -> Vec<String> {
    if let Some(why) = &r.agreement_undefined {
        return vec![format!("{}: agreement undefined (no Kendall's W, tau, kappa or alpha)", Safe(why))];
    }
    let mut out = vec![
        "Agreement per aspect: Kendall's W (mean over items) and at system level; Krippendorff's alpha".into(),
        format!(
            "(ordinal, interval) on the {}{}; bootstrap 95% intervals",
            if r.mode == Mode::Rank { "ranks" } else { "scores" },
            if r.mode == Mode::Likert { "; Fleiss' kappa on the Likert categories" } else { "" }
        ),
    ];
    for a in &r.agreement {
        out.push(String::new());
        out.push(format!("{} ({} item(s))", Safe(&a.aspect), a.w_items));
        out.push(format!("  Kendall's W        {}{}   system level {}", num(a.kendall_w, 3), ci(&a.kendall_w_ci), num(a.system_level_w, 3)));
        out.push(format!("  alpha ordinal      {}{}", num(a.alpha_ordinal, 3), ci(&a.alpha_ordinal_ci)));
        out.push(format!("  alpha interval     {}{}", num(a.alpha_interval, 3), ci(&a.alpha_interval_ci)));
        if r.mode == Mode::Likert {
            out.push(format!("  Fleiss' kappa      {}{}", num(a.fleiss_kappa, 3), ci(&a.fleiss_kappa_ci)));
        }
        for p in &a.pairwise_tau {
            out.push(format!(
                "  tau {} vs {}: {} over {} item(s), system level {}",
                Safe(&p.a),
                Safe(&p.b),
                num(p.mean_item_tau, 3),
                p.items,
                num(p.system_level_tau, 3)
            ));
        }
    }
    out
}

fn annotators(r: &Results) -> Vec<String> {
    let w = r.per_annotator.iter().map(|a| shown_width(&a.annotator)).max().unwrap_or(9).max(9) + 2;
    let mut out = vec![
        "Per annotator: items judged, time, self-consistency on repeated items (Kendall tau, identical",
        "rankings) and position bias (share of items the output shown first wins vs chance)",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    out.push(String::new());
    out.push(format!(
        "{}{:>7}{:>10}{:>8}{:>9}{:>9}{:>10}{:>12}{:>9}",
        pad("annotator", w),
        "items",
        "time s",
        "s/item",
        "repeats",
        "self τ",
        "identical",
        "first wins",
        "chance"
    ));
    if r.per_annotator.is_empty() {
        out.push("(no annotators)".into());
    }
    for a in r.per_annotator.iter().take(MAX_ANNOTATOR_ROWS) {
        out.push(format!(
            "{}{:>7}{:>10.0}{:>8}{:>9}{:>9}{:>10}{:>12}{:>9}",
            pad(&a.annotator, w),
            a.judged_items,
            a.seconds,
            num(a.mean_seconds_per_item, 1),
            a.repeat_pairs,
            num(a.self_tau, 2),
            a.self_identical,
            num(a.first_shown_wins, 2),
            num(a.first_shown_expected, 2)
        ));
    }
    if r.per_annotator.len() > MAX_ANNOTATOR_ROWS {
        out.push(format!("… {} more annotator(s) (--json lists every one)", r.per_annotator.len() - MAX_ANNOTATOR_ROWS));
    }
    out.extend(notes(r));
    out
}

/// The annotators' notes: per annotator the items skipped (no judgments, left out of every
/// number above), flagged unsure and commented, then the notes themselves; nothing when there
/// are none.
fn notes(r: &Results) -> Vec<String> {
    if r.item_notes.is_empty() {
        return Vec::new();
    }
    let mut out = vec![String::new(), "Notes: items skipped (no judgments, left out above), flagged unsure, commented".to_owned()];
    for a in r.per_annotator.iter().filter(|a| a.skipped + a.unsure + a.comments > 0) {
        out.push(format!("  {}: {} skipped · {} unsure · {} comment(s)", line(&a.annotator), a.skipped, a.unsure, a.comments));
    }
    for n in r.item_notes.iter().take(MAX_NOTE_ROWS) {
        let kind = if n.training { " training" } else if n.repeat { " repeat" } else { "" };
        let flag = n.flag.map_or(String::new(), |f| format!(" [{}]", f.as_str()));
        let comment = if n.comment.is_empty() { String::new() } else { format!(" {}", line(&n.comment)) };
        out.push(format!("  {} {}/{}:{}{kind}{flag}{comment}", line(&n.annotator), line(&n.direction), line(&n.split), n.idx));
    }
    if r.item_notes.len() > MAX_NOTE_ROWS {
        out.push(format!("  … {} more note(s) (--json lists every one)", r.item_notes.len() - MAX_NOTE_ROWS));
    }
    out
}

/// Disagreements side by side (training items; real items of an imported campaign).
pub fn disagreements(ds: &[Disagreement]) -> Vec<String> {
    if ds.is_empty() {
        return vec![
            "no disagreement on the training items (an imported campaign's real items), or fewer than two annotators judged them".into(),
        ];
    }
    let which = if ds.iter().all(|d| !d.training) { "real item/aspect pair(s) (an imported campaign has no training items)" } else { "training item/aspect pair(s)" };
    let mut out = vec![format!("{} {which} with disagreement, largest first", ds.len())];
    for d in ds {
        out.push(String::new());
        out.push(format!("{} · {} · spread {:.1}", Safe(&d.address), Safe(&d.aspect), d.spread));
        out.push(format!("  source  {}", Safe(&d.source)));
        for (letter, text) in &d.outputs {
            out.push(format!("  {:<6}  {}", Safe(letter), Safe(text)));
        }
        let w = d.values.iter().map(|(a, _)| shown_width(a)).max().unwrap_or(4) + 2;
        let mut head = format!("  {}", pad("", w));
        for (letter, _) in &d.outputs {
            head += &lpad(letter, 6);
        }
        out.push(head);
        for (a, vals) in &d.values {
            let mut line = format!("  {}", pad(a, w));
            for v in vals {
                line += &lpad(&num(*v, 1), 6);
            }
            out.push(line);
        }
    }
    out
}
