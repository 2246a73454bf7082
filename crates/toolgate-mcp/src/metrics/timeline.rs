//! timeline: what the status page charts, minute by minute over the last hour: tool lists'
//! tokens saved, searches, loads and refusals; each upstream's call times; and the searches
//! where nothing fitted.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Value, json};

/// Minutes kept.
pub(crate) const MINUTES: u64 = 60;
/// Searches where nothing fitted, kept.
const MISSES: usize = 20;

/// One minute's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Minute {
    /// Tokens of definitions a tool list did not send, against a full load, summed over the
    /// lists served that minute.
    pub(crate) saved: u64,
    pub(crate) searches: u64,
    pub(crate) loads: u64,
    pub(crate) refusals: u64,
}

/// One upstream's calls: how many, their total time and the longest.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Calls {
    count: u64,
    total_ms: f64,
    max_ms: f64,
}

/// The counts by minute (unix minute → counts), the call times by upstream, and the last
/// searches that matched nothing.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    minutes: BTreeMap<u64, Minute>,
    calls: BTreeMap<String, Calls>,
    misses: VecDeque<(u64, String, String)>,
    /// Tokens saved since the gateway started.
    saved_total: u64,
}

impl Timeline {
    /// The counts of `minute` (a unix minute), made if new; minutes older than the last hour go.
    pub(crate) fn at(&mut self, minute: u64) -> &mut Minute {
        let oldest = minute.saturating_sub(MINUTES - 1);
        while self.minutes.first_key_value().is_some_and(|(m, _)| *m < oldest) {
            self.minutes.pop_first();
        }
        self.minutes.entry(minute).or_default()
    }

    /// A tool list was served that did not send `saved` tokens.
    pub(crate) fn saved(&mut self, minute: u64, saved: u64) {
        self.at(minute).saved += saved;
        self.saved_total += saved;
    }

    /// A call of `upstream` took `ms`.
    pub(crate) fn called(&mut self, upstream: &str, ms: f64) {
        let calls = self.calls.entry(upstream.to_owned()).or_default();
        calls.count += 1;
        calls.total_ms += ms;
        calls.max_ms = calls.max_ms.max(ms);
    }

    /// A search of `subject` for `query` matched nothing.
    pub(crate) fn nothing_fitted(&mut self, at: u64, subject: &str, query: &str) {
        if self.misses.len() == MISSES {
            self.misses.pop_front();
        }
        let query: String = query.chars().take(200).collect();
        self.misses.push_back((at, subject.to_owned(), query));
    }

    /// What `/status.json` shows (`timeline`): the last hour's minutes up to `now_minute`, oldest
    /// first (every minute, quiet ones as zeros), the upstreams by mean call time, slowest
    /// first, and the searches where nothing fitted, newest first.
    pub(crate) fn status(&self, now_minute: u64) -> Value {
        let first = now_minute.saturating_sub(MINUTES - 1);
        let minutes: Vec<Value> = (first..=now_minute)
            .map(|m| {
                let c = self.minutes.get(&m).copied().unwrap_or_default();
                json!({"minute": m, "saved": c.saved, "searches": c.searches, "loads": c.loads, "refusals": c.refusals})
            })
            .collect();
        let mut upstreams: Vec<(&String, &Calls)> = self.calls.iter().collect();
        upstreams
            .sort_by(|a, b| (b.1.total_ms / b.1.count as f64).total_cmp(&(a.1.total_ms / a.1.count as f64)));
        let upstreams: Vec<Value> = upstreams
            .into_iter()
            .map(|(name, c)| {
                json!({"upstream": name, "calls": c.count, "mean_ms": c.total_ms / c.count as f64, "max_ms": c.max_ms})
            })
            .collect();
        let misses: Vec<Value> = self
            .misses
            .iter()
            .rev()
            .map(|(at, subject, query)| json!({"at": at, "subject": subject, "query": query}))
            .collect();
        json!({"minutes": minutes, "saved_total": self.saved_total, "upstreams": upstreams, "nothing_fitted": misses})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_of_minutes_is_kept_and_quiet_ones_are_zeros() {
        let mut t = Timeline::default();
        t.at(100).searches += 2;
        t.saved(100, 500);
        t.at(161).loads += 1;
        let status = t.status(161);
        let minutes = status["minutes"].as_array().unwrap();
        assert_eq!(minutes.len(), 60);
        assert_eq!(minutes[0]["minute"], 102, "minute 100 is over an hour old");
        assert_eq!(minutes[59]["loads"], 1);
        assert!(minutes[..59].iter().all(|m| m["searches"] == 0));
        assert_eq!(status["saved_total"], 500, "the total stays");
    }

    #[test]
    fn upstreams_are_listed_slowest_first_and_misses_newest_first() {
        let mut t = Timeline::default();
        t.called("fast", 2.0);
        t.called("slow", 40.0);
        t.called("slow", 60.0);
        for i in 0..25 {
            t.nothing_fitted(i, "main", &format!("query {i}"));
        }
        let status = t.status(0);
        assert_eq!(status["upstreams"][0]["upstream"], "slow");
        assert_eq!(status["upstreams"][0]["mean_ms"], 50.0);
        assert_eq!(status["upstreams"][0]["max_ms"], 60.0);
        let misses = status["nothing_fitted"].as_array().unwrap();
        assert_eq!(misses.len(), 20);
        assert_eq!(misses[0]["query"], "query 24");
    }
}
