//! Styles and small drawing helpers shared by the screens. Text from the store, files and
//! errors goes through [`text`] (or [`fit`], [`pane`], which use it) before it reaches a widget:
//! ratatui drops control characters silently, so a `slow\rfake` would read `slowfake` and an
//! escape sequence would lose its ESC; shown through `printable` they are visible instead.
//! Widths, cuts and abbreviations count grapheme clusters (`crate::text`), as the buffer does.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};
use std::borrow::Cow;

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

/// Text for a widget: one line, every control character visible (`printable::line`), a tab
/// shown as `⇥`, and each flag (a pair of regional indicators) as its two letters' cells.
///
/// Why flags: ratatui puts a flag in one 2-column cell and skips the next, but a terminal may
/// keep the second indicator in that next cell (tmux does); overwriting the flag later then
/// leaves a stray `🇵` that ratatui does not know about. A zero-width space between the two
/// indicators makes them two 1-column cells, which a terminal still draws as the flag and
/// ratatui always overwrites both.
pub fn text(s: &str) -> Cow<'_, str> {
    if s.contains('\t') {
        return Cow::Owned(text(&s.replace('\t', "⇥")).into_owned());
    }
    let line = crate::printable::line(s);
    if !line.contains(regional) {
        return line;
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut prev_regional = false;
    for c in line.chars() {
        if regional(c) && prev_regional {
            out.push('\u{200b}');
            prev_regional = false;
        } else {
            prev_regional = regional(c);
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// A regional indicator symbol (half of a flag).
fn regional(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
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
    crate::text::fit(&text(s), width)
}

/// [`text`] of `s` cut to `width` columns (an ellipsis marks the cut), not padded.
pub fn cut(s: &str, width: usize) -> String {
    crate::text::cut(&text(s), width)
}

/// A pane title ` a · b · c ` for a pane `width` columns wide (its two corners excluded): the
/// parts at the indices in `drop` go, in that order, until it fits, so what matters most stays
/// whole; only then is it cut.
pub fn title(parts: &[String], drop: &[usize], width: usize) -> String {
    let room = width.saturating_sub(2);
    let mut gone = Vec::new();
    let build = |gone: &[usize]| {
        let kept: Vec<&str> = parts.iter().enumerate().filter(|(i, _)| !gone.contains(i)).map(|(_, p)| p.as_str()).collect();
        format!(" {} ", kept.join(" · "))
    };
    let mut t = build(&gone);
    for &i in drop {
        // The closing space may go.
        if crate::text::width(text(&t).trim_end()) <= room {
            break;
        }
        gone.push(i);
        t = build(&gone);
    }
    if crate::text::width(&text(&t)) > room && crate::text::width(text(&t).trim_end()) <= room {
        t.truncate(t.trim_end().len());
    }
    cut(&t, room)
}

/// [`text`] of `s` shortened to `width` columns keeping its start and its distinguishing end
/// (`smollm2-135m…generic`), padded to `width`: for names (systems, datasets, columns).
pub fn abbrev(s: &str, width: usize) -> String {
    crate::text::pad(&crate::text::abbreviate(&text(s), width), width)
}

/// [`text`] of `s` padded (or abbreviated, as [`abbrev`]) to `width` columns, aligned right.
pub fn right(s: &str, width: usize) -> String {
    crate::text::pad_left(&crate::text::abbreviate(&text(s), width), width)
}

/// Display width of `s` as [`text`] shows it, by grapheme clusters (as the buffer counts).
pub fn width(s: &str) -> usize {
    crate::text::width(&text(s))
}

/// [`text`] of `s` wrapped to `width` columns: at spaces, long words broken
/// (`crate::text::break_word`); each line's continuation is not indented.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let shown = text(s);
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in shown.split(' ').filter(|w| !w.is_empty()) {
        let mut word = word;
        loop {
            let w = crate::text::width(word);
            let gap = usize::from(used > 0);
            if used + gap + w <= width {
                if gap > 0 {
                    line.push(' ');
                }
                line.push_str(word);
                used += gap + w;
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                used = 0;
                continue;
            }
            let (head, rest) = crate::text::break_word(word, width);
            lines.push(head.to_owned());
            word = rest;
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
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

/// A count in at most 5 columns: `1,234` below 10,000, then `12.3k`, `1.2M`.
pub fn count_short(n: i64) -> String {
    let a = n.abs() as f64;
    let s = match n.abs() {
        0..10_000 => return count(n),
        10_000..999_950 => format!("{:.1}k", a / 1e3),
        _ => format!("{:.1}M", a / 1e6),
    };
    if n < 0 { format!("-{s}") } else { s }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_and_fit() {
        assert_eq!(super::count_short(1100), "1,100");
        assert_eq!(super::count_short(12_345), "12.3k");
        assert_eq!(super::count_short(1_000_000), "1.0M");
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
        assert_eq!(super::text("a\tb"), "a⇥b");
    }

    #[test]
    fn a_title_drops_parts_in_order_before_it_is_cut() {
        use super::title;
        let parts = ["Annotate", "camp", "ann", "item 1/7", "neg->pos", "style strength"].map(String::from);
        let drop = [0, 2, 1, 4];
        assert_eq!(title(&parts, &drop, 80), " Annotate · camp · ann · item 1/7 · neg->pos · style strength ");
        // The closing space goes first.
        assert_eq!(title(&parts, &drop, 63), " Annotate · camp · ann · item 1/7 · neg->pos · style strength");
        assert_eq!(title(&parts, &drop, 54), " camp · ann · item 1/7 · neg->pos · style strength ");
        assert_eq!(title(&parts, &drop, 50), " camp · item 1/7 · neg->pos · style strength ");
        assert_eq!(title(&parts, &drop, 30), " item 1/7 · style strength ");
        assert!(title(&parts, &drop, 20).ends_with('…'), "{}", title(&parts, &drop, 20));
    }

    #[test]
    fn flags_are_two_cells_and_widths_count_clusters() {
        assert_eq!(super::text("to 🇯🇵!"), "to 🇯\u{200b}🇵!");
        assert_eq!(super::width("to 🇯🇵!"), 6);
        assert_eq!(super::width("模型甲🤖"), 8);
        assert_eq!(super::fit("模型甲🤖", 10), "模型甲🤖  ");
        // In a buffer the flag takes two cells, each drawn (none skipped as hidden).
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 6, 1));
        buf.set_string(0, 0, super::text("🇯🇵ab"), ratatui::style::Style::new());
        assert_eq!(buf[(0, 0)].symbol(), "🇯");
        assert_eq!(buf[(1, 0)].symbol(), "🇵");
        assert_eq!(buf[(2, 0)].symbol(), "a");
    }

    #[test]
    fn wraps_and_breaks_long_words() {
        assert_eq!(super::wrap("run tstlab score --dataset demo-formality now", 20), ["run tstlab score", "--dataset", "demo-formality now"]);
        assert_eq!(super::wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(super::wrap("", 4), [""]);
    }
}
