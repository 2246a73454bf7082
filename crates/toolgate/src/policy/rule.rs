//! Why a tool is hidden, refused or unloaded: the [`Rule`] that decided, the [`Verdict`] of one
//! decision, and the [`AuditEvent`] a host logs for every denial.

use std::fmt;

/// The configuration rule that denied a tool (or unloaded it), naming the exact key and the
/// pattern that matched, so that an administrator can find it in `toolgate.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// `[policy] deny`: the pattern matched the qualified name (or, without `__`, the server).
    GlobalDeny {
        /// The pattern as configured.
        pattern: String,
    },
    /// `[servers.NAME] enabled = false`.
    ServerDisabled {
        /// The server.
        server: String,
    },
    /// `[servers.NAME] denied`: the pattern matched the tool's own name.
    ServerDenied {
        /// The server.
        server: String,
        /// The pattern as configured.
        pattern: String,
    },
    /// `[servers.NAME] allowed` (with `mode = "auto"` or `"allowlist"`): no pattern matched.
    NotAllowlisted {
        /// The server.
        server: String,
    },
    /// `[servers.NAME] side_effects = "read_only"`: the tool has neither `readOnlyHint: true`
    /// nor a match in the server's trusted `read_only` list.
    NotReadOnly {
        /// The server.
        server: String,
    },
    /// `[profiles.NAME] tools`: no pattern matched.
    ProfileTools {
        /// The profile.
        profile: String,
    },
    /// `[profiles.NAME] disallowed_tools`: the pattern matched.
    ProfileDisallowed {
        /// The profile.
        profile: String,
        /// The pattern as configured.
        pattern: String,
    },
    /// `[servers.NAME] max_active`: the server had too many active tools, so the least
    /// recently used was unloaded.
    MaxActive {
        /// The server.
        server: String,
        /// Its `max_active`.
        limit: usize,
    },
    /// `[budget] dynamic`: the tool list was full, so the least recently used tool was
    /// unloaded.
    DynamicBudget {
        /// The dynamic budget (definitions per request).
        limit: usize,
    },
}

impl Rule {
    /// The dotted configuration key of the rule, such as `servers.github.denied`.
    pub fn key(&self) -> String {
        match self {
            Rule::GlobalDeny { .. } => "policy.deny".to_owned(),
            Rule::ServerDisabled { server } => format!("servers.{server}.enabled"),
            Rule::ServerDenied { server, .. } => format!("servers.{server}.denied"),
            Rule::NotAllowlisted { server } => format!("servers.{server}.allowed"),
            Rule::NotReadOnly { server } => format!("servers.{server}.side_effects"),
            Rule::ProfileTools { profile } => format!("profiles.{profile}.tools"),
            Rule::ProfileDisallowed { profile, .. } => format!("profiles.{profile}.disallowed_tools"),
            Rule::MaxActive { server, .. } => format!("servers.{server}.max_active"),
            Rule::DynamicBudget { .. } => "budget.dynamic".to_owned(),
        }
    }

    /// The pattern that matched, for rules decided by one.
    pub fn pattern(&self) -> Option<&str> {
        match self {
            Rule::GlobalDeny { pattern }
            | Rule::ServerDenied { pattern, .. }
            | Rule::ProfileDisallowed { pattern, .. } => Some(pattern),
            _ => None,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.key();
        match self {
            Rule::GlobalDeny { pattern }
            | Rule::ServerDenied { pattern, .. }
            | Rule::ProfileDisallowed { pattern, .. } => write!(f, "{key} {pattern:?}"),
            Rule::ServerDisabled { .. } => write!(f, "{key} = false"),
            Rule::NotAllowlisted { .. } => write!(f, "{key}: no pattern matches"),
            Rule::NotReadOnly { .. } => {
                write!(
                    f,
                    "{key} = \"read_only\": not marked readOnlyHint and not in the trusted read_only list"
                )
            }
            Rule::ProfileTools { .. } => write!(f, "{key}: no pattern matches"),
            Rule::MaxActive { limit, .. } | Rule::DynamicBudget { limit } => write!(f, "{key} = {limit}"),
        }
    }
}

/// What the policy says about one tool for one subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The subject may see and run the tool.
    Allow,
    /// The subject may neither see nor run it; the rule says why.
    Deny(Rule),
}

impl Verdict {
    /// Whether the tool is allowed.
    pub fn is_allow(&self) -> bool {
        matches!(self, Verdict::Allow)
    }

    /// The rule that denied, if any.
    pub fn rule(&self) -> Option<&Rule> {
        match self {
            Verdict::Allow => None,
            Verdict::Deny(rule) => Some(rule),
        }
    }
}

/// What happened to a tool a rule denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Left out of the subject's surface: never announced, indexed, searched or listed.
    Hidden,
    /// A call was refused at the gate.
    Refused,
    /// Unloaded from the active set to stay within a budget.
    Unloaded,
    /// Not carried over from a parent agent's active set to a sub-agent.
    NotInherited,
}

impl Action {
    /// The action as one lower-case word.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Hidden => "hidden",
            Action::Refused => "refused",
            Action::Unloaded => "unloaded",
            Action::NotInherited => "not_inherited",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One denial, for the host's audit log: who, which tool, what was done, and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    /// The subject, as [`Subject`](super::Subject) displays it (`main`, `main/reviewer`).
    pub subject: String,
    /// The tool's qualified name.
    pub tool: String,
    /// The rule that decided.
    pub rule: Rule,
    /// What was done.
    pub action: Action,
}

impl fmt::Display for AuditEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {} by {}", self.subject, self.action, self.tool, self.rule)
    }
}
