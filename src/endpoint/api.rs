//! The OpenAI API's JSON, as much of it as tstlab sends and reads: chat completions,
//! completions (with `echo` and `logprobs` for perplexity), the model list, error bodies.
//! Fields servers leave out are optional; unknown fields are ignored.

use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize)]
pub struct Message<'a> {
    pub role: &'a str,
    pub content: &'a str,
}

/// `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: Vec<Message<'a>>,
    pub max_tokens: usize,
    pub temperature: f64,
    pub top_p: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub n: u32,
    pub stream: bool,
    /// Structured output (`{"type": "json_schema", ..}` or `{"type": "json_object", ..}`), sent
    /// as written: servers that turn a schema into a grammar keep its order of properties.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Box<serde_json::value::RawValue>>,
}

/// `POST /completions`.
#[derive(Debug, Serialize)]
pub struct CompletionRequest<'a> {
    pub model: &'a str,
    pub prompt: &'a str,
    pub max_tokens: usize,
    pub temperature: f64,
    pub top_p: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub echo: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<u32>,
    pub n: u32,
    pub stream: bool,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: usize,
    #[serde(default)]
    pub completion_tokens: usize,
}

#[derive(Debug, Deserialize)]
pub struct ChatResponse {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub choices: Vec<ChatChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// An error some servers send with HTTP 200 (`{"error": {"message": ..}}`).
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub struct ChatChoice {
    pub message: ChatReply,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ChatReply {
    #[serde(default)]
    pub content: Option<String>,
    /// The model's refusal (OpenAI), in place of `content`.
    #[serde(default)]
    pub refusal: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct CompletionResponse {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// See [`ChatResponse::error`].
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub struct CompletionChoice {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub finish_reason: Option<String>,
    #[serde(default)]
    pub logprobs: Option<Logprobs>,
}

/// The legacy completions `logprobs` object: one entry per token (prompt tokens too with `echo`).
#[derive(Debug, Deserialize)]
pub struct Logprobs {
    #[serde(default)]
    pub tokens: Vec<String>,
    #[serde(default)]
    pub token_logprobs: Vec<Option<f64>>,
}

/// `GET /models`.
#[derive(Debug, Deserialize)]
pub struct ModelList {
    #[serde(default)]
    pub data: Vec<ModelEntry>,
}

#[derive(Debug, Deserialize)]
pub struct ModelEntry {
    pub id: String,
}

/// The message of an error body: `{"error": {"message": ..}}` (OpenAI, vLLM, llama.cpp),
/// `{"error": ".."}` (Ollama), `{"detail": ..}` (FastAPI servers), `{"message": ..}`; else the
/// body as it is.
/// Why an answer has no choices: the server's own error message when it sent one.
pub fn no_choices(error: Option<&serde_json::Value>) -> String {
    match error {
        Some(e) => format!("the server answered with an error: {}", error_message(&serde_json::json!({ "error": e }).to_string())),
        None => "an answer without choices".into(),
    }
}

pub fn error_message(body: &str) -> String {
    let v: serde_json::Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => return body.trim().to_owned(),
    };
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    };
    v.pointer("/error/message")
        .and_then(text)
        .or_else(|| v.get("error").filter(|e| e.is_string()).and_then(text))
        .or_else(|| v.get("detail").and_then(text))
        .or_else(|| v.get("message").and_then(text))
        .unwrap_or_else(|| body.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_of_the_usual_servers() {
        assert_eq!(error_message(r#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#), "Incorrect API key");
        assert_eq!(error_message(r#"{"error":"model 'x' not found"}"#), "model 'x' not found");
        assert_eq!(error_message(r#"{"detail":"Invalid API Key"}"#), "Invalid API Key");
        assert_eq!(error_message("Bad Gateway\n"), "Bad Gateway");
    }

    #[test]
    fn a_chat_answer_with_missing_fields_reads() {
        let r: ChatResponse = serde_json::from_str(r#"{"choices":[{"message":{"role":"assistant","content":"hi"}}]}"#).unwrap();
        assert_eq!(r.choices[0].message.content.as_deref(), Some("hi"));
        assert!(r.usage.is_none() && r.model.is_none());
    }
}
