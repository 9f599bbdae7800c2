//! The frame around the screens, laid out for 80x24 first: the tab line (tab names shorten
//! before anything is lost: the current tab, the marker of a screen reached from another and
//! the running jobs always show), the status line (the key hints `? help` and `q quit` always
//! show; the store path shortens keeping its file name; a long note wraps instead of losing
//! its end), and the smallest size the screens are drawn at.

use super::theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::ops::Range;
use std::path::Path;
use unicode_width::UnicodeWidthStr;

/// Below this size the app says the terminal is too small instead of drawing the screens.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 10;

/// The most lines a note may take on the status line; a longer one is shortened in the middle.
const NOTE_LINES: usize = 3;

/// One tab of the tab line.
pub struct Tab<T> {
    pub number: usize,
    pub name: &'static str,
    pub current: bool,
    /// What a click on it shows.
    pub id: T,
}

/// What the tab line shows besides the tabs.
#[derive(Default)]
pub struct TabExtras {
    pub read_only: bool,
    /// The screen shown when it is not a tab (`· Annotate`).
    pub marker: Option<&'static str>,
    pub jobs_running: usize,
}

/// The tab line `width` columns wide and the columns each tab takes (for clicks). When it does
/// not fit, the separators narrow, the jobs count shortens (`2 jobs`), then tabs from the right
/// show their number alone (the current one keeps its name): a name is whole or absent, never cut.
pub fn tab_line<T: Copy>(tabs: &[Tab<T>], extras: &TabExtras, width: usize) -> (Line<'static>, Vec<(Range<u16>, T)>) {
    let all = tabs.len();
    let variants = [(all, "  ", true), (all, " ", true), (all, " ", false)].into_iter().chain((0..all).rev().map(|n| (n, " ", false)));
    let mut last = None;
    for (names, sep, long) in variants {
        let built = build_tabs(tabs, extras, names, sep, long, true);
        if line_width(&built.0) <= width {
            return built;
        }
        last = Some(built);
    }
    // Narrower still: without the program's name.
    let bare = build_tabs(tabs, extras, 0, " ", false, false);
    if line_width(&bare.0) <= width { bare } else { last.unwrap_or(bare) }
}

/// `names`: how many tabs from the left show their name.
fn build_tabs<T: Copy>(tabs: &[Tab<T>], extras: &TabExtras, names: usize, sep: &str, long: bool, brand: bool) -> (Line<'static>, Vec<(Range<u16>, T)>) {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut at = 0usize;
    let mut push = |spans: &mut Vec<Span<'static>>, text: String, style: Style| -> Range<u16> {
        let start = at;
        at += text.width();
        spans.push(Span::styled(text, style));
        start as u16..at as u16
    };
    if brand {
        push(&mut spans, " tstlab ".into(), theme::SELECTED);
        push(&mut spans, " ".into(), Style::new());
    }
    if extras.read_only {
        push(&mut spans, "READ-ONLY".into(), theme::ERROR);
        push(&mut spans, sep.into(), Style::new());
    }
    let mut areas = Vec::new();
    for (i, t) in tabs.iter().enumerate() {
        let label = if t.current || i < names { format!("{} {}", t.number, t.name) } else { t.number.to_string() };
        let style = if t.current { theme::KEY } else { theme::MUTED };
        let r = push(&mut spans, label, style);
        areas.push((r, t.id));
        push(&mut spans, sep.into(), Style::new());
    }
    if let Some(m) = extras.marker {
        push(&mut spans, format!("· {m}"), theme::KEY);
        push(&mut spans, sep.into(), Style::new());
    }
    if extras.jobs_running > 0 {
        let n = extras.jobs_running;
        let jobs = if n == 1 { "1 job".to_owned() } else { format!("{n} jobs") };
        push(&mut spans, if long { format!("{jobs} running") } else { jobs }, theme::OK);
    } else if let Some(s) = spans.last()
        && s.content.trim().is_empty()
    {
        spans.pop();
    }
    (Line::from(spans), areas)
}

fn line_width(l: &Line) -> usize {
    l.spans.iter().map(|s| s.content.width()).sum()
}

/// The first of `variants` that fits in `width` (the last one otherwise).
pub fn first_fitting<'a>(variants: &[&'a str], width: usize) -> &'a str {
    variants.iter().find(|v| v.width() <= width).or(variants.last()).copied().unwrap_or("")
}

/// `text` wrapped to lines of at most `width` columns: breaks at spaces only (never inside
/// `tau-like` or a path), a word longer than a line is broken where the line ends.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let options = textwrap::Options::new(width.max(1))
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options).into_iter().map(|c| c.into_owned()).collect()
}

/// `text` cut into lines of exactly `width` columns (the last one shorter).
fn chunks(text: &str, width: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut w = 0;
    for ch in text.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if w + cw > width.max(1) {
            out.push(String::new());
            w = 0;
        }
        w += cw;
        out.last_mut().expect("one line at least").push(ch);
    }
    out
}

/// One key hint of the status line.
pub struct Hint {
    pub key: String,
    pub what: &'static str,
    /// Always shown (`? help`, `q quit`); the others show while there is room.
    pub essential: bool,
}

/// What the left of the status line shows.
pub enum Left<'a> {
    Loading,
    Note { text: &'a str, error: bool },
    Store(&'a Path),
}

/// The status lines `width` columns wide (one, or more for a long note: the note wraps above
/// the hints). The hints are right-aligned on the last line.
pub fn status_lines(left: Left, hints: &[Hint], width: usize) -> Vec<Line<'static>> {
    let essential: Vec<&Hint> = hints.iter().filter(|h| h.essential).collect();
    let min_hints = hints_width(&essential);
    match left {
        Left::Note { text, error } => {
            let style = if error { theme::ERROR } else { theme::OK };
            let text = theme::text(text).into_owned();
            let w = text.width();
            if w + 2 + min_hints <= width {
                let shown = pick_hints(hints, width - w - 2);
                return vec![join(Span::styled(text, style), shown, width)];
            }
            let mut lines = wrap(&text, width);
            if lines.len() > NOTE_LINES {
                // Too long even wrapped: its middle goes, the rest fills the lines to the edge
                // with room for the hints at the end.
                let room = (NOTE_LINES * width).saturating_sub(min_hints + 2);
                lines = chunks(&shorten_middle(&text, room), width);
            }
            // The hints go on the last line of the note with room for them (else a line of
            // their own).
            let at = (0..lines.len()).rev().find(|&i| lines[i].width() + 2 + min_hints <= width);
            let mut out: Vec<Line<'static>> = Vec::new();
            for (i, l) in lines.into_iter().enumerate() {
                if Some(i) == at {
                    let room = width - l.width() - 2;
                    out.push(join(Span::styled(l, style), pick_hints(hints, room), width));
                } else {
                    out.push(Line::styled(l, style));
                }
            }
            if at.is_none() {
                out.push(join(Span::raw(""), pick_hints(hints, width), width));
            }
            out
        }
        Left::Loading => {
            let left = "loading…";
            vec![join(Span::styled(left, theme::LABEL), pick_hints(hints, width.saturating_sub(left.width() + 2)), width)]
        }
        Left::Store(path) => {
            // The hints get their room first; the path what is left.
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let least = format!("store …/{name}").width().min(24);
            let shown = pick_hints(hints, width.saturating_sub(least + 2).max(min_hints));
            let room = width.saturating_sub(hints_width(&shown) + 2);
            let left = format!("store {}", shorten_path(path, room.saturating_sub(6)));
            vec![join(Span::styled(theme::fit(&left, room).trim_end().to_owned(), theme::MUTED), shown, width)]
        }
    }
}

/// The hints that fit in `room` columns: the essential ones always (shown last, at the right
/// end), the others in order while they fit.
fn pick_hints(hints: &[Hint], room: usize) -> Vec<&Hint> {
    let mut used = hints_width(&hints.iter().filter(|h| h.essential).collect::<Vec<_>>());
    let mut keep: Vec<bool> = hints.iter().map(|h| h.essential).collect();
    for (i, h) in hints.iter().enumerate() {
        if h.essential {
            continue;
        }
        let w = hint_width(h) + if used == 0 { 0 } else { 2 };
        if used + w <= room {
            used += w;
            keep[i] = true;
        }
    }
    let kept = hints.iter().zip(keep).filter(|(_, k)| *k).map(|(h, _)| h);
    let (essential, others): (Vec<&Hint>, Vec<&Hint>) = kept.partition(|h| h.essential);
    others.into_iter().chain(essential).collect()
}

fn hint_width(h: &Hint) -> usize {
    h.key.width() + 1 + h.what.width()
}

fn hints_width(hints: &[&Hint]) -> usize {
    let n = hints.len();
    hints.iter().map(|h| hint_width(h)).sum::<usize>() + 2 * n.saturating_sub(1)
}

/// `left`, then the hints right-aligned, in one line `width` wide.
fn join(left: Span<'static>, hints: Vec<&Hint>, width: usize) -> Line<'static> {
    let hw = hints_width(&hints);
    let pad = width.saturating_sub(left.content.width() + hw);
    let mut spans = vec![left, Span::raw(" ".repeat(pad))];
    for (i, h) in hints.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(h.key.clone(), theme::KEY));
        spans.push(Span::raw(format!(" {}", h.what)));
    }
    Line::from(spans)
}

/// `path` in at most `width` columns: whole, or `…/` and its last components (the file name
/// at least, itself cut at its start when even that is too long).
pub fn shorten_path(path: &Path, width: usize) -> String {
    let whole = theme::text(&path.to_string_lossy()).into_owned();
    if whole.width() <= width {
        return whole;
    }
    let parts: Vec<String> = path.iter().map(|p| theme::text(&p.to_string_lossy()).into_owned()).collect();
    let mut tail = String::new();
    for p in parts.iter().rev() {
        let next = if tail.is_empty() { p.clone() } else { format!("{p}/{tail}") };
        if format!("…/{next}").width() > width {
            break;
        }
        tail = next;
    }
    if tail.is_empty() {
        let name = parts.last().cloned().unwrap_or_default();
        return format!("…{}", keep_end(&name, width.saturating_sub(1)));
    }
    format!("…/{tail}")
}

/// `s` in at most `width` columns, its start and end kept and `…` between.
pub fn shorten_middle(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_owned();
    }
    let head = width.saturating_sub(1) / 3;
    let tail = width.saturating_sub(1) - head;
    let mut start = String::new();
    for ch in s.chars() {
        if (start.clone() + &ch.to_string()).width() > head {
            break;
        }
        start.push(ch);
    }
    format!("{start}…{}", keep_end(s, tail))
}

/// The end of `s` in at most `width` columns.
fn keep_end(s: &str, width: usize) -> String {
    let mut end: Vec<char> = Vec::new();
    let mut w = 0;
    for ch in s.chars().rev() {
        let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if w + cw > width {
            break;
        }
        w += cw;
        end.push(ch);
    }
    end.into_iter().rev().collect()
}

/// The note shown when the terminal is smaller than [`MIN_WIDTH`] x [`MIN_HEIGHT`].
pub fn too_small(width: u16, height: u16) -> Option<String> {
    (width < MIN_WIDTH || height < MIN_HEIGHT)
        .then(|| format!("terminal too small: need at least {MIN_WIDTH}x{MIN_HEIGHT} (now {width}x{height})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tabs(current: usize) -> Vec<Tab<usize>> {
        ["Browse", "Compare", "Jobs", "Import", "Campaigns", "Analysis", "Scores"]
            .iter()
            .enumerate()
            .map(|(i, n)| Tab { number: i + 1, name: n, current: i == current, id: i })
            .collect()
    }

    fn text(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn the_tab_line_fits_80_columns_with_everything_that_matters() {
        let (l, areas) = tab_line(&tabs(6), &TabExtras::default(), 80);
        assert_eq!(text(&l), " tstlab  1 Browse 2 Compare 3 Jobs 4 Import 5 Campaigns 6 Analysis 7 Scores");
        assert_eq!(areas.len(), 7);
        assert_eq!(&text(&l)[areas[6].0.start as usize..areas[6].0.end as usize], "7 Scores");
        let extras = TabExtras { read_only: true, marker: Some("Annotate"), jobs_running: 2 };
        let none = tabs(99);
        let (l, areas) = tab_line(&none, &extras, 80);
        let t = text(&l);
        assert!(t.width() <= 80 && t.contains("· Annotate") && t.ends_with("2 jobs") && t.contains("READ-ONLY"), "{t}");
        assert_eq!(areas.len(), 7);
        let (l, _) = tab_line(&tabs(4), &TabExtras { jobs_running: 1, ..Default::default() }, 80);
        let t = text(&l);
        assert!(t.width() <= 80 && t.contains("5 Campaigns") && t.ends_with("1 job"), "{t}");
        // Narrower: the other tabs by number, never a cut name.
        let (l, areas) = tab_line(&tabs(1), &TabExtras { jobs_running: 1, ..Default::default() }, 60);
        assert_eq!(text(&l), " tstlab  1 Browse 2 Compare 3 Jobs 4 Import 5 6 7 1 job");
        assert_eq!(areas.len(), 7);
        let (l, _) = tab_line(&tabs(0), &TabExtras::default(), 160);
        assert!(text(&l).contains("1 Browse  2 Compare  3 Jobs"));
    }

    fn hints() -> Vec<Hint> {
        let h = |key: &str, what, essential| Hint { key: key.into(), what, essential };
        vec![h("/", "search", false), h("f", "filter", false), h("s", "sort", false), h("Enter", "open", false),
            h("t", "transfer", false), h("3", "jobs", false), h("q", "quit", true), h("?", "help", true)]
    }

    #[test]
    fn help_and_quit_always_show_and_the_path_keeps_its_name() {
        let path = Path::new("/home/someone/a/very/long/folder/name/that/goes/on/and/on/experiments/store.sqlite");
        let lines = status_lines(Left::Store(path), &hints(), 80);
        assert_eq!(lines.len(), 1);
        let t = text(&lines[0]);
        assert!(t.width() == 80 && t.contains("q quit") && t.contains("? help") && t.contains("store.sqlite"), "{t}");
        assert!(t.starts_with("store …/"), "{t}");
        let lines = status_lines(Left::Store(path), &hints(), 60);
        let t = text(&lines[0]);
        assert!(t.width() <= 60 && t.contains("q quit") && t.contains("? help") && t.contains("store.sqlite"), "{t}");
    }

    #[test]
    fn a_long_note_wraps_and_keeps_its_end() {
        let note = "case study written: case-studies/demo-sentiment_negative-positive_3.md and case-studies/demo-sentiment_negative-positive_3.tex";
        let lines = status_lines(Left::Note { text: note, error: false }, &hints(), 80);
        let all: String = lines.iter().map(text).collect::<Vec<_>>().join("\n");
        assert_eq!(lines.len(), 2, "{all}");
        assert!(all.contains("case-studies/demo-sentiment_negative-positive_3.md and"), "{all}");
        assert!(all.contains("case-studies/demo-sentiment_negative-positive_3.tex"), "{all}");
        assert!(all.contains("q quit") && all.contains("? help"), "{all}");
        assert!(lines.iter().all(|l| text(l).width() <= 80), "{all}");
        // Far too long: the middle goes, start and end stay.
        let long = format!("failed: {} the reason at the end", "x/".repeat(400));
        let lines = status_lines(Left::Note { text: &long, error: true }, &hints(), 80);
        let all: String = lines.iter().map(text).collect::<Vec<_>>().join("");
        assert!(lines.len() == 3 && all.starts_with("failed: ") && all.contains("the reason at the end") && all.contains('…'), "{all}");
    }

    #[test]
    fn paths_shorten_keeping_the_name() {
        let p = Path::new("/a/bb/ccc/file.sqlite");
        assert_eq!(shorten_path(p, 40), "/a/bb/ccc/file.sqlite");
        assert_eq!(shorten_path(p, 17), "…/ccc/file.sqlite");
        assert_eq!(shorten_path(p, 14), "…/file.sqlite");
        assert_eq!(shorten_path(p, 6), "…qlite");
        assert_eq!(shorten_middle("abcdefghij", 7), "ab…ghij");
        assert_eq!(too_small(59, 30).unwrap(), "terminal too small: need at least 60x10 (now 59x30)");
        assert!(too_small(80, 24).is_none());
    }
}
