//! history: a transcript made fit for an endpoint that cannot take tool search's blocks.
//!
//! A `tool_reference` block stays in the history, so an endpoint that rejects one (vLLM's and
//! LM Studio's Messages endpoints, many proxies) fails every later request of the session.
//! When search is off or the target cannot take it, each such block becomes text saying what
//! was loaded, as Claude Code strips them.

use serde_json::{Value, json};

use super::Provider;

/// `messages` as `provider` can take them: for the Anthropic modes, as they are; for the
/// others, every `tool_reference` block, `server_tool_use` block and `tool_search_tool_result`
/// block turned into a text block naming the tools.
pub fn strip_for(provider: Provider, messages: &[Value]) -> Vec<Value> {
    match provider {
        Provider::Anthropic | Provider::AnthropicServer(_) => messages.to_vec(),
        _ => messages.iter().map(strip).collect(),
    }
}

/// `v` with every search block replaced by text.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(map) => match map.get("type").and_then(Value::as_str) {
            Some("tool_reference") => {
                let name = map.get("tool_name").and_then(Value::as_str).unwrap_or_default();
                json!({"type": "text", "text": format!("Tool loaded: {name}")})
            }
            Some("server_tool_use") => {
                let input = map.get("input").cloned().unwrap_or(Value::Null);
                json!({"type": "text", "text": format!("Searched for tools: {input}")})
            }
            Some("tool_search_tool_result") => {
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
            _ => Value::Object(map.iter().map(|(k, v)| (k.clone(), strip(v))).collect()),
        },
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}
