//! stability: which bytes of the request prefix change from turn to turn, for a scripted
//! session, so that a provider's prompt cache can be judged per mode (`toolgate render
//! --stability`).

use serde_json::{Value, json};

use super::{Call, Provider, RenderError, Shape, Turn, answer_search, calls, render};
use crate::request::TOOL_SEARCH;
use crate::toolbox::{CALL_TOOL, Conversation, Toolbox};

/// One scripted turn of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The model answers in words.
    Talk,
    /// The model searches with this query.
    Search(String),
    /// The model calls the most recently loaded tool (or talks, if none is loaded).
    CallLoaded,
}

/// A deterministic session of `turns` turns over `toolbox`'s deferred tools: a search every
/// fourth turn for a tool taken in turn from the catalog (by the words of its name), a call
/// of what it loaded on the turn after, words otherwise.
pub fn script(toolbox: &Toolbox, turns: usize) -> Vec<Step> {
    let deferred: Vec<&str> =
        toolbox.visible().tools().iter().filter(|t| toolbox.is_deferred(t)).map(|t| t.name()).collect();
    (0..turns)
        .map(|i| match (i % 4, deferred.is_empty()) {
            (1, false) => {
                let name = deferred[(i / 4 * 7919) % deferred.len()];
                Step::Search(name.replace(['_', '-'], " "))
            }
            (2, _) => Step::CallLoaded,
            _ => Step::Talk,
        })
        .collect()
}

/// What one turn's request did to the cached prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnReport {
    /// The turn, from 1.
    pub turn: usize,
    /// What the model did on the turn before this request (`talk`, `search`, `call`).
    pub step: &'static str,
    /// Tools the step loaded.
    pub loaded: usize,
    /// Bytes of the prefix (tools, then system prompt).
    pub prefix_bytes: usize,
    /// Whether the prefix differs from the previous turn's.
    pub changed: bool,
    /// Whether the previous tools array (without its closing brackets) starts this one, and the
    /// system prompt is the same: the change only appended.
    pub append_only: bool,
    /// The first byte that differs, when the prefix changed.
    pub first_changed_byte: Option<usize>,
}

impl TurnReport {
    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "turn": self.turn,
            "step": self.step,
            "loaded": self.loaded,
            "prefix_bytes": self.prefix_bytes,
            "changed": self.changed,
            "append_only": self.append_only,
            "first_changed_byte": self.first_changed_byte,
        })
    }
}

/// The reply a model would send calling `name` with `input`, in `provider`'s shape (for
/// scripted sessions and tests): a `tool_use` block, a `tool_search_call` or a namespaced
/// `function_call`, a Gemini `functionCall`, a Chat `tool_calls` entry (in bridge mode a
/// tool other than `tool_search` is called through `call_tool`).
pub fn model_reply(provider: Provider, id: &str, name: &str, input: Value) -> Value {
    let chat_call = |name: &str, input: Value| {
        json!({"tool_calls": [{"id": id, "type": "function",
            "function": {"name": name, "arguments": input.to_string()}}]})
    };
    if provider == Provider::Bridge && name != TOOL_SEARCH {
        return chat_call(CALL_TOOL, json!({"name": name, "arguments": input}));
    }
    match provider.shape() {
        Shape::Anthropic => {
            json!({"content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
        }
        Shape::Responses if name == TOOL_SEARCH && provider == Provider::OpenAiResponses => {
            json!({"output": [{"type": "tool_search_call", "call_id": id, "execution": "client", "arguments": input}]})
        }
        Shape::Responses => {
            let (ns, f) = match name.split_once("__") {
                Some((ns, f)) if provider == Provider::OpenAiResponses => (ns, f),
                _ => ("", name),
            };
            let mut item =
                json!({"type": "function_call", "call_id": id, "name": f, "arguments": input.to_string()});
            if !ns.is_empty() {
                item["namespace"] = json!(ns);
            }
            json!({"output": [item]})
        }
        Shape::Gemini => {
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": name, "args": input}}]}}]})
        }
        Shape::Chat => chat_call(name, input),
    }
}

/// The model's reply for a step: a search, a call of the tool loaded last, or nothing.
fn reply(provider: Provider, step: &Step, id: &str, tool: Option<&str>) -> Value {
    match (step, tool) {
        (Step::Search(q), _) => model_reply(provider, id, TOOL_SEARCH, json!({"query": q, "limit": 3})),
        (Step::CallLoaded, Some(t)) => model_reply(provider, id, t, json!({})),
        _ => json!({}),
    }
}

/// Runs `steps` through `provider`'s loop over `toolbox`: each turn renders the request,
/// replays the scripted reply, answers searches through the toolbox and checks calls with it
/// (Anthropic's server-side search is played as the client-side one: its tools array is the
/// one measured). Returns one report per turn after the first request.
pub fn run(toolbox: &Toolbox, provider: Provider, steps: &[Step]) -> Result<Vec<TurnReport>, RenderError> {
    let mut conversation: Conversation = toolbox.conversation();
    let mut last: Turn = render(toolbox, &mut conversation, provider)?;
    let mut reports = Vec::with_capacity(steps.len());
    let mut recent: Option<String> = None;
    for (i, step) in steps.iter().enumerate() {
        let id = format!("call_{}", i + 1);
        let mut loaded = 0;
        let played =
            if matches!(provider, Provider::AnthropicServer(_)) { Provider::Anthropic } else { provider };
        for call in calls(played, &reply(played, step, &id, recent.as_deref())) {
            match call {
                Call::Search { id, arguments } => {
                    let before = conversation.active().len();
                    let _ = answer_search(toolbox, &mut conversation, played, &id, &arguments);
                    loaded += conversation.active().len().saturating_sub(before);
                    recent = conversation.active().last().cloned().or(recent);
                }
                Call::Tool { name, arguments, .. } => {
                    // The call goes through the gate (a call counts as a use for unloading);
                    // its answer is history, which the measured prefix does not hold.
                    let _ = toolbox.check(&mut conversation, &name, &arguments);
                }
            }
        }
        let next = render(toolbox, &mut conversation, provider)?;
        let (a, b) = (last.prefix(), next.prefix());
        let changed = a != b;
        let first_changed_byte =
            changed.then(|| a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len())));
        // An appended tool lands before the closing brackets (two of them for Gemini's one
        // `functionDeclarations` entry).
        let head = serde_json::to_vec(&last.tools).unwrap_or_default();
        let open = head.len() - head.iter().rev().take_while(|&&c| c == b']' || c == b'}').count();
        let append_only = changed && next.system == last.system && b.starts_with(&head[..open]);
        let step_name = match step {
            Step::Talk => "talk",
            Step::Search(_) => "search",
            Step::CallLoaded => "call",
        };
        reports.push(TurnReport {
            turn: i + 1,
            step: step_name,
            loaded,
            prefix_bytes: b.len(),
            changed,
            append_only,
            first_changed_byte,
        });
        last = next;
    }
    Ok(reports)
}
