//! A whole agent loop on the library: the budgets (96 / 112 / 128), first-turn preselection
//! where the mode injects tools, each turn rendered for the provider, the reply read back,
//! searches answered by the toolbox (which unloads the least recently used tools past the
//! budgets), calls run only when the gate allows them.
//!
//! `cargo run -p toolgate --example agent -- --endpoint URL --api API --model NAME [TASK]`
//!
//! `API` is `anthropic` (POST URL/v1/messages), `openai-responses` (URL/v1/responses) or `chat`
//! (URL/v1/chat/completions); the model table (`render::Models`) picks the mode for `NAME`:
//! native tool search where the model has it, client-side injection otherwise. The endpoint
//! may be any server that speaks the API over HTTP (reqwest, without TLS here), such as
//! `e2e/scripted_provider.py`, which CI runs it against (`crates/toolgate/tests/agent_loop.rs`);
//! no key is sent. The catalog is four small tools, of which only `weather__forecast` does
//! anything.

#![allow(clippy::print_stdout)]

use serde_json::{Value, json};
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate::render::{self, Api, Call, Models, Provider, Shape};
use toolgate::toolbox::Decision;
use toolgate::{Catalog, Policy, Toolbox};

/// Turns before the loop gives up.
const MAX_TURNS: usize = 8;

fn catalog() -> Catalog {
    // Four small tools of two servers (`crates/toolgate/tests/fixtures/weather-git.jsonl`).
    Catalog::from_text("weather-git.jsonl", include_str!("../tests/fixtures/weather-git.jsonl"))
        .expect("a valid catalog")
}

/// Runs a tool the gate allowed.
fn run_tool(name: &str, arguments: &Value) -> String {
    match name {
        "weather__forecast" => format!("Sunny, 21 °C in {}", arguments["city"].as_str().unwrap_or("?")),
        _ => "done".to_owned(),
    }
}

/// POSTs `body` to `ENDPOINT/PATH` and returns the JSON reply, or the error the endpoint gave.
fn post(
    client: &reqwest::blocking::Client,
    endpoint: &str,
    path: &str,
    body: &Value,
) -> Result<Value, String> {
    let url = format!("{}{path}", endpoint.trim_end_matches('/'));
    let response = client.post(&url).json(body).send().map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let reply: Value = response.json().map_err(|e| format!("{url}: not JSON: {e}"))?;
    if !status.is_success() {
        return Err(format!("{url}: {status}: {}", reply["error"]["message"]));
    }
    Ok(reply)
}

/// The conversation so far, in the API's own shape.
struct History {
    items: Vec<Value>,
}

impl History {
    fn new(task: &str) -> History {
        History { items: vec![json!({"role": "user", "content": task})] }
    }

    /// The request body of a turn.
    fn request(&self, shape: Shape, model: &str, turn: &render::Turn) -> (&'static str, Value) {
        match shape {
            Shape::Anthropic => (
                "/v1/messages",
                json!({"model": model, "max_tokens": 1024, "system": turn.system,
                "messages": self.items, "tools": turn.tools}),
            ),
            Shape::Responses => (
                "/v1/responses",
                json!({"model": model, "instructions": turn.system,
                "input": self.items, "tools": turn.tools}),
            ),
            Shape::Chat | Shape::Gemini => {
                let mut messages = vec![json!({"role": "system", "content": turn.system})];
                messages.extend(self.items.iter().cloned());
                ("/v1/chat/completions", json!({"model": model, "messages": messages, "tools": turn.tools}))
            }
        }
    }

    /// Takes in the model's reply and the answers to its calls. Returns the reply's text, if
    /// it has words and no calls.
    fn record(&mut self, shape: Shape, reply: &Value, answers: Vec<Value>) -> Option<String> {
        let text = match shape {
            Shape::Anthropic => {
                self.items.push(json!({"role": "assistant", "content": reply["content"]}));
                if !answers.is_empty() {
                    self.items.push(json!({"role": "user", "content": answers}));
                }
                reply["content"].as_array()?.iter().find_map(|b| b["text"].as_str()).map(str::to_owned)
            }
            Shape::Responses => {
                let output = reply["output"].as_array().cloned().unwrap_or_default();
                let text = output
                    .iter()
                    .find(|i| i["type"] == "message")
                    .and_then(|m| m["content"][0]["text"].as_str());
                let text = text.map(str::to_owned);
                self.items.extend(output);
                self.items.extend(answers);
                text
            }
            Shape::Chat | Shape::Gemini => {
                let message = reply.pointer("/choices/0/message").cloned().unwrap_or_default();
                let text = message["content"].as_str().map(str::to_owned);
                self.items.push(message);
                self.items.extend(answers);
                text
            }
        };
        text.filter(|t| !t.is_empty())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut endpoint, mut api, mut model, mut task) = (None, None, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--endpoint" => endpoint = args.next(),
            "--api" => api = args.next(),
            "--model" => model = args.next(),
            _ => task = Some(a),
        }
    }
    let usage =
        "usage: agent --endpoint http://HOST:PORT --api anthropic|openai-responses|chat --model NAME [TASK]";
    let (endpoint, model) = (endpoint.ok_or(usage)?, model.ok_or(usage)?);
    let api = api.as_deref().and_then(Api::from_name).ok_or(usage)?;
    let task = task.unwrap_or_else(|| "What will the weather be in Paris?".to_owned());

    let provider: Provider = Models::builtin().provider(api, &model, true);
    let shape = provider.shape();
    // EthanKit's budgets: 96 definitions on the first turn, 112 once tools load, never 128;
    // and the git server keeps one tool loaded at a time (a search past it unloads the least
    // recently used one).
    let policy = Policy::builder().budget(96, 112, 128).max_active("git", 1).build()?;
    let toolbox = Toolbox::builder(&catalog(), policy)
        .defer(DeferConfig { mode: DeferMode::On, ..DeferConfig::default() })
        .exposure(provider.exposure())
        .build()?;
    let mut chat = toolbox.conversation();
    if !provider.is_native_deferral() && provider != Provider::Bridge {
        // Injected modes start with the tools the request itself asks for; native modes leave
        // the first search to the model.
        let first = toolbox.preselect(&mut chat, &task, "")?;
        let names: Vec<&str> = first.iter().map(|t| t.qualified_name()).collect();
        println!("preselected: {}", names.join(", "));
    }
    let client = reqwest::blocking::Client::new();
    let mut history = History::new(&task);
    println!(
        "model {model} on {}: mode {}",
        Api::NAMES.iter().find(|(_, a)| *a == api).map_or("?", |(n, _)| n),
        provider.name()
    );
    for n in 1..=MAX_TURNS {
        let turn = render::render(&toolbox, &mut chat, provider)?;
        let (path, body) = history.request(shape, &model, &turn);
        let reply = post(&client, &endpoint, path, &body)?;
        let mut answers = Vec::new();
        for call in render::calls(provider, &reply) {
            match call {
                Call::Search { id, arguments } => {
                    println!("turn {n}: tool_search {arguments}");
                    answers.push(render::answer_search(&toolbox, &mut chat, provider, &id, &arguments));
                }
                Call::Tool { id, name, arguments } => match toolbox.check(&mut chat, &name, &arguments) {
                    Decision::Allow(tool) => {
                        let result = run_tool(tool.qualified_name(), &arguments);
                        println!("turn {n}: {name} allowed: {result}");
                        answers.push(render::tool_output(provider, &id, &result, false));
                    }
                    Decision::Deny(denial) => {
                        println!("turn {n}: {name} refused: {denial}");
                        answers.push(render::tool_output(provider, &id, &denial.to_string(), true));
                    }
                },
            }
        }
        if let Some(text) = history.record(shape, &reply, answers) {
            println!("turn {n}: answer: {text}");
            return Ok(());
        }
    }
    Err(format!("no answer after {MAX_TURNS} turns").into())
}
