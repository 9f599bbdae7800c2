use super::*;

/// Figure 1 of Lai et al. (2023) as the paper prints it, then its input layout with two outputs.
#[test]
fn lai_content_renders_word_for_word() {
    let p = render_item(PaperPrompt::Lai2023(Aspect::Content), "informal", "formal", "gotta go {output}", &["I must leave.", "I have to go {source}."]).unwrap();
    let want = "For the task of informal-to-formal style transfer, score the content preservation of each output with respect to the source sentence on a scale of 0 to 100, with 100 being complete preservation of the original meaning, and 0 being completely incorrect or altered meaning. The evaluation format is as follows:\n\nOutput 1\nScore:\nExplanation:\n---------------------\nSource text: gotta go {output}\nOutput 1: I must leave.\nOutput 2: I have to go {source}.";
    assert_eq!(p, want);
}

#[test]
fn lai_style_words_follow_the_direction() {
    let p = render_item(PaperPrompt::Lai2023(Aspect::Style), "Formal", "INFORMAL", "I must leave.", &["gotta go"]).unwrap();
    let want = "For the task of formal-to-informal style transfer, score the informal strength of each output on a scale of 0 to 100, with 100 being a perfect representation of informal writing style and 0 being formal or not adhering to informal writing style. The evaluation format is as follows:\n\nOutput 1\nScore:\nExplanation:\n---------------------\nSource text: I must leave.\nOutput 1: gotta go";
    assert_eq!(p, want);
    let p = render_item(PaperPrompt::Lai2023(Aspect::Fluency), "informal", "formal", "s", &["o"]).unwrap();
    assert!(p.starts_with("For the task of informal-to-formal style transfer, score the fluency of each output with respect to the source sentence on a scale of 0-100 in the following format, with 100 being extremely fluent and 0 being extremely difficult to read or understand. The evaluation format is as follows:\n\nOutput 1\nScore:\nExplanation:\n---------------------\n"), "{p}");
    let e = render_item(PaperPrompt::Lai2023Multi, "negative", "positive", "s", &["o"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "lai2023-multi is the prompt of Lai et al. (2023) for formality transfer: the direction negative->positive has styles that are not formal/informal"
    );
}

#[test]
fn lai_multi_renders_word_for_word() {
    let p = render_item(PaperPrompt::Lai2023Multi, "formal", "informal", "I must leave.", &["gotta go", "I go"]).unwrap();
    let want = "We are conducting research on the use of English, especially on formality. We would like you to evaluate the sentences given, specific instructions for evaluation are provided in the following:\n\nThis task consists of judging sentence changes. To this aim, you will be shown different changes in a given sentence. The changes are related to style: from informal to formal or from formal to informal. We call these changes transformations.\n\nYou are asked to judge to what extent the transformations are successful by assessing the content (The content of the transformed sentence is the same as the source sentence.), the style (The transformed sentence fits the target style.), and the fluency (Considering the target style, the transformed sentence could have been written by a native speaker.) of the new sentence. You will see an original sentence and various possible transformations. For each transformation, you will have to use a continuous scale score from 0 to 100 to indicate how much you agree with each statement. The higher score you give, the higher your level of agreement. The evaluation format is as follows:\n\nOutput 1\nContent:\nStyle:\nFluency:\nExplanation:\n---------------------\nSource text: I must leave.\nOutput 1: gotta go\nOutput 2: I go";
    assert_eq!(p, want);
}

#[test]
fn lmstyle_judge_renders_word_for_word() {
    let p = render_dialogue("Do you have any hobbies ?", "Indeed, I collect stamps.");
    let want = "Given a turn of dialogue, score the appropriateness of the Response with respect to the Speaker on a scale of 0-100 in the following format, with 100 being extremely appropriate and 0 being extremely inaccurate or unreasonable. The evaluation format is as follows:\n\nSpeaker: Do you have any hobbies ?\n\nResponse: Indeed, I collect stamps.\n\nAppropriateness Score:";
    assert_eq!(p, want);
}

#[test]
fn metric_names() {
    let names: Vec<String> = PaperMetric::all().map(|m| m.metric()).collect();
    assert_eq!(
        names,
        [
            "judge-lai2023-content",
            "judge-lai2023-style",
            "judge-lai2023-fluency",
            "judge-lai2023-multi-content",
            "judge-lai2023-multi-style",
            "judge-lai2023-multi-fluency",
            "judge-lmstyle-app"
        ]
    );
    for n in &names {
        assert_eq!(PaperMetric::parse(n).unwrap().metric(), *n);
    }
    for p in PaperPrompt::ALL {
        assert_eq!(PaperPrompt::by_name(p.name()), Some(p));
    }
}

fn scores(reply: &str, n: usize) -> Vec<Option<f64>> {
    parse_outputs(reply, n, &["score"], false).into_iter().map(|o| o.values[0]).collect()
}

/// Replies in the paper's evaluation format and the ways chat models bend it.
#[test]
fn multi_output_replies() {
    let reply = "Output 1\nScore: 85\nExplanation: Keeps the meaning.\n\nOutput 2\nScore: 40\nExplanation: Drops \"ur\".\nOutput 3\nScore: 100\nExplanation: Same meaning.";
    assert_eq!(scores(reply, 3), [Some(85.0), Some(40.0), Some(100.0)]);
    let p = parse_outputs(reply, 3, &["score"], false);
    assert_eq!(p[1].explanation.as_deref(), Some("Drops \"ur\"."));
    // Markdown, the score on the header's line, /100, out of order, a preamble.
    let reply = "Here are my scores:\n\n**Output 2:** Score: 70/100\nExplanation: fine\n\n**Output 1**\n**Score:** 90\n**Explanation:** good";
    assert_eq!(scores(reply, 2), [Some(90.0), Some(70.0)]);
    assert_eq!(parse_outputs(reply, 2, &["score"], false)[0].explanation.as_deref(), Some("good"));
    // The number on the line after the label; decimals; "out of 100"; a percent.
    assert_eq!(scores("Output 1\nScore:\n75\nOutput 2\nScore: 72.5\nOutput 3 Score: 60 out of 100\nOutput 4\nScore: 55%", 4), [Some(75.0), Some(72.5), Some(60.0), Some(55.0)]);
    // The model echoes each output before scoring it.
    assert_eq!(scores("Output 1: I must leave.\nScore: 95\n\nOutput 2: gotta go\nScore: 10", 2), [Some(95.0), Some(10.0)]);
    // A missing number, another scale, out of range, a missing output, an extra one.
    let reply = "Output 1\nScore: N/A\nExplanation: cannot judge\nOutput 2\nScore: 8/10\nOutput 3\nScore: 150\nOutput 5\nScore: 90";
    assert_eq!(scores(reply, 4), [None, None, None, None]);
    // A repeated header without a score does not hide the first one's.
    assert_eq!(scores("Output 1\nScore: 30\nOutput 1 is worse than the source.", 1), [Some(30.0)]);
    // One output: the reply without a header answers it; with several, nothing is guessed.
    assert_eq!(scores("Score: 65\nExplanation: ok", 1), [Some(65.0)]);
    assert_eq!(scores("Score: 65\nExplanation: ok", 2), [None, None]);
    assert_eq!(scores("I cannot evaluate these outputs.", 2), [None, None]);
    assert_eq!(scores("", 1), [None]);
    // Words that start like a header are not one.
    assert_eq!(scores("Outputs 1 and 2 are close.\nOutput 1\nScore: 50\nOutput 2\nScore: 51", 2), [Some(50.0), Some(51.0)]);
}

#[test]
fn figure_4_replies() {
    let fields = PaperPrompt::Lai2023Multi.fields();
    let reply = "Output 1\nContent: 90\nStyle: 75\nFluency: 80\nExplanation: formal enough.\n\nOutput 2\nContent preservation: 60\nStyle strength: 101\nFluency:\nExplanation: the style score is missing";
    let p = parse_outputs(reply, 2, fields, false);
    assert_eq!(p[0].values, [Some(90.0), Some(75.0), Some(80.0)]);
    assert_eq!(p[0].explanation.as_deref(), Some("formal enough."));
    // Out of range, and an empty slot followed by the explanation, give none.
    assert_eq!(p[1].values, [Some(60.0), None, None]);
}

#[test]
fn lmstyle_replies() {
    let fields = PaperPrompt::LmstyleAppropriateness.fields();
    let one = |r: &str| parse_outputs(r, 1, fields, true)[0].values[0];
    assert_eq!(one(" 85"), Some(85.0));
    assert_eq!(one("85\nThe response answers the question."), Some(85.0));
    assert_eq!(one("Appropriateness Score: 70\nIt is polite."), Some(70.0));
    assert_eq!(one("**Appropriateness Score:** 40/100"), Some(40.0));
    assert_eq!(one("The response is appropriate."), None);
    assert_eq!(one("Appropriateness Score: 8/10"), None);
    assert_eq!(one("120"), None);
}

#[test]
fn styles_are_checked_before_anything_is_asked() {
    let t = |s: &str, u: &str| Target {
        output_id: 1,
        item_id: 1,
        direction_id: 1,
        source_style: s.into(),
        target_style: u.into(),
        system: "a".into(),
        source: "x".into(),
        references: vec![],
        text: "y".into(),
    };
    assert!(check_styles(PaperPrompt::Lai2023(Aspect::Content), &[t("informal", "formal"), t("Formal", "Informal")]).is_ok());
    let e = check_styles(PaperPrompt::Lai2023(Aspect::Content), &[t("informal", "formal"), t("negative", "positive")]).unwrap_err();
    assert_eq!((e.from.as_str(), e.to.as_str()), ("negative", "positive"));
    assert!(check_styles(PaperPrompt::LmstyleAppropriateness, &[t("negative", "positive")]).is_ok());
}
