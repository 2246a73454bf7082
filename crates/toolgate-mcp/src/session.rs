//! session: one downstream session as the gateway holds it: its conversation, how to reach
//! its client (on the connection or its subscriptions), what it did and when, the calls
//! waiting for its answers and the tasks it started, and how an HTTP session is kept in the
//! store. Only what a session holds is here; what is done with it is in `resume.rs`,
//! `asking.rs` and `tasks.rs`, which this module does not import.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::RoleServer;
#[allow(deprecated)]
use rmcp::model::LoggingLevel;
use rmcp::model::ProtocolVersion;
use rmcp::service::{Peer, SubscriptionSink};
use tokio::sync::watch;
use toolgate::Conversation;
use toolgate::config::Exposure;

use crate::store::Saved;

/// One downstream session as the registry sees it.
#[derive(Debug)]
pub(crate) struct SessionSlot {
    pub(crate) state: Mutex<SessionState>,
    /// The gateway's change counter: a session that ends is a change of the status.
    changes: watch::Sender<u64>,
}

impl SessionSlot {
    /// A slot for a new session ([`SessionState::new`]), not registered yet; `changes` is the
    /// gateway's change counter.
    pub(crate) fn new(changes: watch::Sender<u64>, state: SessionState) -> SessionSlot {
        SessionSlot { state: Mutex::new(state), changes }
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let registered = self.state.get_mut().map(|s| s.number != 0).unwrap_or(true);
        if registered {
            self.changes.send_modify(|g| *g += 1);
        }
    }
}

/// A place for one HTTP session under `max_sessions`, taken before the request that opens or
/// restores the session is admitted and put on it; the session holds it until it ends or
/// hibernates, and a request that never became a session gives it back when it is dropped.
/// Every HTTP session holds one, so that no interleaving of requests opens more than the cap.
#[derive(Debug, Clone)]
pub(crate) struct Seat(Arc<Mutex<Option<tokio::sync::OwnedSemaphorePermit>>>);

impl Seat {
    /// A seat of `seats`, if one is free.
    pub(crate) fn take_from(seats: &Arc<tokio::sync::Semaphore>) -> Option<Seat> {
        let permit = seats.clone().try_acquire_owned().ok()?;
        Some(Seat(Arc::new(Mutex::new(Some(permit)))))
    }

    /// The place itself, for the session that takes it (once).
    pub(crate) fn claim(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The live downstream sessions, for the status page and for list change notices. Holds them
/// weakly: a session that ends leaves on its own.
#[derive(Debug)]
pub(crate) struct Sessions {
    live: Mutex<Vec<Weak<SessionSlot>>>,
    next: AtomicU64,
}

impl Default for Sessions {
    fn default() -> Sessions {
        Sessions { live: Mutex::default(), next: AtomicU64::new(1) }
    }
}

impl Sessions {
    /// Registers `slot` under the next number; false when it already was.
    pub(crate) fn register(&self, slot: &Arc<SessionSlot>) -> bool {
        {
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.number != 0 {
                return false;
            }
            state.number = self.next.fetch_add(1, Ordering::Relaxed);
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(slot));
        true
    }

    /// Every session open now (initialized and not ended).
    pub(crate) fn live(&self) -> Vec<Arc<SessionSlot>> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.iter().filter_map(Weak::upgrade).collect()
    }

    /// How many sessions are open.
    pub(crate) fn count(&self) -> usize {
        self.live().len()
    }

    /// The activity of every HTTP session this process holds, by session id: requests in
    /// flight and when the last began or ended (a session no request has named yet is absent).
    pub(crate) fn http_activity(&self) -> HashMap<String, (usize, Option<std::time::Instant>)> {
        self.live()
            .iter()
            .filter_map(|slot| {
                let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
                let id = state.session_id()?.to_owned();
                Some((id, (state.activity.in_flight, state.activity.last)))
            })
            .collect()
    }
}

/// What a downstream session holds: its conversation, who it is for, how to reach its client
/// and how it is kept. Its fields are private: the methods say what may change, and when.
#[derive(Debug)]
pub(crate) struct SessionState {
    /// The number of the session on the status page (0 until registered).
    number: u64,
    /// How the session reaches its client and is kept ([`Reach`]).
    reach: Reach,
    /// The active set, recency and shown definitions, kept by the toolbox.
    conversation: Conversation,
    /// The client's name and version, from `initialize` (or the request's client info).
    client: String,
    /// The client, for `notifications/tools/list_changed` (up to protocol 2025-11-25).
    peer: Option<Peer<RoleServer>>,
    /// Open `subscriptions/listen` streams that accepted `tools/list_changed` (2026-07-28).
    subscriptions: Vec<SubscriptionSink>,
    /// A fingerprint of the tool list last served, to tell whether a rebuild changed it.
    listed: Option<u64>,
    /// The profile this session was opened under (`/mcp/NAME` or `X-Toolgate-Profile`).
    profile: Option<String>,
    /// The server instructions, fixed when first asked for so that they stay byte-identical
    /// (shared with every session of the same view).
    instructions: Option<Arc<str>>,
    /// The least severe log level the client wants relayed (`logging/setLevel`); all if unset.
    #[allow(deprecated)]
    log_level: Option<LoggingLevel>,
    /// The exposure chosen for this session's client (at `initialize`; the configured one, or
    /// native, before).
    exposure: Option<Exposure>,
    /// Woken whenever the client lists the tools.
    relisted: Arc<tokio::sync::Notify>,
    /// Whether the client let a wait for its re-list run out (it ignores `list_changed`).
    ignores_list_changed: bool,
    /// Calls waiting for this client's answer to an upstream's question (2026-07-28).
    waiting: crate::upstream::elicit::Waiting,
    /// The tasks upstreams made of this session's calls, by task id.
    tasks: HashMap<String, TaskOwner>,
    /// The protocol revision the client speaks, once known.
    revision: Option<ProtocolVersion>,
    /// What the session did and when ([`Activity`]).
    activity: Activity,
}

/// How a session reaches its client, and how it is kept.
#[derive(Debug)]
enum Reach {
    /// A connection of its own (stdio, a pipe): nothing is kept.
    Connection,
    /// A streamable HTTP session: kept in the session store, holding a place under
    /// `max_sessions` once `initialize` (or a restore) gave it one.
    Http { stored: Stored, seat: Option<tokio::sync::OwnedSemaphorePermit> },
    /// One request with no session (2026-07-28 over HTTP): nothing is kept, its subject's view
    /// hands out grants, and the calls it makes present them.
    Sessionless,
}

impl SessionState {
    /// A session on a connection of its own (`http` false) or over streamable HTTP, seeing
    /// what `profile` allows.
    pub(crate) fn new(http: bool, profile: Option<String>) -> SessionState {
        let reach =
            if http { Reach::Http { stored: Stored::default(), seat: None } } else { Reach::Connection };
        SessionState {
            number: 0,
            reach,
            conversation: Conversation::default(),
            client: String::new(),
            peer: None,
            subscriptions: Vec::new(),
            listed: None,
            profile,
            instructions: None,
            log_level: None,
            exposure: None,
            relisted: Arc::default(),
            ignores_list_changed: false,
            waiting: Default::default(),
            tasks: HashMap::new(),
            revision: None,
            activity: Activity::default(),
        }
    }

    /// The number of the session on the status page (0 until registered).
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The client's name and version.
    pub(crate) fn client(&self) -> &str {
        &self.client
    }

    /// The profile this session sees, if any.
    pub(crate) fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// The protocol revision the client speaks, once known.
    pub(crate) fn revision(&self) -> Option<&ProtocolVersion> {
        self.revision.as_ref()
    }

    /// What the session did and when.
    pub(crate) fn activity(&self) -> &Activity {
        &self.activity
    }

    /// The conversation: what the session was shown and loaded.
    pub(crate) fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// The conversation, for the toolbox to change (a list, a search, a check).
    pub(crate) fn conversation_mut(&mut self) -> &mut Conversation {
        &mut self.conversation
    }

    /// Whether this is one request with no session (2026-07-28 over HTTP).
    pub(crate) fn is_sessionless(&self) -> bool {
        matches!(self.reach, Reach::Sessionless)
    }

    /// Whether the client came over streamable HTTP (with a session or without).
    pub(crate) fn is_http(&self) -> bool {
        !matches!(self.reach, Reach::Connection)
    }

    /// This session's exposure: the one chosen at `initialize`, else `configured`, else native.
    pub(crate) fn exposure_under(&self, configured: Option<Exposure>) -> Exposure {
        self.exposure.or(configured).unwrap_or(Exposure::Native)
    }

    /// The session's subject is now profile `name` (asked for at `initialize`, or by a request
    /// with no session): anything written before was for another subject and starts again.
    pub(crate) fn choose_profile(&mut self, name: String) {
        self.profile = Some(name);
        self.instructions = None;
        self.conversation = Conversation::default();
    }

    /// Fills in what a request tells of its client, where nothing is known yet.
    pub(crate) fn seen(
        &mut self,
        peer: &Peer<RoleServer>,
        revision: Option<ProtocolVersion>,
        client: Option<String>,
    ) {
        if self.peer.is_none() {
            self.peer = Some(peer.clone());
        }
        if self.revision.is_none() {
            self.revision = revision;
        }
        if self.client.is_empty()
            && let Some(client) = client
        {
            self.client = client;
        }
    }

    /// At `initialize`: the client, how to reach it, and the exposure chosen for it.
    pub(crate) fn opened(&mut self, client: String, peer: &Peer<RoleServer>, exposure: Exposure) {
        self.client = client;
        self.peer = Some(peer.clone());
        self.exposure = Some(exposure);
    }

    /// The revision `initialize` negotiated, over any the client probed with before.
    pub(crate) fn speaks(&mut self, revision: ProtocolVersion) {
        self.revision = Some(revision);
    }

    /// This request has no session (2026-07-28 over HTTP): it is its own subject (`profile`,
    /// when one is asked for besides the path) and starts from nothing, since rmcp may have
    /// read the server's info before the subject was known.
    pub(crate) fn sessionless(
        &mut self,
        profile: Option<String>,
        revision: Option<ProtocolVersion>,
        client: Option<String>,
    ) {
        self.reach = Reach::Sessionless;
        if let Some(name) = profile {
            self.profile = Some(name);
        }
        self.instructions = None;
        self.conversation = Conversation::default();
        self.revision = revision;
        if let Some(client) = client {
            self.client = client;
        }
    }

    /// It searched or called a tool: an agent at work, not a health check.
    pub(crate) fn worked(&mut self) {
        self.activity.worked = true;
    }

    /// The fingerprint of the tool list last served, if it is still the one the client holds.
    pub(crate) fn listed(&self) -> Option<u64> {
        self.listed
    }

    /// The client was served a tool list with `fingerprint`; whoever waits for it is woken.
    pub(crate) fn served_list(&mut self, fingerprint: u64) {
        self.listed = Some(fingerprint);
        self.relisted.notify_waiters();
    }

    /// The subscriptions of a request with no session follow the list with `fingerprint`, the
    /// same for every request of its subject.
    pub(crate) fn follows_list(&mut self, fingerprint: u64) {
        self.listed = Some(fingerprint);
    }

    /// The client's list is out of date (a search changed it, or the catalog did).
    pub(crate) fn list_changed(&mut self) {
        self.listed = None;
    }

    /// Woken whenever the client lists the tools.
    pub(crate) fn relisted(&self) -> Arc<tokio::sync::Notify> {
        self.relisted.clone()
    }

    /// Whether the client let a wait for its re-list run out.
    pub(crate) fn ignores_list_changed(&self) -> bool {
        self.ignores_list_changed
    }

    /// The client let a wait for its re-list run out: it is not waited for again.
    pub(crate) fn ignore_list_changed(&mut self) {
        self.ignores_list_changed = true;
    }

    /// Whether the client can hear of a change: on the connection, or on a subscription.
    pub(crate) fn hears_changes(&self) -> bool {
        self.connection_notices().is_some() || !self.subscriptions.is_empty()
    }

    /// A `subscriptions/listen` stream opened.
    pub(crate) fn subscribe(&mut self, sink: SubscriptionSink) {
        self.subscriptions.push(sink);
    }

    /// The `subscriptions/listen` stream `id` closed.
    pub(crate) fn unsubscribe(&mut self, id: &rmcp::model::RequestId) {
        self.subscriptions.retain(|s| s.id() != id);
    }

    /// The client wants log messages from `level` up.
    #[allow(deprecated)]
    pub(crate) fn set_log_level(&mut self, level: LoggingLevel) {
        self.log_level = Some(level);
    }

    /// The least severe log level the client wants relayed, if it asked.
    #[allow(deprecated)]
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    /// The client, when it hears log messages (up to 2025-11-25: 2026-07-28 has no logging on
    /// the connection, SEP-2577).
    pub(crate) fn log_listener(&self) -> Option<Peer<RoleServer>> {
        if self.is_modern() { None } else { self.peer.clone() }
    }

    /// Where a list change is told: the connection (up to 2025-11-25, no subscription open)
    /// and the open subscriptions.
    pub(crate) fn change_listeners(&self) -> (Option<Peer<RoleServer>>, Vec<SubscriptionSink>) {
        (self.connection_notices(), self.subscriptions.clone())
    }

    /// The server instructions, once fixed.
    pub(crate) fn instructions(&self) -> Option<Arc<str>> {
        self.instructions.clone()
    }

    /// Fixes the server instructions to `fresh`, unless they were fixed meanwhile.
    pub(crate) fn fix_instructions(&mut self, fresh: Arc<str>) -> Arc<str> {
        self.instructions.get_or_insert(fresh).clone()
    }

    /// The calls waiting for this client's answer.
    pub(crate) fn waiting(&mut self) -> &mut crate::upstream::elicit::Waiting {
        &mut self.waiting
    }

    /// An upstream made task `id` of a call of this session.
    pub(crate) fn task_started(&mut self, id: String, owner: TaskOwner) {
        self.tasks.insert(id, owner);
    }

    /// Where task `id` of this session runs, if this session started it.
    pub(crate) fn task(&self, id: &str) -> Option<TaskOwner> {
        self.tasks.get(id).cloned()
    }

    /// Whether this HTTP session holds its place under `max_sessions` (a session on a
    /// connection of its own needs none).
    pub(crate) fn has_seat(&self) -> bool {
        !matches!(self.reach, Reach::Http { seat: None, .. })
    }

    /// This HTTP session takes its place under `max_sessions`, given back when it ends.
    pub(crate) fn take_seat(&mut self, permit: tokio::sync::OwnedSemaphorePermit) {
        if let Reach::Http { seat, .. } = &mut self.reach {
            *seat = Some(permit);
        }
    }

    /// How this HTTP session is kept in the store (`None` on a connection of its own and for a
    /// request with no session).
    pub(crate) fn stored(&self) -> Option<&Stored> {
        match &self.reach {
            Reach::Http { stored, .. } => Some(stored),
            _ => None,
        }
    }

    fn stored_mut(&mut self) -> Option<&mut Stored> {
        match &mut self.reach {
            Reach::Http { stored, .. } => Some(stored),
            _ => None,
        }
    }

    /// The session's `Mcp-Session-Id`, once a request carried it.
    pub(crate) fn session_id(&self) -> Option<&str> {
        self.stored().and_then(Stored::id)
    }

    /// At `initialize` over HTTP: the session belongs to `token` (by name), and the client's
    /// parameters go into every record.
    pub(crate) fn owned_by(&mut self, token: Option<String>, initialize: Option<serde_json::Value>) {
        if let Some(stored) = self.stored_mut() {
            stored.token = token;
            stored.initialize = initialize;
        }
    }

    /// A request named this session `header`: the first names it; a later one naming another
    /// is refused.
    pub(crate) fn named(&mut self, header: Option<&str>) -> Result<Option<String>, String> {
        let Some(stored) = self.stored_mut() else { return Ok(None) };
        match (&stored.id, header) {
            (None, Some(header)) => stored.id = Some(header.to_owned()),
            (Some(id), Some(header)) if id != header => {
                return Err("the request names another session".into());
            }
            _ => {}
        }
        Ok(stored.id.clone())
    }

    /// Restored from the store: session `id` at record `saved`, seeing `profile`.
    pub(crate) fn restored(
        &mut self,
        id: String,
        saved: &Saved,
        profile: Option<String>,
        conversation: Option<Conversation>,
    ) {
        self.profile = profile;
        if let Some(conversation) = conversation {
            self.conversation = conversation;
        }
        if let Some(stored) = self.stored_mut() {
            stored.id = Some(id);
            stored.seq = saved.seq;
        }
    }

    /// Whether `saved` is newer than what this session last read or wrote.
    pub(crate) fn is_newer(&self, saved: &Saved) -> bool {
        self.stored().is_some_and(|stored| saved.seq > stored.seq)
    }

    /// Takes `saved`, newer than this session's own: its conversation (`None` keeps this
    /// process's own) and its place in the record's order.
    pub(crate) fn caught_up(&mut self, saved: &Saved, conversation: Option<Conversation>) {
        if let Some(conversation) = conversation {
            self.conversation = conversation;
        }
        if let Some(stored) = self.stored_mut() {
            stored.seq = saved.seq;
            stored.pushed = None;
        }
    }

    /// The lock held across one push, so that this process writes a session's records in order.
    pub(crate) fn writing(&self) -> Option<Arc<tokio::sync::Mutex<()>>> {
        self.stored().map(|stored| stored.writing.clone())
    }

    /// The session's next record, when the conversation changed since the last one written:
    /// the session's serialised form, under its `Mcp-Session-Id`.
    pub(crate) fn next_record(&mut self) -> Option<(String, Saved)> {
        let conversation = self.conversation.to_json();
        let profile = self.profile.clone();
        let stored = self.stored_mut()?;
        let id = stored.id.clone()?;
        let digest = digest(&conversation);
        if stored.pushed == Some(digest) {
            return None;
        }
        stored.seq += 1;
        stored.pushed = Some(digest);
        let saved = Saved {
            seq: stored.seq,
            initialize: stored.initialize.clone().unwrap_or_default(),
            token: stored.token.clone(),
            profile,
            conversation: Some(conversation),
        };
        Some((id, saved))
    }

    /// The last record could not be written: the next push writes it again.
    pub(crate) fn not_written(&mut self) {
        if let Some(stored) = self.stored_mut() {
            stored.pushed = None;
        }
    }

    /// Counts a request in flight.
    fn began(&mut self) {
        self.activity.requests += 1;
        self.activity.in_flight += 1;
        self.activity.last = Some(std::time::Instant::now());
    }

    /// A request in flight was answered.
    fn ended(&mut self) {
        self.activity.in_flight = self.activity.in_flight.saturating_sub(1);
        self.activity.last = Some(std::time::Instant::now());
    }
}

/// A digest of a conversation's saved form.
fn digest(value: &serde_json::Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}

/// What a session did and when: for the status page (telling a live agent from a health
/// check that listed the tools and stayed connected) and for ending idle HTTP sessions (a
/// request in flight is activity, however long it runs).
#[derive(Debug, Default)]
pub(crate) struct Activity {
    /// Requests answered or being answered.
    pub(crate) requests: u64,
    /// Requests being answered now.
    pub(crate) in_flight: usize,
    /// When a request last began or ended.
    pub(crate) last: Option<std::time::Instant>,
    /// Whether it ever searched or called a tool (a health check only lists).
    pub(crate) worked: bool,
}

/// One request of a session in flight; dropped when it is answered.
#[derive(Debug)]
pub(crate) struct Busy {
    slot: Arc<SessionSlot>,
}

impl Busy {
    pub(crate) fn new(slot: &Arc<SessionSlot>) -> Busy {
        slot.state.lock().unwrap_or_else(|e| e.into_inner()).began();
        Busy { slot: slot.clone() }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.slot.state.lock().unwrap_or_else(|e| e.into_inner()).ended();
    }
}

impl SessionState {
    /// Whether the client speaks 2026-07-28 or later, which hears of changes only on the
    /// subscriptions it opened, never on the connection.
    pub(crate) fn is_modern(&self) -> bool {
        self.revision.as_ref().is_some_and(|v| !v.has_initialize())
    }

    /// The client, when notices go on the connection (up to 2025-11-25, no subscription open).
    fn connection_notices(&self) -> Option<Peer<RoleServer>> {
        if self.subscriptions.is_empty() && !self.is_modern() { self.peer.clone() } else { None }
    }

    /// Sends `notifications/tools/list_changed` to this session's client, on the path its
    /// protocol version uses: the connection (up to 2025-11-25) or its open subscriptions
    /// (2026-07-28).
    pub(crate) fn list_changed_notice(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (peer, sinks) = self.change_listeners();
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

/// How one HTTP session is kept in the store.
#[derive(Debug, Default)]
pub(crate) struct Stored {
    /// The session's `Mcp-Session-Id`, once a request carried it.
    id: Option<String>,
    /// The record's `seq` this session last read or wrote.
    seq: u64,
    /// The token the session was opened with (by name): no other may use it.
    token: Option<String>,
    /// The client's `initialize` parameters, written into every record.
    initialize: Option<serde_json::Value>,
    /// A digest of the conversation last pushed, to push only what changed.
    pushed: Option<u64>,
    /// Held across one push, so that this process writes a session's records in order.
    writing: Arc<tokio::sync::Mutex<()>>,
}

impl Stored {
    /// The session's `Mcp-Session-Id`, once a request carried it.
    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// Where a task of this session runs.
#[derive(Debug, Clone)]
pub(crate) struct TaskOwner {
    /// The upstream that made it.
    pub(crate) upstream: String,
    /// The tool whose call it is (qualified name).
    pub(crate) tool: String,
}

/// Says that sessions closed (ended, hibernated or deleted). Once no session has closed for
/// [`QUIET_AFTER_CLOSING`], every worker thread of the runtime gets a moment of work: what a
/// closed session freed belongs to the threads that allocated it, and a host can return such
/// memory only from those threads, when they next go idle (the `toolgate` binary does so in
/// `on_thread_park`, at most once a second a thread; `docs/deploy.md`). Waiting for the quiet
/// lets a burst of closes end first, and lets each thread's once-a-second allowance come
/// round again, so the last close of a burst is returned too.
pub(crate) fn closed_sessions() {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};
    static ANCHOR: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    static LAST_CLOSE: AtomicU64 = AtomicU64::new(0);
    static WAITING: AtomicBool = AtomicBool::new(false);
    let anchor = *ANCHOR.get_or_init(Instant::now);
    let now = move || anchor.elapsed().as_millis() as u64;
    LAST_CLOSE.store(now(), Ordering::Release);
    if WAITING.swap(true, Ordering::AcqRel) {
        return;
    }
    tokio::spawn(async move {
        let quiet = QUIET_AFTER_CLOSING.as_millis() as u64;
        loop {
            let since = now().saturating_sub(LAST_CLOSE.load(Ordering::Acquire));
            if since >= quiet {
                break;
            }
            tokio::time::sleep(Duration::from_millis(quiet - since)).await;
        }
        WAITING.store(false, Ordering::Release);
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        for _ in 0..2 * workers {
            tokio::spawn(tokio::task::yield_now());
        }
    });
}

/// How long after the last closed session the worker threads are woken
/// ([`closed_sessions`]): past the once-a-second allowance of a thread's collection.
const QUIET_AFTER_CLOSING: std::time::Duration = std::time::Duration::from_millis(1200);
