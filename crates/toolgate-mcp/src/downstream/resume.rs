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
//! other: the door checks that before rmcp routes a request to a session. A store that cannot
//! be reached leaves the session to this process's own state, with a warning: the answer may
//! then miss what another replica loaded, never allow more.

use rmcp::model::InitializeRequestParams;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::SessionRestoreMarker;
use rmcp::{ErrorData, RoleServer};
use toolgate::Conversation;

use crate::access::Caller;
use crate::downstream::door::asked_profile;
use crate::downstream::server::{GatewayServer, client_of};
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

impl GatewayServer {
    /// This session's record in the session store.
    pub(crate) fn record(&self) -> Record<'_> {
        Record { server: self }
    }
}

/// An HTTP session's record in the session store: a view of its server with no state of its
/// own. Who may use the session is the door's one check ([`crate::downstream::door`]), made
/// before rmcp routes the request here.
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
        self.server.state().reach_mut().owned_by(token_of(parts), serde_json::to_value(request).ok());
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
        // The door let only the session's owner through, under its profile.
        let path = self.server.state().profile().map(str::to_owned);
        let profile =
            path.or_else(|| Caller::of(parts).and_then(|c| c.profile.clone())).or(saved.profile.clone());
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
        self.server.state().restored(id.clone(), &saved, profile, conversation);
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
        match settings.sessions.load(id, settings.gateway.session_idle).await? {
            Some(text) => Saved::from_text(&text).map(Some),
            None => Ok(None),
        }
    }

    /// Before any request of an HTTP session: binds the session to the id the request names
    /// (refusing one naming another session) and answers that id. `None` on a connection of
    /// its own, and for a request with no session (2026-07-28), which becomes its own subject
    /// from its path, header and token.
    pub(crate) fn enter(&self, context: &RequestContext<RoleServer>) -> Result<Option<String>, ErrorData> {
        let Some(parts) = http_parts(context) else {
            return Ok(None);
        };
        if self.server.is_stateless(context) {
            let path = self.server.state().profile().map(str::to_owned);
            let asked = asked_profile(self.server.gateway(), parts, path.as_deref())?;
            self.server.state().sessionless(asked, context.protocol_version(), client_of(context));
            return Ok(None);
        }
        let header = Caller::of(parts).and_then(|c| c.session.as_deref());
        self.server.state().reach_mut().named(header).map_err(|why| ErrorData::invalid_request(why, None))
    }

    /// Before a request that reads the conversation of session `id` (as [`Record::enter`]
    /// answered it): takes a newer record written by another gateway.
    pub(crate) async fn pull(&self, id: &str, context: &RequestContext<RoleServer>) {
        let saved = match self.saved(id, context).await {
            Ok(Some(saved)) => saved,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(session = %id, "{e}; answering from this gateway's own state");
                return;
            }
        };
        if !self.server.state().reach().is_newer(&saved) {
            return;
        }
        let conversation = match saved.conversation.as_ref().map(Conversation::from_json) {
            Some(Ok(conversation)) => Some(conversation),
            Some(Err(e)) => {
                tracing::warn!(session = %id, "{e}; keeping this gateway's own");
                None
            }
            None => None,
        };
        self.server.state().caught_up(&saved, conversation);
    }

    /// After a request that may have changed the conversation: writes the session's record
    /// when it did.
    pub(crate) async fn push(&self) {
        let Some(writing) = self.server.state().reach().writing() else { return };
        let _writing = writing.lock().await;
        let Some((id, saved)) = self.server.state().next_record() else { return };
        let settings = self.server.gateway().settings();
        if let Err(e) = settings.sessions.save(&id, &saved.to_text(), settings.gateway.session_idle).await {
            tracing::warn!(session = %id, "{e}; the session's changes live only in this gateway");
            self.server.state().reach_mut().not_written();
        }
    }

    /// After a search that changed this session's tool list: tells the other gateways, one of
    /// which may hold the client's event stream.
    pub(crate) async fn announce(&self) {
        let Some(id) = self.server.state().reach().session_id().map(str::to_owned) else {
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
                    if state.reach().session_id() == Some(id.as_str()) {
                        state.listener_mut().list_changed();
                        tokio::spawn(state.listener().list_changed_notice());
                    }
                }
            }
        });
    }
}
