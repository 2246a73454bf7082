//! instructions: what a host tells a client about its tools when it connects (MCP's server
//! instructions, or a system prompt): how to load and run tools, the servers still starting,
//! and the announcement of the deferred names. Written once per toolbox and shared by every
//! conversation that fixes it, so that a large announcement is held once, not per session.
//! A view with no state of its own ([`Toolbox::briefing`]).

use std::sync::Arc;

use super::{CALL_TOOL, Conversation, Toolbox};
use crate::config::Exposure;
use crate::request::TOOL_SEARCH;

/// What a host tells a client about its tools ([`Toolbox::briefing`]): the instructions and the
/// announcement of the deferred names.
#[derive(Debug, Clone, Copy)]
pub struct Briefing<'a> {
    pub(super) toolbox: &'a Toolbox,
}

impl Toolbox {
    /// What a host tells a client about this toolbox's tools when it connects.
    pub fn briefing(&self) -> Briefing<'_> {
        Briefing { toolbox: self }
    }
}

impl Briefing<'_> {
    /// The instructions for `conversation`, with the announcement it fixes (so that both say
    /// the same); the text is written once per toolbox.
    pub fn instructions(&self, conversation: &mut Conversation) -> Arc<str> {
        let announcement = self.announcement(conversation);
        self.toolbox.instructions.get_or_init(|| self.write_instructions(&announcement)).clone()
    }

    /// The instructions as they would read now, without fixing any conversation's
    /// announcement (nor keeping the text).
    pub fn draft_instructions(&self) -> Arc<str> {
        let mut scratch = self.toolbox.conversation();
        let announcement = self.announcement(&mut scratch);
        self.write_instructions(&announcement)
    }

    fn write_instructions(&self, announcement: &str) -> Arc<str> {
        let toolbox = self.toolbox;
        let servers = toolbox.visible.servers();
        let mut out = format!(
            "toolgate gateway: {} tools from {} servers. Most tools are not listed until you load them: \
             call {TOOL_SEARCH} with keywords (any language), a server prefix such as \"github__\", or \
             select:NAME, and the tools it finds become callable.",
            toolbox.visible.len(),
            servers.len()
        );
        if toolbox.exposure == Exposure::Bridge {
            out.push_str(&format!(" Run a loaded tool with {CALL_TOOL} {{\"name\", \"arguments\"}}."));
        }
        if !toolbox.reconnecting.is_empty() {
            out.push_str(&format!(
                " Starting, with the tools they had last time (a call waits for them): {}.",
                toolbox.reconnecting.join(", ")
            ));
        }
        if !toolbox.starting.is_empty() {
            out.push_str(&format!(
                " Still connecting (search again later for their tools): {}.",
                toolbox.starting.join(", ")
            ));
        }
        if !announcement.is_empty() {
            out.push('\n');
            out.push_str(announcement);
        }
        Arc::from(out)
    }
}
