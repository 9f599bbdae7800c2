//! The API key and the server address as they may be shown.
//!
//! The key is read from `TSTLAB_API_KEY`, else `OPENAI_API_KEY`, and only ever goes into the
//! `Authorization` header: [`ApiKey`] prints as `[key]`, [`redact`] takes it (and masked forms a
//! server may echo, `sk-ab***yz`) out of any server message, and [`public_url`] drops
//! credentials written into an address (`https://user:pass@host/...`) before it is recorded.

use std::fmt;

/// The environment variables the key is read from, in order.
pub const KEY_VARS: [&str; 2] = ["TSTLAB_API_KEY", "OPENAI_API_KEY"];

/// An API key; its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The first non-empty of [`KEY_VARS`].
    pub fn from_env() -> Option<ApiKey> {
        KEY_VARS.iter().find_map(|v| std::env::var(v).ok()).map(|k| k.trim().to_owned()).filter(|k| !k.is_empty()).map(ApiKey)
    }

    pub fn new(key: &str) -> ApiKey {
        ApiKey(key.to_owned())
    }

    /// The header value (`Bearer ...`).
    pub(super) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    pub(super) fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[key]")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[key]")
    }
}

/// `message` with the key, and any word that looks like a masked copy of it (starts with the
/// key's first 4 characters and holds `*` or `…`), replaced by `[key]`.
pub fn redact(message: &str, key: Option<&ApiKey>) -> String {
    let Some(key) = key.map(ApiKey::secret).filter(|k| !k.is_empty()) else {
        return message.to_owned();
    };
    let whole = message.replace(key, "[key]");
    let head: String = key.chars().take(4).collect();
    if head.chars().count() < 4 {
        return whole;
    }
    whole
        .split_inclusive(char::is_whitespace)
        .map(|w| {
            let word = w.trim_end();
            let bare = word.trim_matches(|c: char| matches!(c, '.' | ',' | '"' | '\'' | '(' | ')' | ':' | ';'));
            if bare.starts_with(&head) && (bare.contains('*') || bare.contains('…')) {
                w.replacen(bare, "[key]", 1)
            } else {
                w.to_owned()
            }
        })
        .collect()
}

/// The address without user name, password or query (where keys are sometimes put), and
/// without a trailing `/`.
pub fn public_url(url: &str) -> String {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, url),
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let mut out = match scheme {
        Some(s) => format!("{s}://{host}{path}"),
        None => format!("{host}{path}"),
    };
    while out.ends_with('/') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_prints() {
        let k = ApiKey::new("sk-live-1234567890abcdef");
        assert_eq!(format!("{k} {k:?}"), "[key] [key]");
        assert_eq!(format!("{:?}", Some(k.clone())), "Some([key])");
        assert!(k.bearer().ends_with("1234567890abcdef"));
    }

    #[test]
    fn redact_takes_out_the_key_and_masked_echoes() {
        let k = ApiKey::new("sk-live-1234567890abcdef");
        assert_eq!(redact("bad key sk-live-1234567890abcdef given", Some(&k)), "bad key [key] given");
        assert_eq!(
            redact("Incorrect API key provided: sk-li*************cdef. You can find your API key at ...", Some(&k)),
            "Incorrect API key provided: [key]. You can find your API key at ..."
        );
        assert_eq!(redact("no such model", Some(&k)), "no such model");
        assert_eq!(redact("sk-live-1234567890abcdef", None), "sk-live-1234567890abcdef", "no key: nothing to hide");
        assert_eq!(redact("a skate* b", Some(&ApiKey::new("skate-key"))), "a [key] b");
    }

    #[test]
    fn public_url_drops_credentials_and_queries() {
        assert_eq!(public_url("https://user:secret@api.example.com/v1/?key=abc"), "https://api.example.com/v1");
        assert_eq!(public_url("http://127.0.0.1:8000/v1/"), "http://127.0.0.1:8000/v1");
        assert_eq!(public_url("http://localhost:11434/v1#x"), "http://localhost:11434/v1");
        assert_eq!(public_url("https://api.openai.com/v1"), "https://api.openai.com/v1");
    }
}
