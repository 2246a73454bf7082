//! session: one downstream session as the gateway holds it: its conversation, how to reach
//! its client (on the connection or its subscriptions), what it did and when, the calls
//! waiting for its answers and the tasks it started, and how an HTTP session is kept in the
//! store. Only what a session holds is here; what is done with it is in `resume.rs`,
//! `asking.rs` and `tasks.rs`, which this module does not import.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::config::Exposure;
use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::Peer;
use tokio::sync::watch;
use toolgate::Conversation;

pub(crate) use crate::session::listener::Listener;
pub(crate) use crate::session::reach::Reach;
use crate::store::Saved;

mod listener;
mod reach;

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
                let id = state.reach().session_id()?.to_owned();
                Some((id, (state.activity.in_flight, state.activity.last)))
            })
            .collect()
    }
}

/// What a downstream session holds: its conversation, who it is for, how its client hears of
/// changes ([`Listener`]) and how it is reached and kept ([`Reach`]). Its fields are private:
/// the methods say what may change, and when.
#[derive(Debug)]
pub(crate) struct SessionState {
    /// The number of the session on the status page (0 until registered).
    number: u64,
    /// How the session is reached and kept.
    reach: Reach,
    /// How its client hears of changes, and the tool list it holds.
    listener: Listener,
    /// The active set, recency and shown definitions, kept by the toolbox.
    conversation: Conversation,
    /// The client's name and version, from `initialize` (or the request's client info).
    client: String,
    /// The profile this session was opened under (`/mcp/NAME` or `X-Toolgate-Profile`).
    profile: Option<String>,
    /// The server instructions, fixed when first asked for so that they stay byte-identical
    /// (shared with every session of the same view).
    instructions: Option<Arc<str>>,
    /// The exposure chosen for this session's client (at `initialize`; the configured one, or
    /// native, before).
    exposure: Option<Exposure>,
    /// Calls waiting for this client's answer to an upstream's question (2026-07-28).
    waiting: crate::upstream::elicit::Waiting,
    /// The tasks upstreams made of this session's calls, by task id.
    tasks: HashMap<String, TaskOwner>,
    /// What the session did and when ([`Activity`]).
    activity: Activity,
}

impl SessionState {
    /// A session on a connection of its own (`http` false) or over streamable HTTP, seeing
    /// what `profile` allows.
    pub(crate) fn new(http: bool, profile: Option<String>) -> SessionState {
        SessionState {
            number: 0,
            reach: if http { Reach::Http(Default::default()) } else { Reach::Connection },
            listener: Listener::default(),
            conversation: Conversation::default(),
            client: String::new(),
            profile,
            instructions: None,
            exposure: None,
            waiting: Default::default(),
            tasks: HashMap::new(),
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

    /// How its client hears of changes.
    pub(crate) fn listener(&self) -> &Listener {
        &self.listener
    }

    /// How its client hears of changes, to change.
    pub(crate) fn listener_mut(&mut self) -> &mut Listener {
        &mut self.listener
    }

    /// How the session is reached and kept.
    pub(crate) fn reach(&self) -> &Reach {
        &self.reach
    }

    /// How the session is reached and kept, to change.
    pub(crate) fn reach_mut(&mut self) -> &mut Reach {
        &mut self.reach
    }

    /// This session's exposure: the one chosen at `initialize`, else `configured`, else native.
    pub(crate) fn exposure_under(&self, configured: Option<Exposure>) -> Exposure {
        self.exposure.or(configured).unwrap_or(Exposure::Native)
    }

    /// The session's subject is now profile `name` (asked for at `initialize`): anything
    /// written before was for another subject and starts again.
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
        self.listener.seen(peer, revision);
        if self.client.is_empty()
            && let Some(client) = client
        {
            self.client = client;
        }
    }

    /// At `initialize`: the client, how to reach it, and the exposure chosen for it.
    pub(crate) fn opened(&mut self, client: String, peer: &Peer<RoleServer>, exposure: Exposure) {
        self.client = client;
        self.listener.opened(peer);
        self.exposure = Some(exposure);
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
        self.listener.speaks(revision);
        if let Some(client) = client {
            self.client = client;
        }
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
        self.reach.restored(id, saved);
    }

    /// Takes `saved`, newer than this session's own: its conversation (`None` keeps this
    /// process's own) and its place in the record's order.
    pub(crate) fn caught_up(&mut self, saved: &Saved, conversation: Option<Conversation>) {
        if let Some(conversation) = conversation {
            self.conversation = conversation;
        }
        self.reach.caught_up(saved);
    }

    /// The session's next record for the store, when its conversation changed since the last.
    pub(crate) fn next_record(&mut self) -> Option<(String, Saved)> {
        self.reach.session_id()?;
        let conversation = self.conversation.to_json();
        self.reach.next_record(conversation, self.profile.clone())
    }

    /// It searched or called a tool: an agent at work, not a health check.
    pub(crate) fn worked(&mut self) {
        self.activity.worked = true;
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
