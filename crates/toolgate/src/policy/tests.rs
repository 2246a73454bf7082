//! Tests of the policy rules, one per rule, and of filtering, required sets, sub-agents and
//! scopes.

use std::path::Path;

use super::*;
use crate::catalog::ToolSpec;
use crate::defer::{DeferConfig, DeferMode, Deferral};
use crate::gate::{Decision, Denial};

fn config(text: &str) -> Config {
    Config::from_toml("toolgate.toml", text, Path::new(".")).unwrap()
}

fn tool(server: &str, name: &str, read_only_hint: bool) -> ToolSpec {
    let mut t = ToolSpec::mcp(server, name, "Safe and read-only, trust me.");
    if read_only_hint {
        t.annotations.insert("readOnlyHint".into(), true.into());
    }
    t
}

fn catalog(tools: &[(&str, &str)]) -> Catalog {
    let mut b = Catalog::builder();
    for (server, name) in tools {
        b = b.tool(tool(server, name, false));
    }
    b.build().unwrap()
}

/// The verdict for `server__name` as a string: "allow" or the rule.
fn verdict(policy: &Policy, cat: &Catalog, name: &str) -> String {
    match policy.decide(cat.tool(cat.get(name).unwrap())) {
        Verdict::Allow => "allow".into(),
        Verdict::Deny(rule) => rule.to_string(),
    }
}

fn on() -> DeferConfig {
    DeferConfig { mode: DeferMode::On, ..DeferConfig::default() }
}

#[test]
fn global_deny_matches_qualified_names_and_bare_server_names() {
    let cat = catalog(&[
        ("github", "delete_repo"),
        ("github", "get_issue"),
        ("fs", "delete_file"),
        ("db", "query"),
    ]);
    let p = Policy::new(&config("[policy]\ndeny = [\"db\", \"*__delete_*\"]\n"), None).unwrap();
    assert_eq!(verdict(&p, &cat, "github__delete_repo"), "policy.deny \"*__delete_*\"");
    assert_eq!(verdict(&p, &cat, "fs__delete_file"), "policy.deny \"*__delete_*\"");
    assert_eq!(verdict(&p, &cat, "db__query"), "policy.deny \"db\"");
    assert_eq!(verdict(&p, &cat, "github__get_issue"), "allow");

    // Claude Code's spelling of a server, and an exact qualified name.
    let p = Policy::new(&config("[policy]\ndeny = [\"mcp__github\"]\n"), None).unwrap();
    assert_eq!(verdict(&p, &cat, "github__get_issue"), "policy.deny \"mcp__github\"");
    let p = Policy::new(&config("[policy]\ndeny = [\"github__delete_repo\"]\n"), None).unwrap();
    assert_eq!(verdict(&p, &cat, "github__delete_repo"), "policy.deny \"github__delete_repo\"");
    assert_eq!(verdict(&p, &cat, "github__get_issue"), "allow");
}

#[test]
fn server_denied_wins_over_allowed() {
    let cat = catalog(&[("github", "delete_repo"), ("github", "get_issue")]);
    let p = Policy::new(
        &config("[servers.github]\nmode = \"allowlist\"\nallowed = [\"*\"]\ndenied = [\"delete_*\"]\n"),
        None,
    )
    .unwrap();
    assert_eq!(verdict(&p, &cat, "github__delete_repo"), "servers.github.denied \"delete_*\"");
    assert_eq!(verdict(&p, &cat, "github__get_issue"), "allow");
}

#[test]
fn allowed_restricts_auto_and_allowlist_but_not_all() {
    let cat = catalog(&[("github", "get_issue"), ("github", "create_issue")]);
    for mode in ["auto", "allowlist"] {
        let text = format!("[servers.github]\nmode = \"{mode}\"\nallowed = [\"get_*\"]\n");
        let p = Policy::new(&config(&text), None).unwrap();
        assert_eq!(verdict(&p, &cat, "github__get_issue"), "allow", "{mode}");
        assert_eq!(verdict(&p, &cat, "github__create_issue"), "servers.github.allowed: no pattern matches");
    }
    let text = "[servers.github]\nmode = \"all\"\nallowed = [\"get_*\"]\n";
    let p = Policy::new(&config(text), None).unwrap();
    assert_eq!(verdict(&p, &cat, "github__create_issue"), "allow");
}

#[test]
fn read_only_fails_closed_and_never_trusts_a_description() {
    let cat = Catalog::builder()
        .tool(tool("fs", "stat", true))
        .tool(tool("fs", "list_dir", false))
        .tool(tool("fs", "write_file", false))
        .build()
        .unwrap();
    let text = "[servers.fs]\nside_effects = \"read_only\"\nread_only = [\"list_*\"]\n";
    let p = Policy::new(&config(text), None).unwrap();
    assert_eq!(verdict(&p, &cat, "fs__stat"), "allow");
    assert_eq!(verdict(&p, &cat, "fs__list_dir"), "allow");
    assert_eq!(
        verdict(&p, &cat, "fs__write_file"),
        "servers.fs.side_effects = \"read_only\": not marked readOnlyHint and not in the trusted read_only list"
    );
    assert!(p.is_read_only(cat.tool(cat.get("fs__list_dir").unwrap())));
    assert!(!p.is_read_only(cat.tool(cat.get("fs__write_file").unwrap())));
}

#[test]
fn a_disabled_server_hides_every_tool() {
    let cat = catalog(&[("old", "ping")]);
    let p = Policy::new(&config("[servers.old]\nenabled = false\n"), None).unwrap();
    assert_eq!(verdict(&p, &cat, "old__ping"), "servers.old.enabled = false");
}

#[test]
fn profiles_keep_their_tools_minus_disallowed_tools() {
    let cat = catalog(&[
        ("github", "search_issues"),
        ("github", "delete_repo"),
        ("slack", "post"),
        ("fs", "read_file"),
    ]);
    let text =
        "[profiles.reviewer]\ntools = [\"github\", \"fs__read_*\"]\ndisallowed_tools = [\"*__delete_*\"]\n";
    let p = Policy::new(&config(text), Some("reviewer")).unwrap();
    assert_eq!(p.subject().to_string(), "reviewer");
    assert_eq!(verdict(&p, &cat, "github__search_issues"), "allow");
    assert_eq!(verdict(&p, &cat, "fs__read_file"), "allow");
    assert_eq!(
        verdict(&p, &cat, "github__delete_repo"),
        "profiles.reviewer.disallowed_tools \"*__delete_*\""
    );
    assert_eq!(verdict(&p, &cat, "slack__post"), "profiles.reviewer.tools: no pattern matches");

    let err = Policy::new(&config(text), Some("writer")).unwrap_err();
    assert_eq!(err.to_string(), "unknown profile `writer` (configured: reviewer)");
    let err = Policy::new(&Config::<crate::config::NoHost>::default(), Some("writer")).unwrap_err();
    assert_eq!(err.to_string(), "unknown profile `writer`: no [profiles] are configured");
}

#[test]
fn built_in_tools_are_named_as_agent_definitions_name_them() {
    // As a Claude Code agent definition names them: `tools: [Read, Grep]`, `disallowedTools: [Write]`.
    let cat = Catalog::builder()
        .tool(ToolSpec::builtin("Read", ""))
        .tool(ToolSpec::builtin("Grep", ""))
        .tool(ToolSpec::builtin("Write", ""))
        .tool(tool("Read", "x", false)) // an MCP server that happens to be called Read
        .build()
        .unwrap();
    let text =
        "[profiles.reviewer]\ntools = [\"Read\", \"Grep\", \"Write\"]\ndisallowed_tools = [\"Write\"]\n";
    let p = Policy::new(&config(text), Some("reviewer")).unwrap();
    assert_eq!(verdict(&p, &cat, "builtin__Read"), "allow");
    assert_eq!(verdict(&p, &cat, "builtin__Grep"), "allow");
    assert_eq!(verdict(&p, &cat, "builtin__Write"), "profiles.reviewer.disallowed_tools \"Write\"");
    assert_eq!(verdict(&p, &cat, "Read__x"), "allow", "a bare name is also a server name");
}

#[test]
fn filter_hides_denied_tools_and_audits_each_with_its_rule() {
    let cat = catalog(&[("github", "delete_repo"), ("github", "get_issue"), ("slack", "post")]);
    let p = Policy::new(&config("[policy]\ndeny = [\"slack\", \"*__delete_*\"]\n"), None).unwrap();
    let f = p.filter(&cat);
    let names: Vec<&str> = f.catalog.tools().iter().map(|t| t.qualified_name()).collect();
    assert_eq!(names, ["github__get_issue"]);
    let log: Vec<String> = f.audit.iter().map(ToString::to_string).collect();
    assert_eq!(
        log,
        [
            "main: hidden github__delete_repo by policy.deny \"*__delete_*\"",
            "main: hidden slack__post by policy.deny \"slack\""
        ]
    );
    assert_eq!(f.audit[0].rule.key(), "policy.deny");
    assert_eq!(f.audit[0].rule.pattern(), Some("*__delete_*"));
    assert_eq!(p.why_hidden(&cat, "mcp__slack__post"), Some(Rule::GlobalDeny { pattern: "slack".into() }));
    assert_eq!(p.why_hidden(&cat, "github__get_issue"), None);
    assert_eq!(p.why_hidden(&cat, "no_such_tool"), None);
}

#[test]
fn the_gate_refuses_a_denied_tool_even_when_active() {
    use serde_json::json;
    let cat = catalog(&[("github", "delete_repo"), ("github", "get_issue")]);
    let p = Policy::new(&config("[policy]\ndeny = [\"*__delete_*\"]\n"), None).unwrap();
    let toolbox = crate::Toolbox::builder(&cat, p.clone()).defer(on()).build().unwrap();
    let mut chat = toolbox.conversation();
    toolbox
        .tool_search(&mut chat, &json!({"query": "select:github__get_issue,github__delete_repo"}))
        .unwrap();
    let d = toolbox.check(&mut chat, "mcp__github__delete_repo", &json!({}));
    let Decision::Deny(Denial::Forbidden { name, rule }) = &d else { panic!("{d:?}") };
    assert_eq!(name, "github__delete_repo");
    assert_eq!(rule, &Rule::GlobalDeny { pattern: "*__delete_*".into() });
    assert!(!d.to_string_lossy().contains("*__delete_*"), "the model is not told the rule");
    assert_eq!(
        p.event(name, rule.clone(), Action::Refused).to_string(),
        "main: refused github__delete_repo by policy.deny \"*__delete_*\""
    );
    assert!(toolbox.check(&mut chat, "github__get_issue", &json!({})).is_allow());
    // An allowed tool still has to be loaded.
    let d = toolbox.check(&mut toolbox.conversation(), "github__get_issue", &json!({}));
    assert!(matches!(d, Decision::Deny(Denial::NotLoaded { .. })));
}

trait Lossy {
    fn to_string_lossy(&self) -> String;
}

impl Lossy for Decision<'_> {
    fn to_string_lossy(&self) -> String {
        match self {
            Decision::Allow(_) => String::new(),
            Decision::Deny(d) => d.to_string(),
        }
    }
}

#[test]
fn required_tools_over_max_active_are_a_configuration_error() {
    let tools: Vec<String> = (0..30).map(|i| format!("tool_{i:02}")).collect();
    let pairs: Vec<(&str, &str)> = tools.iter().map(|t| ("github", t.as_str())).collect();
    let cat = catalog(&pairs);
    let deferral = Deferral::decide(&cat, &on());
    let p = Policy::new(&config("[servers.github]\nmode = \"all\"\n"), None).unwrap();
    let err = p.required(&cat, &deferral, 1).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverBudget { server: "github".into(), required: 30, limit: 24 });
    assert_eq!(
        err.to_string(),
        "server `github`: 30 required tools (pinned or mode=all) exceed max_active 24; pin fewer tools, \
         narrow `allowed`, or use mode = \"auto\""
    );

    // Pins count the same way; a denied pin is simply not there (deny wins).
    let text = "[servers.github]\nmax_active = 4\npinned = [\"tool_0*\"]\n";
    let err = Policy::new(&config(text), None).unwrap().required(&cat, &deferral, 1).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverBudget { server: "github".into(), required: 10, limit: 4 });
    let text = "[servers.github]\nmax_active = 4\npinned = [\"tool_0*\"]\ndenied = [\"tool_0?\"]\n";
    let p = Policy::new(&config(text), None).unwrap();
    let visible = p.filter(&cat).catalog;
    let req = p.required(&visible, &Deferral::decide(&visible, &on()), 1).unwrap();
    assert!(req.tools().is_empty());

    let text = "[servers.github]\nmax_active = 30\nmode = \"all\"\n[budget]\nfirst_turn = 20\n";
    let err = Policy::new(&config(text), None).unwrap().required(&cat, &deferral, 1).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverFirstTurn { required: 30, fixed: 1, limit: 20 });
    assert!(err.to_string().starts_with(
        "30 required tools (pinned or mode=all) and 1 core tools and meta-tools exceed the first-turn budget of 20"
    ));
}

#[test]
fn core_tools_over_the_first_turn_budget_are_an_error() {
    let mut b = Catalog::builder();
    for i in 0..5 {
        b = b.tool(ToolSpec::builtin(&format!("B{i}"), ""));
    }
    let cat = b.build().unwrap();
    let deferral = Deferral::decide(&cat, &on());
    let p = Policy::new(&config("[budget]\nfirst_turn = 5\ndynamic = 6\nhard = 7\n"), None).unwrap();
    assert_eq!(
        p.required(&cat, &deferral, 1).unwrap_err(),
        PolicyError::FixedOverFirstTurn { fixed: 6, limit: 5 }
    );
    assert_eq!(p.required(&cat, &deferral, 0).unwrap().definitions(), 5);
}

#[test]
fn mode_all_and_pins_come_first_in_the_first_turn() {
    let cat = catalog(&[
        ("jira", "get_issue"),
        ("jira", "create_issue"),
        ("github", "search_code"),
        ("github", "list_commits"),
        ("github", "get_file"),
    ]);
    let deferral = Deferral::decide(&cat, &on());
    let text = "[servers.jira]\nmode = \"all\"\n[servers.github]\npinned = [\"get_file\"]\n";
    let p = Policy::new(&config(text), None).unwrap();
    let pre = p.first_turn(&cat, &deferral, 1, "list the recent commits", "").unwrap();
    let names: Vec<&str> = pre.chosen.iter().map(|&id| cat.tool(id).qualified_name()).collect();
    assert_eq!(pre.required, 3);
    assert_eq!(
        names,
        [
            "github__get_file",
            "jira__create_issue",
            "jira__get_issue",
            "github__list_commits",
            "github__search_code"
        ]
    );
    assert_eq!(pre.per_server["github"], 3);
    assert_eq!(pre.per_server["jira"], 2);
}

#[test]
fn a_sub_agent_sees_the_parent_surface_filtered_by_its_profile() {
    let cat = catalog(&[
        ("github", "search_issues"),
        ("github", "delete_repo"),
        ("github", "merge_pr"),
        ("fs", "read_file"),
    ]);
    let text = "[policy]\ndeny = [\"*__delete_*\"]\n\
                [profiles.lead]\ntools = [\"github\"]\n\
                [profiles.reviewer]\ntools = [\"*\"]\ndisallowed_tools = [\"*__merge_*\"]\n";
    let lead = Policy::new(&config(text), Some("lead")).unwrap();
    let reviewer = lead.child("reviewer").unwrap();
    assert_eq!(reviewer.subject().to_string(), "lead/reviewer");
    assert_eq!(reviewer.subject().parent(), Some(Subject::new("lead")));
    assert_eq!(reviewer.subject().name(), "reviewer");
    let visible: Vec<String> =
        reviewer.filter(&cat).catalog.tools().iter().map(|t| t.qualified_name().to_owned()).collect();
    // The parent's profile still applies (no fs), the global deny too, and the child's own rule.
    assert_eq!(visible, ["github__search_issues"]);
    assert_eq!(verdict(&reviewer, &cat, "fs__read_file"), "profiles.lead.tools: no pattern matches");
    assert!(lead.child("nobody").is_err());

    // Inherit the parent's activations the child may use.
    let mut parent = ActiveSet::new();
    parent.activate(["github__merge_pr", "github__search_issues", "gone__tool"]);
    let (child, audit) = reviewer.inherit(&parent, &cat);
    assert_eq!(child.active(), ["github__search_issues"]);
    assert_eq!(
        audit.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "lead/reviewer: not_inherited github__merge_pr by profiles.reviewer.disallowed_tools \"*__merge_*\""
        ]
    );
}

#[test]
fn tool_search_stays_while_a_deferred_tool_remains_visible() {
    assert!(keeps_tool_search(1));
    assert!(!keeps_tool_search(0));
}

#[test]
fn scopes_separate_subjects_with_different_rules_and_catalog_versions() {
    let cat = catalog(&[("github", "search_issues"), ("slack", "post")]);
    let text = "[profiles.a]\ntools = [\"github\"]\n[profiles.b]\ntools = [\"github\"]\n[profiles.c]\ntools = [\"slack\"]\n";
    let c = config(text);
    let a = Policy::new(&c, Some("a")).unwrap();
    let b = Policy::new(&c, Some("b")).unwrap();
    let cc = Policy::new(&c, Some("c")).unwrap();
    let main = Policy::new(&c, None).unwrap();
    // Different rules differ; so do equal rules under another profile name, since the name is
    // part of the rules' keys (audit events name it).
    assert_ne!(a.scope(&cat), cc.scope(&cat));
    assert_ne!(a.scope(&cat), b.scope(&cat));
    assert_ne!(main.scope(&cat), a.scope(&cat));
    assert_eq!(main.scope(&cat), Policy::new(&c, None).unwrap().scope(&cat));
    // A changed definition changes the scope.
    let changed = Catalog::builder()
        .tool(ToolSpec::mcp("github", "search_issues", "Search issues, now with labels."))
        .tool(tool("slack", "post", false))
        .build()
        .unwrap();
    assert_ne!(main.scope(&cat), main.scope(&changed));

    let mut cache: ScopedCache<&str, Vec<String>> = ScopedCache::new(2);
    let names = |p: &Policy| -> Vec<String> {
        p.filter(&cat).catalog.tools().iter().map(|t| t.qualified_name().to_owned()).collect()
    };
    assert_eq!(cache.get_or_insert_with(a.scope(&cat), "surface", || names(&a)), &["github__search_issues"]);
    assert_eq!(cache.get_or_insert_with(cc.scope(&cat), "surface", || names(&cc)), &["slack__post"]);
    assert_eq!(cache.get(a.scope(&cat), &"surface").unwrap(), &["github__search_issues"]);
    cache.get_or_insert_with(main.scope(&cat), "surface", || names(&main));
    assert_eq!(cache.len(), 2, "capacity holds");
    assert!(cache.get(cc.scope(&cat), &"surface").is_none(), "least recently used went first");
    cache.clear_scope(a.scope(&cat));
    assert_eq!(cache.len(), 1);
}

#[test]
fn policies_and_budgets_can_be_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Policy>();
    shared::<crate::budget::ActiveBudget>();
    shared::<Scope>();
}

#[test]
fn pins_sent_as_core_tools_still_count_against_max_active() {
    // A host may send pins as always-load tools; they are core then, but still required.
    let mut b = Catalog::builder();
    for i in 0..6 {
        let mut t = tool("github", &format!("pin_{i}"), false);
        t.always_load = true;
        b = b.tool(t);
    }
    let cat = b.tool(tool("github", "other", false)).build().unwrap();
    let deferral = Deferral::decide(&cat, &on());
    let text = "[servers.github]\npinned = [\"pin_*\"]\nmax_active = 5\n";
    let err = Policy::new(&config(text), None).unwrap().required(&cat, &deferral, 1).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverBudget { server: "github".into(), required: 6, limit: 5 });

    let text = "[servers.github]\npinned = [\"pin_*\"]\n[budget]\nfirst_turn = 6\n";
    let err = Policy::new(&config(text), None).unwrap().required(&cat, &deferral, 1).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverFirstTurn { required: 6, fixed: 1, limit: 6 });

    let text = "[servers.github]\npinned = [\"pin_*\"]\n";
    let p = Policy::new(&config(text), None).unwrap();
    let req = p.required(&cat, &deferral, 1).unwrap();
    assert!(req.tools().is_empty(), "core pins need no activating");
    assert_eq!((req.count("github"), req.fixed()), (6, 7));
    // The fairness cap of 12 counts the pins: 6 more at most, and here only one is left.
    let pre = p.first_turn(&cat, &deferral, 1, "", "").unwrap();
    assert_eq!(pre.chosen.len(), 1);
    assert_eq!(pre.per_server["github"], 7);
}
