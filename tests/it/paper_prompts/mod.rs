//! The seed papers' prompts (`../shared/anchors/prompts.md`): the built-in judge prompts and the
//! LMStyle generation template rendered for fixed inputs equal the file's figures character for
//! character, with the inputs placed as the papers place them; and the paper judges end to end
//! through a canned OpenAI-compatible server (`fake_server`): one request per item with every
//! output numbered, each output's score and the raw reply stored, cached by prompt and order.

mod fake_server;
mod scoring;

use crate::anchor;
use tstlab::metrics::judge_paper::{Aspect, PaperPrompt, render_dialogue, render_item};
use tstlab::transfer::library::Library;
use tstlab::transfer::template::Vars;

/// The indented blocks of a Markdown file with the `##` and `###` headings above each (a blank
/// line between indented lines belongs to the block, as in Markdown).
fn blocks(md: &str) -> Vec<(String, String, String)> {
    let (mut section, mut sub) = (String::new(), String::new());
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    let mut blanks = 0;
    for line in md.lines() {
        if let Some(l) = line.strip_prefix("    ") {
            let b = current.get_or_insert_with(Vec::new);
            b.extend(std::iter::repeat_n("", blanks));
            blanks = 0;
            b.push(l);
            continue;
        }
        if line.trim().is_empty() && current.is_some() {
            blanks += 1;
            continue;
        }
        if let Some(b) = current.take() {
            out.push((section.clone(), sub.clone(), b.join("\n")));
        }
        blanks = 0;
        if let Some(h) = line.strip_prefix("### ") {
            sub = h.to_owned();
        } else if let Some(h) = line.strip_prefix("## ") {
            section = h.to_owned();
            sub.clear();
        }
    }
    if let Some(b) = current {
        out.push((section, sub, b.join("\n")));
    }
    out
}

/// The block under section `section` (a prefix) and subsection `sub` (a prefix; "" for none).
fn block<'a>(all: &'a [(String, String, String)], section: &str, sub: &str) -> &'a str {
    let found: Vec<&str> = all.iter().filter(|(s, u, _)| s.starts_with(section) && u.starts_with(sub) && (sub.is_empty() == u.is_empty())).map(|b| b.2.as_str()).collect();
    assert_eq!(found.len(), 1, "one block under {section:?} / {sub:?}: {found:?}");
    found[0]
}

/// `formal` and `informal` swapped, for the other direction.
fn swap(text: &str) -> String {
    text.replace("informal", "\u{0}").replace("formal", "informal").replace('\u{0}', "formal")
}

const LAI: &str = "Lai, Toral, Nissim (2023)";
const LMSTYLE: &str = "Appropriateness judge and generation prompt";

#[test]
fn the_papers_prompts_render_as_printed() {
    let Some(dir) = anchor::dir("") else { return };
    let md = std::fs::read_to_string(dir.join("prompts.md")).unwrap();
    let all = blocks(&md);

    // Lai et al.: each figure, then the layout shown under Figure 1 with its "Output n" line
    // standing for outputs 2..n (the blank line before it marks the ones left out).
    let layout: Vec<&str> = block(&all, LAI, "").lines().collect();
    assert_eq!(layout, ["---------------------", "Source text: []", "Output 1: []", "", "Output n: []"]);
    let (source, outputs) = ("ur so right lol", ["You are correct.", "you're right", "You are so right."]);
    let mut inputs = vec![layout[0].to_owned(), layout[1].replace("[]", source)];
    for (k, o) in outputs.iter().enumerate() {
        inputs.push(layout[2].replace('1', &(k + 1).to_string()).replace("[]", o));
    }
    let inputs = inputs.join("\n");
    let figures = [
        (PaperPrompt::Lai2023(Aspect::Content), "Figure 1"),
        (PaperPrompt::Lai2023(Aspect::Style), "Figure 2"),
        (PaperPrompt::Lai2023(Aspect::Fluency), "Figure 3"),
        (PaperPrompt::Lai2023Multi, "Figure 4"),
    ];
    for (prompt, figure) in figures {
        let text = block(&all, LAI, figure);
        let got = render_item(prompt, "informal", "formal", source, &outputs).unwrap();
        assert_eq!(got, format!("{text}\n{inputs}"), "{figure}");
        // The other direction swaps the direction phrase and style words (Figure 4 names both
        // directions and has none to swap).
        let other = if prompt == PaperPrompt::Lai2023Multi { text.to_owned() } else { swap(text) };
        let got = render_item(prompt, "formal", "informal", source, &outputs).unwrap();
        assert_eq!(got, format!("{other}\n{inputs}"), "{figure}, formal-to-informal");
    }
    assert!(swap(block(&all, LAI, "Figure 1")).contains("For the task of formal-to-informal style transfer"));

    // LMStyle's judge: the turn and the response in the Speaker and Response slots; the score's
    // slot left for the judge.
    let text = block(&all, LMSTYLE, "Figure 2");
    let (turn, response) = ("Do you have any hobbies ?", "Indeed, I collect stamps.");
    let want = text.replacen("Speaker: []", &format!("Speaker: {turn}"), 1).replacen("Response: []", &format!("Response: {response}"), 1);
    let want = want.strip_suffix(" []").expect("the score's slot ends the figure");
    assert_eq!(render_dialogue(turn, response), want);

    // LMStyle's generation prompt: the built-in template, the query in its place, the style word.
    let text = block(&all, LMSTYLE, "Figure 3");
    let lib = Library::built_in();
    let t = lib.templates.iter().find(|t| t.name == "lmstyle-ctst").expect("built-in lmstyle-ctst");
    for (style, word) in [("formal", "Formal"), ("informal", "Informal"), ("positive", "Positive"), ("Negative", "Negative")] {
        let v = Vars { context: Some("What a mess !"), target_style: style, ..Default::default() };
        let want = text.replace("{*Query*}", "What a mess !").replace("###Formal Response:", &format!("###{word} Response:"));
        assert_eq!(t.render(&v).unwrap(), want, "{style}");
    }
}

/// Independent of the anchor: the generation template's text and its error for a style the
/// paper has no word for.
#[test]
fn lmstyle_generation_template() {
    let lib = Library::built_in();
    let t = lib.templates.iter().find(|t| t.name == "lmstyle-ctst").unwrap();
    let v = Vars { context: Some("Can you help me ?"), target_style: "informal", ..Default::default() };
    let want = "###Speaker: Frank 's getting married , do you believe this ? ###Response: Is he really ? ###Speaker: OK . Come back into the classroom , class . ###Response: Does the class start again , Mam ? ###Speaker: Do you have any hobbies ? ###Response: Yes , I like collecting things . ###Speaker: Jenny , what's wrong with you ? Why do you keep weeping like that ? ###Response: Mary told me that she had seen you with John last night . I got to know the fact that you are playing the field . ###Speaker: What a nice day ! ###Response: yes . How about going out and enjoying the sunshine on the grass ? ###Speaker: Can you help me ? ###Informal Response:";
    assert_eq!(t.render(&v).unwrap(), want);
    let v = Vars { context: Some("x"), target_style: "shakespeare", ..Default::default() };
    assert_eq!(t.render(&v).unwrap_err().to_string(), "template lmstyle-ctst: table style has no entry for \"shakespeare\"");
    assert!(!t.is_few_shot(), "its five turns are fixed text, no exemplars are drawn");
}

/// `tstlab templates list` and `show` name the judge prompts.
#[test]
fn templates_lists_the_judge_prompts() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::bin::tstlab(home.path()).args(["templates", "list"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for p in PaperPrompt::ALL {
        assert!(text.lines().any(|l| l.starts_with(p.name()) && l.contains("judge") && l.contains(p.source())), "{} not listed:\n{text}", p.name());
    }
    assert!(text.contains("score --metrics judge-lai2023-multi-content,judge-lai2023-multi-style,judge-lai2023-multi-fluency"), "{text}");
    let out = crate::bin::tstlab(home.path()).args(["templates", "show", "lai2023-style"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("# lai2023-style (judge prompt: Lai, Toral, Nissim (2023), Figure 2"), "{text}");
    assert!(text.contains("score the {target_style} strength of each output") && text.trim_end().ends_with("{outputs}"), "{text}");
}
