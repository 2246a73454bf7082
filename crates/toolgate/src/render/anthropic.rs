//! anthropic: the Messages API's shapes: tools with `defer_loading`, `tool_reference` results,
//! and the server-side search tool's blocks.

use serde_json::{Value, json};

use super::chat::ANTHROPIC_NAMES as NAMES;
use super::{Call, Provider, RenderError, ServerSearch};
use crate::catalog::Tool;
use crate::request::TOOL_SEARCH;
use crate::toolbox::Toolbox;

/// Most deferred tools in one request.
pub(super) const MAX_DEFERRED: usize = 10_000;

/// One tool as the Messages API takes it.
fn definition(tool: &Tool) -> Value {
    json!({
        "name": tool.qualified_name(),
        "description": tool.description(),
        "input_schema": tool.input_schema(),
    })
}

/// The `tools` array: the callable list (core tools, the search tool, loaded tools are not
/// repeated here: they stay deferred) and every visible deferred tool with `defer_loading`.
/// The cache breakpoint sits on the last tool that is not deferred (a deferred tool may not
/// carry one).
pub(super) fn tools(
    toolbox: &Toolbox,
    listed: &[&Tool],
    provider: Provider,
) -> Result<Vec<Value>, RenderError> {
    let name = provider.name();
    let mut out = Vec::new();
    for tool in listed.iter().filter(|t| !toolbox.is_deferred(t)) {
        if tool.qualified_name() == TOOL_SEARCH {
            out.push(match provider {
                Provider::AnthropicServer(ServerSearch::Bm25) => {
                    json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
                }
                Provider::AnthropicServer(ServerSearch::Regex) => {
                    json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
                }
                _ => definition(tool),
            });
            continue;
        }
        NAMES.check(tool.qualified_name(), name)?;
        out.push(definition(tool));
    }
    if let Some(last) = out.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    let deferred: Vec<&Tool> = toolbox.visible().tools().iter().filter(|t| toolbox.is_deferred(t)).collect();
    if deferred.len() > MAX_DEFERRED {
        return Err(RenderError::TooManyTools { provider: name, count: deferred.len(), cap: MAX_DEFERRED });
    }
    for tool in deferred {
        NAMES.check(tool.qualified_name(), name)?;
        let mut d = definition(tool);
        d["defer_loading"] = json!(true);
        out.push(d);
    }
    Ok(out)
}

/// The `tool_result` answering a client-side search: a short text, then one `tool_reference`
/// per loaded tool (each is in `tools` with `defer_loading`, so the API expands it).
pub(super) fn search_result(id: &str, text: &str, loaded: &[&Tool]) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    content.extend(loaded.iter().map(|t| json!({"type": "tool_reference", "tool_name": t.qualified_name()})));
    json!({"type": "tool_result", "tool_use_id": id, "content": content})
}

/// The content blocks of a reply: a message's `content`, or the array itself.
fn blocks(reply: &Value) -> &[Value] {
    reply.get("content").and_then(Value::as_array).or_else(|| reply.as_array()).map_or(&[], Vec::as_slice)
}

/// The `tool_use` blocks of a reply; toolgate's `tool_search` is a search, any other a tool.
pub(super) fn calls(reply: &Value) -> Vec<Call> {
    blocks(reply)
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            let id = b["id"].as_str().unwrap_or_default().to_owned();
            let arguments = b.get("input").cloned().unwrap_or_else(|| json!({}));
            match b["name"].as_str().unwrap_or_default() {
                TOOL_SEARCH => Call::Search { id, arguments },
                name => Call::Tool { id, name: name.to_owned(), arguments },
            }
        })
        .collect()
}

/// The tools the server-side search referenced in a reply's `tool_search_tool_result` blocks.
pub(super) fn server_references(reply: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for b in blocks(reply).iter().filter(|b| b["type"] == "tool_search_tool_result") {
        for r in b["content"]["tool_references"].as_array().into_iter().flatten() {
            if let Some(n) = r["tool_name"].as_str() {
                names.push(n.to_owned());
            }
        }
    }
    names
}
