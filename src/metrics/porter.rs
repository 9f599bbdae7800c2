//! NLTK's `PorterStemmer` in its default mode, `NLTK_EXTENSIONS` (NLTK 3.10.4,
//! `nltk/stem/porter.py`): Porter's 1980 algorithm with Martin Porter's later corrections and
//! NLTK's own changes (a few irregular forms, `ies`/`ied` of four letters, `alli`, `fulli`, `logi`,
//! a two-letter word ending vowel-consonant counts as cvc, words of one or two characters kept).
//! Works on Unicode characters as Python strings do: every character other than a, e, i, o and u
//! is a consonant, except a `y` after a consonant. METEOR's stem stage (docs/METHODS.md, METEOR) and
//! rouge-score's `use_stemmer=True` (docs/METHODS.md, ROUGE). No crate implements this variant:
//! those on crates.io give Porter's original algorithm or Snowball's Porter2.

use super::py;

/// NLTK's stem of `word` (lower-cased first, as `stem(word)` does by default).
pub fn stem(word: &str) -> String {
    let lower = py::lower(word);
    if let Some(s) = irregular(&lower) {
        return s.to_owned();
    }
    // NLTK tests the length of the word as given, before lower-casing.
    if word.chars().count() <= 2 {
        return lower.into_owned();
    }
    let mut w: Vec<char> = lower.chars().collect();
    step1a(&mut w);
    step1b(&mut w);
    step1c(&mut w);
    step2(&mut w);
    step3(&mut w);
    step4(&mut w);
    step5a(&mut w);
    step5b(&mut w);
    w.into_iter().collect()
}

/// NLTK's pool of irregular forms.
fn irregular(w: &str) -> Option<&'static str> {
    Some(match w {
        "sky" | "skies" => "sky",
        "dying" => "die",
        "lying" => "lie",
        "tying" => "tie",
        "news" => "news",
        "innings" | "inning" => "inning",
        "outings" | "outing" => "outing",
        "cannings" | "canning" => "canning",
        "howe" => "howe",
        "proceed" => "proceed",
        "exceed" => "exceed",
        "succeed" => "succeed",
        _ => return None,
    })
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')
}

/// Whether each character is a consonant (a `y` is one at the start and after a vowel).
fn consonants(w: &[char]) -> Vec<bool> {
    let mut flags: Vec<bool> = Vec::with_capacity(w.len());
    for (i, &c) in w.iter().enumerate() {
        let f = if is_vowel(c) {
            false
        } else if c == 'y' {
            i == 0 || !flags[i - 1]
        } else {
            true
        };
        flags.push(f);
    }
    flags
}

fn is_consonant(w: &[char], i: usize) -> bool {
    consonants(&w[..=i])[i]
}

/// Porter's m: the number of vowel-consonant sequences.
fn measure(w: &[char]) -> usize {
    let f = consonants(w);
    f.windows(2).filter(|p| !p[0] && p[1]).count()
}

fn contains_vowel(w: &[char]) -> bool {
    consonants(w).iter().any(|c| !c)
}

fn ends_double_consonant(w: &[char]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
}

fn ends_cvc(w: &[char]) -> bool {
    let n = w.len();
    let f = consonants(w);
    (n >= 3 && f[n - 3] && !f[n - 2] && f[n - 1] && !matches!(w[n - 1], 'w' | 'x' | 'y')) || (n == 2 && !f[0] && f[1])
}

fn ends_with(w: &[char], s: &str) -> bool {
    let n = s.chars().count();
    w.len() >= n && w[w.len() - n..].iter().copied().eq(s.chars())
}

/// `w` without its last `n` characters.
fn cut(w: &[char], n: usize) -> &[char] {
    &w[..w.len() - n]
}

fn replace(w: &mut Vec<char>, suffix: &str, by: &str) {
    let n = suffix.chars().count();
    w.truncate(w.len() - n);
    w.extend(by.chars());
}

/// A rule's condition on the stem (the word without the suffix).
type Condition<'a> = &'a dyn Fn(&[char]) -> bool;

/// NLTK's `_apply_rule_list`: the first rule whose suffix the word ends with decides (it applies
/// when its condition holds, else the word stays); `*d` is a double consonant ending (or, as in
/// NLTK, the literal characters `*d`).
fn apply_rules(w: &mut Vec<char>, rules: &[(&str, &str, Option<Condition>)]) {
    for (suffix, by, cond) in rules {
        if *suffix == "*d" && ends_double_consonant(w) {
            let stem = cut(w, 2);
            if cond.is_none_or(|c| c(stem)) {
                w.truncate(w.len() - 2);
                w.extend(by.chars());
            }
            return;
        }
        if ends_with(w, suffix) {
            if cond.is_none_or(|c| c(cut(w, suffix.chars().count()))) {
                replace(w, suffix, by);
            }
            return;
        }
    }
}

fn positive(s: &[char]) -> bool {
    measure(s) > 0
}

fn above_one(s: &[char]) -> bool {
    measure(s) > 1
}

fn step1a(w: &mut Vec<char>) {
    if ends_with(w, "ies") && w.len() == 4 {
        replace(w, "ies", "ie");
        return;
    }
    apply_rules(w, &[("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)]);
}

fn step1b(w: &mut Vec<char>) {
    if ends_with(w, "ied") {
        let by = if w.len() == 4 { "ie" } else { "i" };
        replace(w, "ied", by);
        return;
    }
    if ends_with(w, "eed") {
        if measure(cut(w, 3)) > 0 {
            replace(w, "eed", "ee");
        }
        return;
    }
    let Some(suffix) = ["ed", "ing"].into_iter().find(|s| ends_with(w, s) && contains_vowel(cut(w, s.chars().count()))) else {
        return;
    };
    w.truncate(w.len() - suffix.chars().count());
    let last = w.last().copied().unwrap_or_default();
    let double: Condition = &|_| !matches!(last, 'l' | 's' | 'z');
    let add_e: Condition = &|s| measure(s) == 1 && ends_cvc(s);
    let by = last.to_string();
    apply_rules(
        w,
        &[("at", "ate", None), ("bl", "ble", None), ("iz", "ize", None), ("*d", by.as_str(), Some(double)), ("", "e", Some(add_e))],
    );
}

fn step1c(w: &mut Vec<char>) {
    let cond: Condition = &|s| s.len() > 1 && is_consonant(s, s.len() - 1);
    apply_rules(w, &[("y", "i", Some(cond))]);
}

fn step2(w: &mut Vec<char>) {
    if ends_with(w, "alli") && positive(cut(w, 4)) {
        replace(w, "alli", "al");
        return step2(w);
    }
    let whole = w.clone();
    let logi: Condition = &|_| positive(cut(&whole, 3));
    let p: Condition = &positive;
    apply_rules(
        w,
        &[
            ("ational", "ate", Some(p)),
            ("tional", "tion", Some(p)),
            ("enci", "ence", Some(p)),
            ("anci", "ance", Some(p)),
            ("izer", "ize", Some(p)),
            ("bli", "ble", Some(p)),
            ("alli", "al", Some(p)),
            ("entli", "ent", Some(p)),
            ("eli", "e", Some(p)),
            ("ousli", "ous", Some(p)),
            ("ization", "ize", Some(p)),
            ("ation", "ate", Some(p)),
            ("ator", "ate", Some(p)),
            ("alism", "al", Some(p)),
            ("iveness", "ive", Some(p)),
            ("fulness", "ful", Some(p)),
            ("ousness", "ous", Some(p)),
            ("aliti", "al", Some(p)),
            ("iviti", "ive", Some(p)),
            ("biliti", "ble", Some(p)),
            ("fulli", "ful", Some(p)),
            ("logi", "log", Some(logi)),
        ],
    );
}

fn step3(w: &mut Vec<char>) {
    let p: Condition = &positive;
    apply_rules(
        w,
        &[
            ("icate", "ic", Some(p)),
            ("ative", "", Some(p)),
            ("alize", "al", Some(p)),
            ("iciti", "ic", Some(p)),
            ("ical", "ic", Some(p)),
            ("ful", "", Some(p)),
            ("ness", "", Some(p)),
        ],
    );
}

fn step4(w: &mut Vec<char>) {
    let m: Condition = &above_one;
    let ion: Condition = &|s| above_one(s) && matches!(s.last(), Some('s' | 't'));
    let rules: Vec<(&str, &str, Option<Condition>)> = [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
    ]
    .into_iter()
    .map(|s| (s, "", Some(if s == "ion" { ion } else { m })))
    .collect();
    apply_rules(w, &rules);
}

fn step5a(w: &mut Vec<char>) {
    if w.last() == Some(&'e') {
        let stem = cut(w, 1);
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem)) {
            w.pop();
        }
    }
}

fn step5b(w: &mut Vec<char>) {
    let whole = w.clone();
    let cond: Condition = &|_| measure(cut(&whole, 1)) > 1;
    apply_rules(w, &[("ll", "l", Some(cond))]);
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn nltk_docstring_and_extension_words() {
        // Porter's paper's examples and NLTK's departures from it (NLTK_EXTENSIONS).
        for (w, s) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("sky", "sky"),
            ("dying", "die"),
            ("generalization", "gener"),
            ("relational", "relat"),
            ("Running", "run"),
            ("is", "is"),
            ("a", "a"),
            ("cried", "cri"),
            ("died", "die"),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
    }
}
