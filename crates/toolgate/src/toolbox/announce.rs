//! announce: how a conversation learns the deferred names: the announcement it fixes once,
//! and the news `tool_search` carries of tools that became loadable after it was fixed.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::{Briefing, Conversation, Toolbox};
use crate::catalog::Tool;
use crate::request;

impl<'a> Briefing<'a> {
    /// How the model learns the deferred names: one block, the names grouped by server,
    /// bounded by 12 KiB whatever the
    /// catalog (past it, servers with their tool counts). Fixed the first time it is asked for
    /// in a conversation, so it stays byte-identical. Empty when nothing is deferred.
    pub fn announcement(&self, conversation: &mut Conversation) -> Arc<str> {
        if let Some(fixed) = &conversation.announcement {
            return fixed.clone();
        }
        let text = self.current_announcement();
        conversation.announcement.get_or_insert_with(|| text.clone()).clone()
    }

    /// The toolbox's announcement, rendered once for every conversation.
    pub(super) fn current_announcement(&self) -> &'a Arc<str> {
        let toolbox = self.toolbox;
        toolbox.announced.get_or_init(|| {
            let names = request::deferred_names(&toolbox.visible, &toolbox.deferral);
            if names.is_empty() {
                Arc::from("")
            } else {
                Arc::from(request::grouped_announcement(names, request::ANNOUNCEMENT_BUDGET))
            }
        })
    }
}

impl Toolbox {
    /// `tool_search` with the deferred names the conversation's fixed announcement does not
    /// tell of (servers that finished starting after it was written), if there are any.
    pub(super) fn news(&self, conversation: &Conversation) -> Option<Tool> {
        let text = conversation.announcement.as_ref()?;
        let now = self.briefing().current_announcement();
        if Arc::ptr_eq(now, text) || now == text {
            return None;
        }
        let key = {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut h);
            h.finish()
        };
        let mut cache = self.news.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(key)
            .or_insert_with(|| {
                let told = request::Told::read(text);
                let visible = &self.visible;
                let late = visible
                    .ids()
                    .filter(|&id| self.deferral.is_deferred(id))
                    .map(|id| visible.tool(id).qualified_name())
                    .filter(|name| !told.covers(name));
                request::tool_search_with_news(self.exposure, late)
            })
            .clone()
    }
}
