//! gateway: the state every downstream session shares: the upstream pool, the merged catalog
//! with its deferral and index (a snapshot, rebuilt whenever an upstream changes), the
//! compiled argument validators, and the registry of live sessions for the status page.
//!
//! Sessions share nothing else: each downstream connection gets its own
//! [`GatewayServer`] holding its own [`toolgate::Session`].

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use rmcp::RoleServer;
#[allow(deprecated)]
use rmcp::model::LoggingLevel;
use rmcp::service::{Peer, SubscriptionSink};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate::budget::Recency;
use toolgate::config::{BudgetConfig, Config, Exposure, GatewayConfig, ProfileConfig, Transport, glob_match};
use toolgate::defer::{DeferConfig, Deferral};
use toolgate::request::{TOOL_SEARCH, tool_list, tool_search_tool};
use toolgate::{Catalog, Index, Session, Tool, ToolId, ToolSpec};

use crate::offer::{self, Offer};
use crate::passthrough::ResourceRoutes;
use crate::progress::Relay;
use crate::server::GatewayServer;
use crate::upstream::{self, Kind, State, Upstream};
use crate::validate::Validators;

/// The name of the bridge meta-tool that runs a loaded tool.
pub const CALL_TOOL: &str = "call_tool";

/// How the gateway behaves, from `[gateway]` of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `native` (active tools in `tools/list`) or `bridge` (`tool_search` and `call_tool` only).
    pub exposure: Exposure,
    /// When tools are deferred.
    pub defer: DeferConfig,
    /// How long a forwarded call may take unless the server sets its own limit.
    pub call_timeout: Duration,
    /// How long an upstream may take to start and list its tools.
    pub startup_timeout: Duration,
    /// The first wait before restarting an upstream that died (doubling up to a minute);
    /// `None` leaves a dead upstream failed.
    pub restart_backoff: Option<Duration>,
    /// Glob patterns over qualified names that are never offered (`[policy] deny`).
    pub deny: Vec<String>,
    /// The subject served (`--profile`): only the tools it allows are offered, to every session.
    pub profile: Option<ProfileConfig>,
    /// The profiles a session may choose (`[profiles.NAME]`), by the HTTP path
    /// `/mcp/NAME` or the header `X-Toolgate-Profile: NAME`. A session's profile narrows what the
    /// gateway offers; it never widens it.
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// The most tool definitions a session's tool list carries (`[budget] dynamic`, and never
    /// more than `[budget] hard`); the least recently used loaded tools are unloaded to stay
    /// within it.
    pub hard_limit: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::from_config(&GatewayConfig::default())
    }
}

impl Settings {
    /// The settings of a `[gateway]` table.
    pub fn from_config(config: &GatewayConfig) -> Settings {
        Settings {
            exposure: config.exposure,
            defer: config.defer,
            call_timeout: config.call_timeout,
            startup_timeout: config.startup_timeout,
            restart_backoff: Some(Duration::from_secs(1)),
            deny: Vec::new(),
            profile: None,
            profiles: BTreeMap::new(),
            hard_limit: BudgetConfig::default().dynamic.min(BudgetConfig::default().hard),
        }
    }
}

/// A configuration the gateway cannot start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayError {
    /// The configuration key at fault, such as `servers.demo.catalog`.
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for GatewayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for GatewayError {}

/// The merged view of every usable upstream at one moment. Immutable; replaced as a whole.
#[derive(Debug)]
pub(crate) struct Snapshot {
    /// Every tool of every ready or static upstream.
    pub(crate) catalog: Catalog,
    /// Which of them are deferred.
    pub(crate) deferral: Deferral,
    /// The search index over them.
    pub(crate) index: Index,
    /// Upstreams still starting, sorted.
    pub(crate) pending: Vec<String>,
    /// The upstream that serves each tool, by tool id.
    owner: Vec<Arc<str>>,
    /// Per upstream, how many of its tools a session may keep active.
    max_active: HashMap<String, usize>,
}

impl Snapshot {
    /// The upstream serving `id`.
    pub(crate) fn owner(&self, id: ToolId) -> &str {
        &self.owner[id.index()]
    }

    /// How many tools of upstream `owner` a session may keep active, if limited.
    pub(crate) fn max_active(&self, owner: &str) -> Option<usize> {
        self.max_active.get(owner).copied()
    }
}

/// A profile's view (second) and the snapshot it was built from (first).
type View = (Arc<Snapshot>, Arc<Snapshot>);

/// One downstream session as the registry sees it.
#[derive(Debug)]
pub(crate) struct SessionSlot {
    pub(crate) state: Mutex<SessionState>,
    /// The gateway's change counter: a session that ends is a change of the status.
    changes: watch::Sender<u64>,
}

impl SessionSlot {
    /// A slot for a new session of `gateway`, not registered yet.
    pub(crate) fn new(gateway: &Gateway) -> SessionSlot {
        SessionSlot { state: Mutex::new(SessionState::default()), changes: gateway.inner.changes.clone() }
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let registered = self.state.get_mut().map(|s| s.id != 0).unwrap_or(true);
        if registered {
            self.changes.send_modify(|g| *g += 1);
        }
    }
}

/// What a downstream session holds: its active set and how to reach its client.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// The number of the session on the status page (0 until `initialize`).
    pub(crate) id: u64,
    pub(crate) session: Session,
    /// The client's name and version, from `initialize`.
    pub(crate) client: String,
    /// The client, for `notifications/tools/list_changed` (up to protocol 2025-11-25).
    pub(crate) peer: Option<Peer<RoleServer>>,
    /// Open `subscriptions/listen` streams that accepted `tools/list_changed` (2026-07-28).
    pub(crate) subscriptions: Vec<SubscriptionSink>,
    /// A fingerprint of the tool list last served, to tell whether a rebuild changed it.
    pub(crate) listed: Option<u64>,
    /// The profile this session was opened under (`/mcp/NAME` or `X-Toolgate-Profile`).
    pub(crate) profile: Option<String>,
    /// The server instructions, fixed when first asked for so that they stay byte-identical.
    pub(crate) instructions: Option<String>,
    /// When each active tool was last loaded or called, for unloading within the budget.
    pub(crate) recency: Recency,
    /// The least severe log level the client wants relayed (`logging/setLevel`); all if unset.
    #[allow(deprecated)]
    pub(crate) log_level: Option<LoggingLevel>,
}

/// The gateway: shared by every session, cheap to clone.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) settings: Settings,
    pub(crate) pool: Mutex<BTreeMap<String, Upstream>>,
    snapshot: RwLock<Arc<Snapshot>>,
    /// Held for a whole rebuild so that rebuilds publish in the order they read the pool.
    rebuild_lock: Mutex<()>,
    /// Bumped after every rebuild; `settled` waits on it.
    changes: watch::Sender<u64>,
    pub(crate) validators: Validators,
    sessions: Mutex<Vec<Weak<SessionSlot>>>,
    next_session: AtomicU64,
    pub(crate) shutdown: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) tool_search: Tool,
    pub(crate) call_tool: Tool,
    /// Routes of upstream progress notifications back to their clients.
    pub(crate) progress: Arc<Relay>,
    /// Which upstream serves which resource, as last listed.
    pub(crate) resources: Mutex<ResourceRoutes>,
    /// Per session profile, the view of the snapshot it was built from (a cache scoped by the
    /// subject: one profile's view never serves another).
    views: Mutex<HashMap<String, View>>,
}

impl Gateway {
    /// A gateway with no upstreams yet.
    pub fn new(settings: Settings) -> Gateway {
        let empty = Catalog::default();
        let snapshot = Snapshot {
            deferral: Deferral::decide(&empty, &settings.defer),
            index: Index::builder().build(&empty),
            catalog: empty,
            pending: Vec::new(),
            owner: Vec::new(),
            max_active: HashMap::new(),
        };
        Gateway {
            inner: Arc::new(Inner {
                settings,
                pool: Mutex::new(BTreeMap::new()),
                snapshot: RwLock::new(Arc::new(snapshot)),
                rebuild_lock: Mutex::new(()),
                changes: watch::channel(0).0,
                validators: Validators::default(),
                sessions: Mutex::new(Vec::new()),
                next_session: AtomicU64::new(1),
                shutdown: CancellationToken::new(),
                tasks: Mutex::new(Vec::new()),
                tool_search: tool_search_tool(),
                call_tool: call_tool_tool(),
                progress: Arc::new(Relay::default()),
                resources: Mutex::new(ResourceRoutes::default()),
                views: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A gateway serving one static catalog (the embedded one when there is no configuration):
    /// its tools keep their own server names and answer "not connected" when called.
    pub fn from_catalog(settings: Settings, name: &str, catalog: &Catalog) -> Gateway {
        let gateway = Gateway::new(settings);
        gateway.add_catalog(name, catalog);
        gateway
    }

    /// Starts a gateway from a configuration: static catalogs are read now (a bad file is an
    /// error), stdio and HTTP servers start in the background and show as pending until they
    /// have listed their tools. Must run inside a Tokio runtime.
    pub fn from_config(config: &Config) -> Result<Gateway, GatewayError> {
        Gateway::start(Settings::from_config(&config.gateway), config)
    }

    /// Like [`Gateway::from_config`], with `settings` in place of those of `[gateway]`.
    /// The `[policy] deny` patterns of `config` are added to those of `settings`.
    pub fn start(mut settings: Settings, config: &Config) -> Result<Gateway, GatewayError> {
        settings.deny.extend(config.policy.deny.iter().cloned());
        settings.profiles.extend(config.profiles.iter().map(|(k, v)| (k.clone(), v.clone())));
        // Sessions grow up to the dynamic budget; the hard cap is never above it in effect.
        settings.hard_limit = settings.hard_limit.min(config.budget.hard).min(config.budget.dynamic);
        let gateway = Gateway::new(settings);
        // Static catalogs first, so that a bad file fails before any child process starts.
        let mut children = Vec::new();
        for (name, server) in &config.servers {
            let offer = Offer::of(server);
            if !server.enabled {
                gateway.add_upstream(Upstream::new(name, Kind::Disabled, None, State::Disabled));
                continue;
            }
            let mut always_load = server.always_load.clone();
            always_load.extend(server.pinned.iter().cloned());
            match &server.transport {
                Transport::Catalog { path } => {
                    let catalog = Catalog::from_path(path).map_err(|e| GatewayError {
                        key: format!("servers.{name}.catalog"),
                        message: format!("{e}; fix the catalog file or the `catalog` path"),
                    })?;
                    if let Some(problem) = offer.required_error(name, &catalog_specs(&catalog)) {
                        let key =
                            if server.mode == toolgate::config::ServerMode::Auto { "pinned" } else { "mode" };
                        return Err(GatewayError { key: format!("servers.{name}.{key}"), message: problem });
                    }
                    gateway.add_catalog_upstream(name, &catalog, offer, &always_load);
                }
                transport => children.push(upstream::Spec {
                    name: name.clone(),
                    transport: transport.clone(),
                    call_timeout: server.call_timeout,
                    always_load,
                    offer,
                }),
            }
        }
        for spec in children {
            gateway.spawn_upstream(spec);
        }
        gateway.rebuild();
        Ok(gateway)
    }

    /// Adds a static catalog upstream named `name`.
    pub fn add_catalog(&self, name: &str, catalog: &Catalog) {
        self.add_catalog_upstream(name, catalog, Offer::all(), &[]);
    }

    fn add_catalog_upstream(&self, name: &str, catalog: &Catalog, offer: Offer, always_load: &[String]) {
        let specs = catalog
            .tools()
            .iter()
            .map(|t| {
                let mut spec = spec_of(t);
                spec.always_load |= always_load.iter().any(|p| glob_match(p, &spec.name));
                spec
            })
            .collect();
        let mut upstream = Upstream::new(name, Kind::Catalog, None, State::Static);
        upstream.tools = specs;
        upstream.offer = offer;
        self.add_upstream(upstream);
        self.rebuild();
    }

    /// Starts a stdio or HTTP upstream in the background.
    pub(crate) fn spawn_upstream(&self, spec: upstream::Spec) {
        let kind = match spec.transport {
            Transport::Http { .. } => Kind::Http,
            _ => Kind::Stdio,
        };
        let mut upstream = Upstream::new(&spec.name, kind, spec.call_timeout, State::Starting);
        upstream.offer = spec.offer.clone();
        self.add_upstream(upstream);
        let task = tokio::spawn(upstream::run(self.clone(), spec));
        self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()).push(task);
    }

    /// Starts a stdio child process upstream: `command` with `args`, in the background.
    pub fn spawn_stdio(&self, name: &str, command: &str, args: &[&str], call_timeout: Option<Duration>) {
        self.spawn_upstream(upstream::Spec {
            name: name.to_owned(),
            transport: Transport::Stdio {
                command: command.to_owned(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
            call_timeout,
            always_load: Vec::new(),
            offer: Offer::all(),
        });
    }

    fn add_upstream(&self, upstream: Upstream) {
        let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.insert(upstream.name.clone(), upstream);
    }

    /// A downstream MCP server for one new session.
    pub fn server(&self) -> GatewayServer {
        GatewayServer::new(self.clone())
    }

    /// The gateway's settings.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The current merged view.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.inner.snapshot.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The merged view as the subject of `profile` sees it: the current snapshot without the
    /// tools the profile does not allow, with its own deferral and index (built once per
    /// snapshot and profile). `None` is the gateway's own subject. A profile that is not
    /// configured sees nothing (fail-closed).
    pub(crate) fn snapshot_for(&self, profile: Option<&str>) -> Arc<Snapshot> {
        let base = self.snapshot();
        let Some(name) = profile else { return base };
        let mut views = self.inner.views.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((from, view)) = views.get(name)
            && Arc::ptr_eq(from, &base)
        {
            return view.clone();
        }
        let rules = self.inner.settings.profiles.get(name);
        let keep = |t: &Tool| rules.is_some_and(|p| offer::profile_allows(p, t.qualified_name()));
        let mut hidden = 0;
        let (specs, owner): (Vec<ToolSpec>, Vec<Arc<str>>) = base
            .catalog
            .ids()
            .filter_map(|id| {
                let tool = base.catalog.tool(id);
                if keep(tool) {
                    return Some((spec_of(tool), base.owner[id.index()].clone()));
                }
                hidden += 1;
                tracing::debug!(target: "toolgate::audit", subject = name, tool = tool.qualified_name(),
                    rule = %format!("profiles.{name}"), "hidden from the subject");
                None
            })
            .unzip();
        let catalog = catalog_of(&specs).unwrap_or_else(|e| {
            tracing::error!("the view of profile `{name}` is invalid ({e}); it sees nothing");
            Catalog::default()
        });
        let owner = if catalog.is_empty() { Vec::new() } else { owner };
        tracing::debug!(subject = name, visible = catalog.len(), hidden, "built a subject's view");
        let view = Arc::new(self.assemble(catalog, owner, base.pending.clone(), base.max_active.clone()));
        views.insert(name.to_owned(), (base, view.clone()));
        view
    }

    /// The tools the subject of `profile` sees now (the gateway's own subject with `None`):
    /// what `tool_search` of one of its sessions searches. Fails for a profile the configuration
    /// does not define.
    pub fn visible_catalog(&self, profile: Option<&str>) -> Result<Catalog, GatewayError> {
        if let Some(name) = profile
            && !self.inner.settings.profiles.contains_key(name)
        {
            return Err(GatewayError {
                key: format!("profiles.{name}"),
                message: format!("no such profile; known profiles: {}", self.known_profiles()),
            });
        }
        Ok(self.snapshot_for(profile).catalog.clone())
    }

    /// The configured profiles, comma-separated (`none` when there are none), for errors.
    pub(crate) fn known_profiles(&self) -> String {
        let known: Vec<&str> = self.inner.settings.profiles.keys().map(String::as_str).collect();
        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
    }

    /// A snapshot of `catalog`: its deferral and index.
    fn assemble(
        &self,
        catalog: Catalog,
        owner: Vec<Arc<str>>,
        pending: Vec<String>,
        max_active: HashMap<String, usize>,
    ) -> Snapshot {
        let deferral = Deferral::decide(&catalog, &self.inner.settings.defer);
        let index = Index::builder().build(&catalog);
        Snapshot { catalog, deferral, index, pending, owner, max_active }
    }

    /// Waits until no upstream is starting any more (each is ready, failed or static), or
    /// `timeout` passes; returns whether everything settled.
    pub async fn settled(&self, timeout: Duration) -> bool {
        let mut changes = self.inner.changes.subscribe();
        let wait = async {
            loop {
                if self.snapshot().pending.is_empty() {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    /// Waits until `done` holds for the [status](Gateway::status), checking after every
    /// rebuild, or `timeout` passes; returns whether it came to hold.
    pub async fn wait_until(&self, timeout: Duration, done: impl Fn(&Value) -> bool) -> bool {
        let mut changes = self.inner.changes.subscribe();
        let wait = async {
            loop {
                if done(&self.status()) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    /// Stops every upstream (children get their stdin closed, then SIGTERM, then SIGKILL) and
    /// waits for them, at most 10 seconds.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let tasks: Vec<JoinHandle<()>> =
            std::mem::take(&mut *self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(10), all).await.is_err() {
            tracing::warn!("some upstreams did not stop within 10 s");
        }
    }

    /// Rebuilds the merged catalog, deferral and index from the pool and publishes them; tells
    /// native sessions whose tool list changed.
    pub(crate) fn rebuild(&self) {
        let _order = self.inner.rebuild_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut specs: Vec<ToolSpec> = Vec::new();
        let mut owner: Vec<Arc<str>> = Vec::new();
        let mut pending = Vec::new();
        let mut max_active = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        {
            let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            for (name, upstream) in pool.iter() {
                match upstream.state {
                    State::Starting => pending.push(name.clone()),
                    State::Ready | State::Static => {}
                    State::Failed(_) | State::Disabled => continue,
                }
                if let Some(limit) = upstream.offer.max_active {
                    max_active.insert(name.clone(), limit);
                }
                let owner_name: Arc<str> = Arc::from(name.as_str());
                for spec in upstream.tools.iter().filter(|t| upstream.offer.offers(t)) {
                    if spec.name.is_empty() {
                        tracing::warn!(upstream = %name, "a tool without a name is ignored");
                        continue;
                    }
                    if !seen.insert((spec.server.clone(), spec.name.clone())) {
                        tracing::warn!(
                            upstream = %name,
                            "tool `{}` of server `{}` is listed twice (here or by another upstream); \
                             only the first is used",
                            spec.name,
                            spec.server
                        );
                        continue;
                    }
                    let mut spec = spec.clone();
                    spec.always_load |= upstream.offer.requires(&spec);
                    specs.push(spec);
                    owner.push(owner_name.clone());
                }
            }
        }
        let Some((catalog, owner)) = self.merge(specs, owner) else { return };
        let snapshot = Arc::new(self.assemble(catalog, owner, pending, max_active));
        let core = snapshot.catalog.ids().filter(|&id| !snapshot.deferral.is_deferred(id)).count();
        if core + 1 > self.inner.settings.hard_limit {
            tracing::warn!(
                "{core} tools are always loaded (always_load, pinned, or deferral off), more than \
                 [budget] hard = {} allows; mark fewer tools always_load or raise the budget",
                self.inner.settings.hard_limit
            );
        }
        self.inner.views.lock().unwrap_or_else(|e| e.into_inner()).clear();
        *self.inner.snapshot.write().unwrap_or_else(|e| e.into_inner()) = snapshot.clone();
        self.inner.changes.send_modify(|g| *g += 1);
        self.notify_changed_lists();
    }

    /// Builds the merged catalog, without the tools that `[policy] deny` or the profile exclude
    /// (by qualified name, so the catalog is built once to learn the names and again without
    /// them).
    fn merge(&self, specs: Vec<ToolSpec>, owner: Vec<Arc<str>>) -> Option<(Catalog, Vec<Arc<str>>)> {
        let build = |specs: &[ToolSpec]| {
            catalog_of(specs).map_err(|e| {
                tracing::error!("the merged catalog is invalid ({e}); keeping the previous one");
            })
        };
        let catalog = build(&specs).ok()?;
        let settings = &self.inner.settings;
        let kept: Vec<bool> = catalog
            .tools()
            .iter()
            .map(|t| {
                let name = t.qualified_name();
                let rule = if offer::globally_denied(&settings.deny, name) {
                    "policy.deny"
                } else if settings.profile.as_ref().is_some_and(|p| !offer::profile_allows(p, name)) {
                    "--profile"
                } else {
                    return true;
                };
                tracing::debug!(target: "toolgate::audit", subject = "main", tool = name, action = "hidden", rule);
                false
            })
            .collect();
        if kept.iter().all(|k| *k) {
            return Some((catalog, owner));
        }
        let (specs, owner): (Vec<ToolSpec>, Vec<Arc<str>>) =
            specs.into_iter().zip(owner).zip(&kept).filter(|(_, k)| **k).map(|(pair, _)| pair).unzip();
        Some((build(&specs).ok()?, owner))
    }

    /// Sends `notifications/tools/list_changed` to every native session whose tool list is
    /// not what it was last served.
    fn notify_changed_lists(&self) {
        if self.inner.settings.exposure != Exposure::Native {
            return;
        }
        for slot in self.live_sessions() {
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(before) = state.listed else { continue };
            let view = self.snapshot_for(state.profile.as_deref());
            let now = fingerprint(&self.tool_list(&view, &state.session));
            if now == before {
                continue;
            }
            state.listed = None;
            let notice = state.list_changed_notice();
            tokio::spawn(notice);
        }
    }

    /// This session's native tool list under `snapshot`.
    pub(crate) fn tool_list<'a>(&'a self, snapshot: &'a Snapshot, session: &Session) -> Vec<&'a Tool> {
        tool_list(&snapshot.catalog, &snapshot.deferral, session, &self.inner.tool_search)
    }

    /// Registers a downstream session for the status page and for list change notices.
    pub(crate) fn register_session(&self, slot: &Arc<SessionSlot>) {
        {
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.id != 0 {
                return;
            }
            state.id = self.inner.next_session.fetch_add(1, Ordering::Relaxed);
        }
        let mut sessions = self.inner.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|w| w.strong_count() > 0);
        sessions.push(Arc::downgrade(slot));
        self.inner.changes.send_modify(|g| *g += 1);
    }

    pub(crate) fn live_sessions(&self) -> Vec<Arc<SessionSlot>> {
        let mut sessions = self.inner.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|w| w.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// The state of the gateway as the status page shows it: upstreams with their state and
    /// tool counts, and live sessions with their active sets.
    pub fn status(&self) -> Value {
        let snapshot = self.snapshot();
        let servers: Vec<Value> = {
            let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            pool.values().map(Upstream::status).collect()
        };
        let sessions: Vec<Value> = self
            .live_sessions()
            .iter()
            .map(|slot| {
                let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
                json!({
                    "id": state.id,
                    "client": state.client,
                    "profile": state.profile,
                    "active": state.session.active(),
                })
            })
            .collect();
        let deferred = snapshot.catalog.ids().filter(|&id| snapshot.deferral.is_deferred(id)).count();
        json!({
            "exposure": match self.inner.settings.exposure {
                Exposure::Native => "native",
                Exposure::Bridge => "bridge",
            },
            "tools": snapshot.catalog.len(),
            "deferred": deferred,
            "deferral": snapshot.deferral.enabled(),
            "pending_servers": snapshot.pending,
            "validators": self.inner.validators.len(),
            "servers": servers,
            "sessions": sessions,
        })
    }
}

impl SessionState {
    /// Sends `notifications/tools/list_changed` to this session's client, on the path its
    /// protocol version uses: the connection (up to 2025-11-25) or its open subscriptions
    /// (2026-07-28).
    pub(crate) fn list_changed_notice(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let peer = if self.subscriptions.is_empty() { self.peer.clone() } else { None };
        let sinks = self.subscriptions.clone();
        async move {
            if let Some(peer) = peer
                && let Err(e) = peer.notify_tool_list_changed().await
            {
                tracing::debug!("could not send tools/list_changed: {e}");
            }
            for sink in sinks {
                if let Err(e) = sink.notify_tool_list_changed().await {
                    tracing::debug!("could not send tools/list_changed on a subscription: {e}");
                }
            }
        }
    }
}

/// A fingerprint of a tool list: names and definition hashes, in order.
pub(crate) fn fingerprint(tools: &[&Tool]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in tools {
        t.qualified_name().hash(&mut h);
        t.hash().hash(&mut h);
    }
    h.finish()
}

/// The catalog of `specs`.
fn catalog_of(specs: &[ToolSpec]) -> Result<Catalog, toolgate::catalog::CatalogError> {
    specs.iter().cloned().fold(Catalog::builder(), |b, s| b.tool(s)).build()
}

/// Every tool of a catalog as the spec it was built from.
fn catalog_specs(catalog: &Catalog) -> Vec<ToolSpec> {
    catalog.tools().iter().map(spec_of).collect()
}

/// A catalog tool back as the spec it was built from.
fn spec_of(tool: &Tool) -> ToolSpec {
    let mut spec = ToolSpec::mcp(tool.server(), tool.name(), tool.description());
    spec.input_schema = tool.input_schema().clone();
    spec.annotations = tool.annotations().clone();
    spec.origin = tool.origin();
    spec.always_load = tool.always_load();
    spec.should_defer = tool.should_defer();
    spec.search_hint = tool.search_hint().map(str::to_owned);
    spec
}

/// The bridge meta-tool `call_tool {name, arguments}`.
pub fn call_tool_tool() -> Tool {
    Tool::meta(
        CALL_TOOL,
        &format!(
            "Run a tool loaded with {TOOL_SEARCH}. Load it first (tool_search returns its name and input \
             schema), then call call_tool with that name and arguments matching the schema."
        ),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name as tool_search returned it."},
                "arguments": {"type": "object", "description": "The tool's arguments, matching its input schema."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    )
}
