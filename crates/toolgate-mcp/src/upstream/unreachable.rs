//! unreachable: why the server of a tool cannot take a call now, though the gate allowed it
//! (or, for a name the gate does not know, why its server's tools are not listed).
//!
//! The gateway writes such a refusal like any other ([`crate::downstream::refusal`]); this
//! type only says what happened, in words the model can act on.

/// Why an upstream cannot take a call of one of its tools now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreachable {
    /// The server is no longer configured (the configuration was reloaded without it).
    Gone {
        /// The server.
        server: String,
    },
    /// No upstream of the current snapshot serves the tool (its server left as it was called).
    NoServer {
        /// The tool's qualified name.
        tool: String,
    },
    /// The tool comes from a static catalog: there is no server to call.
    Static {
        /// The tool's qualified name.
        tool: String,
    },
    /// The server failed, and has not come back.
    Failed {
        /// The server.
        server: String,
        /// The tool, as the model named it (its own name when the gate does not know it).
        tool: String,
        /// Why the server failed.
        reason: String,
    },
    /// The server is still starting.
    Starting {
        /// The server.
        server: String,
    },
    /// The server is between connections.
    NotConnected {
        /// The server.
        server: String,
    },
    /// The server started and lists the tool otherwise than the model was shown it.
    Changed {
        /// The server.
        server: String,
        /// The tool's qualified name.
        tool: String,
    },
}

impl Unreachable {
    /// The reason's name in the audit log and the metrics.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Unreachable::Gone { .. } | Unreachable::NoServer { .. } => "server_gone",
            Unreachable::Static { .. } => "not_connected",
            Unreachable::Failed { .. } => "server_failed",
            Unreachable::Starting { .. } => "server_starting",
            Unreachable::NotConnected { .. } => "not_connected",
            Unreachable::Changed { .. } => "changed",
        }
    }
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreachable::Gone { server } => write!(f, "server `{server}` is not configured any more"),
            Unreachable::NoServer { tool } => write!(f, "tool `{tool}` has no server any more"),
            Unreachable::Static { tool } => {
                write!(f, "demo tool `{tool}`, not connected: toolgate serves it from a static catalog")
            }
            Unreachable::Failed { server, tool, reason } => {
                write!(f, "tool `{tool}` of server `{server}` is unavailable: the server failed ({reason})")
            }
            Unreachable::Starting { server } => write!(
                f,
                "server `{server}` is still starting, so its tools are not available yet; try again shortly"
            ),
            Unreachable::NotConnected { server } => {
                write!(f, "server `{server}` is not connected right now; try again shortly")
            }
            Unreachable::Changed { server, tool } => write!(
                f,
                "server `{server}` started and no longer lists `{tool}` as it was when you loaded it; load it \
                 again with tool_search before calling it"
            ),
        }
    }
}
