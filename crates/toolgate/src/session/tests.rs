//! Tests of the active set, `tool_search` results and transcript rebuilding.

use std::collections::BTreeSet;

use expect_test::expect;
use proptest::prelude::{ProptestConfig, prop_assert, prop_assert_eq, proptest};
use serde_json::json;

use super::*;
use crate::catalog::ToolSpec;
use crate::defer::{DeferConfig, DeferMode};
use crate::request::{ANNOUNCEMENT_BUDGET, Announcer, grouped_announcement};

fn catalog() -> Catalog {
    let mut core = ToolSpec::builtin("Read", "Read a file");
    core.always_load = true;
    Catalog::builder()
        .tool(ToolSpec::mcp("github", "create_issue", "Create a new issue"))
        .tool(ToolSpec::mcp("github", "list_issues", "List issues of a repository"))
        .tool(ToolSpec::mcp("slack", "send_message", "Send a message to a channel"))
        .tool(core)
        .build()
        .unwrap()
}

fn on() -> DeferConfig {
    DeferConfig { mode: DeferMode::On, ..DeferConfig::default() }
}

/// What the model reads of a search of `query` that `sorted` the hits, in a toolbox over `cat`
/// whose `starting` servers are still starting: written by the outcome, the one writer.
fn text(cat: &Catalog, query: &str, sorted: Sorted, starting: &[&str]) -> String {
    let toolbox = crate::Toolbox::builder(cat, crate::Policy::permissive())
        .defer(on())
        .starting(starting.iter().map(|s| s.to_string()).collect())
        .build()
        .unwrap();
    crate::toolbox::SearchOutcome::new(&toolbox, query.to_owned(), sorted, Vec::new(), Vec::new()).text()
}

/// `req` with a cut that loads every hit.
fn every(req: Request<'_>) -> Request<'_> {
    Request { cut: crate::search::LoadCut { share: 0.0, novel_share: 0.0, fit: f32::NEG_INFINITY }, ..req }
}

#[test]
fn tool_search_activates_and_reports_already_loaded() {
    let cat = catalog();
    let index = Index::builder().build(&cat);
    let deferral = Deferral::decide(&cat, &on());
    let mut s = ActiveSet::new();
    let r = s.tool_search(&index, &deferral, every(Request::new("list issues", 5)));
    expect![[r#"
        Loaded 2 tools; call directly on your next step:
        - github__list_issues: List issues of a repository
        - github__create_issue: Create a new issue"#]]
    .assert_eq(&text(&cat, "list issues", r, &[]));
    assert_eq!(s.active(), ["github__list_issues", "github__create_issue"]);
    let query = "select:github__list_issues,builtin__Read";
    let r = s.tool_search(&index, &deferral, every(Request::new(query, 5)));
    expect![[r#"
        Servers still starting, so their tools are not searchable yet: jira. Search again in a few seconds before concluding that a tool does not exist.
        Already loaded — call it directly: github__list_issues, builtin__Read"#]]
    .assert_eq(&text(&cat, query, r, &["jira"]));
    assert_eq!(s.active().len(), 2, "a core tool is never added to the active set");
    let r = s.tool_search(&index, &deferral, every(Request::new("zzqqxx", 5)));
    expect![[r#"
        No tools matched "zzqqxx". Try other keywords, a server prefix such as "github__", or select:NAME with a name from <available-deferred-tools>.
        Terms that matched no tool: zzqqxx"#]]
    .assert_eq(&text(&cat, "zzqqxx", r, &[]));
}

#[test]
fn tool_list_keeps_the_prefix_stable() {
    use serde_json::json;
    let cat = catalog();
    let toolbox = crate::Toolbox::builder(&cat, crate::Policy::permissive()).defer(on()).build().unwrap();
    let mut chat = toolbox.conversation();
    let mut names = || -> Vec<String> {
        toolbox.tools(&mut chat).unwrap().iter().map(|t| t.qualified_name().to_owned()).collect()
    };
    assert_eq!(names(), ["builtin__Read", "tool_search"]);
    let mut chat2 = toolbox.conversation();
    toolbox.tool_search(&mut chat2, &json!({"query": "select:slack__send_message"})).unwrap();
    let first: Vec<String> =
        toolbox.tools(&mut chat2).unwrap().iter().map(|t| t.qualified_name().to_owned()).collect();
    toolbox.tool_search(&mut chat2, &json!({"query": "select:github__create_issue"})).unwrap();
    let second: Vec<String> =
        toolbox.tools(&mut chat2).unwrap().iter().map(|t| t.qualified_name().to_owned()).collect();
    assert_eq!(first, ["builtin__Read", "tool_search", "slack__send_message"]);
    assert_eq!(&second[..3], &first[..], "a new activation only appends");
    let off = DeferConfig { mode: DeferMode::Off, ..on() };
    let all = crate::Toolbox::builder(&cat, crate::Policy::permissive()).defer(off).build().unwrap();
    assert_eq!(
        all.tools(&mut all.conversation()).unwrap().len(),
        4,
        "deferral off: every tool, no tool_search"
    );
}

#[test]
fn announcements_grouped_and_as_deltas() {
    let cat = catalog();
    let deferral = Deferral::decide(&cat, &on());
    let names = crate::request::deferred_names(&cat, &deferral);
    expect![[r#"
        <available-deferred-tools>
        github: create_issue, list_issues
        slack: send_message
        </available-deferred-tools>"#]]
    .assert_eq(&grouped_announcement(names.iter().rev().copied(), ANNOUNCEMENT_BUDGET));
    let mut a = Announcer::new();
    assert_eq!(a.announce(names.iter().copied()).added.len(), 3);
    assert!(a.announce(names.iter().copied()).is_empty());
    let delta = a.announce(["github__list_issues", "jira__search"]);
    expect![[r#"
        <deferred-tools-delta>
        + jira__search
        - github__create_issue
        - slack__send_message
        </deferred-tools-delta>"#]]
    .assert_eq(&delta.render());
}

#[test]
fn transcript_rebuilds_the_active_set() {
    let cat = catalog();
    let index = Index::builder().build(&cat);
    let deferral = Deferral::decide(&cat, &on());
    let mut live = ActiveSet::new();
    let r1 = live.tool_search(&index, &deferral, every(Request::new("select:slack__send_message", 5)));
    let r1 = text(&cat, "select:slack__send_message", r1, &[]);
    let r2 = live.tool_search(&index, &deferral, every(Request::new("issues", 5)));
    let r2 = text(&cat, "issues", r2, &[]);
    let transcript = vec![
        json!({"role": "user", "content": "post to slack, then file issues"}),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "tool_search", "input": {"query": "select:slack__send_message"}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": r1}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": r2}]}]}),
    ];
    assert_eq!(ActiveSet::from_transcript(&transcript, &cat), live);

    // Anthropic tool_reference blocks count the same.
    let refs =
        vec![json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": [
            {"type": "tool_reference", "tool_name": "github__list_issues"},
            {"type": "tool_reference", "tool_name": "gone__tool"}
        ]}]})];
    assert_eq!(ActiveSet::from_transcript(&refs, &cat).active(), ["github__list_issues"]);
}

#[test]
fn active_set_survives_compaction() {
    let cat = catalog();
    let mut live = ActiveSet::new();
    live.activate(["slack__send_message", "github__create_issue"]);
    // The summary replaced every message that loaded the tools; only the boundary is left.
    let after = vec![
        live.boundary(),
        json!({"role": "user", "content": "(summary of the earlier conversation)"}),
        json!({"role": "user", "content": [{"type": "tool_reference", "tool_name": "github__list_issues"}]}),
    ];
    let rebuilt = ActiveSet::from_transcript(&after, &cat);
    assert_eq!(rebuilt.active(), ["slack__send_message", "github__create_issue", "github__list_issues"]);
    // Claude Code's spelling of the record is read too.
    let cc = vec![
        json!({"type": "system", "subtype": "compact_boundary", "compactMetadata": {"preCompactDiscoveredTools": ["github__list_issues"]}}),
    ];
    assert_eq!(ActiveSet::from_transcript(&cc, &cat).active(), ["github__list_issues"]);
}

#[derive(Debug, Clone)]
enum Op {
    Activate(Vec<u8>),
    Deactivate(u8),
}

fn arb_op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        proptest::collection::vec(0u8..12, 0..4).prop_map(Op::Activate),
        (0u8..12).prop_map(Op::Deactivate),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn active_set_agrees_with_a_btreeset(ops in proptest::collection::vec(arb_op(), 0..40)) {
        let mut s = ActiveSet::new();
        let mut model: BTreeSet<String> = BTreeSet::new();
        let mut order: Vec<String> = Vec::new();
        for op in ops {
            match op {
                Op::Activate(ids) => {
                    let names: Vec<String> = ids.iter().map(|i| format!("s__t{i}")).collect();
                    let added = s.activate(names.iter().map(String::as_str));
                    let mut want = Vec::new();
                    for n in names {
                        if model.insert(n.clone()) {
                            order.push(n.clone());
                            want.push(n);
                        }
                    }
                    prop_assert_eq!(added, want);
                }
                Op::Deactivate(i) => {
                    let n = format!("s__t{i}");
                    prop_assert_eq!(s.unload(&n), model.remove(&n));
                    order.retain(|x| *x != n);
                }
            }
            let got: BTreeSet<String> = s.active().iter().cloned().collect();
            prop_assert_eq!(&got, &model);
            prop_assert_eq!(s.active(), &order[..]);
            for n in &model {
                prop_assert!(s.is_active(n));
            }
        }
    }
}

#[test]
fn an_announcement_lists_then_counts_then_sums_up_the_servers_left() {
    let long: Vec<String> = (1..=5).map(|i| format!("b__tool_with_a_rather_long_name_{i}")).collect();
    let mut names: Vec<&str> = vec!["d__v", "a__y", "c__w", "a__x", "d__u"];
    names.extend(long.iter().map(String::as_str));
    let (open, close) = ("<available-deferred-tools>\n", "</available-deferred-tools>");
    let listed = "a: x, y\n";
    let counted = "b: 5 tools, find them with tool_search\n";
    // Room for the first server's names and the second's count, not for the third's count.
    let budget = open.len() + listed.len() + counted.len() + close.len() + 120;
    let tail = "and 2 more servers with 3 tools: find them with tool_search (keywords, or \"SERVER__\")\n";
    assert_eq!(
        grouped_announcement(names.iter().copied(), budget),
        format!("{open}{listed}{counted}{tail}{close}")
    );
    // With room for everything, every server's names, sorted, once each.
    let whole = grouped_announcement(names.iter().copied().chain(["a__x"]), ANNOUNCEMENT_BUDGET);
    let b = long.iter().map(|n| &n[3..]).collect::<Vec<_>>().join(", ");
    assert_eq!(whole, format!("{open}a: x, y\nb: {b}\nc: w\nd: u, v\n{close}"));
}

#[test]
fn an_announcement_stays_within_its_budget_for_any_catalog() {
    for (servers, per_server) in [(3, 4), (70, 8), (400, 25), (2000, 50)] {
        let names: Vec<String> = (0..servers)
            .flat_map(|s| (0..per_server).map(move |t| format!("server-{s:04}__tool_number_{t:03}")))
            .collect();
        let block = grouped_announcement(names.iter().map(String::as_str), ANNOUNCEMENT_BUDGET);
        assert!(block.len() <= ANNOUNCEMENT_BUDGET, "{servers} servers: {} bytes", block.len());
        assert!(
            block.starts_with("<available-deferred-tools>\n")
                && block.ends_with("</available-deferred-tools>")
        );
        // Whatever is left out is counted, so the model knows to search.
        let listed: usize = block
            .lines()
            .filter(|l| !l.starts_with("and "))
            .filter_map(|l| l.split_once(": "))
            .map(|(_, t)| {
                if t.ends_with("find them with tool_search") {
                    t.split(' ').next().unwrap().parse::<usize>().unwrap()
                } else {
                    t.split(", ").count()
                }
            })
            .sum();
        let tail: usize = block
            .lines()
            .find_map(|l| {
                l.strip_prefix("and ")
                    .and_then(|r| r.split(" tools").next())
                    .and_then(|r| r.rsplit(' ').next())
                    .and_then(|n| n.parse().ok())
            })
            .unwrap_or(0);
        assert_eq!(
            listed + tail,
            servers * per_server,
            "{servers} servers:\n{}",
            &block[block.len() - 300..]
        );
        // The same names in another order give the same bytes.
        let again = grouped_announcement(names.iter().rev().map(String::as_str), ANNOUNCEMENT_BUDGET);
        assert_eq!(block, again);
    }
}
