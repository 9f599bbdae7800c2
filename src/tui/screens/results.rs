//! Results: a campaign's results section by section (ranks, Bradley-Terry and win rates,
//! scores, agreement, annotators) and the training disagreements, computed on the loader
//! thread. The report's text is laid out for the width it gets: sentences and labelled texts
//! (a source, an output) wrap, tables wider than the screen scroll sideways (`>` `<`) with
//! their first column kept. A click on a section's name shows it; the wheel scrolls. When
//! another process stores judgments the results are computed again, the section and scroll kept.

use crate::stats::bootstrap::DEFAULT_RESAMPLES;
use crate::human::report;
use crate::human::results::{Disagreement, Results};
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Screen, Shared};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::ops::Range;

/// The tabs: the report sections, then the training disagreements.
pub const TABS: [&str; 6] = ["ranks", "bradley-terry", "scores", "agreement", "annotators", "training"];

pub struct ResultsView {
    pub campaign: Option<String>,
    pub results: Option<Box<(Results, Vec<Disagreement>)>>,
    pub tab: usize,
    pub scroll: usize,
    /// Columns the wide tables are scrolled sideways by.
    pub sideways: usize,
    /// Bootstrap resamples asked for.
    pub resamples: usize,
    /// A table was wider than the screen at the last draw (the `>` `<` keys work).
    wide: bool,
    /// The section names' row and each name's columns at the last draw.
    tabs_at: (u16, Vec<(Range<u16>, usize)>),
}

impl Default for ResultsView {
    fn default() -> Self {
        ResultsView {
            campaign: None,
            results: None,
            tab: 0,
            scroll: 0,
            sideways: 0,
            resamples: DEFAULT_RESAMPLES,
            wide: false,
            tabs_at: (0, Vec::new()),
        }
    }
}

/// How a line of the report is laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A sentence: wraps, continuation lines at its indent.
    Prose { indent: usize },
    /// A label and a text (`  source  the hotel ...`): wraps, continuation lines under the text.
    Labelled { hang: usize },
    /// A table row: never wraps; scrolls sideways, its first column kept. `second`: where its
    /// second column starts.
    Table { second: usize },
}

/// A line's kind, from its fields (runs of two or more spaces part them).
fn kind(line: &str) -> Kind {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let mut starts = Vec::new();
    let mut spaces = 0;
    let mut col = 0;
    for g in unicode_segmentation::UnicodeSegmentation::graphemes(line, true) {
        if g == " " {
            spaces += 1;
        } else {
            if col >= indent && (starts.is_empty() || spaces >= 2) {
                starts.push(col);
            }
            spaces = 0;
        }
        col += crate::text::grapheme_width(g);
    }
    let second_has_space = starts.len() == 2 && {
        let (_, rest) = split_at_col(line, starts[1]);
        rest.trim_end().contains(' ')
    };
    match starts.len() {
        0 | 1 => Kind::Prose { indent },
        2 if second_has_space => Kind::Labelled { hang: starts[1] },
        _ => Kind::Table { second: starts[1] },
    }
}

/// `s` split at display column `col` (whole clusters).
fn split_at_col(s: &str, col: usize) -> (&str, &str) {
    let (h, _) = crate::text::head(s, col);
    (h, &s[h.len()..])
}

/// The report lines laid out in `width` columns, tables scrolled by `sideways`: the lines, and
/// how far the widest table reaches beyond `width`.
fn layout(lines: &[String], width: usize, sideways: usize) -> (Vec<String>, usize) {
    let kinds: Vec<Kind> = lines.iter().map(|l| kind(l)).collect();
    // A table's first column: where the second column starts earliest over its rows; and how
    // far it scrolls (a table that fits does not move).
    let mut sticky = vec![0; lines.len()];
    let mut shift = vec![0; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let Kind::Table { .. } = kinds[i] else {
            i += 1;
            continue;
        };
        let start = i;
        let (mut least, mut widest) = (usize::MAX, 0);
        while let Some(Kind::Table { second }) = kinds.get(i) {
            least = least.min(*second);
            widest = widest.max(crate::text::width(&lines[i]));
            i += 1;
        }
        sticky[start..i].fill(least.min(width / 2));
        shift[start..i].fill(sideways.min(widest.saturating_sub(width)));
    }
    let mut beyond = 0;
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let w = crate::text::width(line);
        match kinds[i] {
            Kind::Table { .. } => {
                beyond = beyond.max(w.saturating_sub(width));
                let keep = sticky[i];
                let (first, rest) = split_at_col(line, keep);
                let (_, rest) = split_at_col(rest, shift[i]);
                let shown = format!("{}{}", crate::text::pad(first, keep), rest);
                out.push(crate::text::cut(&shown, width));
            }
            _ if w <= width => out.push(line.clone()),
            Kind::Labelled { hang } if hang + 12 <= width => {
                let (label, text) = split_at_col(line, hang);
                for (j, l) in theme::wrap(text, width - hang).into_iter().enumerate() {
                    let lead = if j == 0 { crate::text::pad(label, hang) } else { " ".repeat(hang) };
                    out.push(format!("{lead}{l}"));
                }
            }
            Kind::Prose { indent } | Kind::Labelled { hang: indent } => {
                let indent = if indent + 12 <= width { indent } else { 0 };
                for l in theme::wrap(line.trim_start_matches(' '), width - indent) {
                    out.push(format!("{}{l}", " ".repeat(indent)));
                }
            }
        }
    }
    (out, beyond)
}

impl ResultsView {
    /// The lines of the shown tab.
    pub fn lines(&self) -> Vec<String> {
        let Some(b) = &self.results else { return Vec::new() };
        match TABS[self.tab] {
            "training" => report::disagreements(&b.1),
            s => report::section(&b.0, s),
        }
    }

    /// What the campaign is, in full (its name is abbreviated in the title), and its notes.
    fn about(r: &Results) -> Vec<String> {
        let mut out = vec![crate::human::report::heading(r)];
        out.extend(r.notes.iter().map(|n| format!("note: {n}")));
        out.push(String::new());
        out
    }

    fn show_tab(&mut self, tab: usize) {
        if tab != self.tab {
            self.tab = tab;
            self.scroll = 0;
            self.sideways = 0;
        }
    }
}

impl Screen for ResultsView {
    fn id(&self) -> ScreenId {
        ScreenId::RESULTS
    }

    fn tab(&self) -> bool {
        false
    }

    /// `wide` while a table is wider than the screen: the sideways keys work and show.
    fn mode(&self) -> Option<&'static str> {
        Some(if self.wide { "wide" } else { "fits" })
    }

    fn loaded(&mut self, r: &Response, _sh: &mut Shared) -> Option<Action> {
        if let Ok(Reply::Results(b)) = &r.result
            && self.campaign.as_deref() == Some(b.0.campaign.as_str())
        {
            self.results = Some(b.clone());
        }
        None
    }

    /// Judgments stored by another process: computed again, the section and place kept.
    fn store_changed(&mut self, sh: &mut Shared) {
        self.handle(Action::Refresh, sh);
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        match action {
            Action::OpenResults(name) => {
                if self.campaign.as_ref() != Some(&name) {
                    self.results = None;
                    self.scroll = 0;
                    self.sideways = 0;
                }
                self.campaign = Some(name.clone());
                sh.loader.request(Request::Results { campaign: name, resamples: self.resamples });
            }
            Action::Refresh => {
                let campaign = self.campaign.clone()?;
                sh.loader.request(Request::Results { campaign, resamples: self.resamples });
            }
            Action::NextPane | Action::Right => self.show_tab((self.tab + 1) % TABS.len()),
            Action::Left => self.show_tab((self.tab + TABS.len() - 1) % TABS.len()),
            Action::Sideways(n) => self.sideways = self.sideways.saturating_add_signed(n as isize),
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::Down => self.scroll += 1,
            Action::PageUp => self.scroll = self.scroll.saturating_sub(10),
            Action::PageDown => self.scroll += 10,
            Action::Top => self.scroll = 0,
            Action::Bottom => self.scroll = usize::MAX / 2,
            Action::Back => return Some(Action::Go(ScreenId::CAMPAIGNS)),
            _ => {}
        }
        None
    }

    /// A click on a section's name shows it.
    fn click(&mut self, column: u16, row: u16, _sh: &mut Shared) -> Option<Action> {
        let (y, spans) = &self.tabs_at;
        if row == *y
            && let Some((_, tab)) = spans.iter().find(|(x, _)| x.contains(&column))
        {
            self.show_tab(*tab);
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        let busy = if sh.loader.busy(Topic::Results) { " · computing…" } else { "" };
        let facts = match &self.results {
            Some(b) => format!(" · {} · {} judgment(s){busy} ", b.0.mode.as_str(), b.0.judgment_values),
            None => format!("{busy} "),
        };
        let name = self.campaign.as_deref().unwrap_or("no campaign");
        let room = (area.width as usize).saturating_sub(4 + " Results · ".len() + theme::width(&facts)).max(8);
        let title = format!(" Results · {}{facts}", theme::abbrev(name, room).trim_end());
        let block = theme::pane(title, true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let [tabs, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
        let mut spans = Vec::new();
        let mut at = Vec::new();
        let mut x = tabs.x;
        for (i, t) in TABS.iter().enumerate() {
            let text = format!(" {t} ");
            let w = text.len() as u16;
            at.push((x..x + w, i));
            x += w;
            spans.push(Span::styled(text, if i == self.tab { theme::SELECTED } else { theme::LABEL }));
        }
        self.tabs_at = (tabs.y, at);
        let Some(b) = &self.results else {
            self.wide = false;
            f.render_widget(Paragraph::new(Line::from(spans)), tabs);
            let text = if busy.is_empty() { "choose a campaign on the Campaigns screen (5) and press v" } else { "computing…" };
            f.render_widget(Paragraph::new(text).style(theme::MUTED), body);
            return;
        };
        let width = body.width as usize;
        let about = Self::about(&b.0);
        let section: Vec<String> = self.lines().into_iter().map(theme::owned).collect();
        let (_, beyond) = layout(&section, width, 0);
        self.wide = beyond > 0;
        self.sideways = self.sideways.min(beyond.div_ceil(8) * 8);
        let (section, _) = layout(&section, width, self.sideways);
        if self.wide {
            let more = if self.sideways == 0 { "  > more columns" } else { "  < > columns" };
            spans.push(Span::styled(more, theme::KEY));
        }
        f.render_widget(Paragraph::new(Line::from(spans)), tabs);
        let about: Vec<Line> = about.iter().flat_map(|l| theme::wrap(l, width)).map(|l| Line::styled(l, theme::MUTED)).collect();
        let mut lines = about;
        lines.extend(section.into_iter().map(Line::raw));
        self.scroll = self.scroll.min(lines.len().saturating_sub(body.height as usize));
        let shown: Vec<Line> = lines.into_iter().skip(self.scroll).take(body.height as usize).collect();
        f.render_widget(Paragraph::new(shown), body);
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, kind, layout};

    #[test]
    fn lines_are_told_apart() {
        assert_eq!(kind("Average rank per system (lower is better): mean ± SD"), Kind::Prose { indent: 0 });
        assert_eq!(kind("  tau A vs B: 0.333 over 3 item(s)"), Kind::Prose { indent: 2 });
        assert_eq!(kind("  source  the hotel room was dirty ."), Kind::Labelled { hang: 10 });
        assert_eq!(kind("copy          1.62±0.53     1.62±0.53"), Kind::Table { second: 14 });
        assert_eq!(kind("  A     3.0   1.0"), Kind::Table { second: 8 });
    }

    #[test]
    fn sentences_wrap_and_tables_scroll_sideways_keeping_their_names() {
        let lines: Vec<String> = [
            "Average rank per system (lower is better): mean over annotators",
            "",
            "negative->positive    strength     content      fluency",
            "copy                  1.62±0.53    1.10±0.20    2.00±0.10",
            "  source  the hotel room was dirty and the sheets smelled musty .",
            "",
            "system    n",
            "copy      4",
        ]
        .map(String::from)
        .into();
        let (out, beyond) = layout(&lines, 44, 0);
        assert_eq!(beyond, 57 - 44);
        assert_eq!(out[0], "Average rank per system (lower is better):");
        assert_eq!(out[1], "mean over annotators");
        assert_eq!(out[3], "negative->positive    strength     content …");
        assert_eq!(out[5], "  source  the hotel room was dirty and the");
        assert_eq!(out[6], "          sheets smelled musty .");
        let (out, _) = layout(&lines, 44, 13);
        assert_eq!(out[3], "negative->positive    content      fluency");
        assert_eq!(out[4], "copy                  1.10±0.20    2.00±0.10");
        assert_eq!(out[8..], ["system    n", "copy      4"], "a table that fits stays");
    }
}
