//! convert: here is a tool in one world, give me the same tool in the other.
//!
//! An upstream's `rmcp::model::Tool` becomes a [`ToolSpec`] of the catalog (the server is the
//! upstream's configured name, the tool keeps its own name); a catalog [`Tool`] becomes the
//! `rmcp::model::Tool` a downstream client lists, under its qualified name.

use std::sync::Arc;

use rmcp::model::{JsonObject, ToolAnnotations};
use serde_json::{Map, Value};
use toolgate::{Tool, ToolSpec};

/// The `_meta` key with which an MCP server asks for a tool to be always loaded (Claude Code).
pub const ALWAYS_LOAD_META: &str = "anthropic/alwaysLoad";

/// An upstream's tool as a catalog entry of `server`.
///
/// The description, the input schema and the annotations are kept as published;
/// `_meta["anthropic/alwaysLoad"] == true` makes the tool core.
pub fn spec_from_mcp(server: &str, tool: &rmcp::model::Tool) -> ToolSpec {
    let mut spec = ToolSpec::mcp(server, &tool.name, tool.description.as_deref().unwrap_or_default());
    spec.input_schema = Value::Object(tool.input_schema.as_ref().clone()).into();
    if let Some(annotations) = &tool.annotations
        && let Ok(Value::Object(map)) = serde_json::to_value(annotations)
    {
        spec.annotations = map;
    }
    if let Some(title) = &tool.title {
        spec.annotations.entry("title").or_insert_with(|| Value::String(title.clone()));
    }
    spec.always_load =
        tool.meta.as_ref().and_then(|m| m.0.get(ALWAYS_LOAD_META)).and_then(Value::as_bool) == Some(true);
    spec
}

/// A catalog tool (or a meta-tool) as a downstream client lists it: the qualified name, the
/// description, the full input schema and the annotations, marked always loaded
/// (`_meta["anthropic/alwaysLoad"]`).
///
/// What toolgate lists is already the working set its toolbox chose for this turn, and
/// `tool_search` must reach the model: a client with a tool search of its own (Claude Code
/// defers every MCP tool by default) must not defer it again. Claude Code reads the mark per
/// tool; no client setting is needed.
///
/// An input schema that is not a JSON object is listed as `{"type": "object"}`, since MCP
/// requires an object; annotations whose values have the wrong type are left out.
pub fn mcp_from_tool(tool: &Tool) -> rmcp::model::Tool {
    let schema: JsonObject = match tool.input_schema() {
        Value::Object(map) => map.clone(),
        _ => {
            let mut map = Map::new();
            map.insert("type".into(), Value::String("object".into()));
            map
        }
    };
    let mut out = rmcp::model::Tool::new(
        tool.qualified_name().to_owned(),
        tool.description().to_owned(),
        Arc::new(schema),
    );
    if !tool.annotations().is_empty()
        && let Ok(annotations) =
            serde_json::from_value::<ToolAnnotations>(Value::Object(tool.annotations().clone()))
    {
        out.annotations = Some(annotations);
    }
    let mut meta = JsonObject::new();
    meta.insert(ALWAYS_LOAD_META.to_owned(), Value::Bool(true));
    out.meta = Some(rmcp::model::MetaObject(meta));
    out
}

/// An upstream's result, made valid for a client on any revision. 2026-07-28 requires
/// `resultType` on every result; an upstream on an older revision sends none, so a forwarded
/// result is marked complete here, and rmcp takes the mark off again for a client on an older
/// revision. Every result the gateway passes on goes through one of these.
pub(crate) mod complete {
    use rmcp::model::{CallToolResult, CompleteResult, GetPromptResponse, ReadResourceResponse, ResultType};

    /// A forwarded `tools/call` result.
    pub(crate) fn call(mut result: CallToolResult) -> CallToolResult {
        result.result_type = Some(ResultType::COMPLETE);
        result
    }

    /// A forwarded `prompts/get` answer (an input request passes as it is).
    pub(crate) fn prompt(answer: GetPromptResponse) -> GetPromptResponse {
        match answer {
            GetPromptResponse::Complete(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                GetPromptResponse::Complete(result)
            }
            other => other,
        }
    }

    /// A forwarded `resources/read` answer (an input request passes as it is).
    pub(crate) fn resource(answer: ReadResourceResponse) -> ReadResourceResponse {
        match answer {
            ReadResourceResponse::Complete(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                ReadResourceResponse::Complete(result)
            }
            other => other,
        }
    }

    /// A forwarded `completion/complete` result.
    pub(crate) fn completion(mut result: CompleteResult) -> CompleteResult {
        result.result_type = Some(ResultType::COMPLETE);
        result
    }
}

/// A list result that says how a client may cache it (2026-07-28).
pub(crate) trait Cacheable {
    /// Fresh for `ttl_ms`, for the caller alone.
    fn mark(&mut self, ttl_ms: u64);
}

macro_rules! cacheable {
    ($($t:ty),*) => {$(
        impl Cacheable for $t {
            fn mark(&mut self, ttl_ms: u64) {
                self.ttl_ms = Some(ttl_ms);
                self.cache_scope = Some(rmcp::model::CacheScope::Private);
            }
        }
    )*};
}

cacheable!(
    rmcp::model::ListToolsResult,
    rmcp::model::ListPromptsResult,
    rmcp::model::ListResourcesResult,
    rmcp::model::ListResourceTemplatesResult
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate::Catalog;

    #[test]
    fn an_upstream_tool_keeps_its_schema_annotations_and_always_load() {
        let tool: rmcp::model::Tool = serde_json::from_value(json!({
            "name": "read_file",
            "description": "Read a file",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
            "_meta": {"anthropic/alwaysLoad": true}
        }))
        .unwrap();
        let spec = spec_from_mcp("fs", &tool);
        assert_eq!(spec.server, "fs");
        assert_eq!(spec.name, "read_file");
        assert_eq!(spec.input_schema.value()["properties"]["path"]["type"], "string");
        assert_eq!(spec.annotations["readOnlyHint"], true);
        assert!(spec.always_load);

        let catalog = Catalog::builder().tool(spec).build().unwrap();
        let back = mcp_from_tool(&catalog.tools()[0]);
        assert_eq!(back.name, "fs__read_file");
        assert_eq!(back.description.as_deref(), Some("Read a file"));
        assert_eq!(back.annotations.and_then(|a| a.read_only_hint), Some(true));
        assert_eq!(back.input_schema["type"], "object");
        let meta = back.meta.expect("listed tools carry _meta");
        assert_eq!(meta.0[ALWAYS_LOAD_META], true, "a client's own tool search must not defer it again");
    }

    #[test]
    fn a_tool_without_always_load_is_deferred_material() {
        let tool = rmcp::model::Tool::new("echo", "Echo", Arc::new(JsonObject::new()));
        let spec = spec_from_mcp("fixture", &tool);
        assert!(!spec.always_load);
        assert!(spec.annotations.is_empty());
    }
}
