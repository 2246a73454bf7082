//! instructions: when a session's server instructions are fixed. The toolbox writes them
//! (`Briefing::instructions`); a session fixes them once the gateway is ready, so that they stay
//! byte-identical.

use std::sync::Arc;

use crate::downstream::server::GatewayServer;

impl GatewayServer {
    /// The server instructions, fixed when first asked for once the gateway is ready, so that
    /// they stay byte-identical. Asked for earlier (rmcp reads the server's info for other
    /// requests too), they are written afresh and not kept: instructions fixed while servers
    /// start would announce their tools as missing for the whole session.
    pub(crate) fn fixed_instructions(&self) -> Arc<str> {
        if let Some(fixed) = self.state().instructions() {
            return fixed;
        }
        if !self.gateway().is_ready() {
            return self.draft_instructions();
        }
        // Written without holding the state: they read the session's subject.
        let fresh = self.instructions();
        self.state().fix_instructions(fresh)
    }

    /// What the client is told about this server when it connects: how to load tools and the
    /// announcement of the deferred names (the `<available-deferred-tools>` that `tool_search`
    /// refers to), written by the session's toolbox.
    fn instructions(&self) -> Arc<str> {
        let view = self.view();
        view.toolbox.briefing().instructions(self.state().conversation_mut())
    }

    /// The instructions as they would read now, without fixing this session's announcement.
    fn draft_instructions(&self) -> Arc<str> {
        self.view().toolbox.briefing().draft_instructions()
    }
}
