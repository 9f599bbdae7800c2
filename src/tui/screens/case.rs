//! Compare's case study: items as the screen shows them (hidden systems left out, pinned ones
//! first, scores rounded as there) written to `case-studies/` beside the store, never over an
//! earlier file (`analysis::case::write`).

use crate::analysis::case::{self, CaseItem};
use crate::score::table_fmt::fmt_score;
use crate::store::{ItemDetail, OutputView};
use crate::tui::action::Action;
use std::path::Path;

/// The outputs of `d` shown: pinned systems first (in pin order), hidden ones left out.
pub fn shown<'a>(d: &'a ItemDetail, hidden: &[String], pinned: &[String]) -> Vec<&'a OutputView> {
    let mut v: Vec<&OutputView> = Vec::new();
    for name in pinned {
        v.extend(d.outputs.iter().filter(|o| &o.system == name && !hidden.contains(name)));
    }
    v.extend(d.outputs.iter().filter(|o| !pinned.contains(&o.system) && !hidden.contains(&o.system)));
    v
}

/// An output's scores as shown: `metric=value` with four significant digits (`fmt_score`); a
/// metric scored under several configurations carries the first six characters of each
/// configuration's hash (`dup@1a2b3c`).
pub fn score_texts(o: &OutputView) -> Vec<String> {
    let repeated = |m: &str| o.scores.iter().filter(|s| s.metric == m).count() > 1;
    o.scores
        .iter()
        .map(|s| {
            let name = if repeated(&s.metric) {
                format!("{}@{}", s.metric, s.config.chars().take(6).collect::<String>())
            } else {
                s.metric.clone()
            };
            let value = s.value.map_or("undefined".into(), fmt_score);
            format!("{name}={value}")
        })
        .collect()
}

/// `d` as shown, for a case study: its shown outputs in their order, with their scores.
pub fn as_shown(d: &ItemDetail, hidden: &[String], pinned: &[String]) -> CaseItem {
    let outputs: Vec<OutputView> = shown(d, hidden, pinned).into_iter().cloned().collect();
    let scores = outputs.iter().map(score_texts).collect();
    CaseItem { detail: ItemDetail { outputs, ..d.clone() }, scores }
}

/// Writes `items` to `case-studies/` beside the store at `store_path`; the note says the paths
/// written, and when the first name was taken, that the earlier file is kept.
pub fn write(store_path: &Path, items: &[CaseItem]) -> Action {
    let dir = case::case_dir(store_path);
    let stem = case::stem(items);
    match case::write(&dir, &stem, items) {
        Ok((md, tex)) => {
            let what = match items.len() {
                1 => "case study".to_owned(),
                n => format!("case study of {n} items"),
            };
            let renamed = md.file_stem().is_some_and(|s| s != stem.as_str());
            let kept = if renamed { format!(" (an earlier {stem} is kept)") } else { String::new() };
            Action::Note(format!("{what} written: {} and {}{kept}", md.display(), tex.display()), false)
        }
        Err(e) => Action::Note(format!("case study not written: {e}"), true),
    }
}
