//! server: the downstream MCP server, one [`GatewayServer`] per client session.
//!
//! Each session keeps its own [`toolgate::Session`] (its active set); nothing is shared between
//! sessions but the [`Gateway`]. Exposure `native` lists the core tools, `tool_search` and this
//! session's active tools, and sends `notifications/tools/list_changed` when a search loads
//! something; exposure `bridge` lists exactly `tool_search` and `call_tool`, forever. Every other
//! call passes the gate, then argument validation, before it reaches an upstream.

use std::sync::Arc;

#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::config::Exposure;
use toolgate::gate::{self, Decision, Denial};
use toolgate::request::{
    DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, TOOL_SEARCH, deferred_names, frozen_announcement,
};
use toolgate::search::Request;

use crate::budget;
use crate::convert::mcp_from_tool;
use crate::gateway::{CALL_TOOL, Gateway, SessionSlot, SessionState, Snapshot, fingerprint};
use crate::upstream::error_result;

/// The HTTP header that opens a session under a profile (`[profiles.NAME]`).
pub const PROFILE_HEADER: &str = "x-toolgate-profile";

/// The error for a profile the configuration does not define.
fn unknown_profile(gateway: &Gateway, name: &str) -> String {
    format!(
        "no profile `{name}` in the configuration ([profiles.{name}]); known profiles: {}",
        gateway.known_profiles()
    )
}

/// Up to this many deferred names are announced in the server instructions.
pub const MAX_ANNOUNCED: usize = 2000;

/// The downstream MCP server of one session. Clones share the session.
#[derive(Debug, Clone)]
pub struct GatewayServer {
    gateway: Gateway,
    slot: Arc<SessionSlot>,
    /// Whether protocol 2026-07-28 (no `initialize`, `subscriptions/listen`) is offered: only
    /// on a connection that is itself the session (stdio), since that version has no HTTP
    /// sessions to keep an active set in.
    modern: bool,
}

impl GatewayServer {
    /// A server for one new session of `gateway` on a connection of its own (stdio, a pipe).
    pub fn new(gateway: Gateway) -> GatewayServer {
        let slot = Arc::new(SessionSlot::new(&gateway));
        GatewayServer { gateway, slot, modern: true }
    }

    /// A server for one new streamable HTTP session, which must use `initialize`, seeing what
    /// `profile` allows (or, with `None`, what the header `X-Toolgate-Profile` names, if any).
    pub(crate) fn for_http(gateway: Gateway, profile: Option<String>) -> GatewayServer {
        let server = GatewayServer { modern: false, ..GatewayServer::new(gateway) };
        server.state().profile = profile;
        server
    }

    /// A server for one new session that sees only what profile `name` (`[profiles.NAME]`)
    /// allows, within what the gateway offers.
    pub fn with_profile(gateway: Gateway, name: &str) -> Result<GatewayServer, String> {
        if !gateway.settings().profiles.contains_key(name) {
            return Err(unknown_profile(&gateway, name));
        }
        let server = GatewayServer::new(gateway);
        server.state().profile = Some(name.to_owned());
        Ok(server)
    }

    /// Registers this session (once) for the status page and list change notices, with the
    /// client to notify.
    fn register(&self, context: &RequestContext<RoleServer>) {
        {
            let mut state = self.state();
            if state.peer.is_none() {
                state.peer = Some(context.peer.clone());
            }
            if state.client.is_empty()
                && let Some(info) = context.client_info()
            {
                state.client = format!("{} {}", info.name, info.version);
            }
        }
        self.gateway.register_session(&self.slot);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.slot.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The server instructions, fixed when first asked for so that they stay byte-identical.
    fn fixed_instructions(&self) -> String {
        if let Some(fixed) = &self.state().instructions {
            return fixed.clone();
        }
        // Written without holding the state: they read the session's subject.
        let fresh = self.instructions();
        self.state().instructions.get_or_insert(fresh).clone()
    }

    /// The profile this session was opened under, if any.
    fn subject(&self) -> Option<String> {
        self.state().profile.clone()
    }

    /// The merged view as this session's subject sees it.
    fn snapshot(&self) -> Arc<Snapshot> {
        self.gateway.snapshot_for(self.subject().as_deref())
    }

    fn exposure(&self) -> Exposure {
        self.gateway.settings().exposure
    }

    /// Runs `tool_search` for this session.
    async fn tool_search(&self, arguments: &Value, context: &RequestContext<RoleServer>) -> CallToolResponse {
        let inner = &self.gateway.inner;
        if let Err(problem) = inner.validators.check(&inner.tool_search, arguments) {
            return error_result(problem);
        }
        let query = arguments["query"].as_str().unwrap_or_default();
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_SEARCH_LIMIT, |n| (n as usize).clamp(1, MAX_SEARCH_LIMIT));
        let servers: Option<Vec<String>> = arguments
            .get("servers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect());
        let snapshot = self.snapshot();
        let request = Request { query, limit, servers: servers.as_deref() };
        let (result, loaded_any, unloaded) = {
            let mut state = self.state();
            let result =
                state.session.tool_search(&snapshot.index, &snapshot.deferral, request, &snapshot.pending);
            let fresh: Vec<String> =
                result.loaded().map(|id| snapshot.catalog.tool(id).qualified_name().to_owned()).collect();
            // The best hit counts as the most recently used, so a tight budget keeps it longest.
            for name in fresh.iter().rev() {
                state.recency.touch(name);
            }
            let hard = self.gateway.settings().hard_limit;
            let unloaded =
                budget::over_budget(state.session.active(), &snapshot, &state.recency, &fresh, hard);
            let SessionState { session, recency, profile, .. } = &mut *state;
            budget::unload(session, recency, &unloaded);
            for tool in &unloaded {
                tracing::info!(target: "toolgate::audit", subject = profile.as_deref().unwrap_or("main"), tool,
                    action = "evicted", rule = "budget (max_active or [budget] dynamic)", "unloaded");
            }
            let loaded_any = !fresh.is_empty();
            if loaded_any {
                state.listed = None;
            }
            (result, loaded_any, unloaded)
        };
        let catalog = &snapshot.catalog;
        let names = |ids: &mut dyn Iterator<Item = toolgate::ToolId>| -> Vec<String> {
            ids.map(|id| catalog.tool(id).qualified_name().to_owned()).collect()
        };
        let structured = json!({
            "query": result.query,
            "matches": names(&mut result.matches.iter().map(|h| h.tool)),
            "loaded": names(&mut result.loaded()),
            "already_loaded": names(&mut result.already_loaded.iter().copied()),
            "unmatched_terms": result.unmatched_terms,
            "pending_servers": result.pending_servers,
            "unloaded": unloaded,
        });
        let mut text = result.render(catalog);
        if !unloaded.is_empty() {
            text.push_str(&format!(
                "\nUnloaded to stay within the tool budget (load again with select: when needed): {}",
                unloaded.join(", ")
            ));
        }
        if self.exposure() == Exposure::Bridge && !result.matches.is_empty() {
            text.push_str(&format!(
                "\n\nInput schemas; run a tool with {CALL_TOOL} {{\"name\": NAME, \"arguments\": {{...}}}}:\n"
            ));
            for hit in &result.matches {
                let tool = catalog.tool(hit.tool);
                text.push_str(&format!("- {}: {}\n", tool.qualified_name(), tool.input_schema()));
            }
            text.truncate(text.trim_end().len());
        }
        if loaded_any && self.exposure() == Exposure::Native {
            self.register(context);
            let notice = self.state().list_changed_notice();
            notice.await;
        }
        let mut out = CallToolResult::success(vec![ContentBlock::text(text)]);
        out.structured_content = Some(structured);
        CallToolResponse::Complete(out)
    }

    /// Runs the bridge's `call_tool {name, arguments}` (`request` is the call of `call_tool`).
    async fn bridge_call(
        &self,
        mut request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let inner = &self.gateway.inner;
        let outer = Value::Object(request.arguments.take().unwrap_or_default());
        if let Err(problem) = inner.validators.check(&inner.call_tool, &outer) {
            return error_result(problem);
        }
        let name = outer["name"].as_str().unwrap_or_default();
        request.arguments =
            Some(outer.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default());
        self.call_through_gate(name, request, context).await
    }

    /// The gate, argument validation, then the upstream. `request` carries the arguments and
    /// any continuation of an earlier round (`inputResponses`, `requestState`), passed on as is.
    async fn call_through_gate(
        &self,
        name: &str,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let snapshot = self.snapshot();
        let decision = gate::check(&snapshot.catalog, &snapshot.deferral, &self.state().session, name);
        if let Decision::Deny(denial) = &decision {
            let subject = self.subject();
            tracing::info!(target: "toolgate::audit", subject = subject.as_deref().unwrap_or("main"), tool = name,
                action = "refused", "{denial}");
        }
        let id = match decision {
            Decision::Allow(id) => id,
            Decision::Deny(denial @ Denial::Unknown { .. }) => {
                return error_result(
                    self.gateway.unavailable_server(name).unwrap_or_else(|| denial.to_string()),
                );
            }
            Decision::Deny(denial) => return error_result(denial.to_string()),
        };
        let tool = snapshot.catalog.tool(id);
        {
            let mut state = self.state();
            if state.session.is_active(tool.qualified_name()) {
                state.recency.touch(tool.qualified_name());
            }
        }
        let value = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Err(problem) = self.gateway.inner.validators.check(tool, &value) {
            return error_result(problem);
        }
        let progress = context.meta.get_progress_token().map(|token| (context.peer.clone(), token));
        self.gateway.forward(snapshot.owner(id), tool, request, progress, context.ct.clone()).await
    }

    /// What the client is told about this server when it connects: how to load tools and, for
    /// catalogs of up to [`MAX_ANNOUNCED`] deferred tools, their names in one frozen block (the
    /// `<available-deferred-tools>` that `tool_search` refers to).
    fn instructions(&self) -> String {
        let snapshot = self.snapshot();
        let servers = snapshot.catalog.servers();
        let mut out = format!(
            "toolgate gateway: {} tools from {} servers. Most tools are not listed until you load them: \
             call {TOOL_SEARCH} with keywords (any language), a server prefix such as \"github__\", or \
             select:NAME, and the tools it finds become callable.",
            snapshot.catalog.len(),
            servers.len()
        );
        if self.exposure() == Exposure::Bridge {
            out.push_str(&format!(" Run a loaded tool with {CALL_TOOL} {{\"name\", \"arguments\"}}."));
        }
        if !snapshot.pending.is_empty() {
            out.push_str(&format!(
                " Still connecting (search again later for their tools): {}.",
                snapshot.pending.join(", ")
            ));
        }
        let deferred = deferred_names(&snapshot.catalog, &snapshot.deferral);
        if !deferred.is_empty() && deferred.len() <= MAX_ANNOUNCED {
            out.push('\n');
            out.push_str(&frozen_announcement(deferred));
        } else if !servers.is_empty() {
            out.push_str(&format!(" Servers: {}.", servers.join(", ")));
        }
        out
    }
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_prompts_list_changed()
            .enable_resources_list_changed()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.fixed_instructions())
    }

    /// Every version on a connection of its own; over HTTP only up to 2025-11-25, the versions
    /// that keep a session (2026-07-28 removes HTTP sessions, and the active set lives in one).
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.modern {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
        }
    }

    /// The list changes of tools, prompts and resources are offered on a subscription.
    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.modern.then(|| {
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .build()
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.register(context.request_context());
        self.state().subscriptions.push(context.sink().clone());
        context.cancelled().await;
        let id = context.sink().id();
        self.state().subscriptions.retain(|s| s.id() != id);
        Ok(())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let client = format!("{} {}", request.client_info.name, request.client_info.version);
        let asked = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get(PROFILE_HEADER))
            .map(|v| v.to_str().unwrap_or("\u{fffd}").to_owned());
        if let Some(name) = asked {
            if !self.gateway.settings().profiles.contains_key(&name) {
                return Err(ErrorData::invalid_params(unknown_profile(&self.gateway, &name), None));
            }
            let mut state = self.state();
            match &state.profile {
                Some(path) if *path != name => {
                    return Err(ErrorData::invalid_params(
                        format!("{PROFILE_HEADER} names `{name}` but the path serves profile `{path}`"),
                        None,
                    ));
                }
                _ => state.profile = Some(name),
            }
        }
        {
            let mut state = self.state();
            state.client = client;
            state.peer = Some(context.peer.clone());
        }
        self.gateway.register_session(&self.slot);
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let inner = &self.gateway.inner;
        let tools = match self.exposure() {
            Exposure::Bridge => vec![mcp_from_tool(&inner.tool_search), mcp_from_tool(&inner.call_tool)],
            Exposure::Native => {
                self.register(&context);
                let snapshot = self.snapshot();
                let mut state = self.state();
                let list = self.gateway.tool_list(&snapshot, &state.session);
                state.listed = Some(fingerprint(&list));
                list.into_iter().map(mcp_from_tool).collect()
            }
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        Ok(match name.as_ref() {
            TOOL_SEARCH => {
                let arguments = Value::Object(request.arguments.unwrap_or_default());
                self.tool_search(&arguments, &context).await
            }
            CALL_TOOL if self.exposure() == Exposure::Bridge => self.bridge_call(request, &context).await,
            name => self.call_through_gate(name, request, &context).await,
        })
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.register(&context);
        self.state().log_level = Some(request.level);
        self.gateway.set_log_level().await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.gateway.list_prompts(self.subject().as_deref()).await)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.gateway.get_prompt(request, self.subject().as_deref()).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.gateway.list_resources(self.subject().as_deref()).await)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(self.gateway.list_resource_templates(self.subject().as_deref()).await)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.gateway.read_resource(request, self.subject().as_deref()).await
    }
}

/// Serves one MCP session on stdin and stdout until the client closes stdin or `shutdown` is
/// cancelled. Nothing else may write to stdout meanwhile.
pub async fn serve_stdio(gateway: Gateway, shutdown: CancellationToken) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let starting = gateway.server().serve(rmcp::transport::stdio());
    let running = tokio::select! {
        r = starting => r.map_err(|e| std::io::Error::other(format!("the MCP client did not initialize: {e}")))?,
        () = shutdown.cancelled() => return Ok(()),
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        r = running.waiting() => {
            r.map_err(std::io::Error::other)?;
        }
        () = shutdown.cancelled() => cancel.cancel(),
    }
    Ok(())
}
