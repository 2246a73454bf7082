//! granted: the toolbox's side of [grants](crate::grant), for callers the host keeps no
//! conversation for: a search that hands them out, a call that presents one, and the bridge's
//! `call_tool` that takes it.

use std::time::SystemTime;

use serde_json::Value;

use super::{BadSearch, Conversation, SearchOutcome, Shown, Toolbox};
use crate::grant::{GrantKey, GrantProblem};

/// A toolbox's side of grants under one key at one moment ([`Toolbox::grants`]), for callers
/// the host keeps no conversation for.
#[derive(Debug, Clone, Copy)]
pub struct Grants<'a> {
    toolbox: &'a Toolbox,
    key: &'a GrantKey,
    now: SystemTime,
}

impl Toolbox {
    /// Grants signed with `key`, valid at `now`: the search that hands them out, the call that
    /// presents one, and the grants a conversation's callable tools carry.
    pub fn grants<'a>(&'a self, key: &'a GrantKey, now: SystemTime) -> Grants<'a> {
        Grants { toolbox: self, key, now }
    }
}

impl<'a> Grants<'a> {
    /// [`Toolbox::tool_search`] for a caller the host keeps no conversation for: the outcome
    /// carries a grant for every tool the search made callable ([`Grants::issue`]), in the
    /// text the model reads and in the JSON.
    pub fn tool_search(
        &self,
        conversation: &mut Conversation,
        arguments: &Value,
    ) -> Result<SearchOutcome<'a>, BadSearch> {
        let mut outcome = self.toolbox.tool_search(conversation, arguments)?;
        outcome.grants = self.issue(conversation);
        Ok(outcome)
    }

    /// Takes in a grant a caller with no conversation on the host presents with a call of
    /// `name`: when it holds for this subject and the tool's current definition, the tool
    /// counts as shown in `conversation` (and, deferred, as loaded), so that
    /// [`Toolbox::check`] then decides the call as for any session. A grant for an earlier
    /// definition leaves the tool shown in that earlier one ([`Denial::Changed`](super::Denial::Changed) at the check);
    /// any other problem admits nothing ([`Denial::NotLoaded`](super::Denial::NotLoaded)). Names no visible tool: `Ok`,
    /// and the check says why.
    pub fn admit(
        &self,
        conversation: &mut Conversation,
        name: &str,
        grant: &str,
    ) -> Result<(), GrantProblem> {
        let toolbox = self.toolbox;
        toolbox.resume(conversation);
        let Ok(id) = toolbox.resolve(name) else {
            return Ok(());
        };
        let tool = toolbox.visible.tool(id);
        let qualified = tool.qualified_name();
        let shown = match self.key.verify(grant, toolbox.policy.subject(), tool, self.now) {
            Ok(()) => Shown::of(tool),
            Err(GrantProblem::Changed) => Shown::earlier(tool),
            Err(problem) => return Err(problem),
        };
        let current = shown.is(tool);
        conversation.shown.insert(qualified.to_owned(), shown);
        if current && toolbox.deferral.is_deferred(id) && !conversation.active.is_active(qualified) {
            conversation.active.activate([qualified]);
            conversation.recency.touch(qualified);
        }
        if current { Ok(()) } else { Err(GrantProblem::Changed) }
    }

    /// A grant for every tool `conversation` may call now (shown in its current definition
    /// and, deferred, loaded), by qualified name in activation order: what a caller with no
    /// conversation on the host presents with its calls.
    pub fn issue(&self, conversation: &Conversation) -> Vec<(String, String)> {
        let toolbox = self.toolbox;
        let mut names: Vec<&str> = conversation.active.active().iter().map(String::as_str).collect();
        let mut core: Vec<&str> = conversation
            .shown
            .keys()
            .map(String::as_str)
            .filter(|n| toolbox.visible.get(n).is_some_and(|id| !toolbox.deferral.is_deferred(id)))
            .collect();
        core.sort_unstable();
        names.extend(core);
        names
            .into_iter()
            .filter_map(|name| toolbox.visible.get(name).map(|id| toolbox.visible.tool(id)))
            .filter(|tool| conversation.was_shown(tool))
            .map(|tool| {
                (tool.qualified_name().to_owned(), self.key.grant(toolbox.policy.subject(), tool, self.now))
            })
            .collect()
    }
}
