//! reload: a running gateway takes a new configuration ([`Gateway::reconfigure`]) without
//! a restart, on `SIGHUP` or when its file changes ([`watch`]).
//!
//! A new file is checked whole before anything changes: it must parse (the caller's part), the
//! policy must apply, new static catalogs must read, and the served subject's required tools
//! must fit the budgets over what the gateway would then serve. A file that fails keeps the
//! running configuration, and the error goes to the log, the status page and `/metrics`
//! (`toolgate_config_reloads_total{outcome="failed"}`).
//!
//! A file that passes is applied at once. Servers are compared by name: one added starts, one
//! removed stops (its child ends), one whose way of being reached changed (`command`, `url`,
//! `catalog`, `env`, revision, call timeout, OAuth client, `enabled`) restarts; a server whose
//! rules, trust or tool overrides alone changed keeps running and is served under the new ones.
//! Tokens, profiles, policy, limits, overrides, telemetry, search and the `[gateway]`
//! timeouts take effect with the next request (the listing caps with the next server started). Live sessions keep what they loaded, save what
//! the new policy denies: that is neither listed nor callable from the next request on, and a
//! native session whose list changed is told (`list_changed`). The session store, the most
//! sessions, the idle and hibernate times, the audit log and the listing cache are kept as
//! they are until the next start, and named as such (`at_restart`).

mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use toolgate::Policy;
use toolgate::search::IndexBuilder;

use crate::config::{Config, ServerConfig, Transport};
use crate::current::Current;
use crate::gateway::{Gateway, host_settings};
use crate::settings::{GatewayError, Settings};
use crate::snapshot::{Listing, Snapshot};
use crate::start::{Entered, read_catalog};
use crate::upstream::{Kind, State, Upstream};

pub use watch::watch;

/// What a reload applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconfigured {
    /// What changed, one line each (`server github added`, `policy`, `tokens`, …); empty when
    /// the file says what was in force already.
    pub changes: Vec<String>,
    /// Keys the file changed that take effect only at the next start, such as
    /// `gateway.sessions`; the running values are kept meanwhile.
    pub at_restart: Vec<String>,
}

/// How the servers of two configurations differ, by name.
#[derive(Debug, Default)]
struct Plan {
    /// In the new file only, or enabled there.
    added: Vec<String>,
    /// In the old file only.
    removed: Vec<String>,
    /// In both, reached another way: stopped, then started as the new file says.
    restarted: Vec<String>,
    /// In both, reached the same way, with other rules, trust or overrides.
    amended: Vec<String>,
}

impl Plan {
    fn of(old: &Config, new: &Config) -> Plan {
        let mut plan = Plan::default();
        for (name, server) in &new.servers {
            match old.servers.get(name) {
                None => plan.added.push(name.clone()),
                Some(before) if reached_alike(before, server) => {
                    if before != server {
                        plan.amended.push(name.clone());
                    }
                }
                Some(_) => plan.restarted.push(name.clone()),
            }
        }
        plan.removed = old.servers.keys().filter(|n| !new.servers.contains_key(*n)).cloned().collect();
        plan
    }

    /// The servers whose upstream leaves the pool: removed and restarted.
    fn leaving(&self) -> impl Iterator<Item = &String> {
        self.removed.iter().chain(&self.restarted)
    }

    /// The servers entered in the pool anew: added and restarted.
    fn entering(&self) -> impl Iterator<Item = &String> {
        self.added.iter().chain(&self.restarted)
    }

    fn describe(&self, changes: &mut Vec<String>) {
        for (names, what) in [
            (&self.added, "added"),
            (&self.removed, "removed"),
            (&self.restarted, "restarted"),
            (&self.amended, "rules changed"),
        ] {
            changes.extend(names.iter().map(|n| format!("server {n} {what}")));
        }
    }
}

/// Whether two configurations of one server reach it the same way, so that it keeps running.
fn reached_alike(a: &ServerConfig, b: &ServerConfig) -> bool {
    let (x, y) = (&a.host, &b.host);
    a.enabled == b.enabled
        && x.transport == y.transport
        && x.call_timeout == y.call_timeout
        && x.protocol == y.protocol
        && x.oauth == y.oauth
}

/// The keys only a restart applies that differ between `old` and `new`, and `settings` with
/// the running values put back for them.
fn at_restart(old: &Config, new: &Config, settings: &mut Settings, running: &Settings) -> Vec<String> {
    let (was, now) = (&old.host.gateway, &new.host.gateway);
    let mut keys = Vec::new();
    let mut note = |differs: bool, key: &str| {
        if differs {
            keys.push(key.to_owned());
        }
    };
    note(was.sessions != now.sessions, "gateway.sessions");
    note(was.max_sessions != now.max_sessions, "gateway.max_sessions");
    note(was.session_idle != now.session_idle, "gateway.session_idle_secs");
    note(was.session_hibernate != now.session_hibernate, "gateway.session_hibernate_secs");
    note(was.audit_log != now.audit_log, "gateway.audit_log");
    note(old.search.index_cache != new.search.index_cache, "search.index_cache");
    let gateway = &mut settings.gateway;
    let kept = &running.gateway;
    gateway.sessions = kept.sessions.clone();
    gateway.max_sessions = kept.max_sessions;
    gateway.session_idle = kept.session_idle;
    gateway.session_hibernate = kept.session_hibernate;
    gateway.audit_log = kept.audit_log.clone();
    keys
}

/// The sections of the configuration besides its servers that differ, by name.
fn sections_changed(old: &Config, new: &Config, changes: &mut Vec<String>) {
    let (was, now) = (&old.host, &new.host);
    for (differs, what) in [
        (old.policy != new.policy || old.budget != new.budget, "policy"),
        (old.profiles != new.profiles, "profiles"),
        (was.tokens != now.tokens, "tokens"),
        (was.oauth != now.oauth, "oauth"),
        (was.limits != now.limits, "limits"),
        (was.telemetry != now.telemetry, "telemetry"),
        (old.search != new.search || old.models != new.models, "search"),
        (old.exposure != new.exposure || old.defer != new.defer || was.gateway != now.gateway, "gateway"),
    ] {
        if differs {
            changes.push(what.to_owned());
        }
    }
}

impl Gateway {
    /// Applies `config`, served with `settings` (built from it as at start: tokens read,
    /// `--profile` and `--exposure` applied; the ranking is this call's to make from
    /// `[search]`, or to keep when that is unchanged), to the running gateway, or
    /// refuses it, keeping the running configuration and recording why (the log, the status
    /// page, `/metrics`). See the [module](crate::reload) for what changes at once and what
    /// waits for a restart. Reloads run one at a time.
    pub async fn reconfigure(
        &self,
        config: Config,
        settings: Settings,
    ) -> Result<Reconfigured, GatewayError> {
        let _one = self.inner.reloading.lock().await;
        let outcome = self.apply(config, settings).await;
        match &outcome {
            Ok(done) => {
                tracing::info!(
                    changes = %if done.changes.is_empty() { "none".to_owned() } else { done.changes.join("; ") },
                    "configuration reloaded"
                );
                if !done.at_restart.is_empty() {
                    tracing::warn!(
                        "configuration reloaded, but {} take effect only at the next start; the running values are kept",
                        done.at_restart.join(", ")
                    );
                }
                self.inner.reloads.applied(done.changes.clone(), done.at_restart.clone());
                self.inner.metrics.reloaded(true);
            }
            Err(e) => self.reload_failed(&e.to_string()),
        }
        outcome
    }

    /// Records a reload refused before it reached [`Gateway::reconfigure`] (the file did not
    /// parse, a token file could not be read): the running configuration is kept.
    pub fn reload_failed(&self, why: &str) {
        let why = crate::upstream::redact::redact(why, &self.current().secrets);
        tracing::error!("the configuration was not reloaded, the running one is kept: {why}");
        self.inner.reloads.failed(why);
        self.inner.metrics.reloaded(false);
    }

    async fn apply(&self, config: Config, mut settings: Settings) -> Result<Reconfigured, GatewayError> {
        let running = self.current();
        let old = &running.config;
        let _ = crate::upstream::itself::refuse(&config)?;
        // What the process holds for good: the store and its buckets, the grants already given
        // (unless the key changed), how upstreams restart and how long a relist waits.
        settings.sessions = running.settings.sessions.clone();
        if config.host.gateway.grant_key == old.host.gateway.grant_key {
            settings.grants = running.settings.grants.clone();
        }
        settings.restart_backoff = running.settings.restart_backoff;
        settings.relist_wait = running.settings.relist_wait;
        // What is unchanged is not made again: the ranking (a model, maybe, read off the
        // runtime's threads when `[search]` changed) and the OAuth verifier with its keys.
        settings.index = if config.search == old.search {
            running.settings.index.clone()
        } else {
            let search = config.search.clone();
            let built = tokio::task::spawn_blocking(move || IndexBuilder::from_config(&search)).await;
            let built = built.map_err(|e| GatewayError {
                key: "search".into(),
                message: format!("building the ranking failed: {e}"),
            })?;
            built.map_err(|e| GatewayError::ranking(&e, &config.search))?
        };
        if config.host.oauth == old.host.oauth {
            settings.access.oauth = running.settings.access.oauth.clone();
        }
        let at_restart = at_restart(old, &config, &mut settings, &running.settings);
        let policy = Policy::new(&config, settings.profile.as_deref())
            .map_err(|e| GatewayError::policy(&e, &config))?;
        let plan = Plan::of(old, &config);
        let mut catalogs = read_catalogs(&config, &plan).await?;
        let mut changes = Vec::new();
        plan.describe(&mut changes);
        sections_changed(old, &config, &mut changes);
        let next = Current::new(config, settings, &self.inner.metrics, Some(&running))?;
        self.trial(&next, &policy, &plan, &catalogs)?;
        for name in plan.leaving() {
            self.stop_upstream(name).await;
        }
        let host = host_settings(&next.settings);
        let config = next.config.clone();
        {
            // No rebuild reads the new configuration with the old policy, or the other way.
            let _order = self.inner.rebuild_lock.lock().unwrap_or_else(|e| e.into_inner());
            self.set_current(next);
            self.inner.decider.reconfigure(policy, host);
        }
        let mut live = Vec::new();
        for name in plan.entering() {
            let Some(server) = config.servers.get(name) else { continue };
            match self.enter_server(name, server, &config) {
                Entered::Live(spec) => live.push(spec),
                Entered::Catalog(_) => self.serve_static(name, catalogs.remove(name).unwrap_or_default()),
                Entered::Disabled => {}
            }
        }
        // Every session is taken over to the new rules here, and told if its list changed.
        if let Err(e) = self.rebuild(None) {
            tracing::error!("{e}");
        }
        for spec in live {
            self.spawn_upstream(spec);
        }
        Ok(Reconfigured { changes, at_restart })
    }

    /// Whether the gateway could serve `next` under `policy`: the snapshot it would serve once
    /// the leaving servers are gone and the new static catalogs are in (live servers entering
    /// list their tools when they start, and meet the rules then, as at start), with the new
    /// overrides and pinning, must give the served subject a toolbox.
    fn trial(
        &self,
        next: &Current,
        policy: &Policy,
        plan: &Plan,
        catalogs: &BTreeMap<String, Vec<Arc<toolgate::ToolSpec>>>,
    ) -> Result<(), GatewayError> {
        let mut snapshot = {
            let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            let leaving: Vec<&String> = plan.leaving().collect();
            let mut entering = Vec::new();
            for (name, tools) in catalogs {
                let mut upstream = Upstream::new(name, Kind::Catalog, None, State::Static);
                upstream.tools = tools.clone();
                entering.push(upstream);
            }
            let listings: Vec<Listing<'_>> = pool
                .values()
                .filter(|u| !leaving.contains(&&u.name))
                .chain(&entering)
                .map(Upstream::listing)
                .collect();
            Snapshot::build(&listings, policy, &next.overrides)
        };
        if let Some(pins) = &next.pins {
            snapshot.sift(pins);
        }
        self.inner
            .decider
            .trial(policy.clone(), host_settings(&next.settings), snapshot.state)
            .map(drop)
            .map_err(|e| GatewayError::policy(&e, &next.config))
    }
}

/// The tools of every static catalog of `config` that enters the pool, read off the runtime's
/// threads; a file that cannot be read refuses the reload, naming its key.
async fn read_catalogs(
    config: &Config,
    plan: &Plan,
) -> Result<BTreeMap<String, Vec<Arc<toolgate::ToolSpec>>>, GatewayError> {
    let wanted: Vec<(String, std::path::PathBuf)> = plan
        .entering()
        .filter_map(|name| {
            let server = config.servers.get(name).filter(|s| s.enabled)?;
            match &server.host.transport {
                Transport::Catalog { path } => Some((name.clone(), path.clone())),
                _ => None,
            }
        })
        .collect();
    if wanted.is_empty() {
        return Ok(BTreeMap::new());
    }
    let read = tokio::task::spawn_blocking(move || {
        let mut read = BTreeMap::new();
        for (name, path) in wanted {
            let tools = read_catalog(&name, &path)?;
            read.insert(name, tools);
        }
        Ok(read)
    });
    read.await.map_err(|e| GatewayError {
        key: "servers".into(),
        message: format!("reading catalogs failed: {e}"),
    })?
}
