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
use rmcp::service::{Peer, SubscriptionSink};
use tokio::sync::watch;
use toolgate::Conversation;
use toolgate::config::Exposure;

/// One downstream session as the registry sees it.
#[derive(Debug)]
pub(crate) struct SessionSlot {
    pub(crate) state: Mutex<SessionState>,
    /// The gateway's change counter: a session that ends is a change of the status.
    changes: watch::Sender<u64>,
}

impl SessionSlot {
    /// A slot for a new session, not registered yet; `changes` is the gateway's change counter.
    pub(crate) fn new(changes: watch::Sender<u64>) -> SessionSlot {
        SessionSlot { state: Mutex::new(SessionState::default()), changes }
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
            if state.id != 0 {
                return false;
            }
            state.id = self.next.fetch_add(1, Ordering::Relaxed);
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
                let id = state.stored.id()?.to_owned();
                Some((id, (state.activity.in_flight, state.activity.last)))
            })
            .collect()
    }
}

/// What a downstream session holds: its conversation and how to reach its client.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// The number of the session on the status page (0 until `initialize`).
    pub(crate) id: u64,
    /// The active set, recency and shown definitions, kept by the toolbox.
    pub(crate) conversation: Conversation,
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
    /// The server instructions, fixed when first asked for so that they stay byte-identical
    /// (shared with every session of the same view).
    pub(crate) instructions: Option<Arc<str>>,
    /// The least severe log level the client wants relayed (`logging/setLevel`); all if unset.
    #[allow(deprecated)]
    pub(crate) log_level: Option<LoggingLevel>,
    /// The exposure chosen for this session's client (at `initialize`; the configured one, or
    /// native, before).
    pub(crate) exposure: Option<Exposure>,
    /// Woken whenever the client lists the tools.
    pub(crate) relisted: Arc<tokio::sync::Notify>,
    /// Whether the client let a wait for its re-list run out (it ignores `list_changed`).
    pub(crate) ignores_list_changed: bool,
    /// How this HTTP session is kept in the session store.
    pub(crate) stored: Stored,
    /// Calls waiting for this client's answer to an upstream's question (2026-07-28).
    pub(crate) waiting: crate::upstream::elicit::Waiting,
    /// The tasks upstreams made of this session's calls, by task id.
    pub(crate) tasks: std::collections::HashMap<String, TaskOwner>,
    /// The protocol revision the client speaks, once known.
    pub(crate) revision: Option<rmcp::model::ProtocolVersion>,
    /// What the session did and when ([`Activity`]).
    pub(crate) activity: Activity,
    /// Whether this is one request with no session (2026-07-28 over HTTP): its subject's view
    /// hands out grants, and the calls it makes present them.
    pub(crate) granted: bool,
    /// An HTTP session's place under `max_sessions` ([`Seat`]), given back when it ends.
    pub(crate) seat: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl SessionState {
    /// This session's exposure: the one chosen at `initialize`, else `configured`, else native.
    pub(crate) fn exposure_under(&self, configured: Option<Exposure>) -> Exposure {
        self.exposure.or(configured).unwrap_or(Exposure::Native)
    }
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
        {
            let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            state.activity.requests += 1;
            state.activity.in_flight += 1;
            state.activity.last = Some(std::time::Instant::now());
        }
        Busy { slot: slot.clone() }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.slot.state.lock().unwrap_or_else(|e| e.into_inner());
        state.activity.in_flight = state.activity.in_flight.saturating_sub(1);
        state.activity.last = Some(std::time::Instant::now());
    }
}

impl SessionState {
    /// Whether the client speaks 2026-07-28 or later, which hears of changes only on the
    /// subscriptions it opened, never on the connection.
    pub(crate) fn is_modern(&self) -> bool {
        self.revision.as_ref().is_some_and(|v| !v.has_initialize())
    }

    /// The client, when notices go on the connection (up to 2025-11-25, no subscription open).
    pub(crate) fn connection_notices(&self) -> Option<Peer<RoleServer>> {
        if self.subscriptions.is_empty() && !self.is_modern() { self.peer.clone() } else { None }
    }

    /// Sends `notifications/tools/list_changed` to this session's client, on the path its
    /// protocol version uses: the connection (up to 2025-11-25) or its open subscriptions
    /// (2026-07-28).
    pub(crate) fn list_changed_notice(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let peer = self.connection_notices();
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

/// How one HTTP session is kept in the store (none of it on stdio).
#[derive(Debug, Default)]
pub(crate) struct Stored {
    /// The session's `Mcp-Session-Id`, once a request carried it.
    pub(crate) id: Option<String>,
    /// The record's `seq` this session last read or wrote.
    pub(crate) seq: u64,
    /// The token the session was opened with (by name): no other may use it.
    pub(crate) token: Option<String>,
    /// The client's `initialize` parameters, written into every record.
    pub(crate) initialize: Option<serde_json::Value>,
    /// A digest of the conversation last pushed, to push only what changed.
    pub(crate) pushed: Option<u64>,
    /// Held across one push, so that this process writes a session's records in order.
    pub(crate) writing: Arc<tokio::sync::Mutex<()>>,
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
