//! start: a gateway from a configuration, in two steps, so that a server can listen before
//! its static catalogs are read.
//!
//! [`GatewayBuilder::begin`] is quick: the policy, the pin store, every live upstream starting in the
//! background, and each static catalog as an upstream *starting* (pending, so that early
//! requests wait for it as for any starting server, within `ready_timeout_secs`).
//! [`Loading::finish`] then reads and analyses the catalog files, the slow part for a large
//! catalog; a bad file is still an error naming its key. [`GatewayBuilder::start`] does both.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, ServerConfig, Transport};
use toolgate::Catalog;

use crate::gateway::{Gateway, Inner};
use crate::settings::{GatewayError, Settings};
use crate::upstream::{self, Kind, State, Upstream};

/// The static catalogs a gateway begun with [`GatewayBuilder::begin`] has yet to read.
#[derive(Debug)]
#[must_use = "the static catalogs are read by Loading::finish"]
pub struct Loading {
    gateway: Gateway,
    config: Config,
    catalogs: Vec<(String, PathBuf)>,
}

/// Builds a [`Gateway`] (`Gateway::builder`): with [`GatewayBuilder::build`] a gateway of
/// static catalogs under a configuration's policy (for tests and the embedded catalog); with
/// [`GatewayBuilder::start`] or [`GatewayBuilder::begin`] one of a configuration's servers.
#[derive(Debug)]
#[must_use = "a builder does nothing until built or started"]
pub struct GatewayBuilder {
    settings: Settings,
    policy: Config,
    catalogs: Vec<(String, Catalog)>,
    remember: bool,
}

impl Gateway {
    /// Builds a gateway with `settings` ([`GatewayBuilder`]): it serves nothing and allows
    /// every tool until the builder is told otherwise.
    pub fn builder(settings: Settings) -> GatewayBuilder {
        GatewayBuilder { settings, policy: Config::default(), catalogs: Vec::new(), remember: false }
    }
}

impl GatewayBuilder {
    /// Applies the policy of `config` (its `[policy]`, `[budget]`, `[servers.*]` rules and
    /// `[profiles.*]`); its servers are started only by [`GatewayBuilder::start`].
    pub fn policy(mut self, config: Config) -> GatewayBuilder {
        self.policy = config;
        self
    }

    /// Serves `catalog` as the static upstream `name`: its tools keep their own server names
    /// and answer "not connected" when called.
    pub fn catalog(mut self, name: &str, catalog: &Catalog) -> GatewayBuilder {
        self.catalogs.push((name.to_owned(), catalog.clone()));
        self
    }

    /// Keeps each live server's listing, and serves a server starting again with what it
    /// listed last time until it lists again (one HMAC-authenticated file a server, beside the
    /// index cache or in the data directory's `listings`): a client that does not wait for its
    /// servers is answered at once, with their tools named. For a
    /// gateway that serves clients (`toolgate serve`); a gateway asked to report what its
    /// servers list now (`doctor`) leaves it off.
    pub fn remember_listings(mut self) -> GatewayBuilder {
        self.remember = true;
        self
    }

    /// The gateway, serving the catalogs given. Fails when `settings.profile` names no profile
    /// of the policy's configuration.
    pub fn build(self) -> Result<Gateway, GatewayError> {
        let gateway = Gateway { inner: Arc::new(Inner::new(self.settings, self.policy)?) };
        for (name, catalog) in &self.catalogs {
            gateway.add_catalog(name, catalog);
        }
        Ok(gateway)
    }

    /// Starts a gateway on `config`, its policy and its servers: static catalogs are read now
    /// (a bad file is an error), stdio and HTTP servers start in the background and show as
    /// pending until they have listed their tools. Required tools of the static catalogs that
    /// do not fit the budgets are an error here; a live server whose required tools do not fit
    /// fails with that message. Must run inside a Tokio runtime.
    pub fn start(self, config: &Config) -> Result<Gateway, GatewayError> {
        let (gateway, loading) = self.begin(config)?;
        loading.finish()?;
        Ok(gateway)
    }

    /// The quick half of [`GatewayBuilder::start`]: everything but reading the static
    /// catalogs, which show as starting until [`Loading::finish`] has read them. Must run
    /// inside a Tokio runtime.
    pub fn begin(self, config: &Config) -> Result<(Gateway, Loading), GatewayError> {
        // Before anything starts: a configuration that starts toolgate on itself would start
        // processes without end.
        let serving = crate::upstream::itself::refuse(config)?;
        let remember = self.remember;
        let gateway = GatewayBuilder { policy: config.clone(), ..self }.build()?;
        if remember {
            let store = crate::upstream::remembered::Remembered::open(config.search.index_cache.dir());
            let _ = gateway.inner.remembered.set(store);
        }
        if let Some(lock) = serving.lock {
            let _ = gateway.inner.serving_lock.set(lock);
        }
        let _ = gateway.inner.serving.set(serving.chain);
        let mut children = Vec::new();
        let mut catalogs = Vec::new();
        for (name, server) in &config.servers {
            match gateway.enter_server(name, server, config) {
                Entered::Catalog(path) => catalogs.push((name.clone(), path)),
                Entered::Live(spec) => children.push(spec),
                Entered::Disabled => {}
            }
        }
        gateway.rebuild(None).map_err(|e| GatewayError::policy(&e, config))?;
        gateway.approvals().watch();
        for spec in children {
            gateway.spawn_upstream(spec);
        }
        let loading = Loading { gateway: gateway.clone(), config: config.clone(), catalogs };
        Ok((gateway, loading))
    }
}

/// What entering a server of the configuration in the pool leaves to do.
#[derive(Debug)]
pub(crate) enum Entered {
    /// Nothing: it is disabled.
    Disabled,
    /// Read its catalog file (it shows as starting meanwhile).
    Catalog(PathBuf),
    /// Start it, once the pool's snapshot is rebuilt ([`Gateway::spawn_upstream`]).
    Live(upstream::Spec),
}

impl Gateway {
    /// Enters server `name` of `config` in the pool, as disabled, as a static catalog still to
    /// be read, or as a live server to start (its spec returned).
    pub(crate) fn enter_server(&self, name: &str, server: &ServerConfig, config: &Config) -> Entered {
        if !server.enabled {
            self.add_upstream(Upstream::new(name, Kind::Disabled, None, State::Disabled));
            return Entered::Disabled;
        }
        let transport = match &server.host.transport {
            Transport::Catalog { path } => {
                self.add_upstream(Upstream::new(name, Kind::Catalog, None, State::Starting));
                return Entered::Catalog(path.clone());
            }
            transport => transport,
        };
        let oauth = match (&server.host.oauth, transport) {
            (Some(oauth), Transport::Http { url, .. }) => {
                let issuers = config.host.oauth.as_ref().map(|o| o.issuers.clone()).unwrap_or_default();
                let trust = crate::oauth::client::Trust { issuers };
                Some(Arc::new(crate::oauth::client::Credentials::new(name, url, oauth.clone(), trust)))
            }
            _ => None,
        };
        let current = self.current();
        Entered::Live(upstream::Spec {
            name: name.to_owned(),
            transport: transport.clone(),
            call_timeout: server.host.call_timeout,
            protocol: server.host.protocol,
            serving: self.inner.serving.get().cloned().unwrap_or_else(|| Arc::from("")),
            masked: current.secrets.clone(),
            caps: current.settings.gateway.list_caps,
            oauth,
            stop: self.inner.shutdown.child_token(),
        })
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
            match read_catalog(name, path) {
                Ok(tools) => gateway.serve_static(name, tools),
                Err(e) => {
                    gateway.serve_static(name, Vec::new());
                    return Err(e);
                }
            }
        }
        if catalogs.is_empty() {
            return Ok(());
        }
        gateway.rebuild(None).map_err(|e| GatewayError::policy(&e, &config))?;
        let tools = gateway.snapshot().state.catalog.len();
        tracing::info!(tools, ms = started.elapsed().as_millis() as u64, "static catalogs read");
        Ok(())
    }
}

impl Gateway {
    /// Serves `tools` as the static catalog upstream `name` (no rebuild).
    pub(crate) fn serve_static(&self, name: &str, tools: Vec<Arc<toolgate::ToolSpec>>) {
        let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(upstream) = pool.get_mut(name) {
            upstream.tools = tools;
            upstream.state = State::Static;
        }
    }
}

/// The tools of static catalog server `name`, read from `path` (blocking); a file that cannot
/// be read or parsed is an error naming the server's `catalog` key.
pub(crate) fn read_catalog(
    name: &str,
    path: &std::path::Path,
) -> Result<Vec<Arc<toolgate::ToolSpec>>, GatewayError> {
    Catalog::builder().path(path).and_then(|b| b.into_specs()).map_err(|e| GatewayError {
        key: format!("servers.{name}.catalog"),
        message: format!("{e}; fix the catalog file or the `catalog` path"),
    })
}
