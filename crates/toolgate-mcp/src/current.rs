//! current: the configuration in force, which a reload replaces whole (`Gateway::reconfigure`,
//! in `reload.rs`): the file as applied, the settings, the operator's overrides, the rate
//! limits, the trace exporter, the secrets to mask and the pinning; and the record of reloads
//! the operator reads (`Reloads`).
//!
//! A request reads the configuration once, at the stage that needs it, and keeps what it read
//! for that stage: a reload never changes a value under a stage that is using it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::config::Config;
use crate::metrics::Metrics;
use crate::overrides::ToolOverrides;
use crate::pins::Pins;
use crate::rate::Limiter;
use crate::settings::{GatewayError, Settings};
use crate::telemetry::Tracer;

/// The configuration in force.
#[derive(Debug)]
pub(crate) struct Current {
    /// The configuration as applied: a reload compares the new file's servers with its.
    pub(crate) config: Config,
    /// How the gateway behaves ([`crate::Gateway::settings`]).
    pub(crate) settings: Arc<Settings>,
    /// The operator's fixes to each server's tools (`[servers.NAME.tools.TOOL]`), by server:
    /// applied where listings merge, and undone for each call on its way upstream.
    pub(crate) overrides: HashMap<String, ToolOverrides>,
    /// How many calls each subject may make (`[limits]`, `[profiles.NAME.limits]`); the buckets
    /// are in the session store (`Settings::sessions`), so a reload keeps what was spent.
    pub(crate) limits: Limiter,
    /// The exporter of traces (`[telemetry]`), if traces are on.
    pub(crate) tracer: Option<Arc<Tracer>>,
    /// Every value of the configuration that must never be shown or logged, longest first:
    /// every `${VAR}` value, every server's own secrets, the grant key ([`crate::upstream::redact`]).
    pub(crate) secrets: Arc<[String]>,
    /// The approved definitions, when a server is pinned.
    pub(crate) pins: Option<Arc<Pins>>,
}

impl Current {
    /// The configuration `config` served with `settings`; `running`, the one in force when
    /// this replaces it, lends what need not start again: the trace exporter when `[telemetry]`
    /// is unchanged, the pin store when it is the same file. Fails when the pin store cannot
    /// be opened.
    pub(crate) fn new(
        config: Config,
        settings: Settings,
        metrics: &Metrics,
        running: Option<&Current>,
    ) -> Result<Current, GatewayError> {
        let pins = Pins::reusing(&config, running.and_then(|r| r.pins.as_deref()))
            .map_err(|e| GatewayError { key: "gateway.pins".into(), message: e.to_string() })?
            .map(Arc::new);
        let tracer = match running {
            Some(running) if running.config.host.telemetry == config.host.telemetry => running.tracer.clone(),
            _ => Tracer::for_config(&config.host.telemetry, metrics),
        };
        Ok(Current {
            secrets: crate::config::secrets(&config).into(),
            overrides: config
                .servers
                .iter()
                .filter(|(_, s)| !s.host.tools.is_empty())
                .map(|(name, s)| (name.clone(), s.host.tools.clone()))
                .collect(),
            limits: config.host.limits.clone(),
            settings: Arc::new(settings),
            tracer,
            pins,
            config,
        })
    }
}

/// What the operator is told of reloads: how many were applied and refused, the last of each,
/// and the keys that changed but take effect only at the next start.
#[derive(Debug, Default)]
pub(crate) struct Reloads {
    log: Mutex<ReloadLog>,
}

/// The record [`Reloads`] keeps.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReloadLog {
    /// Reloads applied.
    pub(crate) applied: u64,
    /// Reloads refused: the file did not parse or validate, and the running configuration was
    /// kept.
    pub(crate) failed: u64,
    /// When the last reload was applied, and what it changed.
    pub(crate) last_applied: Option<(SystemTime, Vec<String>)>,
    /// The last refusal, when it came after the last applied reload: when, and why.
    pub(crate) failing: Option<(SystemTime, String)>,
    /// Keys the file changed that only a restart applies (the session store, say).
    pub(crate) at_restart: Vec<String>,
}

impl Reloads {
    /// Records a reload applied, with what it changed and the keys left for a restart.
    pub(crate) fn applied(&self, changes: Vec<String>, at_restart: Vec<String>) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.applied += 1;
        log.last_applied = Some((SystemTime::now(), changes));
        log.failing = None;
        log.at_restart = at_restart;
    }

    /// Records a reload refused, and why.
    pub(crate) fn failed(&self, why: String) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.failed += 1;
        log.failing = Some((SystemTime::now(), why));
    }

    /// The record as it stands.
    pub(crate) fn log(&self) -> ReloadLog {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
