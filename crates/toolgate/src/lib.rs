//! toolgate: an AI agent works with thousands of tools while the model sees, each turn, only
//! the few definitions it needs.
//!
//! An agent loop on it, whole (`examples/agent.rs` is the same loop over HTTP with reqwest,
//! budgets and first-turn preselection, run in CI against a scripted endpoint for Anthropic
//! Messages, OpenAI Responses and Chat Completions):
//!
//! ```
//! use serde_json::{Value, json};
//! use toolgate::toolbox::Decision;
//! use toolgate::render::{self, Api, Call, Models};
//! use toolgate::{Catalog, Policy, Toolbox};
//!
//! // Stands in for the provider: searches, calls what it found, then answers.
//! fn model(turn: usize, request: &Value) -> Value {
//!     assert!(request["tools"].as_array().unwrap().len() > 500, "every definition, deferred");
//!     let block = |name: &str, input: Value| json!({"type": "tool_use", "id": format!("t{turn}"), "name": name, "input": input});
//!     match turn {
//!         0 => json!({"content": [block("tool_search", json!({"query": "take a screenshot of a web page", "limit": 1}))]}),
//!         1 => json!({"content": [block("playwright__playwright_screenshot", json!({"name": "home"}))]}),
//!         _ => json!({"content": [{"type": "text", "text": "Here is the screenshot."}]}),
//!     }
//! }
//!
//! // The model table gives the mode: Anthropic's deferred tools and `tool_reference` here.
//! let provider = Models::builtin().provider(Api::Anthropic, "claude-sonnet-4-5", true);
//! let toolbox = Toolbox::builder(&Catalog::embedded(), Policy::permissive()).exposure(provider.exposure()).build()?;
//! let mut chat = toolbox.conversation();
//! let mut messages = vec![json!({"role": "user", "content": "Screenshot my home page"})];
//! let mut ran = Vec::new();
//! for turn in 0.. {
//!     let request = render::render(&toolbox, &mut chat, provider)?;
//!     let reply = model(turn, &json!({"system": request.system, "tools": request.tools, "messages": messages}));
//!     let mut answers = Vec::new();
//!     for call in render::calls(provider, &reply) {
//!         answers.push(match call {
//!             Call::Search { id, arguments } => render::answer_search(&toolbox, &mut chat, provider, &id, &arguments),
//!             Call::Tool { id, name, arguments } => match toolbox.check(&mut chat, &name, &arguments) {
//!                 Decision::Allow(tool) => {
//!                     ran.push(tool.qualified_name().to_owned()); // run it here
//!                     render::tool_output(provider, &id, "saved home.png", false)
//!                 }
//!                 Decision::Deny(denial) => render::tool_output(provider, &id, &denial.to_string(), true),
//!             },
//!         });
//!     }
//!     messages.push(json!({"role": "assistant", "content": reply["content"]}));
//!     if answers.is_empty() {
//!         break;
//!     }
//!     messages.push(json!({"role": "user", "content": answers}));
//! }
//! assert_eq!(ran, ["playwright__playwright_screenshot"], "found by search, allowed by the gate");
//! assert_eq!(messages.len(), 6, "the task, then a search, a call and an answer with their results");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The full [catalog] stays on the host. Each turn the model gets the core tools,
//! the `tool_search` meta-tool and the tools it loaded (its [`Conversation`]); everything else is
//! [deferred](defer) and known by name only. Search runs over an [index](search) with the
//! query language of Claude Code's ToolSearch and a field-weighted BM25 ranker; [render] speaks
//! each provider's wire shapes.
//!
//! Everything goes through one facade: a [`Toolbox`] (one per catalog snapshot, subject and
//! settings) and a [`Conversation`] (one per chat or MCP session). One turn, end to end:
//!
//! ```
//! use serde_json::json;
//! use toolgate::toolbox::{Decision, Denial};
//! use toolgate::{Catalog, Policy, Toolbox};
//!
//! // The catalog: 527 real MCP tools compiled into the library (or Catalog::from_path), seen
//! // by a subject under a policy (Policy::new(&config, profile) reads toolgate.toml's rules;
//! // Policy::builder() writes them in code: .budget(96, 112, 128).max_active("git", 1)).
//! let toolbox = Toolbox::builder(&Catalog::embedded(), Policy::permissive()).build()?;
//! let mut chat = toolbox.conversation();
//!
//! // First request: core tools and tool_search, with the deferred names announced once.
//! assert_eq!(toolbox.tools(&mut chat)?.len(), 1);
//! assert!(toolbox.briefing().announcement(&mut chat).contains("\nplaywright: clear_codegen_session, "));
//!
//! // The model calls tool_search; the hits join the active set.
//! let found = toolbox.tool_search(&mut chat, &json!({"query": "take a screenshot of a web page", "limit": 3}))?;
//! println!("{}", found.text());
//! assert!(chat.active().iter().any(|n| n == "playwright__playwright_screenshot"));
//!
//! // Next request: the loaded tools follow tool_search, with their full schemas.
//! let tools = toolbox.tools(&mut chat)?;
//! assert_eq!(tools[0].qualified_name(), "tool_search");
//! assert_eq!(tools.len(), 4);
//!
//! // The gate: only what this conversation was shown, allowed now, with valid arguments.
//! let shot = toolbox.check(&mut chat, "playwright__playwright_screenshot", &json!({"name": "home"}));
//! assert!(matches!(shot, Decision::Allow(t) if t.server() == "playwright"));
//! let log = toolbox.check(&mut chat, "git__git_log", &json!({"repo_path": "."}));
//! assert!(matches!(log, Decision::Deny(Denial::NotLoaded { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod budget;
pub use toolgate_catalog as catalog;
pub mod config;
pub mod defer;
pub use toolgate_catalog::files;
mod gate;
mod grant;
pub use toolgate_catalog::naming;
pub mod policy;
mod preselect;
pub mod render;
mod request;
mod schema;
pub mod search;
pub use toolgate_catalog::secret;
mod session;
pub mod tokens;
pub mod toolbox;

pub use catalog::{Catalog, Tool, ToolId, ToolSpec};
pub use grant::GrantKey;
pub use policy::Policy;
pub use search::{Index, Strategy};
pub use toolbox::{Conversation, Toolbox};
