//! metrics: what the gateway counts for its operator: searches (and whether they found
//! anything), tools loaded and unloaded, refused calls by reason, upstream call latency,
//! restarts and sessions, as `/metrics` in the Prometheus text format (encoded by the
//! `prometheus-client` crate), and the most recent refusals and the last hour's counts
//! (`timeline`) for the status page.

mod timeline;

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::{Value, json};

/// One label.
type Label = [(&'static str, String); 1];
/// Two labels.
type Labels2 = [(&'static str, String); 2];
type Latency = Family<Labels2, Histogram, fn() -> Histogram>;

/// How many refusals the status page keeps.
const RECENT: usize = 50;

/// One refused call, as the status page lists it.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// The session's number on the status page.
    pub(crate) session: u64,
    /// The subject (profile) it was refused for.
    pub(crate) subject: String,
    /// The name the client called.
    pub(crate) tool: String,
    /// The denial's short reason (`not_loaded`, `forbidden`, `quarantined`, …).
    pub(crate) reason: &'static str,
    /// The rule that refused it (the policy rule for `forbidden`, else the message).
    pub(crate) rule: String,
}

/// The gateway's counters, gauges and histograms, and its recent refusals.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    searches: Counter,
    search_hits: Counter,
    search_misses: Counter,
    activations: Counter,
    unloads: Counter,
    refusals: Family<Label, Counter>,
    calls: Latency,
    restarts: Family<Label, Counter>,
    reloads: Family<Label, Counter>,
    reload_failing: Gauge,
    sessions_opened: Counter,
    sessions_open: Gauge,
    quarantined: Gauge,
    tools: Gauge,
    /// The last refusals, each with its time (seconds since the Unix epoch).
    /// The last hour's counts the status page charts.
    timeline: Mutex<timeline::Timeline>,
    /// Spans the trace collector took ([`crate::telemetry`]).
    pub(crate) trace_spans_exported: Counter,
    /// Spans dropped: the export queue was full, or the collector did not take their batch.
    pub(crate) trace_spans_dropped: Counter,
    recent: Mutex<VecDeque<(u64, Refusal)>>,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut m = Metrics {
            registry: Registry::with_prefix("toolgate"),
            searches: Counter::default(),
            search_hits: Counter::default(),
            search_misses: Counter::default(),
            activations: Counter::default(),
            unloads: Counter::default(),
            refusals: Family::default(),
            calls: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            restarts: Family::default(),
            reloads: Family::default(),
            reload_failing: Gauge::default(),
            sessions_opened: Counter::default(),
            sessions_open: Gauge::default(),
            quarantined: Gauge::default(),
            tools: Gauge::default(),
            timeline: Mutex::default(),
            trace_spans_exported: Counter::default(),
            trace_spans_dropped: Counter::default(),
            recent: Mutex::new(VecDeque::new()),
        };
        m.registry.register(
            "trace_spans_exported",
            "spans the trace collector took ([telemetry])",
            m.trace_spans_exported.clone(),
        );
        m.registry.register(
            "trace_spans_dropped",
            "spans dropped: the export queue was full or the collector did not take them",
            m.trace_spans_dropped.clone(),
        );
        m.registry.register(
            "config_reloads",
            "configuration reloads, by outcome: applied, or failed (the running configuration kept)",
            m.reloads.clone(),
        );
        m.registry.register(
            "config_reload_failing",
            "1 while the last reload of the configuration failed and none has been applied since",
            m.reload_failing.clone(),
        );
        m.registry.register("searches", "tool_search calls answered", m.searches.clone());
        m.registry.register(
            "search_hits",
            "tool_search calls that matched at least one tool",
            m.search_hits.clone(),
        );
        m.registry.register(
            "search_misses",
            "tool_search calls that matched no tool",
            m.search_misses.clone(),
        );
        m.registry.register("activations", "tools loaded into a session's active set", m.activations.clone());
        m.registry.register(
            "unloads",
            "tools unloaded from a session (budget or changed definition)",
            m.unloads.clone(),
        );
        m.registry.register("refusals", "tool calls the gate refused, by reason", m.refusals.clone());
        m.registry.register_with_unit(
            "upstream_call_duration",
            "time of forwarded tool calls, by upstream and outcome (ok, error)",
            prometheus_client::registry::Unit::Seconds,
            m.calls.clone(),
        );
        m.registry.register(
            "upstream_restarts",
            "restarts of an upstream after it failed",
            m.restarts.clone(),
        );
        m.registry.register("sessions_opened", "downstream sessions initialized", m.sessions_opened.clone());
        m.registry.register("sessions_open", "downstream sessions open now", m.sessions_open.clone());
        m.registry.register(
            "quarantined_tools",
            "tools of pinned servers held for approval",
            m.quarantined.clone(),
        );
        m.registry.register("tools", "tools the served subject can find", m.tools.clone());
        m
    }
}

impl Metrics {
    /// One `tool_search` answered: how many tools it matched, loaded and unloaded.
    pub(crate) fn searched(&self, matched: usize, loaded: usize, unloaded: usize) {
        self.searches.inc();
        {
            let mut timeline = self.timeline();
            let minute = timeline.at(unix_now() / 60);
            minute.searches += 1;
            minute.loads += loaded as u64;
        }
        if matched == 0 {
            self.search_misses.inc()
        } else {
            self.search_hits.inc()
        };
        self.activations.inc_by(loaded as u64);
        self.unloads.inc_by(unloaded as u64);
    }

    /// Tools unloaded outside a search (their definitions changed under a rebuild).
    pub(crate) fn unloaded(&self, count: usize) {
        self.unloads.inc_by(count as u64);
    }

    /// A call the gate refused, now.
    pub(crate) fn refused(&self, refusal: Refusal) {
        let at = unix_now();
        self.refusals.get_or_create(&[("reason", refusal.reason.to_owned())]).inc();
        self.timeline().at(at / 60).refusals += 1;
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back((at, refusal));
    }

    /// A forwarded call's time at `upstream`; `ok` unless the result was an error.
    pub(crate) fn called(&self, upstream: &str, ok: bool, took: Duration) {
        let outcome = if ok { "ok" } else { "error" };
        let labels = [("upstream", upstream.to_owned()), ("outcome", outcome.to_owned())];
        self.calls.get_or_create(&labels).observe(took.as_secs_f64());
        self.timeline().called(upstream, took.as_secs_f64() * 1e3);
    }

    /// A tool list was served that did not send `saved` tokens of definitions, against a full
    /// load.
    pub(crate) fn list_saved(&self, saved: usize) {
        self.timeline().saved(unix_now() / 60, saved as u64);
    }

    /// A search of `subject` for `query` matched nothing.
    pub(crate) fn nothing_fitted(&self, subject: &str, query: &str) {
        self.timeline().nothing_fitted(unix_now(), subject, query);
    }

    /// What the status page charts ([`timeline`]).
    pub(crate) fn timeline_status(&self) -> Value {
        self.timeline().status(unix_now() / 60)
    }

    fn timeline(&self) -> std::sync::MutexGuard<'_, timeline::Timeline> {
        self.timeline.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An upstream started again after it failed.
    pub(crate) fn restarted(&self, upstream: &str) {
        self.restarts.get_or_create(&[("upstream", upstream.to_owned())]).inc();
    }

    /// A reload of the configuration was applied (`true`) or refused.
    pub(crate) fn reloaded(&self, applied: bool) {
        let outcome = if applied { "applied" } else { "failed" };
        self.reloads.get_or_create(&[("outcome", outcome.to_owned())]).inc();
        self.reload_failing.set(i64::from(!applied));
    }

    /// A session was initialized.
    pub(crate) fn session_opened(&self) {
        self.sessions_opened.inc();
    }

    /// The text exposition, with the gauges set to what is true now.
    pub(crate) fn encode(&self, sessions_open: usize, tools: usize, quarantined: usize) -> String {
        self.sessions_open.set(sessions_open as i64);
        self.tools.set(tools as i64);
        self.quarantined.set(quarantined as i64);
        let mut out = String::new();
        if let Err(e) = encode(&mut out, &self.registry) {
            tracing::error!("could not encode the metrics: {e}");
        }
        out
    }

    /// The recent refusals, newest first, for the status page.
    pub(crate) fn recent_refusals(&self) -> Vec<Value> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .iter()
            .rev()
            .map(|(at, r)| {
                json!({"at": at, "session": r.session, "subject": r.subject, "tool": r.tool,
                    "reason": r.reason, "rule": r.rule})
            })
            .collect()
    }
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_move_and_the_exposition_names_them() {
        let m = Metrics::default();
        m.searched(3, 2, 1);
        m.searched(0, 0, 0);
        m.refused(Refusal {
            session: 1,
            subject: "main".into(),
            tool: "x".into(),
            reason: "not_loaded",
            rule: "not loaded".into(),
        });
        m.called("fs", true, Duration::from_millis(3));
        let text = m.encode(2, 10, 1);
        for line in [
            "toolgate_searches_total 2",
            "toolgate_search_hits_total 1",
            "toolgate_search_misses_total 1",
            "toolgate_activations_total 2",
            "toolgate_unloads_total 1",
            "toolgate_refusals_total{reason=\"not_loaded\"} 1",
            "toolgate_sessions_open 2",
            "toolgate_upstream_call_duration_seconds_count{upstream=\"fs\",outcome=\"ok\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in:\n{text}");
        }
        assert_eq!(m.recent_refusals()[0]["tool"], "x");
    }
}
