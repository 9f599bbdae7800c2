//! The options that send work to an OpenAI-compatible server (`transfer`, `score`).

use crate::endpoint::{Settings, retry::Backoff};

#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// An OpenAI-compatible server's API address (`https://api.openai.com/v1`,
    /// `http://localhost:8000/v1`); the key comes from TSTLAB_API_KEY or OPENAI_API_KEY.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Requests in flight at most (--endpoint).
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Seconds one request may take (--endpoint).
    #[arg(long, default_value_t = 120.0)]
    pub timeout: f64,
    /// Retries per request on timeouts, connection errors, 429 and 5xx (--endpoint).
    #[arg(long, default_value_t = Backoff::default().retries)]
    pub retries: u32,
}

impl ServerArgs {
    /// The server settings for `model` (the name the server knows), when --endpoint is given.
    pub fn settings(&self, model: &str) -> anyhow::Result<Option<Settings>> {
        match &self.endpoint {
            Some(url) => self.settings_for(url, model),
            None => Ok(None),
        }
    }

    /// The server settings for `model` at `url` (a template's endpoint), with these options.
    pub fn settings_for(&self, url: &str, model: &str) -> anyhow::Result<Option<Settings>> {
        Ok(Some(Settings { url: url.to_owned(), model: model.to_owned(), ..self.options()? }))
    }

    /// These options (concurrency, timeout, retries), without an address or model yet.
    pub fn options(&self) -> anyhow::Result<Settings> {
        if !(self.timeout > 0.0 && self.timeout.is_finite()) {
            anyhow::bail!("--timeout must be a positive number of seconds");
        }
        Ok(Settings {
            concurrency: self.concurrency.max(1),
            timeout: std::time::Duration::from_secs_f64(self.timeout),
            backoff: Backoff { retries: self.retries, ..Backoff::default() },
            ..Settings::default()
        })
    }
}
