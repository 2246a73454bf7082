//! openai: the Responses API's shapes: a client-executed `tool_search`, one `namespace` per
//! server of deferred functions, `tool_search_output` with full definitions, and
//! `function_call.namespace`.

use serde_json::{Value, json};

use super::chat::arguments;
use super::{Call, Dialect, RenderError};
use crate::catalog::Tool;
use crate::request::TOOL_SEARCH;
use crate::toolbox::Toolbox;

const PROVIDER: &str = "openai-responses";

/// A function as the Responses API takes it.
fn function(name: &str, tool: &Tool, deferred: bool) -> Value {
    let mut f = json!({
        "type": "function",
        "name": name,
        "description": tool.description(),
        "parameters": tool.input_schema(),
        "strict": false,
    });
    if deferred {
        f["defer_loading"] = json!(true);
    }
    f
}

/// The two halves of a qualified name `SERVER__TOOL` (a server name never holds `__`), or
/// none for a tool without a server: a namespace and a function name that join back into it.
fn halves(tool: &Tool) -> (&str, &str) {
    tool.qualified_name().split_once("__").unwrap_or(("", tool.qualified_name()))
}

/// Tools grouped by the server half of their names, servers in the order they first appear.
fn by_server<'t>(tools: impl Iterator<Item = &'t Tool>) -> Vec<(&'t str, Vec<&'t Tool>)> {
    let mut groups: Vec<(&str, Vec<&Tool>)> = Vec::new();
    for tool in tools {
        let server = halves(tool).0;
        match groups.iter_mut().find(|(s, _)| *s == server) {
            Some((_, list)) => list.push(tool),
            None => groups.push((server, vec![tool])),
        }
    }
    groups
}

/// A namespace of one server's functions, each by its own name.
fn namespace(server: &str, tools: &[&Tool]) -> Result<Value, RenderError> {
    let names = Dialect::OPENAI.names;
    names.check(server, PROVIDER)?;
    let mut functions = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = halves(tool).1;
        names.check(name, PROVIDER)?;
        functions.push(function(name, tool, true));
    }
    Ok(json!({
        "type": "namespace",
        "name": server,
        "description": format!("Tools of the {server} server."),
        "tools": functions,
    }))
}

/// The `tools` array: `tool_search` (executed by the client, with toolgate's schema), the
/// functions that are not deferred, then one namespace per server of deferred functions.
pub(super) fn tools(toolbox: &Toolbox, listed: &[&Tool]) -> Result<Vec<Value>, RenderError> {
    let names = Dialect::OPENAI.names;
    let mut out = Vec::new();
    for tool in listed.iter().filter(|t| !toolbox.is_deferred(t)) {
        if tool.qualified_name() == TOOL_SEARCH {
            out.push(json!({
                "type": "tool_search",
                "execution": "client",
                "description": tool.description(),
                "parameters": tool.input_schema(),
            }));
        } else {
            names.check(tool.qualified_name(), PROVIDER)?;
            out.push(function(tool.qualified_name(), tool, false));
        }
    }
    let deferred = toolbox.visible().tools().iter().filter(|t| toolbox.is_deferred(t));
    for (server, tools) in by_server(deferred) {
        if server.is_empty() {
            for tool in tools {
                names.check(tool.qualified_name(), PROVIDER)?;
                out.push(function(tool.qualified_name(), tool, true));
            }
        } else {
            out.push(namespace(server, &tools)?);
        }
    }
    Ok(out)
}

/// The `tool_search_output` item answering `call_id`: the loaded tools' full definitions, in
/// their namespaces.
pub(super) fn search_output(call_id: &str, loaded: &[&Tool]) -> Value {
    let tools: Vec<Value> = by_server(loaded.iter().copied())
        .into_iter()
        .filter_map(|(server, tools)| namespace(server, &tools).ok())
        .collect();
    json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    })
}

/// The `tool_search_call` and `function_call` items of a response (its `output`, or the
/// items themselves). A namespaced function is named `NAMESPACE__NAME`, its qualified name.
pub(super) fn calls(reply: &Value) -> Vec<Call> {
    let items = reply.get("output").and_then(Value::as_array).or_else(|| reply.as_array());
    items
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let id = item["call_id"].as_str().or_else(|| item["id"].as_str()).unwrap_or_default().to_owned();
            match item["type"].as_str()? {
                "tool_search_call" => Some(Call::Search { id, arguments: arguments(item.get("arguments")) }),
                // A model without native search calls toolgate's `tool_search` as a function.
                "function_call"
                    if item["name"] == TOOL_SEARCH && item.get("namespace").is_none_or(Value::is_null) =>
                {
                    Some(Call::Search { id, arguments: arguments(item.get("arguments")) })
                }
                "function_call" => {
                    let name = item["name"].as_str().unwrap_or_default();
                    let name = match item["namespace"].as_str() {
                        Some(ns) if !ns.is_empty() => format!("{ns}__{name}"),
                        _ => name.to_owned(),
                    };
                    Some(Call::Tool { id, name, arguments: arguments(item.get("arguments")) })
                }
                _ => None,
            }
        })
        .collect()
}
