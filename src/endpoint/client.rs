//! The client of one OpenAI-compatible server: one request with its retries ([`Client::call`]),
//! chat and text completions for many prompts with at most `concurrency` requests in flight
//! ([`Client::generate`]), prompt log-probabilities ([`Client::prompt_logprobs`]), the model list.
//!
//! Answers are handed to the caller's thread as they arrive (in any order), so the caller can
//! commit each one at once. A 401/403/404, a model the server does not serve, or a server without
//! prompt log-probabilities stops everything ([`EndpointError::is_fatal`]); a request the server
//! rejects (400, 413, 422, ...) or one that still fails after every retry fails that item only.

use super::api::{self, ChatRequest, ChatResponse, CompletionRequest, CompletionResponse, Message, ModelList};
use super::key::{self, ApiKey};
use super::retry::{self, Backoff, Status};
use super::{EndpointError, Result};
use crate::models::{GenParams, Generated, Prompt, StopReason};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime};

/// Where and how to send requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The API's base address (`http://127.0.0.1:8000/v1`); an address without a path gets `/v1`.
    pub url: String,
    /// The model name the server knows.
    pub model: String,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Per-request timeout (connect, send, answer).
    pub timeout: Duration,
    pub backoff: Backoff,
}

impl Settings {
    pub fn new(url: &str, model: &str) -> Settings {
        Settings { url: url.to_owned(), model: model.to_owned(), concurrency: 4, timeout: Duration::from_secs(120), backoff: Backoff::default() }
    }

    /// Whether a client can be made of these settings: an address ([`check_url`]), a model
    /// name, a concurrency of at least 1.
    pub fn check(&self) -> Result<()> {
        if self.concurrency == 0 {
            return Err(EndpointError::Settings("concurrency must be at least 1".into()));
        }
        if self.model.trim().is_empty() {
            return Err(EndpointError::Settings("an endpoint needs a model name (--model NAME)".into()));
        }
        check_url(&self.url)
    }
}

impl Default for Settings {
    /// No address nor model yet; the usual concurrency, timeout and retries.
    fn default() -> Settings {
        Settings::new("", "")
    }
}

/// Whether `url` is an API address: `http://` or `https://`, a host, no spaces. The error shows
/// it without credentials.
pub fn check_url(url: &str) -> Result<()> {
    let url = url.trim();
    let shown = key::public_url(url);
    let bad = |why: &str| Err(EndpointError::Settings(format!("{shown:?}: {why}")));
    if url.is_empty() {
        return bad("no address (e.g. http://127.0.0.1:8000/v1)");
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return bad("an endpoint address starts with http:// or https://");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("an address has no spaces");
    }
    match url.parse::<ureq::http::Uri>() {
        Ok(u) if u.host().is_some_and(|h| !h.is_empty()) => Ok(()),
        Ok(_) => bad("an address needs a host (http://HOST:PORT/v1)"),
        Err(e) => bad(&format!("not an address ({e})")),
    }
}

/// Counts of what was sent, shared by the workers.
#[derive(Debug, Default)]
struct Counters {
    requests: AtomicUsize,
    retries: AtomicUsize,
    prompt_tokens: AtomicUsize,
    completion_tokens: AtomicUsize,
    retry_reasons: Mutex<BTreeMap<String, usize>>,
    served: Mutex<Option<String>>,
}

/// A snapshot of the counters.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Usage {
    /// HTTP requests sent, retries included.
    pub requests: usize,
    pub retries: usize,
    /// Retries by cause: `429`, `5xx`, `timeout`, `connection`, ...
    pub retry_reasons: BTreeMap<String, usize>,
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
}

/// What one [`Client::generate`] call did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenReport {
    pub cancelled: bool,
    /// Items that got an answer, and items that failed (their reply was an error).
    pub answered: usize,
    pub failed: usize,
    pub usage: Usage,
}

/// A prompt's tokens as the server shows them, with ln P of each (`None` for the first).
pub type TokenLogprobs = Vec<(String, Option<f64>)>;

/// One piece of work of [`Client::pool`]: an index and the stop check.
type Work<'a, T> = dyn Fn(usize, &dyn Fn() -> bool) -> Result<T> + Sync + 'a;

/// A client of one server and model.
pub struct Client {
    settings: Settings,
    base: String,
    key: Option<ApiKey>,
    agent: ureq::Agent,
    counters: Counters,
}

/// How an attempt went wrong, when it may be worth another.
struct Transient {
    reason: &'static str,
    detail: String,
    retry_after: Option<Duration>,
}

enum Attempt<T> {
    Done(T),
    Again(Transient),
}

impl Client {
    /// A client with the key from the environment (`TSTLAB_API_KEY`, `OPENAI_API_KEY`), if any.
    pub fn new(settings: Settings) -> Result<Client> {
        Client::with_key(settings, ApiKey::from_env())
    }

    pub fn with_key(settings: Settings, key: Option<ApiKey>) -> Result<Client> {
        settings.check()?;
        let url = settings.url.trim().trim_end_matches('/').to_owned();
        let Some((scheme, rest)) = url.split_once("://").filter(|(s, _)| matches!(*s, "http" | "https")) else {
            return Err(EndpointError::Settings(format!("{}: an endpoint address starts with http:// or https://", key::public_url(&url))));
        };
        let base = if rest.contains('/') { url.clone() } else { format!("{scheme}://{rest}/v1") };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(settings.timeout))
            .max_idle_connections_per_host(settings.concurrency.max(1) * 2)
            .user_agent(concat!("tstlab/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Client { settings, base, key, agent, counters: Counters::default() })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The base address as it may be recorded and shown (no credentials).
    pub fn public_url(&self) -> String {
        key::public_url(&self.base)
    }

    /// Whether a key was found in the environment (never the key).
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The model name the server's answers gave, once one came.
    pub fn served_model(&self) -> Option<String> {
        self.counters.served.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn usage(&self) -> Usage {
        let c = &self.counters;
        Usage {
            requests: c.requests.load(Ordering::Relaxed),
            retries: c.retries.load(Ordering::Relaxed),
            retry_reasons: c.retry_reasons.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            prompt_tokens: c.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: c.completion_tokens.load(Ordering::Relaxed),
        }
    }

    /// A server message made safe to show: the key taken out, control characters made visible,
    /// at most 300 characters.
    fn clean(&self, message: &str) -> String {
        let text = key::redact(message, self.key.as_ref());
        let one = crate::printable::line(&text).into_owned();
        match one.char_indices().nth(300) {
            Some((i, _)) => format!("{}...", &one[..i]),
            None => one,
        }
    }

    /// The models the server lists (`GET /models`); `None` when it has no such route.
    pub fn models(&self, halt: &dyn Fn() -> bool) -> Result<Option<Vec<String>>> {
        match self.call::<ModelList>("models", None, halt) {
            Ok(list) => Ok(Some(list.data.into_iter().map(|m| m.id).collect())),
            Err(EndpointError::Refused { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Checks the server answers and serves the model (when it lists its models): one request.
    pub fn check_model(&self, halt: &dyn Fn() -> bool) -> Result<()> {
        let Some(served) = self.models(halt)? else { return Ok(()) };
        if served.iter().any(|m| m == &self.settings.model) {
            return Ok(());
        }
        Err(EndpointError::NoSuchModel {
            url: self.public_url(),
            model: self.clean(&self.settings.model),
            served: self.clean(&served.join(", ")),
        })
    }

    /// One request (`GET` when `body` is `None`) with retries; see the module docs.
    pub fn call<T: DeserializeOwned>(&self, route: &str, body: Option<&str>, halt: &dyn Fn() -> bool) -> Result<T> {
        let url = format!("{}/{route}", self.base);
        let b = &self.settings.backoff;
        let mut rng = rand::rng();
        let mut attempt = 0;
        loop {
            if halt() {
                return Err(EndpointError::Cancelled);
            }
            self.counters.requests.fetch_add(1, Ordering::Relaxed);
            let t = match self.attempt::<T>(&url, route, body)? {
                Attempt::Done(v) => return Ok(v),
                Attempt::Again(t) => t,
            };
            attempt += 1;
            if attempt > b.retries {
                return Err(EndpointError::GaveUp { url: self.public_url(), route: route.into(), attempts: attempt, last: t.detail });
            }
            if let Some(r) = t.retry_after.filter(|r| *r > b.max_retry_after) {
                return Err(EndpointError::GaveUp {
                    url: self.public_url(),
                    route: route.into(),
                    attempts: attempt,
                    last: format!("{}; the server asks to wait {} s (Retry-After), longer than {} s", t.detail, r.as_secs(), b.max_retry_after.as_secs()),
                });
            }
            self.counters.retries.fetch_add(1, Ordering::Relaxed);
            *self.counters.retry_reasons.lock().unwrap_or_else(|e| e.into_inner()).entry(t.reason.into()).or_default() += 1;
            let until = Instant::now() + b.wait(attempt, t.retry_after, &mut rng);
            while Instant::now() < until {
                if halt() {
                    return Err(EndpointError::Cancelled);
                }
                std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
            }
        }
    }

    fn attempt<T: DeserializeOwned>(&self, url: &str, route: &str, body: Option<&str>) -> Result<Attempt<T>> {
        let sent = match body {
            Some(b) => {
                let mut req = self.agent.post(url);
                if let Some(k) = &self.key {
                    req = req.header("Authorization", &k.bearer());
                }
                // Sent as serialized, so that a `response_format`'s keys keep their order.
                req.header("Content-Type", "application/json").send(b)
            }
            None => {
                let mut req = self.agent.get(url);
                if let Some(k) = &self.key {
                    req = req.header("Authorization", &k.bearer());
                }
                req.call()
            }
        };
        let mut resp = match sent {
            Ok(r) => r,
            Err(e) => return self.transport(e).map(Attempt::Again),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry::parse_retry_after(v, SystemTime::now()));
        match retry::classify(status) {
            Status::Ok => match resp.body_mut().read_to_string() {
                Ok(text) => match serde_json::from_str::<T>(&text) {
                    Ok(v) => Ok(Attempt::Done(v)),
                    Err(e) => Err(EndpointError::BadAnswer { url: self.public_url(), route: route.into(), detail: self.clean(&e.to_string()) }),
                },
                Err(e) => self.transport(e).map(Attempt::Again),
            },
            kind => {
                let text = resp.body_mut().read_to_string().unwrap_or_default();
                let message = self.clean(&api::error_message(&text));
                let url = self.public_url();
                match kind {
                    Status::Retry => Ok(Attempt::Again(Transient {
                        reason: if status == 429 { "429" } else if status == 408 { "408" } else { "5xx" },
                        detail: format!("HTTP {status}: {message}"),
                        retry_after,
                    })),
                    Status::Stop => Err(EndpointError::Refused { url, route: route.into(), status, message }),
                    _ => Err(EndpointError::Rejected { url, route: route.into(), status, message }),
                }
            }
        }
    }

    /// A transport error: worth a retry (timeouts, connection and protocol errors), or not (a
    /// bad address, TLS).
    fn transport(&self, e: ureq::Error) -> Result<Transient> {
        let detail = self.clean(&e.to_string());
        let reason = match &e {
            ureq::Error::Timeout(_) => "timeout",
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => "timeout",
            ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::Protocol(_) | ureq::Error::HostNotFound => "connection",
            _ => return Err(EndpointError::Transport { url: self.public_url(), detail }),
        };
        Ok(Transient { reason, detail, retry_after: None })
    }

    fn note_answer(&self, model: Option<String>, usage: Option<api::Usage>) {
        if let Some(u) = usage {
            self.counters.prompt_tokens.fetch_add(u.prompt_tokens, Ordering::Relaxed);
            self.counters.completion_tokens.fetch_add(u.completion_tokens, Ordering::Relaxed);
        }
        if let Some(m) = model {
            let mut served = self.counters.served.lock().unwrap_or_else(|e| e.into_inner());
            if served.is_none() {
                *served = Some(self.clean(&m));
            }
        }
    }

    /// The seed sent for prompt `i` (sampling only): the run's seed plus the prompt's stream, so
    /// that a sampled answer depends on the item, as locally.
    fn seed(params: &GenParams, i: usize) -> Option<u64> {
        (params.temperature > 0.0).then(|| params.seed.wrapping_add(params.streams.get(i).copied().unwrap_or(i as u64)))
    }

    /// One prompt: chat prompts through `/chat/completions`, text through `/completions`.
    pub fn generate_one(&self, prompt: &Prompt, params: &GenParams, i: usize, halt: &dyn Fn() -> bool) -> Result<Generated> {
        let model = self.settings.model.as_str();
        let (text, finish, usage) = match prompt {
            Prompt::Chat(messages) => {
                let req = ChatRequest {
                    model,
                    messages: messages.iter().map(|m| Message { role: &m.role, content: &m.content }).collect(),
                    max_tokens: params.max_new_tokens,
                    temperature: params.temperature,
                    top_p: params.top_p,
                    seed: Client::seed(params, i),
                    n: 1,
                    stream: false,
                    response_format: params.response_format.clone().map(serde_json::value::RawValue::from_string).transpose()?,
                };
                let r: ChatResponse = self.call("chat/completions", Some(&serde_json::to_string(&req)?), halt)?;
                self.note_answer(r.model, r.usage);
                let c = r.choices.into_iter().next().ok_or_else(|| self.bad("chat/completions", &api::no_choices(r.error.as_ref())))?;
                let text = match (c.message.content, c.message.refusal) {
                    (_, Some(why)) => return Err(self.bad("chat/completions", &format!("the model refused: {why}"))),
                    (Some(t), None) => t,
                    (None, None) => return Err(self.bad("chat/completions", "an answer without content (\"content\": null)")),
                };
                (text, c.finish_reason, r.usage)
            }
            Prompt::Text(_) if params.response_format.is_some() => {
                return Err(EndpointError::Settings("structured output (response_format) needs a chat prompt, not a text completion".into()));
            }
            Prompt::Text(t) => {
                let req = CompletionRequest {
                    model,
                    prompt: t,
                    max_tokens: params.max_new_tokens,
                    temperature: params.temperature,
                    top_p: params.top_p,
                    seed: Client::seed(params, i),
                    echo: false,
                    logprobs: None,
                    n: 1,
                    stream: false,
                };
                let r: CompletionResponse = self.call("completions", Some(&serde_json::to_string(&req)?), halt)?;
                self.note_answer(r.model, r.usage);
                let c = r.choices.into_iter().next().ok_or_else(|| self.bad("completions", &api::no_choices(r.error.as_ref())))?;
                (c.text, c.finish_reason, r.usage)
            }
            Prompt::Tokens(_) => return Err(EndpointError::Settings("token-id prompts cannot be sent to a server".into())),
        };
        if let Some(k) = &self.key
            && text.contains(k.secret())
        {
            let route = if matches!(prompt, Prompt::Chat(_)) { "chat/completions" } else { "completions" };
            return Err(self.bad(route, "the answer contains the API key sent with the request (a server echoing its headers?): not stored"));
        }
        let usage = usage.unwrap_or_default();
        Ok(Generated {
            text,
            tokens: Vec::new(),
            prompt_tokens: usage.prompt_tokens,
            new_tokens: usage.completion_tokens,
            stop_reason: if finish.as_deref() == Some("length") { StopReason::MaxTokens } else { StopReason::EndOfTurn },
        })
    }

    fn bad(&self, route: &str, detail: &str) -> EndpointError {
        EndpointError::BadAnswer { url: self.public_url(), route: route.into(), detail: self.clean(detail) }
    }

    /// Every prompt, at most `concurrency` in flight; `on_reply(index, answer or error)` is
    /// called on this thread as each arrives. A fatal error stops new requests (answers already
    /// on their way are still handed over) and is returned; a cancel returns with `cancelled`.
    pub fn generate(
        &self,
        prompts: &[Prompt],
        params: &GenParams,
        cancel: &AtomicBool,
        on_reply: &mut dyn FnMut(usize, Result<Generated>),
    ) -> Result<GenReport> {
        let before = self.usage();
        let mut report = GenReport::default();
        let done = self.pool(prompts.len(), cancel, &|i, halt| self.generate_one(&prompts[i], params, i, halt), &mut |i, r| {
            if r.is_ok() {
                report.answered += 1;
            } else {
                report.failed += 1;
            }
            on_reply(i, r)
        })?;
        report.cancelled = !done;
        report.usage = self.usage().since(&before);
        Ok(report)
    }

    /// Prompt log-probabilities of many texts (see [`Client::prompt_logprobs`]), at most
    /// `concurrency` requests in flight, in input order; `None` when cancelled.
    pub fn prompt_logprobs_many(&self, prompts: &[&str], cancel: &AtomicBool) -> Result<Option<Vec<Result<TokenLogprobs>>>> {
        let mut out: Vec<Option<Result<TokenLogprobs>>> = (0..prompts.len()).map(|_| None).collect();
        let done = self.pool(prompts.len(), cancel, &|i, halt| self.prompt_logprobs(prompts[i], halt), &mut |i, r| out[i] = Some(r))?;
        Ok(done.then(|| out.into_iter().map(|r| r.expect("every index answered")).collect()))
    }

    /// Runs `work(i)` for `i` in `0..n` on `concurrency` threads, handing each result to
    /// `on_result` on this thread as it comes. Returns whether every index was handed over
    /// (false: cancelled); a fatal error stops the others and is returned.
    fn pool<T: Send>(
        &self,
        n: usize,
        cancel: &AtomicBool,
        work: &Work<'_, T>,
        on_result: &mut dyn FnMut(usize, Result<T>),
    ) -> Result<bool> {
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let halt = || cancel.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed);
        let mut fatal = None;
        let mut handed = 0;
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            for _ in 0..self.settings.concurrency.min(n) {
                let tx = tx.clone();
                let (next, halt) = (&next, &halt);
                s.spawn(move || {
                    while !halt() {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        if tx.send((i, work(i, halt))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for (i, r) in rx {
                match r {
                    Err(EndpointError::Cancelled) => {}
                    Err(e) if e.is_fatal() => {
                        stop.store(true, Ordering::Relaxed);
                        fatal.get_or_insert(e);
                    }
                    r => {
                        handed += 1;
                        on_result(i, r);
                    }
                }
            }
        });
        match fatal {
            Some(e) => Err(e),
            None => Ok(handed == n),
        }
    }

    /// ln P of each token of `prompt` given the ones before it, as the server computes them
    /// (`/completions` with `echo` and `logprobs`, one new token asked for and left out): the
    /// tokens as the server shows them and their log-probabilities (`None` for the first).
    pub fn prompt_logprobs(&self, prompt: &str, halt: &dyn Fn() -> bool) -> Result<TokenLogprobs> {
        let req = CompletionRequest {
            model: &self.settings.model,
            prompt,
            max_tokens: 1,
            temperature: 0.0,
            top_p: 1.0,
            seed: None,
            echo: true,
            logprobs: Some(1),
            n: 1,
            stream: false,
        };
        let r: CompletionResponse = match self.call("completions", Some(&serde_json::to_string(&req)?), halt) {
            Ok(r) => r,
            Err(EndpointError::Rejected { status, message, .. }) => {
                return Err(self.no_logprobs(&format!("it rejected a completion with echo and logprobs (HTTP {status}: {message})")));
            }
            Err(e) => return Err(e),
        };
        self.note_answer(r.model, r.usage);
        let c = r.choices.into_iter().next().ok_or_else(|| self.bad("completions", &api::no_choices(r.error.as_ref())))?;
        let lp = c.logprobs.ok_or_else(|| self.no_logprobs("its completion answers carry no logprobs"))?;
        if lp.tokens.len() != lp.token_logprobs.len() || lp.tokens.is_empty() {
            return Err(self.no_logprobs("its logprobs do not list the prompt's tokens (echo ignored)"));
        }
        // The prompt's tokens: all but the generated one(s) at the end (a BOS the server added
        // may be listed or not).
        let generated = r.usage.map_or(1, |u| u.completion_tokens);
        let n = lp.tokens.len().saturating_sub(generated);
        if n == 0 {
            return Err(self.no_logprobs("its logprobs do not cover the prompt (echo ignored)"));
        }
        Ok(lp.tokens.into_iter().zip(lp.token_logprobs).take(n).collect())
    }

    fn no_logprobs(&self, why: &str) -> EndpointError {
        EndpointError::NoLogprobs { url: self.public_url(), model: self.clean(&self.settings.model), why: why.into() }
    }
}

impl Usage {
    /// What was counted after `before`.
    pub fn since(&self, before: &Usage) -> Usage {
        let mut reasons = self.retry_reasons.clone();
        for (k, v) in &before.retry_reasons {
            if let Some(n) = reasons.get_mut(k) {
                *n -= (*v).min(*n);
            }
        }
        reasons.retain(|_, v| *v > 0);
        Usage {
            requests: self.requests - before.requests,
            retries: self.retries - before.retries,
            retry_reasons: reasons,
            prompt_tokens: self.prompt_tokens - before.prompt_tokens,
            completion_tokens: self.completion_tokens - before.completion_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_are_checked() {
        for ok in ["http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "http://gpu-node:8000", " http://localhost:11434/v1/ "] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        let err = |u: &str| check_url(u).unwrap_err().to_string();
        assert!(err("").contains("no address"));
        assert!(err("localhost:8000/v1").contains("starts with http:// or https://"));
        assert!(err("ftp://x/v1").contains("starts with http:// or https://"));
        assert!(err("http://local host/v1").contains("no spaces"));
        assert!(err("http:///v1").contains("needs a host") || err("http:///v1").contains("not an address"), "{}", err("http:///v1"));
        // Credentials in an address never show.
        let e = err("http://user:secret@host name/v1");
        assert!(!e.contains("secret"), "{e}");
    }
}
