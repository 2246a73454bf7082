//! chat: client-side injection, for Chat Completions and any function-calling API (Gemini's
//! function declarations, and the Anthropic and Responses shapes for models without tool
//! search), under each API's name rule and tool cap.

use serde_json::{Value, json};

use super::{Call, RenderError};
use crate::catalog::Tool;
use crate::toolbox::{BridgeCall, CALL_TOOL};

/// What names a provider accepts.
#[derive(Debug, Clone, Copy)]
pub struct NameRule {
    /// Most characters.
    pub max_len: usize,
    /// Which characters may come first.
    pub first: fn(char) -> bool,
    /// Which characters may follow.
    pub rest: fn(char) -> bool,
    /// The rule in words, for errors.
    pub words: &'static str,
}

impl NameRule {
    /// Whether `name` follows the rule.
    pub fn allows(&self, name: &str) -> bool {
        let mut chars = name.chars();
        let Some(first) = chars.next() else { return false };
        name.chars().count() <= self.max_len && (self.first)(first) && chars.all(self.rest)
    }

    /// `Ok` if `name` follows the rule, else the error naming `provider`.
    pub(super) fn check(&self, name: &str, provider: &'static str) -> Result<(), RenderError> {
        if self.allows(name) {
            Ok(())
        } else {
            Err(RenderError::BadName { provider, name: name.to_owned(), rule: self.words })
        }
    }
}

impl PartialEq for NameRule {
    fn eq(&self, other: &NameRule) -> bool {
        self.max_len == other.max_len && self.words == other.words
    }
}

impl Eq for NameRule {}

/// The wire shape of a tool definition and of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Chat Completions: `{"type": "function", "function": {name, description, parameters}}`.
    Chat,
    /// Gemini: one `{"functionDeclarations": [{name, description, parametersJsonSchema}]}`.
    Gemini,
    /// Anthropic Messages: `{name, description, input_schema}`, `tool_use` blocks.
    Anthropic,
    /// OpenAI Responses: `{"type": "function", name, description, parameters}`,
    /// `function_call` items.
    Responses,
}

/// The Messages API's tool name rule (unconfirmed whether the cap is 64 or 128 characters;
/// `docs/providers.md`).
pub(super) const ANTHROPIC_NAMES: NameRule = NameRule {
    max_len: 128,
    first: |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
    rest: |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
    words: "letters, digits, `_` and `-`, at most 128 characters",
};

/// A function-calling API's shape, name rule and cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The API's name.
    pub name: &'static str,
    /// Its tool name rule.
    pub names: NameRule,
    /// Most tools in one request.
    pub max_tools: usize,
    /// How definitions and calls are written.
    pub shape: Shape,
}

impl Dialect {
    /// OpenAI Chat Completions and OpenAI-compatible servers: `^[a-zA-Z0-9_-]{1,64}$`, 128
    /// tools.
    pub const OPENAI: Dialect = Dialect {
        name: "chat",
        names: NameRule {
            max_len: 64,
            first: |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
            rest: |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
            words: "letters, digits, `_` and `-`, at most 64 characters",
        },
        max_tools: 128,
        shape: Shape::Chat,
    };

    /// The Gemini API's function declarations: a letter or `_` first, then letters, digits,
    /// `_`, `.`, `:` or `-`, at most 64 characters; 512 declarations (Vertex AI: 128, see
    /// [`Dialect::VERTEX`]).
    pub const GEMINI: Dialect = Dialect {
        name: "gemini",
        names: NameRule {
            max_len: 64,
            first: |c| c.is_ascii_alphabetic() || c == '_',
            rest: |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'),
            words: "a letter or `_` first, then letters, digits, `_`, `.`, `:` or `-`, at most 64 characters",
        },
        max_tools: 512,
        shape: Shape::Gemini,
    };

    /// Gemini on Vertex AI: Gemini's names, 128 declarations.
    pub const VERTEX: Dialect = Dialect { name: "vertex", max_tools: 128, ..Dialect::GEMINI };

    /// Anthropic Messages for a model without tool search (or an endpoint that cannot take
    /// `tool_reference` blocks): the active definitions, no deferral flags.
    pub const ANTHROPIC: Dialect = Dialect {
        name: "anthropic-inject",
        names: ANTHROPIC_NAMES,
        max_tools: 10_000,
        shape: Shape::Anthropic,
    };

    /// OpenAI Responses for a model without `tool_search`: plain functions (whether Responses
    /// caps tools at 128 is unconfirmed; 128 is assumed, as for Chat Completions).
    pub const RESPONSES: Dialect =
        Dialect { name: "openai-responses-inject", shape: Shape::Responses, ..Dialect::OPENAI };
}

/// The `tools` array of a client-side turn: every listed definition, in the toolbox's stable
/// order, or an error when one breaks the name rule or the list passes the cap.
pub(super) fn tools(
    listed: &[&Tool],
    dialect: Dialect,
    provider: &'static str,
) -> Result<Vec<Value>, RenderError> {
    if listed.len() > dialect.max_tools {
        return Err(RenderError::TooManyTools { provider, count: listed.len(), cap: dialect.max_tools });
    }
    let mut functions = Vec::with_capacity(listed.len());
    for tool in listed {
        dialect.names.check(tool.qualified_name(), provider)?;
        let (name, description, schema) = (tool.qualified_name(), tool.description(), tool.input_schema());
        functions.push(match dialect.shape {
            Shape::Chat => json!({"type": "function", "function": {
                "name": name, "description": description, "parameters": schema}}),
            Shape::Gemini => {
                json!({"name": name, "description": description, "parametersJsonSchema": schema})
            }
            Shape::Anthropic => json!({"name": name, "description": description, "input_schema": schema}),
            Shape::Responses => json!({"type": "function", "name": name, "description": description,
                "parameters": schema, "strict": false}),
        });
    }
    Ok(if dialect.shape == Shape::Gemini {
        vec![json!({"functionDeclarations": functions})]
    } else {
        functions
    })
}

/// Arguments that may come as a JSON string (Chat Completions) or an object.
pub(super) fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| json!({"_unparsed": s})),
        Some(v @ Value::Object(_)) => v.clone(),
        _ => json!({}),
    }
}

/// The tool calls of a Chat Completions response (or one of its messages). In bridge mode a
/// `call_tool` call is the tool it names.
pub(super) fn calls(reply: &Value, bridge: bool) -> Vec<Call> {
    let message = reply.pointer("/choices/0/message").unwrap_or(reply);
    message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let id = c["id"].as_str().unwrap_or_default().to_owned();
            let name = c["function"]["name"].as_str().unwrap_or_default();
            let args = arguments(c["function"].get("arguments"));
            call(id, name, args, bridge)
        })
        .collect()
}

/// The function calls of a Gemini `generateContent` response (ids are the function names:
/// Gemini answers a call by name).
pub(super) fn gemini_calls(reply: &Value) -> Vec<Call> {
    let parts = reply.pointer("/candidates/0/content/parts").or_else(|| reply.get("parts"));
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("functionCall"))
        .map(|c| {
            let name = c["name"].as_str().unwrap_or_default();
            call(name.to_owned(), name, arguments(c.get("args")), false)
        })
        .collect()
}

fn call(id: String, name: &str, arguments: Value, bridge: bool) -> Call {
    match name {
        crate::request::TOOL_SEARCH => Call::Search { id, arguments },
        // A malformed call stays `call_tool`'s, for the check to refuse with what is wrong.
        CALL_TOOL if bridge => match BridgeCall::parse(&arguments) {
            Ok(call) => Call::Tool { id, name: call.name, arguments: Value::Object(call.arguments) },
            Err(_) => Call::Tool { id, name: CALL_TOOL.to_owned(), arguments },
        },
        _ => Call::Tool { id, name: name.to_owned(), arguments },
    }
}
