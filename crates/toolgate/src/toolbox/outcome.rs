//! outcome: what one `tool_search` call did, as the model reads it and as JSON: the one type
//! of a search's result in a conversation, and the one writer of its text.

use serde_json::{Value, json};

use super::{CALL_TOOL, Toolbox};
use crate::budget::Unload;
use crate::catalog::Tool;
use crate::config::Exposure;
use crate::policy::AuditEvent;
use crate::session::{ALREADY_LOADED, LOADED_HEADER, Sorted};

/// What one `tool_search` call did, from the index's hits to what the model reads: the one
/// type of a search's result, and the one writer of its text ([`SearchOutcome::text`]) and its
/// JSON ([`SearchOutcome::to_json`]).
#[derive(Debug)]
pub struct SearchOutcome<'a> {
    toolbox: &'a Toolbox,
    /// The query as given.
    pub query: String,
    /// The hits as the conversation sorted them.
    sorted: Sorted,
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
    /// The outcome of searching `query` in `toolbox`: the hits as the conversation sorted them,
    /// then what the budgets unloaded and what had changed.
    pub(crate) fn new(
        toolbox: &'a Toolbox,
        query: String,
        sorted: Sorted,
        unloaded: Vec<Unload>,
        changed: Vec<String>,
    ) -> SearchOutcome<'a> {
        SearchOutcome { toolbox, query, sorted, unloaded, changed, grants: Vec::new() }
    }

    /// The tools this call loaded, best first.
    pub fn loaded(&self) -> impl Iterator<Item = &'a Tool> + '_ {
        let catalog = &self.toolbox.visible;
        self.sorted.loaded().map(move |id| catalog.tool(id))
    }

    /// Every tool the query found, best first (loaded now or before, or found below the cut).
    pub fn matches(&self) -> impl Iterator<Item = &'a Tool> + '_ {
        let catalog = &self.toolbox.visible;
        self.sorted.matches.iter().map(move |h| catalog.tool(h.tool))
    }

    /// The tools found that were loaded (or core) before this call.
    pub fn already_loaded(&self) -> impl Iterator<Item = &'a Tool> + '_ {
        let catalog = &self.toolbox.visible;
        self.sorted.already_loaded.iter().map(move |&id| catalog.tool(id))
    }

    /// The tools found below the relevance cut: named, not loaded.
    pub fn also_found(&self) -> impl Iterator<Item = &'a Tool> + '_ {
        let catalog = &self.toolbox.visible;
        self.sorted.also_found.iter().map(move |&id| catalog.tool(id))
    }

    /// Whether the search found tools and none fits the request closely enough to load
    /// (`docs/ranking.md`, "Nothing fits"): nothing was loaded, and the matches are only the
    /// nearest.
    pub fn nothing_fits(&self) -> bool {
        self.sorted.nothing_fits
    }

    /// Query terms that matched no tool (or named a tool this subject may not see).
    pub fn unmatched_terms(&self) -> &[String] {
        &self.sorted.unmatched_terms
    }

    /// Servers still connecting, whose tools could not be searched yet.
    pub fn starting_servers(&self) -> &'a [String] {
        &self.toolbox.starting
    }

    /// The result as the model reads it: what was loaded and how to call it (directly, or in
    /// bridge exposure with `call_tool`), what was loaded before or found below the cut, what
    /// was unloaded or changed, the servers still starting or failed, and in bridge exposure
    /// the input schemas.
    pub fn text(&self) -> String {
        let bridge = self.toolbox.exposure == Exposure::Bridge;
        let names = |tools: &mut dyn Iterator<Item = &'a Tool>| -> String {
            tools.map(|t| t.qualified_name()).collect::<Vec<_>>().join(", ")
        };
        let mut text = String::new();
        if !self.changed.is_empty() {
            text.push_str(&format!(
                "Definitions changed since you loaded them, so these tools were unloaded; load them \
                 again before calling them: {}\n",
                self.changed.join(", ")
            ));
        }
        // First, so that a search that found nothing is never read as "no such tool" while
        // the server that has it is still starting.
        let starting = self.starting_servers();
        if !starting.is_empty() {
            text.push_str(&format!(
                "Servers still starting, so their tools are not searchable yet: {}. Search again in a \
                 few seconds before concluding that a tool does not exist.\n",
                starting.join(", ")
            ));
        }
        if self.sorted.nothing_fits {
            text.push_str(&format!(
                "Nothing in the catalog fits \"{}\" closely, so no tool was loaded. If one of the \
                 nearest below does what you need, load it with select:NAME; otherwise no tool \
                 here does this.\n",
                self.query
            ));
        }
        let loaded: Vec<&Tool> = self.loaded().collect();
        if !loaded.is_empty() {
            let s = if loaded.len() == 1 { "" } else { "s" };
            let then = if bridge {
                "run with call_tool on your next step"
            } else {
                "call directly on your next step"
            };
            text.push_str(&format!("{LOADED_HEADER}{} tool{s}; {then}:\n", loaded.len()));
            for t in &loaded {
                text.push_str(&format!("- {}: {}\n", t.qualified_name(), t.short_description(200)));
            }
        }
        if !self.sorted.already_loaded.is_empty() {
            text.push_str(&format!("{ALREADY_LOADED}{}\n", names(&mut self.already_loaded())));
        }
        if !self.sorted.also_found.is_empty() {
            let what = if self.sorted.nothing_fits {
                "Nearest, not loaded"
            } else {
                "Also found, less relevant, not loaded (load one with select:NAME)"
            };
            text.push_str(&format!("{what}: {}\n", names(&mut self.also_found())));
        }
        if self.sorted.matches.is_empty() {
            text.push_str(&format!(
                "No tools matched \"{}\". Try other keywords, a server prefix such as \"github__\", or \
                 select:NAME with a name from <available-deferred-tools>.\n",
                self.query
            ));
        }
        if !self.sorted.unmatched_terms.is_empty() {
            text.push_str(&format!(
                "Terms that matched no tool: {}\n",
                self.sorted.unmatched_terms.join(", ")
            ));
        }
        text.truncate(text.trim_end().len());
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
        if bridge && !self.sorted.matches.is_empty() {
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
        let failed: Vec<Value> = self
            .toolbox
            .failed
            .iter()
            .map(|(s, why)| json!({"server": s, "reason": one_line(why)}))
            .collect();
        let mut out = json!({
            "message": self.text(),
            "query": self.query,
            "matches": names(&mut self.matches()),
            "loaded": names(&mut self.loaded()),
            "already_loaded": names(&mut self.already_loaded()),
            "also_found": names(&mut self.also_found()),
            "unmatched_terms": self.sorted.unmatched_terms,
            "nothing_fits": self.sorted.nothing_fits,
            "pending_servers": self.starting_servers(),
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
