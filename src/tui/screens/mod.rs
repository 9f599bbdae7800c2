//! One module per screen, each a type implementing `screen::Screen`, and [`all`], the list the
//! app holds. Adding a screen: its file here, its `mod` line, and one line in [`all`]. Keys of
//! its own (and a tab key) go in the one key table, `keys.rs`, under `Context::Screen(id)`.
//! `analysis_chart`, `campaign_form`, `case`, `launch`, `regen` and `score_menu` are parts of screens,
//! not screens.
//! Annotate, Results and Figures are reached from other screens, not tabs.

pub mod analysis;
pub mod analysis_chart;
pub mod annotate;
pub mod browse;
pub mod campaign_form;
pub mod campaigns;
pub mod case;
pub mod compare;
pub mod figures;
pub mod import;
pub mod jobs;
pub mod launch;
pub mod regen;
pub mod results;
pub mod score_menu;
pub mod scores;

use super::screen::Screen;

/// Every screen, the tabs in tab order (the keys `1`, `2`, ... in `keys.rs`); the first is shown
/// at the start.
pub fn all() -> Vec<Box<dyn Screen>> {
    vec![
        Box::new(browse::Browse::default()),
        Box::new(compare::Compare::default()),
        Box::new(jobs::JobsView::default()),
        Box::new(import::Import::default()),
        Box::new(campaigns::Campaigns::default()),
        Box::new(analysis::Analysis::default()),
        Box::new(scores::Scores::default()),
        Box::new(annotate::Annotate::default()),
        Box::new(results::ResultsView::default()),
        Box::new(figures::Figures::default()),
    ]
}

#[cfg(test)]
mod tests {
    use super::all;
    use crate::tui::action::{Action, ScreenId};
    use crate::tui::keys::{BINDINGS, Context};
    use crossterm::event::KeyCode;
    use std::collections::HashSet;

    #[test]
    fn every_screen_once() {
        let ids: Vec<ScreenId> = all().iter().map(|s| s.id()).collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "a screen registered twice: {ids:?}");
    }

    #[test]
    fn keys_name_registered_screens() {
        let ids: HashSet<ScreenId> = all().iter().map(|s| s.id()).collect();
        for b in BINDINGS {
            if let Action::Go(to) = &b.action {
                assert!(ids.contains(to), "{} goes to {to:?}, which is not in screens::all()", b.key_labels());
            }
            if let Context::Screen(id) = b.context {
                assert!(ids.contains(&id), "keys for {id:?}, which is not in screens::all()");
            }
        }
    }

    /// The digit keys go to the tabs in the order of `all()` (the tab line numbers them).
    #[test]
    fn digit_keys_follow_the_tab_order() {
        let tabs: Vec<ScreenId> = all().iter().filter(|s| s.tab()).map(|s| s.id()).collect();
        for b in BINDINGS.iter().filter(|b| b.context == Context::Main) {
            let Action::Go(to) = &b.action else { continue };
            for k in b.keys {
                if let KeyCode::Char(c @ '1'..='9') = k.code {
                    let n = c.to_digit(10).unwrap() as usize;
                    assert_eq!(tabs.get(n - 1), Some(to), "key {c} goes to {to:?}, tab {n} is {:?}", tabs.get(n - 1));
                }
            }
        }
    }
}
