//! tasks: here is a call an upstream turned into a task (the `io.modelcontextprotocol/tasks`
//! extension), let the client that started it follow it and nobody else.
//!
//! A client that declared the extension may get `resultType: "task"` for a call: the upstream
//! was told, with the call, that the client can follow tasks (a 2026-07-28 upstream; one on
//! 2025-11-25 is never told, so it never makes one). The task is recorded in the session that
//! made the call, with the upstream and the tool; `tasks/get`, `tasks/update` and
//! `tasks/cancel` are answered only for a task of this session whose tool the session's subject
//! may still use (the toolbox decides, and a refusal is written as a call's is), and go to
//! the upstream that made it. Any other id is unknown, whoever asks:
//! another session of the same client, or another token's.

use rmcp::model::{CallToolResponse, ClientRequest, ServerResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::downstream::refusal::{Refused, Why};
use crate::downstream::server::GatewayServer;
use crate::session::TaskOwner;

impl GatewayServer {
    /// The tasks upstreams made of this session's calls.
    pub(crate) fn tasks(&self) -> Tasks<'_> {
        Tasks { server: self }
    }
}

/// The tasks of a session: which upstream made each, and the `tasks/*` requests forwarded to
/// it. A view of the session's server with no state of its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tasks<'a> {
    server: &'a GatewayServer,
}

impl Tasks<'_> {
    /// Records the task an upstream made of a call of `tool`, if the answer is one.
    pub(crate) fn record(&self, answer: &CallToolResponse, upstream: &str, tool: &str) {
        if let CallToolResponse::Task(created) = answer {
            let owner = TaskOwner { upstream: upstream.to_owned(), tool: tool.to_owned() };
            self.server.state().task_started(created.task.task_id.clone(), owner);
        }
    }

    /// The upstream of task `id`, when this session started it and its subject may still use
    /// the task's tool (the toolbox decides; a refusal is written as any call's is).
    fn owner(&self, id: &str) -> Result<TaskOwner, ErrorData> {
        let unknown =
            || ErrorData::invalid_params(format!("no task `{id}` was started in this session"), None);
        let owner = self.server.state().task(id).ok_or_else(unknown)?;
        let view = self.server.view();
        if let Err(denial) = view.toolbox.may_use(&owner.tool) {
            let refused = Refused { name: &owner.tool, why: Why::Denied { denial, grant: None } };
            let text = refused.write(self.server, &view);
            return Err(ErrorData::invalid_params(format!("task `{id}` cannot be followed: {text}"), None));
        }
        Ok(owner)
    }

    /// A `tasks/get`, `tasks/update` or `tasks/cancel` of task `id` of this session, asked of the
    /// upstream that made it; the request's own `_meta` is the client's and stays here.
    pub(crate) async fn forward(
        &self,
        id: &str,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let owner = self.owner(id)?;
        let caps = context.client_capabilities().unwrap_or_default();
        let request = crate::oauth::client::for_caller(request, crate::access::bearer_of(context).as_ref());
        match self.server.gateway().upstreams().task_request(&owner.upstream, request, &caps).await? {
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
