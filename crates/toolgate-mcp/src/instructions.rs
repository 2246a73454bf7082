//! instructions: what a client is told about toolgate when it connects (MCP's server
//! instructions): how to load and run tools, the servers still starting, and the announcement
//! of the deferred names, fixed once per session so that they stay byte-identical.

use std::sync::Arc;

use toolgate::config::Exposure;
use toolgate::request::TOOL_SEARCH;

use crate::gateway::{CALL_TOOL, View};
use crate::server::GatewayServer;

impl GatewayServer {
    /// The server instructions, fixed when first asked for once the gateway is ready, so that
    /// they stay byte-identical. Asked for earlier (rmcp reads the server's info for other
    /// requests too), they are written afresh and not kept: instructions fixed while servers
    /// start would announce their tools as missing for the whole session.
    pub(crate) fn fixed_instructions(&self) -> Arc<str> {
        if let Some(fixed) = &self.state().instructions {
            return fixed.clone();
        }
        if !self.gateway().is_ready() {
            return self.draft_instructions();
        }
        // Written without holding the state: they read the session's subject.
        let fresh = self.instructions();
        self.state().instructions.get_or_insert(fresh).clone()
    }

    /// What the client is told about this server when it connects: how to load tools and the
    /// announcement of the deferred names (the `<available-deferred-tools>` that `tool_search`
    /// refers to).
    fn instructions(&self) -> Arc<str> {
        let view = self.view();
        // The conversation takes the toolbox's announcement, so that both say the same.
        let announcement = view.toolbox.announcement(&mut self.state().conversation);
        view.instructions
            .get_or_init(|| Self::write_instructions(&view, self.exposure(), &announcement))
            .clone()
    }

    /// The instructions as they would read now, without fixing this session's announcement.
    fn draft_instructions(&self) -> Arc<str> {
        let view = self.view();
        let mut scratch = view.toolbox.conversation();
        let announcement = view.toolbox.announcement(&mut scratch);
        Self::write_instructions(&view, self.exposure(), &announcement)
    }

    fn write_instructions(view: &View, exposure: Exposure, announcement: &str) -> Arc<str> {
        let toolbox = &view.toolbox;
        let servers = toolbox.visible().servers();
        let mut out = format!(
            "toolgate gateway: {} tools from {} servers. Most tools are not listed until you load them: \
             call {TOOL_SEARCH} with keywords (any language), a server prefix such as \"github__\", or \
             select:NAME, and the tools it finds become callable.",
            toolbox.visible().len(),
            servers.len()
        );
        if exposure == Exposure::Bridge {
            out.push_str(&format!(" Run a loaded tool with {CALL_TOOL} {{\"name\", \"arguments\"}}."));
        }
        if !toolbox.pending().is_empty() {
            out.push_str(&format!(
                " Still connecting (search again later for their tools): {}.",
                toolbox.pending().join(", ")
            ));
        }
        if !announcement.is_empty() {
            out.push('\n');
            out.push_str(announcement);
        }
        Arc::from(out)
    }
}
