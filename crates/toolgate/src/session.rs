//! session: here is one conversation, keep its active set and run its `tool_search` calls.
//!
//! The active set ([`ActiveSet`]) is run-scoped (one per conversation, never global) and keeps
//! activation order, which is the order the tools are appended to the tool list. It can be rebuilt from a
//! transcript: Anthropic `tool_reference` blocks, toolgate's own `tool_search` results, and
//! compaction boundary records that carry the set across a summary.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::catalog::{Catalog, ToolId};
use crate::defer::Deferral;
use crate::search::{Found, Hit, Index, Request};

/// The first line of a `tool_search` result that loaded tools.
pub(crate) const LOADED_HEADER: &str = "Loaded ";
/// The line that names tools already loaded.
pub const ALREADY_LOADED: &str = "Already loaded — call it directly: ";

/// One conversation's active set, in activation order (kept by a
/// [`Conversation`](crate::Conversation)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ActiveSet {
    active: Vec<String>,
    set: HashSet<String>,
}

/// How the hits of one search stand in a conversation: loaded now, loaded before, or found
/// below the relevance cut. What the model reads of it is written by
/// [`SearchOutcome`](crate::toolbox::SearchOutcome) alone.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sorted {
    /// Every tool the query found, best first (loaded now or before).
    pub(crate) matches: Vec<Hit>,
    /// The subset of `matches` that was active (or core) before this call.
    pub(crate) already_loaded: Vec<ToolId>,
    /// The subset of `matches` below the relevance cut: found, named, not loaded.
    pub(crate) also_found: Vec<ToolId>,
    /// Query terms that matched no tool.
    pub(crate) unmatched_terms: Vec<String>,
    /// Whether the search found tools and none fits the request ([`Found::nothing_fits`]):
    /// nothing was loaded, and `matches` are only the nearest.
    pub(crate) nothing_fits: bool,
}

impl Sorted {
    /// The tools this call loaded (in `matches` but neither `already_loaded` nor
    /// `also_found`), best first.
    pub(crate) fn loaded(&self) -> impl Iterator<Item = ToolId> + '_ {
        self.matches
            .iter()
            .map(|h| h.tool)
            .filter(|t| !self.already_loaded.contains(t) && !self.also_found.contains(t))
    }
}

impl ActiveSet {
    /// A session with nothing active.
    pub(crate) fn new() -> ActiveSet {
        ActiveSet::default()
    }

    /// The active tools' qualified names, in activation order.
    pub(crate) fn active(&self) -> &[String] {
        &self.active
    }

    /// Whether a tool is active.
    pub(crate) fn is_active(&self, name: &str) -> bool {
        self.set.contains(name)
    }

    /// Activates tools (qualified names); returns those that were not active yet, in order.
    pub(crate) fn activate<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut added = Vec::new();
        for n in names {
            if self.set.insert(n.to_owned()) {
                self.active.push(n.to_owned());
                added.push(n.to_owned());
            }
        }
        added
    }

    /// Removes a tool from the active set (unload); returns whether it was active.
    pub(crate) fn unload(&mut self, name: &str) -> bool {
        if self.set.remove(name) {
            self.active.retain(|n| n != name);
            true
        } else {
            false
        }
    }

    /// Runs one `tool_search` call: searches `index`, activates the deferred hits that clear
    /// the request's relevance cut ([`crate::search::Found::loads`]), and sorts out the hits
    /// that were active or core already and those below the cut.
    pub(crate) fn tool_search(&mut self, index: &Index, deferral: &Deferral, req: Request<'_>) -> Sorted {
        let found = index.search(req);
        let nothing_fits = found.nothing_fits();
        let Found { hits, unmatched_terms, loads: relevant, .. } = found;
        let catalog = index.catalog();
        let mut already_loaded = Vec::new();
        let mut also_found = Vec::new();
        for (rank, h) in hits.iter().enumerate() {
            let name = catalog.tool(h.tool).qualified_name();
            if !deferral.is_deferred(h.tool) || self.is_active(name) {
                already_loaded.push(h.tool);
            } else if rank < relevant {
                self.activate([name]);
            } else {
                also_found.push(h.tool);
            }
        }
        Sorted { matches: hits, already_loaded, also_found, unmatched_terms, nothing_fits }
    }

    /// The compaction boundary record that carries the active set across a summary.
    pub(crate) fn boundary(&self) -> Value {
        json!({
            "type": "system",
            "subtype": "compact_boundary",
            "compact_metadata": {"pre_compact_discovered_tools": self.active},
        })
    }

    /// Rebuilds the active set from a transcript: a list of messages (Anthropic Messages
    /// shape) and boundary records, oldest first.
    ///
    /// Found, in order of appearance: `tool_reference` blocks (`tool_name`) anywhere in a
    /// message; the text of `tool_search` results (the `Loaded …` list and the
    /// `Already loaded …` line); compaction boundary records, which replace what came before
    /// them with their own list. Names not in `catalog` are skipped, since the tool is gone.
    pub(crate) fn from_transcript(messages: &[Value], catalog: &Catalog) -> ActiveSet {
        let mut s = ActiveSet::new();
        for m in messages {
            if let Some(list) = boundary_list(m) {
                s = ActiveSet::new();
                s.activate(list.iter().filter(|n| catalog.get(n).is_some()).map(String::as_str));
                continue;
            }
            let mut names = Vec::new();
            collect_discovered(m, &mut names);
            s.activate(names.iter().filter(|n| catalog.get(n).is_some()).map(String::as_str));
        }
        s
    }
}

/// The discovered tools of a compaction boundary record, if `m` is one.
fn boundary_list(m: &Value) -> Option<Vec<String>> {
    let is_boundary = m.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
        || m.get("type").and_then(Value::as_str) == Some("compact_boundary");
    if !is_boundary {
        return None;
    }
    let meta = m.get("compact_metadata").or_else(|| m.get("compactMetadata")).unwrap_or(m);
    let list = meta
        .get("pre_compact_discovered_tools")
        .or_else(|| meta.get("preCompactDiscoveredTools"))
        .or_else(|| meta.get("discovered_tools"))?;
    Some(list.as_array()?.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

fn collect_discovered(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("tool_reference") {
                if let Some(n) = map.get("tool_name").and_then(Value::as_str) {
                    out.push(n.to_owned());
                }
                return;
            }
            // OpenAI Responses: the definitions a client-executed search returned, by namespace.
            if map.get("type").and_then(Value::as_str) == Some("tool_search_output") {
                for t in map.get("tools").and_then(Value::as_array).into_iter().flatten() {
                    let functions = t.get("tools").and_then(Value::as_array);
                    match (t["name"].as_str(), functions) {
                        (Some(ns), Some(functions)) => out.extend(
                            functions.iter().filter_map(|f| f["name"].as_str()).map(|f| format!("{ns}__{f}")),
                        ),
                        (Some(name), None) => out.push(name.to_owned()),
                        _ => {}
                    }
                }
                return;
            }
            for child in map.values() {
                collect_discovered(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_discovered(i, out)),
        Value::String(text) => names_in_result_text(text, out),
        _ => {}
    }
}

/// Tool names in the text of a `tool_search` result ([`SearchOutcome::text`](crate::toolbox::SearchOutcome::text)).
fn names_in_result_text(text: &str, out: &mut Vec<String>) {
    if !text.starts_with(LOADED_HEADER) && !text.starts_with(ALREADY_LOADED) {
        return;
    }
    let mut in_list = false;
    for line in text.lines() {
        if line.starts_with(LOADED_HEADER) {
            in_list = true;
        } else if let Some(rest) = line.strip_prefix(ALREADY_LOADED) {
            in_list = false;
            out.extend(rest.split(',').map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()));
        } else if let Some(item) = line.strip_prefix("- ").filter(|_| in_list) {
            if let Some((name, _)) = item.split_once(": ") {
                out.push(name.trim().to_owned());
            }
        } else {
            in_list = false;
        }
    }
}

#[cfg(test)]
mod tests;
