//! upstream: here is a configured server, keep it connected, keep its tools listed, and
//! forward calls to it.
//!
//! Each stdio or HTTP upstream runs in its own task: connect (spawn the child, or open the
//! HTTP session), `initialize`, `tools/list` with pagination, then wait for
//! `notifications/tools/list_changed` (re-list) or for the connection to end (mark it failed,
//! and restart it with backoff when the settings ask for it). Every change rebuilds the
//! gateway's merged catalog. A child's stderr goes to the log, never to our stdout.
//!
//! Re-listing is coalesced: at most one listing runs at a time, notices that arrive meanwhile
//! make one more, and two listings are at least [`RELIST_INTERVAL`] apart, so a server that
//! floods `list_changed` costs a few listings a second, not one per notice.
//!
//! Lines on a child's stdout that are not MCP messages are dropped by rmcp's transport; a
//! response to a request nobody sent is dropped too once the session runs, but fails
//! `initialize` when it comes first.
//!
//! A static catalog upstream has no connection: its tools answer that they are not connected.

pub mod convert;
pub(crate) mod elicit;
pub(crate) mod itself;
pub(crate) mod progress;
pub mod redact;
pub(crate) mod remembered;
mod stderr;
pub(crate) mod unreachable;

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::config::{Transport, UpstreamProtocol};
use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock, ElicitRequestParams,
    ElicitResult, ElicitationCapability, FormElicitationCapability, Implementation,
    ProgressNotificationParam, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientInitializeError, NotificationContext, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{
    ClientCacheConfig, ClientHandler, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, ServiceError,
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolgate::ToolSpec;

use crate::snapshot::{Listing, Standing};
use crate::upstream::convert::spec_from_mcp;
use crate::upstream::progress::Relay;
use crate::upstream::redact::redact;
use crate::upstream::stderr::StderrTail;

/// The longest wait between two restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// An upstream that stayed up this long starts the next backoff from the beginning.
const STABLE_AFTER: Duration = Duration::from_secs(30);
/// The shortest time between the start of two listings of one upstream.
pub(crate) const RELIST_INTERVAL: Duration = Duration::from_millis(100);

/// How an upstream is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A static catalog file (or the embedded catalog).
    Catalog,
    /// A child process speaking MCP on stdin/stdout.
    Stdio,
    /// A streamable HTTP endpoint.
    Http,
    /// Configured with `enabled = false`.
    Disabled,
}

/// Where an upstream is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// Connecting or listing its tools; its tools are not searchable yet.
    Starting,
    /// Connected, tools listed.
    Ready,
    /// A static catalog: always there, never connected.
    Static,
    /// Could not start, or died; the reason says which.
    Failed(String),
    /// Turned off in the configuration.
    Disabled,
}

/// One upstream in the pool.
#[derive(Debug)]
pub(crate) struct Upstream {
    pub(crate) name: String,
    kind: Kind,
    pub(crate) state: State,
    /// Its tools as catalog specs (empty unless ready or static).
    pub(crate) tools: Vec<Arc<ToolSpec>>,
    /// The connection, while ready.
    pub(crate) peer: Option<Peer<RoleClient>>,
    /// Its own call timeout, if configured.
    pub(crate) call_timeout: Option<Duration>,
    /// How often it started again after failing.
    pub(crate) restarts: u64,
    /// Why it last failed, kept after it recovers.
    pub(crate) last_error: Option<String>,
    /// When it last began starting, until it is ready.
    pub(crate) starting_since: Option<Instant>,
    /// How long it last took to start and list its tools.
    pub(crate) started_in: Option<Duration>,
    /// Whether `tools` is what it listed last time, served while it starts ([`remembered`]).
    pub(crate) remembered: bool,
    /// Where its listing is kept, when the gateway remembers listings.
    pub(crate) listing_file: Option<std::path::PathBuf>,
}

impl Upstream {
    pub(crate) fn new(name: &str, kind: Kind, call_timeout: Option<Duration>, state: State) -> Upstream {
        Upstream {
            name: name.to_owned(),
            kind,
            tools: Vec::new(),
            peer: None,
            call_timeout,
            restarts: 0,
            last_error: None,
            starting_since: (state == State::Starting).then(Instant::now),
            started_in: None,
            remembered: false,
            listing_file: None,
            state,
        }
    }

    /// What the snapshot needs of this upstream.
    pub(crate) fn listing(&self) -> Listing<'_> {
        let standing = match &self.state {
            State::Starting if self.remembered => Standing::Remembered,
            State::Starting => Standing::Starting,
            State::Ready | State::Static => Standing::Serving,
            State::Failed(reason) => Standing::Failed(reason),
            State::Disabled => Standing::Disabled,
        };
        Listing { upstream: &self.name, standing, tools: &self.tools }
    }

    /// Drops the tools it serves, its last listing among them ([`remembered`]).
    pub(crate) fn forget_tools(&mut self) {
        self.tools.clear();
        self.remembered = false;
    }

    /// Marks the upstream failed: it serves nothing until it restarts, and its next start is
    /// a start from nothing, not its last listing.
    pub(crate) fn fail(&mut self, reason: String) {
        self.forget_tools();
        self.last_error = Some(reason.clone());
        self.state = State::Failed(reason);
    }

    /// The upstream as the status page shows it.
    pub(crate) fn status(&self) -> Value {
        let (state, error) = match &self.state {
            State::Starting => ("starting", None),
            State::Ready => ("ready", None),
            State::Static => ("static", None),
            State::Failed(reason) => ("failed", Some(reason.as_str())),
            State::Disabled => ("disabled", None),
        };
        let transport = match self.kind {
            Kind::Catalog => "catalog",
            Kind::Stdio => "stdio",
            Kind::Http => "http",
            Kind::Disabled => "disabled",
        };
        let mut v = json!({
            "name": self.name,
            "transport": transport,
            "state": state,
            "error": error,
            "last_error": self.last_error,
            "restarts": self.restarts,
            "tools": self.tools.len(),
            "start_ms": self.started_in.map(|d| d.as_millis() as u64),
        });
        if self.kind == Kind::Catalog {
            let mut by_server: BTreeMap<&str, usize> = BTreeMap::new();
            for t in &self.tools {
                *by_server.entry(&t.server).or_default() += 1;
            }
            v["catalog_servers"] = json!(by_server);
        }
        v
    }
}

/// What the pool needs to start an upstream.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) protocol: UpstreamProtocol,
    /// The configurations served above and by this gateway, for a child's environment
    /// ([`crate::upstream::itself::SERVING`]).
    pub(crate) serving: Arc<str>,
    /// The gateway's own secrets (every `${VAR}` value of the configuration among them), masked
    /// in what this server's failures and stderr show too.
    pub(crate) masked: Arc<[String]>,
    /// The most its listing may hold.
    pub(crate) caps: crate::config::ListCaps,
    /// Where its access tokens come from, for an HTTP server with `[servers.NAME.oauth]`.
    pub(crate) oauth: Option<Arc<crate::oauth::client::Credentials>>,
    /// Cancelled to stop it: when the gateway shuts down, or a reload removes or changes it.
    pub(crate) stop: CancellationToken,
}

impl Spec {
    /// The values that must never be shown of what this server says: its configuration's own
    /// and the gateway's (a URL's query values and password are masked wherever a URL is shown).
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut secrets = self.transport.secrets();
        secrets.extend(self.masked.iter().cloned());
        secrets
    }
}

/// The `tools/list_changed` notices of one connection: how many came, and a wake-up for the
/// task that lists again.
#[derive(Debug, Default)]
struct Relist {
    notices: AtomicU64,
    wake: Notify,
}

impl Relist {
    /// Records one notice. `notify_one` keeps at most one wake-up, however many notices come.
    fn notice(&self) {
        self.notices.fetch_add(1, Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// How many notices came so far.
    fn count(&self) -> u64 {
        self.notices.load(Ordering::SeqCst)
    }
}

/// What an upstream task needs of the gateway that owns it. The upstream layer knows nothing
/// else of the gateway: it reports what happened and relays what it heard.
// Logging is deprecated in the newest protocol version but relayed for the older ones.
#[allow(deprecated)]
pub(crate) trait Host: Clone + Send + Sync + 'static {
    /// Records an upstream's new state (and its tools and connection when given).
    fn set_state(
        &self,
        name: &str,
        state: State,
        tools: Option<Vec<ToolSpec>>,
        peer: Option<Peer<RoleClient>>,
    );
    /// Tells a newly connected upstream the log level the sessions want.
    fn pass_log_level(&self, name: &str, peer: &Peer<RoleClient>) -> impl Future<Output = ()> + Send;
    /// Relays a log message of upstream `name`.
    fn relay_log(&self, name: &str, params: rmcp::model::LoggingMessageNotificationParam);
    /// Relays a change of an upstream's prompts (`true`) or resources.
    fn relay_list_changed(&self, prompts: bool);
    /// The first wait before a restart, if upstreams restart.
    fn restart_backoff(&self) -> Option<Duration>;
    /// How long an upstream may take to start and list its tools.
    fn startup_timeout(&self) -> Duration;
    /// Where upstream progress notifications go.
    fn progress(&self) -> Arc<Relay>;
    /// Puts upstream `name`'s question to the user of the call it belongs to, and returns the
    /// answer or why it cannot be asked.
    fn elicit(
        &self,
        name: &str,
        params: ElicitRequestParams,
    ) -> impl Future<Output = Result<ElicitResult, rmcp::ErrorData>> + Send;
}

/// The client side of one upstream connection: hears `tools/list_changed`, and relays
/// progress, log messages and prompt and resource list changes.
#[derive(Clone)]
struct UpstreamClient<H> {
    name: String,
    relist: Arc<Relist>,
    progress: Arc<Relay>,
    host: H,
}

impl<H: Host> ClientHandler for UpstreamClient<H> {
    /// On 2025-11-25 a connection's capabilities are declared once for every session it
    /// serves: elicitation is declared, and a question is put only to a client that declared it
    /// itself ([`crate::upstream::elicit`]). A 2026-07-28 upstream is told each calling client's own.
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::default())
                .with_url(UrlElicitationCapability::default()),
        );
        ClientConfig::new(capabilities, Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let answer = self.host.elicit(&self.name, request).await;
        if let Err(e) = &answer {
            tracing::info!(upstream = %self.name, "a question of the server was not put to a user: {}", e.message);
        }
        answer
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(upstream = %self.name, "the tool list changed; listing it again");
        self.relist.notice();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.relay(&self.name, params).await;
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.host.relay_log(&self.name, params);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.host.relay_list_changed(true);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.host.relay_list_changed(false);
    }
}

type Client<H> = RunningService<RoleClient, UpstreamClient<H>>;

/// How one connection ended.
enum Ended {
    /// The gateway is shutting down.
    Shutdown,
    /// It failed; the reason is for the status page and the log.
    Failed { reason: String, was_ready_for: Option<Duration> },
}

/// Runs one upstream until it is stopped (`spec.stop`): connect, serve, restart with backoff.
pub(crate) async fn run<H: Host>(gateway: H, spec: Spec) {
    let shutdown = spec.stop.clone();
    let first_backoff = gateway.restart_backoff();
    let mut backoff = first_backoff;
    loop {
        let ended = connect_and_serve(&gateway, &spec).await;
        let Ended::Failed { reason, was_ready_for } = ended else { return };
        let reason = redact(&reason, &spec.secrets());
        tracing::warn!(upstream = %spec.name, "{reason}");
        gateway.set_state(&spec.name, State::Failed(reason), None, None);
        let Some(mut wait) = backoff else { return };
        if was_ready_for.is_some_and(|d| d >= STABLE_AFTER) {
            wait = first_backoff.unwrap_or(wait);
        }
        tracing::info!(upstream = %spec.name, "restarting in {} s", wait.as_secs_f32());
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = shutdown.cancelled() => return,
        }
        backoff = Some((wait * 2).min(MAX_BACKOFF));
        gateway.set_state(&spec.name, State::Starting, None, None);
    }
}

/// One connection: start, list, then serve list changes until it ends.
async fn connect_and_serve<H: Host>(gateway: &H, spec: &Spec) -> Ended {
    let shutdown = spec.stop.clone();
    let startup = gateway.startup_timeout();
    let relist = Arc::new(Relist::default());
    let handler = UpstreamClient {
        name: spec.name.clone(),
        relist: relist.clone(),
        progress: gateway.progress(),
        host: gateway.clone(),
    };
    let tail = StderrTail::default();
    let initialized = AtomicBool::new(false);
    let connecting = async {
        let client = connect(handler, spec, &tail).await?;
        initialized.store(true, Ordering::SeqCst);
        client.peer().set_response_cache_config(ClientCacheConfig::disabled()).await;
        let tools = list(client.peer(), spec).await?;
        Ok::<_, String>((client, tools))
    };
    let connected = tokio::select! {
        r = tokio::time::timeout(startup, connecting) => r,
        () = shutdown.cancelled() => return Ended::Shutdown,
    };
    let (client, tools) = match connected {
        Ok(Ok(c)) => c,
        Ok(Err(reason)) => return Ended::Failed { reason: tail.explain(reason).await, was_ready_for: None },
        Err(_) => {
            let phase = match (&spec.transport, initialized.load(Ordering::SeqCst)) {
                (_, true) => {
                    "it answered `initialize` but its `tools/list` did not complete (a page over the \
                     transport's 16 MiB message limit is dropped, so such a server looks like this)"
                }
                (Transport::Stdio { .. }, false) => {
                    "it never answered `initialize` (lines on its stdout that are not MCP messages \
                     are ignored, so a server that logs to stdout looks like this)"
                }
                (_, false) => "it never answered `initialize`",
            };
            let reason = format!(
                "did not start and list its tools within {} s: {phase}; check the command, or raise \
                 gateway.startup_timeout_secs",
                startup.as_secs_f32()
            );
            return Ended::Failed { reason: tail.explain(reason).await, was_ready_for: None };
        }
    };
    tracing::info!(upstream = %spec.name, tools = tools.len(), "ready");
    let peer = client.peer().clone();
    gateway.set_state(&spec.name, State::Ready, Some(tools), Some(peer.clone()));
    if is_modern(&peer) {
        listen_for_changes(gateway, &spec.name, &peer, relist.clone()).await;
    } else {
        gateway.pass_log_level(&spec.name, &peer).await;
    }
    let ready_at = Instant::now();
    let cancel = client.cancellation_token();
    let done = client.waiting();
    tokio::pin!(done);
    // Notices up to this count are covered by a listing that started after them; notices that
    // came during the first listing are not, so they count from zero.
    let mut covered = 0;
    // When the next listing may start, while one is wanted.
    let mut due: Option<tokio::time::Instant> = None;
    let mut listed_at = tokio::time::Instant::from_std(ready_at);
    loop {
        tokio::select! {
            _ = &mut done => {
                let reason = match spec.transport {
                    Transport::Http { .. } => "the server closed the connection",
                    _ => "the connection closed (the server process exited or closed its output)",
                };
                let reason = tail.explain(reason.to_owned()).await;
                return Ended::Failed { reason, was_ready_for: Some(ready_at.elapsed()) };
            }
            () = relist.wake.notified() => {
                if due.is_none() && relist.count() != covered {
                    due = Some(listed_at + RELIST_INTERVAL);
                }
            }
            () = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)), if due.is_some() => {
                due = None;
                covered = relist.count();
                listed_at = tokio::time::Instant::now();
                match tokio::time::timeout(startup, list(&peer, spec)).await {
                    Ok(Ok(tools)) => {
                        tracing::info!(upstream = %spec.name, tools = tools.len(), "tools listed again");
                        gateway.set_state(&spec.name, State::Ready, Some(tools), Some(peer.clone()));
                    }
                    Ok(Err(e)) => tracing::warn!(upstream = %spec.name, "listing tools again failed: {e}"),
                    Err(_) => tracing::warn!(upstream = %spec.name, "listing tools again timed out"),
                }
            }
            () = shutdown.cancelled() => {
                cancel.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(8), done).await;
                return Ended::Shutdown;
            }
        }
    }
}

/// Opens the connection: `server/discover` first, falling back to `initialize` (see
/// [`lifecycle`]). It connects again with `initialize` alone to a server that answers the probe
/// with "no such version" among the ones it lists (a 2025-11-25 server of some SDKs), and to one
/// that answered the probe only after rmcp stopped waiting for it (a 2025-11-25 server slower
/// to start than rmcp's probe waits, as `npx -y` ones are on a busy machine): its refusal of
/// the probe then arrives where the answer to `initialize` belongs, and every new probe would
/// meet the same fate.
async fn connect<H: Host>(
    handler: UpstreamClient<H>,
    spec: &Spec,
    tail: &StderrTail,
) -> Result<Client<H>, String> {
    if spec.protocol == UpstreamProtocol::Legacy {
        return open(handler, spec, tail, ClientLifecycleMode::Initialize)
            .await
            .map_err(Refused::into_reason);
    }
    match open(handler.clone(), spec, tail, lifecycle()).await {
        Err(Refused::NoCommonVersion(why) | Refused::LateProbeAnswer(why)) => {
            tracing::info!(upstream = %spec.name, "{why}; connecting again with `initialize`");
            open(handler, spec, tail, ClientLifecycleMode::Initialize).await.map_err(Refused::into_reason)
        }
        other => other.map_err(Refused::into_reason),
    }
}

/// Why a connection could not be opened.
enum Refused {
    /// The server's `server/discover` offered no revision the probe asked for.
    NoCommonVersion(String),
    /// The server answered the `server/discover` probe after it was given up, in place of the
    /// answer to `initialize`.
    LateProbeAnswer(String),
    Other(String),
}

impl Refused {
    fn into_reason(self) -> String {
        match self {
            Refused::NoCommonVersion(why) | Refused::LateProbeAnswer(why) | Refused::Other(why) => why,
        }
    }
}

impl From<String> for Refused {
    fn from(why: String) -> Refused {
        Refused::Other(why)
    }
}

/// Opens the connection with `lifecycle`.
async fn open<H: Host>(
    handler: UpstreamClient<H>,
    spec: &Spec,
    tail: &StderrTail,
    lifecycle: ClientLifecycleMode,
) -> Result<Client<H>, Refused> {
    // An error answering another request than `initialize` is the probe's, late, only when
    // there was a probe.
    let probed = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    match &spec.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env).env(crate::upstream::itself::SERVING, &*spec.serving).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("could not start `{command}`: {e}; check `command` and `args`"))?;
            if let Some(stderr) = stderr {
                tail.follow(spec.name.clone(), stderr, spec.secrets());
            }
            handler.serve_with_lifecycle(transport, lifecycle).await.map_err(|e| match e {
                ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
                    Refused::NoCommonVersion(e.to_string())
                }
                ClientInitializeError::UncorrelatedErrorResponse { .. } if probed => {
                    Refused::LateProbeAnswer(format!(
                        "the server answered the `server/discover` probe only after it was given up ({e})"
                    ))
                }
                ClientInitializeError::ConflictInitResponseId(expected, got) => Refused::Other(format!(
                    "initialize failed: the server sent a response to request {got}, which was never \
                     sent, where the answer to `initialize` (request {expected}) belonged; its stdout \
                     must carry MCP messages only"
                )),
                e => {
                    let e = e.to_string();
                    Refused::Other(if e.contains("Broken pipe") || e.to_lowercase().contains("closed") {
                        "the process exited before it answered `initialize`".to_owned()
                    } else {
                        format!("initialize failed: {e}")
                    })
                }
            })
        }
        Transport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (k, v) in headers {
                let name = HeaderName::try_from(k.as_str())
                    .map_err(|e| format!("header `{k}` is not a valid header name: {e}"))?;
                let value = HeaderValue::try_from(v.as_str())
                    .map_err(|e| format!("header `{k}` has a value that is not valid in HTTP: {e}"))?;
                custom.insert(name, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let refused = |e: ClientInitializeError| match e {
                ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
                    Refused::NoCommonVersion(format!("{url} answered `server/discover`: {e}"))
                }
                ClientInitializeError::UncorrelatedErrorResponse { .. } if probed => {
                    Refused::LateProbeAnswer(format!(
                        "{url} answered the `server/discover` probe only after it was given up ({e})"
                    ))
                }
                e => Refused::Other(format!("initialize failed at {url}: {e}")),
            };
            match &spec.oauth {
                Some(credentials) => {
                    // The token is got first, so a server that cannot have one fails with why.
                    credentials.token(false).await.map_err(Refused::Other)?;
                    let client = crate::oauth::client::Authorized {
                        http: reqwest::Client::new(),
                        credentials: credentials.clone(),
                    };
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    handler.serve_with_lifecycle(transport, lifecycle).await.map_err(refused)
                }
                None => {
                    let transport = StreamableHttpClientTransport::from_config(config);
                    handler.serve_with_lifecycle(transport, lifecycle).await.map_err(refused)
                }
            }
        }
        Transport::Catalog { .. } => Err(Refused::Other("a static catalog has no connection".to_owned())),
    }
}

/// How toolgate opens a connection: `server/discover` at 2026-07-28 first, and `initialize`
/// at 2025-11-25 for a server that does not know it (the probe costs one round trip).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// Whether the connection speaks 2026-07-28 or later.
pub(crate) fn is_modern(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| !info.protocol_version.has_initialize())
}

/// On 2026-07-28 list changes come on a subscription, not on the connection: opens one (for
/// what the server said it announces) and turns what it hears into the same re-listing and
/// relaying as a 2025-11-25 server's notices. Ends with the connection.
async fn listen_for_changes<H: Host>(gateway: &H, name: &str, peer: &Peer<RoleClient>, relist: Arc<Relist>) {
    let Some(caps) = peer.peer_info().map(|info| info.capabilities.clone()) else { return };
    let mut filter = SubscriptionFilter::builder();
    if caps.tools.as_ref().is_some_and(|t| t.list_changed == Some(true)) {
        filter = filter.tools_list_changed();
    }
    if caps.prompts.as_ref().is_some_and(|p| p.list_changed == Some(true)) {
        filter = filter.prompts_list_changed();
    }
    if caps.resources.as_ref().is_some_and(|r| r.list_changed == Some(true)) {
        filter = filter.resources_list_changed();
    }
    let filter = filter.build();
    if filter == SubscriptionFilter::default() {
        return;
    }
    let mut subscription = match peer.listen(filter).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(upstream = %name, "could not subscribe to its list changes: {e}");
            return;
        }
    };
    let gateway = gateway.clone();
    let name = name.to_owned();
    tokio::spawn(async move {
        while let Ok(Some(notice)) = subscription.next().await {
            match notice {
                ServerNotification::ToolListChangedNotification(_) => relist.notice(),
                ServerNotification::PromptListChangedNotification(_) => gateway.relay_list_changed(true),
                ServerNotification::ResourceListChangedNotification(_) => gateway.relay_list_changed(false),
                _ => {}
            }
        }
        tracing::debug!(upstream = %name, "its list-change subscription ended");
    });
}

/// Every tool of the upstream (following `nextCursor`), as catalog specs, within the listing
/// caps: a server that pages forever, lists too many tools or sends too many bytes fails with a
/// reason naming the cap it broke, before the gateway holds more than the cap.
async fn list(peer: &Peer<RoleClient>, spec: &Spec) -> Result<Vec<ToolSpec>, String> {
    use rmcp::model::PaginatedRequestParams;
    let advertises_tools = peer.peer_info().is_none_or(|info| info.capabilities.tools.is_some());
    if !advertises_tools {
        return Ok(Vec::new());
    }
    let caps = spec.caps;
    let over = |what: String, key: &str| {
        format!("its tools/list {what} ([gateway] {key}); its listing was refused, and it serves no tools")
    };
    let (mut tools, mut pages, mut bytes) = (Vec::new(), 0usize, 0usize);
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    loop {
        if pages == caps.pages {
            return Err(over(format!("went on past {} pages", caps.pages), "list_max_pages"));
        }
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor.clone())))
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        pages += 1;
        bytes += serde_json::to_vec(&page.tools).map_or(0, |v| v.len());
        if bytes > caps.bytes {
            return Err(over(format!("sent more than {} bytes", caps.bytes), "list_max_bytes"));
        }
        if tools.len() + page.tools.len() > caps.tools {
            return Err(over(format!("held more than {} tools", caps.tools), "list_max_tools"));
        }
        tools.extend(page.tools.iter().map(|t| spec_from_mcp(&spec.name, t)));
        match page.next_cursor {
            // A cursor seen before would loop forever.
            Some(next) if !seen.insert(next.clone()) => {
                return Err(format!(
                    "its tools/list sent the cursor `{next}` twice; its listing was refused"
                ));
            }
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
}

/// The tool error for a call that failed on the way to or from the upstream.
pub(crate) fn transport_error(owner: &str, tool: &str, e: &ServiceError) -> CallToolResponse {
    match e {
        ServiceError::TransportClosed => error_result(format!(
            "server `{owner}` closed its connection during the call to `{tool}` (the process exited?); \
             its tools are unavailable until it restarts"
        )),
        e => error_result(format!("server `{owner}` failed the call to `{tool}`: {}", in_own_words(e))),
    }
}

/// What a failed request to an upstream says: the reason the gateway's own HTTP client gave
/// for not sending it (a per-user server's request without a caller), without the transport's
/// layers around it; any other failure as rmcp words it.
pub(crate) fn in_own_words(e: &ServiceError) -> String {
    let text = e.to_string();
    match text.split_once("unexpected server response: ") {
        Some((_, why)) => why.to_owned(),
        None => text,
    }
}

/// A tool error the model reads.
pub(crate) fn error_result(text: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(text)]))
}
