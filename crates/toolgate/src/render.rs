//! render: here is a toolbox and a conversation, give me this turn's request for a provider,
//! and read the provider's reply back into searches and tool calls.
//!
//! An agent loop built on the library asks [`render`] for each turn's `tools` array (and the
//! system-prompt announcement where the mode needs one), sends it, reads the reply with
//! [`calls`], answers each `tool_search` with [`answer_search`] and runs each tool call only
//! after [`Toolbox::check`] allowed it. Every decision stays in the [`Toolbox`]; this module
//! only speaks each provider's shapes (`docs/providers.md` has them, with sources):
//!
//! | [`Provider`] | tools sent | how a search loads a tool |
//! |---|---|---|
//! | `Anthropic` | every visible definition, deferred ones with `defer_loading: true`, toolgate's `tool_search` as a normal tool | a `tool_result` of `tool_reference` blocks |
//! | `AnthropicServer` | the same, with Anthropic's own search tool (BM25 or regex) | the API's `tool_search_tool_result`, read with [`observe`] |
//! | `OpenAiResponses` | `tool_search` (client-executed), core functions, one `namespace` per server of deferred functions | a `tool_search_output` with the full definitions |
//! | `Chat` | the active definitions, in activation order, under each API's name rule and cap | the next request lists the loaded tools |
//! | `Bridge` | `tool_search` and `call_tool`, never anything else | the search result text carries the schemas |
//!
//! In the native deferred modes (the first three) the `tools` array of a conversation never
//! changes, so the request prefix a provider caches stays byte-identical even on turns that
//! load tools; client-side injection appends, and only on loading turns; bridge never changes.

mod anthropic;
mod chat;
mod history;
mod models;
mod openai;
pub mod stability;

use std::fmt;

use serde_json::{Value, json};

use crate::budget::OverHardLimit;
use crate::catalog::Tool;
use crate::config::Exposure;
use crate::toolbox::{BadSearch, Conversation, Toolbox};

pub use crate::request::{Announcer, Delta};
pub use chat::{Dialect, NameRule, Shape};
pub use history::strip_for;
pub use models::{Api, Models, UnknownMode};

/// Which search tool Anthropic runs on its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerSearch {
    /// `tool_search_tool_bm25_20251119`: natural-language queries.
    Bm25,
    /// `tool_search_tool_regex_20251119`: Python regular expressions.
    Regex,
}

/// A provider's wire shape and how it loads deferred tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic Messages with toolgate's `tool_search` answering with `tool_reference` blocks
    /// (the default for Claude models that support tool search).
    Anthropic,
    /// Anthropic Messages with Anthropic's server-side search tool.
    AnthropicServer(ServerSearch),
    /// OpenAI Responses with a client-executed `tool_search` (gpt-5.4 and later).
    OpenAiResponses,
    /// Client-side injection, for Chat Completions or any function-calling API (the dialect
    /// says whose shape, name rule and cap).
    Chat(Dialect),
    /// `tool_search` and `call_tool` only, in Chat Completions' shape, for any provider.
    Bridge,
}

impl Provider {
    /// Every provider mode by its command-line name, in the order `toolgate render` lists them.
    pub const NAMES: [(&'static str, Provider); 10] = [
        ("anthropic", Provider::Anthropic),
        ("anthropic-server", Provider::AnthropicServer(ServerSearch::Bm25)),
        ("anthropic-server-regex", Provider::AnthropicServer(ServerSearch::Regex)),
        ("openai-responses", Provider::OpenAiResponses),
        ("chat", Provider::Chat(Dialect::OPENAI)),
        ("gemini", Provider::Chat(Dialect::GEMINI)),
        ("vertex", Provider::Chat(Dialect::VERTEX)),
        ("anthropic-inject", Provider::Chat(Dialect::ANTHROPIC)),
        ("openai-responses-inject", Provider::Chat(Dialect::RESPONSES)),
        ("bridge", Provider::Bridge),
    ];

    /// The mode's command-line name.
    pub fn name(self) -> &'static str {
        Provider::NAMES.iter().find(|(_, p)| *p == self).map_or("chat", |(n, _)| n)
    }

    /// The mode a command-line name means.
    pub fn from_name(name: &str) -> Option<Provider> {
        Provider::NAMES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// The exposure the toolbox of this mode is built with: bridge for [`Provider::Bridge`],
    /// native for every other.
    pub fn exposure(self) -> Exposure {
        if self == Provider::Bridge { Exposure::Bridge } else { Exposure::Native }
    }

    /// The wire shape of its definitions and calls.
    pub fn shape(self) -> Shape {
        match self {
            Provider::Anthropic | Provider::AnthropicServer(_) => Shape::Anthropic,
            Provider::OpenAiResponses => Shape::Responses,
            Provider::Chat(d) => d.shape,
            Provider::Bridge => Shape::Chat,
        }
    }

    /// Whether deferred definitions are sent with the provider's own deferral flag (their
    /// names then reach the model through the provider, not the announcement alone).
    pub fn is_native_deferral(self) -> bool {
        matches!(self, Provider::Anthropic | Provider::AnthropicServer(_) | Provider::OpenAiResponses)
    }
}

/// One turn's request parts for a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The `tools` array, as the provider's JSON.
    pub tools: Vec<Value>,
    /// The announcement of the deferred tools for the system prompt (empty when nothing is
    /// deferred, and in bridge mode, whose `tool_search` says how to find tools). Frozen per
    /// conversation: byte-identical on every turn.
    pub system: String,
}

impl Turn {
    /// The request prefix a provider caches: the tools, then the system prompt, as bytes.
    pub fn prefix(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(&self.tools).unwrap_or_default();
        bytes.extend_from_slice(self.system.as_bytes());
        bytes
    }
}

/// Why a turn cannot be rendered for a provider. Nothing is ever dropped silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// More tools than the provider accepts in one request.
    TooManyTools {
        /// The provider mode.
        provider: &'static str,
        /// Tools the turn would send.
        count: usize,
        /// The provider's cap.
        cap: usize,
    },
    /// A tool name the provider's name rule refuses.
    BadName {
        /// The provider mode.
        provider: &'static str,
        /// The name.
        name: String,
        /// The rule, in words.
        rule: &'static str,
    },
    /// The list would exceed `[budget] hard`.
    OverHardLimit(OverHardLimit),
    /// The toolbox was built for the other exposure (bridge needs a bridge toolbox, the other
    /// modes a native one).
    Exposure {
        /// The provider mode.
        provider: &'static str,
    },
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::TooManyTools { provider, count, cap } => write!(
                f,
                "{provider}: this turn would send {count} tools and the provider accepts at most \
                 {cap}; defer more tools (gateway.mode = \"on\") or narrow the policy"
            ),
            RenderError::BadName { provider, name, rule } => write!(
                f,
                "{provider}: the tool name `{name}` breaks the provider's name rule ({rule}); \
                 rename the server or deny the tool"
            ),
            RenderError::OverHardLimit(e) => write!(f, "{e}"),
            RenderError::Exposure { provider } => write!(
                f,
                "{provider}: the toolbox was built for the other exposure (bridge mode needs \
                 Exposure::Bridge, the other modes Exposure::Native)"
            ),
        }
    }
}

impl std::error::Error for RenderError {}

/// This turn's request parts for `provider`. Every definition the turn lists as callable
/// counts as shown to `conversation`; deferred definitions sent with a deferral flag do not
/// (the model sees them only once a search references them).
pub fn render(
    toolbox: &Toolbox,
    conversation: &mut Conversation,
    provider: Provider,
) -> Result<Turn, RenderError> {
    if provider.exposure() != toolbox.about().exposure() {
        return Err(RenderError::Exposure { provider: provider.name() });
    }
    let owned = toolbox.tools(conversation).map_err(RenderError::OverHardLimit)?;
    let listed: Vec<&Tool> = owned.iter().map(|t| &**t).collect();
    let system = if provider == Provider::Bridge {
        String::new()
    } else {
        toolbox.briefing().announcement(conversation).to_string()
    };
    let tools = match provider {
        Provider::Anthropic | Provider::AnthropicServer(_) => anthropic::tools(toolbox, &listed, provider)?,
        Provider::OpenAiResponses => openai::tools(toolbox, &listed)?,
        Provider::Chat(dialect) => chat::tools(&listed, dialect, provider.name())?,
        Provider::Bridge => chat::tools(&listed, Dialect::OPENAI, provider.name())?,
    };
    Ok(Turn { tools, system })
}

/// What the model asked for in one reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// A call of toolgate's `tool_search`, to answer with [`answer_search`].
    Search {
        /// The provider's id of the call (`tool_use_id`, `call_id`).
        id: String,
        /// The search's arguments.
        arguments: Value,
    },
    /// A tool call, to check with [`Toolbox::check`] before it runs.
    Tool {
        /// The provider's id of the call.
        id: String,
        /// The tool's qualified name as the model gave it (a namespace joined to its function
        /// name; in bridge mode `call_tool`'s `name`).
        name: String,
        /// The arguments.
        arguments: Value,
    },
}

/// The searches and tool calls of one reply: an Anthropic message (`content` blocks), an
/// OpenAI Responses response or its `output` items, a Chat Completions response or message,
/// or a Gemini `generateContent` response.
pub fn calls(provider: Provider, reply: &Value) -> Vec<Call> {
    match provider {
        Provider::Anthropic | Provider::AnthropicServer(_) => anthropic::calls(reply),
        Provider::OpenAiResponses => openai::calls(reply),
        Provider::Chat(d) => match d.shape {
            Shape::Chat => chat::calls(reply, false),
            Shape::Gemini => chat::gemini_calls(reply),
            Shape::Anthropic => anthropic::calls(reply),
            Shape::Responses => openai::calls(reply),
        },
        Provider::Bridge => chat::calls(reply, true),
    }
}

/// Runs the search `call` and returns what goes back to the provider: an Anthropic
/// `tool_result` of `tool_reference` blocks, an OpenAI `tool_search_output` item with the
/// loaded definitions, or a Chat `tool` message with the result's text. A search whose
/// arguments do not fit the schema is answered with the error, as the model's to fix.
pub fn answer_search(
    toolbox: &Toolbox,
    conversation: &mut Conversation,
    provider: Provider,
    id: &str,
    arguments: &Value,
) -> Value {
    let outcome = toolbox.tool_search(conversation, arguments);
    match (provider, outcome) {
        (_, Err(BadSearch(problem))) => tool_output(provider, id, &format!("tool_search: {problem}"), true),
        (Provider::Anthropic | Provider::AnthropicServer(_), Ok(found)) => {
            let loaded: Vec<&Tool> = found.loaded().collect();
            anthropic::search_result(id, &found.text(), &loaded)
        }
        (Provider::OpenAiResponses, Ok(found)) => {
            let loaded: Vec<&Tool> = found.loaded().collect();
            openai::search_output(id, &loaded)
        }
        (Provider::Chat(d), Ok(found)) if d.shape == Shape::Anthropic => {
            anthropic::search_result(id, &found.text(), &[])
        }
        (Provider::Chat(_) | Provider::Bridge, Ok(found)) => tool_output(provider, id, &found.text(), false),
    }
}

/// What a tool call's result (or its refusal) looks like going back to the provider.
pub fn tool_output(provider: Provider, id: &str, text: &str, is_error: bool) -> Value {
    match provider.shape() {
        Shape::Anthropic => {
            let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": text});
            if is_error {
                block["is_error"] = json!(true);
            }
            block
        }
        Shape::Responses => json!({"type": "function_call_output", "call_id": id, "output": text}),
        Shape::Gemini => {
            json!({"functionResponse": {"name": id, "response": {"content": text, "error": is_error}}})
        }
        Shape::Chat => json!({"role": "tool", "tool_call_id": id, "content": text}),
    }
}

/// Takes in what the provider's own search found ([`Provider::AnthropicServer`]): the tools
/// a reply's `tool_search_tool_result` blocks reference are loaded and count as shown. Returns
/// their names.
pub fn observe(toolbox: &Toolbox, conversation: &mut Conversation, reply: &Value) -> Vec<String> {
    let names = anthropic::server_references(reply);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    toolbox.found_by_provider(conversation, &refs)
}

#[cfg(test)]
mod tests;
