//! bridge: the bridge exposure's `call_tool`, its definition and the one reading of its
//! arguments, for the gateway, the renderers and [`Toolbox::check`](super::Toolbox::check).

use serde_json::{Map, Value, json};

use super::CALL_TOOL;
use crate::catalog::Tool;
use crate::request;

/// What a bridge `call_tool {name, arguments, grant}` asks to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BridgeCall {
    /// The tool's qualified name, as `tool_search` returned it.
    pub name: String,
    /// The tool's own arguments (an empty object when none were given).
    pub arguments: Map<String, Value>,
    /// The grant a request with no session presents, if it gave one.
    pub grant: Option<String>,
}

impl BridgeCall {
    /// Reads `call_tool`'s arguments. The error says what is wrong, for the model: a missing
    /// or non-string `name`, `arguments` that are not an object, a `grant` that is not a
    /// string.
    pub fn parse(outer: &Value) -> Result<BridgeCall, String> {
        let Some(name) = outer.get("name").and_then(Value::as_str) else {
            return Err(format!(
                "{CALL_TOOL} needs {{\"name\": TOOL, \"arguments\": {{...}}}} with the tool's name as a string"
            ));
        };
        let arguments = match outer.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(other) => return Err(format!("{CALL_TOOL}: `arguments` must be an object, not {other}")),
        };
        let grant = match outer.get("grant") {
            None | Some(Value::Null) => None,
            Some(Value::String(grant)) => Some(grant.clone()),
            Some(other) => return Err(format!("{CALL_TOOL}: `grant` must be a string, not {other}")),
        };
        Ok(BridgeCall { name: name.to_owned(), arguments, grant })
    }
}

/// The bridge meta-tool `call_tool {name, arguments}`.
pub fn call_tool_tool() -> Tool {
    Tool::meta(
        CALL_TOOL,
        &format!(
            "Run a tool loaded with {}. Load it first (tool_search returns its name and input \
             schema), then call call_tool with that name and arguments matching the schema.",
            request::TOOL_SEARCH
        ),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name as tool_search returned it."},
                "arguments": {"type": "object", "description": "The tool's arguments, matching its input schema."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    )
}

/// The bridge meta-tool of a toolbox whose callers present grants
/// ([`ToolboxBuilder::granted`](super::ToolboxBuilder::granted)): `call_tool {name,
/// arguments, grant}`.
pub(super) fn granted_call_tool_tool() -> Tool {
    Tool::meta(
        CALL_TOOL,
        &format!(
            "Run a tool loaded with {}. Load it first (tool_search returns its name, input schema \
             and grant), then call call_tool with that name, arguments matching the schema, and \
             the grant exactly as tool_search gave it.",
            request::TOOL_SEARCH
        ),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name as tool_search returned it."},
                "arguments": {"type": "object", "description": "The tool's arguments, matching its input schema."},
                "grant": {"type": "string", "description": "The tool's grant as tool_search returned it."}
            },
            "required": ["name", "grant"],
            "additionalProperties": false
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_read_once_and_every_wrong_shape_is_named() {
        let call = BridgeCall::parse(&json!({"name": "fs__read", "arguments": {"path": "a"}, "grant": "g"}));
        assert_eq!(
            call,
            Ok(BridgeCall {
                name: "fs__read".into(),
                arguments: json!({"path": "a"}).as_object().unwrap().clone(),
                grant: Some("g".into()),
            })
        );
        let bare = BridgeCall::parse(&json!({"name": "fs__read"})).unwrap();
        assert!(bare.arguments.is_empty() && bare.grant.is_none());
        for (outer, says) in [
            (json!({}), "the tool's name as a string"),
            (json!({"name": 3}), "the tool's name as a string"),
            (json!({"name": "x", "arguments": [1]}), "`arguments` must be an object, not [1]"),
            (json!({"name": "x", "arguments": "{}"}), "`arguments` must be an object"),
            (json!({"name": "x", "grant": 7}), "`grant` must be a string, not 7"),
        ] {
            let problem = BridgeCall::parse(&outer).unwrap_err();
            assert!(problem.contains(says), "{outer}: {problem}");
        }
    }
}
