//! outcome: what one `tool_search` call did, as the model reads it and as JSON.

use serde_json::{Value, json};

use super::{CALL_TOOL, Toolbox};
use crate::budget::Unload;
use crate::catalog::Tool;
use crate::config::Exposure;
use crate::policy::AuditEvent;
use crate::session::SearchResult;

/// What one `tool_search` call did.
#[derive(Debug)]
pub struct SearchOutcome<'a> {
    pub(super) toolbox: &'a Toolbox,
    /// The search result: matches, what was already loaded, unmatched terms, servers still starting.
    pub result: SearchResult,
    /// Tools unloaded to stay within the budgets, least recently used first.
    pub unloaded: Vec<Unload>,
    /// Loaded tools whose definitions changed since they were shown; they were unloaded and
    /// must be loaded again.
    pub changed: Vec<String>,
    /// A grant for each tool the search made callable, by name, when the caller has no
    /// conversation on the host ([`Grants::tool_search`](super::Grants::tool_search)); empty otherwise.
    pub grants: Vec<(String, String)>,
}

impl<'a> SearchOutcome<'a> {
    /// The tools this call loaded, best first.
    pub fn loaded(&self) -> impl Iterator<Item = &'a Tool> + '_ {
        self.result.loaded().map(|id| self.toolbox.visible.tool(id))
    }

    /// Every tool the query found, best first.
    pub fn matches(&self) -> impl Iterator<Item = &'a Tool> + '_ {
        self.result.matches.iter().map(|h| self.toolbox.visible.tool(h.tool))
    }

    /// The result as the model reads it: what was loaded and how to call it, what was unloaded
    /// or changed, and in bridge exposure the input schemas.
    pub fn text(&self) -> String {
        let catalog = &self.toolbox.visible;
        let mut text = String::new();
        if !self.changed.is_empty() {
            text.push_str(&format!(
                "Definitions changed since you loaded them, so these tools were unloaded; load them \
                 again before calling them: {}\n",
                self.changed.join(", ")
            ));
        }
        text.push_str(&self.result.render_for(catalog, self.toolbox.exposure == Exposure::Bridge));
        if !self.toolbox.failed.is_empty() {
            let failed: Vec<String> =
                self.toolbox.failed.iter().map(|(s, why)| format!("{s} ({})", one_line(why))).collect();
            text.push_str(&format!(
                "\nServers that failed (their tools cannot be searched or called): {}",
                failed.join("; ")
            ));
        }
        let notice = crate::budget::notice(&self.unloaded);
        if !notice.is_empty() {
            text.push('\n');
            text.push_str(&notice);
        }
        if self.toolbox.exposure == Exposure::Bridge && !self.result.matches.is_empty() {
            if self.toolbox.granted {
                text.push_str(&format!(
                    "\n\nInput schemas; run a tool with {CALL_TOOL} {{\"name\": NAME, \"grant\": GRANT, \"arguments\": {{...}}}}, \
                     its grant exactly as below:\n"
                ));
            } else {
                text.push_str(&format!(
                    "\n\nInput schemas; run a tool with {CALL_TOOL} {{\"name\": NAME, \"arguments\": {{...}}}}:\n"
                ));
            }
            for tool in self.matches() {
                text.push_str(&format!("- {}: {}\n", tool.qualified_name(), tool.input_schema()));
                if let Some((_, grant)) = self.grants.iter().find(|(name, _)| name == tool.qualified_name()) {
                    text.push_str(&format!("  grant: {grant}\n"));
                }
            }
            text.truncate(text.trim_end().len());
        } else if !self.grants.is_empty() {
            text.push_str("\n\nGrants, to pass with each call of these tools:\n");
            for (name, grant) in &self.grants {
                text.push_str(&format!("- {name}: {grant}\n"));
            }
            text.truncate(text.trim_end().len());
        }
        text
    }

    /// The result as a JSON object: the names of each part, the servers still starting or
    /// failed, and `message`, the text the model reads ([`SearchOutcome::text`]), so that a
    /// client that shows the model this object instead of the text loses nothing; in bridge
    /// exposure `schemas` too, each match's input schema by name, and, for a caller with no
    /// conversation on the host, `grants` by name.
    pub fn to_json(&self) -> Value {
        let names = |tools: &mut dyn Iterator<Item = &'a Tool>| -> Vec<String> {
            tools.map(|t| t.qualified_name().to_owned()).collect()
        };
        let catalog = &self.toolbox.visible;
        let failed: Vec<Value> = self
            .toolbox
            .failed
            .iter()
            .map(|(s, why)| json!({"server": s, "reason": one_line(why)}))
            .collect();
        let mut out = json!({
            "message": self.text(),
            "query": self.result.query,
            "matches": names(&mut self.matches()),
            "loaded": names(&mut self.loaded()),
            "already_loaded": names(&mut self.result.already_loaded.iter().map(|&id| catalog.tool(id))),
            "also_found": names(&mut self.result.also_found.iter().map(|&id| catalog.tool(id))),
            "unmatched_terms": self.result.unmatched_terms,
            "pending_servers": self.result.starting_servers,
            "reconnecting_servers": self.toolbox.reconnecting,
            "unloaded": self.unloaded.iter().map(|e| e.tool.as_str()).collect::<Vec<_>>(),
            "changed": self.changed,
            "failed_servers": failed,
        });
        if self.toolbox.exposure == Exposure::Bridge {
            let schemas: serde_json::Map<String, Value> =
                self.matches().map(|t| (t.qualified_name().to_owned(), t.input_schema().clone())).collect();
            out["schemas"] = Value::Object(schemas);
        }
        if !self.grants.is_empty() {
            let grants: serde_json::Map<String, Value> = self
                .grants
                .iter()
                .map(|(name, grant)| (name.clone(), Value::String(grant.clone())))
                .collect();
            out["grants"] = Value::Object(grants);
        }
        out
    }

    /// The audit events of this call: one per unloaded tool.
    pub fn audit(&self) -> Vec<AuditEvent> {
        self.unloaded.iter().map(|e| e.audit(&self.toolbox.policy)).collect()
    }
}

/// `text` on one line, at most 200 characters.
fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
