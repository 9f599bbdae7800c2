//! Outputs that name a model or speak as an assistant ("As an AI", "ChatGPT", "language
//! model", ...) are flagged on the annotate screen: they leak which kind of system wrote them.
//! Matching is case-insensitive on substrings; the list is `MODEL_PATTERNS`.

/// Substrings (lower case) that flag an output.
pub const MODEL_PATTERNS: &[&str] = &[
    "as an ai",
    "an ai language",
    "language model",
    "chatgpt",
    "gpt-3",
    "gpt-4",
    "gpt3",
    "gpt4",
    "openai",
    "llama",
    "claude",
    "gemini",
    "as an assistant",
    "i'm sorry, but i",
    "i am sorry, but i",
    "i cannot fulfill",
    "here is the rewritten",
    "here's the rewritten",
];

/// The first pattern `text` contains, if any.
pub fn names_a_model(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    MODEL_PATTERNS.iter().copied().find(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    #[test]
    fn flags_model_talk_only() {
        assert_eq!(super::names_a_model("As an AI, I cannot say."), Some("as an ai"));
        assert_eq!(super::names_a_model("Sure! ChatGPT says: great food"), Some("chatgpt"));
        assert_eq!(super::names_a_model("the food was great ."), None);
    }
}
