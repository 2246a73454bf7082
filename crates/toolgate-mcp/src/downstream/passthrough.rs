//! passthrough: here is what upstreams offer besides tools, relay it to downstream clients:
//! log messages, prompts and resources.
//!
//! - **Logging**: an upstream's `notifications/message` goes to every live session whose client
//!   asked for that level or a less severe one (`logging/setLevel`; a client that never asked
//!   gets everything), with the logger named after the upstream (`memory` or `memory/store`).
//!   A level a client sets is passed on to the upstreams that log, as the most verbose level any
//!   session asked for.
//! - **Prompts** are namespaced like tools: `everything__simple_prompt`; `prompts/get` splits the
//!   name back and asks the upstream that serves it.
//! - **Resources** keep their URIs (a URI is an address the client reads back as it is);
//!   `resources/read` goes to the upstream that listed the URI, or whose template it matches.
//!   When two upstreams list the same URI the first by name serves it.
//! - `list_changed` of prompts and resources is relayed to every session.
//!
//! Policy, decided by the session's subject's policy as for tools, under every spelling of the
//! server's name: a server that is disabled or denied as a whole (`Policy::decide_server`)
//! offers nothing here; a prompt is offered only if `Toolbox::offers_prompt` allows its
//! namespaced name as it would a tool's. Under a profile, an upstream's resources and log
//! messages reach a session only while its subject sees at least one of the upstream's tools
//! (fail-closed: a profile that sees none of a server's tools sees none of its data either).
// Logging is deprecated in the newest protocol version (SEP-2577) but is what clients up to
// 2025-11-25 speak; rmcp marks its types deprecated.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use crate::config::Exposure;
use rmcp::model::{
    ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult, GetPromptRequest,
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, LoggingLevel, LoggingMessageNotificationParam, Prompt, ReadResourceRequest,
    ReadResourceRequestParams, ReadResourceResponse, Reference, Resource, ResourceTemplate, ServerResult,
    SetLevelRequestParams,
};
use rmcp::{ErrorData, Peer, RoleClient, ServiceError};
use toolgate::toolbox::ServerData;

use crate::gateway::{Gateway, ResourceRoutes, View};
use crate::oauth::client::for_caller;
use crate::upstream::State;
use crate::upstream::convert::complete;

/// How long listing or reading from one upstream may take before it is left out.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// The severity rank of a level, lowest for `debug`.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// What upstreams offer besides tools, passed through for the gateway's sessions: a view of the
/// gateway that holds no state of its own ([`Gateway::passthrough`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Passthrough<'a> {
    gateway: &'a Gateway,
}

impl Gateway {
    /// Prompts, resources, completions and log messages of the upstreams, for this gateway's
    /// sessions.
    pub(crate) fn passthrough(&self) -> Passthrough<'_> {
        Passthrough { gateway: self }
    }
}

impl Passthrough<'_> {
    /// The connected upstreams that declared `feature` and that the policy of the subject
    /// served under `profile` lets offer anything here, by name.
    fn offering(&self, feature: ServerData, profile: Option<&str>) -> Vec<(String, Peer<RoleClient>)> {
        let view = self.gateway.view(profile, Exposure::Native);
        let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.values()
            .filter(|u| u.state == State::Ready && offers_data(&view, &u.name, feature))
            .filter_map(|u| {
                let peer = u.peer.clone()?;
                let caps = peer.peer_info()?.capabilities.clone();
                let declared = match feature {
                    ServerData::Logs => caps.logging.is_some(),
                    ServerData::Prompts => caps.prompts.is_some(),
                    ServerData::Resources => caps.resources.is_some(),
                    ServerData::Completions => caps.completions.is_some(),
                };
                declared.then(|| (u.name.clone(), peer))
            })
            .collect()
    }

    /// Passes a log message of `upstream` on to every session that wants its level and whose
    /// subject may see the upstream's data.
    pub(crate) fn relay_log(&self, upstream: &str, mut params: LoggingMessageNotificationParam) {
        params.logger = Some(match params.logger.take() {
            Some(logger) if !logger.is_empty() => format!("{upstream}/{logger}"),
            _ => upstream.to_owned(),
        });
        params.meta = None;
        for slot in self.gateway.sessions().live() {
            let profile = slot.state.lock().unwrap_or_else(|e| e.into_inner()).profile().map(str::to_owned);
            let view = self.gateway.view(profile.as_deref(), Exposure::Native);
            if !offers_data(&view, upstream, ServerData::Logs) {
                continue;
            }
            let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.listener().log_level().is_some_and(|wanted| rank(params.level) < rank(wanted)) {
                continue;
            }
            let Some(peer) = state.listener().log_listener() else { continue };
            let params = params.clone();
            tokio::spawn(async move {
                if let Err(e) = peer.notify_logging_message(params).await {
                    tracing::debug!("could not relay a log message: {e}");
                }
            });
        }
    }

    /// The most verbose level any live session asked for.
    fn wanted_log_level(&self) -> Option<LoggingLevel> {
        self.gateway
            .sessions()
            .live()
            .iter()
            .filter_map(|slot| slot.state.lock().unwrap_or_else(|e| e.into_inner()).listener().log_level())
            .min_by_key(|l| rank(*l))
    }

    /// Tells upstream `peer` the level sessions want, if any asked; called when it connects.
    pub(crate) async fn pass_log_level(&self, name: &str, peer: &Peer<RoleClient>) {
        let Some(level) = self.wanted_log_level() else { return };
        if peer.peer_info().is_none_or(|i| i.capabilities.logging.is_none()) {
            return;
        }
        if let Err(e) = peer.set_level(SetLevelRequestParams::new(level)).await {
            tracing::debug!(upstream = %name, "logging/setLevel failed: {e}");
        }
    }

    /// A session's `logging/setLevel`: records it and passes the most verbose level wanted on
    /// to every upstream that logs.
    pub(crate) async fn set_log_level(&self) {
        let Some(level) = self.wanted_log_level() else { return };
        for (name, peer) in self.offering(ServerData::Logs, None) {
            let asked = tokio::time::timeout(LIST_TIMEOUT, peer.set_level(SetLevelRequestParams::new(level)));
            match asked.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!(upstream = %name, "logging/setLevel failed: {e}"),
                Err(_) => tracing::debug!(upstream = %name, "logging/setLevel timed out"),
            }
        }
    }

    /// Tells every session that the prompts or the resources of an upstream changed.
    pub(crate) fn relay_list_changed(&self, prompts: bool) {
        for slot in self.gateway.sessions().live() {
            let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            let (peer, sinks) = state.listener().change_listeners();
            tokio::spawn(async move {
                if let Some(peer) = peer {
                    let sent = if prompts {
                        peer.notify_prompt_list_changed().await
                    } else {
                        peer.notify_resource_list_changed().await
                    };
                    if let Err(e) = sent {
                        tracing::debug!("could not relay a list change: {e}");
                    }
                }
                for sink in sinks {
                    let sent = if prompts {
                        sink.notify_prompt_list_changed().await
                    } else {
                        sink.notify_resource_list_changed().await
                    };
                    if let Err(e) = sent {
                        tracing::debug!("could not relay a list change on a subscription: {e}");
                    }
                }
            });
        }
    }

    /// Every offered prompt of every upstream, namespaced `server__prompt`.
    pub(crate) async fn list_prompts(&self, profile: Option<&str>) -> ListPromptsResult {
        let mut all: Vec<Prompt> = Vec::new();
        let view = self.gateway.view(profile, Exposure::Native);
        for (name, peer) in self.offering(ServerData::Prompts, profile) {
            let prompts = listed(&name, "prompts/list", peer.list_all_prompts()).await.unwrap_or_default();
            all.extend(prompts.into_iter().filter_map(|mut p| {
                let qualified = prompt_name(&name, &p.name);
                let allowed = view.toolbox.offers_prompt(&name, &p.name, &qualified);
                p.name = qualified;
                allowed.then_some(p)
            }));
        }
        ListPromptsResult::with_all_items(all)
    }

    /// `prompts/get` of a namespaced prompt, asked of the upstream that serves it for the
    /// caller whose access token is `on_behalf` ([`for_caller`]).
    pub(crate) async fn get_prompt(
        &self,
        mut params: GetPromptRequestParams,
        profile: Option<&str>,
        on_behalf: Option<&Arc<str>>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let qualified = params.name.clone();
        let not_found = || {
            ErrorData::invalid_params(
                format!(
                    "no prompt `{qualified}`: prompts are named `server__prompt`, as prompts/list gives them"
                ),
                None,
            )
        };
        let (name, peer) = self
            .offering(ServerData::Prompts, profile)
            .into_iter()
            .find(|(server, _)| qualified.starts_with(&prompt_name(server, "")))
            .ok_or_else(not_found)?;
        let own = qualified[prompt_name(&name, "").len()..].to_owned();
        if !self.gateway.view(profile, Exposure::Native).toolbox.offers_prompt(&name, &own, &qualified) {
            return Err(not_found());
        }
        params.name = own;
        params.meta = None;
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let what = format!("give prompt `{qualified}`");
        match self.ask(&name, &what, peer.send_request(for_caller(request, on_behalf))).await? {
            ServerResult::GetPromptResult(result) => {
                Ok(complete::prompt(GetPromptResponse::Complete(result)))
            }
            ServerResult::InputRequiredResult(asked) => {
                Ok(complete::prompt(GetPromptResponse::InputRequired(asked)))
            }
            _ => Err(unexpected(&name, &what)),
        }
    }

    /// Every offered resource (or, with `templates`, resource template) of every upstream, and
    /// the routes to read them.
    async fn gather_resources(&self, profile: Option<&str>) -> (Vec<Resource>, Vec<ResourceTemplate>) {
        let mut resources: Vec<Resource> = Vec::new();
        let mut templates: Vec<ResourceTemplate> = Vec::new();
        let mut routes = ResourceRoutes::default();
        for (name, peer) in self.offering(ServerData::Resources, profile) {
            for r in listed(&name, "resources/list", peer.list_all_resources()).await.unwrap_or_default() {
                if routes.uris.contains_key(&r.uri) {
                    tracing::warn!(upstream = %name, "resource `{}` is listed by two servers; the first serves it", r.uri);
                    continue;
                }
                routes.uris.insert(r.uri.clone(), name.clone());
                resources.push(r);
            }
            let listing = peer.list_all_resource_templates();
            for t in listed(&name, "resources/templates/list", listing).await.unwrap_or_default() {
                let prefix = t.uri_template.split('{').next().unwrap_or_default().to_owned();
                routes.templates.push((prefix, name.clone()));
                templates.push(t);
            }
        }
        *self.gateway.inner.resources.lock().unwrap_or_else(|e| e.into_inner()) = routes;
        (resources, templates)
    }

    /// `resources/list` over every upstream.
    pub(crate) async fn list_resources(&self, profile: Option<&str>) -> ListResourcesResult {
        ListResourcesResult::with_all_items(self.gather_resources(profile).await.0)
    }

    /// `resources/templates/list` over every upstream.
    pub(crate) async fn list_resource_templates(&self, profile: Option<&str>) -> ListResourceTemplatesResult {
        ListResourceTemplatesResult::with_all_items(self.gather_resources(profile).await.1)
    }

    /// `resources/read`, asked of the upstream that listed the URI (listing again first if no
    /// listing knows it) for the caller whose access token is `on_behalf` ([`for_caller`]).
    /// Never answered from a cache: the same URI may read differently for another caller.
    pub(crate) async fn read_resource(
        &self,
        mut params: ReadResourceRequestParams,
        profile: Option<&str>,
        on_behalf: Option<&Arc<str>>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = params.uri.clone();
        let route = || self.gateway.inner.resources.lock().unwrap_or_else(|e| e.into_inner()).owner(&uri);
        let owner = match route() {
            Some(owner) => Some(owner),
            None => {
                self.gather_resources(profile).await;
                route()
            }
        };
        let offered = self.offering(ServerData::Resources, profile);
        let Some((name, peer)) = owner.and_then(|o| offered.into_iter().find(|(n, _)| *n == o)) else {
            return Err(ErrorData::resource_not_found(
                format!("no connected server lists resource `{uri}`; see resources/list"),
                None,
            ));
        };
        params.meta = None;
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params));
        let what = format!("read resource `{uri}`");
        match self.ask(&name, &what, peer.send_request(for_caller(request, on_behalf))).await? {
            ServerResult::ReadResourceResult(result) => {
                Ok(complete::resource(ReadResourceResponse::Complete(result)))
            }
            ServerResult::InputRequiredResult(asked) => {
                Ok(complete::resource(ReadResourceResponse::InputRequired(asked)))
            }
            _ => Err(unexpected(&name, &what)),
        }
    }

    /// `completion/complete`, asked of the upstream that serves the prompt (by its namespaced
    /// name, under the same policy as `prompts/get`) or the resource template (by its URI). A
    /// reference no upstream serves, or one whose upstream offers no completions, completes to
    /// nothing.
    pub(crate) async fn complete(
        &self,
        mut params: CompleteRequestParams,
        profile: Option<&str>,
        on_behalf: Option<&Arc<str>>,
    ) -> Result<CompleteResult, ErrorData> {
        let offered = self.offering(ServerData::Completions, profile);
        let target = match &mut params.r#ref {
            Reference::Prompt(prompt) => {
                let qualified = prompt.name.clone();
                offered
                    .into_iter()
                    .find(|(server, _)| qualified.starts_with(&prompt_name(server, "")))
                    .and_then(|(server, peer)| {
                        let own = qualified[prompt_name(&server, "").len()..].to_owned();
                        let view = self.gateway.view(profile, Exposure::Native);
                        let allowed = view.toolbox.offers_prompt(&server, &own, &qualified);
                        prompt.name = own;
                        allowed.then_some((server, peer))
                    })
            }
            Reference::Resource(template) => {
                if self.gateway.inner.resources.lock().unwrap_or_else(|e| e.into_inner()).templates.is_empty()
                {
                    self.gather_resources(profile).await;
                }
                let owner = self
                    .gateway
                    .inner
                    .resources
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .template_owner(&template.uri);
                owner.and_then(|o| offered.into_iter().find(|(n, _)| *n == o))
            }
            _ => None,
        };
        let Some((name, peer)) = target else {
            return Ok(CompleteResult::default());
        };
        params.meta = None;
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        let what = "complete an argument";
        match self.ask(&name, what, peer.send_request(for_caller(request, on_behalf))).await? {
            ServerResult::CompleteResult(result) => Ok(complete::completion(result)),
            _ => Err(unexpected(&name, what)),
        }
    }

    /// Awaits one request to upstream `server` within the call timeout; a failure becomes the
    /// client's error, saying which server failed to do `what`.
    async fn ask<T>(
        &self,
        server: &str,
        what: &str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ErrorData> {
        match tokio::time::timeout(self.gateway.settings().gateway.call_timeout, request).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => {
                let why = crate::upstream::in_own_words(&e);
                Err(ErrorData::internal_error(format!("server `{server}` failed to {what}: {why}"), None))
            }
            Err(_) => {
                Err(ErrorData::internal_error(format!("server `{server}` did not {what} in time"), None))
            }
        }
    }
}

/// The error for an upstream that answered `what` with something else.
fn unexpected(server: &str, what: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("server `{server}` answered the request to {what} with something else"),
        None,
    )
}

/// Whether the subject of `view` may see `data` of upstream `upstream` (the toolbox decides;
/// the view knows which tools the upstream serves).
fn offers_data(view: &View, upstream: &str, data: ServerData) -> bool {
    view.toolbox.offers(upstream, data, |t| view.owner(t) == Some(upstream))
}

/// The name a prompt of `server` is offered under: the server's qualified-name part, `__`, and
/// the prompt's own name.
fn prompt_name(server: &str, prompt: &str) -> String {
    format!("{}__{prompt}", toolgate::naming::normalize_server(server))
}

/// Awaits one listing of upstream `server`; a failure is logged and leaves that server out.
async fn listed<T>(
    server: &str,
    what: &str,
    listing: impl Future<Output = Result<T, ServiceError>>,
) -> Option<T> {
    match tokio::time::timeout(LIST_TIMEOUT, listing).await {
        Ok(Ok(items)) => Some(items),
        Ok(Err(e)) => {
            tracing::warn!(upstream = %server, "{what} failed: {e}");
            None
        }
        Err(_) => {
            tracing::warn!(upstream = %server, "{what} timed out");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_routes_prefer_exact_uris_then_the_longest_template_prefix() {
        let mut routes = ResourceRoutes::default();
        routes.uris.insert("file:///a.txt".into(), "fs".into());
        routes.templates.push(("test://static/".into(), "everything".into()));
        routes.templates.push(("test://static/resource/".into(), "other".into()));
        routes.templates.push((String::new(), "catch_all".into()));
        assert_eq!(routes.owner("file:///a.txt").as_deref(), Some("fs"));
        assert_eq!(routes.owner("test://static/resource/7").as_deref(), Some("other"));
        assert_eq!(routes.owner("test://static/x").as_deref(), Some("everything"));
        assert_eq!(routes.owner("memo://nothing"), None, "an empty template prefix routes nothing");
    }

    #[test]
    fn levels_rank_by_severity() {
        assert!(rank(LoggingLevel::Debug) < rank(LoggingLevel::Info));
        assert!(rank(LoggingLevel::Warning) < rank(LoggingLevel::Error));
        assert!(rank(LoggingLevel::Alert) < rank(LoggingLevel::Emergency));
    }
}
