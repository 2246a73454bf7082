//! sub_agent: a sub-agent's toolbox and conversation, derived from its parent's.

use super::{Conversation, Shown, Toolbox};
use crate::defer::{DeferConfig, DeferMode};
use crate::policy::{AuditEvent, Policy, PolicyError};

impl Toolbox {
    /// A sub-agent's conversation: a toolbox of `child` (a [`Policy::child`]) over the same
    /// snapshot and settings, and a conversation that inherits the activations of `parent`
    /// that the child's policy allows (each one it does not is an audit event).
    pub fn sub_agent(
        &self,
        child: Policy,
        parent: &Conversation,
    ) -> Result<(Toolbox, Conversation, Vec<AuditEvent>), PolicyError> {
        let toolbox = Toolbox::builder(&self.catalog, child)
            .defer(DeferConfig {
                mode: if self.deferral.enabled() { DeferMode::On } else { DeferMode::Off },
                ..DeferConfig::default()
            })
            .exposure(self.exposure)
            .index(self.index_builder.clone())
            .starting(self.starting.clone())
            .reconnecting(self.reconnecting.clone())
            .failed(self.failed.clone())
            .validators(self.validators.clone())
            .granted(self.granted)
            .build()?;
        let (inherited, audit) = toolbox.policy.inherit(&parent.active, &self.visible);
        let mut conversation = toolbox.conversation();
        for name in inherited.active() {
            if let Some(id) = toolbox.visible.get(name) {
                let tool = toolbox.visible.tool(id);
                conversation.active.activate([name.as_str()]);
                conversation.recency.touch(name);
                if parent.was_shown(tool) {
                    conversation.shown.insert(name.clone(), Shown::of(tool));
                }
            }
        }
        Ok((toolbox, conversation, audit))
    }
}
