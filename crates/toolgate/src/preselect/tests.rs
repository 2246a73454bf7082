//! Tests of the first-turn ranking: each of EthanKit's weights, the aliases, the caps and the
//! tie-break.

use expect_test::{Expect, expect};

use super::*;
use crate::catalog::{Catalog, ToolSpec};

/// Tools as `server/name: description`, with `!` after the name for `readOnlyHint`.
fn fixture(lines: &str) -> (Catalog, Vec<bool>) {
    let mut b = Catalog::builder();
    let mut ro = Vec::new();
    for line in lines.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (head, desc) = line.split_once(':').unwrap();
        let (server, name) = head.trim().split_once('/').unwrap();
        let read_only = name.ends_with('!');
        b = b.tool(ToolSpec::mcp(server, name.trim_end_matches('!'), desc.trim()));
        ro.push(read_only);
    }
    (b.build().unwrap(), ro)
}

fn candidates<'a>(cat: &'a Catalog, ro: &[bool]) -> Vec<Candidate<'a>> {
    cat.ids().map(|id| Candidate { id, tool: cat.tool(id), read_only: ro[id.index()] }).collect()
}

/// The ranking as lines `name total [parts]`, chosen ones marked `*`.
fn check(tools: &str, user: &str, system: &str, params: PreselectParams, expect: Expect) {
    let (cat, ro) = fixture(tools);
    let pre = preselect(&candidates(&cat, &ro), user, system, &params);
    let mut out = String::new();
    for s in &pre.scores {
        let sc = s.score;
        out.push_str(&format!(
            "{} {:<28} {:>4}  u={} s={} us={} ss={} ro={} intent={} alias={}\n",
            if s.chosen { '*' } else { ' ' },
            s.name,
            sc.total(),
            sc.user_terms,
            sc.system_terms,
            u8::from(sc.user_server),
            u8::from(sc.system_server),
            u8::from(sc.read_only),
            sc.intent,
            sc.alias
        ));
    }
    expect.assert_eq(&out);
}

const GIT: &str = "
    github/list_pull_requests!: List pull requests in a repository
    github/create_pull_request: Create a pull request
    github/get_issue!: Get an issue by number
    github/search_code!: Search code
    linear/create_issue: Create a ticket
    linear/list_issues!: List tickets of a team
    logs/tail_log!: Show the last lines of a service log
";

#[test]
fn user_words_weigh_12_system_words_2_and_server_mentions_16_and_3() {
    check(
        GIT,
        "search code",
        "You help with linear and code.",
        PreselectParams::new(3),
        expect![[r#"
            * github__search_code            37  u=2 s=1 us=0 ss=0 ro=1 intent=8 alias=0
            * linear__list_issues            14  u=0 s=0 us=0 ss=1 ro=1 intent=8 alias=0
            * github__get_issue              11  u=0 s=0 us=0 ss=0 ro=1 intent=8 alias=0
              github__list_pull_requests     11  u=0 s=0 us=0 ss=0 ro=1 intent=8 alias=0
              logs__tail_log                  3  u=0 s=0 us=0 ss=0 ro=1 intent=0 alias=0
              linear__create_issue          -29  u=0 s=0 us=0 ss=1 ro=0 intent=-32 alias=0
              github__create_pull_request   -32  u=0 s=0 us=0 ss=0 ro=0 intent=-32 alias=0
        "#]],
    );
}

#[test]
fn chinese_and_english_aliases_reach_tool_names() {
    // 合并请求 → pull_request, 工单 → issue, 日志 → log; a write request gets no read bonus.
    check(
        GIT,
        "帮我创建一个合并请求，并把相关工单和日志发给我",
        "",
        PreselectParams::new(10),
        expect![[r#"
            * github__get_issue              15  u=0 s=0 us=0 ss=0 ro=1 intent=0 alias=12
            * github__list_pull_requests     15  u=0 s=0 us=0 ss=0 ro=1 intent=0 alias=12
            * linear__list_issues            15  u=0 s=0 us=0 ss=0 ro=1 intent=0 alias=12
            * logs__tail_log                 15  u=0 s=0 us=0 ss=0 ro=1 intent=0 alias=12
            * github__create_pull_request    12  u=0 s=0 us=0 ss=0 ro=0 intent=0 alias=12
            * linear__create_issue           12  u=0 s=0 us=0 ss=0 ro=0 intent=0 alias=12
            * github__search_code             3  u=0 s=0 us=0 ss=0 ro=1 intent=0 alias=0
        "#]],
    );
}

#[test]
fn a_read_request_favours_read_tools_and_pushes_write_tools_down() {
    // "PR" and "review" (a read signal); the user names github.
    check(
        GIT,
        "review the open PRs on github",
        "",
        PreselectParams::new(2),
        expect![[r#"
            * github__list_pull_requests     39  u=0 s=0 us=1 ss=0 ro=1 intent=8 alias=12
            * github__get_issue              27  u=0 s=0 us=1 ss=0 ro=1 intent=8 alias=0
              github__search_code            27  u=0 s=0 us=1 ss=0 ro=1 intent=8 alias=0
              logs__tail_log                 15  u=1 s=0 us=0 ss=0 ro=1 intent=0 alias=0
              linear__list_issues            11  u=0 s=0 us=0 ss=0 ro=1 intent=8 alias=0
              github__create_pull_request    -4  u=0 s=0 us=1 ss=0 ro=0 intent=-32 alias=12
              linear__create_issue          -32  u=0 s=0 us=0 ss=0 ro=0 intent=-32 alias=0
        "#]],
    );
}

#[test]
fn each_server_gets_at_most_its_cap_and_ties_go_by_name() {
    let tools: String = ["a", "b"]
        .iter()
        .flat_map(|s| (0..20).map(move |i| format!("{s}/tool_{i:02}: does thing {i}\n")))
        .collect();
    let (cat, ro) = fixture(&tools);
    let cands = candidates(&cat, &ro);
    let pre = preselect(&cands, "", "", &PreselectParams::new(100));
    assert_eq!(pre.chosen.len(), 24);
    assert_eq!(pre.per_server["a"], FAIRNESS_CAP);
    assert_eq!(pre.per_server["b"], FAIRNESS_CAP);
    let first: Vec<&str> = pre.chosen[..3].iter().map(|&id| cat.tool(id).qualified_name()).collect();
    assert_eq!(first, ["a__tool_00", "a__tool_01", "a__tool_02"]);

    // A stricter room (max_active) and the total capacity.
    let mut params = PreselectParams::new(15);
    params.room.insert("a".into(), 5);
    let pre = preselect(&cands, "thing 7", "", &params);
    assert_eq!(pre.per_server["a"], 5);
    assert_eq!(pre.per_server["b"], 10);
    let first: Vec<&str> = pre.chosen[..2].iter().map(|&id| cat.tool(id).qualified_name()).collect();
    assert_eq!(first, ["a__tool_07", "b__tool_07"], "score first, then name");

    // Deterministic whatever the candidate order.
    let mut reversed = cands.clone();
    reversed.reverse();
    assert_eq!(preselect(&reversed, "thing 7", "", &params).chosen, pre.chosen);
}

#[test]
fn a_score_explains_itself() {
    let (cat, ro) = fixture(GIT);
    let c = candidates(&cat, &ro);
    let ctx = Context::new("review the open PRs on github", "");
    assert_eq!(
        ctx.score(&c[0]).to_string(),
        "16 server named by the user + 3 read-only + 8 read tool for a read request + 12 aliases = 39"
    );
    assert_eq!(
        ctx.score(&c[1]).to_string(),
        "16 server named by the user - 32 write tool for a read request + 12 aliases = -4"
    );
    assert_eq!(Context::new("", "").score(&c[4]).to_string(), "0");
}

#[test]
fn a_mixed_request_gets_no_intent_correction() {
    assert!(Context::new("list the issues", "").read_intent());
    assert!(Context::new("查询最近的工单", "").read_intent());
    assert!(!Context::new("list the issues and close the stale ones", "").read_intent());
    assert!(!Context::new("deploy it", "").read_intent());
}

#[test]
fn name_words_split_identifiers_and_fold_plurals() {
    assert_eq!(name_words("createPullRequests"), ["create", "pull", "request"]);
    assert_eq!(name_words("list_issues"), ["list", "issue"]);
    assert_eq!(name_words("get_status"), ["get", "status"], "a double s is no plural");
}
