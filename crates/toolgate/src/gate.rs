//! gate: the answer to "may this call run?", and why not.
//!
//! The question itself is asked in one place only, [`Toolbox::check`](crate::Toolbox::check):
//! a call runs only if this conversation was shown the tool's current definition (in a tool
//! list or a search result), the policy allows it for this subject now, and its arguments
//! validate against a schema that compiled. This module holds the answer's types: a
//! [`Decision`], and for a refusal a [`Denial`] whose message tells the model what to do. The
//! caller never forwards a denied call.

use std::fmt;

use crate::catalog::Tool;
use crate::policy::Rule;

/// Why a call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Denial {
    /// No tool the subject may see has this name.
    Unknown {
        /// The name the model used.
        name: String,
    },
    /// The tool exists but this conversation was not shown it (never loaded, or unloaded
    /// since).
    NotLoaded {
        /// The tool's qualified name.
        name: String,
    },
    /// The tool's definition changed since this conversation was shown it: it must be loaded
    /// again, so that the model sees what it would run.
    Changed {
        /// The tool's qualified name.
        name: String,
    },
    /// The policy does not let this subject use the tool.
    Forbidden {
        /// The tool's qualified name.
        name: String,
        /// The rule that denied it.
        rule: Rule,
    },
    /// The arguments do not match the tool's input schema.
    InvalidArguments {
        /// The tool's qualified name.
        name: String,
        /// What is wrong, for the model.
        problems: String,
    },
    /// The tool is new or its definition changed since an operator approved it: it waits in
    /// quarantine, neither searchable nor callable, until it is approved.
    Quarantined {
        /// The tool's qualified name.
        name: String,
    },
    /// The tool's input schema does not compile, so no arguments can be checked.
    BadSchema {
        /// The tool's qualified name.
        name: String,
        /// Why it does not compile.
        problem: String,
    },
}

impl Denial {
    /// A short word for the reason, for logs and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Denial::Unknown { .. } => "unknown",
            Denial::NotLoaded { .. } => "not_loaded",
            Denial::Changed { .. } => "changed",
            Denial::Forbidden { .. } => "forbidden",
            Denial::InvalidArguments { .. } => "invalid_arguments",
            Denial::Quarantined { .. } => "quarantined",
            Denial::BadSchema { .. } => "bad_schema",
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::Unknown { name } => write!(
                f,
                "no tool is named `{name}`; find the right name with tool_search (keywords, or select:NAME)"
            ),
            Denial::NotLoaded { name } => write!(
                f,
                "tool `{name}` is not loaded; load it first with tool_search {{\"query\": \"select:{name}\"}}, then call it"
            ),
            Denial::Changed { name } => write!(
                f,
                "the definition of tool `{name}` changed since it was loaded, so it was not called; load it \
                 again with tool_search {{\"query\": \"select:{name}\"}}, read the new definition, then call it"
            ),
            Denial::Forbidden { name, .. } => write!(
                f,
                "tool `{name}` is not available to you; do not retry it, use another tool or ask the user"
            ),
            Denial::InvalidArguments { problems, .. } => f.write_str(problems),
            Denial::Quarantined { name } => write!(
                f,
                "tool `{name}` is held for review: it is new or its definition changed since an operator \
                 approved it; do not retry it, use another tool or ask the user"
            ),
            Denial::BadSchema { name, problem } => write!(
                f,
                "tool `{name}` cannot be called: its input schema is invalid ({problem}), so its arguments \
                 cannot be checked; use another tool or ask the user"
            ),
        }
    }
}

/// The gate's answer.
#[derive(Debug, Clone)]
pub enum Decision<'a> {
    /// The call may be forwarded to this tool.
    Allow(&'a Tool),
    /// The call is refused; the upstream must not see it.
    Deny(Denial),
}

impl Decision<'_> {
    /// Whether the call may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }
}
