//! Required tools and the first turn: pins and every visible tool of a server whose mode is not
//! `auto` take budget first, and a required set that does not fit is a configuration error
//! (EthanKit's `McpToolSelectionError`), never a silent drop.

use std::collections::BTreeMap;
use std::fmt;

use super::Policy;
use crate::catalog::{Catalog, ToolId};
use crate::config::ServerMode;
use crate::defer::Deferral;
use crate::preselect::{Candidate, PreselectParams, Preselection, preselect};

/// A policy that cannot be applied as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyError {
    /// `--profile` or a sub-agent named a profile that is not configured.
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The configured profiles, sorted.
        known: Vec<String>,
    },
    /// A server's required tools (pins, or every visible tool with `mode = "all"` or
    /// `"allowlist"`) exceed its `max_active`.
    RequiredOverBudget {
        /// The server.
        server: String,
        /// Its required tools.
        required: usize,
        /// Its `max_active`.
        limit: usize,
    },
    /// Core tools and meta-tools alone exceed `[budget] first_turn`.
    FixedOverFirstTurn {
        /// Core tools (built-ins, always-load) plus meta-tools.
        fixed: usize,
        /// `[budget] first_turn`.
        limit: usize,
    },
    /// Required tools do not fit in `[budget] first_turn` beside the core tools and
    /// meta-tools.
    RequiredOverFirstTurn {
        /// Required tools over every server.
        required: usize,
        /// Core tools plus meta-tools.
        fixed: usize,
        /// `[budget] first_turn`.
        limit: usize,
    },
    /// Budgets out of the order `1 <= first_turn <= dynamic <= hard` ([`Policy::builder`]).
    BudgetOrder {
        /// Definitions in the first request.
        first_turn: usize,
        /// Definitions once tools load.
        dynamic: usize,
        /// The limit never exceeded.
        hard: usize,
    },
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::UnknownProfile { name, known } if known.is_empty() => {
                write!(f, "unknown profile `{name}`: no [profiles] are configured")
            }
            PolicyError::UnknownProfile { name, known } => {
                write!(f, "unknown profile `{name}` (configured: {})", known.join(", "))
            }
            PolicyError::RequiredOverBudget { server, required, limit } => write!(
                f,
                "server `{server}`: {required} required tools (pinned or mode=all) exceed max_active {limit}; \
                 pin fewer tools, narrow `allowed`, or use mode = \"auto\""
            ),
            PolicyError::FixedOverFirstTurn { fixed, limit } => write!(
                f,
                "{fixed} core tools and meta-tools exceed the first-turn budget of {limit} definitions; \
                 defer built-in tools, drop always_load, or raise [budget] first_turn"
            ),
            PolicyError::RequiredOverFirstTurn { required, fixed, limit } => write!(
                f,
                "{required} required tools (pinned or mode=all) and {fixed} core tools and meta-tools \
                 exceed the first-turn budget of {limit} definitions; pin fewer tools, narrow `allowed`, \
                 use mode = \"auto\", or raise [budget] first_turn"
            ),
            PolicyError::BudgetOrder { first_turn, dynamic, hard } => write!(
                f,
                "budgets out of order (first_turn = {first_turn}, dynamic = {dynamic}, hard = {hard}); \
                 they must satisfy 1 <= first_turn <= dynamic <= hard"
            ),
        }
    }
}

impl std::error::Error for PolicyError {}

/// The tools that take budget first, and what is always sent beside them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Required {
    tools: Vec<ToolId>,
    per_server: BTreeMap<String, usize>,
    fixed: usize,
}

impl Required {
    /// The required deferred tools, by qualified name: activate them before anything else and
    /// never unload them.
    pub fn tools(&self) -> &[ToolId] {
        &self.tools
    }

    /// Required tools of one server (deferred or not).
    pub fn count(&self, server: &str) -> usize {
        self.per_server.get(server).copied().unwrap_or(0)
    }

    /// Definitions sent whatever the session does: core tools plus meta-tools.
    pub fn fixed(&self) -> usize {
        self.fixed
    }

    /// Definitions of the first request before preselection: fixed plus required.
    pub fn definitions(&self) -> usize {
        self.fixed + self.tools.len()
    }
}

impl Policy {
    /// The required tools of `visible` (the catalog [`Policy::filter`] returned) with its
    /// `deferral`; `meta` is the number of meta-tools in the list (`tool_search`, and
    /// `call_tool` in bridge exposure; 0 when deferral is off). With deferral off every visible
    /// tool is sent, so every one counts as fixed.
    ///
    /// Fails when a server's required tools exceed its `max_active`, when core and meta-tools
    /// exceed `[budget] first_turn`, or when the required tools do not fit beside them.
    pub fn required(
        &self,
        visible: &Catalog,
        deferral: &Deferral,
        meta: usize,
    ) -> Result<Required, PolicyError> {
        let fixed = visible.ids().filter(|&id| !deferral.is_deferred(id)).count() + meta;
        // Every required tool counts against its server's max_active, also one a host sends as
        // core (a pin wired as always-load); only the deferred ones need activating.
        let mut all: Vec<ToolId> = visible
            .ids()
            .filter(|&id| {
                let t = visible.tool(id);
                self.mode(t.server()) != ServerMode::Auto || self.is_pinned(t)
            })
            .collect();
        all.sort_by(|&a, &b| visible.tool(a).qualified_name().cmp(visible.tool(b).qualified_name()));
        let mut per_server: BTreeMap<String, usize> = BTreeMap::new();
        for &id in &all {
            *per_server.entry(visible.tool(id).server().to_owned()).or_default() += 1;
        }
        for (server, &required) in &per_server {
            let limit = self.max_active(server);
            if required > limit {
                return Err(PolicyError::RequiredOverBudget { server: server.clone(), required, limit });
            }
        }
        let tools: Vec<ToolId> = all.iter().copied().filter(|&id| deferral.is_deferred(id)).collect();
        let other_fixed = fixed - (all.len() - tools.len());
        let limit = self.budget.first_turn;
        if other_fixed > limit {
            return Err(PolicyError::FixedOverFirstTurn { fixed: other_fixed, limit });
        }
        if fixed + tools.len() > limit {
            return Err(PolicyError::RequiredOverFirstTurn {
                required: all.len(),
                fixed: other_fixed,
                limit,
            });
        }
        Ok(Required { tools, per_server, fixed })
    }

    /// The first turn's working set (EthanKit's steps 2–3, docs/policy.md): the required tools, then the best
    /// ranked deferred tools of `auto` servers, so that each server has at most
    /// the fairness cap (12 per server) (or its stricter `max_active`), its required tools included, all within `[budget] first_turn` counting core
    /// tools and `meta` meta-tools. Deterministic for the same inputs.
    ///
    pub fn first_turn(
        &self,
        visible: &Catalog,
        deferral: &Deferral,
        meta: usize,
        user_message: &str,
        system_prompt: &str,
    ) -> Result<Preselection, PolicyError> {
        let required = self.required(visible, deferral, meta)?;
        let candidates: Vec<Candidate<'_>> = visible
            .ids()
            .filter(|&id| deferral.is_deferred(id) && !required.tools.contains(&id))
            .map(|id| (id, visible.tool(id)))
            .filter(|(_, t)| self.mode(t.server()) == ServerMode::Auto)
            .map(|(id, tool)| Candidate { id, tool, read_only: self.is_read_only(tool) })
            .collect();
        let mut params = PreselectParams::new(self.budget.first_turn - required.definitions());
        for c in &candidates {
            let server = c.tool.server();
            if !params.room.contains_key(server) {
                // The fairness cap bounds the server's whole first turn, pins included.
                let cap = params.per_server_cap.min(self.max_active(server));
                let room = cap.saturating_sub(required.count(server));
                params.room.insert(server.to_owned(), room);
            }
        }
        let picked = preselect(&candidates, user_message, system_prompt, &params);
        let mut per_server = required.per_server.clone();
        for (server, n) in picked.per_server {
            *per_server.entry(server).or_default() += n;
        }
        let mut chosen = required.tools.clone();
        chosen.extend(picked.chosen);
        Ok(Preselection { chosen, required: required.tools.len(), per_server, scores: picked.scores })
    }
}
