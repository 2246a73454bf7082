//! pool: the gateway's side of its upstreams. An upstream's state changes rebuild the
//! snapshot (the upstream layer reports them through [`Host`]), an allowed call is forwarded
//! to the upstream that serves the tool, and a name no tool has may still say which server is
//! down.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotificationParam, ClientRequest,
    ProgressToken, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, RoleServer, ServiceError};
use tokio_util::sync::CancellationToken;
use toolgate::{Tool, ToolSpec};

use crate::convert::complete;
use crate::gateway::Gateway;
use crate::progress::Relay;
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
        {
            let mut pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            let Some(u) = pool.get_mut(name) else { return };
            if state != State::Ready {
                u.tools.clear();
                u.peer = None;
            }
            if let Some(tools) = tools {
                u.tools = tools.into_iter().map(std::sync::Arc::new).collect();
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
            u.state = state;
        }
        // Required tools that do not fit are a configuration error, never a silent drop: the
        // rebuild fails this server with that message.
        if let Err(e) = self.rebuild(Some(name)) {
            tracing::error!(upstream = %name, "{e}");
        }
    }

    async fn pass_log_level(&self, name: &str, peer: &Peer<RoleClient>) {
        Gateway::pass_log_level(self, name, peer).await;
    }

    fn relay_log(&self, name: &str, params: rmcp::model::LoggingMessageNotificationParam) {
        Gateway::relay_log(self, name, params);
    }

    fn relay_list_changed(&self, prompts: bool) {
        Gateway::relay_list_changed(self, prompts);
    }

    fn shutdown(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    fn restart_backoff(&self) -> Option<Duration> {
        self.settings().restart_backoff
    }

    fn startup_timeout(&self) -> Duration {
        self.settings().startup_timeout
    }

    fn progress(&self) -> Arc<Relay> {
        self.inner.progress.clone()
    }
}

impl Gateway {
    /// Why a name the gate does not know may still belong to an upstream that is down.
    pub(crate) fn unavailable_server(&self, name: &str) -> Option<String> {
        let bare = name.strip_prefix("mcp__").unwrap_or(name);
        let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.values().find_map(|u| {
            let server = toolgate::naming::normalize_server(&u.name);
            let own = bare.strip_prefix(server.as_str())?.strip_prefix("__")?;
            match &u.state {
                State::Failed(reason) => Some(format!(
                    "tool `{own}` of server `{}` is unavailable: the server failed ({reason})",
                    u.name
                )),
                State::Starting => Some(format!(
                    "server `{}` is still starting, so its tools are not available yet; try again shortly",
                    u.name
                )),
                _ => None,
            }
        })
    }

    /// Forwards an allowed call of `tool` (served by upstream `owner`) under the upstream's own
    /// tool name and returns the upstream's answer, or a tool error that says what went wrong.
    pub(crate) async fn forward(
        &self,
        owner: &str,
        tool: &Tool,
        mut params: CallToolRequestParams,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
        cancelled: CancellationToken,
    ) -> CallToolResponse {
        let (peer, timeout) = {
            let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            let Some(u) = pool.get(owner) else {
                return error_result(format!("server `{owner}` is not configured any more"));
            };
            match (&u.state, &u.peer) {
                (State::Static, _) => {
                    return error_result(format!(
                        "demo tool `{}`, not connected: toolgate serves it from a static catalog",
                        tool.qualified_name()
                    ));
                }
                (State::Ready, Some(peer)) => {
                    (peer.clone(), u.call_timeout.unwrap_or(self.settings().call_timeout))
                }
                (State::Failed(reason), _) => {
                    return error_result(format!(
                        "tool `{}` is unavailable: server `{owner}` failed ({reason})",
                        tool.qualified_name()
                    ));
                }
                _ => {
                    return error_result(format!(
                        "server `{owner}` is not connected right now; try again shortly"
                    ));
                }
            }
        };
        params.name = tool.name().to_owned().into();
        // The client's own _meta (its progress token) is not the upstream's business.
        params.meta = None;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout);
        let handle = match peer.send_request_with_option(request, options).await {
            Ok(h) => h,
            Err(e) => return transport_error(owner, tool, &e),
        };
        let id = handle.id.clone();
        let _route = progress
            .map(|(client, token)| self.inner.progress.open(owner, &handle.progress_token, client, token));
        let outcome = tokio::select! {
            r = handle.await_response() => r,
            () = cancelled.cancelled() => {
                let reason = Some("the client cancelled the call".to_owned());
                let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), reason)).await;
                return error_result(format!("the call to `{}` was cancelled by the client", tool.qualified_name()));
            }
        };
        match outcome {
            Ok(ServerResult::CallToolResult(result)) => CallToolResponse::Complete(complete::call(result)),
            Ok(ServerResult::InputRequiredResult(result)) => CallToolResponse::InputRequired(result),
            Ok(ServerResult::CreateTaskResult(_)) => error_result(format!(
                "server `{owner}` answered `{}` with a task, which toolgate does not relay yet",
                tool.qualified_name()
            )),
            Ok(other) => error_result(format!(
                "server `{owner}` answered the call to `{}` with something that is not a tool result: {}",
                tool.qualified_name(),
                serde_json::to_string(&other).unwrap_or_default()
            )),
            Err(ServiceError::Timeout { .. }) => error_result(format!(
                "server `{owner}` did not answer the call to `{}` within {} s, so the call was cancelled; \
                 try again, or raise the server's call_timeout_secs in the configuration",
                tool.qualified_name(),
                timeout.as_secs_f32()
            )),
            Err(e) => transport_error(owner, tool, &e),
        }
    }
}
