//! door: the one check every MCP request over HTTP passes before rmcp sees it.
//!
//! rmcp answers much of a session by itself: `GET` (the event stream, and its replay after
//! `Last-Event-ID`), `DELETE`, notifications (`notifications/cancelled` among them) and
//! `logging/setLevel` never reach a handler of ours. So the owner of a session is checked
//! here, in front of all of it: a request naming a session (`Mcp-Session-Id`, any verb,
//! request or notification) passes only with the token that opened it, under the profile it
//! was opened with; any other gets 403 and nothing else happens.
//!
//! - The owner is fixed when the session is created: the `initialize` that opens it runs in
//!   the [`OPENING`] scope, and the store's first record carries it. A record without an owner
//!   is never written, so no other token can restore a session on another replica or path.
//! - `DELETE` ends the session in the store for every gateway ([`SessionStore::end`]): no
//!   replica serves it again, and no write brings its record back.
//! - A session this process is about to restore (one no session manager here holds, a
//!   hibernated one included) takes a place under `max_sessions` like a new one
//!   ([`crate::session::Seat`]), before it is restored.
//! - A request with no session (2026-07-28) is its own subject: the server takes it from its
//!   path, header and token ([`crate::downstream::server`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;

use crate::access::Caller;
use crate::gateway::Gateway;
use crate::store::{Fetched, Lookup, OPENING, Owner, Saved};

/// The header that names a streamable HTTP session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The HTTP header that opens a session under a profile (`[profiles.NAME]`).
pub const PROFILE_HEADER: &str = "x-toolgate-profile";

/// Why `name` is not a profile of `gateway`, with the profiles it has.
pub(crate) fn unknown_profile(gateway: &Gateway, name: &str) -> String {
    format!(
        "no profile `{name}` in the configuration ([profiles.{name}]); known profiles: {}",
        crate::gateway::known_profiles(gateway.decider())
    )
}

/// The profile a request's caller asks for besides its path (its `X-Toolgate-Profile` header,
/// else its token's profile; `None` when neither), checked once for every door that reads it:
/// it must be configured and, for a request that came by a profile's path (`path`), be that
/// profile.
pub(crate) fn asked_profile(
    gateway: &Gateway,
    parts: &axum::http::request::Parts,
    path: Option<&str>,
) -> Result<Option<String>, rmcp::ErrorData> {
    let Some(name) = Caller::of(parts).and_then(|c| c.profile.clone()) else { return Ok(None) };
    if !gateway.decider().has_profile(&name) {
        return Err(rmcp::ErrorData::invalid_params(unknown_profile(gateway, &name), None));
    }
    match path {
        Some(path) if path != name => Err(rmcp::ErrorData::invalid_params(
            format!("{PROFILE_HEADER} names `{name}` but the path serves profile `{path}`"),
            None,
        )),
        _ => Ok(Some(name)),
    }
}

/// A JSON-RPC error response with no id, as an HTTP response of `status`.
pub(crate) fn jsonrpc_error(status: StatusCode, message: &str) -> Response {
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The door's state: the gateway, the owners of the sessions this process holds, and the
/// session managers that hold them (to close one that was ended elsewhere).
#[derive(Clone)]
pub(crate) struct Door {
    pub(crate) gateway: Gateway,
    /// The owner of every session this process opened or restored, by id.
    pub(crate) held: Arc<Mutex<HashMap<String, Owner>>>,
    /// The endpoints, whose session managers hold the sessions.
    pub(crate) endpoints: crate::downstream::endpoints::Endpoints,
    /// The event streams (`GET`) open now, by session id: a session with one is not
    /// hibernated ([`Door::streaming`]).
    pub(crate) streams: Arc<Mutex<HashMap<String, usize>>>,
}

/// One open event stream of a session, counted in [`Door::streams`] until the response body
/// that carries it is dropped (the client went away, or the session closed it).
struct OpenStream {
    streams: Arc<Mutex<HashMap<String, usize>>>,
    id: String,
}

impl OpenStream {
    fn new(door: &Door, id: &str) -> OpenStream {
        *door.streams.lock().unwrap_or_else(|e| e.into_inner()).entry(id.to_owned()).or_default() += 1;
        OpenStream { streams: door.streams.clone(), id: id.to_owned() }
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = streams.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                streams.remove(&self.id);
            }
        }
    }
}

/// A response body that keeps its [`OpenStream`] counted while it lives.
struct Counted {
    body: axum::body::Body,
    _open: OpenStream,
}

impl http_body::Body for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Door {
    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Owner>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes session `id` wherever this process holds it.
    async fn close(&self, id: &str) {
        self.held().remove(id);
        let id: rmcp::transport::streamable_http_server::session::SessionId = id.to_owned().into();
        for manager in self.endpoints.managers() {
            if manager.sessions.read().await.contains_key(&id) {
                let _ = manager.close_session(&id).await;
            }
        }
    }

    /// Whether a session manager of this process holds session `id` now.
    async fn holds(&self, id: &str) -> bool {
        let id: rmcp::transport::streamable_http_server::session::SessionId = id.to_owned().into();
        for manager in self.endpoints.managers() {
            if manager.sessions.read().await.contains_key(&id) {
                return true;
            }
        }
        false
    }

    /// Whether session `id` has an event stream open now.
    pub(crate) fn streaming(&self, id: &str) -> bool {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).contains_key(id)
    }

    /// Forgets the owners of sessions no manager holds any more (ended by rmcp or the idle
    /// expiry); `present` is every id the managers hold.
    pub(crate) fn retain(&self, present: &std::collections::HashSet<String>) {
        self.held().retain(|id, _| present.contains(id));
    }
}

impl std::fmt::Debug for Door {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Door").finish_non_exhaustive()
    }
}

/// What a request asks to be: its caller's token (by name) and the profile of its path, else
/// the one its caller asks for.
fn owner_asked(request: &Request, caller: &Caller) -> Owner {
    let from_path = request.uri().path().strip_prefix("/mcp/").map(str::to_owned);
    Owner { token: caller.token.clone(), profile: from_path.or_else(|| caller.profile.clone()) }
}

/// Around the MCP endpoints, after the access guard: the session's owner, or the owner of a
/// session being opened.
pub(crate) async fn guard(State(door): State<Door>, mut request: Request, next: Next) -> Response {
    // The access guard, outside this one, settles every request's caller.
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return jsonrpc_error(StatusCode::INTERNAL_SERVER_ERROR, "the request's caller was not settled");
    };
    let asking = owner_asked(&request, &caller);
    let Some(id) = caller.session else {
        return open(&door, asking, request, next).await;
    };
    let settings = door.gateway.settings();
    let held = door.held().get(&id).cloned();
    // A session rmcp does not hold here is restored, whatever the door remembers of it (a
    // hibernated session's owner stays known until the next pass of the reaper).
    let restoring = !door.holds(&id).await;
    let looked = settings.sessions.lookup(&id, settings.gateway.session_idle).await;
    // The record read here is the one the request's handler reads too ([`Fetched`]).
    let mut fetched = None;
    let owner = match (looked, held) {
        (Ok(Lookup::Ended), _) => {
            door.close(&id).await;
            let message = format!("session `{id}` was ended (DELETE); start a new session with initialize");
            return jsonrpc_error(StatusCode::NOT_FOUND, &message);
        }
        (Ok(Lookup::Record(text)), held) => match (Saved::from_text(&text), held) {
            (Ok(saved), _) => {
                let owner = Owner { token: saved.token.clone(), profile: saved.profile.clone() };
                fetched = Some(Fetched { id: id.clone(), saved });
                Some(owner)
            }
            (Err(_), Some(held)) => Some(held),
            (Err(e), None) => {
                tracing::warn!(session = %id, "{e}");
                return jsonrpc_error(
                    StatusCode::NOT_FOUND,
                    &format!("session `{id}` cannot be restored: {e}"),
                );
            }
        },
        (Ok(Lookup::Missing), held) => held,
        (Err(e), Some(held)) => {
            tracing::warn!(session = %id, "{e}; checking the session's owner from this gateway's own record");
            Some(held)
        }
        (Err(e), None) => {
            tracing::warn!(session = %id, "{e}");
            let message = format!("session `{id}` cannot be checked: {e}");
            return jsonrpc_error(StatusCode::SERVICE_UNAVAILABLE, &message);
        }
    };
    // Neither held here nor in the store: rmcp answers 404.
    let Some(owner) = owner else {
        return next.run(request).await;
    };
    if let Some(why) = refusal(&owner, &asking) {
        tracing::warn!(target: "toolgate::audit", session = %id, method = %request.method(),
            token = asking.token.as_deref().unwrap_or("-"), "refused: {why}");
        return jsonrpc_error(StatusCode::FORBIDDEN, &why);
    }
    if let Some(fetched) = fetched {
        request.extensions_mut().insert(fetched);
    }
    if restoring && request.method() != Method::DELETE {
        // A restored session takes a place like a new one, before it is restored.
        let Some(seat) = crate::session::Seat::take_from(&door.gateway.inner.seats) else {
            let message = format!(
                "toolgate serves at most {} sessions at once ([gateway] max_sessions) and they are all open; \
                 session `{id}` cannot be taken over here now",
                settings.gateway.max_sessions
            );
            return jsonrpc_error(StatusCode::SERVICE_UNAVAILABLE, &message);
        };
        request.extensions_mut().insert(seat);
    }
    if request.method() == Method::DELETE {
        let response = next.run(request).await;
        if let Err(e) = settings
            .sessions
            .end(&id, settings.gateway.session_idle.max(std::time::Duration::from_secs(3600)))
            .await
        {
            tracing::warn!(session = %id, "{e}; the session is ended on this gateway only");
        }
        door.close(&id).await;
        tracing::info!(session = %id, "session ended by its client (DELETE)");
        crate::session::closed_sessions();
        return match response.status() {
            StatusCode::FORBIDDEN | StatusCode::BAD_REQUEST => response,
            _ => StatusCode::NO_CONTENT.into_response(),
        };
    }
    let event_stream = request.method() == Method::GET;
    let response = next.run(request).await;
    if restoring && response.status().is_success() {
        door.held().insert(id.clone(), owner);
    }
    if event_stream && response.status().is_success() {
        let open = OpenStream::new(&door, &id);
        return response.map(|body| axum::body::Body::new(Counted { body, _open: open }));
    }
    response
}

/// Why `asking` may not use a session of `owner`, if it may not.
fn refusal(owner: &Owner, asking: &Owner) -> Option<String> {
    if owner.token != asking.token {
        return Some(
            "this session was opened with another bearer token or identity; a session answers only \
             the static token, or the OAuth issuer and subject, that opened it (start a new session with initialize)"
                .to_owned(),
        );
    }
    match (&owner.profile, &asking.profile) {
        (Some(was), Some(asked)) if was != asked => {
            Some(format!("this session was opened under profile `{was}`, not `{asked}`"))
        }
        (None, Some(asked)) => {
            Some(format!("this session was opened without a profile, not under `{asked}`"))
        }
        _ => None,
    }
}

/// A request naming no session: an `initialize` opens one in the [`OPENING`] scope, so that its
/// first record names its owner, and this process remembers the owner of what it opened.
async fn open(door: &Door, asking: Owner, request: Request, next: Next) -> Response {
    let response = OPENING.scope(asking.clone(), next.run(request)).await;
    if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
        door.held().insert(id.to_owned(), asking);
    }
    response
}
