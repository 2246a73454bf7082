//! Each provider mode over the embedded catalog: the documented constraints of its request,
//! a search that loads a tool, the call the gate then allows, and one it refuses.

use serde_json::{Value, json};

use super::*;
use crate::defer::{DeferConfig, DeferMode};
use crate::gate::{Decision, Denial};
use crate::{Catalog, Policy, ToolSpec};

const SHOT: &str = "playwright__playwright_screenshot";

fn toolbox(provider: Provider) -> Toolbox {
    Toolbox::builder(&Catalog::embedded(), Policy::permissive())
        .defer(DeferConfig { mode: DeferMode::On, ..DeferConfig::default() })
        .exposure(provider.exposure())
        .build()
        .unwrap()
}

fn search(query: &str) -> Value {
    json!({"query": query, "limit": 3})
}

#[test]
fn anthropic_sends_every_definition_deferred_but_the_search_tool_and_loads_by_reference() {
    let tb = toolbox(Provider::Anthropic);
    let mut chat = tb.conversation();
    let first = render(&tb, &mut chat, Provider::Anthropic).unwrap();
    assert_eq!(first.tools.len(), tb.visible().len() + 1, "every definition and tool_search");
    let eager: Vec<&Value> = first.tools.iter().filter(|t| t.get("defer_loading").is_none()).collect();
    assert_eq!(eager.len(), 1, "only the search tool is not deferred");
    assert_eq!(eager[0]["name"], "tool_search");
    assert!(eager[0]["input_schema"]["properties"]["query"].is_object());
    for t in first.tools.iter().filter(|t| t.get("defer_loading").is_some()) {
        assert!(t.get("cache_control").is_none(), "a deferred tool never carries cache_control: {t}");
    }
    assert!(eager[0].get("cache_control").is_some(), "the breakpoint is on the last eager tool");
    assert!(first.system.contains("playwright"), "the announcement names the deferred servers");

    // The model searches; the answer references the loaded tool, and it may run.
    let reply = json!({"content": [
        {"type": "text", "text": "Let me find a tool."},
        {"type": "tool_use", "id": "toolu_1", "name": "tool_search", "input": search("take a screenshot of a web page")},
    ]});
    let Call::Search { id, arguments } = calls(Provider::Anthropic, &reply).remove(0) else {
        panic!("a search")
    };
    let answer = answer_search(&tb, &mut chat, Provider::Anthropic, &id, &arguments);
    assert_eq!(answer["type"], "tool_result");
    assert_eq!(answer["tool_use_id"], "toolu_1");
    let refs: Vec<&str> =
        answer["content"].as_array().unwrap().iter().filter_map(|b| b["tool_name"].as_str()).collect();
    assert!(refs.contains(&SHOT), "{answer}");
    assert!(tb.check(&mut chat, SHOT, &json!({"name": "page"})).is_allow());

    // A loading turn changes nothing in the request prefix.
    let second = render(&tb, &mut chat, Provider::Anthropic).unwrap();
    assert_eq!(first.prefix(), second.prefix());

    // A tool the model never loaded is refused, whatever the provider sent.
    let never = "git__git_log";
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_2", "name": never, "input": {"repo_path": "."}}]});
    let Call::Tool { name, arguments, .. } = calls(Provider::Anthropic, &call).remove(0) else {
        panic!("a call")
    };
    match tb.check(&mut chat, &name, &arguments) {
        crate::gate::Decision::Deny(Denial::NotLoaded { .. }) => {}
        other => panic!("{never} must be refused as not loaded: {other:?}"),
    }
}

#[test]
fn anthropic_server_search_sends_its_tool_and_observes_the_references() {
    let provider = Provider::AnthropicServer(ServerSearch::Bm25);
    let tb = toolbox(provider);
    let mut chat = tb.conversation();
    let turn = render(&tb, &mut chat, provider).unwrap();
    assert_eq!(turn.tools[0]["type"], "tool_search_tool_bm25_20251119");
    assert!(turn.tools.iter().all(|t| t["name"] != "tool_search"), "no client-side search tool");
    assert!(!tb.check(&mut chat, SHOT, &json!({"name": "page"})).is_allow());
    let reply = json!({"content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "screenshot"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": SHOT}, {"type": "tool_reference", "tool_name": "nobody__nothing"}]}},
    ]});
    assert_eq!(observe(&tb, &mut chat, &reply), [SHOT]);
    assert!(calls(provider, &reply).is_empty(), "a server-side search is not the client's to run");
    assert!(tb.check(&mut chat, SHOT, &json!({"name": "page"})).is_allow());
    assert_eq!(render(&tb, &mut chat, provider).unwrap().prefix(), turn.prefix());
}

#[test]
fn openai_responses_uses_namespaces_and_answers_with_full_definitions() {
    let provider = Provider::OpenAiResponses;
    let tb = toolbox(provider);
    let mut chat = tb.conversation();
    let turn = render(&tb, &mut chat, provider).unwrap();
    assert_eq!(turn.tools[0]["type"], "tool_search");
    assert_eq!(turn.tools[0]["execution"], "client");
    let spaces: Vec<&Value> = turn.tools.iter().filter(|t| t["type"] == "namespace").collect();
    assert_eq!(spaces.len(), tb.visible().servers().len(), "one namespace per server");
    let playwright = spaces.iter().find(|n| n["name"] == "playwright").unwrap();
    assert!(playwright["tools"].as_array().unwrap().iter().all(|f| f["defer_loading"] == true));

    let reply = json!({"output": [
        {"type": "tool_search_call", "call_id": "ts_1", "execution": "client", "arguments": search("screenshot of a web page")},
    ]});
    let Call::Search { id, arguments } = calls(provider, &reply).remove(0) else { panic!("a search") };
    let output = answer_search(&tb, &mut chat, provider, &id, &arguments);
    assert_eq!(output["type"], "tool_search_output");
    assert_eq!(output["call_id"], "ts_1");
    let function = output["tools"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "playwright_screenshot")
        .expect("the loaded definition, under its namespace");
    assert!(function["parameters"]["properties"].is_object());

    let call = json!({"output": [{"type": "function_call", "call_id": "fc_1", "namespace": "playwright",
        "name": "playwright_screenshot", "arguments": "{\"name\": \"page\"}"}]});
    let Call::Tool { name, arguments, .. } = calls(provider, &call).remove(0) else { panic!("a call") };
    assert_eq!(name, SHOT);
    assert!(tb.check(&mut chat, &name, &arguments).is_allow());
    assert_eq!(render(&tb, &mut chat, provider).unwrap().prefix(), turn.prefix());

    // The discovered set comes back from the transcript.
    let rebuilt = tb.conversation_from_transcript(&[output]);
    assert!(rebuilt.active().iter().any(|n| n == SHOT));
}

#[test]
fn chat_appends_the_loaded_tools_and_keeps_the_announcement() {
    let provider = Provider::Chat(Dialect::OPENAI);
    let tb = toolbox(provider);
    let mut chat = tb.conversation();
    let first = render(&tb, &mut chat, provider).unwrap();
    assert_eq!(first.tools.len(), 1);
    assert_eq!(first.tools[0]["function"]["name"], "tool_search");
    let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "tool_search",
         "arguments": search("take a screenshot of a web page").to_string()}}]}}]});
    let Call::Search { id, arguments } = calls(provider, &reply).remove(0) else { panic!("a search") };
    let answer = answer_search(&tb, &mut chat, provider, &id, &arguments);
    assert_eq!(answer["role"], "tool");
    assert!(answer["content"].as_str().unwrap().contains(SHOT));
    let second = render(&tb, &mut chat, provider).unwrap();
    assert!(second.tools.len() > 1);
    assert_eq!(second.system, first.system, "the announcement is frozen");
    let (a, b) =
        (serde_json::to_string(&first.tools).unwrap(), serde_json::to_string(&second.tools).unwrap());
    assert!(b.starts_with(&a[..a.len() - 1]), "the loaded tools are appended");
}

#[test]
fn chat_refuses_names_and_counts_the_api_would_refuse() {
    // The catalog keeps names within 64 characters; Gemini's rule is stricter than that.
    let catalog =
        Catalog::builder().tool(ToolSpec::mcp("1password", "get_item", "Read a vault item")).build().unwrap();
    let tb = Toolbox::builder(&catalog, Policy::permissive())
        .defer(DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() })
        .build()
        .unwrap();
    assert!(render(&tb, &mut tb.conversation(), Provider::Chat(Dialect::OPENAI)).is_ok());
    let err = render(&tb, &mut tb.conversation(), Provider::Chat(Dialect::GEMINI)).unwrap_err();
    assert!(matches!(err, RenderError::BadName { .. }), "{err}");
    assert!(
        err.to_string().contains("`1password__get_item`")
            && err.to_string().contains("a letter or `_` first"),
        "{err}"
    );

    let mut builder = Catalog::builder();
    for i in 0..130 {
        builder = builder.tool(ToolSpec::mcp("srv", &format!("tool_{i}"), "A tool"));
    }
    // Deferral off, and budgets that let all of them through: the provider's cap decides.
    let budget = crate::config::BudgetConfig { first_turn: 600, dynamic: 600, hard: 600 };
    let policy =
        Policy::new(&crate::config::Config::<crate::config::NoHost> { budget, ..Default::default() }, None)
            .unwrap();
    let tb = Toolbox::builder(&builder.build().unwrap(), policy)
        .defer(DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() })
        .build()
        .unwrap();
    let err = render(&tb, &mut tb.conversation(), Provider::Chat(Dialect::OPENAI)).unwrap_err();
    assert_eq!(err, RenderError::TooManyTools { provider: "chat", count: 130, cap: 128 });
    let gemini = render(&tb, &mut tb.conversation(), Provider::Chat(Dialect::GEMINI)).unwrap();
    assert_eq!(gemini.tools[0]["functionDeclarations"].as_array().unwrap().len(), 130);
    assert!(render(&tb, &mut tb.conversation(), Provider::Chat(Dialect::VERTEX)).is_err());
}

#[test]
fn gemini_names_start_with_a_letter_and_calls_come_by_name() {
    assert!(Dialect::GEMINI.names.allows("github__create_issue"));
    assert!(Dialect::GEMINI.names.allows("a.b:c-d"));
    assert!(!Dialect::GEMINI.names.allows("1password__get"));
    assert!(Dialect::OPENAI.names.allows("1password__get"));
    assert!(!Dialect::OPENAI.names.allows("a.b"));
    let reply = json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "tool_search", "args": {"query": "weather"}}}]}}]});
    assert_eq!(
        calls(Provider::Chat(Dialect::GEMINI), &reply),
        [Call::Search { id: "tool_search".into(), arguments: json!({"query": "weather"}) }]
    );
}

#[test]
fn bridge_sends_two_tools_forever_and_reads_call_tool_as_the_tool_it_names() {
    let tb = toolbox(Provider::Bridge);
    let mut chat = tb.conversation();
    let first = render(&tb, &mut chat, Provider::Bridge).unwrap();
    let names: Vec<&str> = first.tools.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(names, ["tool_search", "call_tool"]);
    let _ = answer_search(&tb, &mut chat, Provider::Bridge, "c1", &search("take a screenshot of a web page"));
    assert_eq!(render(&tb, &mut chat, Provider::Bridge).unwrap().prefix(), first.prefix());
    let reply = json!({"tool_calls": [{"id": "c2", "function": {"name": "call_tool",
        "arguments": json!({"name": SHOT, "arguments": {"name": "page"}}).to_string()}}]});
    let Call::Tool { name, arguments, .. } = calls(Provider::Bridge, &reply).remove(0) else {
        panic!("a call")
    };
    assert_eq!(name, SHOT);
    assert!(tb.check(&mut chat, &name, &arguments).is_allow());
    // The same call_tool handed to the check whole is checked as the call it carries.
    let whole = json!({"name": SHOT, "arguments": {"name": "page"}});
    assert!(tb.check(&mut chat, "call_tool", &whole).is_allow());
    // A malformed one is refused with what is wrong, not read as a call of no tool.
    let reply = json!({"tool_calls": [{"id": "c3", "function": {"name": "call_tool",
        "arguments": json!({"name": SHOT, "arguments": "page"}).to_string()}}]});
    let Call::Tool { name, arguments, .. } = calls(Provider::Bridge, &reply).remove(0) else {
        panic!("a call")
    };
    assert_eq!(name, "call_tool");
    let refused = tb.check(&mut chat, &name, &arguments);
    assert!(
        matches!(&refused, Decision::Deny(d) if d.to_string().contains("`arguments` must be an object")),
        "{refused:?}"
    );
    // A native toolbox cannot render bridge mode, nor a bridge toolbox the others.
    assert!(matches!(
        render(&tb, &mut chat, Provider::Chat(Dialect::OPENAI)),
        Err(RenderError::Exposure { .. })
    ));
}

#[test]
fn history_for_an_endpoint_without_tool_search_has_no_references_left() {
    let messages = vec![json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "Loaded."},
            {"type": "tool_reference", "tool_name": SHOT}]}]})];
    assert_eq!(strip_for(Provider::Anthropic, &messages), messages);
    let stripped = serde_json::to_string(&strip_for(Provider::Chat(Dialect::OPENAI), &messages)).unwrap();
    assert!(!stripped.contains("tool_reference"), "{stripped}");
    assert!(stripped.contains(&format!("Tool loaded: {SHOT}")), "{stripped}");
    assert!(strip_for(Provider::OpenAiResponses, &messages)[0].to_string().contains("Tool loaded"));

    // OpenAI's search items stay for Responses and become messages for the others.
    let items = vec![
        json!({"type": "tool_search_call", "call_id": "ts_1", "execution": "client", "arguments": {"query": "screenshot"}}),
        json!({"type": "tool_search_output", "call_id": "ts_1", "execution": "client", "status": "completed",
               "tools": [{"type": "namespace", "name": "playwright", "tools": [{"type": "function", "name": "playwright_screenshot"}]}]}),
    ];
    assert_eq!(strip_for(Provider::OpenAiResponses, &items), items);
    let chat = strip_for(Provider::Chat(Dialect::OPENAI), &items);
    assert_eq!(chat[0]["role"], "assistant");
    assert_eq!(chat[1], json!({"role": "user", "content": format!("Tools loaded: {SHOT}")}));
}

#[test]
fn a_scripted_session_keeps_each_mode_s_prefix_as_promised() {
    for (name, provider) in Provider::NAMES {
        let tb = toolbox(provider);
        let steps = stability::script(&tb, 20);
        let reports = stability::run(&tb, provider, &steps).unwrap();
        assert_eq!(reports.len(), 20);
        let loading = reports.iter().filter(|r| r.loaded > 0).count();
        assert!(loading >= 4, "{name}: the script loads tools on five turns, {loading} did");
        for r in &reports {
            if r.loaded == 0 {
                assert!(!r.changed, "{name}: turn {} loaded nothing and changed the prefix", r.turn);
            }
            match provider {
                Provider::Chat(_) => assert_eq!(r.changed, r.loaded > 0, "{name}: turn {}", r.turn),
                _ => assert!(!r.changed, "{name}: turn {} changed the prefix", r.turn),
            }
            if r.changed {
                assert!(r.append_only, "{name}: turn {} changed more than it appended", r.turn);
            }
        }
    }
}

#[test]
fn models_with_tool_search_get_the_native_mode_and_every_other_model_injection() {
    let models = Models::builtin();
    assert_eq!(models.provider(Api::Anthropic, "claude-sonnet-4-5-20250929", true), Provider::Anthropic);
    assert_eq!(models.provider(Api::Anthropic, "claude-opus-4-8", true), Provider::Anthropic);
    // Older models, unknown ones and a proxy that cannot take the blocks: injection, never
    // deferred tools without a way to load them.
    assert_eq!(
        models.provider(Api::Anthropic, "claude-3-5-sonnet-20241022", true),
        Provider::Chat(Dialect::ANTHROPIC)
    );
    assert_eq!(models.provider(Api::Anthropic, "claude-opus-4-1", true), Provider::Chat(Dialect::ANTHROPIC));
    assert_eq!(
        models.provider(Api::Anthropic, "claude-sonnet-4-5", false),
        Provider::Chat(Dialect::ANTHROPIC)
    );
    assert_eq!(models.provider(Api::OpenAiResponses, "gpt-5.4-mini", true), Provider::OpenAiResponses);
    assert_eq!(models.provider(Api::OpenAiResponses, "gpt-5.6-sol", true), Provider::OpenAiResponses);
    assert_eq!(models.provider(Api::OpenAiResponses, "gpt-4.1", true), Provider::Chat(Dialect::RESPONSES));
    // A Responses model on Chat Completions has no tool_search there.
    assert_eq!(models.provider(Api::ChatCompletions, "gpt-5.4", true), Provider::Chat(Dialect::OPENAI));
    assert_eq!(models.provider(Api::Gemini, "gemini-3-pro", true), Provider::Chat(Dialect::GEMINI));

    // Users extend the table; their rules win, and a mode of another API is not taken.
    let mine = Models::with_rules([
        ("my-claude-*", "anthropic"),
        ("claude-sonnet-4-5*", "bridge"),
        ("qwen*", "anthropic"),
    ])
    .unwrap();
    assert_eq!(mine.provider(Api::Anthropic, "my-claude-1", true), Provider::Anthropic);
    assert_eq!(mine.provider(Api::Anthropic, "claude-sonnet-4-5", true), Provider::Bridge);
    assert_eq!(mine.provider(Api::ChatCompletions, "qwen3-coder", true), Provider::Chat(Dialect::OPENAI));
    let err = Models::with_rules([("x*", "native")]).unwrap_err();
    assert!(
        err.to_string().contains("unknown mode `native`") && err.to_string().contains("anthropic-inject"),
        "{err}"
    );
}

#[test]
fn a_sub_agent_renders_with_tool_search_and_only_what_its_profile_sees() {
    let config: crate::config::Config = crate::config::Config::from_toml(
        "t.toml",
        "[profiles.browser]\ntools = [\"playwright__*\"]\n",
        std::path::Path::new("."),
    )
    .unwrap();
    let policy = Policy::new(&config, None).unwrap();
    let parent = Toolbox::builder(&Catalog::embedded(), policy.clone())
        .defer(DeferConfig { mode: DeferMode::On, ..DeferConfig::default() })
        .build()
        .unwrap();
    let mut chat = parent.conversation();
    let _ = answer_search(
        &parent,
        &mut chat,
        Provider::Anthropic,
        "t1",
        &json!({"query": format!("select:git__git_log,{SHOT}")}),
    );
    let (child, mut sub, _) = parent.sub_agent(policy.child("browser").unwrap(), &chat).unwrap();
    assert_eq!(sub.active(), [SHOT], "the parent's activation the profile allows");
    let turn = render(&child, &mut sub, Provider::Anthropic).unwrap();
    let eager: Vec<&Value> = turn.tools.iter().filter(|t| t.get("defer_loading").is_none()).collect();
    assert_eq!(eager.len(), 1);
    assert_eq!(eager[0]["name"], "tool_search", "a deferred tool is still visible, so search stays");
    assert!(turn.tools.iter().skip(1).all(|t| t["name"].as_str().unwrap().starts_with("playwright__")));
    assert!(child.check(&mut sub, SHOT, &json!({"name": "page"})).is_allow());
    assert!(!child.check(&mut sub, "git__git_log", &json!({"repo_path": "."})).is_allow());
}
