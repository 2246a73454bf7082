//! resume: an HTTP session kept in the [session store](crate::store) by its server.
//!
//! Every request that reads or changes the conversation first *pulls*: it reads the session's
//! record and, when another gateway wrote a newer one, takes its conversation. What changed the
//! conversation (a search, a tool list, a call) is then *pushed* back before the answer goes
//! out, so that the client's next request finds it on any replica. A gateway that meets a
//! session it does not hold *restores* it: rmcp replays the stored `initialize`, marked as a
//! restore, and the server takes the token, profile and conversation from the record. The
//! restored conversation has met no toolbox, so its first use re-checks it against this
//! gateway's catalog and policy ([`Toolbox::resume`](toolgate::Toolbox::resume)).
//!
//! A session answers only the bearer token it was opened with, in this process and on any
//! other. A store that cannot be reached leaves the session to this process's own state, with
//! a warning: the answer may then miss what another replica loaded, never allow more.

use rmcp::model::InitializeRequestParams;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::SessionRestoreMarker;
use rmcp::{ErrorData, RoleServer};
use toolgate::Conversation;

use crate::access::Caller;
use crate::downstream::door::asked_profile;
use crate::downstream::server::GatewayServer;
use crate::gateway::Gateway;
use crate::store::{Saved, StoreError};

/// The HTTP request behind a request context, if it came over HTTP.
fn http_parts(context: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    context.extensions.get::<axum::http::request::Parts>()
}

/// The caller's token (by name) as the access guard found it.
fn token_of(parts: &axum::http::request::Parts) -> Option<String> {
    Caller::of(parts).and_then(|c| c.token.clone())
}

/// A request of an HTTP session that [`Record::check_caller`] let through.
#[derive(Debug)]
pub(crate) struct Checked {
    /// The session's `Mcp-Session-Id`, once a request named it.
    session: Option<String>,
    /// The caller's token, by name.
    token: Option<String>,
}

fn other_token() -> ErrorData {
    ErrorData::invalid_request(
        "this session was opened with another bearer token or identity; a session answers only \
             the static token, or the OAuth issuer and subject, that opened it (start a new session with initialize)",
        None,
    )
}

impl GatewayServer {
    /// This session's record in the session store.
    pub(crate) fn record(&self) -> Record<'_> {
        Record { server: self }
    }
}

/// An HTTP session's record in the session store, and who may use the session: a view of its
/// server with no state of its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record<'a> {
    server: &'a GatewayServer,
}

impl Record<'_> {
    /// At `initialize`: binds the session to the caller's token and keeps the parameters for
    /// the store; on a restore replay, takes the session back from its record instead.
    pub(crate) async fn begin(
        &self,
        request: &InitializeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(parts) = http_parts(context) else {
            return Ok(());
        };
        let token = token_of(parts);
        {
            let mut state = self.server.state();
            state.stored.token = token.clone();
            state.stored.initialize = serde_json::to_value(request).ok();
        }
        let Some(marker) = context.extensions.get::<SessionRestoreMarker>() else {
            return Ok(());
        };
        let id = marker.id.to_string();
        let refuse = |why: String| {
            tracing::warn!(target: "toolgate::audit", session = %id, "refused to resume a session: {why}");
            ErrorData::invalid_request(why, None)
        };
        let saved = match self.saved(&id, context).await {
            Ok(Some(saved)) => saved,
            Ok(None) => return Err(refuse("the session is not in the session store any more".into())),
            Err(e) => return Err(refuse(e.to_string())),
        };
        if !saved.answers(&token) {
            return Err(refuse("the request's bearer token is not the one that opened the session".into()));
        }
        let asked =
            self.server.state().profile.clone().or_else(|| Caller::of(parts).and_then(|c| c.profile.clone()));
        let profile = match (asked, saved.profile.clone()) {
            (Some(asked), Some(was)) if asked != was => {
                return Err(refuse(format!("the session was opened under profile `{was}`, not `{asked}`")));
            }
            (asked, was) => asked.or(was),
        };
        if let Some(name) = &profile
            && !self.server.gateway().decider().has_profile(name)
        {
            return Err(refuse(format!(
                "the session's profile `{name}` is not in this gateway's configuration"
            )));
        }
        let conversation = match &saved.conversation {
            None => None,
            Some(value) => Some(Conversation::from_json(value).map_err(|e| refuse(e.to_string()))?),
        };
        let mut state = self.server.state();
        state.profile = profile;
        if let Some(conversation) = conversation {
            state.conversation = conversation;
        }
        state.stored.id = Some(id.clone());
        state.stored.seq = saved.seq;
        let store = self.server.gateway().settings().sessions.describe();
        tracing::info!(session = %id, seq = saved.seq, store = %store, "session resumed from the store");
        Ok(())
    }

    /// The session's record: as the HTTP door read it for this request, else read back from
    /// the store.
    async fn saved(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Saved>, StoreError> {
        let fetched = http_parts(context).and_then(|parts| parts.extensions.get::<crate::store::Fetched>());
        if let Some(fetched) = fetched.filter(|f| f.id == id) {
            return Ok(Some(fetched.saved.clone()));
        }
        let settings = self.server.gateway().settings();
        match settings.sessions.load(id, settings.session_idle).await? {
            Some(text) => Saved::from_text(&text).map(Some),
            None => Ok(None),
        }
    }

    /// Before any request of an HTTP session: refuses a token other than the one that opened
    /// it and a request naming another session. `None` on stdio, and for a request with no
    /// session (2026-07-28), which takes its subject from its own path, header and token
    /// ([`Record::adopt_subject`]).
    pub(crate) fn check_caller(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Checked>, ErrorData> {
        let Some(parts) = http_parts(context) else {
            return Ok(None);
        };
        if self.server.is_stateless(context) {
            self.adopt_subject(parts, context)?;
            return Ok(None);
        }
        let token = token_of(parts);
        let mut state = self.server.state();
        if state.stored.token != token {
            return Err(other_token());
        }
        let header = Caller::of(parts).and_then(|c| c.session.as_deref());
        match (&state.stored.id, header) {
            (None, Some(header)) => state.stored.id = Some(header.to_owned()),
            (Some(id), Some(header)) if id != header => {
                return Err(ErrorData::invalid_request("the request names another session", None));
            }
            _ => {}
        }
        Ok(Some(Checked { session: state.stored.id.clone(), token }))
    }

    /// A request with no session is its own subject: the profile of its path, else of the
    /// header `X-Toolgate-Profile` (which the access guard sets from a profile-bound token, and
    /// refuses when it names another), seen in bridge exposure with grants.
    fn adopt_subject(
        &self,
        parts: &axum::http::request::Parts,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let path = self.server.state().profile.clone();
        let asked = asked_profile(self.server.gateway(), parts, path.as_deref())?;
        let mut state = self.server.state();
        if let Some(name) = asked {
            state.profile = Some(name);
        }
        state.granted = true;
        // rmcp may have read the server's info before this request's subject was known, and
        // that froze an announcement of another subject: this request starts from nothing.
        state.instructions = None;
        state.conversation = Conversation::default();
        state.revision = context.protocol_version();
        if let Some(info) = context.client_info() {
            state.client = format!("{} {}", info.name, info.version);
        }
        Ok(())
    }

    /// Before a request that reads the conversation: [`Record::check_caller`], then
    /// takes a newer record written by another gateway.
    pub(crate) async fn pull(&self, context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let Some(Checked { session: Some(id), token }) = self.check_caller(context)? else {
            return Ok(());
        };
        let saved = match self.saved(&id, context).await {
            Ok(Some(saved)) => saved,
            Ok(None) => return Ok(()),
            Err(e) => {
                tracing::warn!(session = %id, "{e}; answering from this gateway's own state");
                return Ok(());
            }
        };
        if !saved.answers(&token) {
            return Err(other_token());
        }
        let mut state = self.server.state();
        if saved.seq > state.stored.seq {
            match saved.conversation.as_ref().map(Conversation::from_json) {
                Some(Ok(conversation)) => state.conversation = conversation,
                Some(Err(e)) => tracing::warn!(session = %id, "{e}; keeping this gateway's own"),
                None => {}
            }
            state.stored.seq = saved.seq;
            state.stored.pushed = None;
        }
        Ok(())
    }

    /// After a request that may have changed the conversation: writes the session's record
    /// when it did.
    pub(crate) async fn push(&self) {
        let writing = self.server.state().stored.writing.clone();
        let _writing = writing.lock().await;
        let (id, saved) = {
            let mut state = self.server.state();
            let Some(id) = state.stored.id.clone() else {
                return;
            };
            let conversation = state.conversation.to_json();
            let digest = digest(&conversation);
            if state.stored.pushed == Some(digest) {
                return;
            }
            state.stored.seq += 1;
            state.stored.pushed = Some(digest);
            let saved = Saved {
                seq: state.stored.seq,
                initialize: state.stored.initialize.clone().unwrap_or_default(),
                token: state.stored.token.clone(),
                profile: state.profile.clone(),
                conversation: Some(conversation),
            };
            (id, saved)
        };
        let settings = self.server.gateway().settings();
        if let Err(e) = settings.sessions.save(&id, &saved.to_text(), settings.session_idle).await {
            tracing::warn!(session = %id, "{e}; the session's changes live only in this gateway");
            self.server.state().stored.pushed = None;
        }
    }

    /// After a search that changed this session's tool list: tells the other gateways, one of
    /// which may hold the client's event stream.
    pub(crate) async fn announce(&self) {
        let Some(id) = self.server.state().stored.id.clone() else {
            return;
        };
        if let Err(e) = self.server.gateway().settings().sessions.announce(&id).await {
            tracing::warn!(session = %id, "{e}");
        }
    }
}

impl Gateway {
    /// Until shutdown: tells the clients of the sessions other gateways announced that their
    /// tool list changed (when this gateway holds them).
    pub(crate) fn relay_announcements(&self) {
        let Some(mut announced) = self.settings().sessions.announced() else {
            return;
        };
        let gateway = self.clone();
        let shutdown = self.inner.shutdown.clone();
        tokio::spawn(async move {
            loop {
                let id = tokio::select! {
                    _ = shutdown.cancelled() => return,
                    id = announced.recv() => id,
                };
                let id = match id {
                    Ok(id) => id,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                for slot in gateway.sessions().live() {
                    let mut state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
                    if state.stored.id.as_deref() == Some(id.as_str()) {
                        state.listed = None;
                        tokio::spawn(state.list_changed_notice());
                    }
                }
            }
        });
    }
}

/// A digest of a conversation's saved form.
fn digest(value: &serde_json::Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}
