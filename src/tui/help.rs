//! The help overlay, drawn from the one key table (`keys.rs`): the keys of the screen shown
//! (in its mode) first, then the keys of every screen, then the rest of the table, each group
//! under a heading; descriptions wrap, the overlay scrolls. The messages overlay (the status
//! line's latest notes, whole) uses the same frame.

use super::action::Action;
use super::keys::{BINDINGS, Binding, Context};
use super::{frame, theme};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// The widest key column; longer key lists get a line of their own.
const KEY_COLUMN: usize = 18;

/// A group of bindings under a heading.
pub struct Section {
    pub title: String,
    pub bindings: Vec<&'static Binding>,
    /// Name each binding's modes (bindings of other modes than the one shown).
    pub show_modes: bool,
}

/// The help's groups for the contexts `base` (the keys in force under the overlay, most
/// specific first) and the shown screen's `mode`: those contexts first, then the keys of every
/// screen, then every other context of the table, so that each binding is listed once.
/// `locked` (`tstlab annotate`: one screen only): the keys that go to other screens and the
/// other screens' keys are left out.
pub fn sections(base: &[Context], mode: Option<&str>, locked: bool) -> Vec<Section> {
    let mut out = Vec::new();
    let mut done: Vec<Context> = Vec::new();
    let of = |ctx: Context, keep: &dyn Fn(&Binding) -> bool| -> Vec<&'static Binding> {
        BINDINGS.iter().filter(|b| b.context == ctx && keep(b)).collect()
    };
    for ctx in base.iter().copied().filter(|c| !matches!(c, Context::Main | Context::Any)) {
        // The mode is the shown screen's, or the open form's.
        let moded = matches!(ctx, Context::Screen(_) | Context::Form);
        let heading = match (moded, mode) {
            (true, Some(m)) => format!("{} · {m} mode", title(ctx)),
            _ => title(ctx),
        };
        let shown = of(ctx, &|b| b.in_mode(mode));
        // A binding of some modes hides one of every mode with its keys (it overrides it).
        let overridden = |b: &Binding| {
            b.modes.is_empty() && shown.iter().any(|o| !o.modes.is_empty() && b.keys.iter().all(|k| o.keys.contains(k)))
        };
        let shown = shown.iter().copied().filter(|b| !overridden(b)).collect();
        out.push(Section { title: heading, bindings: shown, show_modes: false });
        if moded && mode.is_some() {
            let others = of(ctx, &|b| !b.in_mode(mode));
            if !others.is_empty() {
                out.push(Section { title: format!("{} in other modes", title(ctx)), bindings: others, show_modes: true });
            }
        }
        done.push(ctx);
    }
    let mut every = of(Context::Main, &|b| !(locked && matches!(b.action, Action::Go(_))));
    every.extend(of(Context::Any, &|_| true));
    let heading = if locked { "Keys everywhere" } else { "Keys on every screen" };
    out.push(Section { title: heading.into(), bindings: every, show_modes: false });
    done.extend([Context::Main, Context::Any]);
    if locked {
        return out;
    }
    for b in BINDINGS {
        if !done.contains(&b.context) {
            done.push(b.context);
            out.push(Section { title: title(b.context), bindings: of(b.context, &|_| true), show_modes: true });
        }
    }
    out
}

fn title(ctx: Context) -> String {
    match ctx {
        Context::Screen(id) => format!("{} keys", id.name()),
        Context::Form => "Forms (a transfer run, a new campaign, an annotator)".into(),
        Context::Input => "While typing".into(),
        Context::Help => "In this help".into(),
        Context::Main | Context::Any => "Keys on every screen".into(),
    }
}

/// The sections as lines `width` columns wide: the keys in a column, descriptions wrapped
/// beside them (never cut).
pub fn lines(sections: &[Section], width: usize) -> Vec<Line<'static>> {
    let keys = KEY_COLUMN.min(width / 3);
    let desc_width = width.saturating_sub(keys + 1).max(10);
    let mut out = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        if i > 0 {
            out.push(Line::raw(""));
        }
        out.push(Line::styled(s.title.clone(), theme::LABEL.add_modifier(Modifier::BOLD)));
        for b in &s.bindings {
            let mut desc = b.desc.to_owned();
            if s.show_modes && !b.modes.is_empty() {
                desc = format!("{}: {desc}", b.modes.join(", "));
            }
            let label = b.key_labels();
            let wrapped = frame::wrap(&desc, desc_width);
            let mut first = true;
            if theme::width(&label) > keys {
                out.push(Line::styled(label.clone(), theme::KEY));
                first = false;
            }
            for part in wrapped {
                let key = if first { theme::fit(&label, keys) } else { " ".repeat(keys) };
                first = false;
                out.push(Line::from(vec![Span::styled(key, theme::KEY), Span::raw(" "), Span::raw(part)]));
            }
        }
    }
    out
}

/// The messages overlay's lines: the newest first, each wrapped to `width`.
pub fn message_lines(messages: &[(String, bool)], width: usize) -> Vec<Line<'static>> {
    if messages.is_empty() {
        return vec![Line::styled("no messages yet", theme::MUTED)];
    }
    let mut out = Vec::new();
    for (text, error) in messages.iter().rev() {
        let style = if *error { theme::ERROR } else { Style::new() };
        for part in frame::wrap(&theme::text(text), width.max(10)) {
            out.push(Line::styled(part, style));
        }
        out.push(Line::raw(""));
    }
    out.pop();
    out
}

/// The popup's area over `area`.
pub fn popup(area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(100);
    let h = area.height.saturating_sub(2);
    Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h)
}

/// The text width inside the popup over `area`.
pub fn inner_width(area: Rect) -> usize {
    popup(area).width.saturating_sub(2) as usize
}

/// Draws `lines` in a popup over `area` from line `scroll` (clamped to the text).
pub fn draw(f: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>, scroll: &mut usize) {
    let popup = popup(area);
    f.render_widget(Clear, popup);
    let visible = popup.height.saturating_sub(2) as usize;
    *scroll = (*scroll).min(lines.len().saturating_sub(visible));
    let end = (*scroll + visible).min(lines.len());
    let place = format!(" {}-{} of {} · Up/Down PgUp/PgDn scroll · Esc closes ", *scroll + 1, end, lines.len());
    let block = theme::pane(format!(" {title} "), true).title_bottom(Line::styled(place, theme::MUTED).right_aligned());
    let shown: Vec<Line> = lines.into_iter().skip(*scroll).take(visible).collect();
    f.render_widget(Paragraph::new(shown).block(block), popup);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::ScreenId;

    /// Every binding is listed once; the screen shown and its mode come first.
    #[test]
    fn every_binding_once_screen_first() {
        let annotate = Context::Screen(ScreenId::ANNOTATE);
        let s = sections(&[annotate, Context::Main, Context::Any], Some("likert"), false);
        assert_eq!(s[0].title, "Annotate keys · likert mode");
        assert!(s[0].bindings.iter().all(|b| b.in_mode(Some("likert"))));
        assert_eq!(s[1].title, "Annotate keys in other modes");
        assert_eq!(s[2].title, "Keys on every screen");
        let listed: usize = s.iter().map(|s| s.bindings.len()).sum();
        assert_eq!(listed, BINDINGS.len());
    }

    /// The launch form's keys come first in its mode (typing in a text field), then its other mode's.
    #[test]
    fn the_launch_form_mode_first() {
        let s = sections(&[Context::Form, Context::Any], Some("typing"), false);
        assert_eq!(s[0].title, "Forms (a transfer run, a new campaign, an annotator) · typing mode");
        assert!(s[0].bindings.iter().any(|b| b.action == crate::tui::action::Action::DeleteWord));
        assert_eq!(s[1].title, "Forms (a transfer run, a new campaign, an annotator) in other modes");
        assert!(s[1].bindings.iter().all(|b| b.modes == ["choose"]));
        let listed: usize = s.iter().map(|s| s.bindings.len()).sum();
        assert_eq!(listed, BINDINGS.len());
    }

    /// At 80 columns nothing is cut: every word of every description is on some line.
    #[test]
    fn descriptions_wrap_whole() {
        let s = sections(&[Context::Main, Context::Any], None, false);
        let text: Vec<String> = lines(&s, 72).iter().map(|l| l.to_string()).collect();
        assert!(text.iter().all(|l| theme::width(l) <= 72), "{text:#?}");
        let all = text.join(" ");
        for b in BINDINGS {
            for word in b.desc.split_whitespace() {
                assert!(all.contains(word), "{word:?} of {:?} missing", b.desc);
            }
        }
    }
}
