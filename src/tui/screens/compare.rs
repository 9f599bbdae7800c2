//! Compare: one item with its source, context, references and every system's output, each with
//! a word diff against the source (kept words dimmed, added words highlighted, removed words
//! struck through in red) and its scores. Systems can be hidden or pinned first; the choice
//! stays while moving between items. Next and previous (`n`, `b`) step through the list Browse
//! opened the item from (its search, filter and sort), or through the direction by index.
//! Items can be tagged (`m`) while stepping; `w` writes a case study of the tagged items, or of
//! the open one, as shown (`screens::case`).

use crate::diff::{self, Op};
use crate::store::{ItemDetail, OutputView};
use crate::tui::action::{Action, FormAt, LaunchAt, ScreenId};
use crate::tui::screen::{Screen, Shared, Show};
use crate::tui::loader::{Reply, Request, Response, Topic};
use crate::store::ItemQuery;
use crate::jobs::Handle;
use crate::transfer::regen::Regenerated;
use crate::tui::screens::case;
use crate::tui::screens::regen::{self, RegenState};
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Margin, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState};
use std::ops::Range;

pub struct Compare {
    pub detail: Option<ItemDetail>,
    /// Hidden and pinned systems, by name (pinned in pin order).
    pub hidden: Vec<String>,
    pub pinned: Vec<String>,
    /// Index of the selected output among the shown ones.
    pub selected: usize,
    pub scroll: usize,
    pub show_removed: bool,
    /// Scroll so the selected output is visible at the next draw.
    follow: bool,
    /// Which way the last neighbour request went.
    step: Option<bool>,
    /// A regeneration of one local output, and its job.
    pub regen: Option<RegenState>,
    regen_job: Option<Handle<Regenerated>>,
    /// Scroll to the regeneration block at the next draw (it changed).
    show_regen: bool,
    /// The step asked of Browse's list: the one-row page of the neighbour.
    asked_step: Option<ItemQuery>,
    /// Line ranges of the shown outputs and the scroll at the last draw, for clicks.
    drawn: Drawn,
    /// Items tagged for the case study, by id, in the order tagged.
    pub tagged: Vec<i64>,
    /// The tagged items asked of the loader for a case study being written.
    asked_case: Option<Vec<i64>>,
}

/// What the last draw put where.
#[derive(Default)]
struct Drawn {
    area: Rect,
    ranges: Vec<Range<usize>>,
    scroll: usize,
    label_w: usize,
}

impl Default for Compare {
    fn default() -> Self {
        Compare {
            detail: None,
            hidden: Vec::new(),
            pinned: Vec::new(),
            selected: 0,
            scroll: 0,
            show_removed: true,
            follow: true,
            step: None,
            regen: None,
            regen_job: None,
            show_regen: false,
            asked_step: None,
            drawn: Drawn::default(),
            tagged: Vec::new(),
            asked_case: None,
        }
    }
}

impl Compare {
    pub fn is_empty(&self) -> bool {
        self.detail.is_none()
    }

    /// The outputs shown, pinned ones first, hidden ones left out.
    pub fn shown(&self) -> Vec<&OutputView> {
        let Some(d) = &self.detail else { return Vec::new() };
        case::shown(d, &self.hidden, &self.pinned)
    }

    fn selected_system(&self) -> Option<String> {
        self.shown().get(self.selected).map(|o| o.system.clone())
    }

    fn select_system(&mut self, name: &str) {
        if let Some(i) = self.shown().iter().position(|o| o.system == name) {
            self.selected = i;
        }
        self.clamp();
    }

    fn clamp(&mut self) {
        self.selected = self.selected.min(self.shown().len().saturating_sub(1));
        self.follow = true;
    }

    /// The width of the label column for a `width`-column area: the longest system name fits
    /// when there is room (up to a third of the width), else names are abbreviated keeping
    /// their distinguishing end (`theme::abbrev`).
    fn label_width(&self, width: u16) -> usize {
        let Some(d) = &self.detail else { return 8 };
        let longest = d.outputs.iter().map(|o| theme::width(&o.system) + 1).chain([7]).max().unwrap_or(7);
        longest.clamp(8, (width as usize / 3).max(20))
    }

    /// The body lines for a `width`-column area, and the line range of each shown output.
    pub fn lines(&self, width: u16) -> (Vec<Line<'static>>, Vec<Range<usize>>) {
        let (lines, ranges, _) = self.layout(width);
        (lines, ranges)
    }

    /// [`Compare::lines`], and where the regeneration block starts.
    fn layout(&self, width: u16) -> (Vec<Line<'static>>, Vec<Range<usize>>, Option<usize>) {
        let Some(d) = &self.detail else { return (Vec::new(), Vec::new(), None) };
        let shown = self.shown();
        let label_w = self.label_width(width);
        let text_w = (width as usize).saturating_sub(label_w + 3).max(10);
        let mut out: Vec<Line<'static>> = Vec::new();
        let plain = |out: &mut Vec<Line<'static>>, label: &str, text: &str, style: Style| {
            push_wrapped(out, "  ", Span::styled(theme::abbrev(label, label_w), theme::LABEL), plain_words(text, style), text_w);
        };
        if let Some(c) = &d.context {
            plain(&mut out, "context", c, theme::MUTED);
        }
        plain(&mut out, "source", &d.source, Style::new());
        for (i, r) in d.references.iter().enumerate() {
            plain(&mut out, &format!("ref {}", i + 1), r, Style::new());
        }
        if d.references.is_empty() {
            plain(&mut out, "refs", "(none)", theme::MUTED);
        }
        let hidden = d.outputs.iter().filter(|o| self.hidden.contains(&o.system)).count();
        // The counts first, so they stay when the legend is cut.
        let mut rule = format!("── {} output(s)", shown.len());
        if hidden > 0 {
            rule += &format!(" · {hidden} hidden (a shows)");
        }
        for part in [" vs the source:", " kept dim", " · added green", " · removed red struck"] {
            if theme::width(&rule) + theme::width(part) + 1 > width as usize {
                break;
            }
            rule += part;
        }
        rule += " ";
        let fill = (width as usize).saturating_sub(theme::width(&rule));
        out.push(Line::styled(format!("{rule}{}", "─".repeat(fill)), theme::MUTED));
        let mut ranges = Vec::new();
        for (i, o) in shown.iter().enumerate() {
            let start = out.len();
            let human = o.kind == "human";
            let gutter = match (i == self.selected, self.pinned.contains(&o.system)) {
                (true, true) => "▶▪",
                (true, false) => "▶ ",
                (false, true) => " ▪",
                (false, false) => "  ",
            };
            let name = if human { format!("{}*", o.system) } else { o.system.clone() };
            let mut label_style = if human { theme::HUMAN } else { theme::LABEL };
            if i == self.selected {
                label_style = label_style.patch(theme::SELECTED);
            }
            let label = Span::styled(theme::abbrev(&name, label_w), label_style);
            let runs = if o.text.trim().is_empty() {
                vec![Run::word("(empty output)", theme::MUTED)]
            } else {
                diff_runs(&d.source, &o.text, self.show_removed)
            };
            push_runs(&mut out, gutter, label, runs, text_w);
            if !o.scores.is_empty() {
                let words = score_words(o);
                push_wrapped(&mut out, "  ", Span::raw(" ".repeat(label_w)), words, text_w);
            }
            ranges.push(start..out.len());
        }
        if d.outputs.is_empty() {
            out.push(Line::styled("  no outputs for this item yet (t launches a local transfer run)", theme::MUTED));
        }
        let regen_start = out.len();
        self.regen_lines(&mut out, d.id, width, label_w, text_w);
        let regen = (out.len() > regen_start).then_some(regen_start);
        let mut legend = vec![Span::styled("  ▶ selected  ▪ pinned  Enter: full name", theme::MUTED)];
        if shown.iter().any(|o| o.kind == "human") {
            legend.push(Span::styled("  * human rewrite", theme::HUMAN));
        }
        out.push(Line::default());
        out.push(Line::from(legend));
        (out, ranges, regen)
    }
}

impl Compare {
    /// The regeneration block: the new output as a word diff against the old one.
    fn regen_lines(&self, out: &mut Vec<Line<'static>>, item_id: i64, width: u16, label_w: usize, text_w: usize) {
        let rule = |out: &mut Vec<Line<'static>>, text: String| {
            let text = theme::owned(text);
            let fill = (width as usize).saturating_sub(theme::width(&text));
            out.push(Line::styled(format!("{text}{}", "─".repeat(fill)), theme::MUTED));
        };
        let label = |s: &str| Span::styled(theme::abbrev(s, label_w), theme::LABEL);
        match &self.regen {
            Some(RegenState::Pending { item_id: id, system }) if *id == item_id => {
                rule(out, format!("── regenerating {system} (job on the Jobs screen) "));
            }
            Some(RegenState::Failed { system, error }) => {
                rule(out, format!("── regenerating {system} failed (Esc closes) "));
                push_wrapped(out, "  ", label("error"), vec![(error.clone(), theme::ERROR)], text_w);
            }
            Some(RegenState::Ready { system, r }) if r.item_id == item_id => {
                let d = &r.decoding;
                rule(out, format!("── regenerated {system} (t={} p={}): new vs old · y keeps · e again · Esc drops ", d.temperature, d.top_p));
                let old = if r.old_text.is_empty() { "(none)" } else { r.old_text.as_str() };
                push_wrapped(out, "  ", label("old"), plain_words(old, Style::new()), text_w);
                let runs = if r.text.trim().is_empty() {
                    vec![Run::word("(empty output)", theme::MUTED)]
                } else {
                    diff_runs(&r.old_text, &r.text, true)
                };
                push_runs(out, "  ", label("new"), runs, text_w);
                if r.raw.trim() != r.text.trim() {
                    push_wrapped(out, "  ", label("raw"), plain_words(&r.raw, theme::MUTED), text_w);
                }
            }
            _ => {}
        }
    }

    /// Takes the regeneration job's answer when it has come.
    fn poll_regen(&mut self) {
        let Some(result) = self.regen_job.as_ref().and_then(Handle::take) else { return };
        self.regen_job = None;
        let system = match &self.regen {
            Some(RegenState::Pending { system, .. }) => system.clone(),
            _ => return,
        };
        self.regen = Some(match result {
            Ok(r) => RegenState::Ready { system, r: Box::new(r) },
            Err(failure) => RegenState::Failed { system, error: failure.to_string() },
        });
        self.show_regen = true;
    }

    fn regenerate(&mut self, sh: &mut Shared) -> Option<Action> {
        let d = self.detail.as_ref()?;
        let o = *self.shown().get(self.selected)?;
        if o.kind != "local" {
            return Some(Action::Note(
                format!("{} is not a local transfer run: only those can be regenerated (t launches one)", o.system),
                false,
            ));
        }
        if matches!(self.regen, Some(RegenState::Pending { .. })) {
            return Some(Action::Note("a regeneration is already running".into(), false));
        }
        let (item_id, run_id, system) = (d.id, o.run_id, o.system.clone());
        self.regen_job = Some(regen::spawn(&sh.jobs, &sh.store_path, run_id, item_id));
        self.regen = Some(RegenState::Pending { item_id, system: system.clone() });
        self.show_regen = true;
        Some(Action::Note(format!("regenerating {system} for item #{item_id}"), false))
    }

    fn keep_regen(&mut self, sh: &mut Shared) -> Option<Action> {
        let Some(RegenState::Ready { system, r }) = &self.regen else {
            return Some(Action::Note("nothing to keep: e regenerates the selected local output".into(), false));
        };
        let note = match regen::keep(&sh.store_path, r) {
            Ok(()) => Action::Note(format!("kept the new output of {system} (the old one is in the run manifest)"), false),
            Err(e) => return Some(Action::Note(format!("not kept: {e}"), true)),
        };
        sh.loader.request(Request::Detail(r.item_id));
        self.regen = None;
        Some(note)
    }
}

/// The output's words styled by the diff against the source, both shown as `theme::text` (a
/// CR or an ESC is a visible part of its word). Tokens of one kind written together (a CJK run,
/// `bland.`) stay one word.
pub fn diff_words(source: &str, output: &str, show_removed: bool) -> Vec<(String, Style)> {
    let mut words: Vec<(String, Style)> = Vec::new();
    for r in diff_runs(source, output, show_removed) {
        match words.last_mut() {
            Some((w, style)) if !r.spaced && *style == r.style => w.push_str(&r.text),
            _ => words.push((r.text, r.style)),
        }
    }
    words
}

/// A piece of text to wrap: its style, and whether a space comes before it (a CJK character
/// or a punctuation mark in a diff follows its neighbour directly).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub text: String,
    pub style: Style,
    pub spaced: bool,
}

impl Run {
    pub fn word(text: &str, style: Style) -> Run {
        Run { text: text.to_owned(), style, spaced: true }
    }
}

/// The output's tokens styled by the diff against the source (`diff::tokens`: Unicode words,
/// so a CJK sentence is diffed by character), each spaced as in its text.
pub fn diff_runs(source: &str, output: &str, show_removed: bool) -> Vec<Run> {
    let mut runs = Vec::new();
    for t in diff::tokens(&theme::text(source), &theme::text(output)) {
        let style = match t.op {
            Op::Kept => theme::KEPT,
            Op::Added => theme::ADDED,
            Op::Removed if show_removed => theme::REMOVED,
            Op::Removed => continue,
        };
        runs.push(Run { text: t.text, style, spaced: t.spaced });
    }
    runs
}

/// The words of a plain text, shown as `theme::text`.
fn plain_words(text: &str, style: Style) -> Vec<(String, Style)> {
    theme::text(text).split_whitespace().map(|w| (w.to_owned(), style)).collect()
}

fn score_words(o: &OutputView) -> Vec<(String, Style)> {
    case::score_texts(o).into_iter().map(|s| (s, theme::SCORE)).collect()
}

/// Appends `words` wrapped to `width` columns after a gutter and a label; continuation lines are
/// indented under the text. Words are shown as `theme::text`.
pub fn push_wrapped(
    out: &mut Vec<Line<'static>>,
    gutter: &str,
    label: Span<'static>,
    words: Vec<(String, Style)>,
    width: usize,
) {
    let runs = words.into_iter().map(|(text, style)| Run { text, style, spaced: true }).collect();
    push_runs(out, gutter, label, runs, width);
}

/// [`push_wrapped`] of runs: a run without a space before it follows its neighbour directly (a
/// line may still break there). A word longer than the line is broken (`text::break_word`).
pub fn push_runs(out: &mut Vec<Line<'static>>, gutter: &str, label: Span<'static>, runs: Vec<Run>, width: usize) {
    let indent = " ".repeat(theme::width(gutter) + label.width() + 1);
    let mut line: Vec<Span<'static>> = vec![Span::styled(gutter.to_owned(), theme::KEY), label, Span::raw(" ")];
    let mut used = 0;
    for run in runs {
        let style = run.style;
        let mut word = theme::owned(run.text);
        loop {
            let w = crate::text::width(&word);
            let gap = usize::from(used > 0 && run.spaced);
            if used + gap + w <= width {
                if gap > 0 {
                    line.push(Span::raw(" "));
                }
                line.push(Span::styled(word, style));
                used += gap + w;
                break;
            }
            if used > 0 {
                out.push(Line::from(std::mem::take(&mut line)));
                line.push(Span::raw(indent.clone()));
                used = 0;
                continue;
            }
            // A word longer than the line: break it.
            let (head, tail) = crate::text::break_word(&word, width);
            let (head, tail) = (head.to_owned(), tail.to_owned());
            line.push(Span::styled(head, style));
            out.push(Line::from(std::mem::take(&mut line)));
            line.push(Span::raw(indent.clone()));
            word = tail;
            if word.is_empty() {
                break;
            }
        }
    }
    out.push(Line::from(line));
}

impl Compare {
    /// Next or previous item: in Browse's list when the item was opened from it, else by index.
    fn step(&mut self, forward: bool, sh: &mut Shared) -> Option<Action> {
        let id = self.detail.as_ref()?.id;
        self.step = Some(forward);
        if let Some(list) = sh.item_list.as_ref().filter(|l| l.item_id == id) {
            let at = list.position + if forward { 1 } else { -1 };
            if at < 0 {
                return Some(Action::Note(format!("this is the first item{}", list.scope()), false));
            }
            if at >= list.total {
                return Some(Action::Note(format!("this is the last item{}", list.scope()), false));
            }
            let q = ItemQuery { offset: at, limit: 1, ..list.query.clone() };
            self.asked_step = Some(q.clone());
            sh.loader.request(Request::Items(q));
            return None;
        }
        sh.loader.request(Request::Neighbour { item_id: id, forward });
        None
    }

    /// The one-row page of a step through Browse's list came: open its item.
    fn stepped(&mut self, query: &ItemQuery, rows: &[crate::store::ItemRow], sh: &mut Shared) -> Option<Action> {
        self.asked_step = None;
        let (Some(row), Some(list)) = (rows.first(), sh.item_list.as_mut()) else {
            let text = if self.step == Some(false) { "this is the first item" } else { "this is the last item" };
            return Some(Action::Note(text.into(), false));
        };
        list.position = query.offset;
        list.item_id = row.id;
        sh.loader.request(Request::Detail(row.id));
        None
    }
}

impl Compare {
    /// Tags the open item for the case study, or untags it.
    fn tag(&mut self) -> Option<Action> {
        let id = self.detail.as_ref()?.id;
        let note = if let Some(i) = self.tagged.iter().position(|t| *t == id) {
            self.tagged.remove(i);
            format!("untagged item #{id}; {} tagged", self.tagged.len())
        } else {
            self.tagged.push(id);
            format!("tagged item #{id}; {} tagged (w writes them all)", self.tagged.len())
        };
        Some(Action::Note(note, false))
    }

    /// The case study as shown: of the tagged items (loaded first), or of the open one.
    fn write_case(&mut self, sh: &mut Shared) -> Option<Action> {
        if self.tagged.is_empty() {
            let d = self.detail.as_ref()?;
            return Some(case::write(&sh.store_path, &[case::as_shown(d, &self.hidden, &self.pinned)]));
        }
        self.asked_case = Some(self.tagged.clone());
        sh.loader.request(Request::Details(self.tagged.clone()));
        Some(Action::Note(format!("writing the case study of {} tagged item(s)…", self.tagged.len()), false))
    }

    /// The title's tag fact: whether the open item is tagged, and how many are.
    fn tag_fact(&self, id: i64) -> Option<String> {
        let n = self.tagged.len();
        if self.tagged.contains(&id) {
            Some(format!("tagged, {n} in all"))
        } else {
            (n > 0).then(|| format!("{n} tagged"))
        }
    }
}

impl Screen for Compare {
    fn id(&self) -> ScreenId {
        ScreenId::COMPARE
    }

    fn handle(&mut self, action: Action, sh: &mut Shared) -> Option<Action> {
        match action {
            Action::OpenItem(id) => {
                self.step = None;
                // Opened from a list narrowed to a system: that system first.
                if let Some(pin) = sh.item_list.as_ref().filter(|l| l.item_id == id).and_then(|l| l.pin.clone()) {
                    self.pinned.retain(|p| *p != pin);
                    self.pinned.insert(0, pin);
                }
                sh.loader.request(Request::Detail(id));
            }
            Action::NextItem | Action::PrevItem => return self.step(action == Action::NextItem, sh),
            Action::Open => {
                let o = *self.shown().get(self.selected)?;
                return Some(Action::Note(format!("{}: {} output, run {}", o.system, o.kind, o.run_id), false));
            }
            Action::Refresh => {
                if let Some(d) = &self.detail {
                    sh.loader.request(Request::Detail(d.id));
                }
            }
            Action::Up => {
                self.selected = self.selected.saturating_sub(1);
                self.clamp();
            }
            Action::Down => {
                self.selected += 1;
                self.clamp();
            }
            Action::Top => {
                self.selected = 0;
                self.clamp();
                self.scroll = 0;
            }
            Action::Bottom => {
                self.selected = usize::MAX;
                self.clamp();
            }
            Action::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                self.follow = false;
            }
            Action::PageDown => {
                self.scroll += 10;
                self.follow = false;
            }
            Action::HideSystem => {
                let name = self.selected_system()?;
                self.hidden.push(name.clone());
                self.clamp();
                return Some(Action::Note(format!("hid {name}; a shows hidden systems"), false));
            }
            Action::PinSystem => {
                let name = self.selected_system()?;
                let note = if let Some(i) = self.pinned.iter().position(|p| *p == name) {
                    self.pinned.remove(i);
                    format!("unpinned {name}")
                } else {
                    self.pinned.push(name.clone());
                    format!("pinned {name}")
                };
                self.select_system(&name);
                return Some(Action::Note(note, false));
            }
            Action::ShowHidden => {
                let n = self.hidden.len();
                let keep = self.selected_system();
                self.hidden.clear();
                if let Some(name) = keep {
                    self.select_system(&name);
                }
                return Some(Action::Note(format!("showing {n} hidden system(s) again"), false));
            }
            Action::ToggleRemoved => self.show_removed = !self.show_removed,
            Action::TagItem => return self.tag(),
            Action::UntagAll => {
                let n = std::mem::take(&mut self.tagged).len();
                return Some(Action::Note(format!("untagged {n} item(s)"), false));
            }
            Action::WriteCase => return self.write_case(sh),
            Action::LaunchTransfer => {
                let d = self.detail.as_ref()?;
                let direction = format!("{}->{}", d.source_style, d.target_style);
                let item = Some((d.id, d.address()));
                return Some(Action::OpenForm(Box::new(FormAt::Launch(LaunchAt { dataset: d.dataset.clone(), direction, direction_id: d.direction_id, item }))));
            }
            Action::Regenerate => return self.regenerate(sh),
            Action::KeepRegen => return self.keep_regen(sh),
            Action::Back if matches!(self.regen, Some(RegenState::Ready { .. } | RegenState::Failed { .. })) => self.regen = None,
            Action::Back => return Some(Action::Go(ScreenId::BROWSE)),
            _ => {}
        }
        None
    }

    fn on_show(&mut self, sh: &mut Shared) -> Show {
        if self.is_empty() && !sh.loader.busy(Topic::Detail) {
            return Show::No { note: "no item open yet: press Enter on an item in Browse".into(), error: false };
        }
        Show::Yes(None)
    }

    fn loaded(&mut self, r: &Response, sh: &mut Shared) -> Option<Action> {
        match &r.result {
            Ok(Reply::Items { query, rows, .. }) if self.asked_step.as_ref() == Some(query) => {
                return self.stepped(query, rows, sh);
            }
            Ok(Reply::Detail(Some(d))) => {
                let keep = self.selected_system();
                let same_item = self.detail.as_ref().is_some_and(|old| old.id == d.id);
                self.detail = Some(d.clone());
                if !same_item {
                    self.scroll = 0;
                }
                match keep {
                    Some(name) => self.select_system(&name),
                    None => self.clamp(),
                }
            }
            Ok(Reply::Detail(None)) => {
                let text = if self.step == Some(false) { "this is the first item" } else { "this is the last item" };
                return Some(Action::Note(text.into(), false));
            }
            Ok(Reply::Details(items)) if self.asked_case.take().is_some() => {
                let items: Vec<_> = items.iter().map(|d| case::as_shown(d, &self.hidden, &self.pinned)).collect();
                return Some(case::write(&sh.store_path, &items));
            }
            Err(e) if r.topic == Topic::Details && self.asked_case.take().is_some() => {
                return Some(Action::Note(format!("case study not written: {e}"), true));
            }
            _ => {}
        }
        None
    }

    fn store_changed(&mut self, sh: &mut Shared) {
        self.handle(Action::Refresh, sh);
    }

    /// Outputs of a running transfer job appear as they land.
    fn outputs_landing(&mut self, sh: &mut Shared) -> bool {
        if self.is_empty() {
            return false;
        }
        self.handle(Action::Refresh, sh);
        true
    }

    /// A click on an output selects it; on its name, also says the full name.
    fn click(&mut self, column: u16, row: u16, sh: &mut Shared) -> Option<Action> {
        let a = self.drawn.area;
        if !a.contains(ratatui::layout::Position::new(column, row)) {
            return None;
        }
        let line = self.drawn.scroll + (row - a.y) as usize;
        let i = self.drawn.ranges.iter().position(|r| r.contains(&line))?;
        self.selected = i;
        self.clamp();
        let on_name = ((column - a.x) as usize) < 2 + self.drawn.label_w;
        if on_name { self.handle(Action::Open, sh) } else { None }
    }

    fn draw(&mut self, f: &mut Frame, area: Rect, sh: &Shared) {
        self.poll_regen();
        let busy = if sh.loader.busy(Topic::Detail) { " · loading…" } else { "" };
        // The title: what is open, then as many of its facts as fit, most useful first.
        let title = match &self.detail {
            Some(d) => {
                let hidden = d.outputs.iter().filter(|o| self.hidden.contains(&o.system)).count();
                let hidden = if hidden > 0 { format!(", {hidden} hidden") } else { String::new() };
                let mut facts: Vec<String> = self.tag_fact(d.id).into_iter().collect();
                if let Some(l) = sh.item_list.as_ref().filter(|l| l.item_id == d.id) {
                    facts.push(format!("{} of {}{}", l.position + 1, l.total, l.scope()));
                }
                facts.push(format!("{} system(s){hidden}", d.outputs.len()));
                facts.push(format!("{} ref(s)", d.references.len()));
                facts.push(format!("item #{}", d.id));
                let mut title = format!(" Compare · {}", d.address());
                for fact in facts {
                    if theme::width(&title) + theme::width(&fact) + theme::width(busy) + 6 > area.width as usize {
                        break;
                    }
                    title += &format!(" · {fact}");
                }
                format!("{title}{busy} ")
            }
            None => format!(" Compare{busy} "),
        };
        let block = theme::pane(title, true);
        let inner = block.inner(area);
        f.render_widget(block, area);
        if self.detail.is_none() {
            let text = if busy.is_empty() { "no item open: press Enter on an item in Browse" } else { "loading…" };
            f.render_widget(Paragraph::new(text).style(theme::MUTED), inner);
            return;
        }
        let width = inner.width.saturating_sub(1);
        let (lines, ranges, regen) = self.layout(width);
        let height = inner.height as usize;
        if self.show_regen {
            // A regeneration started or came back: show its block (it is near the end).
            if let Some(start) = regen {
                self.scroll = start.saturating_sub(height.saturating_sub(lines.len() - start));
                self.scroll = self.scroll.max(start.saturating_sub(height / 3)).min(start);
            }
            self.show_regen = false;
            self.follow = false;
        }
        if self.follow {
            if let Some(r) = ranges.get(self.selected) {
                if r.end > self.scroll + height {
                    self.scroll = r.end.saturating_sub(height);
                }
                if r.start < self.scroll {
                    self.scroll = r.start;
                }
            }
            self.follow = false;
        }
        let max = lines.len().saturating_sub(height);
        self.scroll = self.scroll.min(max);
        let n = lines.len();
        self.drawn = Drawn { area: inner, ranges, scroll: self.scroll, label_w: self.label_width(width) };
        f.render_widget(Paragraph::new(lines).scroll((self.scroll as u16, 0)), inner);
        if n > height {
            let mut state = ScrollbarState::new(max).position(self.scroll);
            f.render_stateful_widget(
                Scrollbar::new(ScrollbarOrientation::VerticalRight),
                area.inner(Margin::new(0, 1)),
                &mut state,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_under_the_text_column() {
        let mut out = Vec::new();
        let words = "aa bb cc dd".split(' ').map(|w| (w.to_owned(), Style::new())).collect();
        push_wrapped(&mut out, "  ", Span::raw("lab"), words, 5);
        let text: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["  lab aa bb", "      cc dd"]);
        let mut out = Vec::new();
        push_wrapped(&mut out, "", Span::raw("x"), vec![("abcdefgh".into(), Style::new())], 3);
        let text: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["x abc", "  def", "  gh"]);
    }

    /// Compare's words: a removed run and the inserted one after it are two words, as
    /// `tstlab show` spaces them (`joes` `Since`, not `joesSince`).
    #[test]
    fn a_removed_run_and_an_inserted_one_are_two_words() {
        let words: Vec<(String, Style)> = diff_words("joes was great", "Since Joe's was great", true);
        let text: Vec<&str> = words.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(text, ["joes", "Since", "Joe's", "was", "great"]);
        assert_eq!(words[0].1, theme::REMOVED);
        assert_eq!(words[1].1, theme::ADDED);
    }

    #[test]
    fn removed_words_can_be_left_out() {
        let with: Vec<String> = diff_words("a b c", "a x c", true).into_iter().map(|w| w.0).collect();
        assert_eq!(with, ["a", "b", "x", "c"]);
        let without = diff_words("a b c", "a x c", false);
        assert_eq!(without.iter().map(|w| w.1).collect::<Vec<_>>(), [theme::KEPT, theme::ADDED, theme::KEPT]);
    }
}
