//! Snapshot tests of ranking (`UPDATE_EXPECT=1` refreshes them) and property tests of the index
//! against brute-force scoring.

use expect_test::{Expect, expect};
use proptest::prelude::{ProptestConfig, any, prop_assert, prop_assert_eq, proptest};
use proptest::strategy::Strategy as _;

use super::bm25f::{Bm25Params, brute_force};
use super::*;
use toolgate_catalog::{Catalog, CatalogBuilder, ToolSpec};

/// A fresh directory for one test's files, its own even when two tests running at once give the
/// same name; the key file a cache test keeps beside it (`{dir}.key`) is removed too.
pub(crate) fn scratch(name: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let nth = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("toolgate-search-{}-{nth}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(dir.with_extension("key"));
    dir
}

/// The embedded catalog repeated under other server names (`{server}{copy}`) until it holds
/// more than `tools` tools: a large catalog of real definitions.
pub(crate) fn embedded_copies(tools: usize) -> Catalog {
    let embedded = Catalog::embedded();
    let mut builder = Catalog::builder();
    for copy in 0..=(tools / embedded.len().max(1)) {
        for tool in embedded.tools() {
            let mut spec = tool.spec().as_ref().clone();
            spec.server = format!("{}{copy}", spec.server);
            builder = builder.tool(spec);
        }
    }
    builder.build().unwrap()
}

fn small() -> Catalog {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "repo_path": {"type": "string", "description": "Path to the git repository"},
            "max_count": {"type": "integer"}
        }
    });
    Catalog::builder()
        .tool(ToolSpec::mcp("git", "git_log", "Shows the commit logs").with_schema(schema.clone()))
        .tool(
            ToolSpec::mcp(
                "git",
                "git_diff_unstaged",
                "Shows changes in the working directory that are not yet staged",
            )
            .with_schema(schema),
        )
        .tool(ToolSpec::mcp("github", "create_issue", "Create a new issue in a GitHub repository"))
        .tool(ToolSpec::mcp("github", "list_issues", "List issues in a GitHub repository"))
        .tool(ToolSpec::mcp("slack", "send_message", "Send a message to a Slack channel"))
        .tool(ToolSpec::mcp("filesystem", "read_file", "Read the complete contents of a file"))
        .tool(ToolSpec::mcp("other", "read_file", "Reads a file from the sandbox"))
        .tool(ToolSpec::mcp("weather", "get_forecast", "天气预报：查询城市未来几天的天气"))
        .tool(ToolSpec::mcp("codex", "ask_codex", "Ask Codex a question"))
        .build()
        .unwrap()
}

fn check_in(catalog: &Catalog, strategy: Strategy, query: &str, expect: Expect) {
    let index = Index::builder().strategy(strategy).build(catalog);
    let found = index.search(Request::new(query, 5));
    let mut out = format!("{:?}\n", found.form);
    for h in &found.hits {
        let score = if h.score.is_finite() { format!("{:.3}", h.score) } else { "sure".into() };
        out.push_str(&format!("{} {score}\n", catalog.tool(h.tool).qualified_name()));
    }
    if !found.unmatched_terms.is_empty() {
        out.push_str(&format!("unmatched: {}\n", found.unmatched_terms.join(" ")));
    }
    expect.assert_eq(&out);
}

/// The qualified name of the best hit for `query` over `catalog` under `strategy`.
fn first_in(catalog: &Catalog, strategy: Strategy, query: &str) -> String {
    let index = Index::builder().strategy(strategy).build(catalog);
    let found = index.search(Request::new(query, 5));
    catalog.tool(found.hits[0].tool).qualified_name().to_owned()
}

fn check(query: &str, expect: Expect) {
    check_in(&small(), Strategy::Bm25f, query, expect);
}

/// The best hit for `query` on the embedded catalog under the default strategy, with why it
/// ranked (terms, fields, expansions).
fn check_explained(query: &str, expect: Expect) {
    let catalog = Catalog::embedded();
    let index = Index::builder().build(&catalog);
    let found = index.search(Request::new(query, 3));
    let mut out = String::new();
    for (i, h) in found.hits.iter().enumerate() {
        out.push_str(&format!("{}\n", catalog.tool(h.tool).qualified_name()));
        if i > 0 {
            continue;
        }
        for t in index.explain(query, h.tool).terms {
            let fields: Vec<String> = t.fields.iter().map(|(f, s)| format!("{f} {s:.2}")).collect();
            let from =
                t.expansion.map(|(text, via)| format!(" <- {text} ({})", via.as_str())).unwrap_or_default();
            out.push_str(&format!("  {}: {}{from}\n", t.term, fields.join(" + ")));
        }
    }
    expect.assert_eq(&out);
}

fn check_embedded(query: &str, expect: Expect) {
    check_in(&Catalog::embedded(), Strategy::DEFAULT, query, expect);
}

#[test]
fn select_returns_exactly_the_named_tools() {
    check(
        "select:slack__send_message, GIT__GIT_LOG,mcp__github__list_issues,nope",
        expect![[r#"
            Select
            slack__send_message sure
            git__git_log sure
            github__list_issues sure
            unmatched: nope
        "#]],
    );
}

#[test]
fn a_bare_name_on_two_servers_selects_both() {
    check(
        "read_file",
        expect![[r#"
            Exact
            filesystem__read_file sure
            other__read_file sure
        "#]],
    );
}

#[test]
fn server_prefix_lists_the_server() {
    check(
        "mcp__github",
        expect![[r#"
            Prefix
            github__create_issue sure
            github__list_issues sure
        "#]],
    );
    check(
        "git__",
        expect![[r#"
            Prefix
            git__git_diff_unstaged sure
            git__git_log sure
        "#]],
    );
}

#[test]
fn required_terms_filter() {
    check(
        "+github issue",
        expect![[r#"
            Keywords
            github__list_issues 1.998
            github__create_issue 1.977
        "#]],
    );
    check(
        "+nothinglikethis issue",
        expect![[r#"
            Keywords
            unmatched: nothinglikethis
        "#]],
    );
}

#[test]
fn a_named_tool_comes_first_whatever_the_scores() {
    check(
        "show me changes git_log",
        expect![[r#"
            Keywords
            git__git_log sure
            git__git_diff_unstaged 1.398
            github__list_issues 0.351
            github__create_issue 0.328
            unmatched: show
        "#]],
    );
}

#[test]
fn identifiers_in_queries_split_like_names() {
    check(
        "ask codex",
        expect![[r#"
            Keywords
            codex__ask_codex 3.091
        "#]],
    );
}

#[test]
fn schema_fields_are_searched() {
    check(
        "repository path",
        expect![[r#"
            Keywords
            github__list_issues 0.351
            git__git_diff_unstaged 0.341
            git__git_log 0.341
            github__create_issue 0.328
        "#]],
    );
}

#[test]
fn chinese_is_segmented() {
    check(
        "明天天气怎么样",
        expect![[r#"
            Keywords
            weather__get_forecast 0.861
        "#]],
    );
}

#[test]
fn keyword_baseline_uses_claude_code_weights() {
    check_in(
        &small(),
        Strategy::Keyword,
        "send message slack",
        expect![[r#"
            Keywords
            slack__send_message 42.000
        "#]],
    );
}

#[test]
fn screenshot_tools_come_first() {
    check_embedded(
        "take a screenshot of a web page",
        expect![[r#"
            Keywords
            playwright__playwright_screenshot 1.300
            puppeteer__puppeteer_screenshot 1.283
            image-extractor__extract_image_from_url 0.833
            image-extractor__extract_image_from_file 0.519
            duckduckgo-search__duckduckgo_web_search 0.510
        "#]],
    );
}

#[test]
fn chinese_ticket_request_finds_12306() {
    check_embedded(
        "帮我查一下明天上海到北京的火车余票",
        expect![[r#"
            Keywords
            12306-mcp__get-tickets 7.436
            12306-mcp__get-interline-tickets 6.537
            12306-mcp__get-stations-code-in-city 6.421
            12306-mcp__get-train-route-stations 3.913
            12306-mcp__get-station-code-of-citys 3.674
        "#]],
    );
}

#[test]
fn chinese_request_finds_english_tool_through_the_vocabulary() {
    check_explained(
        "这三个 PDF 帮我合并成一个文件",
        expect![[r#"
            searxng__pdf_merger
              pdf: name 1.77 + description 1.34 + schema 0.53
              merge: description 3.21 <- 合并 (vocabulary)
              file: description 0.92 + schema 0.18 <- 文件 (vocabulary)
              (meaning): cosine 0.12
            searxng__pdf_splitter
            searxng__docx_to_pdf
        "#]],
    );
    check_explained(
        "帮我看看这个仓库最近的提交记录",
        expect![[r#"
            git__git_commit
              repository: description 2.52 <- 仓库 (vocabulary)
              commit: name 2.61 <- 提交 (vocabulary)
              record: description 2.44 <- 记录 (vocabulary)
              (meaning): cosine 0.02
            git__git_log
            docker-mcp__get-logs
        "#]],
    );
    check_explained(
        "北京时间明早九点开会，伦敦那边是几点？换算一下时区",
        expect![[r#"
            time__convert_time
              time: name 0.89 + server 0.44 + description 0.72 + schema 0.09 <- 时间 (vocabulary)
              convert: name 1.33 + description 1.08 + schema 0.07 <- 换算 (vocabulary)
              timezone: description 2.21 + schema 1.13 <- 时区 (vocabulary)
              (meaning): cosine 0.13
            time__get_current_time
            bazi__getChineseCalendar
        "#]],
    );
}

#[test]
fn mixed_request_uses_both_languages() {
    check_explained(
        "用 playwright 给网页截图",
        expect![[r#"
            playwright__playwright_screenshot
              playwright: name 1.51 + server 0.75
              page: description 1.31 + schema 0.19 <- 网页 (vocabulary)
              screenshot: name 1.58 + description 1.12 + schema 0.40 <- 截图 (vocabulary)
              (meaning): cosine 0.35
            puppeteer__puppeteer_screenshot
            image-extractor__extract_image_from_url
        "#]],
    );
}

#[test]
fn english_synonyms_expand() {
    check_explained(
        "fetch stock dividends",
        expect![[r#"
            yahoo-finance__get_dividends
              get: name 0.30 + description 0.23 <- fetch (synonym)
              stock: description 1.80 + schema 0.66
              dividend: name 2.39 + description 1.80
              (meaning): cosine 0.89
            kospi-kosdaq__get_stock_fundamental
            yahoo-finance__get_current_stock_price
        "#]],
    );
}

#[test]
fn wordnet_synonyms_serve_only_words_no_tool_has() {
    let rental = ToolSpec::mcp("rental", "book_car", "Book a rental car for a trip");
    let museum = ToolSpec::mcp("museum", "list_exhibits", "List the motorcar exhibits of a museum");
    let weather = ToolSpec::mcp("weather", "get_forecast", "Weather forecast for a city");
    // The vocabulary's rule, so `lexical`: `semantic` also finds the rental by meaning.
    let names = |catalog: &Catalog, query: &str| -> Vec<String> {
        let index = Index::builder().strategy(Strategy::Lexical).build(catalog);
        let found = index.search(Request::new(query, 5));
        found.hits.iter().map(|h| catalog.tool(h.tool).qualified_name().to_owned()).collect()
    };
    // No tool says `motorcar`: WordNet's `car` finds the rental.
    let without = Catalog::builder().tool(rental.clone()).tool(weather.clone()).build().unwrap();
    assert_eq!(names(&without, "a motorcar please"), ["rental__book_car"]);
    // A tool says it: the word speaks for itself, and the rental is not looked for.
    let with = Catalog::builder().tool(rental).tool(museum).tool(weather).build().unwrap();
    assert_eq!(names(&with, "a motorcar please"), ["museum__list_exhibits"]);
}

#[test]
fn identifiers_in_queries_split_like_names_under_the_default() {
    check_in(
        &small(),
        Strategy::DEFAULT,
        "please ask_codex",
        expect![[r#"
            Keywords
            codex__ask_codex sure
        "#]],
    );
    check_in(
        &small(),
        Strategy::DEFAULT,
        "askCodex about it",
        expect![[r#"
            Keywords
            codex__ask_codex 1.000
            slack__send_message 0.300
            unmatched: about
        "#]],
    );
}

#[test]
fn nothing_matched_says_which_terms() {
    check(
        "zzqqxx",
        expect![[r#"
            Keywords
            unmatched: zzqqxx
        "#]],
    );
}

#[test]
fn hostile_queries_do_not_panic() {
    let index = Index::builder().build(&small());
    for q in [
        "",
        "   ",
        "select:",
        "select:,,,",
        "+",
        "++",
        "mcp__",
        "__",
        "\u{0}\u{feff}",
        &"a".repeat(100_000),
        "+\u{4e00}",
    ] {
        let found = index.search(Request::new(q, 5));
        assert!(found.hits.len() <= 5, "{q:?}");
    }
    assert!(index.search(Request::new("git_log", 0)).hits.is_empty());
}

#[test]
fn servers_filter_keeps_only_those_servers() {
    let index = Index::builder().build(&small());
    let servers = vec!["other".to_owned()];
    let found = index.search(Request { servers: Some(&servers), ..Request::new("read file", 5) });
    let names: Vec<&str> = found.hits.iter().map(|h| index.catalog().tool(h.tool).qualified_name()).collect();
    assert_eq!(names, ["other__read_file"]);
}

const WORDS: &[&str] =
    &["read", "file", "git", "log", "issue", "send", "message", "list", "天气", "查询", "repo", "path"];

fn arb_catalog() -> impl proptest::strategy::Strategy<Value = Catalog> {
    let tool = (
        0..4usize,
        proptest::collection::vec(0..WORDS.len(), 1..4),
        proptest::collection::vec(0..WORDS.len(), 0..8),
    );
    proptest::collection::vec(tool, 1..30).prop_map(|tools| {
        let mut b = Catalog::builder();
        for (i, (server, name, desc)) in tools.into_iter().enumerate() {
            let name: Vec<&str> = name.iter().map(|&w| WORDS[w]).collect();
            let desc: Vec<&str> = desc.iter().map(|&w| WORDS[w]).collect();
            b = b.tool(ToolSpec::mcp(
                &format!("s{server}"),
                &format!("{}_{i}", name.join("_")),
                &desc.join(" "),
            ));
        }
        b.build().unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ranked_search_agrees_with_brute_force(catalog in arb_catalog(), words in proptest::collection::vec(0..WORDS.len(), 1..4), plain in any::<bool>()) {
        let query: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
        let query = query.join(" ");
        let (strategy, params) = if plain { (Strategy::Bm25, Bm25Params::plain()) } else { (Strategy::Bm25f, Bm25Params::bm25f()) };
        let index = Index::builder().strategy(strategy).build(&catalog);
        let found = index.search(Request::new(&query, usize::MAX));
        let mut terms = Vec::new();
        params.analyzer.tokens(&query, &mut terms);
        let mut want: Vec<(f32, &str, ToolId)> = catalog
            .ids()
            .map(|id| (brute_force(&catalog, &params, id, &terms), catalog.tool(id).qualified_name(), id))
            .filter(|(s, _, _)| *s > 0.0)
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        prop_assert_eq!(found.hits.len(), want.len());
        for (hit, (score, name, _)) in found.hits.iter().zip(&want) {
            prop_assert!((hit.score - score).abs() < 1e-4, "{} vs {} for {}", hit.score, score, name);
        }
        // Same order up to ties within rounding.
        for pair in found.hits.windows(2) {
            prop_assert!(pair[0].score >= pair[1].score - 1e-6);
        }
    }

    #[test]
    fn keyword_search_agrees_with_brute_force(catalog in arb_catalog(), words in proptest::collection::vec(0..WORDS.len(), 1..4)) {
        let query: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
        let query = query.join(" ");
        let index = Index::builder().strategy(Strategy::Keyword).build(&catalog);
        let found = index.search(Request::new(&query, usize::MAX));
        let k = keyword::KeywordIndex::build(&catalog);
        let terms: Vec<String> = query.split_whitespace().map(str::to_owned).collect();
        let mut want: Vec<(u32, &str)> = (0..catalog.len())
            .map(|d| (k.score(d, &terms), catalog.tool(catalog.id(d)).qualified_name()))
            .filter(|(s, _)| *s > 0)
            .collect();
        want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        let got: Vec<(u32, &str)> = found.hits.iter().map(|h| (h.score as u32, catalog.tool(h.tool).qualified_name())).collect();
        prop_assert_eq!(got, want);
    }
}

#[cfg(feature = "bm25-crate")]
#[test]
fn bm25_crate_ranks_with_codex_settings() {
    // The crate stems and drops stop words (`the`, `to`); Han characters are its tokens
    // one by one, so a Chinese word meets any text that has its characters.
    check_in(
        &small(),
        Strategy::Bm25Crate,
        "send the messages to slack",
        expect![[r#"
            Keywords
            slack__send_message 8.417
        "#]],
    );
    check_in(
        &small(),
        Strategy::Bm25Crate,
        "天气",
        expect![[r#"
        Keywords
        weather__get_forecast 4.555
    "#]],
    );
}

#[test]
fn a_phone_number_is_no_required_term() {
    check(
        "send a message to +1234567890",
        expect![[r#"
            Keywords
            slack__send_message 2.973
            unmatched: +1234567890
        "#]],
    );
}

/// A catalog where a task's stated topic (papers) has many tools and what it also needs (a
/// file written, the date) has one each.
fn task_catalog() -> Catalog {
    let mut b = Catalog::builder();
    for (name, description) in [
        ("search_papers", "Search research papers on arXiv by topic"),
        ("read_paper", "Read the full text of a research paper"),
        ("download_paper", "Download a research paper as PDF"),
        ("list_papers", "List the research papers downloaded so far"),
        ("summarize_paper", "Summarize a research paper into a short note"),
        ("cite_paper", "Format a citation of a research paper"),
        ("compare_papers", "Compare research papers side by side"),
        ("paper_authors", "The authors of research papers"),
    ] {
        b = b.tool(ToolSpec::mcp("papers", name, description));
    }
    b.tool(ToolSpec::mcp("notes", "write_note", "Write a note about papers into the notebook"))
        .tool(ToolSpec::mcp(
            "filesystem",
            "write_file",
            "Create a new file or overwrite a file with new content",
        ))
        .tool(ToolSpec::mcp("filesystem", "read_file", "Read the complete contents of a file"))
        .tool(ToolSpec::mcp("time", "get_current_time", "Get the current time in a timezone"))
        .tool(ToolSpec::mcp("weather", "get_forecast", "Weather forecast for a city and a date"))
        .build()
        .unwrap()
}

#[test]
fn a_task_makes_room_for_the_file_it_writes() {
    let catalog = task_catalog();
    check_in(
        &catalog,
        Strategy::Lexical,
        "Summarize the research papers on web agents from last week and save the summary to /root/markdown/agents.md",
        expect![[r#"
            Keywords
            papers__summarize_paper 2.261
            filesystem__write_file 0.969
            notes__write_note 0.969
            papers__paper_authors 0.590
            papers__cite_paper 0.563
            unmatched: web agents summary
        "#]],
    );
    // The topic alone: the file writer is not there. The time frame (`last week`) calls for
    // no clock either way.
    check_in(
        &catalog,
        Strategy::Lexical,
        "Summarize the research papers on web agents",
        expect![[r#"
            Keywords
            papers__summarize_paper 2.261
            papers__paper_authors 0.590
            papers__cite_paper 0.563
            papers__download_paper 0.563
            papers__compare_papers 0.541
            unmatched: web agents
        "#]],
    );
}

#[test]
fn a_need_no_tool_meets_adds_nothing() {
    // Without a clock, `next Monday` must not bring in the forecast that merely takes a date.
    let catalog = Catalog::builder()
        .tool(ToolSpec::mcp("papers", "search_papers", "Search research papers on arXiv by topic"))
        .tool(ToolSpec::mcp(
            "weather",
            "get_forecast",
            "Weather forecast for a city at the current time and date",
        ))
        .build()
        .unwrap();
    check_in(
        &catalog,
        Strategy::Lexical,
        "find research papers to read next Monday",
        expect![[r#"
            Keywords
            papers__search_papers 1.192
            unmatched: read
        "#]],
    );
}

#[test]
fn explain_names_the_need_a_tool_was_placed_for() {
    let index = Index::builder().strategy(Strategy::Lexical).build(&task_catalog());
    let query =
        "Summarize the research papers on web agents and save the summary to /root/markdown/agents.md";
    let writer = index.named("filesystem__write_file")[0];
    let e = index.explain(query, writer);
    assert_eq!(e.via, "lexical, needed: write file (for `/root/markdown/agents.md`)");
    let terms: Vec<&str> = e.terms.iter().map(|t| t.term.as_str()).collect();
    assert!(terms.contains(&"file"), "{terms:?}");
    // A tool ranked for the request's own words says nothing of needs.
    let summarizer = index.named("papers__summarize_paper")[0];
    assert_eq!(index.explain(query, summarizer).via, "lexical");
}

/// Travel tools where a conversation's first turn (health alerts) has more words in the request
/// than its latest one (vaccines).
fn travel_catalog() -> Catalog {
    Catalog::builder()
        .tool(ToolSpec::mcp(
            "travel",
            "health_alerts",
            "Current health alerts for a travel destination and month",
        ))
        .tool(ToolSpec::mcp("travel", "vaccine_advice", "Vaccine advice for a trip to a country"))
        .tool(ToolSpec::mcp("travel", "book_flight", "Book a flight to a destination"))
        .build()
        .unwrap()
}

#[test]
fn a_conversation_puts_its_latest_request_first() {
    let conversation = "user: I'm planning a trip to India next month. Can you tell me about current health alerts there?\n\
                        assistant: For which month and destination?\n\
                        user: Sure, the health alerts for the whole month of August, for the destination.\n\
                        user: Great, one last thing. Could you provide vaccine advice?";
    let ranked = |q: &str| {
        let index = Index::builder().strategy(Strategy::Lexical).build(&travel_catalog());
        let hits = index.search(Request::new(q, 3)).hits;
        hits.iter().map(|h| index.catalog().tool(h.tool).qualified_name().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(ranked(conversation)[0], "travel__vaccine_advice", "the latest user turn counts more");
    // The same lines without speakers are one request, as are they on one line: the first
    // turn's words win, whatever the layout.
    let unmarked: String = conversation
        .lines()
        .map(|l| l.split_once(": ").map_or(l, |(_, said)| said))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(ranked(&unmarked)[0], "travel__health_alerts");
    assert_eq!(ranked(&unmarked.replace('\n', " ")), ranked(&unmarked), "lines change nothing");
    assert_eq!(ranked(&unmarked.replace('\n', "\n\n")), ranked(&unmarked), "paragraphs change nothing");
}

#[test]
fn numbers_in_a_request_are_arguments_not_intent() {
    // The explorer's schema quotes the very coordinates of the request as an example; the
    // dispatcher is what the words ask for.
    let latitude = serde_json::json!({
        "type": "object",
        "properties": {"position": {"type": "string", "description": "Latitude and longitude, e.g. 35.6895, 139.6917"}}
    });
    let catalog = Catalog::builder()
        .tool(ToolSpec::mcp("geo", "places_explorer", "Explore places near a location").with_schema(latitude))
        .tool(ToolSpec::mcp("geo", "message_dispatcher", "Send a message to users at a location"))
        .build()
        .unwrap();
    check_in(
        &catalog,
        Strategy::Lexical,
        "send a message to 35.6895, 139.6917",
        expect![[r#"
            Keywords
            geo__message_dispatcher 0.848
            geo__places_explorer 0.133
        "#]],
    );
}

/// `builder` with 18 tools about other things (`weather_search`, `law_details` …), so that a
/// kind or field is in few enough of the catalog's tools to be looked for.
fn with_unrelated_tools(mut builder: CatalogBuilder) -> CatalogBuilder {
    for topic in ["weather", "email", "calendar", "maps", "translate", "music", "jobs", "news", "law"] {
        for part in ["search", "details"] {
            builder = builder.tool(ToolSpec::mcp(
                "misc",
                &format!("{topic}_{part}"),
                &format!("{part} about {topic}"),
            ));
        }
    }
    builder
}

#[test]
fn a_word_of_a_field_finds_the_tool_of_that_field() {
    // `ethereum` is in no description, but it is about finance. (A field in more than a
    // twentieth of the catalog is not looked for, hence the other tools.)
    let builder = with_unrelated_tools(
        Catalog::builder()
            .tool(ToolSpec::mcp("markets", "finance_news", "Latest financial updates and market analysis"))
            .tool(ToolSpec::mcp("web", "price_tracker", "Track the price of a product in online shops")),
    );
    let catalog = builder.build().unwrap();
    let index = Index::builder().strategy(Strategy::Lexical).build(&catalog);
    let found = index.search(Request::new("how is ethereum doing this week", 3));
    let names: Vec<&str> = found.hits.iter().map(|h| catalog.tool(h.tool).name()).collect();
    expect![[r#"
        [
            "finance_news",
        ]
    "#]]
    .assert_debug_eq(&names);
    let why = index.explain("how is ethereum doing this week", found.hits[0].tool);
    let terms: Vec<String> = why.terms.iter().map(|t| format!("{} {:?}", t.term, t.expansion)).collect();
    expect![[r#"
        [
            "finance Some((\"ethereum\", Topic))",
        ]
    "#]]
    .assert_debug_eq(&terms);
}

/// The finance tool and the price tracker of [`a_word_of_a_field_finds_the_tool_of_that_field`],
/// with unrelated tools enough that a field is looked for.
fn field_catalog() -> Catalog {
    let builder = with_unrelated_tools(
        Catalog::builder()
            .tool(ToolSpec::mcp("markets", "finance_news", "Latest financial updates and market analysis"))
            .tool(ToolSpec::mcp("web", "price_tracker", "Track the price of a product in online shops"))
            .tool(ToolSpec::mcp("food", "cuisine_guide", "Restaurants by cuisine, with recipes")),
    );
    builder.build().unwrap()
}

#[test]
fn the_field_of_a_word_no_tool_has_weighs_more() {
    // No tool says `ethereum`, so its field is all it can say: the finance tool gets the field
    // at the weight of `unsaid` (0.9), not of an ordinary field (0.6).
    let catalog = field_catalog();
    let ranked = |expansion: Expansion| {
        let index = Index::builder().strategy(Strategy::Lexical).expansion(expansion).build(&catalog);
        let found = index.search(Request::new("ethereum price", 2));
        let out: Vec<String> =
            found.hits.iter().map(|h| format!("{} {:.3}", catalog.tool(h.tool).name(), h.score)).collect();
        out.join(", ")
    };
    expect!["price_tracker 2.028, finance_news 1.726"].assert_eq(&ranked(Expansion::default()));
    let ordinary = Expansion { unsaid: 0.0, ..Expansion::default() };
    expect!["price_tracker 2.028, finance_news 1.151"].assert_eq(&ranked(ordinary));
}

#[test]
fn an_expansion_to_a_word_the_request_says_is_not_counted_twice() {
    // `taco` is a kind of dish of the field `cuisine`, which the request also says itself.
    let catalog = field_catalog();
    let index = Index::builder().strategy(Strategy::Lexical).build(&catalog);
    let query = "a taco place that fits my cuisine tastes";
    let found = index.search(Request::new(query, 1));
    let why = index.explain(query, found.hits[0].tool);
    let terms: Vec<String> = why.terms.iter().map(|t| format!("{} {:?}", t.term, t.expansion)).collect();
    expect![[r#"
        [
            "food Some((\"taco\", Kind))",
            "cuisine None",
        ]
    "#]]
    .assert_debug_eq(&terms);
}

#[test]
fn a_chinese_word_finds_the_general_word_of_its_translation() {
    // `欧元` is `euro`, a kind of `currency`: in Chinese `货币`, in English `currency`.
    // (Unrelated tools besides, so that a kind is looked for.)
    let mut builder = Catalog::builder()
        .tool(ToolSpec::mcp("fx", "volatility_predictor", "预测指定时间范围内的货币波动性"))
        .tool(ToolSpec::mcp("fx", "exchange_rates", "Latest exchange rates of any currency"))
        .tool(ToolSpec::mcp("stats", "trend_analyzer", "分析数据的变化趋势"));
    for topic in ["weather", "email", "calendar", "maps", "translate", "music", "jobs", "news", "law"] {
        builder = builder.tool(ToolSpec::mcp("misc", &format!("{topic}_search"), &format!("search {topic}")));
    }
    let catalog = builder.build().unwrap();
    // Kinds are off by default (`docs/ranking.md`, leaving one set out); this is the mechanism.
    let kinds = Expansion { kind: 0.5, ..Expansion::default() };
    let index = Index::builder().strategy(Strategy::Lexical).expansion(kinds).build(&catalog);
    let query = "欧元下周的走势";
    let found = index.search(Request::new(query, 4));
    let mut out = String::new();
    for h in &found.hits {
        let why = index.explain(query, h.tool);
        let terms: Vec<String> = why.terms.iter().map(|t| format!("{} {:?}", t.term, t.expansion)).collect();
        out.push_str(&format!("{}: {}\n", catalog.tool(h.tool).name(), terms.join(", ")));
    }
    expect![[r#"
        trend_analyzer: trend Some(("走势", Vocabulary))
        exchange_rates: currency Some(("欧元", Kind))
        volatility_predictor: 货币 Some(("欧元", Kind))
    "#]]
    .assert_eq(&out);
}

#[cfg(feature = "semantic")]
#[test]
fn semantic_gives_at_least_the_hits_of_lexical_for_any_limit_and_server_filter() {
    let catalog = Catalog::embedded();
    let lexical = Index::builder().strategy(Strategy::Lexical).build(&catalog);
    let semantic = Index::builder().strategy(Strategy::Semantic).build(&catalog);
    let query = "search the web and read a page";
    // A limit larger than the candidates the dense side reads.
    for limit in [5, 30, 60] {
        let (l, s) =
            (lexical.search(Request::new(query, limit)), semantic.search(Request::new(query, limit)));
        assert!(
            s.hits.len() >= l.hits.len() && s.hits.len() <= limit,
            "limit {limit}: {} against {}",
            s.hits.len(),
            l.hits.len()
        );
    }
    // A larger limit only adds hits after those of a smaller one.
    let ten = semantic.search(Request::new(query, 10)).hits;
    assert_eq!(semantic.search(Request::new(query, 60)).hits[..ten.len()], ten[..]);
    // A server filter: every server's own hits, however far down the whole ranking they are (the
    // dense side may find one more that the words do not).
    let mut servers: Vec<String> = catalog.tools().iter().map(|t| t.server().to_owned()).collect();
    servers.dedup();
    for server in servers {
        let only = [server];
        let request = || Request { servers: Some(&only), ..Request::new(query, 10) };
        let (l, s) = (lexical.search(request()), semantic.search(request()));
        assert!(s.hits.len() >= l.hits.len(), "{}: {} against {}", only[0], s.hits.len(), l.hits.len());
        assert!(s.hits.iter().all(|h| catalog.tool(h.tool).server() == only[0]));
    }
}

/// "Nothing fits" (issue 44): a request far in meaning from every tool the words found loads
/// none of them, and the hits are still listed; the same request with the rule off, one that
/// fits, a `select:`, and a request the model cannot read load as before.
#[cfg(feature = "semantic")]
#[test]
fn a_request_nothing_fits_lists_the_nearest_and_loads_none() {
    let catalog = Catalog::embedded();
    let index = Index::builder().strategy(Strategy::Semantic).build(&catalog);
    let with =
        |query, fit| index.search(Request { cut: LoadCut { fit, ..LOAD_CUT }, ..Request::new(query, 5) });
    for query in ["tell me a joke about cats", "what is the meaning of life"] {
        let found = with(query, NOTHING_FITS);
        assert!(!found.hits.is_empty(), "{query}: the words find tools");
        assert_eq!(found.loads, 0, "{query}");
        assert!(with(query, f32::NEG_INFINITY).loads > 0, "{query}: the rule off, the cut loads");
        // Measured with the same index over and over: a fixed answer, not a coin.
        assert_eq!(index.search(Request::new(query, 5)).loads, 0, "{query}: the default cut");
    }
    // A request that fits, as loose as those, loads.
    for query in ["take a screenshot of a web page", "what time is it in Tokyo", "create a new git branch"] {
        assert!(with(query, NOTHING_FITS).loads > 0, "{query}");
    }
    // A tool named is loaded whatever the meaning says; a Chinese request, which the model
    // cannot read, keeps the cut of its words.
    assert_eq!(with("select:time__get_current_time", f32::INFINITY).loads, 1);
    assert!(with("帮我查一下明天上海到北京的火车余票", f32::INFINITY).loads > 0);
    // The lexical strategies have no model and never say it.
    let lexical = Index::builder().strategy(Strategy::Lexical).build(&catalog);
    let found = lexical.search(Request {
        cut: LoadCut { fit: f32::INFINITY, ..LOAD_CUT },
        ..Request::new("tell me a joke about cats", 5)
    });
    assert!(found.loads > 0);
}

/// A line's label says what the line is: a heading over a request does not bring in the tools
/// named like it, in either language, and a request that is all label still ranks by it.
#[test]
fn a_label_counts_little_but_is_not_lost() {
    let catalog = Catalog::builder()
        .tool(ToolSpec::mcp("tasks", "update_task", "Update a task's title and description"))
        .tool(ToolSpec::mcp("tasks", "add_task", "Add a task to the task list"))
        .tool(ToolSpec::mcp("git", "git_log", "Shows the commit logs of a repository"))
        .tool(ToolSpec::mcp("translate", "translate_text", "Translate text into another language"))
        .tool(ToolSpec::mcp("notes", "write_note", "Write a note"))
        .build()
        .unwrap();
    let first = |strategy: Strategy, query: &str| first_in(&catalog, strategy, query);
    for strategy in [Strategy::Lexical, Strategy::DEFAULT] {
        for query in
            ["Task description:\n\nthe logs", "任务描述：\n\n提交记录", "## Task description: the logs"]
        {
            assert_eq!(first(strategy, query), "git__git_log", "{strategy:?}: {query:?}");
        }
        // Nothing else is said: the label ranks.
        assert_eq!(first(strategy, "Translate:\n\nbonjour tout le monde"), "translate__translate_text");
        // Said outside the label too, a word counts whole.
        assert_eq!(first(strategy, "Note: add a task to my task list"), "tasks__add_task");
    }
    // Counted whole, as `bm25f` counts it, the heading wins (which the label weight is for).
    let whole = Index::builder()
        .strategy(Strategy::Lexical)
        .expansion(Expansion { label: 1.0, ..Expansion::default() })
        .build(&catalog);
    let found = whole.search(Request::new("Task description:\n\nthe logs", 5));
    assert_eq!(catalog.tool(found.hits[0].tool).qualified_name(), "tasks__update_task");
    assert_eq!(first(Strategy::Bm25f, "Task description:\n\nthe logs"), "tasks__update_task");
}

#[test]
fn a_wish_about_the_reply_counts_little() {
    let catalog = Catalog::builder()
        .tool(ToolSpec::mcp("todo", "list_reminders", "List reminders and to-do items"))
        .tool(ToolSpec::mcp("video", "summarize_video", "Generate a short summary of a video"))
        .tool(ToolSpec::mcp("weather", "get_forecast", "Get the weather forecast for a city"))
        .tool(ToolSpec::mcp("mail", "reply_email", "Reply to an email message"))
        .build()
        .unwrap();
    let first = |strategy: Strategy, query: &str| first_in(&catalog, strategy, query);
    for strategy in [Strategy::Lexical, Strategy::DEFAULT] {
        for query in [
            "What's the weather in Paris?\n\nAnswer in a short list with a one-line summary.",
            "巴黎的天气怎么样？\n\n请用简短的列表回答，最后附一句总结。",
        ] {
            assert_eq!(first(strategy, query), "weather__get_forecast", "{strategy:?}: {query:?}");
        }
        // A reply that is the task is read whole.
        assert_eq!(first(strategy, "Reply to the email from Bob"), "mail__reply_email");
    }
    // Read whole, as `bm25f` reads it, the wish's words win.
    let query = "What's the weather in Paris?\n\nAnswer in a short list with a one-line summary.";
    assert_ne!(first(Strategy::Bm25f, query), "weather__get_forecast");
}
