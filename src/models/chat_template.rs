//! Chat templates: a model's own Jinja `chat_template` rendered as Hugging Face transformers
//! renders it, or the built-in ChatML when the model ships none.
//!
//! The template comes from GGUF metadata (`tokenizer.chat_template`) or a Hugging Face folder
//! (`chat_template.jinja`, else `chat_template` in `tokenizer_config.json`). It is rendered with
//! minijinja set up as transformers' `apply_chat_template` sets up Jinja2: `trim_blocks` and
//! `lstrip_blocks`, loop controls, `raise_exception(msg)`, Python string and dict methods
//! (`.strip()`, `.startswith()`, `.items()`, minijinja-contrib's pycompat), and the variables
//! `messages`, `add_generation_prompt`, `bos_token` and `eos_token`. `strftime_now` is not
//! defined, so templates that print today's date use their own fixed fallback and a prompt does
//! not change from one day to the next. A model without a template gets ChatML
//! (`<|im_start|>{role}\n{content}<|im_end|>\n` per message, `<|im_start|>assistant\n` to open
//! the reply), except GPT-2, which gets none ([`ChatTemplate::none`]: chat prompts are refused,
//! text prompts only). [`ChatTemplate::label`] says which was used; it goes into model info, run
//! manifests and metric configurations.

use minijinja::value::Serde;
use minijinja::{Environment, Error, ErrorKind, context};
use serde::{Deserialize, Serialize};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: &str, content: &str) -> ChatMessage {
        ChatMessage { role: role.to_owned(), content: content.to_owned() }
    }
    pub fn user(content: &str) -> ChatMessage {
        ChatMessage::new("user", content)
    }
    pub fn system(content: &str) -> ChatMessage {
        ChatMessage::new("system", content)
    }
}

/// The built-in template, for models without their own.
const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// The name of the one template in a [`ChatTemplate`]'s environment.
const NAME: &str = "chat_template";

/// A chat template that cannot be used; `origin` names the file and where in it.
#[derive(Debug, thiserror::Error)]
pub enum ChatTemplateError {
    #[error("{origin}: the chat template does not compile: {detail}")]
    Compile { origin: String, detail: String },
    #[error("{origin}: the chat template failed to render: {detail}")]
    Render { origin: String, detail: String },
    #[error("{origin}: {detail}")]
    Invalid { origin: String, detail: String },
    #[error("chat template: {0}; a chat prompt needs one (use a prompt template with `format: text`)")]
    Missing(String),
}

/// Where a template was read from, for labels and errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// Short name in the label: `GGUF`, `tokenizer_config.json`, `chat_template.jinja`.
    pub kind: String,
    /// The file and key, for errors.
    pub place: String,
}

/// How chat messages become a prompt.
pub struct ChatTemplate {
    env: Environment<'static>,
    /// The template text.
    source: String,
    origin: Option<Origin>,
    bos_token: String,
    eos_token: String,
    label: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("label", &self.label).field("origin", &self.origin).finish_non_exhaustive()
    }
}

fn raise_exception(message: String) -> Result<String, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, format!("the template raised an exception: {message}")))
}

fn environment(source: &str) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_syntax(minijinja::syntax::SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build()?);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function("raise_exception", raise_exception);
    env.add_template_owned(NAME, source.to_owned())?;
    Ok(env)
}

impl ChatTemplate {
    /// The built-in ChatML template; `why` says why the model's own is not used.
    pub fn builtin(why: &str) -> ChatTemplate {
        let env = environment(CHATML).unwrap_or_else(|e| unreachable!("the built-in ChatML template compiles: {e}"));
        ChatTemplate {
            env,
            source: CHATML.to_owned(),
            origin: None,
            bos_token: String::new(),
            eos_token: String::new(),
            label: format!("built-in ChatML ({why})"),
        }
    }

    /// No template: rendering fails with [`ChatTemplateError::Missing`]; `why` is the label's
    /// reason (`none (GPT-2 has no chat template)`).
    pub fn none(why: &str) -> ChatTemplate {
        ChatTemplate {
            env: Environment::new(),
            source: String::new(),
            origin: None,
            bos_token: String::new(),
            eos_token: String::new(),
            label: format!("none ({why})"),
        }
    }

    /// A model's own template with its BOS and EOS token texts.
    ///
    /// Labelled `ChatML from the {origin} chat template` when it renders conversations exactly as
    /// ChatML does (a default system message it adds included, as SmolLM2's does), otherwise
    /// `Jinja from the {origin} chat template`.
    pub fn from_jinja(source: &str, origin: Origin, bos_token: &str, eos_token: &str) -> Result<ChatTemplate, ChatTemplateError> {
        let env = environment(source)
            .map_err(|e| ChatTemplateError::Compile { origin: origin.place.clone(), detail: detail(&e) })?;
        let mut t = ChatTemplate {
            env,
            source: source.to_owned(),
            origin: Some(origin.clone()),
            bos_token: bos_token.to_owned(),
            eos_token: eos_token.to_owned(),
            label: String::new(),
        };
        // A template that cannot render one user turn cannot prompt at all: say so at load time.
        t.render(&[ChatMessage::user("Hello")], true)?;
        let shape = if t.renders_as_chatml() { "ChatML" } else { "Jinja" };
        t.label = format!("{shape} from the {} chat template", origin.kind);
        Ok(t)
    }

    /// Whether conversations with and without a system message render as ChatML does, up to a
    /// default system message the template adds when there is none.
    fn renders_as_chatml(&self) -> bool {
        let chatml = ChatTemplate::builtin("");
        let (sys, user) = (ChatMessage::system("Be brief."), ChatMessage::user("Hello"));
        let same = |m: &[ChatMessage]| match (self.render(m, true), chatml.render(m, true)) {
            (Ok(a), Ok(b)) => Some((a, b)),
            _ => None,
        };
        let Some((with_sys, want)) = same(&[sys, user.clone()]) else { return false };
        if with_sys != want {
            return false;
        }
        let Some((alone, want)) = same(&[user]) else { return false };
        match alone.strip_suffix(want.as_str()) {
            Some("") => true,
            Some(prefix) => prefix
                .strip_prefix("<|im_start|>system\n")
                .and_then(|p| p.strip_suffix("<|im_end|>\n"))
                .is_some_and(|p| !p.contains("<|im_start|>") && !p.contains("<|im_end|>")),
            None => false,
        }
    }

    /// Renders messages; `add_generation_prompt` opens the assistant's turn.
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> Result<String, ChatTemplateError> {
        if self.source.is_empty() {
            return Err(ChatTemplateError::Missing(self.label.clone()));
        }
        let origin = || self.origin.as_ref().map_or_else(|| "built-in ChatML".to_owned(), |o| o.place.clone());
        let template = self.env.get_template(NAME).map_err(|e| ChatTemplateError::Render { origin: origin(), detail: detail(&e) })?;
        template
            .render(context! {
                messages => Serde(messages),
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos_token.as_str(),
                eos_token => self.eos_token.as_str(),
            })
            .map_err(|e| ChatTemplateError::Render { origin: origin(), detail: detail(&e) })
    }

    /// Which template is used and where it came from.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The template text (the built-in ChatML one when the model has none; empty for
    /// [`ChatTemplate::none`]).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Where the model's own template was read; `None` for the built-in one and for none.
    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_ref()
    }
}

/// A minijinja error with its line, without the debug dump.
fn detail(e: &Error) -> String {
    let mut s = e.kind().to_string();
    if let Some(d) = e.detail() {
        s = format!("{s}: {d}");
    }
    if let Some(line) = e.line() {
        s.push_str(&format!(" (line {line})"));
    }
    s
}

#[cfg(test)]
mod tests {
    //! Real public templates, copied verbatim, with the renderings their references expect.
    use super::*;

    fn origin() -> Origin {
        Origin { kind: "test".into(), place: "test template".into() }
    }

    /// The conversation of llama.cpp's `tests/test-chat-template.cpp`.
    fn llama_cpp_conversation() -> Vec<ChatMessage> {
        vec![
            ChatMessage::system("You are a helpful assistant"),
            ChatMessage::user("Hello"),
            ChatMessage::new("assistant", "Hi there"),
            ChatMessage::user("Who are you"),
            ChatMessage::new("assistant", "   I am an assistant   "),
            ChatMessage::user("Another question"),
        ]
    }

    /// teknium/OpenHermes-2.5-Mistral-7B (plain ChatML), llama.cpp's expected output; the
    /// built-in template renders the same.
    #[test]
    fn openhermes_chatml_matches_llama_cpp_and_the_builtin() {
        let src = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
        let want = "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n";
        let t = ChatTemplate::from_jinja(src, origin(), "", "").unwrap();
        assert_eq!(t.label(), "ChatML from the test chat template");
        assert_eq!(t.render(&llama_cpp_conversation(), true).unwrap(), want);
        let b = ChatTemplate::builtin("no chat template in test");
        assert_eq!(b.render(&llama_cpp_conversation(), true).unwrap(), want);
        assert_eq!(b.label(), "built-in ChatML (no chat template in test)");
    }

    /// Meta-Llama-3-8B-Instruct's original template (`| trim` binds to the content only), with
    /// llama.cpp's expected output (bos_token "").
    #[test]
    fn llama3_instruct_matches_llama_cpp() {
        let src = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}";
        let want = "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
        let t = ChatTemplate::from_jinja(src, origin(), "", "").unwrap();
        assert_eq!(t.label(), "Jinja from the test chat template");
        assert_eq!(t.render(&llama_cpp_conversation(), true).unwrap(), want);
        // With the model's BOS text, as tstlab passes it: the first turn starts with it.
        let t = ChatTemplate::from_jinja(src, origin(), "<|begin_of_text|>", "<|eot_id|>").unwrap();
        assert!(t.render(&[ChatMessage::user("Hi")], true).unwrap().starts_with("<|begin_of_text|><|start_header_id|>user"));
    }

    /// Mistral-7B-Instruct-v0.2's mistralai "v1" template (whitespace control, an optional system
    /// message, `raise_exception`), with llama.cpp's expected output (bos "", eos "</s>").
    const MISTRAL_V1: &str = "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- else %}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n    {%- endif %}\n{%- endfor %}\n";

    #[test]
    fn mistral_v1_matches_llama_cpp_and_raises_typed_errors() {
        let t = ChatTemplate::from_jinja(MISTRAL_V1, origin(), "", "</s>").unwrap();
        assert_eq!(t.label(), "Jinja from the test chat template");
        assert_eq!(
            t.render(&llama_cpp_conversation(), true).unwrap(),
            " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"
        );
        let e = t.render(&[ChatMessage::user("a"), ChatMessage::user("b")], true).unwrap_err();
        assert!(matches!(e, ChatTemplateError::Render { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.starts_with("test template: the chat template failed to render"), "{msg}");
        assert!(msg.contains("conversation roles must alternate user/assistant/user/assistant/..."), "{msg}");
    }

    /// HuggingFaceH4/zephyr-7b-beta's template relies on `trim_blocks` and `lstrip_blocks`;
    /// expected output from huggingface/swift-jinja's chat template tests (as in transformers'
    /// chat templating guide).
    #[test]
    fn zephyr_beta_trims_blocks_as_transformers_does() {
        let src = "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";
        let t = ChatTemplate::from_jinja(src, origin(), "<s>", "</s>").unwrap();
        let m = [
            ChatMessage::system("You are a friendly chatbot who always responds in the style of a pirate"),
            ChatMessage::user("How many helicopters can a human eat in one sitting?"),
        ];
        assert_eq!(
            t.render(&m, true).unwrap(),
            "<|system|>\nYou are a friendly chatbot who always responds in the style of a pirate</s>\n<|user|>\nHow many helicopters can a human eat in one sitting?</s>\n<|assistant|>\n"
        );
    }

    /// Python string methods through pycompat (vigogne-2-70b-chat's `.strip()`, llama.cpp's
    /// expected output).
    #[test]
    fn python_string_methods_work() {
        let src = "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif true == true and not '<<SYS>>' in messages[0]['content'] %}{% set loop_messages = messages %}{% set system_message = 'Vous êtes Vigogne, un assistant IA créé par Zaion Lab. Vous suivez extrêmement bien les instructions. Aidez autant que vous le pouvez.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";
        let t = ChatTemplate::from_jinja(src, origin(), "", "</s>").unwrap();
        assert_eq!(
            t.render(&llama_cpp_conversation(), true).unwrap(),
            "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s>[INST] Who are you [/INST] I am an assistant </s>[INST] Another question [/INST]"
        );
    }

    #[test]
    fn broken_templates_are_named_errors() {
        let e = ChatTemplate::from_jinja("{% for m in messages %}", origin(), "", "").unwrap_err();
        assert!(matches!(e, ChatTemplateError::Compile { .. }), "{e:?}");
        assert!(e.to_string().starts_with("test template: the chat template does not compile"), "{e}");
        // A template that raises even for one user turn fails at load.
        let e = ChatTemplate::from_jinja("{{ raise_exception('no') }}", origin(), "", "").unwrap_err();
        assert!(e.to_string().contains("the template raised an exception: no"), "{e}");
    }
}
