//! Styles and small drawing helpers shared by the screens. Text from the store, files and
//! errors goes through [`text`] (or [`fit`], [`pane`], which use it) before it reaches a widget:
//! ratatui drops control characters silently, so a `slow\rfake` would read `slowfake` and an
//! escape sequence would lose its ESC; shown through `printable` they are visible instead.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};
use std::borrow::Cow;
use unicode_width::UnicodeWidthStr;

/// Diff: words the output kept from the source.
pub const KEPT: Style = Style::new().add_modifier(Modifier::DIM);
/// Diff: words only in the output.
pub const ADDED: Style = Style::new().fg(Color::Green).add_modifier(Modifier::BOLD);
/// Diff: source words the output dropped.
pub const REMOVED: Style = Style::new().fg(Color::Red).add_modifier(Modifier::CROSSED_OUT);
pub const HUMAN: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);
pub const LABEL: Style = Style::new().fg(Color::Cyan);
pub const MUTED: Style = Style::new().fg(Color::DarkGray);
pub const SCORE: Style = Style::new().fg(Color::Yellow);
pub const SELECTED: Style = Style::new().bg(Color::Blue).fg(Color::White).add_modifier(Modifier::BOLD);
pub const ERROR: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
pub const OK: Style = Style::new().fg(Color::Green);
pub const KEY: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);

/// A bordered pane; the focused one gets a bright border. The title is shown as [`text`].
pub fn pane(title: String, focused: bool) -> Block<'static> {
    let title = owned(title);
    let border = if focused { Style::new().fg(Color::Cyan) } else { MUTED };
    Block::bordered()
        .border_type(if focused { BorderType::Thick } else { BorderType::Plain })
        .border_style(border)
        .title(Span::styled(title, if focused { Style::new().add_modifier(Modifier::BOLD) } else { Style::new() }))
}

/// Text for a widget: one line, every control character visible (`printable::line`).
pub fn text(s: &str) -> Cow<'_, str> {
    crate::printable::line(s)
}

/// [`text`] of an owned string, without a copy when it is clean.
pub fn owned(s: String) -> String {
    match text(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(t) => t,
    }
}

/// Cuts `s`, shown as [`text`], to `width` display columns (with an ellipsis) or pads it.
pub fn fit(s: &str, width: usize) -> String {
    crate::printable::fit(s, width)
}

/// Display width of `s` as [`text`] shows it.
pub fn width(s: &str) -> usize {
    text(s).width()
}

/// `1234567` -> `1,234,567`.
pub fn count(n: i64) -> String {
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_and_fit() {
        assert_eq!(super::count(100000), "100,000");
        assert_eq!(super::count(999), "999");
        assert_eq!(super::fit("abcdef", 4), "abc…");
        assert_eq!(super::fit("ab", 4), "ab  ");
    }

    #[test]
    fn text_is_shown_visibly() {
        assert_eq!(super::text("slow\rfake\x1b[2J"), "slow␍fake␛[2J");
        assert_eq!(super::owned("a\u{202e}b".into()), "a\\u{202e}b");
        assert_eq!(super::width("a\x07"), 2);
        let title = super::pane(" x\x1b]2;t\x07 ".into(), true);
        assert!(format!("{title:?}").contains("x␛]2;t␇"));
    }
}
