//! gateway: the state every downstream session shares: the upstream pool, the merged catalog
//! snapshot (rebuilt whenever an upstream changes), the library's [`Decider`] and the
//! toolboxes it published over the snapshot, and the registry of live sessions for the status
//! page.
//!
//! Everything a session is shown and everything it may run is decided by its subject's
//! toolbox, which the decider builds; the gateway only hands it each new snapshot. Sessions share
//! nothing else: each downstream connection gets its own
//! [`GatewayServer`](crate::GatewayServer) holding its own [`Conversation`](toolgate::Conversation).

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::config::{Config, Exposure, Transport};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate::toolbox::{Decider, HostSettings, PolicyError, Toolboxes};
use toolgate::{Catalog, Policy, Tool, Toolbox};

use crate::current::Current;
use crate::settings::{GatewayError, Settings};
use crate::snapshot::{Listing, Snapshot};
use crate::upstream::progress::Relay;
use crate::upstream::{self, Kind, State, Upstream};

pub use toolgate::toolbox::{CALL_TOOL, call_tool_tool};

/// Which upstream serves which resource URIs and templates, as last listed.
#[derive(Debug, Default)]
pub(crate) struct ResourceRoutes {
    /// Exact URIs.
    pub(crate) uris: HashMap<String, String>,
    /// The fixed part of each template (before its first `{`), with its upstream.
    pub(crate) templates: Vec<(String, String)>,
}

impl ResourceRoutes {
    /// The upstream serving `uri`: the one that listed it, else the one whose template has
    /// the longest fixed part that `uri` starts with.
    pub(crate) fn owner(&self, uri: &str) -> Option<String> {
        if let Some(owner) = self.uris.get(uri) {
            return Some(owner.clone());
        }
        self.template_owner(uri)
    }

    /// The upstream whose template has the longest fixed part that `uri` (a URI or a
    /// template) starts with.
    pub(crate) fn template_owner(&self, uri: &str) -> Option<String> {
        self.templates
            .iter()
            .filter(|(prefix, _)| !prefix.is_empty() && uri.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, owner)| owner.clone())
    }
}

/// Arguments a client adds to every tool's schema for its own use and then sends along, by a
/// word of the client's `clientInfo.name` (lower case). Gemini CLI adds `wait_for_previous` to
/// every MCP tool and passes it on; toolgate drops it before the gate, so that a schema that
/// allows no other properties (`tool_search`'s, or an upstream's) does not refuse the call.
pub const INJECTED_ARGUMENTS: &[(&str, &str)] = &[("gemini-cli", "wait_for_previous")];

/// Clients (by a word of their name) that do not show their model the server's instructions,
/// where toolgate's announcement of the deferred tools goes: their `tool_search` carries it
/// instead ([`toolgate::Conversation::announce_in_tool_search`]). GitHub Copilot CLI 1.0.102
/// reads the tools, never the instructions (seen in its model's requests).
pub const INSTRUCTIONS_UNREAD: &[&str] = &["copilot-cli"];

/// One subject's view: the snapshot and the toolbox the decider built over it.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) toolbox: Arc<Toolbox>,
}

/// What the gateway serves now: the merged snapshot and every subject's toolboxes over it,
/// replaced together.
#[derive(Debug)]
struct Published {
    snapshot: Arc<Snapshot>,
    toolboxes: Arc<Toolboxes>,
}

impl View {
    /// The upstream serving a tool of this view.
    pub(crate) fn owner(&self, tool: &Tool) -> Option<&str> {
        self.snapshot.owner(tool.qualified_name())
    }
}

pub(crate) use crate::session::{Busy, SessionSlot, SessionState, Sessions};

/// The gateway: shared by every session, cheap to clone.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    /// The configuration in force, replaced whole by a reload (`reload.rs`).
    current: RwLock<Arc<Current>>,
    /// What the operator is told of reloads.
    pub(crate) reloads: crate::current::Reloads,
    /// Held for a whole reload, so that reloads apply one at a time.
    pub(crate) reloading: tokio::sync::Mutex<()>,
    /// Decides, over each snapshot, what every subject sees and may run (the library's).
    pub(crate) decider: Decider,
    pub(crate) pool: Mutex<BTreeMap<String, Upstream>>,
    published: RwLock<Published>,
    /// Held for a whole rebuild so that rebuilds publish in the order they read the pool.
    pub(crate) rebuild_lock: Mutex<()>,
    /// Rebuilds asked for, and how many of them the published snapshot answers ([`Rebuilds`]).
    rebuilds: Rebuilds,
    /// Bumped after every rebuild; `settled` waits on it.
    pub(crate) changes: watch::Sender<u64>,
    sessions: Sessions,
    pub(crate) shutdown: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The task of each live upstream, and what stops it alone (a reload that removes or
    /// changes it).
    pub(crate) running: Mutex<HashMap<String, Running>>,
    /// Routes of upstream progress notifications back to their clients.
    pub(crate) progress: Arc<Relay>,
    /// The calls in flight to each upstream, to route an upstream's questions to their client.
    pub(crate) inflight: Arc<crate::upstream::elicit::InFlight>,
    /// Which upstream serves which resource, as last listed.
    pub(crate) resources: Mutex<ResourceRoutes>,
    /// When the gateway was made: requests wait for starting upstreams only until
    /// `[gateway] ready_timeout_secs` after it.
    pub(crate) started: std::time::Instant,
    /// What the operator sees counted (`/metrics`) and the recent refusals.
    pub(crate) metrics: crate::metrics::Metrics,
    /// Signs the status page's tokens ([`crate::operator::approval`]).
    pub(crate) page_secret: [u8; 32],
    /// The configuration file, locked (shared) while this gateway serves it, so that a gateway
    /// its servers start on the same file knows it ([`crate::upstream::itself`]).
    pub(crate) serving_lock: std::sync::OnceLock<std::fs::File>,
    /// The configurations served above and by this gateway, for a child's environment
    /// ([`crate::upstream::itself::SERVING`]).
    pub(crate) serving: std::sync::OnceLock<Arc<str>>,
    /// The places of HTTP sessions, `max_sessions` of them ([`crate::session::Seat`]).
    pub(crate) seats: Arc<tokio::sync::Semaphore>,
    /// Where servers' last listings are kept, when this gateway remembers them
    /// ([`crate::upstream::remembered`]).
    pub(crate) remembered: std::sync::OnceLock<Option<crate::upstream::remembered::Remembered>>,
    /// The configuration file the gateway serves, if any.
    pub(crate) source: Option<std::path::PathBuf>,
}

/// A live upstream's task and what stops it alone.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) stop: CancellationToken,
    pub(crate) task: JoinHandle<()>,
}

/// The numbers that coalesce rebuilds: each caller of [`Gateway::rebuild`] takes the next one
/// after its change (a server's listing, a reload's policy) is made, and a rebuild reads the
/// latest before it reads the pool, so the snapshot it publishes holds every change numbered up
/// to it. A caller whose number a published snapshot covers has nothing left to build.
#[derive(Debug, Default)]
struct Rebuilds {
    /// The last number taken.
    asked: AtomicU64,
    /// The last number a published snapshot covers.
    answered: AtomicU64,
}

impl Rebuilds {
    /// Takes the next number.
    fn ask(&self) -> u64 {
        self.asked.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The last number taken.
    fn asked(&self) -> u64 {
        self.asked.load(Ordering::SeqCst)
    }

    /// Whether a published snapshot covers `ticket`.
    fn answered(&self, ticket: u64) -> bool {
        self.answered.load(Ordering::SeqCst) >= ticket
    }

    /// A snapshot covering every number up to `covers` is published (under the rebuild lock,
    /// so in order).
    fn answer(&self, covers: u64) {
        self.answered.fetch_max(covers, Ordering::SeqCst);
    }
}

impl Inner {
    /// The state of a gateway with no upstreams yet, applying the policy of `config` (its
    /// `[policy]`, `[budget]`, `[servers.*]` rules and `[profiles.*]`). Fails when
    /// `settings.profile` names no profile of `config`.
    pub(crate) fn new(settings: Settings, config: Config) -> Result<Inner, GatewayError> {
        let root = Policy::new(&config, settings.profile.as_deref())
            .map_err(|e| GatewayError::policy(&e, &config))?;
        let decider = Decider::new(root, host_settings(&settings));
        let settings_max_sessions = settings.gateway.max_sessions;
        let metrics = crate::metrics::Metrics::default();
        let source = config.source.clone();
        let current = Current::new(config, settings, &metrics, None)?;
        let published = Published { snapshot: Arc::default(), toolboxes: Arc::new(decider.empty()) };
        Ok(Inner {
            current: RwLock::new(Arc::new(current)),
            reloads: crate::current::Reloads::default(),
            reloading: tokio::sync::Mutex::new(()),
            decider,
            pool: Mutex::new(BTreeMap::new()),
            published: RwLock::new(published),
            rebuild_lock: Mutex::new(()),
            rebuilds: Rebuilds::default(),
            changes: watch::channel(0).0,
            sessions: Sessions::default(),
            shutdown: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
            running: Mutex::default(),
            progress: Arc::new(Relay::default()),
            inflight: Arc::default(),
            resources: Mutex::new(ResourceRoutes::default()),
            started: std::time::Instant::now(),
            metrics,
            page_secret: toolgate::secret::random_secret(),
            serving_lock: std::sync::OnceLock::new(),
            serving: std::sync::OnceLock::new(),
            remembered: std::sync::OnceLock::new(),
            source,
            seats: Arc::new(tokio::sync::Semaphore::new(
                settings_max_sessions.min(tokio::sync::Semaphore::MAX_PERMITS),
            )),
        })
    }
}

/// Waits, on a blocking thread, until `toolbox`'s tools are indexed (at once when they are):
/// a search that waited on one of the runtime's threads would hold up the other requests that
/// thread serves.
pub(crate) async fn indexed(toolbox: &Arc<Toolbox>) {
    if !toolbox.is_indexed() {
        let toolbox = toolbox.clone();
        // A build that panicked is built again by the search, which reports it.
        let _ = tokio::task::spawn_blocking(move || toolbox.wait_for_index()).await;
    }
}

/// Gives `then` the tokens of a full load of `toolbox`'s visible tools: at once if they were
/// counted, else once they are, on a blocking thread after the index (tokenizing every
/// definition takes seconds for a large catalog, which no answer waits for, and a search
/// waits for the index).
pub(crate) fn with_full_load(toolbox: &Arc<Toolbox>, then: impl FnOnce(usize) + Send + 'static) {
    if let Some(full) = toolbox.about().counted_full_load_tokens() {
        return then(full);
    }
    let toolbox = toolbox.clone();
    let count = move || {
        toolbox.wait_for_index();
        then(toolbox.about().full_load_tokens());
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(count)),
        Err(_) => count(),
    }
}

/// The tokens of a full load of `toolbox`'s visible tools if they were counted; else `None`,
/// and they are counted ([`with_full_load`]).
pub(crate) fn full_load_tokens(toolbox: &Arc<Toolbox>) -> Option<usize> {
    let counted = toolbox.about().counted_full_load_tokens();
    if counted.is_none() {
        with_full_load(toolbox, |_| {});
    }
    counted
}

/// How the decider builds toolboxes under `settings`: each index on a thread of its own, so
/// that a snapshot is served (`initialize`, `tools/list`, calls) while its tools are indexed,
/// and only a search waits for them.
pub(crate) fn host_settings(settings: &Settings) -> HostSettings {
    HostSettings {
        defer: settings.defer,
        exposure: settings.exposure,
        index: settings.index.clone(),
        index_in_background: true,
    }
}

impl Gateway {
    /// The span of a client's request named `name` (a `tools/call` or `tools/list`), a child of
    /// the client's `traceparent` if it sent one; it records nothing without traces.
    pub(crate) fn request_span(&self, name: &str, traceparent: Option<&str>) -> crate::telemetry::Span {
        match &self.current().tracer {
            Some(tracer) => tracer.request(name, traceparent),
            None => crate::telemetry::Span::none(),
        }
    }

    /// The call of `tool` with `arguments` in its upstream's terms: the upstream's own name for
    /// it, and the arguments with what the operator fixed or defaulted
    /// ([`crate::overrides::ToolOverrides::upstream_call`]); a call that sets a fixed parameter
    /// is an error naming it.
    pub(crate) fn upstream_call(
        &self,
        tool: &toolgate::Tool,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<(String, Option<serde_json::Map<String, serde_json::Value>>), String> {
        match self.current().overrides.get(tool.server()) {
            Some(overrides) => overrides.upstream_call(tool.name(), arguments),
            None => Ok((tool.name().to_owned(), arguments)),
        }
    }

    /// Adds a static catalog upstream named `name`; its tools keep their own server names.
    pub fn add_catalog(&self, name: &str, catalog: &Catalog) {
        let mut upstream = Upstream::new(name, Kind::Catalog, None, State::Static);
        upstream.tools = catalog.tools().iter().map(|t| t.spec().clone()).collect();
        self.add_upstream(upstream);
        if let Err(e) = self.rebuild(Some(name)) {
            tracing::error!("{e}");
        }
    }

    /// Starts a stdio or HTTP upstream in the background.
    pub(crate) fn spawn_upstream(&self, spec: upstream::Spec) {
        let kind = match spec.transport {
            Transport::Http { .. } => Kind::Http,
            _ => Kind::Stdio,
        };
        let mut upstream = Upstream::new(&spec.name, kind, spec.call_timeout, State::Starting);
        if let Some(store) = self.inner.remembered.get().and_then(Option::as_ref) {
            let source = self.inner.source.as_deref();
            let file = store.path(source, &spec.name, &spec.transport);
            if let Some(tools) = store.load(&file).filter(|t| !t.is_empty()) {
                tracing::info!(upstream = %spec.name, tools = tools.len(), "serving its tools as it listed them last time until it lists them again");
                upstream.tools = tools;
                upstream.remembered = true;
            }
            upstream.listing_file = Some(file);
        }
        let remembered = upstream.remembered;
        self.add_upstream(upstream);
        let mut built = self.rebuild(None);
        if let (Err(e), true) = (&built, remembered) {
            // The last listing no longer fits the rules as they are now: the server starts from
            // nothing, and its own listing meets the rules when it comes.
            tracing::warn!(upstream = %spec.name, "its last listing is not served: {e}");
            let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(u) = pool.get_mut(&spec.name) {
                u.forget_tools();
            }
            drop(pool);
            built = self.rebuild(None);
        }
        if let Err(e) = built {
            tracing::error!("{e}");
        }
        let (name, stop) = (spec.name.clone(), spec.stop.clone());
        let task = tokio::spawn(upstream::run(self.clone(), spec));
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner()).insert(name, Running { stop, task });
    }

    /// Stops live upstream `name` and waits for it (its child gets its stdin closed, then
    /// SIGTERM, then SIGKILL), at most 10 seconds, then forgets it: its tools leave with the
    /// next rebuild. Nothing when it is not running.
    pub(crate) async fn stop_upstream(&self, name: &str) {
        let running = self.inner.running.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
        if let Some(Running { stop, mut task }) = running {
            stop.cancel();
            if tokio::time::timeout(Duration::from_secs(10), &mut task).await.is_err() {
                tracing::warn!(upstream = %name, "did not stop within 10 s; abandoned");
                task.abort();
            }
        }
        self.inner.pool.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
    }

    /// Keeps a background task of the gateway, for [`Gateway::shutdown`] to wait on.
    pub(crate) fn track(&self, task: JoinHandle<()>) {
        self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()).push(task);
    }

    pub(crate) fn add_upstream(&self, upstream: Upstream) {
        let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.insert(upstream.name.clone(), upstream);
    }

    /// The gateway's settings now (a reload replaces them): read them once for what one
    /// stage of a request does.
    pub fn settings(&self) -> Arc<Settings> {
        self.current().settings.clone()
    }

    /// The configuration in force.
    pub(crate) fn current(&self) -> Arc<Current> {
        self.inner.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Puts `current` in force.
    pub(crate) fn set_current(&self, current: Current) {
        *self.inner.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(current);
    }

    /// The current merged snapshot.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.inner.published.read().unwrap_or_else(|e| e.into_inner()).snapshot.clone()
    }

    /// The view of `profile`'s subject (`None`: the served subject) of the current snapshot:
    /// its toolbox, built once per snapshot and subject by the decider. A profile that is not
    /// configured, or whose policy cannot be applied, sees nothing (fail-closed).
    pub(crate) fn view(&self, profile: Option<&str>, exposure: Exposure) -> View {
        let (snapshot, toolboxes) = self.published();
        View { snapshot, toolbox: toolboxes.get(profile, exposure) }
    }

    /// The view of `profile`'s subject for requests with no session (2026-07-28 over HTTP):
    /// bridge exposure whose `call_tool` takes the grant `tool_search` gives (native, listing
    /// every tool, when nothing is deferred).
    pub(crate) fn granted_view(&self, profile: Option<&str>) -> View {
        let (snapshot, toolboxes) = self.published();
        View { snapshot, toolbox: toolboxes.granted(profile) }
    }

    /// The current snapshot and the decider's toolboxes over it, taken together; the lock is
    /// not held while a toolbox is built from them.
    fn published(&self) -> (Arc<Snapshot>, Arc<Toolboxes>) {
        let published = self.inner.published.read().unwrap_or_else(|e| e.into_inner());
        (published.snapshot.clone(), published.toolboxes.clone())
    }

    /// Whether requests stop waiting for starting upstreams: none is starting, or
    /// `[gateway] ready_timeout_secs` has passed since the gateway started.
    pub(crate) fn is_ready(&self) -> bool {
        self.inner.started.elapsed() >= self.settings().gateway.ready_timeout
            || self.snapshot().state.starting.is_empty()
    }

    /// Waits for upstreams still starting, until `[gateway] ready_timeout_secs` after the gateway
    /// started (a server that hangs at start delays the first requests, never every request),
    /// and `most` at the longest (`Duration::MAX`: no limit of its own).
    pub(crate) async fn ready_within(&self, most: Duration) {
        let left =
            self.settings().gateway.ready_timeout.saturating_sub(self.inner.started.elapsed()).min(most);
        if !left.is_zero() {
            self.settled(left).await;
        }
    }

    /// Waits until no upstream is starting any more (each is ready, failed or static), or
    /// `timeout` passes; returns whether everything settled.
    pub async fn settled(&self, timeout: Duration) -> bool {
        let mut changes = self.inner.changes.subscribe();
        let wait = async {
            loop {
                if self.snapshot().state.starting.is_empty() {
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
        let mut tasks: Vec<JoinHandle<()>> =
            std::mem::take(&mut *self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        let running = std::mem::take(&mut *self.inner.running.lock().unwrap_or_else(|e| e.into_inner()));
        tasks.extend(running.into_values().map(|r| r.task));
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(10), all).await.is_err() {
            tracing::warn!("some upstreams did not stop within 10 s");
        }
    }

    /// Rebuilds the merged snapshot from the pool and publishes it; tells native sessions
    /// whose tool list changed. When the served subject's required tools no longer fit the
    /// budgets, the upstream to blame (the one the error names, or `changed`, the one whose
    /// listing just changed) fails with that message and the snapshot is built without it;
    /// with nobody to blame (a static catalog, or the budgets alone) the previous snapshot
    /// stays and the error is returned.
    ///
    /// Rebuilds asked for while one runs are coalesced: a caller whose change a snapshot
    /// published since already holds returns at once (`Ok`), so that many servers listing at
    /// once (a gateway starting seventy) cost two rebuilds, not seventy, each an index over
    /// every subject's catalog.
    pub(crate) fn rebuild(&self, changed: Option<&str>) -> Result<(), PolicyError> {
        let ticket = self.inner.rebuilds.ask();
        let _order = self.inner.rebuild_lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.inner.rebuilds.answered(ticket) {
            tracing::debug!(changed, "rebuild: answered by the one before");
            return Ok(());
        }
        let (snapshot, toolboxes, covers) = loop {
            // Read before the pool and the configuration: every change made before this
            // number was taken is in what is read next.
            let covers = self.inner.rebuilds.asked();
            let current = self.current();
            let mut snapshot = {
                let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
                let listings: Vec<Listing<'_>> = pool.values().map(Upstream::listing).collect();
                Snapshot::build(&listings, &self.inner.decider.policy(), &current.overrides)
            };
            if let Some(pins) = &current.pins {
                snapshot.sift(pins);
            }
            match self.inner.decider.publish(snapshot.state.clone()) {
                Ok(toolboxes) => break (snapshot, toolboxes, covers),
                Err(e) => {
                    let culprit = match &e {
                        PolicyError::RequiredOverBudget { server, .. } => {
                            let owner = snapshot.state.catalog.tools().iter().find(|t| t.server() == server);
                            owner.and_then(|t| snapshot.owner(t.qualified_name())).map(str::to_owned)
                        }
                        _ => None,
                    }
                    .or_else(|| changed.map(str::to_owned));
                    let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
                    match culprit.and_then(|name| pool.get_mut(&name)) {
                        Some(u) if !matches!(u.state, State::Failed(_) | State::Static) => {
                            tracing::error!(upstream = %u.name, "{e}");
                            u.fail(e.to_string());
                        }
                        _ => return Err(e),
                    }
                }
            }
        };
        *self.inner.published.write().unwrap_or_else(|e| e.into_inner()) =
            Published { snapshot: Arc::new(snapshot), toolboxes: Arc::new(toolboxes) };
        self.inner.rebuilds.answer(covers);
        tracing::debug!(changed, covers, "rebuild: published");
        self.inner.changes.send_modify(|g| *g += 1);
        self.notify_changed_lists();
        Ok(())
    }

    /// Takes every live session over to the new snapshot (unloading tools whose definitions
    /// changed) and sends `notifications/tools/list_changed` to every native session whose
    /// tool list is not what it was last served.
    fn notify_changed_lists(&self) {
        let configured = self.settings().exposure;
        for slot in self.inner.sessions.live() {
            let (profile, exposure, sessionless) = {
                let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
                let profile = state.profile().map(str::to_owned);
                (profile, state.exposure_under(configured), state.reach().is_sessionless())
            };
            let view = if sessionless {
                self.granted_view(profile.as_deref())
            } else {
                self.view(profile.as_deref(), exposure)
            };
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            let changed = view.toolbox.resume(state.conversation_mut());
            self.inner.metrics.unloaded(changed.len());
            for tool in &changed {
                tracing::info!(target: "toolgate::audit", subject = %view.toolbox.about().subject(), tool = %tool,
                    action = "unloaded", rule = "definition changed", "unloaded");
            }
            // A bridge session's list never changes; the list of requests with no session does
            // when the catalog does.
            if exposure != Exposure::Native && !sessionless {
                continue;
            }
            let Some(before) = state.listener().listed() else { continue };
            if fingerprint(&view.toolbox.preview(state.conversation())) == before {
                continue;
            }
            state.listener_mut().list_changed();
            let notice = state.listener().list_changed_notice();
            tokio::spawn(notice);
        }
    }

    /// Registers a downstream session for the status page and for list change notices.
    pub(crate) fn register_session(&self, slot: &Arc<SessionSlot>) {
        if self.inner.sessions.register(slot) {
            self.inner.metrics.session_opened();
            self.inner.changes.send_modify(|g| *g += 1);
        }
    }

    /// The live sessions.
    pub(crate) fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    /// The decider: what every subject sees and may run, and the configured profiles.
    pub(crate) fn decider(&self) -> &Decider {
        &self.inner.decider
    }
}

/// The configured profiles, comma-separated (`none` when there are none), for errors.
pub(crate) fn known_profiles(decider: &Decider) -> String {
    let known = decider.profiles();
    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
}

/// An exposure as the configuration writes it.
pub(crate) fn exposure_name(exposure: Exposure) -> &'static str {
    match exposure {
        Exposure::Native => "native",
        Exposure::Bridge => "bridge",
    }
}

/// A fingerprint of a tool list: names and definition hashes, in order.
pub(crate) fn fingerprint(tools: &[toolgate::toolbox::Listed<'_>]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in tools {
        t.qualified_name().hash(&mut h);
        t.hash().hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate::ToolSpec;

    /// Servers that list while a rebuild runs are published by one rebuild after it, and each
    /// caller returns only once a snapshot with its change is published.
    #[test]
    fn rebuilds_asked_while_one_runs_are_answered_by_the_next() {
        let gateway = Gateway::builder(Settings::default()).build().unwrap();
        let before = *gateway.inner.changes.borrow();
        let held = gateway.inner.rebuild_lock.lock().unwrap();
        let asked = gateway.inner.rebuilds.asked();
        let callers: Vec<_> = (0..4)
            .map(|i| {
                let gateway = gateway.clone();
                std::thread::spawn(move || {
                    let name = format!("s{i}");
                    let tool = ToolSpec::mcp(&name, "read", "Reads a thing");
                    gateway.add_catalog(&name, &Catalog::builder().tool(tool).build().unwrap());
                    // Returned: its tool is served.
                    assert!(gateway.snapshot().state.catalog.get(&format!("{name}__read")).is_some());
                })
            })
            .collect();
        while gateway.inner.rebuilds.asked() < asked + 4 {
            std::thread::yield_now();
        }
        drop(held);
        for c in callers {
            c.join().unwrap();
        }
        assert_eq!(gateway.snapshot().state.catalog.len(), 4);
        assert_eq!(*gateway.inner.changes.borrow(), before + 1, "one rebuild served all four");
        // A change made after that is rebuilt again.
        gateway
            .add_catalog("late", &Catalog::builder().tool(ToolSpec::mcp("late", "x", "X")).build().unwrap());
        assert_eq!(*gateway.inner.changes.borrow(), before + 2);
        assert_eq!(gateway.snapshot().state.catalog.len(), 5);
    }
}
