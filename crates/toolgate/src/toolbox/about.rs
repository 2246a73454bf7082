//! about: what a toolbox is, for a host that reports it or renders around it: whom it decides
//! for, what it hides, whether it defers, its ranker, exposure and meta-tools, and what a full
//! load would cost. A view with no state of its own ([`Toolbox::about`]).

use super::Toolbox;
use crate::catalog::Tool;
use crate::config::Exposure;
use crate::policy::{AuditEvent, Subject};
use crate::search::Strategy;
use crate::tokens::TokenCounter;

/// What a toolbox is ([`Toolbox::about`]).
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    toolbox: &'a Toolbox,
}

impl Toolbox {
    /// What this toolbox is: its subject, what it hides, its deferral, ranker and exposure.
    pub fn about(&self) -> About<'_> {
        About { toolbox: self }
    }
}

impl<'a> About<'a> {
    /// Who the toolbox decides for.
    pub fn subject(&self) -> &'a Subject {
        self.toolbox.policy.subject()
    }

    /// One audit event per tool the policy hides from this subject.
    pub fn hidden(&self) -> &'a [AuditEvent] {
        &self.toolbox.hidden
    }

    /// Whether tools are deferred (and `tool_search` is offered).
    pub fn defers(&self) -> bool {
        self.toolbox.deferral.enabled()
    }

    /// The ranker of `tool_search` (`lexical` if a `bert` model could not index the tools;
    /// while the tools are being [indexed](super::Toolbox::is_indexed), the one asked for).
    pub fn strategy(&self) -> Strategy {
        self.toolbox.index.strategy()
    }

    /// The exposure the toolbox renders for.
    pub fn exposure(&self) -> Exposure {
        self.toolbox.exposure
    }

    /// Whether callers present grants ([`ToolboxBuilder::granted`](super::ToolboxBuilder::granted)).
    pub fn is_granted(&self) -> bool {
        self.toolbox.granted
    }

    /// The meta-tools: `tool_search` (when deferring), and `call_tool` in bridge exposure.
    pub fn meta_tools(&self) -> &'a [Tool] {
        &self.toolbox.meta
    }

    /// The tokens of every visible definition (a full load), counted once per toolbox.
    pub fn full_load_tokens(&self) -> usize {
        let toolbox = self.toolbox;
        *toolbox.full_load.get_or_init(|| {
            let counter = TokenCounter::get();
            toolbox.visible.tools().iter().map(|t| counter.definition(t)).sum()
        })
    }

    /// [`About::full_load_tokens`] if it was counted already: counting tokenizes every visible
    /// definition (seconds at 100,000 tools), which a host answering a request does not wait
    /// for.
    pub fn counted_full_load_tokens(&self) -> Option<usize> {
        self.toolbox.full_load.get().copied()
    }

    /// The tokens of `tools`' definitions as a model API receives them: what a tool list of
    /// this toolbox costs. Each definition is counted once and remembered (by qualified name
    /// and definition hash), so that a host may count every list it sends.
    pub fn definitions_tokens<'t>(&self, tools: impl IntoIterator<Item = &'t Tool>) -> usize {
        let counter = TokenCounter::get();
        let mut known = self.toolbox.listed_tokens.lock().unwrap_or_else(|e| e.into_inner());
        tools
            .into_iter()
            .map(|tool| match known.get(tool.qualified_name()) {
                Some((hash, tokens)) if *hash == tool.hash() => *tokens,
                _ => {
                    let tokens = counter.definition(tool);
                    known.insert(tool.qualified_name().to_owned(), (tool.hash(), tokens));
                    tokens
                }
            })
            .sum()
    }
}
