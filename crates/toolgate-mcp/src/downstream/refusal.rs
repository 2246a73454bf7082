//! refusal: here is a tool call the gate refused, write its audit record, its metrics entry
//! and what the model reads, once.
//!
//! The library decides whether a call runs ([`toolgate::Toolbox::check`]); this is what the
//! gateway says of a refusal. The text is the library's denial, with what only the gateway
//! knows added: that the tool's server is down or starting, or why a grant did not admit the
//! call.

use rmcp::model::CallToolResponse;
use toolgate::toolbox::{Denial, GrantProblem};

use crate::downstream::server::GatewayServer;
use crate::gateway::{CALL_TOOL, View};
use crate::upstream::error_result;

/// A tool call the gate refused.
#[derive(Debug)]
pub(crate) struct Refused<'a> {
    /// The name the model called.
    pub(crate) name: &'a str,
    /// Why the library refused it.
    pub(crate) denial: Denial,
    /// Why the grant presented with the call did not admit it, if one was presented.
    pub(crate) grant: Option<GrantProblem>,
}

impl Refused<'_> {
    /// Writes the refusal's audit record (the policy's event when a rule refused it) and its
    /// metrics entry, and returns what the model reads.
    pub(crate) fn answer(self, server: &GatewayServer, view: &View) -> CallToolResponse {
        let Refused { name, denial, grant } = self;
        let toolbox = &view.toolbox;
        let subject = toolbox.about().subject();
        match toolbox.refusal(&denial) {
            Some(event) => audit_event!(&event),
            None => tracing::info!(target: "toolgate::audit", %subject, tool = name, action = "refused",
                reason = denial.reason(), "{denial}"),
        }
        // The policy rule that refused it, or what the model was told.
        let rule = match &denial {
            Denial::Forbidden { rule, .. } => rule.to_string(),
            other => other.to_string(),
        };
        let gateway = server.gateway();
        gateway.inner.metrics.refused(crate::metrics::Refusal {
            session: server.state().number(),
            subject: subject.to_string(),
            tool: name.to_owned(),
            reason: denial.reason(),
            rule,
        });
        let text = match (&denial, grant) {
            (Denial::Unknown { .. }, _) => {
                gateway.upstreams().unavailable(name).unwrap_or_else(|| denial.to_string())
            }
            (Denial::NotLoaded { .. }, Some(problem)) => {
                tracing::info!(target: "toolgate::audit", %subject, tool = name, "grant refused: {problem}");
                format!("{denial} ({problem})")
            }
            (Denial::NotLoaded { .. }, None) if toolbox.about().is_granted() => format!(
                "{denial}, passing the grant it gives with the call ({CALL_TOOL} {{\"name\", \"grant\", \"arguments\"}})"
            ),
            _ => denial.to_string(),
        };
        error_result(text)
    }
}
