//! Integration tests of the `toolgate` binary: golden `--json` outputs, the query language as
//! seen from the command line, exit codes and error messages.
//!
//! Every command runs with the crate directory as its working directory and relative paths, so
//! that the paths echoed in JSON are stable. Golden files live in `tests/golden/`; run with
//! `UPDATE_GOLDEN=1` to rewrite them from the current output.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const SMALL_CATALOG: &str = "tests/fixtures/small.jsonl";
const SMALL_QUERIES: &str = "tests/fixtures/small-queries.jsonl";
const BAD_CATALOG: &str = "tests/fixtures/bad-line3.jsonl";
const SCREENSHOT_QUERY: &str = "take a screenshot of a web page";
/// Three real qualified names of the embedded catalog, from three servers.
const SELECTED: [&str; 3] =
    ["playwright__playwright_screenshot", "12306-mcp__get-tickets", "yahoo-finance__get_current_stock_price"];
/// Latency fields of `eval --json`, which vary from run to run.
const LATENCY_KEYS: [&str; 3] = ["query_p50_us", "query_p99_us", "build_ms"];

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `toolgate` with `args` in the crate directory.
fn toolgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(crate_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run toolgate {args:?}: {e}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// Runs `toolgate` and checks the exit code.
fn toolgate_exit(args: &[&str], code: i32) -> Output {
    let o = toolgate(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "toolgate {args:?}: expected exit {code}\n--- stdout\n{}\n--- stderr\n{}",
        stdout(&o),
        stderr(&o)
    );
    o
}

/// Runs `toolgate` expecting success and parses its JSON output.
fn toolgate_json(args: &[&str]) -> Value {
    let o = toolgate_exit(args, 0);
    serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("toolgate {args:?}: not JSON: {e}\n{}", stdout(&o)))
}

/// The qualified names of a `search --json` result, in order.
fn match_names(v: &Value) -> Vec<String> {
    v["matches"]
        .as_array()
        .expect("`matches` is an array")
        .iter()
        .map(|m| m["name"].as_str().expect("match name is a string").to_owned())
        .collect()
}

fn golden_path(name: &str) -> PathBuf {
    crate_dir().join("tests/golden").join(name)
}

/// Compares `actual` with the golden file `name`, or rewrites it when `UPDATE_GOLDEN=1`.
fn check_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read golden file {}: {e}\n(run with UPDATE_GOLDEN=1 to create it)", path.display())
    });
    if expected == actual {
        return;
    }
    let exp: Vec<&str> = expected.lines().collect();
    let act: Vec<&str> = actual.lines().collect();
    let mut diff = String::new();
    let mut shown = 0;
    for i in 0..exp.len().max(act.len()) {
        let (e, a) = (exp.get(i), act.get(i));
        if e == a {
            continue;
        }
        if shown == 20 {
            diff.push_str("  ... (more differences)\n");
            break;
        }
        shown += 1;
        diff.push_str(&format!("  line {}:\n", i + 1));
        diff.push_str(&format!("    - {}\n", e.copied().unwrap_or("<missing>")));
        diff.push_str(&format!("    + {}\n", a.copied().unwrap_or("<missing>")));
    }
    if shown == 0 {
        diff.push_str("  (the files differ only in line endings or a final newline)\n");
    }
    panic!(
        "output differs from golden file {} ({} lines expected, {} actual; `-` golden, `+` actual):\n{diff}\
         If the change is intended, rerun with UPDATE_GOLDEN=1 and review the diff.",
        path.display(),
        exp.len(),
        act.len()
    );
}

/// Runs `toolgate` expecting success and checks its stdout against a golden file.
fn check_golden_output(name: &str, args: &[&str]) {
    let o = toolgate_exit(args, 0);
    let out = stdout(&o);
    serde_json::from_str::<Value>(&out).unwrap_or_else(|e| panic!("toolgate {args:?}: not JSON: {e}\n{out}"));
    check_golden(name, &out);
}

/// Replaces every latency value in `v` with 0, after checking it is a number; returns how many
/// were found.
fn zero_latencies(v: &mut Value) -> usize {
    match v {
        Value::Object(map) => {
            let mut n = 0;
            for (k, child) in map.iter_mut() {
                if LATENCY_KEYS.contains(&k.as_str()) {
                    assert!(child.is_number(), "`{k}` must be a number, got {child}");
                    *child = Value::from(0);
                    n += 1;
                } else {
                    n += zero_latencies(child);
                }
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(zero_latencies).sum(),
        _ => 0,
    }
}

#[test]
fn golden_search_json_screenshot_query_on_embedded_catalog() {
    check_golden_output("search-screenshot.json", &["search", "--json", SCREENSHOT_QUERY]);
}

#[test]
fn golden_search_json_select_three_names() {
    let query = format!("select:{}", SELECTED.join(","));
    check_golden_output("search-select.json", &["search", "--json", &query]);
}

#[test]
fn golden_search_json_on_small_fixture_catalog() {
    check_golden_output(
        "search-small.json",
        &["search", "--json", "--catalog", SMALL_CATALOG, "weather forecast for the next days"],
    );
}

#[test]
fn golden_tokens_json_on_embedded_catalog() {
    check_golden_output("tokens-embedded.json", &["tokens", "--json"]);
}

#[test]
fn golden_eval_json_all_strategies_on_small_fixture_with_latencies_zeroed() {
    let args =
        ["eval", "--json", "--catalog", SMALL_CATALOG, "--queries", SMALL_QUERIES, "--strategy", "all"];
    let mut v = toolgate_json(&args);
    // `bm25-crate` is one of the binary's default features, and `semantic` is always built in.
    let strategies = v["strategies"].as_object().expect("`strategies` is an object");
    assert_eq!(
        strategies.keys().map(String::as_str).collect::<Vec<_>>(),
        ["bm25", "bm25-crate", "bm25f", "keyword", "lexical", "semantic"]
    );
    for (name, s) in strategies {
        for key in LATENCY_KEYS {
            assert!(
                s.get(key).is_some_and(Value::is_number),
                "strategy {name}: `{key}` missing or not a number"
            );
        }
    }
    assert_eq!(
        zero_latencies(&mut v),
        6 * LATENCY_KEYS.len(),
        "latency fields appear only once per strategy"
    );
    assert_eq!(v["catalog"], SMALL_CATALOG);
    assert_eq!(v["queries"], SMALL_QUERIES);
    let text = serde_json::to_string_pretty(&v).expect("JSON serialises") + "\n";
    check_golden("eval-small.json", &text);
}

#[test]
fn screenshot_query_ranks_a_screenshot_tool_first() {
    let v = toolgate_json(&["search", "--json", SCREENSHOT_QUERY]);
    let names = match_names(&v);
    let first = names.first().expect("at least one match");
    assert!(first.contains("screenshot"), "first match {first} (all: {names:?})");
    assert_eq!(v["query"], SCREENSHOT_QUERY);
    assert_eq!(v["strategy"], "semantic", "the default since issue 44");
}

#[test]
fn eval_plot_writes_an_svg_with_a_curve_per_strategy_and_no_progress_bar_when_piped() {
    let dir = std::env::temp_dir().join(format!("toolgate-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let plot = dir.join("recall.svg");
    let plot_arg = plot.display().to_string();
    let args =
        ["eval", "--catalog", SMALL_CATALOG, "--queries", SMALL_QUERIES, "--k", "1,5", "--plot", &plot_arg];
    let o = toolgate_exit(&args, 0);
    // stderr is a pipe here: no progress bar.
    assert_eq!(stderr(&o), "");
    // The table shows the K asked for, not the curve's.
    assert!(stdout(&o).contains("R@5") && !stdout(&o).contains("R@10"), "{}", stdout(&o));
    let svg = std::fs::read_to_string(&plot).expect("the plot was written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    for name in ["keyword", "bm25f", "lexical", "Recall@K"] {
        assert!(svg.contains(name), "no `{name}` in the chart");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn explain_shows_vocabulary_expansions_of_a_chinese_query() {
    let o = toolgate_exit(&["search", "--explain", "--limit", "1", "这三个 PDF 帮我合并成一个文件"], 0);
    let out = stdout(&o);
    assert!(out.contains("searxng__pdf_merger"), "{out}");
    assert!(out.contains("(from 合并, vocabulary)"), "{out}");
    let v = toolgate_json(&["search", "--json", "--explain", "--limit", "1", "合并 PDF"]);
    let terms = v["matches"][0]["explain"]["terms"].as_array().expect("explained terms");
    assert!(terms.iter().any(|t| t["term"] == "merge" && t["expanded_from"]["text"] == "合并"), "{terms:?}");
}

#[test]
fn explain_shows_where_each_side_of_the_fusion_ranked_a_tool() {
    let o = toolgate_exit(
        &["search", "--strategy", "semantic", "--explain", "--limit", "1", "take a screenshot of a web page"],
        0,
    );
    let out = stdout(&o);
    assert!(out.contains("via semantic (lexical #1, dense #"), "{out}");
    assert!(out.contains("(meaning)        cosine"), "{out}");
}

#[test]
fn select_query_returns_exactly_the_three_named_tools() {
    let query = format!("select:{}", SELECTED.join(","));
    let v = toolgate_json(&["search", "--json", &query]);
    assert_eq!(match_names(&v), SELECTED);
    for m in v["matches"].as_array().unwrap() {
        assert!(m["score"].is_null(), "select hits have no finite score: {m}");
    }
    assert_eq!(v["unmatched_terms"], serde_json::json!([]));
}

#[test]
fn select_query_reports_unknown_names_as_unmatched() {
    let v = toolgate_json(&["search", "--json", "select:playwright__playwright_screenshot,no_such__tool"]);
    assert_eq!(match_names(&v), ["playwright__playwright_screenshot"]);
    assert_eq!(v["unmatched_terms"], serde_json::json!(["no_such__tool"]));
}

#[test]
fn exact_qualified_name_query_returns_that_tool_first() {
    for name in SELECTED {
        let v = toolgate_json(&["search", "--json", name]);
        let names = match_names(&v);
        assert_eq!(names.first().map(String::as_str), Some(name), "query {name}: {names:?}");
        assert!(v["matches"][0]["score"].is_null(), "an exact-name hit has no finite score");
    }
}

#[test]
fn required_term_keeps_only_matches_containing_it() {
    let has_stock = |m: &Value| {
        let text = format!("{} {}", m["name"].as_str().unwrap(), m["description"].as_str().unwrap());
        text.to_lowercase().contains("stock")
    };
    let loose = toolgate_json(&["search", "--json", "--limit", "10", "stock price"]);
    assert!(
        loose["matches"].as_array().unwrap().iter().any(|m| !has_stock(m)),
        "without `+`, some match lacks the term (else this test shows nothing): {:?}",
        match_names(&loose)
    );
    let strict = toolgate_json(&["search", "--json", "--limit", "10", "+stock price"]);
    let matches = strict["matches"].as_array().unwrap();
    assert!(matches.len() >= 5, "{:?}", match_names(&strict));
    for m in matches {
        assert!(has_stock(m), "{} has no `stock` in its name or description", m["name"]);
    }
}

#[test]
fn chinese_train_ticket_query_finds_12306_tools_with_get_tickets_in_top_3() {
    let v = toolgate_json(&["search", "--json", "帮我查一下明天上海到北京的火车余票"]);
    let matches = v["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 5, "{:?}", match_names(&v));
    let servers: Vec<&str> = matches.iter().map(|m| m["server"].as_str().unwrap()).collect();
    assert_eq!(servers[0], "12306-mcp", "top 5: {:?}", match_names(&v));
    assert!(servers.iter().filter(|s| **s == "12306-mcp").count() >= 3, "top 5: {:?}", match_names(&v));
    let tickets = match_names(&v).iter().position(|n| n == "12306-mcp__get-tickets");
    assert!(tickets.is_some_and(|p| p < 3), "get-tickets at {tickets:?}: {:?}", match_names(&v));
}

#[test]
fn query_matching_nothing_exits_1_with_message() {
    let o = toolgate_exit(&["search", "zzqqxx"], 1);
    let out = stdout(&o);
    assert!(out.contains("No tools matched \"zzqqxx\""), "{out}");
    let o = toolgate_exit(&["search", "--json", "zzqqxx"], 1);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON even when nothing matched");
    assert_eq!(v["matches"], serde_json::json!([]));
    assert_eq!(v["unmatched_terms"], serde_json::json!(["zzqqxx"]));
}

#[test]
fn a_request_nothing_fits_lists_the_nearest_and_says_none_would_load() {
    let o = toolgate_exit(&["search", "tell me a joke about cats"], 0);
    let out = stdout(&o);
    assert!(out.contains(" 1. ") && out.contains("\nNothing fits: "), "{out}");
    let o = toolgate_exit(&["search", "--json", "tell me a joke about cats"], 0);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(!match_names(&v).is_empty());
    assert_eq!((&v["nothing_fits"], &v["loaded"]), (&serde_json::json!(true), &serde_json::json!([])));
    // Without the model there is no judging it: the words' cut loads.
    let o = toolgate_exit(&["search", "--json", "--strategy", "lexical", "tell me a joke about cats"], 0);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["nothing_fits"], false);
    assert!(v["loaded"].as_array().is_some_and(|l| !l.is_empty()), "{v}");
}

#[test]
fn malformed_catalog_exits_2_naming_file_and_line() {
    for args in [
        vec!["search", "--catalog", BAD_CATALOG, "note"],
        vec!["tokens", "--catalog", BAD_CATALOG],
        vec!["eval", "--catalog", BAD_CATALOG, "--queries", SMALL_QUERIES],
    ] {
        let o = toolgate_exit(&args, 2);
        let err = stderr(&o);
        assert!(
            err.contains("bad-line3.jsonl:3:"),
            "toolgate {args:?}: stderr names no file and line:\n{err}"
        );
        assert!(stdout(&o).is_empty(), "toolgate {args:?}: nothing on stdout");
    }
}

#[test]
fn missing_catalog_file_exits_2_naming_it() {
    let o = toolgate_exit(&["tokens", "--catalog", "tests/fixtures/no-such-file.jsonl"], 2);
    assert!(stderr(&o).contains("no-such-file.jsonl"), "{}", stderr(&o));
}

#[test]
fn unknown_strategy_exits_2() {
    let o = toolgate_exit(
        &["eval", "--catalog", SMALL_CATALOG, "--queries", SMALL_QUERIES, "--strategy", "nope"],
        2,
    );
    assert!(stderr(&o).contains("unknown strategy `nope`"), "{}", stderr(&o));
    let o = toolgate_exit(&["search", "--strategy", "nope", "weather"], 2);
    assert!(stderr(&o).contains("nope"), "{}", stderr(&o));
}

#[test]
fn tokens_json_on_embedded_catalog_shows_deferral_saves_over_80_percent() {
    let v = toolgate_json(&["tokens", "--json"]);
    assert_eq!(v["tokenizer"], "o200k_base");
    assert_eq!(v["tools"], 527);
    let full = v["full_load_tokens"].as_u64().expect("full_load_tokens");
    let first = v["first_request_tokens"].as_u64().expect("first_request_tokens");
    assert!(first * 5 < full, "first request {first} is not below 20% of full load {full}");
    let by_server = v["by_server"].as_object().expect("by_server");
    assert_eq!(by_server.len(), 70);
    let tools: u64 = by_server.values().map(|s| s["tools"].as_u64().unwrap()).sum();
    let tokens: u64 = by_server.values().map(|s| s["tokens"].as_u64().unwrap()).sum();
    assert_eq!(tools, 527);
    assert_eq!(tokens, full, "per-server tokens add up to the full load");
}

#[test]
fn tokens_json_on_small_fixture_adds_up() {
    let v = toolgate_json(&["tokens", "--json", "--catalog", SMALL_CATALOG]);
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("`{k}` is a whole number: {v}"));
    assert_eq!(n("tools"), 10);
    assert_eq!(n("deferred_tools") + n("core_tools"), 10);
    // Every fixture tool is an MCP tool, so all are deferred and no core definition is sent.
    assert_eq!(n("core_tools"), 0);
    assert_eq!(n("first_request_tokens"), n("tool_search_tokens") + n("announcement_tokens"));
    assert_eq!(n("saved_tokens"), n("full_load_tokens") - n("first_request_tokens"));
    let share = v["saved_share"].as_f64().unwrap();
    let expected = n("saved_tokens") as f64 / n("full_load_tokens") as f64;
    assert!((share - expected).abs() < 1e-4, "saved_share {share}, expected about {expected}");
    let servers: BTreeSet<&str> = v["by_server"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(servers, BTreeSet::from(["amap-maps", "github", "weather"]));
}

#[test]
fn tokens_text_lists_servers_by_tokens_descending() {
    let o = toolgate_exit(&["tokens", "--catalog", SMALL_CATALOG], 0);
    let out = stdout(&o);
    for label in ["full load", "first request", "saved"] {
        assert!(out.contains(label), "no `{label}` line:\n{out}");
    }
    let v = toolgate_json(&["tokens", "--json", "--catalog", SMALL_CATALOG]);
    let mut expected: Vec<(u64, &str)> = v["by_server"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, s)| (s["tokens"].as_u64().unwrap(), name.as_str()))
        .collect();
    expected.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let listed: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| expected.iter().any(|(_, name)| name == w))
        .collect();
    assert_eq!(listed, expected.iter().map(|(_, name)| *name).collect::<Vec<_>>(), "{out}");
}

#[test]
fn a_mistyped_command_gets_a_suggestion_and_the_binary_knows_its_version() {
    let o = toolgate_exit(&["serach", "x"], 2);
    assert!(stderr(&o).contains("'search'"), "{}", stderr(&o));
    let o = toolgate_exit(&["--version"], 0);
    assert_eq!(stdout(&o).trim(), format!("toolgate {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in
        [("bash", "_toolgate()"), ("zsh", "#compdef toolgate"), ("fish", "complete -c toolgate")]
    {
        let o = toolgate_exit(&["completions", shell], 0);
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: {}", &script[..script.len().min(200)]);
        assert!(
            script.contains("serve") && script.contains("exposure"),
            "{shell}: the subcommands and flags are in it"
        );
    }
    let o = toolgate_exit(&["completions", "tcsh"], 2);
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

#[test]
fn eval_misses_writes_each_query_with_its_gold_ranks_and_top_ten() {
    let path = std::env::temp_dir().join(format!("toolgate-misses-{}.jsonl", std::process::id()));
    let path_arg = path.display().to_string();
    toolgate_exit(
        &[
            "eval",
            "--catalog",
            SMALL_CATALOG,
            "--queries",
            SMALL_QUERIES,
            "--strategy",
            "bm25",
            "--misses",
            &path_arg,
        ],
        0,
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let queries = std::fs::read_to_string(crate_dir().join(SMALL_QUERIES)).unwrap().lines().count();
    assert_eq!(lines.len(), queries);
    for l in &lines {
        assert_eq!(l["strategy"], "bm25");
        assert!(matches!(l["part"].as_str(), Some("tune" | "check")), "{l}");
        assert!(l["top"].as_array().unwrap().len() <= 10);
        for g in l["gold"].as_array().unwrap() {
            // A gold tool found is named with its rank among the top, and the top lists it.
            if let Some(rank) = g["rank"].as_u64().filter(|&r| r <= 10) {
                assert!(l["top"][rank as usize - 1]["name"].as_str().is_some(), "{l}");
            }
        }
    }
    assert!(
        lines.iter().any(|l| l["top"][0]["matched"].as_array().is_some_and(|m| !m.is_empty())),
        "fields are named"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn tokens_counts_what_a_configuration_serves_under_its_policy() {
    let dir = std::env::temp_dir().join(format!("toolgate-tokens-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = crate_dir().join("../../bench/livemcpbench/catalog.jsonl");
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[policy]\ndeny = [\"playwright__*\"]\n\n[servers.demo]\ncatalog = {:?}\n",
            catalog.display().to_string()
        ),
    )
    .unwrap();
    let all = toolgate_json(&["tokens", "--json"]);
    let served = toolgate_json(&["tokens", "--json", "--config", config.to_str().unwrap()]);
    let denied = all["by_server"]["playwright"]["tools"].as_u64().unwrap();
    assert!(denied > 0);
    assert_eq!(served["tools"].as_u64().unwrap() + denied, all["tools"].as_u64().unwrap(), "{served}");
    assert!(served["by_server"].get("playwright").is_none(), "a denied server is not counted: {served}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_help_names_every_command() {
    let help = stdout(&toolgate_exit(&["--help"], 0));
    for command in ["search", "eval", "tokens", "serve", "render", "doctor", "approve", "completions"] {
        assert!(help.contains(&format!("\n  {command} ")), "`{command}` is missing:\n{help}");
    }
    let about = help.lines().next().unwrap_or_default();
    assert!(
        !about.contains("search, tokens, eval, serve"),
        "the first line lists some commands only: {about}"
    );
}
