//! rate: how many calls a subject may make, as token buckets (`[limits]`, `[profiles.NAME.limits]`),
//! and the answer to one over them, in the shape of the MCP rate-limit proposal (SEP-3304:
//! JSON-RPC error `-32023`, `data.retryAfterMs`).
//!
//! A bucket holds up to `burst` calls (by default a minute's worth) and refills at
//! `calls_per_minute`. A call of tool `T` of server `S` by subject `W` takes one call from each
//! bucket that applies: `W`'s bucket for all its calls, `W`'s for `S`, `W`'s for `T`; it runs
//! only if every one has a call left, and then all are taken at once. The buckets live in the
//! session store ([`crate::store::SessionStore::take`]): in this process, or in Redis, where
//! every replica takes from the same buckets, so that two replicas do not double a budget.
//!
//! The subject is who is calling: the caller's token (`[tokens.NAME]`) or OAuth identity, or,
//! with neither (stdio), the subject the session serves. Which limits apply is the subject's
//! profile's (`[profiles.NAME.limits]`) when it has them, else `[limits]`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

/// The JSON-RPC error code of a call over a rate limit (SEP-3304, `RateLimited`).
pub const RATE_LIMITED: i32 = -32023;

/// One limit: calls a minute, and how many may come at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Calls a minute, refilled evenly (`calls_per_minute`).
    pub calls_per_minute: u32,
    /// The most calls at once after a quiet spell (`burst`; by default `calls_per_minute`).
    pub burst: u32,
}

/// A `[limits]` table: the limit of all of a subject's calls, and of its calls of one server or
/// one tool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Limits {
    /// Every call (`calls_per_minute`, `burst` at the table's top).
    pub all: Option<Rule>,
    /// The calls of one server's tools (`[limits.servers.NAME]`).
    pub servers: BTreeMap<String, Rule>,
    /// The calls of one tool, by qualified name (`[limits.tools."server__tool"]`).
    pub tools: BTreeMap<String, Rule>,
}

impl Limits {
    /// What the status page shows of it.
    pub fn status(&self) -> serde_json::Value {
        let rule = |r: &Rule| json!({"calls_per_minute": r.calls_per_minute, "burst": r.burst});
        json!({
            "calls_per_minute": self.all.map(|r| r.calls_per_minute),
            "burst": self.all.map(|r| r.burst),
            "servers": self.servers.iter().map(|(k, r)| (k.clone(), rule(r))).collect::<serde_json::Map<_, _>>(),
            "tools": self.tools.iter().map(|(k, r)| (k.clone(), rule(r))).collect::<serde_json::Map<_, _>>(),
        })
    }

    /// Whether it limits nothing.
    pub fn is_empty(&self) -> bool {
        self.all.is_none() && self.servers.is_empty() && self.tools.is_empty()
    }
}

/// One bucket a call takes from: its key in the store, and its rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// The key (`toolgate:rate:SUBJECT:SCOPE`), unique per subject and scope.
    pub key: String,
    /// What it holds and how fast it refills.
    pub rule: Rule,
    /// What it limits, for the answer (`all calls`, `server github`, `tool github__create_issue`).
    pub scope: String,
}

/// A call over a limit: which one, and when the next call could run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// What the limit covers (`all calls`, `server github`, `tool github__create_issue`).
    pub scope: String,
    /// Its calls a minute.
    pub calls_per_minute: u32,
    /// How long until every bucket the call needs has a call again.
    pub retry_after: Duration,
}

impl std::fmt::Display for Limited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rate limited: {} calls a minute ({}); retry after {} ms",
            self.calls_per_minute,
            self.scope,
            self.retry_after.as_millis()
        )
    }
}

impl Limited {
    /// The JSON-RPC error that answers the call (SEP-3304): code `-32023`, `data.retryAfterMs`.
    pub fn error(&self) -> rmcp::model::ErrorData {
        let data = json!({
            "retryAfterMs": self.retry_after.as_millis() as u64,
            "limit": self.calls_per_minute,
            "scope": self.scope,
        });
        rmcp::model::ErrorData::new(rmcp::model::ErrorCode(RATE_LIMITED), self.to_string(), Some(data))
    }
}

/// Every subject's limits: `[limits]`, and each profile's own.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Limiter {
    /// `[limits]`.
    pub everyone: Limits,
    /// `[profiles.NAME.limits]`, by profile.
    pub profiles: BTreeMap<String, Limits>,
}

impl Limiter {
    /// What the status page shows: `[limits]` and each profile's.
    pub fn status(&self) -> serde_json::Value {
        let profiles: serde_json::Map<_, _> =
            self.profiles.iter().map(|(k, l)| (k.clone(), l.status())).collect();
        json!({"everyone": self.everyone.status(), "profiles": profiles})
    }

    /// Whether no call is ever limited.
    pub fn is_empty(&self) -> bool {
        self.everyone.is_empty() && self.profiles.values().all(Limits::is_empty)
    }

    /// The buckets a call of tool `qualified` of `server` by `who`, of profile `profile`, takes
    /// from (none when no limit applies).
    pub fn buckets(&self, who: &str, profile: Option<&str>, server: &str, qualified: &str) -> Vec<Bucket> {
        let limits = profile.and_then(|p| self.profiles.get(p)).unwrap_or(&self.everyone);
        // The subject in the key as its length and text, so that no subject's key is a prefix
        // of another's whatever it holds.
        let key = |scope: &str| format!("toolgate:rate:{}:{who}:{scope}", who.len());
        let mut out = Vec::new();
        if let Some(rule) = limits.all {
            out.push(Bucket { key: key("*"), rule, scope: "all calls".to_owned() });
        }
        if let Some(&rule) = limits.servers.get(server) {
            out.push(Bucket { key: key(&format!("s:{server}")), rule, scope: format!("server {server}") });
        }
        if let Some(&rule) = limits.tools.get(qualified) {
            out.push(Bucket {
                key: key(&format!("t:{qualified}")),
                rule,
                scope: format!("tool {qualified}"),
            });
        }
        out
    }
}

/// A bucket's state: calls left (fractional, as refilled) and when it was last looked at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Level {
    /// Calls left.
    pub(crate) calls: f64,
    /// When, in milliseconds of the store's clock.
    pub(crate) at_ms: u64,
}

/// Takes one call from every bucket of `levels` (each with its rule) at `now_ms`, if each has
/// one; else takes nothing and says how long until each would: the wait of the longest, and
/// which bucket that is. `levels` are updated (refilled, and taken from when the call runs).
/// What the memory store runs, and what the Redis store's script computes the same way.
pub(crate) fn take(levels: &mut [(Level, Rule)], now_ms: u64) -> Result<(), (usize, Duration)> {
    let mut longest: Option<(usize, f64)> = None;
    for (i, (level, rule)) in levels.iter_mut().enumerate() {
        let per_ms = f64::from(rule.calls_per_minute) / 60_000.0;
        let elapsed = now_ms.saturating_sub(level.at_ms) as f64;
        level.calls = (level.calls + elapsed * per_ms).min(f64::from(rule.burst));
        level.at_ms = now_ms.max(level.at_ms);
        if level.calls < 1.0 {
            let wait = if per_ms > 0.0 { (1.0 - level.calls) / per_ms } else { f64::INFINITY };
            if longest.is_none_or(|(_, w)| wait > w) {
                longest = Some((i, wait));
            }
        }
    }
    if let Some((i, wait)) = longest {
        let wait = if wait.is_finite() { wait.ceil() as u64 } else { u64::MAX / 2 };
        return Err((i, Duration::from_millis(wait.max(1))));
    }
    for (level, _) in levels.iter_mut() {
        level.calls -= 1.0;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(calls_per_minute: u32, burst: u32) -> Rule {
        Rule { calls_per_minute, burst }
    }

    #[test]
    fn a_bucket_gives_its_burst_then_one_call_per_refill() {
        let mut levels = [(Level { calls: 3.0, at_ms: 0 }, rule(60, 3))];
        for _ in 0..3 {
            assert_eq!(take(&mut levels, 0), Ok(()));
        }
        assert_eq!(take(&mut levels, 0), Err((0, Duration::from_millis(1000))));
        assert_eq!(take(&mut levels, 400), Err((0, Duration::from_millis(600))));
        assert_eq!(take(&mut levels, 1000), Ok(()));
        // A long quiet spell refills up to the burst, no further.
        assert_eq!(take(&mut levels, 600_000), Ok(()));
        assert!((levels[0].0.calls - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_call_takes_from_every_bucket_or_from_none() {
        let mut levels =
            [(Level { calls: 5.0, at_ms: 0 }, rule(60, 5)), (Level { calls: 0.5, at_ms: 0 }, rule(6, 1))];
        // The tool's bucket is short: nothing is taken from the subject's.
        assert_eq!(take(&mut levels, 0), Err((1, Duration::from_millis(5000))));
        assert!((levels[0].0.calls - 5.0).abs() < 1e-9);
        assert_eq!(take(&mut levels, 5000), Ok(()));
        assert!((levels[0].0.calls - 4.0).abs() < 1e-9 && levels[1].0.calls.abs() < 1e-9);
    }

    #[test]
    fn buckets_are_keyed_by_subject_and_scope_and_a_profile_has_its_own_limits() {
        let limiter = Limiter {
            everyone: Limits {
                all: Some(rule(60, 60)),
                servers: BTreeMap::from([("gh".into(), rule(10, 10))]),
                tools: BTreeMap::from([("gh__create_issue".into(), rule(2, 2))]),
            },
            profiles: BTreeMap::from([("ci".into(), Limits { all: Some(rule(5, 5)), ..Limits::default() })]),
        };
        let b = limiter.buckets("alice", None, "gh", "gh__create_issue");
        let scopes: Vec<&str> = b.iter().map(|b| b.scope.as_str()).collect();
        assert_eq!(scopes, ["all calls", "server gh", "tool gh__create_issue"]);
        assert_ne!(b[0].key, limiter.buckets("alice:x", None, "gh", "t")[0].key);
        assert_eq!(limiter.buckets("bot", Some("ci"), "gh", "gh__create_issue").len(), 1);
        assert!(limiter.buckets("alice", None, "other", "other__t").len() == 1);
        assert!(Limiter::default().is_empty() && !limiter.is_empty());
    }

    #[test]
    fn the_answer_is_the_proposals_error() {
        let limited = Limited {
            scope: "tool gh__create_issue".into(),
            calls_per_minute: 2,
            retry_after: Duration::from_millis(1500),
        };
        let e = limited.error();
        assert_eq!(e.code.0, -32023);
        assert_eq!(e.data.unwrap()["retryAfterMs"], 1500);
        assert_eq!(e.message, "rate limited: 2 calls a minute (tool gh__create_issue); retry after 1500 ms");
    }
}
