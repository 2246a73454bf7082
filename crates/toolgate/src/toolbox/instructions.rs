//! instructions: what a host tells a client about its tools when it connects (MCP's server
//! instructions, or a system prompt): how to load and run tools, the servers still starting,
//! and the announcement of the deferred names. Written once per toolbox and shared by every
//! conversation that fixes it, so that a large announcement is held once, not per session.

use std::sync::Arc;

use super::{CALL_TOOL, Conversation, Toolbox};
use crate::config::Exposure;
use crate::request::TOOL_SEARCH;
use crate::tokens::TokenCounter;

impl Toolbox {
    /// The instructions for `conversation`, with the announcement it fixes (so that both say
    /// the same); the text is written once per toolbox.
    pub fn instructions(&self, conversation: &mut Conversation) -> Arc<str> {
        let announcement = self.announcement(conversation);
        self.instructions.get_or_init(|| self.write_instructions(&announcement)).clone()
    }

    /// The instructions as they would read now, without fixing any conversation's
    /// announcement (nor keeping the text).
    pub fn draft_instructions(&self) -> Arc<str> {
        let mut scratch = self.conversation();
        let announcement = self.announcement(&mut scratch);
        self.write_instructions(&announcement)
    }

    /// The tokens of every visible definition (a full load), counted once.
    pub fn full_load_tokens(&self) -> usize {
        *self.full_load.get_or_init(|| {
            let counter = TokenCounter::get();
            self.visible.tools().iter().map(|t| counter.definition(t)).sum()
        })
    }

    fn write_instructions(&self, announcement: &str) -> Arc<str> {
        let servers = self.visible.servers();
        let mut out = format!(
            "toolgate gateway: {} tools from {} servers. Most tools are not listed until you load them: \
             call {TOOL_SEARCH} with keywords (any language), a server prefix such as \"github__\", or \
             select:NAME, and the tools it finds become callable.",
            self.visible.len(),
            servers.len()
        );
        if self.exposure == Exposure::Bridge {
            out.push_str(&format!(" Run a loaded tool with {CALL_TOOL} {{\"name\", \"arguments\"}}."));
        }
        if !self.starting.is_empty() {
            out.push_str(&format!(
                " Still connecting (search again later for their tools): {}.",
                self.starting.join(", ")
            ));
        }
        if !announcement.is_empty() {
            out.push('\n');
            out.push_str(announcement);
        }
        Arc::from(out)
    }
}
