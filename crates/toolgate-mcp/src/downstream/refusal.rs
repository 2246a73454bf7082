//! refusal: here is a call that will not run, write its audit record, its metrics entry and
//! what the client reads, once, wherever it was refused.
//!
//! The library decides whether a call runs ([`toolgate::Toolbox::check`]); a call it allowed
//! may still not reach its server ([`Unreachable`]), and a bridge call may name no call at
//! all. Each is a [`Refused`], and only [`Refused::write`] writes what is said of it. The text
//! is the library's denial, with what only the gateway knows added: that the tool's server is
//! down or starting, or why a grant did not admit the call.

use rmcp::model::CallToolResponse;
use toolgate::toolbox::{Denial, GrantProblem};

use crate::downstream::server::GatewayServer;
use crate::gateway::{CALL_TOOL, View};
use crate::upstream::error_result;
use crate::upstream::unreachable::Unreachable;

/// A call that will not run.
#[derive(Debug)]
pub(crate) struct Refused<'a> {
    /// The name the model called.
    pub(crate) name: &'a str,
    /// Why it will not run.
    pub(crate) why: Why,
}

/// Why a call will not run.
#[derive(Debug)]
pub(crate) enum Why {
    /// The library refused it.
    Denied {
        /// The library's reason.
        denial: Denial,
        /// Why the grant presented with the call did not admit it, if one was presented.
        grant: Option<GrantProblem>,
    },
    /// A call that cannot be sent as made (what is wrong with it): a bridge `call_tool` that
    /// names no call, or a call that sets a parameter the operator fixed.
    Malformed(String),
    /// The library allowed it, and its server cannot take it now.
    Unreachable(Unreachable),
    /// The caller is over a rate limit ([`crate::rate`]).
    Limited(crate::rate::Limited),
}

impl Why {
    /// The refusal's reason, as the audit record and `/metrics` name it.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Why::Denied { denial, .. } => denial.reason(),
            Why::Malformed(_) => "malformed_call",
            Why::Unreachable(unreachable) => unreachable.reason(),
            Why::Limited(_) => "rate_limited",
        }
    }
}

impl Refused<'_> {
    /// Writes the refusal's audit record (the policy's event when a rule refused it) and its
    /// metrics entry, and returns what the client reads.
    pub(crate) fn write(self, server: &GatewayServer, view: &View) -> String {
        let Refused { name, why } = self;
        let toolbox = &view.toolbox;
        let subject = toolbox.about().subject();
        let gateway = server.gateway();
        let reason = why.reason();
        let (rule, text) = match why {
            Why::Denied { denial, grant } => {
                match toolbox.refusal(&denial) {
                    Some(event) => audit_event!(&event),
                    None => {
                        tracing::info!(target: "toolgate::audit", %subject, tool = name, action = "refused",
                        reason, "{denial}")
                    }
                }
                // The policy rule that refused it, or what the model was told.
                let rule = match &denial {
                    Denial::Forbidden { rule, .. } => rule.to_string(),
                    other => other.to_string(),
                };
                let text = match (&denial, grant) {
                    (Denial::Unknown { .. }, _) => gateway
                        .upstreams()
                        .unavailable(name)
                        .map_or_else(|| denial.to_string(), |u| u.to_string()),
                    (Denial::NotLoaded { .. }, Some(problem)) => {
                        tracing::info!(target: "toolgate::audit", %subject, tool = name, "grant refused: {problem}");
                        format!("{denial} ({problem})")
                    }
                    (Denial::NotLoaded { .. }, None) if toolbox.about().is_granted() => format!(
                        "{denial}, passing the grant it gives with the call ({CALL_TOOL} {{\"name\", \"grant\", \"arguments\"}})"
                    ),
                    _ => denial.to_string(),
                };
                (rule, text)
            }
            Why::Malformed(problem) => {
                tracing::info!(target: "toolgate::audit", %subject, tool = name, action = "refused",
                    reason, "{problem}");
                (problem.clone(), problem)
            }
            Why::Limited(limited) => {
                let text = limited.to_string();
                tracing::info!(target: "toolgate::audit", %subject, tool = name, action = "refused",
                    reason, "{text}");
                (limited.scope, text)
            }
            Why::Unreachable(unreachable) => {
                let text = unreachable.to_string();
                tracing::info!(target: "toolgate::audit", %subject, tool = name, action = "refused",
                    reason, "{text}");
                (text.clone(), text)
            }
        };
        gateway.inner.metrics.refused(crate::metrics::Refusal {
            session: server.state().number(),
            subject: subject.to_string(),
            tool: name.to_owned(),
            reason,
            rule,
        });
        text
    }

    /// [`Refused::write`], as the tool error the model reads.
    pub(crate) fn answer(self, server: &GatewayServer, view: &View) -> CallToolResponse {
        error_result(self.write(server, view))
    }
}
