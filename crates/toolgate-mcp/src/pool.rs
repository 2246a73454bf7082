//! pool: the gateway's side of its upstreams. An upstream's state changes rebuild the
//! snapshot (the upstream layer reports them through [`Host`]), an allowed call is forwarded
//! to the upstream that serves the tool, and a name no tool has may still say which server is
//! down.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotificationParam, ClientCapabilities,
    ClientRequest, InputRequest, InputResponses, ProgressToken, RequestMetaObject, ServerResult,
    TASKS_EXTENSION_ID,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{ErrorData, Peer, RoleClient, RoleServer, ServiceError};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use toolgate::{Tool, ToolSpec};

use crate::gateway::Gateway;
use crate::upstream::convert::complete;
use crate::upstream::elicit::{Ask, Event, MAX_ROUNDS, Run};
use crate::upstream::progress::Relay;
use crate::upstream::unreachable::Unreachable;
use crate::upstream::{Host, State, error_result, transport_error};

// Logging is deprecated in the newest protocol version but relayed for the older ones.
#[allow(deprecated)]
impl Host for Gateway {
    /// Records an upstream's new state (and its tools and connection when given) and rebuilds.
    fn set_state(
        &self,
        name: &str,
        state: State,
        tools: Option<Vec<ToolSpec>>,
        peer: Option<Peer<RoleClient>>,
    ) {
        let keep = {
            let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            let Some(u) = pool.get_mut(name) else { return };
            if state != State::Ready {
                // A server starting the first time keeps what it listed last time, if anything.
                if !(state == State::Starting && u.remembered) {
                    u.forget_tools();
                }
                u.peer = None;
            }
            let mut keep = None;
            if let Some(tools) = tools {
                u.tools = tools.into_iter().map(std::sync::Arc::new).collect();
                u.remembered = false;
                keep = u.listing_file.clone().map(|file| (file, u.tools.clone()));
            }
            if peer.is_some() {
                u.peer = peer;
            }
            if let State::Failed(reason) = &state {
                u.last_error = Some(reason.clone());
            }
            if matches!(u.state, State::Failed(_)) && state == State::Starting {
                u.restarts += 1;
                self.inner.metrics.restarted(name);
            }
            match state {
                State::Starting => u.starting_since = Some(std::time::Instant::now()),
                State::Ready => {
                    if let Some(since) = u.starting_since.take() {
                        u.started_in = Some(since.elapsed());
                    }
                }
                _ => u.starting_since = None,
            }
            u.state = state;
            keep
        };
        if let (Some((file, tools)), Some(store)) =
            (keep, self.inner.remembered.get().and_then(Option::as_ref))
        {
            store.save(&file, &tools);
        }
        // Required tools that do not fit are a configuration error, never a silent drop: the
        // rebuild fails this server with that message.
        if let Err(e) = self.rebuild(Some(name)) {
            tracing::error!(upstream = %name, "{e}");
        }
    }

    async fn pass_log_level(&self, name: &str, peer: &Peer<RoleClient>) {
        self.passthrough().pass_log_level(name, peer).await;
    }

    fn relay_log(&self, name: &str, params: rmcp::model::LoggingMessageNotificationParam) {
        self.passthrough().relay_log(name, params);
    }

    fn relay_list_changed(&self, prompts: bool) {
        self.passthrough().relay_list_changed(prompts);
    }

    fn restart_backoff(&self) -> Option<Duration> {
        self.settings().restart_backoff
    }

    fn startup_timeout(&self) -> Duration {
        self.settings().gateway.startup_timeout
    }

    fn progress(&self) -> Arc<Relay> {
        self.inner.progress.clone()
    }

    async fn elicit(
        &self,
        name: &str,
        params: rmcp::model::ElicitRequestParams,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.inner.inflight.route(name, params, self.settings().gateway.call_timeout).await
    }
}

impl Gateway {
    /// The gateway's side of its upstreams: calls forwarded to them.
    pub(crate) fn upstreams(&self) -> Upstreams<'_> {
        Upstreams { gateway: self }
    }
}

/// Calls and task requests forwarded to a gateway's upstreams: a view of the gateway with no
/// state of its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Upstreams<'a> {
    gateway: &'a Gateway,
}

impl Upstreams<'_> {
    /// Why a name the gate does not know may still belong to an upstream that is down: the
    /// name read as the catalog qualifies names ([`toolgate::naming::split`]).
    pub(crate) fn unavailable(&self, name: &str) -> Option<Unreachable> {
        let (server, own) = toolgate::naming::split(toolgate::naming::strip_mcp_prefix(name))?;
        let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        let u = pool.values().find(|u| toolgate::naming::normalize_server(&u.name) == server)?;
        match &u.state {
            State::Failed(reason) => Some(Unreachable::Failed {
                server: u.name.clone(),
                tool: own.to_owned(),
                reason: reason.clone(),
            }),
            State::Starting => Some(Unreachable::Starting { server: u.name.clone() }),
            _ => None,
        }
    }

    /// Starts forwarding an allowed call of `tool` (served by upstream `owner`; `params` in the
    /// upstream's terms, its own name for the tool among them), in a task of its own: the returned [`Run`] yields the questions
    /// the upstream asks on the way ([`crate::upstream::elicit`]) and then the answer, or a tool error
    /// that says what went wrong. Dropping the run cancels the call upstream.
    pub(crate) fn start_call(
        &self,
        owner: &str,
        tool: &Tool,
        params: CallToolRequestParams,
        downstream: Downstream,
    ) -> Run {
        let (tx, rx) = mpsc::channel(4);
        let cancel = CancellationToken::new();
        let run = Run::new(rx, cancel.clone());
        // `params.meta` is the call stage's: the client's own _meta (its progress token, its
        // revision) is not the upstream's business, the trace's `traceparent` is; a 2026-07-28
        // upstream gets the client's capabilities below.
        let gateway = self.gateway.clone();
        let owner = owner.to_owned();
        let qualified = tool.qualified_name().to_owned();
        let shown = tool.hash();
        let tool = tool.clone();
        tokio::spawn(async move {
            let upstreams = gateway.upstreams();
            let (peer, timeout) = match upstreams.peer_when_ready(&owner, &tool, shown).await {
                Ok(found) => found,
                Err(why) => {
                    let _ = tx.send(Event::Unreachable(why)).await;
                    return;
                }
            };
            let inflight = gateway.inner.inflight.clone();
            let declared = downstream.capabilities.elicitation.is_some();
            let _entry = inflight.open(&owner, downstream.session, declared.then(|| tx.clone()));
            let answer = tokio::select! {
                answer = upstreams.call_rounds(&owner, &qualified, &peer, timeout, params, &downstream, &tx) => answer,
                () = cancel.cancelled() => {
                    tracing::debug!(upstream = %owner, tool = %qualified, "the client's call was cancelled");
                    return;
                }
            };
            let _ = tx.send(Event::Done(answer)).await;
        });
        run
    }

    /// [`Upstreams::peer`], once upstream `owner` is past starting: a tool it listed last time
    /// ([`crate::upstream::remembered`]) is called once the server is up (within its
    /// `startup_timeout_secs`), and only if the definition it lists then is `shown`, the one
    /// the model was shown.
    async fn peer_when_ready(
        &self,
        owner: &str,
        tool: &Tool,
        shown: toolgate::catalog::DefinitionHash,
    ) -> Result<(Peer<RoleClient>, Duration), Unreachable> {
        let starting = || {
            let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            pool.get(owner).is_some_and(|u| u.state == State::Starting)
        };
        if starting() {
            let mut changes = self.gateway.inner.changes.subscribe();
            let waited = tokio::time::timeout(self.gateway.settings().gateway.startup_timeout, async {
                while starting() {
                    if changes.changed().await.is_err() {
                        return;
                    }
                }
            });
            let _ = waited.await;
            let snapshot = self.gateway.snapshot();
            let catalog = &snapshot.state.catalog;
            let now = catalog.get(tool.qualified_name()).map(|id| catalog.tool(id).hash());
            if !starting() && now != Some(shown) {
                return Err(Unreachable::Changed {
                    server: owner.to_owned(),
                    tool: tool.qualified_name().to_owned(),
                });
            }
        }
        self.peer(owner, tool)
    }

    /// The connection to upstream `owner` and its call timeout, or why `tool` cannot be called
    /// now.
    /// Whose token the call goes with is decided when it is sent
    /// ([`credential_of`](crate::oauth::client::credential_of)), for every kind of request.
    fn peer(&self, owner: &str, tool: &Tool) -> Result<(Peer<RoleClient>, Duration), Unreachable> {
        let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        let Some(u) = pool.get(owner) else {
            return Err(Unreachable::Gone { server: owner.to_owned() });
        };
        match (&u.state, &u.peer) {
            (State::Static, _) => Err(Unreachable::Static { tool: tool.qualified_name().to_owned() }),
            (State::Ready, Some(peer)) => {
                Ok((peer.clone(), u.call_timeout.unwrap_or(self.gateway.settings().gateway.call_timeout)))
            }
            (State::Failed(reason), _) => Err(Unreachable::Failed {
                server: owner.to_owned(),
                tool: tool.qualified_name().to_owned(),
                reason: reason.clone(),
            }),
            _ => Err(Unreachable::NotConnected { server: owner.to_owned() }),
        }
    }

    /// The call's rounds with the upstream: one, or one per answer the upstream asked for
    /// (2026-07-28 upstreams, a 2025-11-25 client answering through `events`).
    #[allow(clippy::too_many_arguments)]
    async fn call_rounds(
        &self,
        owner: &str,
        qualified: &str,
        peer: &Peer<RoleClient>,
        timeout: Duration,
        mut params: CallToolRequestParams,
        downstream: &Downstream,
        events: &mpsc::Sender<Event>,
    ) -> CallToolResponse {
        let modern_upstream = crate::upstream::is_modern(peer);
        for _ in 0..MAX_ROUNDS {
            let mut options = PeerRequestOptions::with_timeout(timeout);
            if modern_upstream {
                // The upstream asks only what the client that made the call can answer.
                let mut meta = RequestMetaObject::new();
                meta.set_client_capabilities(relayed_capabilities(&downstream.capabilities));
                options.meta = Some(meta);
            }
            // The caller's token rides beside the request, never sent: the upstream's HTTP
            // client exchanges it for a token of the caller's own.
            let request = crate::oauth::client::for_caller(
                ClientRequest::CallToolRequest(CallToolRequest::new(params.clone())),
                downstream.on_behalf.as_ref(),
            );
            let handle = match peer.send_request_with_option(request, options).await {
                Ok(h) => h,
                Err(e) => return transport_error(owner, qualified, &e),
            };
            let relay = self.gateway.inner.progress.clone();
            let _route = downstream
                .progress
                .clone()
                .map(|(client, token)| relay.open(owner, &handle.progress_token, client, token));
            let id = handle.id.clone();
            let cancelled = CancelOnDrop { peer: peer.clone(), id: Some(id) };
            let outcome = handle.await_response().await;
            cancelled.disarm();
            let asked = match outcome {
                Ok(ServerResult::CallToolResult(result)) => {
                    return CallToolResponse::Complete(complete::call(result));
                }
                Ok(ServerResult::InputRequiredResult(asked)) => asked,
                Ok(ServerResult::CreateTaskResult(task)) if downstream.capabilities.supports_tasks() => {
                    return CallToolResponse::Task(task);
                }
                Ok(ServerResult::CreateTaskResult(_)) => {
                    return error_result(format!(
                        "server `{owner}` answered `{qualified}` with a task, but the client did not declare tasks"
                    ));
                }
                Ok(other) => {
                    return error_result(format!(
                        "server `{owner}` answered the call to `{qualified}` with something that is not a tool \
                         result: {}",
                        serde_json::to_string(&other).unwrap_or_default()
                    ));
                }
                Err(ServiceError::Timeout { .. }) => {
                    return error_result(format!(
                        "server `{owner}` did not answer the call to `{qualified}` within {} s, so the call was \
                         cancelled; try again, or raise the server's call_timeout_secs in the configuration",
                        timeout.as_secs_f32()
                    ));
                }
                Err(e) => return transport_error(owner, qualified, &e),
            };
            // A 2026-07-28 upstream asks for input. Only questions the client declared it can
            // answer go on; anything else ends the call with the reason.
            let requests = asked.input_requests.clone().unwrap_or_default();
            let mut questions = Vec::new();
            for (key, request) in &requests {
                match request {
                    InputRequest::Elicitation(e) if downstream.capabilities.elicitation.is_some() => {
                        questions.push((key.clone(), e.params.clone()));
                    }
                    other => {
                        let kind = match other {
                            InputRequest::Elicitation(_) => "elicitation, which the client did not declare",
                            InputRequest::CreateMessage(_) => "sampling, which toolgate does not relay",
                            InputRequest::ListRoots(_) => "roots, which toolgate does not relay",
                            _ => "an input toolgate does not know",
                        };
                        return error_result(format!(
                            "server `{owner}` asked for input during `{qualified}` that cannot be given: {kind}"
                        ));
                    }
                }
            }
            if downstream.modern {
                // The client answers in its own retry; the upstream's state goes to it untouched.
                return CallToolResponse::InputRequired(asked);
            }
            let mut answers = InputResponses::new();
            for (key, question) in questions {
                let (reply, answer) = oneshot::channel();
                if events.send(Event::Ask(Ask { params: question, reply })).await.is_err() {
                    return error_result(
                        "the client's call ended while the server asked it something".into(),
                    );
                }
                match answer.await {
                    Ok(Ok(result)) => {
                        answers.insert(key, serde_json::to_value(result).unwrap_or_default());
                    }
                    Ok(Err(e)) => {
                        return error_result(format!(
                            "the client could not answer `{owner}`'s question: {e}"
                        ));
                    }
                    Err(_) => return error_result("the client's call ended before it answered".into()),
                }
            }
            params.input_responses = Some(answers);
            params.request_state = asked.request_state;
        }
        error_result(format!(
            "server `{owner}` asked for input more than {MAX_ROUNDS} times during `{qualified}`; gave up"
        ))
    }

    /// Sends a `tasks/*` request to upstream `name`, telling it the client's capabilities as
    /// for the call that started the task.
    pub(crate) async fn task_request(
        &self,
        name: &str,
        request: ClientRequest,
        caps: &ClientCapabilities,
    ) -> Result<ServerResult, ErrorData> {
        let (peer, timeout) = {
            let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            let upstream = pool.get(name).and_then(|u| u.peer.clone().map(|p| (p, u.call_timeout)));
            upstream.ok_or_else(|| {
                ErrorData::internal_error(
                    format!("server `{name}`, which runs the task, is not connected"),
                    None,
                )
            })?
        };
        let mut options =
            PeerRequestOptions::with_timeout(timeout.unwrap_or(self.gateway.settings().gateway.call_timeout));
        let mut meta = RequestMetaObject::new();
        meta.set_client_capabilities(relayed_capabilities(caps));
        options.meta = Some(meta);
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| ErrorData::internal_error(format!("server `{name}`: {e}"), None))?;
        handle.await_response().await.map_err(|e| match e {
            rmcp::ServiceError::McpError(error) => error,
            e => ErrorData::internal_error(format!("server `{name}`: {e}"), None),
        })
    }
}

/// The downstream end of a forwarded call: the session that made it, what the upstream may
/// ask of its client, and where progress goes.
#[derive(Debug, Clone)]
pub(crate) struct Downstream {
    /// The session that made the call (its slot's address), to route questions to.
    pub(crate) session: usize,
    /// The capabilities the client declared (for this request, on 2026-07-28).
    pub(crate) capabilities: ClientCapabilities,
    /// Whether the client speaks 2026-07-28 (it answers questions in a retry of its call).
    pub(crate) modern: bool,
    /// The client and its progress token, if it asked for progress.
    pub(crate) progress: Option<(Peer<RoleServer>, ProgressToken)>,
    /// The caller's OAuth access token, for an upstream that acts for each user.
    pub(crate) on_behalf: Option<std::sync::Arc<str>>,
}

/// What of a client's capabilities toolgate passes on to a 2026-07-28 upstream: what it
/// relays (elicitation, the tasks extension), nothing it does not.
pub(crate) fn relayed_capabilities(client: &ClientCapabilities) -> ClientCapabilities {
    let mut relayed = ClientCapabilities::default();
    relayed.elicitation = client.elicitation.clone();
    if client.supports_tasks() {
        let tasks = client.extensions.iter().flatten().filter(|(id, _)| id.as_str() == TASKS_EXTENSION_ID);
        relayed.extensions = Some(tasks.map(|(id, settings)| (id.clone(), settings.clone())).collect());
    }
    relayed
}

/// Tells the upstream that a call was cancelled, unless disarmed first (dropped with the task
/// when the client's call is cancelled).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl CancelOnDrop {
    fn disarm(mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let reason = Some("the client cancelled the call".to_owned());
            let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), reason)).await;
        });
    }
}
