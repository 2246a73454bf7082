//! gate: here is a call the model made, tell me whether it may run.
//!
//! A call runs only if the tool exists and is core or in this session's active set. Anything
//! else is a [`Decision::Deny`] whose message tells the model how to load the tool, and the
//! caller never forwards it. [`check_policy`] asks the [policy](crate::policy) again at call
//! time, before anything else: a tool hidden from the subject is refused even if a stale
//! active set or a guessed name points at it. Argument checks live at the edge (they need a
//! JSON Schema validator).

use std::fmt;

use crate::catalog::{Catalog, ToolId};
use crate::defer::Deferral;
use crate::policy::{Policy, Rule, Verdict};
use crate::session::Session;

/// Why a call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Denial {
    /// No tool has this name.
    Unknown {
        /// The name the model used.
        name: String,
    },
    /// The tool exists but was never loaded in this session.
    NotLoaded {
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
            Denial::Forbidden { name, .. } => {
                write!(
                    f,
                    "tool `{name}` is not available to you; do not retry it, use another tool or ask the user"
                )
            }
        }
    }
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The call may be forwarded to this tool.
    Allow(ToolId),
    /// The call is refused; the upstream must not see it.
    Deny(Denial),
}

impl Decision {
    /// Whether the call may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }
}

/// Checks a call to `name` (as the model wrote it) in `session`.
pub fn check(catalog: &Catalog, deferral: &Deferral, session: &Session, name: &str) -> Decision {
    let Some(id) = catalog.resolve(name) else {
        return Decision::Deny(Denial::Unknown { name: name.to_owned() });
    };
    let qualified = catalog.tool(id).qualified_name();
    if deferral.is_deferred(id) && !session.is_active(qualified) {
        return Decision::Deny(Denial::NotLoaded { name: qualified.to_owned() });
    }
    Decision::Allow(id)
}

/// Checks a call to `name` for `policy`'s subject: the policy first (over `catalog`, which may
/// be the full catalog or the subject's visible one), then [`check`]. A policy refusal is
/// [`Denial::Forbidden`] with the rule; the model's message does not name the rule, the audit
/// log does ([`Policy::event`] with [`Action::Refused`](crate::policy::Action::Refused)).
pub fn check_policy(
    policy: &Policy,
    catalog: &Catalog,
    deferral: &Deferral,
    session: &Session,
    name: &str,
) -> Decision {
    if let Some(id) = catalog.resolve(name)
        && let Verdict::Deny(rule) = policy.decide(catalog.tool(id))
    {
        return Decision::Deny(Denial::Forbidden {
            name: catalog.tool(id).qualified_name().to_owned(),
            rule,
        });
    }
    check(catalog, deferral, session, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolSpec;
    use crate::defer::{DeferConfig, DeferMode};

    #[test]
    fn only_core_and_active_tools_pass() {
        let mut core = ToolSpec::builtin("Read", "");
        core.always_load = true;
        let cat = Catalog::builder().tool(ToolSpec::mcp("git", "git_log", "")).tool(core).build().unwrap();
        let deferral = Deferral::decide(&cat, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
        let mut s = Session::new();
        assert_eq!(
            check(&cat, &deferral, &s, "git__git_log"),
            Decision::Deny(Denial::NotLoaded { name: "git__git_log".into() })
        );
        assert!(check(&cat, &deferral, &s, "builtin__Read").is_allow());
        s.activate(["git__git_log"]);
        assert_eq!(check(&cat, &deferral, &s, "mcp__git__git_log"), Decision::Allow(ToolId(0)));
        let Decision::Deny(d) = check(&cat, &deferral, &s, "rm_rf") else { panic!("unknown tool passed") };
        assert!(d.to_string().starts_with("no tool is named `rm_rf`"));
        let Decision::Deny(d) = check(&cat, &deferral, &Session::new(), "git__git_log") else {
            unreachable!()
        };
        assert_eq!(
            d.to_string(),
            "tool `git__git_log` is not loaded; load it first with tool_search {\"query\": \"select:git__git_log\"}, then call it"
        );
    }
}
