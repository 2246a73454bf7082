//! granted: the toolbox's side of [grants](crate::grant), for callers the host keeps no
//! conversation for: a search that hands them out, a call that presents one, and the bridge's
//! `call_tool` that takes it.

use serde_json::{Value, json};

use super::{BadSearch, CALL_TOOL, Conversation, SearchOutcome, Shown, Toolbox};
use crate::catalog::Tool;
use crate::grant::{GrantKey, GrantProblem};
use crate::request;

impl Toolbox {
    /// [`Toolbox::tool_search`] for a caller the host keeps no conversation for: the outcome
    /// carries a grant for every tool the search made callable ([`Toolbox::grants`]), in the
    /// text the model reads and in the JSON.
    pub fn tool_search_granted<'a>(
        &'a self,
        conversation: &mut Conversation,
        arguments: &Value,
        key: &GrantKey,
        now: std::time::SystemTime,
    ) -> Result<SearchOutcome<'a>, BadSearch> {
        let mut outcome = self.tool_search(conversation, arguments)?;
        outcome.grants = self.grants(conversation, key, now);
        Ok(outcome)
    }

    /// Takes in a grant (a [`GrantKey`] signed it) a caller with no conversation on the host presents with
    /// a call of `name`: when it holds for this subject and the tool's current definition, the
    /// tool counts as shown in `conversation` (and, deferred, as loaded), so that
    /// [`Toolbox::check`] then decides the call as for any session. A grant for an earlier
    /// definition leaves the tool shown in that earlier one ([`Denial::Changed`](super::Denial::Changed) at the check);
    /// any other problem admits nothing ([`Denial::NotLoaded`](super::Denial::NotLoaded)). Names no visible tool: `Ok`,
    /// and the check says why.
    pub fn admit(
        &self,
        conversation: &mut Conversation,
        key: &GrantKey,
        name: &str,
        grant: &str,
        now: std::time::SystemTime,
    ) -> Result<(), GrantProblem> {
        self.resume(conversation);
        let Ok(id) = self.resolve(name) else {
            return Ok(());
        };
        let tool = self.visible.tool(id);
        let qualified = tool.qualified_name();
        let shown = match key.verify(grant, self.policy.subject(), tool, now) {
            Ok(()) => Shown::of(tool),
            Err(GrantProblem::Changed) => Shown::earlier(tool),
            Err(problem) => return Err(problem),
        };
        let current = shown.is(tool);
        conversation.shown.insert(qualified.to_owned(), shown);
        if current && self.deferral.is_deferred(id) && !conversation.active.is_active(qualified) {
            conversation.active.activate([qualified]);
            conversation.recency.touch(qualified);
        }
        if current { Ok(()) } else { Err(GrantProblem::Changed) }
    }

    /// A grant ([`GrantKey`]) for every tool `conversation` may call now (shown in its current
    /// definition and, deferred, loaded), by qualified name in activation order: what a caller
    /// with no conversation on the host presents with its calls.
    pub fn grants(
        &self,
        conversation: &Conversation,
        key: &GrantKey,
        now: std::time::SystemTime,
    ) -> Vec<(String, String)> {
        let mut names: Vec<&str> = conversation.active.active().iter().map(String::as_str).collect();
        let mut core: Vec<&str> = conversation
            .shown
            .keys()
            .map(String::as_str)
            .filter(|n| self.visible.get(n).is_some_and(|id| !self.deferral.is_deferred(id)))
            .collect();
        core.sort_unstable();
        names.extend(core);
        names
            .into_iter()
            .filter_map(|name| self.visible.get(name).map(|id| self.visible.tool(id)))
            .filter(|tool| conversation.was_shown(tool))
            .map(|tool| (tool.qualified_name().to_owned(), key.grant(self.policy.subject(), tool, now)))
            .collect()
    }
}

/// The bridge meta-tool of a toolbox whose callers present grants
/// ([`ToolboxBuilder::granted`]): `call_tool {name, arguments, grant}`.
pub(super) fn call_tool_tool() -> Tool {
    Tool::meta(
        CALL_TOOL,
        &format!(
            "Run a tool loaded with {}. Load it first (tool_search returns its name, input schema \
             and grant), then call call_tool with that name, arguments matching the schema, and \
             the grant exactly as tool_search gave it.",
            request::TOOL_SEARCH
        ),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name as tool_search returned it."},
                "arguments": {"type": "object", "description": "The tool's arguments, matching its input schema."},
                "grant": {"type": "string", "description": "The tool's grant as tool_search returned it."}
            },
            "required": ["name", "grant"],
            "additionalProperties": false
        }),
    )
}
