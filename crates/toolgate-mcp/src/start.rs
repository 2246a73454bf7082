//! start: a gateway from a configuration, in two steps, so that a server can listen before
//! its static catalogs are read.
//!
//! [`Gateway::begin`] is quick: the policy, the pin store, every live upstream starting in the
//! background, and each static catalog as an upstream *starting* (pending, so that early
//! requests wait for it as for any starting server, within `ready_timeout_secs`).
//! [`Loading::finish`] then reads and analyses the catalog files, the slow part for a large
//! catalog; a bad file is still an error naming its key. [`Gateway::start`] does both.

use std::path::PathBuf;
use std::sync::Arc;

use toolgate::Catalog;
use toolgate::config::{Config, Transport};

use crate::gateway::Gateway;
use crate::settings::GatewayError;
use crate::upstream::{self, Kind, State, Upstream};

/// The static catalogs a gateway begun with [`Gateway::begin`] has yet to read.
#[derive(Debug)]
#[must_use = "the static catalogs are read by Loading::finish"]
pub struct Loading {
    gateway: Gateway,
    config: Config,
    catalogs: Vec<(String, PathBuf)>,
}

impl Gateway {
    /// Like [`Gateway::from_config`], with `settings` in place of those of `[gateway]`.
    /// Required tools of the static catalogs that do not fit the budgets are an error here;
    /// a live server whose required tools do not fit fails with that message.
    pub fn start(settings: crate::Settings, config: &Config) -> Result<Gateway, GatewayError> {
        let (gateway, loading) = Gateway::begin(settings, config)?;
        loading.finish()?;
        Ok(gateway)
    }

    /// The quick half of [`Gateway::start`]: everything but reading the static catalogs,
    /// which show as starting until [`Loading::finish`] has read them. Must run inside a
    /// Tokio runtime.
    pub fn begin(settings: crate::Settings, config: &Config) -> Result<(Gateway, Loading), GatewayError> {
        // Before anything starts: a configuration that starts toolgate on itself would start
        // processes without end.
        let serving = crate::itself::refuse(config)?;
        let gateway = Gateway::configured(settings, config.clone())?;
        let mut children = Vec::new();
        let mut catalogs = Vec::new();
        for (name, server) in &config.servers {
            if !server.enabled {
                gateway.add_upstream(Upstream::new(name, Kind::Disabled, None, State::Disabled));
                continue;
            }
            match &server.transport {
                Transport::Catalog { path } => {
                    gateway.add_upstream(Upstream::new(name, Kind::Catalog, None, State::Starting));
                    catalogs.push((name.clone(), path.clone()));
                }
                transport => children.push(upstream::Spec {
                    name: name.clone(),
                    transport: transport.clone(),
                    call_timeout: server.call_timeout,
                    protocol: server.protocol,
                    serving: serving.clone(),
                    masked: gateway.inner.secrets.clone(),
                    caps: gateway.settings().list_caps,
                    oauth: match (&server.oauth, transport) {
                        (Some(oauth), Transport::Http { url, .. }) => {
                            Some(Arc::new(crate::oauth::client::Credentials::new(name, url, oauth.clone())))
                        }
                        _ => None,
                    },
                }),
            }
        }
        gateway.rebuild(None).map_err(|e| GatewayError::policy(&e, config))?;
        gateway.watch_pins();
        for spec in children {
            gateway.spawn_upstream(spec);
        }
        let loading = Loading { gateway: gateway.clone(), config: config.clone(), catalogs };
        Ok((gateway, loading))
    }
}

impl Loading {
    /// Reads every static catalog and serves its tools (one rebuild for all). Blocking: on a
    /// runtime, call it from `spawn_blocking`. A file that cannot be read or parsed, or
    /// required tools that do not fit the budgets, is an error naming the key at fault; the
    /// catalog then serves nothing.
    pub fn finish(self) -> Result<(), GatewayError> {
        let Loading { gateway, config, catalogs } = self;
        let started = std::time::Instant::now();
        for (name, path) in &catalogs {
            match Catalog::from_path(path) {
                Ok(catalog) => {
                    gateway.set_static(name, catalog.tools().iter().map(|t| t.spec().clone()).collect())
                }
                Err(e) => {
                    let message = format!("{e}; fix the catalog file or the `catalog` path");
                    gateway.set_static(name, Vec::new());
                    return Err(GatewayError { key: format!("servers.{name}.catalog"), message });
                }
            }
        }
        if catalogs.is_empty() {
            return Ok(());
        }
        gateway.rebuild(None).map_err(|e| GatewayError::policy(&e, &config))?;
        let tools = gateway.snapshot().catalog.len();
        tracing::info!(tools, ms = started.elapsed().as_millis() as u64, "static catalogs read and indexed");
        Ok(())
    }
}

impl Gateway {
    /// Serves `tools` as the static catalog upstream `name` (no rebuild).
    fn set_static(&self, name: &str, tools: Vec<std::sync::Arc<toolgate::ToolSpec>>) {
        let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(upstream) = pool.get_mut(name) {
            upstream.tools = tools;
            upstream.state = State::Static;
        }
    }
}
