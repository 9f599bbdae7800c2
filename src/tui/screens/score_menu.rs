//! The Scores screen's menu of metrics (`x`): every metric of `score::catalog`, the tstbench
//! ones ticked; Space ticks, Enter scores the ticked ones as a background job, Esc closes. The
//! selected metric's description, the package it follows and what it needs show below the list.

use crate::score::catalog;
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};

pub struct ScoreMenu {
    /// Every catalogue name and whether it is ticked.
    pub rows: Vec<(&'static str, bool)>,
    pub selected: usize,
    scroll: usize,
    /// The list's place at the last draw (for clicks).
    list: Rect,
}

impl Default for ScoreMenu {
    fn default() -> Self {
        let ticked: Vec<&str> = catalog::TSTBENCH.split(',').collect();
        let rows = catalog::names().map(|n| (n, ticked.contains(&n))).collect();
        ScoreMenu { rows, selected: 0, scroll: 0, list: Rect::default() }
    }
}

impl ScoreMenu {
    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    pub fn down(&mut self) {
        self.selected = (self.selected + 1).min(self.rows.len() - 1);
    }

    pub fn toggle(&mut self) {
        let row = &mut self.rows[self.selected];
        row.1 = !row.1;
    }

    /// The ticked names, comma-separated (`score::plan::parse`'s input), or None.
    pub fn ticked(&self) -> Option<String> {
        let names: Vec<&str> = self.rows.iter().filter(|r| r.1).map(|r| r.0).collect();
        (!names.is_empty()).then(|| names.join(","))
    }

    /// A click on a row selects it and ticks or unticks it; true when it hit a row.
    pub fn click(&mut self, column: u16, row: u16) -> bool {
        let l = self.list;
        if row < l.y || row >= l.y + l.height || column < l.x || column >= l.x + l.width {
            return false;
        }
        let i = self.scroll + (row - l.y) as usize;
        if i >= self.rows.len() {
            return false;
        }
        self.selected = i;
        self.toggle();
        true
    }

    pub fn draw(&mut self, f: &mut Frame, area: Rect, dataset: &str) {
        let w = area.width.min(72);
        let h = area.height;
        let rect = Rect { x: area.x + (area.width - w) / 2, y: area.y, width: w, height: h };
        f.render_widget(Clear, rect);
        let n = self.rows.iter().filter(|r| r.1).count();
        let block = theme::pane(format!(" Score {dataset}: {n} ticked "), true);
        let inner = block.inner(rect);
        f.render_widget(block, rect);
        let family = catalog::family_of(self.rows[self.selected].0).expect("catalogue names");
        let width = inner.width as usize;
        let mut about: Vec<Line> = Vec::new();
        for (label, text) in [("", family.about), ("follows: ", family.follows), ("needs: ", family.needs)] {
            if !text.is_empty() {
                about.extend(theme::wrap(&format!("{label}{text}"), width).into_iter().map(|l| Line::styled(l, theme::MUTED)));
            }
        }
        let about_h = (about.len() as u16).min(inner.height / 2);
        let list_h = inner.height.saturating_sub(about_h + 1);
        self.list = Rect { height: list_h, ..inner };
        let shown = list_h as usize;
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if shown > 0 && self.selected >= self.scroll + shown {
            self.scroll = self.selected + 1 - shown;
        }
        let lines: Vec<Line> = self
            .rows
            .iter()
            .enumerate()
            .skip(self.scroll)
            .take(shown)
            .map(|(i, (name, on))| {
                let text = format!("{} {name}", if *on { "[x]" } else { "[ ]" });
                let style = if i == self.selected { theme::SELECTED } else { ratatui::style::Style::default() };
                Line::styled(theme::fit(&text, width), style)
            })
            .collect();
        f.render_widget(Paragraph::new(lines), self.list);
        let about_rect = Rect { y: inner.y + list_h + 1, height: about_h, ..inner };
        f.render_widget(Paragraph::new(about), about_rect);
    }
}

/// What a scoring job of `names` is called: `tstbench` when exactly that group's metrics are
/// ticked (the menu lists them in catalogue order, not the group's), else the names.
pub fn label(names: &str) -> &str {
    fn set(list: &str) -> std::collections::BTreeSet<&str> {
        list.split(',').collect()
    }
    if set(names) == set(catalog::TSTBENCH) { "tstbench" } else { names }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_with_tstbench_and_ticks() {
        let mut m = ScoreMenu::default();
        // The tstbench metrics, in the catalogue's order (acc and d-ppl first).
        assert_eq!(m.ticked().as_deref(), Some("acc,d-ppl,s-bleu,r-bleu,multi-bleu,s-bert,r-bert,multi-bert"));
        m.selected = m.rows.iter().position(|r| r.0 == "chrf").unwrap();
        m.toggle();
        assert_eq!(label(&ScoreMenu::default().ticked().unwrap()), "tstbench");
        assert!(m.ticked().unwrap().contains(",chrf,"));
        assert_eq!(label(&m.ticked().unwrap()), m.ticked().unwrap());
        for r in &mut m.rows {
            r.1 = false;
        }
        assert_eq!(m.ticked(), None);
    }
}
