//! status: what the operator sees, through [`Report`] (`Gateway::report`): the status
//! (the status page and `/status.json`), the metrics (`/metrics`), an explained search (the
//! status page's search box, with `--explain`'s reasons) and each upstream as `toolgate doctor`
//! reports it. Reads the gateway; decides nothing.

use serde_json::{Value, json};
use std::time::Duration;

use crate::config::Exposure;
use toolgate::tokens::TokenCounter;
use toolgate::{Catalog, Conversation};

use crate::gateway::{Gateway, exposure_name, known_profiles};
use crate::pins::Held;
use crate::settings::GatewayError;

/// One upstream as `toolgate doctor` sees it.
#[derive(Debug, Clone)]
pub struct UpstreamReport {
    /// Its configured name.
    pub name: String,
    /// `ready`, `static`, `starting`, `failed` or `disabled`.
    pub state: String,
    /// Why it last failed.
    pub error: Option<String>,
    /// Whether it announced `tools.listChanged` (`None`: not connected or a static catalog).
    pub list_changed: Option<bool>,
    /// Its tools (quarantined ones too).
    pub tools: Vec<ReportedTool>,
    /// How long it took to start and list its tools (`None`: it did not get there).
    pub started_in: Option<std::time::Duration>,
}

/// One tool of an [`UpstreamReport`].
#[derive(Debug, Clone)]
pub struct ReportedTool {
    /// The name clients see.
    pub qualified: String,
    /// Its server name.
    pub server: String,
    /// Its own name.
    pub name: String,
    /// Its definition's tokens (o200k_base).
    pub tokens: usize,
}

/// What one override did to the tool it names ([`Report::overrides`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverrideReport {
    /// The server (`[servers.NAME]`).
    pub server: String,
    /// The upstream's name of the tool (`tools.TOOL`).
    pub tool: String,
    /// What it changes, in words (`shown as open_issue`, `hides owner (fixed)`).
    pub changes: Vec<String>,
    /// The definition's tokens as listed and as overridden; `None` when no upstream lists it.
    pub tokens: Option<(usize, usize)>,
}

impl Gateway {
    /// The state of the gateway as the status page shows it ([`Report::status`]).
    pub fn status(&self) -> Value {
        self.report().status()
    }

    /// What the operator sees of the gateway.
    pub fn report(&self) -> Report<'_> {
        Report { gateway: self }
    }
}

/// What the operator sees of a gateway: a view of it that reads and decides nothing.
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    gateway: &'a Gateway,
}

impl Report<'_> {
    /// The tools the subject of `profile` sees now (the served subject with `None`): what
    /// `tool_search` of one of its sessions searches. Fails for a profile the configuration
    /// does not define.
    pub fn visible_catalog(&self, profile: Option<&str>) -> Result<Catalog, GatewayError> {
        if let Some(name) = profile
            && !self.gateway.inner.decider.has_profile(name)
        {
            return Err(GatewayError {
                key: format!("profiles.{name}"),
                message: format!(
                    "no such profile; known profiles: {}",
                    known_profiles(&self.gateway.inner.decider)
                ),
            });
        }
        Ok(self.gateway.view(profile, Exposure::Native).toolbox.visible().clone())
    }

    /// Waits until `done` holds for the [status](Report::status), checking after every
    /// rebuild, or `timeout` passes; returns whether it came to hold.
    pub async fn wait_until(&self, timeout: Duration, done: impl Fn(&Value) -> bool) -> bool {
        let mut changes = self.gateway.inner.changes.subscribe();
        let wait = async {
            loop {
                if done(&self.status()) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    /// The state of the gateway as the status page shows it: upstreams with their state and
    /// tool counts, and live sessions with their active sets.
    pub fn status(&self) -> Value {
        let view = self.gateway.view(None, Exposure::Native);
        let toolbox = &view.toolbox;
        let servers: Vec<Value> = {
            let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
            pool.values()
                .map(|u| {
                    let mut v = u.status();
                    let visible = toolbox.visible().tools().iter().filter(|t| view.owner(t) == Some(&u.name));
                    v["visible"] = json!(visible.count());
                    let held = view.snapshot.state.held.tools().iter();
                    v["quarantined"] = json!(
                        held.filter(|t| view.snapshot.owner(t.qualified_name()) == Some(&u.name)).count()
                    );
                    v
                })
                .collect()
        };
        let current = self.gateway.current();
        let sessions: Vec<Value> = self
            .gateway
            .sessions()
            .live()
            .iter()
            .map(|slot| {
                let state = slot.state.lock().unwrap_or_else(|e| e.into_inner());
                let exposure = state.exposure_under(current.settings.exposure);
                let (shown, full) = self.session_tokens(state.profile(), exposure, state.conversation());
                let activity = state.activity();
                json!({
                    "id": state.number(),
                    "client": state.client(),
                    "profile": state.profile(),
                    "exposure": exposure_name(exposure),
                    "revision": state.listener().revision().map(|v| v.as_str().to_owned()),
                    "transport": if state.reach().is_http() { "http" } else { "stdio" },
                    "requests": activity.requests,
                    "in_flight": activity.in_flight,
                    "idle_secs": activity.last.map(|t| t.elapsed().as_secs()),
                    // A client that only listed the tools and stays connected is most likely a
                    // health check (`claude mcp list`), not an agent at work.
                    "kind": if activity.worked { "agent" } else { "listed only" },
                    "active": state.conversation().active(),
                    // A full load not counted yet is `null`, and so is what was saved.
                    "tokens": {"tool_list": shown, "full_load": full, "saved": full.map(|f| f as i64 - shown as i64)},
                })
            })
            .collect();
        let deferred = toolbox.visible().tools().iter().filter(|t| toolbox.is_deferred(t)).count();
        // A held definition is an upstream's text: it passes the mask like its stderr does.
        let held: Vec<Value> = match self.gateway.approvals().held() {
            Ok(held) => held
                .iter()
                .map(|h| {
                    let mut shown = Held::to_json(h);
                    for line in shown["diff"].as_array_mut().into_iter().flatten() {
                        if let Some(text) = line.as_str() {
                            *line = json!(crate::upstream::redact::mask_secrets(text, &current.secrets));
                        }
                    }
                    shown
                })
                .collect(),
            Err(e) => {
                vec![json!({"error": crate::upstream::redact::redact(&e.to_string(), &current.secrets)})]
            }
        };
        json!({
            "uptime_secs": self.gateway.inner.started.elapsed().as_secs(),
            "exposure": current.settings.exposure.map_or("auto", exposure_name),
            "strategy": toolbox.about().strategy().as_str(),
            "tools": toolbox.visible().len(),
            "deferred": deferred,
            "deferral": toolbox.about().defers(),
            "pending_servers": view.snapshot.state.starting,
            "validators": self.gateway.inner.decider.validators(),
            "servers": servers,
            "sessions": sessions,
            "quarantined": held,
            "refusals": self.gateway.inner.metrics.recent_refusals(),
            "limits": current.limits.status(),
            "configuration": self.configuration(),
            "timeline": self.gateway.inner.metrics.timeline_status(),
        })
    }

    /// The tokens of the tool list a session of `profile` is sent now, and of a full load of
    /// every tool it can see.
    /// The configuration file and its reloads: how many were applied and refused, the last
    /// of each (a refusal only while no reload has been applied since), and the keys that
    /// changed but take effect at the next start.
    fn configuration(&self) -> Value {
        let log = self.gateway.inner.reloads.log();
        let secs =
            |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        json!({
            "file": self.gateway.inner.source.as_ref().map(|p| p.display().to_string()),
            "reloads_applied": log.applied,
            "reloads_failed": log.failed,
            "last_applied": log.last_applied.map(|(at, changes)| json!({"at": secs(at), "changes": changes})),
            "failing": log.failing.map(|(at, error)| json!({"at": secs(at), "error": error})),
            "at_restart": log.at_restart,
        })
    }

    fn session_tokens(
        &self,
        profile: Option<&str>,
        exposure: Exposure,
        conversation: &Conversation,
    ) -> (usize, Option<usize>) {
        let view = self.gateway.view(profile, exposure);
        let about = view.toolbox.about();
        let shown = about.definitions_tokens(view.toolbox.preview(conversation).iter().map(|t| &**t));
        (shown, crate::gateway::full_load_tokens(&view.toolbox))
    }

    /// Each upstream as `toolgate doctor` reports it: its state and error, its tools under
    /// their qualified names with their definition tokens, and whether it said it sends
    /// `tools/list_changed` (`None`: not connected, or a static catalog).
    pub fn upstream_reports(&self) -> Vec<UpstreamReport> {
        let snapshot = self.gateway.snapshot();
        let counter = TokenCounter::get();
        let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.values()
            .map(|u| {
                let status = u.status();
                let list_changed = u.peer.as_ref().and_then(|p| p.peer_info()).map(|info| {
                    info.capabilities.tools.as_ref().and_then(|t| t.list_changed).unwrap_or(false)
                });
                let served = snapshot.state.catalog.tools().iter().chain(snapshot.state.held.tools());
                let tools = served
                    .filter(|t| snapshot.owner(t.qualified_name()) == Some(u.name.as_str()))
                    .map(|t| ReportedTool {
                        qualified: t.qualified_name().to_owned(),
                        server: t.server().to_owned(),
                        name: t.name().to_owned(),
                        tokens: counter.definition(t),
                    })
                    .collect();
                UpstreamReport {
                    name: u.name.clone(),
                    state: status["state"].as_str().unwrap_or_default().to_owned(),
                    error: u.last_error.clone(),
                    list_changed,
                    tools,
                    started_in: u.started_in,
                }
            })
            .collect()
    }

    /// What each override of the configuration did to the tool it names, as the upstreams
    /// listed them (`toolgate doctor`): an override naming a tool no ready upstream lists is
    /// reported with no tokens.
    pub fn overrides(&self) -> Vec<OverrideReport> {
        let counter = TokenCounter::get();
        let tokens = |spec: &toolgate::ToolSpec| {
            let catalog = toolgate::Catalog::builder().tool(spec.clone()).build().ok()?;
            Some(counter.definition(&catalog.tools()[0]))
        };
        let current = self.gateway.current();
        let pool = self.gateway.inner.pool.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (server, overrides) in &current.overrides {
            for (upstream_name, o) in overrides.iter() {
                let listed = pool
                    .values()
                    .flat_map(|u| u.listing().tools.iter())
                    .find(|t| t.server == *server && t.name == *upstream_name);
                let tokens = listed.and_then(|raw| Some((tokens(raw)?, tokens(&overrides.apply(raw)?)?)));
                out.push(OverrideReport {
                    server: server.clone(),
                    tool: upstream_name.clone(),
                    changes: o.changes(),
                    tokens,
                });
            }
        }
        out.sort_by(|a, b| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)));
        out
    }

    /// The names of the first tool list a new native session of the served subject gets.
    pub fn first_tool_list(&self) -> Vec<String> {
        let view = self.gateway.view(None, Exposure::Native);
        let mut conversation = view.toolbox.conversation();
        match view.toolbox.tools(&mut conversation) {
            Ok(tools) => tools.iter().map(|t| t.qualified_name().to_owned()).collect(),
            Err(e) => vec![format!("({e})")],
        }
    }

    /// `/metrics`: the Prometheus text exposition of the gateway's counters.
    pub fn metrics(&self) -> String {
        let view = self.gateway.view(None, Exposure::Native);
        self.gateway.inner.metrics.encode(
            self.gateway.sessions().count(),
            view.toolbox.visible().len(),
            view.snapshot.state.held.len(),
        )
    }

    /// A read-only search of the served subject's tools (nothing is loaded), each hit with its
    /// score and `--explain`'s reasons, and what a `tool_search` would load (`loaded`,
    /// `nothing_fits`).
    pub fn explain(&self, query: &str, limit: usize) -> Value {
        let view = self.gateway.view(None, Exposure::Native);
        let found = view.toolbox.explained_search(query, limit);
        let matches: Vec<Value> = found
            .hits
            .iter()
            .map(|h| {
                json!({
                    "name": h.tool.qualified_name(),
                    "score": toolgate::search::score_json(h.score),
                    "description": h.tool.short_description(160),
                    "explain": h.explanation.to_json(),
                })
            })
            .collect();
        let loaded: Vec<&str> = found.hits[..found.loads].iter().map(|h| h.tool.qualified_name()).collect();
        json!({"query": query, "strategy": found.strategy.as_str(), "matches": matches,
            "loaded": loaded, "nothing_fits": found.nothing_fits,
            "unmatched_terms": found.unmatched_terms})
    }
}
