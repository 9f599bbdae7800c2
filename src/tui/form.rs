//! What a form is: a box over the screen with fields, one under the cursor, that starts a
//! background job on Enter (`screens/launch.rs`: a transfer run; `screens/campaign_form.rs`: a
//! new campaign, an annotator joining one). The app holds the open form and hands it the keys
//! of `Context::Form` (`keys.rs`) in the form's mode: [`CHOOSE`] on a choice field, [`TYPING`]
//! in a text field. Drawing helpers the forms share live here too.

use crate::jobs::Jobs;
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use std::any::Any;
use std::path::Path;
use tui_input::{Input, InputRequest};

/// The form's mode on a choice field, and in a text field (printable keys type).
pub const CHOOSE: &str = "choose";
pub const TYPING: &str = crate::tui::keys::TYPING;

pub trait Form: Any {
    /// What the help calls it: `launch form`.
    fn name(&self) -> &'static str;
    /// [`CHOOSE`] or [`TYPING`]: the keys in force.
    fn mode(&self) -> &'static str;
    fn up(&mut self);
    fn down(&mut self);
    /// Next (`+1`) or previous (`-1`) choice; in a text field, the cursor right or left.
    fn cycle(&mut self, step: i64);
    /// Space on a choice field: tick or untick it (a list of choices); by default the next choice.
    fn toggle(&mut self) {
        self.cycle(1);
    }
    /// An edit of the text field under the cursor (none elsewhere).
    fn edit(&mut self, req: InputRequest);
    /// Pasted text into the text field under the cursor, at the cursor; line breaks and
    /// other control characters are dropped. False when no text field has the cursor.
    fn paste(&mut self, text: &str) -> bool {
        if self.mode() != TYPING {
            return false;
        }
        for c in text.chars().filter(|c| typable(*c)) {
            self.edit(InputRequest::InsertChar(c));
        }
        true
    }
    /// Starts what the form asks for as a background job: the note for the status line (the
    /// form closes), or `None` when it cannot start (the form stays open and shows why).
    fn submit(&mut self, jobs: &Jobs, store_path: &Path) -> Option<String>;
    fn draw(&self, f: &mut Frame, area: Rect);
}

/// Printable characters only: a pasted line break or control character is dropped.
pub fn typable(c: char) -> bool {
    !c.is_control()
}

/// An edit of `input`, printable characters only; true when its value changed.
pub fn edit_input(input: &mut Input, req: InputRequest) -> bool {
    if let InputRequest::InsertChar(c) = req
        && !typable(c)
    {
        return false;
    }
    input.handle(req).is_some_and(|c| c.value)
}

/// A label column `width` wide.
pub fn label(name: &str, width: usize) -> String {
    format!("{name:<width$}")
}

/// A text field's line: the visible part of its value, the cursor as a reversed cell when it
/// has the focus.
pub fn text_spans(input: &Input, focused: bool, width: usize) -> Vec<Span<'static>> {
    let chars: Vec<char> = input.value().chars().collect();
    let cursor = input.cursor().min(chars.len());
    let width = width.max(2);
    let start = if focused { (cursor + 1).saturating_sub(width) } else { 0 };
    let end = (start + width).min(chars.len());
    let shown = |a: usize, b: usize| theme::owned(chars[a..b.max(a)].iter().collect());
    if !focused {
        return vec![Span::raw(shown(start, end))];
    }
    let under = chars.get(cursor).map_or(" ".to_owned(), |c| theme::owned(c.to_string()));
    let field = Style::new().add_modifier(Modifier::UNDERLINED);
    vec![
        Span::styled(shown(start, cursor), field),
        Span::styled(under, field.add_modifier(Modifier::REVERSED)),
        Span::styled(shown((cursor + 1).min(end), end), field),
    ]
}

/// Draws `lines` in a box titled `title`, at most `max_w` wide, centred in `area` (as high as
/// the wrapped lines need, at most the area), scrolled so that line `focus` is in view.
pub fn draw_box(f: &mut Frame, area: Rect, max_w: u16, title: &str, lines: Vec<Line<'static>>, focus: usize) {
    let w = area.width.min(max_w);
    let inner = (w as usize).saturating_sub(2).max(1);
    let heights: Vec<usize> = lines.iter().map(|l| theme::wrap(&l.to_string(), inner).len().max(1)).collect();
    let rows: usize = heights.iter().sum();
    let h = (rows as u16 + 2).min(area.height);
    let room = h.saturating_sub(2) as usize;
    let focus_end: usize = heights.iter().take(focus + 1).sum();
    let scroll = focus_end.saturating_sub(room);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false }).scroll((scroll as u16, 0));
    let rect = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    f.render_widget(Clear, rect);
    f.render_widget(paragraph.block(theme::pane(title.into(), true)), rect);
}
