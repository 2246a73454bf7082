//! elicit: here is an upstream that asks the user something in the middle of a call, get the
//! question to the client that made the call, and its answer back to the upstream.
//!
//! Each side speaks one of two shapes, after its revision:
//!
//! - An upstream on 2025-11-25 sends `elicitation/create` during the call, on the connection
//!   every session shares. It goes to the one session with a call in flight to that upstream
//!   ([`InFlight::route`]); when calls of two sessions are in flight, the question cannot be
//!   told apart and is refused, never guessed.
//! - An upstream on 2026-07-28 answers the call with an `InputRequiredResult`; its opaque
//!   `requestState` must come back to it untouched. Such an upstream is told, in the call's own
//!   `_meta`, the capabilities of the client that made the call, so it asks only what that
//!   client can answer.
//! - A client on 2025-11-25 is asked with `elicitation/create`, inside its own call (over HTTP
//!   the question rides that call's stream).
//! - A client on 2026-07-28 gets an `InputRequiredResult`: the upstream's own when the upstream
//!   speaks 2026-07-28, or one of toolgate's while the upstream's call waits, with a
//!   `requestState` that names the waiting call in this session only ([`Parked`]).
//!
//! `GatewayServer::drive` (in `asking.rs`) follows a session's forwarded call to its answer,
//! putting each question to the client on the way; `GatewayServer::resume_call` takes a
//! 2026-07-28 client's answer back to its waiting call.
//!
//! A question reaches a client only if that client declared elicitation; otherwise the
//! upstream is refused (2025-11-25) or never asked (2026-07-28). The call itself went through
//! the gate before any of this, and its continuation goes through it again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, ElicitRequestParams, ElicitResult};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::upstream::error_result;

/// The `requestState` prefix of a call toolgate keeps waiting while a 2026-07-28 client answers.
pub(crate) const STATE_PREFIX: &str = "toolgate-input:";

/// The key of toolgate's one question in its `inputRequests`.
pub(crate) const QUESTION: &str = "elicitation";

/// Most rounds of questions one call may take before toolgate gives up on it.
pub(crate) const MAX_ROUNDS: usize = 10;

/// One question an upstream asks during a call, and where its answer goes.
#[derive(Debug)]
pub(crate) struct Ask {
    pub(crate) params: ElicitRequestParams,
    pub(crate) reply: oneshot::Sender<Result<ElicitResult, ErrorData>>,
}

/// What a running call has to say next.
#[derive(Debug)]
pub(crate) enum Event {
    /// The upstream asks the user something; the call waits for the answer.
    Ask(Ask),
    /// The call is over: its answer for the client.
    Done(CallToolResponse),
    /// The call never reached the upstream: its server cannot take it now.
    Unreachable(crate::upstream::unreachable::Unreachable),
}

/// A forwarded call running in a task of its own, so that it can wait across the requests of
/// a 2026-07-28 client. Dropped, it cancels the call upstream.
#[derive(Debug)]
pub(crate) struct Run {
    events: mpsc::Receiver<Event>,
    _cancel: DropGuard,
}

impl Run {
    /// A run whose task reports on `events` and stops when `cancel` is cancelled.
    pub(crate) fn new(events: mpsc::Receiver<Event>, cancel: CancellationToken) -> Run {
        Run { events, _cancel: cancel.drop_guard() }
    }

    /// The call's next event.
    pub(crate) async fn next(&mut self) -> Event {
        match self.events.recv().await {
            Some(event) => event,
            None => {
                Event::Done(error_result("the call ended without an answer (toolgate stopped it)".to_owned()))
            }
        }
    }
}

/// A call of a 2026-07-28 client waiting for that client's answer to a question.
#[derive(Debug)]
pub(crate) struct Parked {
    /// The tool the client called (its continuation must name the same one).
    pub(crate) tool: String,
    pub(crate) run: Run,
    pub(crate) reply: oneshot::Sender<Result<ElicitResult, ErrorData>>,
    /// When it is dropped unanswered.
    pub(crate) until: Instant,
    /// How many questions this call has asked so far.
    pub(crate) rounds: usize,
}

/// The calls waiting for their clients' answers, by `requestState`, within one session.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    parked: HashMap<String, Parked>,
}

impl Waiting {
    /// Keeps `parked` until `until` and returns the `requestState` that names it.
    pub(crate) fn park(&mut self, parked: Parked) -> String {
        self.expire();
        let state = format!("{STATE_PREFIX}{}", fresh_token());
        self.parked.insert(state.clone(), parked);
        state
    }

    /// The call `state` names, taken out (none when unknown, of another session, or expired).
    pub(crate) fn take(&mut self, state: &str) -> Option<Parked> {
        self.expire();
        self.parked.remove(state)
    }

    fn expire(&mut self) {
        let now = Instant::now();
        self.parked.retain(|_, p| p.until > now);
    }
}

/// A number no other waiting call of this process has. It need not be secret: a state is
/// looked up only among the calls of the session that presents it.
fn fresh_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

/// One call in flight to an upstream.
#[derive(Debug)]
struct Call {
    id: u64,
    upstream: String,
    /// The session that made it.
    session: usize,
    /// Where its questions go; `None` when its client declared no elicitation.
    asks: Option<mpsc::Sender<Event>>,
}

/// The calls in flight to every upstream, to route an upstream's `elicitation/create` (which
/// names no call) to the session whose call it belongs to.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    calls: Mutex<Vec<Call>>,
    next: AtomicU64,
}

/// A call's place in [`InFlight`], given up when dropped.
#[derive(Debug)]
pub(crate) struct Entry<'a> {
    registry: &'a InFlight,
    id: u64,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        let mut calls = self.registry.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.retain(|c| c.id != self.id);
    }
}

impl InFlight {
    /// Records a call of `session` to `upstream` until the entry is dropped.
    pub(crate) fn open(
        &self,
        upstream: &str,
        session: usize,
        asks: Option<mpsc::Sender<Event>>,
    ) -> Entry<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let call = Call { id, upstream: upstream.to_owned(), session, asks };
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        Entry { registry: self, id }
    }

    /// Asks the client whose call to `upstream` is in flight, and waits for its answer (at most
    /// `timeout`). Refused, with the reason, when no call is in flight, when calls of several
    /// sessions are, or when the client declared no elicitation.
    pub(crate) async fn route(
        &self,
        upstream: &str,
        params: ElicitRequestParams,
        timeout: Duration,
    ) -> Result<ElicitResult, ErrorData> {
        let target = {
            let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            let mine: Vec<&Call> = calls.iter().filter(|c| c.upstream == upstream).collect();
            let sessions: std::collections::BTreeSet<usize> = mine.iter().map(|c| c.session).collect();
            match sessions.len() {
                0 => return Err(refused("no client has a call in flight to this server")),
                1 => {}
                _ => {
                    return Err(refused(
                        "calls of several clients are in flight to this server and the question does not \
                         say which one it belongs to; ask again when one call is running",
                    ));
                }
            }
            match mine.iter().find_map(|c| c.asks.clone()) {
                Some(asks) => asks,
                None => return Err(refused("the client that made the call did not declare elicitation")),
            }
        };
        let (reply, answer) = oneshot::channel();
        if target.send(Event::Ask(Ask { params, reply })).await.is_err() {
            return Err(refused("the call this question belongs to has ended"));
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(refused("the client's call ended before it answered")),
            Err(_) => Err(refused("the client did not answer in time")),
        }
    }
}

/// The error an upstream's question gets when it cannot be put to a client.
pub(crate) fn refused(why: &str) -> ErrorData {
    ErrorData::invalid_request(format!("toolgate cannot put this question to a user: {why}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ElicitationAction;

    fn question() -> ElicitRequestParams {
        serde_json::from_value(serde_json::json!({"mode": "form", "message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}))
            .unwrap()
    }

    /// Answers every question that arrives on `events` with `accept`.
    fn answering(mut events: mpsc::Receiver<Event>) {
        tokio::spawn(async move {
            while let Some(Event::Ask(ask)) = events.recv().await {
                let _ = ask.reply.send(Ok(ElicitResult::new(ElicitationAction::Accept)));
            }
        });
    }

    #[tokio::test]
    async fn a_question_goes_to_the_one_session_with_a_call_in_flight_and_is_refused_when_that_is_unclear() {
        let calls = InFlight::default();
        let wait = Duration::from_secs(5);
        let err = calls.route("fs", question(), wait).await.unwrap_err();
        assert!(err.message.contains("no client has a call in flight"), "{err:?}");

        // One session, two calls: one whose client declared elicitation gets it.
        let (tx, rx) = mpsc::channel(1);
        answering(rx);
        let first = calls.open("fs", 1, None);
        let second = calls.open("fs", 1, Some(tx));
        let other_server = calls.open("memory", 2, None);
        assert_eq!(calls.route("fs", question(), wait).await.unwrap().action, ElicitationAction::Accept);
        drop(second);
        let err = calls.route("fs", question(), wait).await.unwrap_err();
        assert!(err.message.contains("did not declare elicitation"), "{err:?}");

        // Calls of two sessions in flight: the question is not guessed at.
        let (tx, rx) = mpsc::channel(1);
        answering(rx);
        let theirs = calls.open("fs", 2, Some(tx));
        let err = calls.route("fs", question(), wait).await.unwrap_err();
        assert!(err.message.contains("several clients"), "{err:?}");
        drop((first, theirs, other_server));
    }

    #[test]
    fn a_waiting_call_is_found_only_by_its_state_and_not_after_it_expires() {
        let mut waiting = Waiting::default();
        let parked = |until| {
            let (_tx, rx) = mpsc::channel(1);
            let (reply, _answer) = oneshot::channel();
            Parked { tool: "t".into(), run: Run::new(rx, CancellationToken::new()), reply, until, rounds: 1 }
        };
        let live = waiting.park(parked(Instant::now() + Duration::from_secs(60)));
        let stale = waiting.park(parked(Instant::now()));
        assert!(live.starts_with(STATE_PREFIX) && live != stale);
        assert!(waiting.take(&stale).is_none(), "an expired call is gone");
        assert!(waiting.take("toolgate-input:999999").is_none());
        assert!(waiting.take(&live).is_some());
        assert!(waiting.take(&live).is_none(), "a state is used once");
    }
}
