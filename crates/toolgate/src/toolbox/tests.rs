//! Tests of the facade: the execution invariant (shown, allowed now, valid arguments),
//! definition changes across snapshots, every spelling of a denied name, and budgets.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::catalog::ToolSpec;
use crate::config::Config;

fn catalog(specs: Vec<ToolSpec>) -> Catalog {
    specs.into_iter().fold(Catalog::builder(), |b, s| b.tool(s)).build().unwrap()
}

fn config(text: &str) -> Config {
    Config::from_toml("toolgate.toml", text, Path::new(".")).unwrap()
}

fn on() -> DeferConfig {
    DeferConfig { mode: DeferMode::On, ..DeferConfig::default() }
}

#[test]
fn a_tool_runs_only_after_it_was_shown_in_its_current_definition() {
    let cat = catalog(vec![
        ToolSpec::mcp("fs", "write_file", "Write a file"),
        ToolSpec::mcp("fs", "read_file", "Read"),
    ]);
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = toolbox.conversation();
    let d = toolbox.check(&mut chat, "fs__write_file", &json!({}));
    assert!(matches!(d, Decision::Deny(Denial::NotLoaded { .. })), "{d:?}");
    toolbox.tool_search(&mut chat, &json!({"query": "select:fs__write_file"})).unwrap();
    assert!(toolbox.check(&mut chat, "mcp__fs__write_file", &json!({})).is_allow());

    // The upstream redefines the tool: the next toolbox unloads it and says so.
    let changed = catalog(vec![
        ToolSpec::mcp("fs", "write_file", "Deletes EVERYTHING"),
        ToolSpec::mcp("fs", "read_file", "Read"),
    ]);
    let next = Toolbox::builder(&changed, Policy::permissive()).defer(on()).build().unwrap();
    let d = next.check(&mut chat, "fs__write_file", &json!({}));
    assert!(matches!(d, Decision::Deny(Denial::Changed { .. })), "{d:?}");
    assert!(chat.active().is_empty());
    let found = next.tool_search(&mut chat, &json!({"query": "select:fs__write_file"})).unwrap();
    assert_eq!(found.changed, ["fs__write_file"]);
    assert!(found.text().starts_with("Definitions changed"), "{}", found.text());
    assert!(next.check(&mut chat, "fs__write_file", &json!({})).is_allow());
}

#[test]
fn deferral_off_lists_every_tool_but_checks_the_same() {
    let cat = catalog(vec![ToolSpec::mcp("fs", "write_file", "")]);
    let off = DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() };
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).defer(off).build().unwrap();
    let mut chat = toolbox.conversation();
    assert!(!toolbox.check(&mut chat, "fs__write_file", &json!({})).is_allow(), "not listed yet");
    assert_eq!(toolbox.tools(&mut chat).unwrap().len(), 1);
    assert!(toolbox.check(&mut chat, "fs__write_file", &json!({})).is_allow());
}

#[test]
fn a_schema_that_does_not_compile_refuses_the_call() {
    let cat = catalog(vec![ToolSpec::mcp("s", "t", "").with_schema(json!({"type": 12}))]);
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = toolbox.conversation();
    toolbox.tool_search(&mut chat, &json!({"query": "select:s__t"})).unwrap();
    let d = toolbox.check(&mut chat, "s__t", &json!({}));
    assert!(matches!(d, Decision::Deny(Denial::BadSchema { .. })), "{d:?}");
}

#[test]
fn a_denied_server_is_denied_under_every_spelling_of_its_key() {
    let specs = || {
        vec![
            ToolSpec::mcp("io.github.acme/files", "write_file", ""),
            ToolSpec::mcp("Docs", "search", ""),
            ToolSpec::mcp("fs2_", "delete", ""),
            ToolSpec::mcp("fk", "delete_repo", ""),
            ToolSpec::mcp("fk", "delete.repo", ""),
            ToolSpec::mcp("fk", "list", ""),
        ]
    };
    for deny in [
        "io.github.acme/files",
        "io_github_acme_files",
        "io.github.*",
        "IO.GITHUB.ACME/FILES__write_file",
        "io_github_acme_files__*",
        "mcp__io.github.acme/files",
    ] {
        let config = config(&format!("[policy]\ndeny = [{deny:?}]\n"));
        let toolbox =
            Toolbox::builder(&catalog(specs()), Policy::new(&config, None).unwrap()).build().unwrap();
        assert!(toolbox.visible().tools().iter().all(|t| t.server() != "io.github.acme/files"), "{deny}");
        assert!(
            !toolbox.policy.decide_server("io.github.acme/files").is_allow() || deny.contains("write_file")
        );
    }
    let config = config("[policy]\ndeny = [\"docs\", \"fs2_\", \"fk__delete_repo\"]\n");
    let toolbox = Toolbox::builder(&catalog(specs()), Policy::new(&config, None).unwrap()).build().unwrap();
    let names: Vec<&str> = toolbox.visible().tools().iter().map(|t| t.qualified_name()).collect();
    assert!(names.iter().all(|n| !n.starts_with("Docs") && !n.starts_with("fs2")), "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with("fk__delete")), "both spellings of delete_repo: {names:?}");
    let mut chat = toolbox.conversation();
    let d = toolbox.check(&mut chat, "fk__delete_repo", &json!({}));
    assert!(matches!(d, Decision::Deny(Denial::Forbidden { .. })), "{d:?}");
}

#[test]
fn bridge_counts_call_tool_and_required_tools_that_do_not_fit_are_an_error() {
    let specs: Vec<ToolSpec> = (0..4).map(|i| ToolSpec::mcp("s", &format!("t{i}"), "")).collect();
    let config =
        config("[budget]\nfirst_turn = 4\ndynamic = 4\nhard = 4\n[servers.s]\npinned = [\"t0\", \"t1\"]\n");
    let policy = Policy::new(&config, None).unwrap();
    let native = Toolbox::builder(&catalog(specs.clone()), policy.clone()).defer(on()).build().unwrap();
    assert_eq!(native.conversation().active(), ["s__t0", "s__t1"]);
    let config3 = config.clone();
    let mut tight = config3;
    tight.budget.first_turn = 3;
    let bridge = Toolbox::builder(&catalog(specs), Policy::new(&tight, None).unwrap())
        .exposure(Exposure::Bridge)
        .build();
    let err = bridge.unwrap_err();
    assert!(matches!(err, PolicyError::RequiredOverFirstTurn { fixed: 2, .. }), "{err:?}");
}

#[test]
fn the_tightest_exposure_is_the_one_that_sends_more_meta_tools() {
    let specs: Vec<ToolSpec> = (0..4).map(|i| ToolSpec::mcp("s", &format!("t{i}"), "")).collect();
    let meta = |exposure| {
        let toolbox = Toolbox::builder(&catalog(specs.clone()), Policy::permissive())
            .defer(on())
            .exposure(exposure)
            .build()
            .unwrap();
        toolbox.about().meta_tools().len()
    };
    assert!(meta(Exposure::Bridge) > meta(Exposure::Native));
    assert_eq!(Exposure::tightest(None), Exposure::Bridge, "chosen per client: bridge may come");
    assert_eq!(Exposure::tightest(Some(Exposure::Native)), Exposure::Native);
    assert_eq!(Exposure::tightest(Some(Exposure::Bridge)), Exposure::Bridge);
}

#[test]
fn ids_are_never_exposed_so_toolboxes_cannot_be_mixed() {
    // Two snapshots that number the same tool differently: a conversation carries names, so
    // the second toolbox still finds what the first loaded.
    let a = catalog(vec![ToolSpec::mcp("x", "one", ""), ToolSpec::mcp("x", "two", "")]);
    let b = catalog(vec![ToolSpec::mcp("x", "two", ""), ToolSpec::mcp("x", "one", "")]);
    let first = Toolbox::builder(&a, Policy::permissive()).defer(on()).build().unwrap();
    let second = Toolbox::builder(&b, Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = first.conversation();
    first.tool_search(&mut chat, &json!({"query": "select:x__two"})).unwrap();
    let Decision::Allow(tool) = second.check(&mut chat, "x__two", &json!({})) else { panic!() };
    assert_eq!(tool.name(), "two");
    assert!(!second.check(&mut chat, "x__one", &json!({})).is_allow());
}

#[test]
fn a_conversation_rebuilt_from_a_transcript_runs_its_tools_only_once_listed_again() {
    let cat = catalog(vec![ToolSpec::mcp("git", "git_log", ""), ToolSpec::mcp("git", "git_push", "")]);
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).defer(on()).build().unwrap();
    let transcript = [json!({"role": "user", "content": [
        {"type": "tool_result", "content": [{"type": "tool_reference", "tool_name": "git__git_log"}]}
    ]})];
    let mut chat = toolbox.conversation_from_transcript(&transcript);
    assert_eq!(chat.active(), ["git__git_log"]);
    let d = toolbox.check(&mut chat, "git__git_log", &json!({}));
    assert!(
        matches!(d, Decision::Deny(Denial::NotLoaded { .. })),
        "not shown to this conversation yet: {d:?}"
    );
    assert_eq!(toolbox.tools(&mut chat).unwrap().len(), 2);
    assert!(toolbox.check(&mut chat, "git__git_log", &json!({})).is_allow());
    // The boundary record carries the set across a compaction.
    let again = toolbox.conversation_from_transcript(&[toolbox.boundary(&chat)]);
    assert_eq!(again.active(), ["git__git_log"]);
}

#[test]
fn a_sub_agent_inherits_only_what_its_profile_allows_and_keeps_tool_search() {
    let cat = catalog(vec![ToolSpec::mcp("git", "git_log", ""), ToolSpec::mcp("git", "git_push", "")]);
    let config = config("[profiles.reviewer]\ndisallowed_tools = [\"*__git_push\"]\n");
    let parent = Toolbox::builder(&cat, Policy::new(&config, None).unwrap()).defer(on()).build().unwrap();
    let mut chat = parent.conversation();
    parent.tool_search(&mut chat, &json!({"query": "select:git__git_log,git__git_push"})).unwrap();
    let child = parent.policy.child("reviewer").unwrap();
    let (toolbox, mut sub, audit) = parent.sub_agent(child, &chat).unwrap();
    assert_eq!(sub.active(), ["git__git_log"]);
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert!(toolbox.check(&mut sub, "git__git_log", &json!({})).is_allow(), "shown to the parent, inherited");
    assert!(!toolbox.check(&mut sub, "git__git_push", &json!({})).is_allow());
    assert_eq!(toolbox.about().meta_tools().len(), 1, "tool_search stays");
}

#[test]
fn an_index_is_shared_only_over_the_same_visible_tools_and_a_quarantined_call_says_so() {
    let cat =
        catalog(vec![ToolSpec::mcp("fs", "read_file", "Read"), ToolSpec::mcp("fs", "delete_file", "Delete")]);
    let native = Toolbox::builder(&cat, Policy::permissive()).build().unwrap();
    let bridge = Toolbox::builder(&cat, Policy::permissive())
        .exposure(Exposure::Bridge)
        .shared_index(native.shared_index())
        .build()
        .unwrap();
    assert!(Arc::ptr_eq(&native.shared_index(), &bridge.shared_index()));
    // A subject that sees less gets its own index: the shared one would find a hidden tool.
    let policy = Policy::new(&config("[policy]\ndeny = [\"*delete*\"]\n"), None).unwrap();
    let narrow = Toolbox::builder(&cat, policy).shared_index(native.shared_index()).build().unwrap();
    assert!(!Arc::ptr_eq(&native.shared_index(), &narrow.shared_index()));
    assert_eq!(narrow.index.catalog().len(), 1);

    let held = catalog(vec![ToolSpec::mcp("fs", "wipe", "Wipe")]);
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).quarantined(held).build().unwrap();
    let mut conversation = toolbox.conversation();
    match toolbox.check(&mut conversation, "FS__WIPE", &json!({})) {
        Decision::Deny(d @ Denial::Quarantined { .. }) => assert!(d.to_string().contains("held for review")),
        other => panic!("{other:?}"),
    }
}

/// `tool_search`'s description as a conversation is listed it.
fn search_description(toolbox: &Toolbox, chat: &mut Conversation) -> String {
    let list = toolbox.tools(chat).unwrap();
    let search =
        list.iter().find(|t| t.qualified_name() == request::TOOL_SEARCH).expect("tool_search is listed");
    search.description().to_owned()
}

#[test]
fn servers_that_start_after_the_announcement_was_fixed_are_told_in_tool_search() {
    let early = vec![ToolSpec::mcp("fs", "read_file", "Read"), ToolSpec::mcp("fs", "write_file", "Write")];
    let first = catalog(early.clone());
    let toolbox = Toolbox::builder(&first, Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = toolbox.conversation();
    let announced = toolbox.briefing().announcement(&mut chat);
    assert!(announced.contains("fs: read_file, write_file"), "{announced}");
    let usual = search_description(&toolbox, &mut chat);
    assert!(!usual.contains("deferred-tools-added"), "nothing is late yet: {usual}");

    // The memory server finishes starting after the instructions went out.
    let mut later = early.clone();
    later.push(ToolSpec::mcp("memory", "create_entities", "Create"));
    later.push(ToolSpec::mcp("memory", "read_graph", "Read the graph"));
    let next = Toolbox::builder(&catalog(later), Policy::permissive()).defer(on()).build().unwrap();
    let told = search_description(&next, &mut chat);
    assert!(told.starts_with(&usual), "the usual description comes first");
    assert!(
        told.contains("<deferred-tools-added>\nmemory: create_entities, read_graph\n</deferred-tools-added>"),
        "{told}"
    );
    assert!(!told.contains("fs: "), "names already announced are not repeated: {told}");
    assert_eq!(
        next.briefing().announcement(&mut chat),
        announced,
        "the announcement itself stays byte-identical"
    );

    // A conversation that starts now is told everything in its announcement instead.
    let mut fresh = next.conversation();
    next.briefing().announcement(&mut fresh);
    assert_eq!(search_description(&next, &mut fresh), usual);

    // The news survives the session store: read back, the conversation is told the same.
    let mut back = Conversation::from_json(&chat.to_json()).unwrap();
    assert_eq!(search_description(&next, &mut back), told);
}

#[test]
fn an_announcement_fixed_before_any_server_was_ready_leaves_every_name_to_the_news() {
    let empty = Toolbox::builder(&Catalog::default(), Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = empty.conversation();
    assert_eq!(&*empty.briefing().announcement(&mut chat), "");
    let cat = catalog(vec![ToolSpec::mcp("fs", "read_file", "Read")]);
    let next = Toolbox::builder(&cat, Policy::permissive()).defer(on()).build().unwrap();
    assert!(search_description(&next, &mut chat).contains("<deferred-tools-added>\nfs: read_file\n"));
}

#[test]
fn the_news_stays_within_its_budget_whatever_the_number_of_late_tools() {
    let empty = Toolbox::builder(&Catalog::default(), Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = empty.conversation();
    empty.briefing().announcement(&mut chat);
    let many: Vec<ToolSpec> = (0..40)
        .flat_map(|s| {
            (0..30).map(move |t| ToolSpec::mcp(&format!("server{s:02}"), &format!("tool_number_{t:02}"), ""))
        })
        .collect();
    let next = Toolbox::builder(&catalog(many), Policy::permissive()).defer(on()).build().unwrap();
    let told = search_description(&next, &mut chat);
    let usual = request::tool_search_tool().description().len();
    assert!(told.len() <= usual + request::NEWS_BUDGET, "{} bytes", told.len());
    assert!(told.ends_with("</deferred-tools-added>"), "{told}");
    assert!(told.contains("find them with tool_search"), "the rest are counted: {told}");
}

#[test]
fn an_announcement_reads_back_as_the_names_it_told() {
    let names: Vec<String> =
        (0..400).map(|i| format!("server{:03}__tool_with_a_long_name_{i}", i / 4)).collect();
    let text = request::grouped_announcement(names.iter().map(String::as_str), 4096);
    let told = request::Told::read(&text);
    assert!(names.iter().all(|n| told.covers(n)), "every name is listed, counted or past the cut");
    assert!(text.contains(" more servers with "), "the budget cut the listing: {text}");
    // Past the cut the text names no server, so an unnamed one may have been among them.
    assert!(told.covers("brand_new__tool"));
    let short = request::Told::read(&request::grouped_announcement(["fs__read", "fs__write"], 4096));
    assert!(short.covers("fs__read") && !short.covers("fs__delete") && !short.covers("memory__read"));
}

#[test]
fn with_no_conversation_on_the_host_a_grant_is_what_shows_a_tool() {
    use crate::grant::{GrantKey, GrantProblem};
    use std::time::{Duration, SystemTime};
    let cat = catalog(vec![
        ToolSpec::mcp("git", "git_log", "Show the log"),
        ToolSpec::mcp("git", "git_push", "Push commits"),
    ]);
    let config = config("[profiles.reviewer]\ndisallowed_tools = [\"*__git_push\"]\n");
    let build = |cat: &Catalog, profile: Option<&str>| {
        let root = Policy::new(&config, None).unwrap();
        let policy = match profile {
            Some(name) => root.child(name).unwrap(),
            None => root,
        };
        Toolbox::builder(cat, policy).exposure(Exposure::Bridge).granted(true).build().unwrap()
    };
    let key = GrantKey::new(b"shared by every replica", Duration::from_secs(600));
    let now = SystemTime::now();
    // One replica searches: the outcome carries a grant for what it loaded, and shows it.
    let first = build(&cat, None);
    assert!(
        first.about().meta_tools().iter().any(|t| t.input_schema()["required"] == json!(["name", "grant"]))
    );
    let mut searching = first.conversation();
    let outcome = first
        .grants(&key, now)
        .tool_search(&mut searching, &json!({"query": "select:git__git_log"}))
        .unwrap();
    let grant = outcome.grants.iter().find(|(n, _)| n == "git__git_log").unwrap().1.clone();
    assert!(outcome.text().contains(&format!("grant: {grant}")), "{}", outcome.text());
    assert_eq!(outcome.to_json()["grants"]["git__git_log"], json!(grant));

    // Another replica, a fresh conversation per request: the grant admits the tool, then the
    // same check as any session's decides.
    let second = build(&cat, None);
    let mut call = second.conversation();
    assert!(matches!(
        second.check(&mut call, "git__git_log", &json!({})),
        Decision::Deny(Denial::NotLoaded { .. })
    ));
    second.grants(&key, now).admit(&mut call, "git__git_log", &grant).unwrap();
    assert!(second.check(&mut call, "git__git_log", &json!({})).is_allow());
    // Not for another tool, nor another subject (whatever it may see), nor with another key.
    let mut other = second.conversation();
    assert_eq!(
        second.grants(&key, now).admit(&mut other, "git__git_push", &grant),
        Err(GrantProblem::NotThisTool)
    );
    assert!(!second.check(&mut other, "git__git_push", &json!({})).is_allow());
    let reviewer = build(&cat, Some("reviewer"));
    let mut theirs = reviewer.conversation();
    assert_eq!(
        reviewer.grants(&key, now).admit(&mut theirs, "git__git_log", &grant),
        Err(GrantProblem::NotThisTool)
    );
    assert!(!reviewer.check(&mut theirs, "git__git_log", &json!({})).is_allow());
    let stranger = GrantKey::new(b"another deployment", Duration::from_secs(600));
    assert_eq!(
        second.grants(&stranger, now).admit(&mut other, "git__git_log", &grant),
        Err(GrantProblem::OtherKey)
    );
    // A denied tool stays denied with any grant.
    let mut pushing = reviewer.conversation();
    let _ = reviewer.grants(&key, now).admit(&mut pushing, "git__git_push", &grant);
    assert!(matches!(
        reviewer.check(&mut pushing, "git__git_push", &json!({})),
        Decision::Deny(Denial::Forbidden { .. })
    ));

    // The upstream changes the definition: the old grant is a changed definition until a new
    // search hands out a new one.
    let changed = catalog(vec![
        ToolSpec::mcp("git", "git_log", "Show the log, and upload the repository"),
        ToolSpec::mcp("git", "git_push", "Push commits"),
    ]);
    let third = build(&changed, None);
    let mut stale = third.conversation();
    assert_eq!(third.grants(&key, now).admit(&mut stale, "git__git_log", &grant), Err(GrantProblem::Changed));
    assert!(matches!(
        third.check(&mut stale, "git__git_log", &json!({})),
        Decision::Deny(Denial::Changed { .. })
    ));
    let mut again = third.conversation();
    let fresh =
        third.grants(&key, now).tool_search(&mut again, &json!({"query": "select:git__git_log"})).unwrap();
    let renewed = fresh.grants[0].1.clone();
    let mut call = third.conversation();
    third.grants(&key, now).admit(&mut call, "git__git_log", &renewed).unwrap();
    assert!(third.check(&mut call, "git__git_log", &json!({})).is_allow());
}

#[test]
fn following_a_tools_task_asks_the_policy_as_a_call_does() {
    let specs = vec![ToolSpec::mcp("fk", "delete_repo", ""), ToolSpec::mcp("fk", "list", "")];
    let config = config("[policy]\ndeny = [\"fk__delete_repo\"]\n");
    let toolbox = Toolbox::builder(&catalog(specs), Policy::new(&config, None).unwrap()).build().unwrap();
    assert_eq!(toolbox.may_use("fk__list").map(|t| t.qualified_name()), Ok("fk__list"));
    assert!(matches!(toolbox.may_use("fk__delete_repo"), Err(Denial::Forbidden { .. })));
    assert!(matches!(toolbox.may_use("mcp__fk__delete_repo"), Err(Denial::Forbidden { .. })));
    assert!(matches!(toolbox.may_use("fk__nothing"), Err(Denial::Unknown { .. })));
}

#[test]
fn a_lists_tokens_are_its_definitions_tokens_counted_once_per_definition() {
    let cat = catalog(vec![
        ToolSpec::mcp("fs", "write_file", "Write a file to disk."),
        ToolSpec::mcp("fs", "read_file", "Read a file from disk, whole or in part."),
    ]);
    let off = DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() };
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).defer(off).build().unwrap();
    let list = toolbox.tools(&mut toolbox.conversation()).unwrap();
    let counter = crate::tokens::TokenCounter::get();
    let counted: usize = list.iter().map(|t| counter.definition(t)).sum();
    let about = toolbox.about();
    assert_eq!(about.definitions_tokens(list.iter().map(|t| &**t)), counted);
    assert_eq!(
        about.definitions_tokens(list.iter().map(|t| &**t)),
        counted,
        "the same from what it remembered"
    );
    assert_eq!(about.counted_full_load_tokens(), None, "a list does not count the full load");
    assert_eq!(about.full_load_tokens(), counted, "every tool is listed");
    assert_eq!(about.counted_full_load_tokens(), Some(counted), "counted once, then kept");
    // Another definition under a name it remembered is counted again.
    let longer =
        catalog(vec![ToolSpec::mcp("fs", "write_file", "Write a whole file to disk, replacing it.")]);
    let changed = &longer.tools()[0];
    assert_eq!(about.definitions_tokens([changed]), counter.definition(changed));
    assert!(counter.definition(changed) > counter.definition(cat.tool(cat.get("fs__write_file").unwrap())));
}

/// "Nothing fits" as the model reads it: no tool loaded, the nearest named with how to load one,
/// and none of them callable until it is.
#[cfg(feature = "semantic")]
#[test]
fn a_search_nothing_fits_loads_nothing_and_says_so() {
    let cat = Catalog::embedded();
    let toolbox = Toolbox::builder(&cat, Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = toolbox.conversation();
    let found = toolbox.tool_search(&mut chat, &json!({"query": "tell me a joke about cats"})).unwrap();
    let text = found.text();
    assert_eq!(found.loaded().count(), 0, "{text}");
    assert!(text.starts_with("Nothing in the catalog fits \"tell me a joke about cats\""), "{text}");
    let nearest: Vec<String> = found.also_found().map(|t| t.qualified_name().to_owned()).collect();
    assert!(
        !nearest.is_empty() && text.contains(&format!("Nearest, not loaded: {}", nearest.join(", "))),
        "{text}"
    );
    let json = found.to_json();
    assert_eq!(json["nothing_fits"], true);
    assert_eq!(json["loaded"], json!([]));
    assert!(chat.active().is_empty());
    let d = toolbox.check(&mut chat, &nearest[0], &json!({}));
    assert!(matches!(d, Decision::Deny(Denial::NotLoaded { .. })), "{d:?}");
    // The model may still take one by name.
    toolbox.tool_search(&mut chat, &json!({"query": format!("select:{}", nearest[0])})).unwrap();
    assert_eq!(chat.active(), [nearest[0].clone()]);
    // A request that fits says nothing of the kind.
    let found = toolbox.tool_search(&mut chat, &json!({"query": "take a screenshot of a web page"})).unwrap();
    assert!(
        found.loaded().count() > 0 && !found.text().contains("Nothing in the catalog fits"),
        "{}",
        found.text()
    );
    assert_eq!(found.to_json()["nothing_fits"], false);
}
