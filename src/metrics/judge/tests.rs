use super::*;

fn score(reply: &str) -> Option<f64> {
    parse_reply(reply).score
}

#[test]
fn scores_in_realistic_replies() {
    let cases: &[(&str, Option<f64>)] = &[
        ("Output 1 Score: 85\nExplanation: The output keeps the meaning but flips the sentiment.", Some(85.0)),
        ("Score: 70/100. The meaning is mostly preserved.", Some(70.0)),
        ("**85**\n\nThe output reads naturally.", Some(85.0)),
        ("I would rate this output 60 out of 100 because it changes the topic.", Some(60.0)),
        ("Output 1 Score: 8/10\nExplanation: good", Some(80.0)),
        ("Score: 4/5", Some(80.0)),
        ("The output is a good transfer. I'd give it 90%.", Some(90.0)),
        ("On a scale of 0 to 100, the score for Output 1 is 75.", Some(75.0)),
        ("Output 1: the food was great. Score: 90", Some(90.0)),
        ("1. The output is positive.\n2. It keeps the meaning.\nScore: 95", Some(95.0)),
        ("**Output 1 Score:** 40\n**Explanation:** The output drops the second clause.", Some(40.0)),
        ("Output 1 Score: 100\nExplanation: perfect", Some(100.0)),
        ("Output 1 Score: 72.5", Some(72.5)),
        ("Output 1 Score: 85 (out of 100)\nExplanation: fine", Some(85.0)),
        ("Rating: 55 - the style is only partly formal.", Some(55.0)),
        ("The output scores 30, since it is still negative.", Some(30.0)),
        ("Sure! 65", Some(65.0)),
        ("Output 1 Score: 0\nExplanation: The meaning is completely altered.", Some(0.0)),
        // No score: the slot left empty, a refusal, numbers that are not scores.
        ("Output 1 Score:\nExplanation: The output does not preserve the meaning.", None),
        ("I cannot evaluate this output.", None),
        ("There are 3 problems with it and 2 typos.", None),
        ("Score: 150", None),
        ("On a scale from 0 to 100.", None),
        ("", None),
    ];
    for (reply, want) in cases {
        assert_eq!(score(reply), *want, "reply: {reply:?}");
    }
}

#[test]
fn explanations() {
    let p = parse_reply("Output 1 Score: 85\nExplanation: The output keeps the meaning.");
    assert_eq!(p.explanation.as_deref(), Some("The output keeps the meaning."));
    let p = parse_reply("**Explanation:** short.\n**Score:** 20");
    assert_eq!((p.score, p.explanation.as_deref()), (Some(20.0), Some("short.\n**Score:** 20")));
    // Without an "Explanation:" label the whole reply is kept.
    assert_eq!(parse_reply("  Good output, 90/100. ").explanation.as_deref(), Some("Good output, 90/100."));
    assert_eq!(parse_reply("Output 1 Score: 50\nExplanation:").explanation, None);
}

fn target(source: &str, text: &str) -> Target {
    Target {
        output_id: 1,
        item_id: 1,
        direction_id: 1,
        source_style: "informal".into(),
        target_style: "formal".into(),
        system: "s".into(),
        source: source.into(),
        references: vec![],
        text: text.into(),
    }
}

#[test]
fn templates_render_in_one_pass() {
    let t = target("gotta go {output}", "I must leave.");
    let p = render(Dimension::Content.template(), &t);
    // The docs/METHODS.md prompt (LLM judge), word for word, with the task filled in.
    assert!(p.starts_with(
        "For the task of informal-to-formal style transfer, score the content preservation of each output with respect to the source sentence on a scale of 0 to 100, with 100 being complete preservation of the original meaning, and 0 being completely incorrect or altered meaning."
    ));
    assert!(p.contains("Source sentence: gotta go {output}\nOutput 1: I must leave.\n"), "{p}");
    assert!(p.ends_with("Output 1 Score:\nExplanation:\n"));
    for d in Dimension::ALL {
        let p = render(d.template(), &t);
        assert!(!p.contains("{task}") && !p.contains("{target_style}"), "{}: {p}", d.name());
        assert!(p.contains("I must leave."));
        assert_eq!(Dimension::parse(&d.metric()), Some(d));
    }
    assert_eq!(render("{a} {task}", &t), "{a} informal-to-formal");
}
