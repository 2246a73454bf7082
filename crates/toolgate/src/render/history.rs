//! history: a transcript made fit for an endpoint that cannot take tool search's blocks.
//!
//! A `tool_reference` block stays in the history, so an endpoint that rejects one (vLLM's and
//! LM Studio's Messages endpoints, many proxies) fails every later request of the session.
//! When search is off or the target cannot take it, each such block becomes text saying what
//! was loaded, as Claude Code strips them.

use serde_json::{Value, json};

use super::Provider;

/// `messages` as `provider` can take them: Anthropic's search blocks (`tool_reference`,
/// `server_tool_use`, `tool_search_tool_result`) stay only for the Anthropic modes, OpenAI's
/// search items (`tool_search_call`, `tool_search_output`) only for `openai-responses`; every
/// other one becomes text naming the tools.
pub fn strip_for(provider: Provider, messages: &[Value]) -> Vec<Value> {
    let keep = match provider {
        Provider::Anthropic | Provider::AnthropicServer(_) => Keep::Anthropic,
        Provider::OpenAiResponses => Keep::OpenAi,
        _ => Keep::Neither,
    };
    messages.iter().map(|m| strip(m, keep)).collect()
}

/// Whose search blocks the target takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Anthropic,
    OpenAi,
    Neither,
}

/// The names of the tools in a `tool_search_output`'s namespaces (`NAMESPACE__NAME`).
fn output_names(tools: Option<&Value>) -> Vec<String> {
    let mut names = Vec::new();
    for t in tools.and_then(Value::as_array).into_iter().flatten() {
        let ns = t["name"].as_str().unwrap_or_default();
        match t["tools"].as_array() {
            Some(functions) => names
                .extend(functions.iter().filter_map(|f| f["name"].as_str()).map(|f| format!("{ns}__{f}"))),
            None => names.push(ns.to_owned()),
        }
    }
    names
}

/// `v` with every search block the target cannot take replaced by text.
fn strip(v: &Value, keep: Keep) -> Value {
    match v {
        Value::Object(map) => match (map.get("type").and_then(Value::as_str), keep) {
            (Some("tool_reference"), Keep::OpenAi | Keep::Neither) => {
                let name = map.get("tool_name").and_then(Value::as_str).unwrap_or_default();
                json!({"type": "text", "text": format!("Tool loaded: {name}")})
            }
            (Some("server_tool_use"), Keep::OpenAi | Keep::Neither) => {
                let input = map.get("input").cloned().unwrap_or(Value::Null);
                json!({"type": "text", "text": format!("Searched for tools: {input}")})
            }
            (Some("tool_search_tool_result"), Keep::OpenAi | Keep::Neither) => {
                let names: Vec<&str> = map
                    .get("content")
                    .and_then(|c| c.get("tool_references"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["tool_name"].as_str())
                    .collect();
                json!({"type": "text", "text": format!("Tools found: {}", names.join(", "))})
            }
            (Some("tool_search_call"), Keep::Anthropic | Keep::Neither) => {
                let arguments = map.get("arguments").cloned().unwrap_or(Value::Null);
                json!({"role": "assistant", "content": format!("Searched for tools: {arguments}")})
            }
            (Some("tool_search_output"), Keep::Anthropic | Keep::Neither) => {
                let names = output_names(map.get("tools"));
                json!({"role": "user", "content": format!("Tools loaded: {}", names.join(", "))})
            }
            _ => Value::Object(map.iter().map(|(k, v)| (k.clone(), strip(v, keep))).collect()),
        },
        Value::Array(items) => Value::Array(items.iter().map(|i| strip(i, keep)).collect()),
        other => other.clone(),
    }
}
