//! Annotate: one item of an annotator's queue: the source (and references, when the campaign
//! shows them) and the outputs in the annotator's display order, system names hidden, identical
//! outputs once with a count, model-naming outputs flagged, an optional word diff against the
//! source. Ranking by moves, ties or a typed ordering; Likert by digits; sliders by steps.
//! Every change goes to the session's writer (`human::session`) and is shown as stored, and the
//! selection or item moves, only once it is committed. While a change waits (the store busy,
//! read-only, full), the screen keeps drawing, says why in one line, shows the values as
//! entered with `…`; the app holds the keys pressed meanwhile and hands them over, in order,
//! once the change is stored (the [`Screen`] hooks `pending`, `tick`, `keys_held`): a key is never
//! applied to an output it was not meant for.

use super::compare::{diff_words, push_wrapped};
use crate::human::campaign::Mode;
use crate::human::note::{Flag, Note};
use crate::human::rankedit::{self, Groups};
use crate::human::session::{Ahead, Session, Update};
use crate::human::saver::Outcome;
use crate::tui::action::{Action, ScreenId};
use crate::tui::screen::{Pending, Screen, Shared, Show};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use std::path::Path;
use std::time::Duration;

/// The guidelines shown with `i` (`assets/guidelines.md`).
pub const GUIDELINES: &str = include_str!("../../../assets/guidelines.md");

/// How long quitting or leaving a queue waits to write the time spent and the position.
const FLUSH_WAIT: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct Annotate {
    pub session: Option<Session>,
    /// Position of the selection in the shown order.
    pub selected: usize,
    /// The ordering being typed.
    pub typing: Option<String>,
    /// The comment being typed (`c`), not stored until Enter.
    pub comment: Option<String>,
    /// Rank mode: the order `K`, `J` and `=` made, shown and not stored until Enter.
    pub draft: Option<Groups>,
    pub guidelines: bool,
    pub diff: bool,
    guide_scroll: usize,
    /// The guidelines cover the item (narrow terminals): Up/Down scroll them.
    guide_over: bool,
    /// Where the outputs were last drawn (for clicks).
    outputs_at: OutputsAt,
    /// What to do once the waiting change is stored.
    after: Option<After>,
    /// Keys the app holds until the waiting change is stored (shown on the save line).
    pub held: usize,
    /// Slider mode: the digits of a value being typed for the selected output.
    pub value: Option<String>,
    /// The end of the training pass is shown (over the item) until a key is pressed.
    pub checkpoint: bool,
}

/// Where the outputs were last drawn: the body's area, its scroll, and for each line of the
/// body the position of the output it shows.
#[derive(Default)]
struct OutputsAt {
    body: Rect,
    scroll: usize,
    owner: Vec<Option<usize>>,
}

/// The item's lines by part (see `Annotate::body`).
#[derive(Default)]
struct Body {
    source: Vec<Line<'static>>,
    /// Each reference's lines.
    references: Vec<Vec<Line<'static>>>,
    /// The aspect and its scale.
    rule: Vec<Line<'static>>,
    outputs: Vec<Line<'static>>,
    /// For each line of `outputs`, the position of the output it shows.
    owner: Vec<Option<usize>>,
    footer: Vec<Line<'static>>,
}

impl Body {
    /// The pinned lines in at most `room` lines where they fit: the source and the aspect
    /// always, then as many whole references as fit, and a line saying how many do not.
    fn pinned(&self, room: usize) -> Vec<Line<'static>> {
        let mut out = self.source.clone();
        let fixed = self.source.len() + self.rule.len();
        let all: usize = self.references.iter().map(Vec::len).sum();
        if fixed + all <= room {
            out.extend(self.references.iter().flatten().cloned());
        } else {
            // Keep one line for the note.
            let mut left = room.saturating_sub(fixed + 1);
            let mut shown = 0;
            for r in &self.references {
                if r.len() > left {
                    break;
                }
                left -= r.len();
                out.extend(r.iter().cloned());
                shown += 1;
            }
            let n = self.references.len();
            let which = if n - shown == 1 { format!("ref {n} is") } else { format!("refs {}-{n} are", shown + 1) };
            out.push(Line::styled(format!("  … {which} not shown: the terminal is too short"), theme::MUTED));
        }
        out.extend(self.rule.iter().cloned());
        out
    }
}

/// The outputs' lines in `h` rows, scrolled so the selected output is whole on screen, with a
/// marker where outputs are above or below the fold; and the scroll.
fn folded(mut lines: Vec<Line<'static>>, owner: &[Option<usize>], selected: usize, h: usize) -> (Vec<Line<'static>>, usize) {
    if lines.len() <= h || h < 3 {
        return (lines, 0);
    }
    let first = owner.iter().position(|o| *o == Some(selected)).unwrap_or(0);
    let last = owner.iter().rposition(|o| *o == Some(selected)).unwrap_or(first);
    // One line above the selection for the marker; one below it.
    let mut scroll = first.saturating_sub(1);
    if last + 2 > scroll + h {
        scroll = (last + 2).saturating_sub(h);
    }
    scroll = scroll.min(lines.len() - h);
    let outputs_in = |range: std::ops::Range<usize>| {
        let mut v: Vec<usize> = owner[range].iter().flatten().copied().collect();
        v.dedup();
        v
    };
    let label = |v: &[usize]| if v.len() == 1 { "1 output".to_owned() } else { format!("{} outputs", v.len()) };
    let mut shown: Vec<Line<'static>> = lines.drain(scroll..scroll + h).collect();
    if scroll > 0 {
        let above = outputs_in(0..scroll + 1);
        shown[0] = Line::styled(format!("  ▲ {} above", label(&above)), theme::MUTED);
    }
    if scroll + h < owner.len() {
        let below = outputs_in(scroll + h - 1..owner.len());
        shown[h - 1] = Line::styled(format!("  ▼ {} below", label(&below)), theme::MUTED);
    }
    (shown, scroll)
}

/// Why a key that judges does nothing on a skipped item.
const SKIPPED: &str = "this item is skipped: f clears the flag to judge it";

/// The screen's mode while the end of the training pass is shown (`Screen::mode`).
pub const CHECKPOINT: &str = "checkpoint";

/// From this width the guidelines are shown beside the item, below it over the item.
const GUIDE_BESIDE: u16 = 120;

/// What the screen does once a change is stored.
#[derive(Debug, Clone, PartialEq)]
enum After {
    Stay,
    /// Likert: select the next output.
    Next,
    /// Select the top output and say this.
    Top(String),
    /// Undo (true) or redo.
    Step(bool),
    /// Say this.
    Say(String),
}

impl Annotate {
    /// Opens an annotator's queue (joining the campaign when `join`).
    fn open_queue(&mut self, path: &Path, campaign: &str, annotator: &str, join: bool) -> Result<(), String> {
        let s = Session::open(path, campaign, annotator, join).map_err(|e| e.to_string())?;
        self.session = Some(s);
        self.selected = 0;
        self.typing = None;
        self.comment = None;
        self.draft = None;
        self.after = None;
        self.value = None;
        // Past the training and not yet on the real items (after a restart too).
        self.checkpoint = self.session.as_ref().is_some_and(Session::training_over);
        Ok(())
    }

    /// A change waits to be stored.
    pub fn waiting(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.waiting.is_some())
    }

    /// Moves on after a stored change, as the key that made it asked.
    fn settled(&mut self, outcome: Outcome) -> Option<Action> {
        let n_rows = self.sizes().len();
        match self.after.take()? {
            After::Stay => None,
            After::Next => {
                self.selected = (self.selected + 1).min(n_rows.saturating_sub(1));
                None
            }
            After::Top(note) => {
                self.selected = 0;
                Some(Action::Note(note, false))
            }
            After::Say(note) => Some(Action::Note(note, false)),
            After::Step(undo) => {
                self.selected = self.selected.min(n_rows.saturating_sub(1));
                Some(Action::Note(self.step_note(undo, &outcome), false))
            }
        }
    }

    /// What an undo (or redo) did: the item, the aspect and, per output label, the value it
    /// removed or put back (the ranking, in rank mode).
    fn step_note(&self, undo: bool, outcome: &Outcome) -> String {
        let (verb, again) = if undo { ("undone", "restored") } else { ("redone", "stored again") };
        if let Outcome::NoteStepped { seq, before, after } = outcome {
            return format!("{verb}: item {} · note {} → {}", seq + 1, theme::text(&before.words()), theme::text(&after.words()));
        }
        let Outcome::Stepped { seq, aspect, before, after } = outcome else {
            return if undo { "nothing to undo".into() } else { "nothing to redo".into() };
        };
        let Some(s) = &self.session else { return verb.into() };
        let (was, now) = (s.row_values(before), s.row_values(after));
        let what = if s.campaign.def.mode == Mode::Rank {
            match (rankedit::from_values(&was), rankedit::from_values(&now)) {
                (Some(a), Some(b)) => format!("ranking {} → {}", rankedit::format(&a), rankedit::format(&b)),
                (Some(a), None) => format!("ranking {} removed", rankedit::format(&a)),
                (None, Some(b)) => format!("ranking {} {again}", rankedit::format(&b)),
                (None, None) => "no ranking either way".into(),
            }
        } else {
            let changes: Vec<String> = was
                .iter()
                .zip(&now)
                .enumerate()
                .filter_map(|(row, pair)| {
                    let what = match pair {
                        (Some(a), None) => format!("{a:.0} removed"),
                        (None, Some(b)) => format!("{b:.0} {again}"),
                        (Some(a), Some(b)) if a != b => format!("{a:.0} → {b:.0}"),
                        _ => return None,
                    };
                    Some(format!("[{}] {what}", row + 1))
                })
                .collect();
            if changes.is_empty() { "no value changed".into() } else { changes.join(", ") }
        };
        format!("{verb}: item {} · {} · {what}", seq + 1, theme::text(aspect))
    }

    /// A change stored on a training entry that leaves the training pass over shows the
    /// checkpoint.
    fn check_training_end(&mut self, outcome: &Outcome) {
        let Some(s) = &self.session else { return };
        if *outcome != Outcome::NothingToStep && s.entry().training && s.training_over() {
            self.checkpoint = true;
        }
    }

    /// Leaves the checkpoint for the first unfinished real item.
    fn begin_real(&mut self) -> Option<Action> {
        self.checkpoint = false;
        if let Some(note) = self.next_unfinished() {
            return Some(note);
        }
        let s = self.session.as_ref()?;
        if s.campaign.def.design == crate::human::adaptive::Design::Adaptive {
            return Some(Action::Note("the real pass: each screen is chosen from the judgments stored so far".into(), false));
        }
        let left = s.entries.iter().filter(|e| !e.finished()).count();
        Some(Action::Note(format!("the real pass: {left} item(s) to do"), false))
    }

    /// Slider mode: a digit of the selected output's value. The value is stored, and the next
    /// output selected, once it is complete: when no further digit keeps it within 0-100 (two
    /// digits but 10, or 0, or 100); Enter stores a shorter one.
    fn type_value(&mut self, d: u8) -> Option<Action> {
        let mut t = self.value.take().unwrap_or_default();
        t.push(char::from(b'0' + d));
        let n: u32 = t.parse().unwrap_or(0);
        if n > 100 {
            t.pop();
            let note = format!("slider values go up to 100: Enter stores {t}, Esc drops it");
            self.value = Some(t);
            return Some(Action::Note(note, false));
        }
        if n == 0 || n * 10 > 100 {
            return self.set_score(|_| f64::from(n), After::Next);
        }
        self.value = Some(t);
        None
    }

    /// Stores the value typed (Enter), then selects the next output.
    fn store_value(&mut self) -> Option<Action> {
        let n: u32 = self.value.take()?.parse().unwrap_or(0);
        self.set_score(|_| f64::from(n), After::Next)
    }

    fn campaign_mode(&self) -> Option<Mode> {
        self.session.as_ref().map(|s| s.campaign.def.mode)
    }

    /// The ranking of the shown aspect, if it is judged.
    pub fn groups(&self) -> Option<Groups> {
        rankedit::from_values(self.session.as_ref()?.values())
    }

    /// The ranking shown: the draft `K`, `J` and `=` made, else the stored one.
    pub fn shown_groups(&self) -> Option<Groups> {
        self.draft.clone().or_else(|| self.groups())
    }

    /// Row indices in the order shown: by rank when ranked (or a draft), else display order.
    pub fn order(&self) -> Vec<usize> {
        let Some(s) = &self.session else { return Vec::new() };
        match (s.campaign.def.mode, self.shown_groups()) {
            (Mode::Rank, Some(g)) => rankedit::flat(&g),
            _ => (0..s.view.rows.len()).collect(),
        }
    }

    fn selected_row(&self) -> Option<usize> {
        self.order().get(self.selected).copied()
    }

    fn sizes(&self) -> Vec<usize> {
        self.session.as_ref().map_or(Vec::new(), |s| s.view.rows.iter().map(|r| r.systems.len()).collect())
    }

    /// Stores a ranking, then does `after`.
    fn commit_groups(&mut self, groups: &Groups, after: After) -> Option<Action> {
        let ranks = rankedit::row_ranks(groups, &self.sizes());
        self.commit(ranks.into_iter().map(Some).collect(), after)
    }

    /// Hands values to the writer; `after` happens once they are stored (at once when they
    /// change nothing).
    fn commit(&mut self, values: Vec<Option<f64>>, after: After) -> Option<Action> {
        let s = self.session.as_mut()?;
        match s.submit(values) {
            Ok(true) => {
                self.after = Some(after);
                None
            }
            Ok(false) => {
                self.after = Some(after);
                self.settled(Outcome::Values)
            }
            Err(e) => Some(Action::Note(format!("not saved: {e}"), true)),
        }
    }

    /// Applies a ranking edit to the selected output; an edit that changes nothing (`=` or `K`
    /// on the top output, `J` on the last) says why (`why`) and stores nothing.
    fn edit_ranking(&mut self, op: fn(&mut Groups, usize) -> bool, why: &str) -> Option<Action> {
        if self.campaign_mode() != Some(Mode::Rank) {
            return Some(Action::Note("this campaign scores outputs: digits, Left/Right".into(), false));
        }
        if self.skipped() {
            return Some(Action::Note(SKIPPED.into(), false));
        }
        let row = self.selected_row()?;
        let mut g = self.shown_groups().unwrap_or_else(|| rankedit::initial(self.sizes().len()));
        if !op(&mut g, row) {
            return Some(Action::Note(why.into(), false));
        }
        // The order changes on screen only; Enter stores it.
        self.draft = if self.groups().as_ref() == Some(&g) { None } else { Some(g) };
        if let Some(p) = self.order().iter().position(|&x| x == row) {
            self.selected = p;
        }
        None
    }

    /// Why a key that leaves the shown aspect waits: a moved order not stored yet.
    fn draft_blocks(&self) -> Option<Action> {
        Some(Action::Note(format!("{}, Esc drops it", self.unstored()?), true))
    }

    fn set_score(&mut self, value: impl Fn(Option<f64>) -> f64, after: After) -> Option<Action> {
        let row = self.selected_row()?;
        let s = self.session.as_ref()?;
        let (lo, hi) = s.campaign.def.mode.range(s.view.rows.len());
        let mut values = s.values().to_vec();
        values[row] = Some(value(values[row]).clamp(lo, hi));
        self.commit(values, after)
    }

    fn go(&mut self, seq: usize, aspect: Option<usize>) -> Option<Action> {
        let s = self.session.as_mut()?;
        let r = s.goto(seq, aspect);
        self.selected = 0;
        r.err().map(|e| Action::Note(format!("cannot move: {e}"), true))
    }

    fn submit_ordering(&mut self) -> Option<Action> {
        let text = self.typing.clone()?;
        let m = self.sizes().len();
        match rankedit::parse(&text, m) {
            Ok(g) => {
                self.typing = None;
                self.draft = None;
                self.commit_groups(&g, After::Top(format!("ranked {}", rankedit::format(&g))))
            }
            Err(e) => Some(Action::Note(format!("{text}: {e}"), true)),
        }
    }

    fn accept(&mut self) -> Option<Action> {
        if let Some(g) = self.draft.take() {
            return self.commit_groups(&g, After::Top(format!("stored {}", rankedit::format(&g))));
        }
        if self.skipped() {
            return self.next_unfinished();
        }
        let s = self.session.as_ref()?;
        let unranked = s.values().iter().any(Option::is_none);
        if s.campaign.def.mode == Mode::Rank && unranked {
            let g = rankedit::initial(s.view.rows.len());
            return self.commit_groups(&g, After::Stay);
        }
        if unranked {
            return Some(Action::Note("score every output first (digits or Left/Right)".into(), false));
        }
        self.next_unfinished()
    }

    fn next_unfinished(&mut self) -> Option<Action> {
        let s = self.session.as_ref()?;
        // Another aspect of this item first.
        if let Some(a) = s.entry().unfinished_aspect() {
            return self.go(s.at, Some(a));
        }
        let s = self.session.as_mut()?;
        match s.advance() {
            Ok(Ahead::Entry(seq, a)) => self.go(seq, Some(a)),
            Ok(Ahead::Done(None)) => Some(Action::Note("every item is done: thank you!".into(), false)),
            // An adaptive campaign that chose no further screen.
            Ok(Ahead::Done(Some(why))) => Some(Action::Note(format!("every item is done ({why}): thank you!"), false)),
            Err(e) => Some(Action::Note(format!("the next screen could not be chosen: {e}"), true)),
        }
    }

    /// The shown item is skipped.
    fn skipped(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.entry().skipped)
    }

    /// Stores the comment typed (Enter); an empty one removes it.
    fn store_comment(&mut self) -> Option<Action> {
        let text = self.comment.take()?;
        let s = self.session.as_mut()?;
        let note = Note { comment: Note::clean_comment(&text), flag: s.view.note.flag };
        let say = if note.comment.is_empty() { "comment removed".to_owned() } else { "comment stored".to_owned() };
        match s.submit_note(note) {
            Ok(true) => {
                self.after = Some(After::Say(say));
                None
            }
            Ok(false) => Some(Action::Note("the comment is unchanged".into(), false)),
            Err(e) => Some(Action::Note(format!("not saved: {e}"), true)),
        }
    }

    /// The next flag (`f`): none → unsure → skip → none.
    fn cycle_flag(&mut self) -> Option<Action> {
        let s = self.session.as_mut()?;
        let judged = s.judged();
        match s.cycle_flag() {
            Ok(flag) => {
                let say = match flag {
                    Some(Flag::Unsure) if judged => "flagged unsure (f again: no flag; an item with judgments is not skipped)".to_owned(),
                    Some(Flag::Unsure) => "flagged unsure (f again: skip it)".to_owned(),
                    Some(Flag::Skip) => "skipped: done without judgments (f again: no flag)".to_owned(),
                    None => "flag removed".to_owned(),
                };
                self.after = Some(After::Say(say));
                None
            }
            Err(e) => Some(Action::Note(format!("not saved: {e}"), true)),
        }
    }

    /// The note line under the item: the comment and flag as stored (`…` while a change to
    /// them waits), or the comment being typed.
    fn note_lines(&self) -> Vec<Line<'static>> {
        let Some(s) = &self.session else { return Vec::new() };
        if let Some(t) = &self.comment {
            return vec![Line::from(vec![
                Span::styled("  comment: ", theme::LABEL),
                Span::raw(theme::owned(t.clone())),
                Span::styled("▏", theme::KEY),
                Span::styled("  Enter stores · Esc cancels", theme::MUTED),
            ])];
        }
        let note = s.note();
        if note.is_empty() && s.view.note.is_empty() {
            return Vec::new();
        }
        let waiting = note != &s.view.note;
        let mut spans = vec![Span::styled("  note: ", theme::LABEL)];
        if !note.comment.is_empty() {
            spans.push(Span::raw(theme::owned(note.comment.clone())));
        }
        if let Some(f) = note.flag {
            let sep = if note.comment.is_empty() { "" } else { " · " };
            spans.push(Span::styled(format!("{sep}{}", f.as_str()), theme::ERROR));
        }
        if note.is_empty() {
            spans.push(Span::styled("(removed)", theme::MUTED));
        }
        if waiting {
            spans.push(Span::styled("…", theme::LABEL));
        }
        vec![Line::from(spans)]
    }

    /// The item's lines at `width`, and for each line the position of the output it shows.
    /// What the item's area shows: the source, references and aspect (pinned), the outputs
    /// (scrolled) and what is stored (pinned below them).
    fn body(&self, width: u16) -> Body {
        let Some(s) = &self.session else { return Body::default() };
        let v = &s.view;
        let text_w = (width as usize).saturating_sub(16).max(10);
        let mut body = Body::default();
        let plain = |out: &mut Vec<Line<'static>>, label: &str, text: &str| {
            let words = text.split_whitespace().map(|w| (w.to_owned(), Style::new())).collect();
            push_wrapped(out, "  ", Span::styled(theme::fit(label, 11), theme::LABEL), words, text_w);
        };
        plain(&mut body.source, "source", &v.source);
        for (i, r) in v.references.iter().enumerate() {
            let mut lines = Vec::new();
            plain(&mut lines, &format!("ref {}", i + 1), r);
            body.references.push(lines);
        }
        let mode = s.campaign.def.mode;
        // The aspect and its scale in words; wrapped, never cut.
        let rule = format!("── {}: {} ", theme::text(s.aspect_name()), mode.scale_words(s.aspect_name()));
        let fill = (width as usize).saturating_sub(theme::width(&rule));
        if fill > 0 {
            body.rule.push(Line::styled(format!("{rule}{}", "─".repeat(fill)), theme::MUTED));
        } else {
            let words = rule.split_whitespace().map(|w| (w.to_owned(), theme::MUTED)).collect();
            push_wrapped(&mut body.rule, "", Span::raw(""), words, (width as usize).saturating_sub(2));
        }
        let entered = s.entered();
        let mut out: Vec<Line<'static>> = Vec::new();
        if mode == Mode::Rank
            && let Some(g) = entered.and_then(rankedit::from_values)
        {
            out.push(Line::styled(format!("  entered, not stored yet: {}", rankedit::format(&g)), theme::LABEL));
        }
        let groups = self.shown_groups();
        let ranks = groups.as_ref().map(|g| rankedit::row_ranks(g, &self.sizes()));
        let mut owner = Vec::new();
        for (pos, &row) in self.order().iter().enumerate() {
            let r = &v.rows[row];
            let value = s.values()[row];
            // A value entered and not stored yet is shown with `…`.
            let waiting = entered.map(|e| e[row]).filter(|e| *e != value);
            let mark = match mode {
                Mode::Rank => match (&ranks, &groups) {
                    (Some(rk), Some(g)) => {
                        let tied = g.iter().any(|grp| grp.len() > 1 && grp.contains(&row));
                        format!("{:>4}{}", fmt_rank(rk[row]), if tied { "=" } else { " " })
                    }
                    _ => "   · ".into(),
                },
                Mode::Likert | Mode::Slider => match (waiting, &self.value) {
                    (_, Some(t)) if pos == self.selected => format!("{t:>4}▏"),
                    (Some(w), _) => format!("{:>4}…", w.map_or("·".into(), |x| format!("{x:.0}"))),
                    (None, _) => format!("{:>4} ", value.map_or("·".into(), |x| format!("{x:.0}"))),
                },
            };
            let count = if r.systems.len() > 1 { format!("x{}", r.systems.len()) } else { String::new() };
            let label = format!("{mark}[{}]{count:<3}", row + 1);
            let selected = pos == self.selected;
            let style = if selected { theme::SELECTED } else { theme::KEY };
            let words = if r.text.trim().is_empty() {
                vec![("(empty output)".to_owned(), theme::MUTED)]
            } else if self.diff {
                diff_words(&v.source, &r.text, true)
            } else {
                r.text.split_whitespace().map(|w| (w.to_owned(), Style::new())).collect()
            };
            owner.resize(out.len(), None);
            push_wrapped(&mut out, if selected { "▶ " } else { "  " }, Span::styled(label, style), words, text_w.saturating_sub(2));
            if mode == Mode::Slider {
                out.push(slider_line(waiting.flatten().or(value), text_w));
            }
            if let Some(p) = r.flag {
                out.push(Line::styled(format!("{}⚑ names a model ({p:?})", " ".repeat(16)), theme::ERROR));
            }
            owner.resize(out.len(), Some(pos));
        }
        body.footer.push(Line::styled(format!("  {}", self.entered_summary()), theme::LABEL));
        body.footer.extend(self.note_lines());
        if let Some(t) = &self.value {
            let n: u32 = t.parse().unwrap_or(0);
            let more = if n == 10 { "0 makes 100".to_owned() } else { format!("a digit more: {}-{}", n * 10, n * 10 + 9) };
            body.footer.push(Line::from(vec![
                Span::styled("  value: ", theme::LABEL),
                Span::raw(t.clone()),
                Span::styled("▏", theme::KEY),
                Span::styled(format!("  {more} · Enter stores {t} · Esc drops it"), theme::MUTED),
            ]));
        }
        if let Some(t) = &self.typing {
            body.footer.push(Line::from(vec![
                Span::styled("  ordering: ", theme::LABEL),
                Span::raw(t.clone()),
                Span::styled("▏", theme::KEY),
                Span::styled("  labels 1-n, > better, = tie · Enter ranks · Esc cancels", theme::MUTED),
            ]));
        }
        body.outputs = out;
        body.owner = owner;
        body
    }

    /// What is stored for the shown aspect, in one line: the ranking, or how many outputs are
    /// scored, and what Enter does next.
    fn entered_summary(&self) -> String {
        let Some(s) = &self.session else { return String::new() };
        let values = s.values();
        let scored = values.iter().filter(|v| v.is_some()).count();
        if let Some(d) = &self.draft {
            return format!("not stored: {} · Enter stores the order shown · Esc drops it", rankedit::format(d));
        }
        if s.entry().skipped {
            return "stored: skipped, no judgments · Enter: next unfinished".into();
        }
        match (s.campaign.def.mode, self.groups()) {
            (Mode::Rank, Some(g)) => format!("stored: {} · Enter: next unfinished", rankedit::format(&g)),
            (Mode::Rank, None) => "not ranked yet · Enter stores the order shown".into(),
            _ if scored == values.len() => format!("stored: all {scored} scored · Enter: next unfinished"),
            _ => format!("stored: {scored} of {} scored", values.len()),
        }
    }

    /// The key line at the foot of the screen: this mode's keys, then undo and moving back
    /// and forth, as many as fit in `width`.
    fn keys_line(&self, width: usize) -> Line<'static> {
        let Some(s) = &self.session else { return Line::default() };
        let store = self.value.as_ref().map(|t| format!("store {t}, next output"));
        let mut keys: Vec<(&str, &str)> = match (s.campaign.def.mode, &store) {
            _ if self.checkpoint => vec![("Enter", "real items"), ("Esc", "look back at the training"), ("i", "guide")],
            (Mode::Slider, Some(store)) => vec![("0-9", "a digit more"), ("Enter", store.as_str()), ("Esc", "drop it")],
            (Mode::Rank, _) => vec![("K/J", "move"), ("=", "tie"), ("o", "type 3>1=2"), ("Enter", "accept")],
            (Mode::Likert, _) => vec![("1-5", "score"), ("←/→", "±1"), ("Enter", "next")],
            (Mode::Slider, None) => vec![("0-9", "type 0-100, next at 2 digits"), ("←/→", "±1"), ("[ ]", "±10"), ("Enter", "next")],
        };
        if !self.checkpoint && self.value.is_none() {
            keys.extend([
                ("z", "undo"),
                ("b n", "prev/next item"),
                ("y", "redo"),
                ("Tab", "aspect"),
                ("u", "unfinished"),
                ("c", "comment"),
                ("f", "flag"),
                ("i", "guide"),
            ]);
        }
        let mut spans = vec![Span::raw(" ")];
        let mut used = 1;
        for (k, what) in keys {
            let w = theme::width(k) + 1 + theme::width(what) + 2;
            if used + w > width {
                break;
            }
            spans.push(Span::styled(k.to_owned(), theme::KEY));
            spans.push(Span::styled(format!(" {what}  "), theme::MUTED));
            used += w;
        }
        Line::from(spans)
    }

    /// The save line, while a change waits or the bookkeeping could not be written.
    fn save_line(&self) -> Option<Line<'static>> {
        let s = self.session.as_ref()?;
        let held = if self.held == 0 { String::new() } else { format!(", {} key(s) held", self.held) };
        let Some(w) = &s.waiting else {
            let e = s.book_error.as_ref()?;
            return Some(Line::styled(theme::owned(format!(" position and time not saved yet: {e} (judgments are not affected)")), theme::MUTED));
        };
        let n = w.what();
        Some(match &w.error {
            None => Line::styled(format!(" saving {n}…{held}"), theme::LABEL),
            Some(e) => {
                let when = match w.retry_in() {
                    Some(d) if !d.is_zero() => format!("retrying in {:.0} s", d.as_secs_f64().ceil()),
                    _ => "retrying".into(),
                };
                Line::styled(
                    theme::owned(format!(" ✗ NOT SAVED YET: {e}. {n} waiting{held}; {when} (a key: now, Esc: drop held keys)")),
                    theme::ERROR,
                )
            }
        })
    }

    /// The progress lines, `width` columns wide: the item, what is stored, the items done of
    /// all and by kind, the time left once it can be estimated (on a line of its own when it
    /// does not fit); then every aspect of the item (done ✓, the shown one ▸ and highlighted).
    fn status(&self, width: usize) -> Vec<Line<'static>> {
        let Some(s) = &self.session else { return Vec::new() };
        let p = s.progress();
        let e = s.entry();
        let kind = if e.training { " TRAINING" } else if e.repeat { " repeat" } else { "" };
        let item = format!(" item {}/{}{kind}", s.at + 1, s.entries.len());
        // The kinds the queue has: training, real, repeats (named short, then left out, when
        // the line would wrap).
        let kinds = |names: [&str; 3]| -> String {
            [(names[0], p.training_done, p.training), (names[1], p.real_done, p.real), (names[2], p.repeats_done, p.repeats)]
                .into_iter()
                .filter(|(_, _, n)| *n > 0)
                .map(|(what, done, n)| format!("{what} {done}/{n}"))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let done = p.training_done + p.real_done + p.repeats_done;
        let total = format!(" · stored {} · {done}/{} done", s.stored, s.entries.len());
        let counts = [kinds(["training", "real", "repeats"]), kinds(["train", "real", "rep"])]
            .into_iter()
            .map(|k| format!("{total}: {k}"))
            .find(|c| theme::width(&item) + theme::width(c) <= width)
            .unwrap_or(total);
        let left = s.time_left().map(time_left_words);
        let fits = left.as_ref().is_some_and(|l| theme::width(&item) + theme::width(&counts) + 3 + theme::width(l) <= width);
        let mut head = vec![Span::styled(item, theme::LABEL), Span::styled(counts, theme::MUTED)];
        let mut lines = Vec::new();
        match left {
            Some(l) if fits => head.push(Span::styled(format!(" · {l}"), theme::LABEL)),
            Some(l) => {
                lines.push(Line::from(head));
                head = vec![Span::styled(format!(" {l}"), theme::LABEL)];
            }
            None => {}
        }
        lines.push(Line::from(head));
        let mut spans = vec![Span::styled(" aspects: ", theme::MUTED)];
        for (i, a) in s.campaign.def.aspects.iter().enumerate() {
            let mark = match (i == s.aspect, e.done[i]) {
                (true, true) => "▸✓",
                (true, false) => "▸",
                (false, true) => "✓",
                (false, false) => "·",
            };
            let style = if i == s.aspect { theme::SELECTED } else if e.done[i] { theme::OK } else { theme::MUTED };
            spans.push(Span::styled(format!("{mark}{}", theme::text(a)), style));
            spans.push(Span::raw(" "));
        }
        let done = e.done.iter().filter(|d| **d).count();
        if e.skipped {
            spans.push(Span::styled(" skipped", theme::OK));
        } else {
            spans.push(Span::styled(format!(" {done}/{} done", e.done.len()), theme::MUTED));
        }
        lines.push(Line::from(spans));
        lines
    }

    /// The checkpoint in a box over the item's area, in the middle of it.
    fn draw_checkpoint(&self, f: &mut Frame, area: Rect) {
        let lines = self.checkpoint_lines();
        let w = area.width.min(72);
        let inner_w = usize::from(w.saturating_sub(4)).max(1);
        let text_h: usize = lines.iter().map(|l| wrapped_lines(&l.to_string(), inner_w)).sum();
        let h = (text_h as u16 + 2).min(area.height);
        let at = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
        let block = theme::pane(" Training over ".into(), true);
        let inner = block.inner(at).inner(ratatui::layout::Margin { horizontal: 1, vertical: 0 });
        // The item's outputs go: no key scores them while this is shown.
        f.render_widget(Clear, area);
        f.render_widget(block, at);
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
    }

    /// The end of the training pass, over the item: what was done, what to do now, the keys on.
    fn checkpoint_lines(&self) -> Vec<Line<'static>> {
        let Some(s) = &self.session else { return Vec::new() };
        let p = s.progress();
        let repeats = if p.repeats > 0 { format!(" (and {} shown a second time)", p.repeats) } else { String::new() };
        vec![
            Line::styled(format!("You have done the {} training item(s): the training is over.", p.training), theme::LABEL),
            Line::default(),
            Line::raw("Discuss them with the others before the real pass: how each of you read the aspects and used the scale."),
            Line::default(),
            Line::raw(if s.campaign.def.design == crate::human::adaptive::Design::Adaptive {
                format!("Next: the real pass, {} outputs a screen, each screen chosen from the judgments stored so far.", s.campaign.def.screen_size())
            } else {
                format!("Next: the real pass, {} item(s){repeats}.", p.real)
            }),
            Line::default(),
            Line::from(vec![Span::styled("Enter", theme::KEY), Span::raw(" goes on to the real items")]),
            Line::from(vec![Span::styled("Esc", theme::KEY), Span::raw(" looks back at the training items first")]),
        ]
    }
}

/// The estimate of the time left in words: `≈ 12 min left`, `≈ 1 h 05 min left`, `< 1 min left`.
pub fn time_left_words(left: Duration) -> String {
    let min = (left.as_secs_f64() / 60.0).round() as u64;
    match min {
        0 => "< 1 min left".into(),
        1..60 => format!("≈ {min} min left"),
        _ => format!("≈ {} h {:02} min left", min / 60, min % 60),
    }
}

/// A slider's bar under its output: as wide as the text column allows (`text_w`), with the value.
fn slider_line(value: Option<f64>, text_w: usize) -> Line<'static> {
    let bar = text_w.saturating_sub(6).clamp(10, 100);
    let n = value.map_or(0, |x| ((x / 100.0) * bar as f64).round() as usize).min(bar);
    Line::from(vec![
        Span::raw(" ".repeat(16)),
        Span::styled("█".repeat(n), theme::SCORE),
        Span::styled("░".repeat(bar - n), theme::MUTED),
        Span::styled(value.map_or(" ·".into(), |x| format!(" {x:.0}")), theme::MUTED),
    ])
}

/// One block of the guidelines: the author's paragraphs (their lines joined), list items (with
/// their indented continuation lines), headings and blank lines, in order.
#[derive(Debug, PartialEq)]
enum GuideBlock {
    Heading(String),
    Para(String),
    Item(String, String),
    Blank,
}

fn guide_blocks(text: &str) -> Vec<GuideBlock> {
    let mut out: Vec<GuideBlock> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        let bullet = ["- ", "* "].iter().find(|b| t.starts_with(**b)).map(|b| b.trim());
        let continues = line.starts_with(' ') || line.starts_with('\t');
        match (out.last_mut(), t) {
            (_, "") => out.push(GuideBlock::Blank),
            (_, _) if t.starts_with('#') => out.push(GuideBlock::Heading(t.trim_start_matches('#').trim().to_owned())),
            (_, _) if bullet.is_some() => out.push(GuideBlock::Item(bullet.unwrap_or("-").to_owned(), t[2..].trim().to_owned())),
            (Some(GuideBlock::Item(_, body)), _) if continues => (body.push(' '), body.push_str(t)).1,
            (Some(GuideBlock::Para(body)), _) => (body.push(' '), body.push_str(t)).1,
            _ => out.push(GuideBlock::Para(t.to_owned())),
        }
    }
    out
}

/// The guidelines wrapped to `width` at word boundaries: paragraphs flow, list items hang.
fn guide_lines(width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let words = |t: &str| t.split_whitespace().map(|w| (w.to_owned(), Style::new())).collect();
    for b in guide_blocks(GUIDELINES) {
        match b {
            GuideBlock::Heading(h) => out.push(Line::styled(h, theme::LABEL)),
            GuideBlock::Para(p) => push_wrapped(&mut out, "", Span::raw(""), words(&p), width.saturating_sub(1)),
            GuideBlock::Item(bullet, p) => push_wrapped(&mut out, " ", Span::raw(bullet), words(&p), width.saturating_sub(3)),
            GuideBlock::Blank => out.push(Line::default()),
        }
    }
    out
}

/// How many lines `text` takes when wrapped at word boundaries to `width` columns.
fn wrapped_lines(text: &str, width: usize) -> usize {
    let (mut lines, mut used) = (1, 0);
    for word in text.split_whitespace() {
        let w = theme::width(word);
        if used > 0 && used + 1 + w > width {
            lines += 1;
            used = 0;
        }
        used += if used > 0 { 1 + w } else { w };
        lines += used.saturating_sub(1) / width.max(1);
        used = if used > width { used % width.max(1) } else { used };
    }
    lines
}

/// Keys that only change what is shown, handled even while a change waits.
pub fn is_view_only(a: &Action) -> bool {
    matches!(a, Action::Guidelines | Action::ToggleDiff | Action::PageUp | Action::PageDown | Action::Help)
}

fn fmt_rank(r: f64) -> String {
    if r.fract() == 0.0 { format!("{r:.0}") } else { format!("{r:.1}") }
}

impl Screen for Annotate {
    fn id(&self) -> ScreenId {
        ScreenId::ANNOTATE
    }

    fn tab(&self) -> bool {
        false
    }

    /// Opens a queue; refused while a change of the open one is not stored. In annotator mode
    /// (before the terminal is taken over) the reason alone is the command's error.
    fn open(&mut self, action: Action, sh: &mut Shared) -> Show {
        let Action::OpenAnnotate { campaign, annotator, join } = action else { return Show::Yes(None) };
        if self.waiting() || self.held > 0 {
            return Show::No { note: "the open queue has a change not saved yet: wait for it first".into(), error: true };
        }
        self.shutdown();
        match self.open_queue(&sh.store_path, &campaign, &annotator, join) {
            Ok(()) => Show::Yes(None),
            Err(e) if sh.locked => Show::No { note: e, error: true },
            Err(e) => Show::No { note: format!("cannot open the queue: {e}"), error: true },
        }
    }

    fn unstored(&self) -> Option<String> {
        if self.comment.is_some() {
            return Some("the comment typed is not stored: Enter stores it".into());
        }
        if let Some(t) = &self.value {
            return Some(format!("the value typed ({t}) is not stored: Enter stores it"));
        }
        self.draft.as_ref().map(|g| format!("the order shown ({}) is not stored: Enter stores it", rankedit::format(g)))
    }

    fn pending(&self) -> Option<Pending> {
        let w = self.session.as_ref()?.waiting.as_ref()?;
        Some(Pending { in_flight: w.in_flight, error: w.error.as_ref().map(|e| e.to_string()) })
    }

    /// Takes in what the writer answered: a stored change is shown; a failed attempt is
    /// reported (the session tries again by itself). `Some` when the screen changed, with a
    /// note when there is one.
    fn tick(&mut self) -> Option<Option<Action>> {
        let update = self.session.as_mut()?.poll()?;
        Some(match update {
            Update::Saved(outcome) => {
                self.check_training_end(&outcome);
                self.settled(outcome)
            }
            Update::SavedUnread(e) => {
                self.after = None;
                Some(Action::Note(format!("saved, but the item cannot be shown: {e}"), true))
            }
            Update::Failed(e) => Some(Action::Note(format!("not saved yet: {e}; trying again"), true)),
            Update::Book => None,
        })
    }

    fn view_only(&self, action: &Action) -> bool {
        is_view_only(action)
    }

    fn keys_held(&mut self, n: usize) {
        self.held = n;
    }

    fn retry_now(&mut self) {
        if let Some(s) = self.session.as_mut() {
            s.retry_now();
        }
    }

    fn shutdown(&mut self) {
        if let Some(s) = self.session.as_mut() {
            let _ = s.flush(FLUSH_WAIT);
        }
    }

    fn typing(&self) -> bool {
        self.typing.is_some() || self.comment.is_some()
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        let s = self.session.as_mut()?;
        s.touch();
        let mode = s.campaign.def.mode;
        let n_rows = s.view.rows.len();
        let skipped = s.entry().skipped;
        // The app holds other keys while a change waits (`Screen::pending`).
        if s.waiting.is_some() && !is_view_only(&action) {
            return None;
        }
        if let Some(t) = self.comment.as_mut() {
            match action {
                Action::Char(c) if t.chars().count() < crate::human::note::MAX_COMMENT => t.push(c),
                Action::Backspace => {
                    t.pop();
                }
                Action::ClearInput => t.clear(),
                Action::Submit => return self.store_comment(),
                Action::Back => {
                    self.comment = None;
                    return Some(Action::Note("comment not changed".into(), false));
                }
                _ => {}
            }
            return None;
        }
        if self.typing.is_some() {
            match action {
                Action::Char(c) => self.typing.get_or_insert_default().push(c),
                Action::Backspace => {
                    self.typing.get_or_insert_default().pop();
                }
                Action::ClearInput => self.typing = Some(String::new()),
                Action::Submit => return self.submit_ordering(),
                Action::Back => self.typing = None,
                _ => {}
            }
            return None;
        }
        if self.checkpoint && !is_view_only(&action) {
            match action {
                Action::Accept => return self.begin_real(),
                Action::Back => {
                    self.checkpoint = false;
                    let note = "the training items again: Enter on a finished one goes on to the real items";
                    return Some(Action::Note(note.into(), false));
                }
                // Any other key closes it and does what it does.
                _ => self.checkpoint = false,
            }
        }
        if let Some(t) = self.value.clone()
            && !is_view_only(&action)
        {
            return match action {
                Action::Digit(d) => self.type_value(d),
                Action::Accept => self.store_value(),
                Action::Back => {
                    self.value = None;
                    Some(Action::Note(format!("{t} dropped: nothing stored"), false))
                }
                _ => Some(Action::Note(format!("typing {t}: a digit goes on, Enter stores it, Esc drops it"), false)),
            };
        }
        match action {
            Action::Up if self.guide_over => self.guide_scroll = self.guide_scroll.saturating_sub(1),
            Action::Down if self.guide_over => self.guide_scroll += 1,
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(n_rows.saturating_sub(1)),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = n_rows.saturating_sub(1),
            Action::PageDown if self.guidelines => self.guide_scroll += 10,
            Action::PageUp if self.guidelines => self.guide_scroll = self.guide_scroll.saturating_sub(10),
            Action::RankUp => return self.edit_ranking(rankedit::move_up, "K: this output is already the best"),
            Action::RankDown => {
                return self.edit_ranking(rankedit::move_down, "J: this output is already the worst");
            }
            Action::Tie => {
                return self.edit_ranking(
                    rankedit::toggle_tie,
                    "= ties with the output above: the top one has none",
                );
            }
            Action::TypeOrdering | Action::Digit(_) | Action::Adjust(_) if skipped => {
                return Some(Action::Note(SKIPPED.into(), false));
            }
            Action::TypeOrdering if mode == Mode::Rank => self.typing = Some(String::new()),
            Action::Digit(d) => match mode {
                Mode::Rank => self.typing = Some(d.to_string()),
                Mode::Likert if (1..=5).contains(&d) => return self.set_score(|_| f64::from(d), After::Next),
                Mode::Likert => return Some(Action::Note("Likert scores are 1 to 5".into(), false)),
                Mode::Slider => return self.type_value(d),
            },
            Action::Adjust(delta) => match mode {
                Mode::Rank => return Some(Action::Note("ranking: K/J move, = ties".into(), false)),
                Mode::Likert => return self.set_score(|v| v.unwrap_or(3.0) + f64::from(delta.signum()), After::Stay),
                Mode::Slider => return self.set_score(|v| v.unwrap_or(50.0) + f64::from(delta), After::Stay),
            },
            Action::Accept => return self.accept(),
            Action::Back if self.draft.is_some() => {
                self.draft = None;
                return Some(Action::Note("the moved order is dropped: the stored one is shown".into(), false));
            }
            Action::NextAspect
            | Action::NextItem
            | Action::PrevItem
            | Action::NextUnfinished
            | Action::Undo
            | Action::Redo
            | Action::EditComment
            | Action::CycleFlag
                if self.draft.is_some() =>
            {
                return self.draft_blocks();
            }
            Action::NextAspect => {
                let k = s.campaign.def.aspects.len();
                let next = (s.aspect + 1) % k;
                let r = s.set_aspect(next);
                self.selected = 0;
                return r.err().map(|e| Action::Note(format!("cannot switch: {e}"), true));
            }
            Action::NextItem | Action::PrevItem => {
                let at = s.at;
                let last = s.entries.len() - 1;
                let next = if action == Action::NextItem { at + 1 } else { at.wrapping_sub(1) };
                if next > last {
                    let end = if action == Action::NextItem { "the last" } else { "the first" };
                    return Some(Action::Note(format!("this is {end} item of the queue"), false));
                }
                // An item opens on its first unfinished aspect.
                let aspect = s.entries[next].done.iter().position(|d| !d).unwrap_or(0);
                return self.go(next, Some(aspect));
            }
            Action::NextUnfinished => return self.next_unfinished(),
            Action::EditComment => self.comment = Some(s.view.note.comment.clone()),
            Action::CycleFlag => return self.cycle_flag(),
            Action::Undo | Action::Redo => {
                let undo = action == Action::Undo;
                return match s.submit_step(undo) {
                    Ok(()) => {
                        self.after = Some(After::Step(undo));
                        None
                    }
                    Err(e) => Some(Action::Note(format!("not saved: {e}"), true)),
                };
            }
            Action::Guidelines => {
                self.guidelines = !self.guidelines;
                self.guide_scroll = 0;
            }
            Action::ToggleDiff => self.diff = !self.diff,
            Action::Back if sh.locked => return Some(Action::Note("q quits; your work is saved".into(), false)),
            Action::Back => return Some(Action::Go(ScreenId::CAMPAIGNS)),
            _ => {}
        }
        None
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, _sh: &Shared) {
        let Some(s) = &self.session else {
            let block = theme::pane(" Annotate ".into(), true);
            let inner = block.inner(area);
            f.render_widget(block, area);
            f.render_widget(
                Paragraph::new("no queue open: choose an annotator on the Campaigns screen (5)").style(theme::MUTED),
                inner,
            );
            return;
        };
        let e = s.entry();
        let kind = if e.training {
            " · TRAINING"
        } else if e.repeat {
            " · repeat"
        } else {
            ""
        };
        // Narrow: the aspect and the item stay whole; the screen's name, the annotator, the
        // campaign and the direction give way first.
        let parts = [
            "Annotate".to_owned(),
            s.campaign.name.clone(),
            s.annotator.clone(),
            format!("item {}/{}{kind}", s.at + 1, s.entries.len()),
            s.view.direction.clone(),
            s.aspect_name().to_owned(),
        ];
        // The guidelines: beside the item from 120 columns, else over it.
        let (main, guide) = match (self.guidelines, area.width >= GUIDE_BESIDE) {
            (false, _) => (Some(area), None),
            (true, true) => {
                let [a, b] = Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(area);
                (Some(a), Some(b))
            }
            (true, false) => (None, Some(area)),
        };
        self.guide_over = self.guidelines && main.is_none();
        if let Some(main) = main {
            let block = theme::pane(theme::title(&parts, &[0, 2, 1, 4], main.width as usize), true);
            let inner = block.inner(main);
            f.render_widget(block, main);
            // The save line wraps: its reason is never cut.
            let save = self.save_line();
            let save_h = save.as_ref().map_or(0, |l| wrapped_lines(&l.to_string(), inner.width as usize).min(3) as u16);
            let save = save.map(|l| Paragraph::new(l).wrap(Wrap { trim: true }));
            let status = self.status(inner.width as usize);
            let status_h = status.iter().map(|l| wrapped_lines(&l.to_string(), inner.width as usize)).sum::<usize>().min(4) as u16;
            let status = Paragraph::new(status).wrap(Wrap { trim: false });
            let [top, save_area, body, foot] = Layout::vertical([
                Constraint::Length(status_h),
                Constraint::Length(save_h),
                Constraint::Min(1),
                Constraint::Length(1),
            ])
            .areas(inner);
            f.render_widget(status, top);
            if let Some(p) = save {
                f.render_widget(p, save_area);
            }
            let b = self.body(body.width);
            // The source, references and aspect stay on screen while the outputs scroll; the
            // outputs get at least 2/5 of the room (4 lines), the references what is left.
            let footer_h = (b.footer.len() as u16).min(body.height.saturating_sub(1));
            let room = body.height - footer_h;
            let outputs_min = b.outputs.len().min(usize::from(room) * 2 / 5).max(4.min(b.outputs.len()));
            let pinned = b.pinned(usize::from(room).saturating_sub(outputs_min));
            let pinned_h = (pinned.len() as u16).min(room.saturating_sub(1));
            let outputs_h = (b.outputs.len() as u16).clamp(1, room - pinned_h);
            // What is stored follows the outputs, at the foot once they fill the room.
            let [pinned_area, outputs, footer, _] = Layout::vertical([
                Constraint::Length(pinned_h),
                Constraint::Length(outputs_h),
                Constraint::Length(footer_h),
                Constraint::Min(0),
            ])
            .areas(body);
            f.render_widget(Paragraph::new(pinned), pinned_area);
            let (lines, scroll) = folded(b.outputs, &b.owner, self.selected, outputs.height as usize);
            self.outputs_at = OutputsAt { body: outputs, scroll, owner: b.owner };
            f.render_widget(Paragraph::new(lines), outputs);
            f.render_widget(Paragraph::new(b.footer), footer);
            f.render_widget(Paragraph::new(self.keys_line(foot.width as usize)), foot);
            if self.checkpoint {
                self.draw_checkpoint(f, body);
            }
        }
        if let Some(g) = guide {
            let block = theme::pane(String::new(), self.guide_over);
            let inner = block.inner(g);
            let lines = guide_lines(inner.width as usize);
            let h = inner.height as usize;
            self.guide_scroll = self.guide_scroll.min(lines.len().saturating_sub(h));
            let last = (self.guide_scroll + h).min(lines.len());
            let keys = if self.guide_over { "Up/Down PgUp/PgDn scroll" } else { "PgUp/PgDn scroll" };
            let title = format!(" Guidelines · lines {}-{last} of {} · {keys} · i hides ", self.guide_scroll + 1, lines.len());
            f.render_widget(theme::pane(title, self.guide_over), g);
            f.render_widget(Paragraph::new(lines).scroll((self.guide_scroll as u16, 0)), inner);
        }
    }

    /// The campaign's mode, or `checkpoint` while the end of the training is shown.
    fn mode(&self) -> Option<&'static str> {
        if self.checkpoint {
            return Some(CHECKPOINT);
        }
        self.campaign_mode().map(Mode::as_str)
    }

    /// A click on an output selects it (not while a change waits: the keys held are meant for
    /// the output selected when they were pressed).
    fn click(&mut self, column: u16, row: u16, _sh: &mut Shared) -> Option<Action> {
        if self.guide_over || self.typing.is_some() || self.comment.is_some() || self.value.is_some() || self.checkpoint || self.waiting() || self.held > 0 {
            return None;
        }
        let OutputsAt { body, scroll, owner } = &self.outputs_at;
        if column < body.x || column >= body.x + body.width || row < body.y || row >= body.y + body.height {
            return None;
        }
        if let Some(Some(pos)) = owner.get(scroll + usize::from(row - body.y)) {
            self.selected = *pos;
        }
        None
    }
}
