//! tasks: here is a call an upstream turned into a task (the `io.modelcontextprotocol/tasks`
//! extension), let the client that started it follow it and nobody else.
//!
//! A client that declared the extension may get `resultType: "task"` for a call: the upstream
//! was told, with the call, that the client can follow tasks (a 2026-07-28 upstream; one on
//! 2025-11-25 is never told, so it never makes one). The task is recorded in the session that
//! made the call, with the upstream and the tool; `tasks/get`, `tasks/update` and
//! `tasks/cancel` are answered only for a task of this session whose tool the session's subject
//! may still see, and go to the upstream that made it. Any other id is unknown, whoever asks:
//! another session of the same client, or another token's.

use rmcp::model::{CallToolResponse, ClientCapabilities, ClientRequest, RequestMetaObject, ServerResult};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{ErrorData, RoleServer};

use crate::gateway::Gateway;
use crate::server::GatewayServer;
use crate::session::TaskOwner;

impl GatewayServer {
    /// Records the task an upstream made of a call of `tool`, if the answer is one.
    pub(crate) fn record_task(&self, answer: &CallToolResponse, upstream: &str, tool: &str) {
        if let CallToolResponse::Task(created) = answer {
            let owner = TaskOwner { upstream: upstream.to_owned(), tool: tool.to_owned() };
            self.state().tasks.insert(created.task.task_id.clone(), owner);
        }
    }

    /// The upstream of task `id`, when this session started it and may still see its tool.
    fn task_owner(&self, id: &str, context: &RequestContext<RoleServer>) -> Result<TaskOwner, ErrorData> {
        self.check_caller(context)?;
        let unknown =
            || ErrorData::invalid_params(format!("no task `{id}` was started in this session"), None);
        let owner = self.state().tasks.get(id).cloned().ok_or_else(unknown)?;
        let view = self.view();
        if view.toolbox.visible().get(&owner.tool).is_none() {
            return Err(ErrorData::invalid_params(
                format!("task `{id}` belongs to `{}`, which this session may not use any more", owner.tool),
                None,
            ));
        }
        Ok(owner)
    }

    /// A `tasks/get`, `tasks/update` or `tasks/cancel` of task `id` of this session, asked of the
    /// upstream that made it; the request's own `_meta` is the client's and stays here.
    pub(crate) async fn forward_task(
        &self,
        id: &str,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let owner = self.task_owner(id, context)?;
        let caps = context.client_capabilities().unwrap_or_default();
        match self.gateway().task_request(&owner.upstream, request, &caps).await? {
            ServerResult::CreateTaskResult(_)
            | ServerResult::CallToolResult(_)
            | ServerResult::InputRequiredResult(_) => Err(ErrorData::internal_error(
                format!("server `{}` answered a task request with something else", owner.upstream),
                None,
            )),
            answer => Ok(answer),
        }
    }
}

impl Gateway {
    /// Sends a `tasks/*` request to upstream `name`, telling it the client's capabilities as
    /// for the call that started the task.
    async fn task_request(
        &self,
        name: &str,
        request: ClientRequest,
        caps: &ClientCapabilities,
    ) -> Result<ServerResult, ErrorData> {
        let (peer, timeout) = {
            let pool = self.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            let upstream = pool.get(name).and_then(|u| u.peer.clone().map(|p| (p, u.call_timeout)));
            upstream.ok_or_else(|| {
                ErrorData::internal_error(
                    format!("server `{name}`, which runs the task, is not connected"),
                    None,
                )
            })?
        };
        let mut options = PeerRequestOptions::with_timeout(timeout.unwrap_or(self.settings().call_timeout));
        let mut meta = RequestMetaObject::new();
        meta.set_client_capabilities(crate::pool::relayed_capabilities(caps));
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
