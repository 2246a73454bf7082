//! The only crate that speaks MCP (on `rmcp`): the gateway that shows an MCP client only the
//! tools it needs.
//!
//! - [`config`]: the gateway's keys of `toolgate.toml` (transports, timeouts, session store,
//!   tokens, OAuth), read in the library's pass as its `Host`, and `mcpServers` JSON.
//! - [`gateway`]: the shared state: upstream pool, merged catalog, deferral and index, the
//!   registry of sessions ([`Gateway`]).
//! - `upstream`: stdio and HTTP upstreams (connect, list, re-list on `list_changed`,
//!   restart) and static catalogs; it reports to the gateway through a small trait.
//! - `pool`: the gateway's side of its upstreams: state changes rebuild the snapshot, allowed
//!   calls are forwarded under a timeout.
//! - [`server`]: the downstream `ServerHandler`, one per session ([`GatewayServer`]).
//! - [`http`]: streamable HTTP at `/mcp` and the status page at `/`.
//! - `itself`: a configuration that would start toolgate on itself is refused before anything
//!   starts.
//! - `start`: a gateway begun at once and its static catalogs read after
//!   ([`GatewayBuilder::begin`], [`Loading`]), so that a server listens before a large catalog is read.
//! - `snapshot`: the upstreams' listings merged into one catalog, named once (a pure
//!   function), with the unapproved tools of pinned servers held back.
//! - [`reload`]: a new configuration checked whole and applied to the running gateway
//!   ([`Gateway::reconfigure`]) on `SIGHUP` or a change of the file ([`reload::watch`]); `current`:
//!   the configuration in force, which a reload replaces.
//! - `status` and `metrics`: what the operator sees (status page, `/status.json`, `/metrics`).
//! - [`pins`]: the store of approved definitions (SQLite) and the quarantine.
//! - [`overrides`]: the operator's fixes to tool definitions; [`rate`]: each subject's rate
//!   limits; [`telemetry`]: traces exported over OTLP/HTTP.
//! - [`convert`]: `rmcp::model::Tool` to and from the catalog's tools.
//! - `passthrough`: log messages, prompts and resources, under the same policy as tools.
//! - `elicit`: an upstream's questions to the user, put to the client whose call they belong
//!   to, in either revision on either side.
//! - `progress`: upstream progress notifications relayed to the client that asked for them.
//! - `tasks`: a call an upstream turned into a task, followed by the session that started it
//!   only.
//! - `session`: one downstream session's state (conversation, client, activity, waiting calls).
//! - [`store`]: where HTTP sessions' state lives between requests (memory, or Redis shared by
//!   replicas), and `resume`: a session read from it, and written back, by its server.
//!
//! What a session is shown and what it may run is decided by the library's facade
//! ([`toolgate::Toolbox`]), never here.

#![deny(missing_docs)]

/// Writes a decision of the policy (an `AuditEvent` of the toolbox) to the audit trail, the
/// `toolgate::audit` target, with its parts as fields.
macro_rules! audit_event {
    ($event:expr) => {{
        let event = $event;
        tracing::info!(target: "toolgate::audit", subject = %event.subject, tool = %event.tool,
            action = %event.action, rule = %event.rule, "{event}");
    }};
}

pub mod access;
pub mod config;
mod current;
mod downstream;
pub mod gateway;
pub mod limits;
mod metrics;
pub mod oauth;
mod operator;
pub mod overrides;
pub mod pins;
pub(crate) mod pool;
pub mod rate;
pub mod reload;
mod session;
mod settings;
mod snapshot;
mod start;
pub mod store;
pub mod telemetry;
mod upstream;

// The modules the folders hold that were public at the crate's root stay there.
pub use downstream::{http, server};
pub use upstream::{convert, redact};

pub use downstream::server::{GatewayServer, serve_stdio};
pub use gateway::Gateway;
pub use operator::approval::Approvals;
pub use operator::status::{OverrideReport, Report, ReportedTool, UpstreamReport};
pub use settings::GatewayError;
pub use settings::Settings;
pub use start::{GatewayBuilder, Loading};

use serde_json::{Map, Value, json};
use toolgate::Tool;

/// A tool as an MCP `tools/list` result lists it: the qualified name, the description, the
/// input schema as `inputSchema`, and the annotations when there are any.
pub fn mcp_tool(tool: &Tool) -> Value {
    let mut v = json!({
        "name": tool.qualified_name(),
        "description": tool.description(),
        "inputSchema": tool.input_schema(),
    });
    if !tool.annotations().is_empty() {
        v["annotations"] = Value::Object(tool.annotations().clone());
    }
    v
}

/// A `tools/list` result for `tools`, with no pagination cursor.
pub fn tools_list<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Value {
    let tools: Vec<Value> = tools.into_iter().map(mcp_tool).collect();
    let mut result = Map::new();
    result.insert("tools".into(), Value::Array(tools));
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate::Catalog;

    #[test]
    fn a_listing_reads_back_as_the_same_catalog() {
        let catalog = Catalog::embedded();
        let listing = tools_list(catalog.tools().iter().filter(|t| t.server() == "12306-mcp"));
        let n = listing["tools"].as_array().unwrap().len();
        assert_eq!(n, 8);
        // A gateway in front of a gateway: the qualified names become the tool names.
        let text = json!({ "gateway": listing }).to_string();
        let again = Catalog::from_text("listing", &text).unwrap();
        assert_eq!(again.len(), n);
        let first = catalog.tool(catalog.get("12306-mcp__get-current-date").unwrap());
        assert_eq!(again.tools()[0].name(), first.qualified_name());
        assert_eq!(again.tools()[0].input_schema(), first.input_schema());
        assert_eq!(again.tools()[0].description(), first.description());
    }
}
