//! server: the downstream MCP server, one [`GatewayServer`] per client session.
//!
//! Each session keeps its own [`toolgate::Conversation`] (its active set and the definitions it
//! was shown); nothing is shared between sessions but the [`Gateway`]. What a session is shown
//! and whether a call runs is decided by its subject's [`toolgate::Toolbox`]: exposure `native`
//! lists the core tools, `tool_search` and this session's active tools, and sends
//! `notifications/tools/list_changed` when a search loads something; exposure `bridge` lists
//! exactly `tool_search` and `call_tool`, forever. A call reaches an upstream only when
//! [`Toolbox::check`](toolgate::Toolbox::check) allows it.

use std::sync::Arc;

use crate::config::Exposure;
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CancelTaskRequest,
    ClientRequest, CompleteRequestParams, CompleteResult, ContentBlock, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskRequest, GetTaskResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, ServerResult, SubscriptionFilter,
    UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use toolgate::toolbox::TOOL_SEARCH;

pub use crate::downstream::stdio::{serve_stdio, serve_stdio_on};
use crate::upstream::convert::mcp_from_tool;

use crate::gateway::{Busy, CALL_TOOL, Gateway, SessionSlot, SessionState, View, fingerprint};
use crate::upstream::error_result;

pub use crate::downstream::door::PROFILE_HEADER;
use crate::downstream::door::asked_profile;

/// How long a loading `tool_search` waits, once the client listed the tools again, so that the
/// list's reply reaches the client before the search's.
const RELIST_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// How long `server/discover` over HTTP waits for upstreams still starting. Clients give the
/// probe 5 s (Claude Code, the C# SDK) and take a later answer, or none, for a server without
/// 2026-07-28, falling back to a session; the answer comes before that and announces what is
/// ready so far (`tool_search` finds the rest once it is). Over stdio a client gives a process
/// that is starting longer, so the probe waits as `initialize` does.
const HTTP_DISCOVER_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The name and version the request's client gave of itself, if it did.
pub(crate) fn client_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context.client_info().map(|info| format!("{} {}", info.name, info.version))
}

/// Whether the request comes from a client on 2026-07-28 or later (no `initialize`).
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| !v.has_initialize())
}

/// The span of the client's request behind `context` (`tools/call`, `tools/list`), a child of
/// the client's W3C `traceparent` (its `_meta.traceparent`, SEP-414, else the HTTP header), with
/// who asked, over what and at which revision. It records nothing without traces.
fn request_span(
    server: &GatewayServer,
    method: &str,
    context: &RequestContext<RoleServer>,
) -> crate::telemetry::Span {
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let from_header = || parts?.headers.get("traceparent")?.to_str().ok();
    let traceparent = context.meta.get("traceparent").and_then(Value::as_str).or_else(from_header);
    let mut span = server.gateway.request_span(method, traceparent);
    if !span.is_recording() {
        return span;
    }
    span.set("rpc.system", "jsonrpc");
    span.set("mcp.method.name", method);
    let revision = context.protocol_version().map(|v| v.to_string()).unwrap_or_default();
    span.set("mcp.protocol.version", revision);
    span.set("network.transport", if parts.is_some() { "http" } else { "stdio" });
    span.set("toolgate.subject", server.view().toolbox.about().subject().to_string());
    span
}

/// The `_meta` key of a call that carries the grant `tool_search` gave with the tool, for a
/// caller the gateway keeps no session for (2026-07-28 over HTTP).
pub const GRANT_META: &str = "toolgate/grant";

/// How long a client may keep a list of a session-less request (`ttlMs`): the list is the same
/// for every request of its subject until the catalog changes.
const STATELESS_LIST_TTL_MS: u64 = 60_000;

impl Gateway {
    /// A downstream MCP server for one new session.
    pub fn server(&self) -> GatewayServer {
        GatewayServer::new(self.clone())
    }
}

/// The downstream MCP server of one session. Clones share the session.
#[derive(Debug, Clone)]
pub struct GatewayServer {
    gateway: Gateway,
    slot: Arc<SessionSlot>,
}

impl GatewayServer {
    /// A server for one new session of `gateway` on a connection of its own (stdio, a pipe).
    pub fn new(gateway: Gateway) -> GatewayServer {
        GatewayServer::holding(gateway, SessionState::new(false, None))
    }

    fn holding(gateway: Gateway, state: SessionState) -> GatewayServer {
        let slot = Arc::new(SessionSlot::new(gateway.inner.changes.clone(), state));
        GatewayServer { gateway, slot }
    }

    /// A server for one new streamable HTTP session (`initialize`), or for one request with no
    /// session (2026-07-28), seeing what `profile` allows (or, with `None`, what the header
    /// `X-Toolgate-Profile` names, if any).
    pub(crate) fn for_http(gateway: Gateway, profile: Option<String>) -> GatewayServer {
        GatewayServer::holding(gateway, SessionState::new(true, profile))
    }

    /// A server for one new session that sees only what profile `name` (`[profiles.NAME]`)
    /// allows, within what the gateway offers.
    pub fn with_profile(gateway: Gateway, name: &str) -> Result<GatewayServer, String> {
        if !gateway.decider().has_profile(name) {
            return Err(crate::downstream::door::unknown_profile(&gateway, name));
        }
        Ok(GatewayServer::holding(gateway, SessionState::new(false, Some(name.to_owned()))))
    }

    /// Registers this session (once) for the status page and list change notices, with the
    /// client to notify.
    fn register(&self, context: &RequestContext<RoleServer>) {
        {
            let mut state = self.state();
            // A request with no session is no session: only its subscription is registered
            // (for list changes), by `listen`.
            if state.reach().is_sessionless() {
                return;
            }
            state.seen(&context.peer, context.protocol_version(), client_of(context));
        }
        self.gateway.register_session(&self.slot);
    }

    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.slot.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The gateway this session is served by.
    pub(crate) fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// Waits (until `[gateway] ready_timeout_secs` after the gateway started) for upstreams
    /// still starting, so that a client asking at once gets their tools.
    async fn ready(&self) {
        self.gateway.ready_within(std::time::Duration::MAX).await;
    }

    /// The profile this session was opened under, if any.
    fn profile(&self) -> Option<String> {
        self.state().profile().map(str::to_owned)
    }

    /// This session's subject's view: its toolbox over the current snapshot (for a request with
    /// no session, the one that hands out grants).
    pub(crate) fn view(&self) -> View {
        if self.state().reach().is_sessionless() {
            return self.gateway.granted_view(self.profile().as_deref());
        }
        self.gateway.view(self.profile().as_deref(), self.exposure())
    }

    /// Whether this request has no session behind it (2026-07-28 over HTTP, or a `server/discover`
    /// before any `initialize`): it was shown nothing but what it presents, and what it is
    /// shown leaves grants.
    pub(crate) fn is_stateless(&self, context: &RequestContext<RoleServer>) -> bool {
        // rmcp serves a 2026-07-28 request on its own whatever `Mcp-Session-Id` it carries.
        self.state().reach().is_http()
            && (is_modern(context)
                || crate::access::Caller::behind(context).is_some_and(|c| c.session.is_none()))
    }

    /// This session's exposure (chosen for its client at `initialize`; for a request with no
    /// session, its view's).
    pub(crate) fn exposure(&self) -> Exposure {
        if self.state().reach().is_sessionless() {
            return self.view().toolbox.about().exposure();
        }
        self.state().exposure_under(self.gateway.settings().exposure)
    }

    /// Runs `tool_search` for this session.
    async fn tool_search(
        &self,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
        request: &crate::telemetry::Span,
    ) -> CallToolResponse {
        let mut span = request.child("tool_search", crate::telemetry::Kind::Internal);
        let view = self.view();
        let toolbox = &view.toolbox;
        crate::gateway::indexed(toolbox).await;
        let (text, structured, relist) = {
            let settings = self.gateway.settings();
            let mut state = self.state();
            let searched = if toolbox.about().is_granted() {
                let key = &settings.grants;
                toolbox
                    .grants(key, std::time::SystemTime::now())
                    .tool_search(state.conversation_mut(), arguments)
            } else {
                toolbox.tool_search(state.conversation_mut(), arguments)
            };
            let outcome = match searched {
                Ok(outcome) => outcome,
                Err(bad) => return error_result(bad.to_string()),
            };
            for event in outcome.audit() {
                audit_event!(&event);
            }
            for tool in outcome.loaded() {
                tracing::debug!(target: "toolgate::audit", session = state.number(),
                    subject = %toolbox.about().subject(), tool = tool.qualified_name(), action = "loaded",
                    query = %outcome.query, "loaded");
            }
            state.worked();
            let names = |tools: Vec<&str>| tools.join(", ");
            tracing::info!(
                session = state.number(),
                query = %outcome.query,
                loaded = %names(outcome.loaded().map(|t| t.qualified_name()).collect()),
                unloaded = %names(outcome.unloaded.iter().map(|u| u.tool.as_str()).chain(outcome.changed.iter().map(String::as_str)).collect()),
                "tool_search"
            );
            let matched = outcome.matches().count();
            let unloaded = outcome.unloaded.len() + outcome.changed.len();
            if span.is_recording() {
                span.set("toolgate.search.query", outcome.query.as_str());
                span.set("toolgate.search.hits", matched);
                span.set(
                    "toolgate.search.loaded",
                    names(outcome.loaded().map(|t| t.qualified_name()).collect()),
                );
                span.set("toolgate.search.unloaded", unloaded);
            }
            self.gateway.inner.metrics.searched(matched, outcome.loaded().count(), unloaded);
            // What the catalog could not serve: no match, or none close enough to load.
            if matched == 0 || outcome.nothing_fits() {
                let subject = toolbox.about().subject().to_string();
                self.gateway.inner.metrics.nothing_fitted(&subject, &outcome.query);
            }
            let relist = outcome.loaded().next().is_some()
                || !outcome.unloaded.is_empty()
                || !outcome.changed.is_empty();
            if relist {
                state.listener_mut().list_changed();
            }
            (outcome.text(), outcome.to_json(), relist)
        };
        // Stored before the client hears of the change, which it may ask another replica about.
        self.record().push().await;
        if relist && self.exposure() == Exposure::Native {
            self.record().announce().await;
            self.register(context);
            let (notice, relisted, wait) = {
                let state = self.state();
                // A client that cannot hear of the change (2026-07-28 without a subscription)
                // is not waited for.
                let wait = state.listener().relist_wait(self.gateway.settings().relist_wait);
                (state.listener().list_changed_notice(), state.listener().relisted(), wait)
            };
            // Listen before telling, so that a re-list that comes at once is not missed.
            let listed = relisted.notified();
            tokio::pin!(listed);
            listed.as_mut().enable();
            notice.await;
            if let Some(wait) = wait.filter(|w| !w.is_zero()) {
                if tokio::time::timeout(wait, listed).await.is_err() {
                    tracing::debug!(
                        "the client did not list the tools again within {wait:?}; not waiting for it again"
                    );
                    self.state().listener_mut().ignore_list_changed();
                } else {
                    // The re-list was seen as it was handled, before its reply went out; rmcp
                    // writes replies as their handlers finish, so without a moment here the
                    // search's result can overtake the new list, and the client's next model
                    // request lacks the loaded tools (seen with Claude Code on a busy machine).
                    tokio::time::sleep(RELIST_GRACE).await;
                }
            }
        }
        let mut out = CallToolResult::success(vec![ContentBlock::text(text)]);
        out.structured_content = Some(structured);
        CallToolResponse::Complete(out)
    }

    /// A list the subject's policy filtered, marked for a 2026-07-28 client's cache: private to
    /// the caller (another subject's list differs), and fresh for a while when it is the same
    /// for every request of the subject (no session), else not at all (a search changes it).
    fn cacheable<L: crate::upstream::convert::Cacheable>(
        &self,
        mut list: L,
        context: &RequestContext<RoleServer>,
    ) -> L {
        if is_modern(context) {
            let ttl = if self.is_stateless(context) { STATELESS_LIST_TTL_MS } else { 0 };
            list.mark(ttl);
        }
        list
    }

    /// Takes out the arguments this session's client adds to every call for its own use
    /// ([`INJECTED_ARGUMENTS`](crate::gateway::INJECTED_ARGUMENTS)).
    fn drop_injected_arguments(&self, request: &mut CallToolRequestParams) {
        let client = self.state().client().to_lowercase();
        let injected: Vec<&str> = crate::gateway::INJECTED_ARGUMENTS
            .iter()
            .filter(|(word, _)| client.contains(word))
            .map(|(_, argument)| *argument)
            .collect();
        let Some(arguments) = request.arguments.as_mut() else { return };
        for argument in &injected {
            arguments.remove(*argument);
        }
        // In the bridge, the tool's own arguments are inside `call_tool`'s.
        if request.name == CALL_TOOL
            && let Some(Value::Object(inner)) = arguments.get_mut("arguments")
        {
            for argument in &injected {
                inner.remove(*argument);
            }
        }
    }

    /// Gives this HTTP session its place under `max_sessions`: the one the door took for the
    /// request that opens or restores it, else a free one; with none free, the session is
    /// refused, however the requests that opened the others were interleaved.
    fn take_seat(&self, context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
        if self.state().reach().has_seat() {
            return Ok(());
        }
        let reserved = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::session::Seat>())
            .and_then(crate::session::Seat::claim);
        let seat = reserved.or_else(|| self.gateway.inner.seats.clone().try_acquire_owned().ok());
        match seat {
            Some(seat) => {
                self.state().reach_mut().take_seat(seat);
                Ok(())
            }
            None => Err(ErrorData::internal_error(
                format!(
                    "toolgate serves at most {} sessions at once ([gateway] max_sessions), and they are all \
                     open; close one or try again later",
                    self.gateway.settings().gateway.max_sessions
                ),
                None,
            )),
        }
    }

    /// This session's key among the calls in flight (its slot's address, unique while it lives).
    pub(crate) fn session_key(&self) -> usize {
        Arc::as_ptr(&self.slot) as usize
    }
}

/// A handler of a session's requests, named for its prologue ([`Handler::steps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    Discover,
    Initialize,
    Listen,
    ListTools,
    CallTool,
    SetLevel,
    ListPrompts,
    GetPrompt,
    Complete,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    GetTask,
    UpdateTask,
    CancelTask,
}

/// What a handler does before its own work, in this order.
#[derive(Debug, Clone, Copy)]
struct Steps {
    /// Counts the request in flight until it is answered (a subscription is no request).
    busy: bool,
    /// Binds the request to its session, or makes it its own subject when it has none
    /// ([`Record::enter`](crate::downstream::resume::Record::enter)).
    enter: bool,
    /// Registers the session for the status page and list change notices.
    register: bool,
    /// Waits for upstreams still starting, so that a client asking at once gets their tools.
    ready: bool,
    /// Takes a newer record of the session written by another gateway.
    pull: bool,
}

impl Handler {
    /// The table of every handler's prologue. `initialize` only counts itself: it opens or
    /// restores the session, and takes its seat, itself; `server/discover` waits for the
    /// upstreams as its transport allows.
    const fn steps(self) -> Steps {
        const fn steps(busy: bool, enter: bool, register: bool, ready: bool, pull: bool) -> Steps {
            Steps { busy, enter, register, ready, pull }
        }
        use Handler::*;
        match self {
            Initialize => steps(true, false, false, false, false),
            Listen => steps(false, true, true, false, false),
            Discover | SetLevel => steps(true, true, true, false, false),
            ListTools | CallTool => steps(true, true, true, true, true),
            ListPrompts
            | GetPrompt
            | Complete
            | ListResources
            | ListResourceTemplates
            | ReadResource
            | GetTask
            | UpdateTask
            | CancelTask => steps(true, true, false, false, false),
        }
    }
}

/// A request past its prologue; dropped when it is answered.
#[derive(Debug)]
struct Entered {
    _busy: Option<Busy>,
}

impl GatewayServer {
    /// The one dispatch point of every handler's opening steps, from [`Handler::steps`].
    async fn prologue(
        &self,
        handler: Handler,
        context: &RequestContext<RoleServer>,
    ) -> Result<Entered, ErrorData> {
        let steps = handler.steps();
        let busy = steps.busy.then(|| Busy::new(&self.slot));
        let session = if steps.enter { self.record().enter(context)? } else { None };
        if steps.register {
            self.register(context);
        }
        if steps.ready {
            self.ready().await;
        }
        if steps.pull
            && let Some(id) = session
        {
            self.record().pull(&id, context).await;
        }
        Ok(Entered { _busy: busy })
    }
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_prompts_list_changed()
            .enable_resources_list_changed()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.fixed_instructions().to_string())
    }

    /// Every version on either transport: over HTTP, 2026-07-28 has no session, and what a
    /// request was shown travels with it as grants.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    /// The list changes of tools, prompts and resources are offered on a subscription.
    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let _entered = self.prologue(Handler::Listen, context.request_context()).await?;
        if self.is_stateless(context.request_context()) {
            // A change is one of the list every request of this subject gets.
            let view = self.view();
            let mut state = self.state();
            let listed = view.toolbox.preview(state.conversation());
            state.listener_mut().follows_list(fingerprint(&listed));
            drop(state);
            self.gateway.register_session(&self.slot);
        }
        self.state().listener_mut().subscribe(context.sink().clone());
        context.cancelled().await;
        let id = context.sink().id();
        self.state().listener_mut().unsubscribe(id);
        Ok(())
    }

    /// The 2026-07-28 opener (Claude Code sends it first on stdio): answered, like
    /// `initialize`, once the upstreams still starting are ready or the ready wait is over, so
    /// that its instructions announce their tools. Over HTTP it waits `HTTP_DISCOVER_WAIT` (3 s) at
    /// most: a client that probes with it takes a later answer for a server without
    /// 2026-07-28.
    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let _entered = self.prologue(Handler::Discover, &context).await?;
        if self.state().reach().is_http() {
            self.gateway.ready_within(HTTP_DISCOVER_WAIT).await;
        } else {
            self.ready().await;
        }
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info()))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let _entered = self.prologue(Handler::Initialize, &context).await?;
        if self.state().reach().is_http() {
            self.take_seat(&context)?;
        }
        context.peer.set_peer_info(request.clone());
        let client = format!("{} {}", request.client_info.name, request.client_info.version);
        let path = self.profile();
        let asked = match context.extensions.get::<axum::http::request::Parts>() {
            Some(parts) => asked_profile(&self.gateway, parts, path.as_deref())?,
            None => None,
        };
        if let (Some(name), None) = (asked, path) {
            // Anything rmcp had the server write before (its info) was for another subject:
            // it is written again for this one.
            self.state().choose_profile(name);
        }
        self.record().begin(&request, &context).await?;
        let exposure = self.gateway.settings().exposure_for(&request.client_info.name);
        tracing::info!(client = %client, exposure = crate::gateway::exposure_name(exposure), "session opened");
        self.state().opened(client, &context.peer, exposure);
        self.gateway.register_session(&self.slot);
        self.ready().await;
        let negotiated = self.negotiate_initialize(&request)?;
        // A client that probed with `server/discover` first and then chose `initialize` (Claude
        // Code does when the probe is slow) speaks what `initialize` negotiated.
        self.state().listener_mut().speaks(Some(negotiated.protocol_version.clone()));
        Ok(negotiated)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let _entered = self.prologue(Handler::ListTools, &context).await?;
        let _span = request_span(self, "tools/list", &context);
        let view = self.view();
        let tools = {
            let mut state = self.state();
            let client = state.client().to_lowercase();
            if crate::gateway::INSTRUCTIONS_UNREAD.iter().any(|word| client.contains(word)) {
                state.conversation_mut().announce_in_tool_search();
            }
            let list = view
                .toolbox
                .tools(state.conversation_mut())
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            state.listener_mut().served_list(fingerprint(&list));
            // What deferral saved in this list, for the status page's chart: against a full
            // load counted once per toolbox, off the request's way.
            let shown = view.toolbox.about().definitions_tokens(list.iter().map(|t| &**t));
            let gateway = self.gateway.clone();
            crate::gateway::with_full_load(&view.toolbox, move |full| {
                gateway.inner.metrics.list_saved(full.saturating_sub(shown));
            });
            list.iter().map(|t| mcp_from_tool(t)).collect()
        };
        self.record().push().await;
        Ok(self.cacheable(ListToolsResult::with_all_items(tools), &context))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _entered = self.prologue(Handler::CallTool, &context).await?;
        let mut span = request_span(self, "tools/call", &context);
        let mut request = request;
        self.drop_injected_arguments(&mut request);
        let name = request.name.clone();
        span.set("gen_ai.tool.name", name.as_ref());
        Ok(match name.as_ref() {
            TOOL_SEARCH => {
                let arguments = Value::Object(request.arguments.unwrap_or_default());
                self.tool_search(&arguments, &context, &span).await
            }
            // A request the stdio screen refused, in place of the client's (crate::limits).
            crate::limits::REFUSED_TOOL => {
                let reason = request.arguments.as_ref().and_then(|a| a.get("reason")).and_then(Value::as_str);
                return Err(ErrorData::invalid_request(
                    reason.unwrap_or("the message broke a limit").to_owned(),
                    None,
                ));
            }
            CALL_TOOL if self.exposure() == Exposure::Bridge => {
                crate::downstream::call::run(self, request, &context, true, &mut span).await?
            }
            _ => crate::downstream::call::run(self, request, &context, false, &mut span).await?,
        })
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _entered = self.prologue(Handler::SetLevel, &context).await?;
        self.state().listener_mut().set_log_level(request.level);
        self.gateway.passthrough().set_log_level().await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let _entered = self.prologue(Handler::ListPrompts, &context).await?;
        Ok(self.cacheable(self.gateway.passthrough().list_prompts(self.profile().as_deref()).await, &context))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let _entered = self.prologue(Handler::GetPrompt, &context).await?;
        let caller = crate::access::bearer_of(&context);
        self.gateway.passthrough().get_prompt(request, self.profile().as_deref(), caller.as_ref()).await
    }

    async fn get_task(
        &self,
        mut request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let _entered = self.prologue(Handler::GetTask, &context).await?;
        let id = std::mem::take(&mut request.task_id);
        let asked = GetTaskParams::new(id.clone());
        match self
            .tasks()
            .forward(&id, ClientRequest::GetTaskRequest(GetTaskRequest::new(asked)), &context)
            .await?
        {
            ServerResult::GetTaskResult(result) => Ok(result),
            _ => Err(ErrorData::internal_error(
                format!("the server of task `{id}` answered tasks/get wrongly"),
                None,
            )),
        }
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _entered = self.prologue(Handler::UpdateTask, &context).await?;
        let asked = UpdateTaskParams::new(request.task_id.clone(), request.input_responses);
        let update = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(asked));
        self.tasks().forward(&request.task_id, update, &context).await.map(|_| ())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _entered = self.prologue(Handler::CancelTask, &context).await?;
        let cancel =
            ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(&request.task_id)));
        self.tasks().forward(&request.task_id, cancel, &context).await.map(|_| ())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let _entered = self.prologue(Handler::Complete, &context).await?;
        let caller = crate::access::bearer_of(&context);
        self.gateway.passthrough().complete(request, self.profile().as_deref(), caller.as_ref()).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let _entered = self.prologue(Handler::ListResources, &context).await?;
        Ok(self
            .cacheable(self.gateway.passthrough().list_resources(self.profile().as_deref()).await, &context))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let _entered = self.prologue(Handler::ListResourceTemplates, &context).await?;
        Ok(self.cacheable(
            self.gateway.passthrough().list_resource_templates(self.profile().as_deref()).await,
            &context,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let _entered = self.prologue(Handler::ReadResource, &context).await?;
        let caller = crate::access::bearer_of(&context);
        self.gateway.passthrough().read_resource(request, self.profile().as_deref(), caller.as_ref()).await
    }
}
