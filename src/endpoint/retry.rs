//! When to ask again: exponential backoff with jitter, `Retry-After`, and which failures are
//! worth another attempt (timeouts, connection errors, 408, 429, 5xx) and which stop at once.

use rand::Rng;
use std::time::{Duration, SystemTime};

/// How many times and how long to wait between attempts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// Attempts after the first one.
    pub retries: u32,
    /// The wait before the first retry, doubled for each later one (before jitter).
    pub base: Duration,
    /// No computed wait is longer (a server's `Retry-After` may be, up to `max_retry_after`).
    pub cap: Duration,
    /// A longer `Retry-After` is not waited for: the request fails.
    pub max_retry_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { retries: 6, base: Duration::from_millis(500), cap: Duration::from_secs(30), max_retry_after: Duration::from_secs(300) }
    }
}

impl Backoff {
    /// The exponential step before retry `n` (1-based): base x 2^(n-1), at most `cap`.
    pub fn step(&self, n: u32) -> Duration {
        let factor = 2u32.saturating_pow(n.saturating_sub(1).min(30));
        self.base.saturating_mul(factor).min(self.cap)
    }

    /// The wait before retry `n` with "equal jitter": half the step, plus a uniform random part
    /// of the other half, so that many clients that failed together do not come back together.
    /// A server's `Retry-After` is a floor.
    pub fn wait(&self, n: u32, retry_after: Option<Duration>, rng: &mut impl Rng) -> Duration {
        let step = self.step(n);
        let half = step / 2;
        let jitter = Duration::from_secs_f64(rng.random::<f64>() * (step - half).as_secs_f64());
        let computed = half + jitter;
        match retry_after {
            Some(r) => r.max(computed),
            None => computed,
        }
    }
}

/// `Retry-After` as seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`), as a wait
/// from `now`; a date in the past is no wait; anything else is ignored.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = v.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// What to do with an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// 408, 429 and 5xx: wait and ask again.
    Retry,
    /// 401, 403, 404: the key, the permission or the address is wrong; nothing else will work.
    Stop,
    /// Any other error status: this request is wrong (too long, bad parameter); others may work.
    Reject,
}

pub fn classify(status: u16) -> Status {
    match status {
        200..=299 => Status::Ok,
        408 | 429 | 500..=599 => Status::Retry,
        401 | 403 | 404 => Status::Stop,
        _ => Status::Reject,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_step_doubles_up_to_the_cap() {
        let b = Backoff { retries: 10, base: Duration::from_millis(500), cap: Duration::from_secs(5), max_retry_after: Duration::from_secs(60) };
        let steps: Vec<u128> = (1..=6).map(|n| b.step(n).as_millis()).collect();
        assert_eq!(steps, [500, 1000, 2000, 4000, 5000, 5000]);
        assert_eq!(b.step(200), Duration::from_secs(5), "no overflow far out");
    }

    #[test]
    fn jitter_stays_between_half_the_step_and_the_step_and_varies() {
        let b = Backoff::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let waits: Vec<Duration> = (0..200).map(|_| b.wait(3, None, &mut rng)).collect();
        assert!(waits.iter().all(|w| *w >= Duration::from_secs(1) && *w <= Duration::from_secs(2)), "{waits:?}");
        let distinct: std::collections::BTreeSet<_> = waits.iter().collect();
        assert!(distinct.len() > 150, "jitter spreads the waits: {} distinct of 200", distinct.len());
    }

    #[test]
    fn retry_after_is_a_floor() {
        let b = Backoff::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(b.wait(1, Some(Duration::from_secs(9)), &mut rng), Duration::from_secs(9));
        let w = b.wait(1, Some(Duration::ZERO), &mut rng);
        assert!(w >= Duration::from_millis(250) && w <= Duration::from_millis(500), "{w:?}");
    }

    #[test]
    fn retry_after_in_seconds_and_as_a_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("1.5", now), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), Some(Duration::ZERO), "a past date: no wait");
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn statuses() {
        assert_eq!(classify(200), Status::Ok);
        for s in [408, 429, 500, 502, 503, 504] {
            assert_eq!(classify(s), Status::Retry, "{s}");
        }
        for s in [401, 403, 404] {
            assert_eq!(classify(s), Status::Stop, "{s}");
        }
        for s in [400, 413, 422] {
            assert_eq!(classify(s), Status::Reject, "{s}");
        }
    }
}
