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

#[test]
fn structured_replies_and_what_is_sent() {
    let p = parse_json_reply(r#"{ "score": 85, "explanation": "keeps the meaning" }"#);
    assert_eq!((p.score, p.explanation.as_deref()), (Some(85.0), Some("keeps the meaning")));
    assert_eq!(parse_json_reply("```json\n{\"score\": 0, \"explanation\": \"\"}\n```").score, Some(0.0));
    // Out of range, not a number, free text: no score (never read as free text).
    assert_eq!(parse_json_reply(r#"{"score": 101, "explanation": "x"}"#).score, None);
    assert_eq!(parse_json_reply(r#"{"score": "85", "explanation": "x"}"#).score, None);
    assert_eq!(parse_json_reply("Output 1 Score: 85").score, None);
    // Cut short at the token limit after the score: the score stands.
    assert_eq!(parse_json_reply("{ \"score\" : 70 , \"explanation\": \"The output keeps the mea").score, Some(70.0));
    assert_eq!(parse_json_reply("{\"score\": 7").score, None);
    assert_eq!(parse_json_reply("{\"score\": 170, \"expl").score, None);
    assert_eq!(JudgeFormat::Text.parse_reply("Output 1 Score: 85").score, Some(85.0));
    assert_eq!(JudgeFormat::JsonObject.parse_reply(r#"{"score": 40, "explanation": "x"}"#).score, Some(40.0));

    assert_eq!(JudgeFormat::Text.response_format(), None);
    let schema = JudgeFormat::schema();
    assert_eq!(schema["properties"]["score"], json!({"type": "integer", "minimum": 0, "maximum": 100}));
    assert_eq!(schema["required"], json!(["score", "explanation"]));
    let sent = JudgeFormat::Json.response_format().unwrap();
    let j: Value = serde_json::from_str(&sent).unwrap();
    assert_eq!((j["type"].as_str(), j["json_schema"]["strict"].as_bool()), (Some("json_schema"), Some(true)));
    assert_eq!(j["json_schema"]["schema"], schema);
    // The score is asked for first (a grammar follows the order of the properties).
    assert!(sent.find("\"score\"").unwrap() < sent.find("\"explanation\"").unwrap(), "{sent}");
    let o: Value = serde_json::from_str(&JudgeFormat::JsonObject.response_format().unwrap()).unwrap();
    assert_eq!((o["type"].as_str(), &o["schema"]), (Some("json_object"), &schema));
    for name in JudgeFormat::NAMES {
        assert_eq!(JudgeFormat::parse(name).unwrap().name(), name);
    }
}
