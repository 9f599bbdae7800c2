//! Display width of text on a terminal, by grapheme clusters, and the helpers that cut, pad,
//! abbreviate and break text by that width. A grapheme cluster (a CJK character, an emoji with a
//! skin-tone modifier, a ZWJ sequence, a flag, a letter with combining marks) is one unit: it is
//! never split, and it is as wide as ratatui's buffer counts it (`unicode-width` over the whole
//! cluster), so columns measured here line up with what the TUI draws.
//!
//! These functions measure text as given; text from files is made safe first
//! (`printable::line`, or `tui::theme::text`, which uses these).

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The ellipsis that marks a cut.
pub const ELLIPSIS: char = '…';

/// Columns one grapheme cluster takes: 0 for zero-width clusters (ratatui skips them).
pub fn grapheme_width(g: &str) -> usize {
    if g.len() == 1 { usize::from(!g.as_bytes()[0].is_ascii_control()) } else { g.width() }
}

/// Columns `s` takes, cluster by cluster.
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    s.graphemes(true).map(grapheme_width).sum()
}

/// The longest start of `s` at most `max` columns wide (whole clusters), and its width.
pub fn head(s: &str, max: usize) -> (&str, usize) {
    let mut w = 0;
    for (i, g) in s.grapheme_indices(true) {
        let gw = grapheme_width(g);
        if w + gw > max {
            return (&s[..i], w);
        }
        w += gw;
    }
    (s, w)
}

/// The longest end of `s` at most `max` columns wide (whole clusters), and its width.
pub fn tail(s: &str, max: usize) -> (&str, usize) {
    let mut w = 0;
    for (i, g) in s.grapheme_indices(true).rev() {
        let gw = grapheme_width(g);
        if w + gw > max {
            return (&s[i + g.len()..], w);
        }
        w += gw;
    }
    (s, w)
}

/// `s` padded with spaces to `width` columns (as is when wider).
pub fn pad(s: &str, width: usize) -> String {
    let w = self::width(s);
    let mut out = String::with_capacity(s.len() + width.saturating_sub(w));
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

/// `s` right-aligned in `width` columns (as is when wider).
pub fn pad_left(s: &str, width: usize) -> String {
    let mut out = " ".repeat(width.saturating_sub(self::width(s)));
    out.push_str(s);
    out
}

/// `s` cut to `width` columns, keeping its start, with an ellipsis where it was cut.
pub fn cut(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let (h, _) = head(s, width - 1);
    format!("{h}{ELLIPSIS}")
}

/// [`cut`], then padded to exactly `width` columns.
pub fn fit(s: &str, width: usize) -> String {
    pad(&cut(s, width), width)
}

/// Characters after which a name is cut for its distinguishing end.
fn separator(c: char) -> bool {
    matches!(c, ':' | '-' | '_' | '/' | '.' | ' ' | '@' | '=' | ',')
}

/// `s` shortened to `width` columns keeping its start and its distinguishing end, with an
/// ellipsis between: `smollm2-135m-instruct:template-formal-generic` in 20 columns reads
/// `smollm2-135m…generic`. The end is the last part after a separator (`:`, `-`, `_`, `/`, ...)
/// that fits in half the room, else as much of the end as fits there.
pub fn abbreviate(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_owned();
    }
    if width < 5 {
        return cut(s, width);
    }
    let room = width - 1;
    let end_max = room / 2;
    // The longest tail starting after a separator that fits in `end_max` columns.
    let mut end = tail(s, end_max).0;
    let cut_at = s.len() - end.len();
    if let Some(i) = s[cut_at..].find(separator) {
        let after = cut_at + i + s[cut_at + i..].chars().next().map_or(1, char::len_utf8);
        if after < s.len() {
            end = &s[after..];
        }
    }
    let (start, _) = head(s, room - self::width(end));
    format!("{start}{ELLIPSIS}{end}")
}

/// Splits a word too long for a line: the head fits in `width` columns (at least one cluster),
/// broken after a separator (`-`, `/`, `_`, ...) in its last third when there is one, so
/// `counter-revolutionary` breaks as `counter-` / `revolutionary` rather than mid-syllable.
pub fn break_word(s: &str, width: usize) -> (&str, &str) {
    let (h, hw) = head(s, width.max(1));
    let h = if h.is_empty() { s.graphemes(true).next().unwrap_or("") } else { h };
    if h.len() == s.len() {
        return (s, "");
    }
    // A separator in the last third of the head.
    let mut w = 0;
    let mut best = None;
    for (i, g) in h.grapheme_indices(true) {
        w += grapheme_width(g);
        if g.chars().all(separator) && g != " " && w * 3 >= hw * 2 {
            best = Some(i + g.len());
        }
    }
    let at = best.unwrap_or(h.len());
    (&s[..at], &s[at..])
}

/// The part of `s` around bytes `at..at + len` (a search match) that fits in `width` columns:
/// the start of `s` when the match is visible there, else an ellipsis, some text before the
/// match (a quarter of the room), the match and what follows.
pub fn around(s: &str, at: usize, len: usize, width: usize) -> String {
    if width < 2 || !s.is_char_boundary(at) || at > s.len() {
        return cut(s, width);
    }
    let end = (at + len).min(s.len());
    if self::width(&s[..end]) <= width.saturating_sub(1) || self::width(s) <= width {
        return cut(s, width);
    }
    let before_room = width / 4;
    let (before, bw) = tail(&s[..at], before_room);
    let rest = cut(&s[at..], width - 1 - bw);
    format!("{ELLIPSIS}{before}{rest}")
}

/// Where `needle` first occurs in `haystack`, ignoring case: (byte offset, byte length) in
/// `haystack`.
pub fn find_ignore_case(haystack: &str, needle: &str) -> Option<(usize, usize)> {
    let needle = needle.trim();
    if needle.is_empty() {
        return None;
    }
    let lower_needle: Vec<char> = needle.chars().flat_map(char::to_lowercase).collect();
    let chars: Vec<(usize, char)> = haystack.char_indices().collect();
    'start: for (k, &(i, _)) in chars.iter().enumerate() {
        let mut pos = k;
        let mut want = lower_needle.iter();
        let mut pending: Vec<char> = Vec::new();
        loop {
            if pending.is_empty() {
                if want.len() == 0 {
                    let end = chars.get(pos).map_or(haystack.len(), |c| c.0);
                    return Some((i, end - i));
                }
                let Some(&(_, c)) = chars.get(pos) else { continue 'start };
                pending = c.to_lowercase().collect();
                pos += 1;
            }
            let c = pending.remove(0);
            if want.next() != Some(&c) {
                continue 'start;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_by_cluster() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("模型甲🤖"), 8);
        assert_eq!(width("👍🏽"), 2, "emoji with a skin-tone modifier");
        assert_eq!(width("👨\u{200d}👩\u{200d}👧"), 2, "a ZWJ sequence");
        assert_eq!(width("🇯🇵"), 2, "a flag");
        assert_eq!(width("e\u{301}"), 1, "a combining mark");
        assert_eq!(width("\u{200b}"), 0);
    }

    #[test]
    fn cut_fit_and_pad_keep_clusters_whole() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(fit("模型甲🤖x", 6), "模型… ");
        assert_eq!(cut("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
        assert_eq!(width(&fit("👨\u{200d}👩\u{200d}👧 family", 5)), 5);
        assert_eq!(pad("模型甲🤖", 10), "模型甲🤖  ");
        assert_eq!(pad_left("🇯🇵", 4), "  🇯🇵");
    }

    #[test]
    fn abbreviations_keep_the_distinguishing_end() {
        let a = "smollm2-135m-instruct:template-formal-generic";
        let b = "smollm2-135m-instruct:template-formal-fewshot";
        assert_eq!(abbreviate(a, 20), "smollm2-135m…generic");
        assert_eq!(abbreviate(b, 20), "smollm2-135m…fewshot");
        assert_eq!(width(&abbreviate(a, 24)), 24);
        assert_eq!(abbreviate("short", 20), "short");
        assert_eq!(abbreviate("abcdefghijklmnopqrstuvwxyz", 11), "abcde…vwxyz");
        assert_eq!(width(&abbreviate("模型甲模型乙模型丙模型丁", 9)), 9);
    }

    #[test]
    fn long_words_break_after_separators() {
        assert_eq!(break_word("counter-revolutionary", 10), ("counter-", "revolutionary"));
        assert_eq!(break_word("abcdefgh", 3), ("abc", "defgh"));
        assert_eq!(break_word("模型甲", 3), ("模", "型甲"));
        assert_eq!(break_word("模型甲", 1), ("模", "型甲"), "at least one cluster");
        assert_eq!(break_word("ab", 3), ("ab", ""));
    }

    #[test]
    fn text_around_a_match() {
        let s = "the service at the front desk was slow but the room was generous and clean";
        assert_eq!(around(s, 4, 7, 20), "the service at the …");
        let at = s.find("generous").unwrap();
        let shown = around(s, at, 8, 20);
        assert!(shown.starts_with('…') && shown.contains("generous"), "{shown}");
        assert_eq!(width(&shown), 20);
        assert_eq!(find_ignore_case("The GENEROUS host", "generous"), Some((4, 8)));
        assert_eq!(find_ignore_case("模型甲🤖", "甲"), Some((6, 3)));
        assert_eq!(find_ignore_case("abc", "x"), None);
    }
}
