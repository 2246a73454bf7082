//! call: a `tools/call` of an upstream's tool, as typed stages.
//!
//! 1. [`NamedCall`]: the tool the model named, directly or in the bridge's `call_tool`
//!    ([`toolgate::toolbox::BridgeCall`]), with its request and the grant it presents.
//! 2. [`AdmittedCall`]: the toolbox's one check passed ([`toolgate::Toolbox::check`]): this
//!    conversation was shown the tool's current definition, the policy allows it for this
//!    subject now, and its arguments validate; a request with no session presented its grant
//!    first. It knows the upstream that serves the tool. Then the caller's rate limits
//!    ([`crate::rate`]) take a call, or the call is answered with the rate-limit error.
//! 3. Forwarded, in the upstream's terms (its own name for the tool, and the values the
//!    operator fixed or defaulted, [`crate::overrides`]): the upstream's answer, the questions it asks on the way
//!    ([`crate::downstream::asking`]) and the task it may make of the call
//!    ([`crate::downstream::tasks`]).
//!
//! A call refused at any stage becomes a [`Refused`], which writes what is said of it.

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData};
use rmcp::service::RequestContext;
use serde_json::Value;
use toolgate::Tool;
use toolgate::toolbox::Decision;

use crate::downstream::refusal::{Refused, Why};
use crate::downstream::server::{GRANT_META, GatewayServer, is_modern};
use crate::gateway::View;
use crate::pool::Downstream;
use crate::telemetry::{Kind, Span};

/// A call as the client named it.
#[derive(Debug)]
pub(crate) struct NamedCall {
    /// The tool's name as the model wrote it.
    name: String,
    /// The request, with the tool's own arguments (out of `call_tool`'s, in the bridge) and
    /// any continuation of an earlier round (`inputResponses`, `requestState`).
    request: CallToolRequestParams,
    /// The grant presented with the call (a request with no session), if any.
    grant: Option<String>,
}

impl NamedCall {
    /// Reads a `tools/call` request: the bridge's `call_tool` (`bridge`) carries the call in its
    /// arguments, with its grant; a direct call carries its grant in `_meta`.
    pub(crate) fn read(
        mut request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        bridge: bool,
    ) -> Result<NamedCall, (String, Why)> {
        if !bridge {
            let grant = context.meta.get(GRANT_META).and_then(Value::as_str).map(str::to_owned);
            return Ok(NamedCall { name: request.name.to_string(), request, grant });
        }
        let outer = Value::Object(request.arguments.take().unwrap_or_default());
        let call = toolgate::toolbox::BridgeCall::parse(&outer)
            .map_err(|problem| (request.name.to_string(), Why::Malformed(problem)))?;
        request.arguments = Some(call.arguments);
        Ok(NamedCall { name: call.name, request, grant: call.grant })
    }
}

/// A call the gate admitted, bound for the upstream that serves its tool.
#[derive(Debug)]
pub(crate) struct AdmittedCall<'v> {
    /// The tool, as this conversation was shown it.
    tool: &'v Tool,
    /// The upstream that serves it.
    owner: &'v str,
    /// The request, passed on as it is but for the tool's name.
    request: CallToolRequestParams,
}

/// Runs a `tools/call` of an upstream's tool in `server`'s session through its stages: read,
/// admitted, within the caller's rate limits, forwarded; a refusal at any stage answers with
/// what [`Refused`] writes: a tool error the model reads, or, over a rate limit, the JSON-RPC
/// error the client's transport acts on (SEP-3304).
pub(crate) async fn run(
    server: &GatewayServer,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    bridge: bool,
    span: &mut Span,
) -> Result<CallToolResponse, ErrorData> {
    let view = server.view();
    let mut check = span.child("check", Kind::Internal);
    let named = match NamedCall::read(request, context, bridge) {
        Ok(named) => named,
        Err((name, why)) => return Ok(refused(server, &view, &name, why, &mut check)),
    };
    let name = named.name.clone();
    check.set("gen_ai.tool.name", name.as_str());
    let admitted = match named.admit(server, &view).await {
        Ok(admitted) => admitted,
        Err(why) => return Ok(refused(server, &view, &name, why, &mut check)),
    };
    check.set("toolgate.server", admitted.owner);
    if let Err(limited) = admitted.within_limits(server, &view, context).await {
        let error = limited.error();
        check.set("toolgate.decision", "rate_limited");
        check.fail(limited.to_string());
        Refused { name: &name, why: Why::Limited(limited) }.write(server, &view);
        return Err(error);
    }
    check.set("toolgate.decision", "allowed");
    drop(check);
    Ok(admitted.forward(server, &view, context, span).await)
}

/// A refusal's answer, with its reason and text on the check's span.
fn refused(server: &GatewayServer, view: &View, name: &str, why: Why, check: &mut Span) -> CallToolResponse {
    check.set("toolgate.decision", why.reason());
    let text = Refused { name, why }.write(server, view);
    check.fail(text.as_str());
    crate::upstream::error_result(text)
}

impl NamedCall {
    /// A named call → an admitted one: the grant it presents (a request with no session), then
    /// the toolbox's check. What the check changed in the conversation is stored before the
    /// answer goes out.
    async fn admit<'v>(self, server: &GatewayServer, view: &'v View) -> Result<AdmittedCall<'v>, Why> {
        let NamedCall { name, request, grant } = self;
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let toolbox = &view.toolbox;
        let (decision, grant_problem) = {
            let mut state = server.state();
            state.worked();
            let granted = toolbox.about().is_granted();
            if granted {
                // A request with no session was given the subject's list, the same for all.
                let _ = toolbox.tools(state.conversation_mut());
            }
            let problem = match (&grant, granted) {
                (Some(grant), true) => toolbox
                    .grants(&server.gateway().settings().grants, std::time::SystemTime::now())
                    .admit(state.conversation_mut(), &name, grant)
                    .err(),
                _ => None,
            };
            (toolbox.check(state.conversation_mut(), &name, &arguments), problem)
        };
        server.record().push().await;
        let tool = match decision {
            Decision::Allow(tool) => tool,
            Decision::Deny(denial) => return Err(Why::Denied { denial, grant: grant_problem }),
        };
        let Some(owner) = view.owner(tool) else {
            let tool = tool.qualified_name().to_owned();
            return Err(Why::Unreachable(crate::upstream::unreachable::Unreachable::NoServer { tool }));
        };
        tracing::debug!(target: "toolgate::audit", session = server.state().number(),
            subject = %toolbox.about().subject(), tool = tool.qualified_name(), server = owner,
            action = "allowed", "allowed");
        Ok(AdmittedCall { tool, owner, request })
    }
}

impl AdmittedCall<'_> {
    /// Whether this round continues a call: the client's answer to a question the upstream
    /// asked while its call waits (2026-07-28), not another call.
    fn continues(&self) -> bool {
        self.request
            .request_state
            .as_deref()
            .is_some_and(|s| s.starts_with(crate::upstream::elicit::STATE_PREFIX))
    }

    /// Takes one call from each of the caller's rate buckets that covers this call
    /// ([`crate::rate`]), in the session store every replica shares; a round that continues a
    /// call (the client's answer to the upstream's question) takes none. A store that cannot be
    /// reached fails closed: the call is refused as over a limit, to be tried again in a second.
    async fn within_limits(
        &self,
        server: &GatewayServer,
        view: &View,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), crate::rate::Limited> {
        let gateway = server.gateway();
        let current = gateway.current();
        let limiter = &current.limits;
        if limiter.is_empty() || self.continues() {
            return Ok(());
        }
        let subject = view.toolbox.about().subject();
        let path = subject.to_string();
        let caller = crate::access::Caller::behind(context).and_then(|c| c.token.clone());
        let who = caller.as_deref().unwrap_or(&path);
        let buckets =
            limiter.buckets(who, Some(subject.name()), self.tool.server(), self.tool.qualified_name());
        if buckets.is_empty() {
            return Ok(());
        }
        match current.settings.sessions.take(&buckets).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err((short, retry_after))) => Err(crate::rate::Limited {
                scope: buckets[short].scope.clone(),
                calls_per_minute: buckets[short].rule.calls_per_minute,
                retry_after,
            }),
            Err(e) => {
                tracing::error!("{e}; the call is refused until the rate limits can be checked");
                Err(crate::rate::Limited {
                    scope: "the rate limits' store cannot be reached".to_owned(),
                    calls_per_minute: 0,
                    retry_after: std::time::Duration::from_secs(1),
                })
            }
        }
    }

    /// An admitted call → the upstream's answer: a new call, or the client's answer to a
    /// question toolgate put to it while the upstream's call waits (2026-07-28).
    async fn forward(
        self,
        server: &GatewayServer,
        view: &View,
        context: &RequestContext<RoleServer>,
        span: &Span,
    ) -> CallToolResponse {
        let continues = self.continues();
        let AdmittedCall { tool, owner, mut request } = self;
        let mut upstream = span.child("tools/call upstream", Kind::Client);
        upstream.set("toolgate.server", owner);
        upstream.set("gen_ai.tool.name", tool.qualified_name());
        let started = std::time::Instant::now();
        let answer = match request.request_state.as_deref() {
            Some(state) if continues => {
                server.resume_call(tool.qualified_name(), state, &request, context).await
            }
            _ => {
                let (name, arguments) = match server.gateway().upstream_call(tool, request.arguments.take()) {
                    Ok(call) => call,
                    Err(problem) => {
                        let name = tool.qualified_name();
                        return Refused { name, why: Why::Malformed(problem) }.answer(server, view);
                    }
                };
                upstream.set("toolgate.upstream.tool", name.as_str());
                request.name = name.into();
                request.arguments = arguments;
                // The client's own `_meta` stays here; the upstream gets the trace (SEP-414).
                request.meta = upstream.traceparent().map(|t| {
                    let mut meta = rmcp::model::RequestMetaObject::default();
                    meta.set_traceparent(t);
                    meta
                });
                let downstream = Downstream {
                    session: server.session_key(),
                    capabilities: context.client_capabilities().unwrap_or_default(),
                    modern: is_modern(context),
                    progress: context.meta.get_progress_token().map(|token| (context.peer.clone(), token)),
                    on_behalf: crate::access::bearer_of(context),
                };
                let run = server.gateway().upstreams().start_call(owner, tool, request, downstream);
                let answer = server.drive(tool.qualified_name(), run, 0, context).await;
                if let Ok(answer) = &answer {
                    server.tasks().record(answer, owner, tool.qualified_name());
                }
                answer
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(unreachable) => {
                let name = tool.qualified_name();
                return Refused { name, why: Why::Unreachable(unreachable) }.answer(server, view);
            }
        };
        let ok = !matches!(&answer, CallToolResponse::Complete(r) if r.is_error == Some(true));
        server.gateway().inner.metrics.called(owner, ok, started.elapsed());
        upstream.set("toolgate.outcome", if ok { "ok" } else { "error" });
        if !ok {
            upstream.fail("the upstream answered with a tool error");
        }
        answer
    }
}
