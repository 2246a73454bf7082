//! asking: the client's side of an upstream's questions: a session's forwarded call followed
//! to its answer, each question put to the client that made the call on the way, and a
//! 2026-07-28 client's answer taken back to its waiting call. The registry of calls and
//! questions this reads and writes is `elicit.rs`, which knows nothing of sessions.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientResult, ElicitRequest, ElicitResult, InputRequest,
    InputRequests, InputRequiredResult, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::downstream::server::{GatewayServer, is_modern};
use crate::upstream::elicit::{Event, MAX_ROUNDS, Parked, QUESTION, Run, refused};
use crate::upstream::error_result;
use crate::upstream::unreachable::Unreachable;

/// The client's side of the questions: a session's forwarded call driven to its answer.
impl GatewayServer {
    /// Follows a forwarded call to its answer, putting the upstream's questions to this
    /// session's client: on 2025-11-25 as `elicitation/create` within this call, on 2026-07-28
    /// as an `InputRequiredResult` while the call waits for the client's retry.
    pub(crate) async fn drive(
        &self,
        tool: &str,
        mut run: Run,
        mut rounds: usize,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, Unreachable> {
        loop {
            let event = tokio::select! {
                event = run.next() => event,
                () = context.ct.cancelled() => {
                    drop(run);
                    return Ok(error_result(format!("the call to `{tool}` was cancelled by the client")));
                }
            };
            let ask = match event {
                Event::Done(answer) => return Ok(answer),
                Event::Unreachable(why) => return Err(why),
                Event::Ask(ask) => ask,
            };
            rounds += 1;
            if rounds > MAX_ROUNDS {
                let _ = ask.reply.send(Err(refused("too many questions in one call")));
                return Ok(error_result(format!(
                    "`{tool}` asked the user more than {} questions; gave up",
                    MAX_ROUNDS
                )));
            }
            if is_modern(context) {
                let question = InputRequest::Elicitation(ElicitRequest::new(ask.params));
                let parked = Parked {
                    tool: tool.to_owned(),
                    run,
                    reply: ask.reply,
                    until: std::time::Instant::now() + self.gateway().settings().gateway.call_timeout,
                    rounds,
                };
                let state = self.state().waiting().park(parked);
                let requests = InputRequests::from([(QUESTION.to_owned(), question)]);
                return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                    Some(requests),
                    Some(state),
                )));
            }
            let asked =
                context.peer.send_request(ServerRequest::ElicitRequest(ElicitRequest::new(ask.params)));
            let answer = match asked.await {
                Ok(ClientResult::ElicitResult(result)) => Ok(result),
                Ok(other) => {
                    Err(ErrorData::internal_error(format!("the client answered with {other:?}"), None))
                }
                Err(e) => Err(ErrorData::internal_error(format!("the client could not be asked: {e}"), None)),
            };
            let _ = ask.reply.send(answer);
        }
    }

    /// A 2026-07-28 client's retry that answers toolgate's question (`state` names the waiting
    /// call, in this session only): the answer goes to the upstream, and the call goes on.
    pub(crate) async fn resume_call(
        &self,
        tool: &str,
        state: &str,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, Unreachable> {
        let Some(parked) = self.state().waiting().take(state) else {
            return Ok(error_result(format!(
                "requestState `{state}` names no call waiting in this session (it expired, was answered, \
                 or belongs to another session); call `{tool}` again"
            )));
        };
        if parked.tool != tool {
            return Ok(error_result(format!(
                "requestState `{state}` belongs to a call of `{}`, not of `{tool}`",
                parked.tool
            )));
        }
        let answer = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(QUESTION))
            .ok_or_else(|| format!("inputResponses has no `{}` answer", QUESTION))
            .and_then(|v| {
                serde_json::from_value::<ElicitResult>(v.clone())
                    .map_err(|e| format!("the answer is not an elicitation result: {e}"))
            });
        let answer = answer.map_err(|why| ErrorData::invalid_params(why, None));
        let bad = answer.as_ref().err().map(|e| e.message.to_string());
        let _ = parked.reply.send(answer);
        if let Some(why) = bad {
            return Ok(error_result(format!("the answer to `{tool}`'s question was not usable: {why}")));
        }
        self.drive(tool, parked.run, parked.rounds, context).await
    }
}
