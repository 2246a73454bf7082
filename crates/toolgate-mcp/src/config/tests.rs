//! Tests of `toolgate.toml`: a full file, defaults, and every error with its exact message.

use std::path::Path;

use expect_test::{Expect, expect};

use super::*;
use toolgate::toolbox::{DeferConfig, DeferMode};

/// A fixed environment, so that tests do not depend on the machine.
fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_TOKEN" => Some("ghp_test".into()),
        "HOME" => Some("/home/ada".into()),
        _ => None,
    }
}

fn toml(text: &str) -> Result<Config, ConfigError> {
    Config::read_toml(&Source::with_env("toolgate.toml", Path::new("/etc/toolgate"), &env), text)
}

fn check_error(text: &str, want: Expect) {
    want.assert_eq(&toml(text).unwrap_err().to_string());
}

const DESIGN_EXAMPLE: &str = r#"
[gateway]
exposure = "native"          # native | bridge
mode = "auto"                # on | off | auto
auto_threshold = 0.10
context_window = 200000
call_timeout_secs = 90

[budget]                     # definitions per request, all tools counted
first_turn = 96
dynamic = 112
hard = 128

[policy]
deny = ["*__drop_*"]         # global deny patterns over qualified names

[servers.github]             # one table per upstream
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
mode = "auto"
allowed = ["*"]
denied = ["delete_*"]
pinned = ["search_issues"]
always_load = []
max_active = 24
side_effects = "allow"
read_only = ["list_*"]

[servers.docs]
url = "https://docs.example.com/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN:-anonymous}" }
mode = "allowlist"
allowed = ["search_*", "get_page"]
side_effects = "read_only"
call_timeout_secs = 5

[servers.demo]
catalog = "tools.jsonl"
enabled = false

[servers.local]
command = "${HOME}/bin/notes-mcp"
cwd = "notes"
max_active = 96

[profiles.reviewer]
tools = ["github__*", "filesystem__read_*"]
disallowed_tools = ["*__delete_*"]

[profiles.everything]
"#;

#[test]
fn design_example_parses_to_the_expected_values() {
    let config = toml(DESIGN_EXAMPLE).unwrap();
    expect![[r#"
        Config {
            exposure: Some(
                Native,
            ),
            defer: DeferConfig {
                mode: Auto,
                auto_threshold: 0.1,
                context_window: 200000,
            },
            budget: BudgetConfig {
                first_turn: 96,
                dynamic: 112,
                hard: 128,
            },
            search: SearchConfig {
                strategy: Semantic,
                model: None,
                index_cache: Auto,
            },
            models: {},
            policy: PolicyConfig {
                deny: [
                    "*__drop_*",
                ],
            },
            servers: {
                "demo": ServerConfig {
                    mode: Auto,
                    allowed: [
                        "*",
                    ],
                    denied: [],
                    pinned: [],
                    always_load: [],
                    max_active: 24,
                    side_effects: Allow,
                    read_only: [],
                    enabled: false,
                    trust_always_load: false,
                    host: UpstreamConfig {
                        transport: Catalog {
                            path: "/etc/toolgate/tools.jsonl",
                        },
                        call_timeout: None,
                        trust: Auto,
                        quarantine: false,
                        protocol: Auto,
                        oauth: None,
                        tools: ToolOverrides {
                            by_upstream: {},
                            upstream_of: {},
                        },
                    },
                },
                "docs": ServerConfig {
                    mode: Allowlist,
                    allowed: [
                        "search_*",
                        "get_page",
                    ],
                    denied: [],
                    pinned: [],
                    always_load: [],
                    max_active: 24,
                    side_effects: ReadOnly,
                    read_only: [],
                    enabled: true,
                    trust_always_load: false,
                    host: UpstreamConfig {
                        transport: Http {
                            url: "https://docs.example.com/mcp",
                            headers: {
                                "Authorization": "Bearer anonymous",
                            },
                        },
                        call_timeout: Some(
                            5s,
                        ),
                        trust: Auto,
                        quarantine: false,
                        protocol: Auto,
                        oauth: None,
                        tools: ToolOverrides {
                            by_upstream: {},
                            upstream_of: {},
                        },
                    },
                },
                "github": ServerConfig {
                    mode: Auto,
                    allowed: [
                        "*",
                    ],
                    denied: [
                        "delete_*",
                    ],
                    pinned: [
                        "search_issues",
                    ],
                    always_load: [],
                    max_active: 24,
                    side_effects: Allow,
                    read_only: [
                        "list_*",
                    ],
                    enabled: true,
                    trust_always_load: false,
                    host: UpstreamConfig {
                        transport: Stdio {
                            command: "npx",
                            args: [
                                "-y",
                                "@modelcontextprotocol/server-github",
                            ],
                            env: {
                                "GITHUB_TOKEN": "ghp_test",
                            },
                            cwd: None,
                        },
                        call_timeout: None,
                        trust: Auto,
                        quarantine: false,
                        protocol: Auto,
                        oauth: None,
                        tools: ToolOverrides {
                            by_upstream: {},
                            upstream_of: {},
                        },
                    },
                },
                "local": ServerConfig {
                    mode: Auto,
                    allowed: [
                        "*",
                    ],
                    denied: [],
                    pinned: [],
                    always_load: [],
                    max_active: 96,
                    side_effects: Allow,
                    read_only: [],
                    enabled: true,
                    trust_always_load: false,
                    host: UpstreamConfig {
                        transport: Stdio {
                            command: "/home/ada/bin/notes-mcp",
                            args: [],
                            env: {},
                            cwd: Some(
                                "/etc/toolgate/notes",
                            ),
                        },
                        call_timeout: None,
                        trust: Auto,
                        quarantine: false,
                        protocol: Auto,
                        oauth: None,
                        tools: ToolOverrides {
                            by_upstream: {},
                            upstream_of: {},
                        },
                    },
                },
            },
            profiles: {
                "everything": ProfileConfig {
                    tools: [
                        "*",
                    ],
                    disallowed_tools: [],
                },
                "reviewer": ProfileConfig {
                    tools: [
                        "github__*",
                        "filesystem__read_*",
                    ],
                    disallowed_tools: [
                        "*__delete_*",
                    ],
                },
            },
            host: GatewayKeys {
                gateway: GatewayConfig {
                    call_timeout: 90s,
                    startup_timeout: 30s,
                    ready_timeout: 5s,
                    session_idle: 28800s,
                    session_hibernate: 60s,
                    max_sessions: 1000,
                    header_timeout: 10s,
                    body_timeout: 10s,
                    allowed_hosts: [],
                    allowed_origins: [],
                    pins: None,
                    audit_log: None,
                    sessions: Memory,
                    grant_key: None,
                    list_caps: ListCaps {
                        tools: 10000,
                        pages: 1000,
                        bytes: 67108864,
                    },
                },
                tokens: {},
                oauth: None,
                limits: Limiter {
                    everyone: Limits {
                        all: None,
                        servers: {},
                        tools: {},
                    },
                    profiles: {},
                },
                telemetry: TelemetryConfig {
                    otlp_endpoint: None,
                    service_name: None,
                    headers: {},
                },
            },
            source: None,
            expanded: [
                Secret(***),
                Secret(***),
            ],
        }
    "#]]
    .assert_debug_eq(&config);
}

#[test]
fn empty_file_gives_the_defaults() {
    let config = toml("# nothing here\n").unwrap();
    assert_eq!(config, Config::default());
    assert!(config.servers.is_empty());
    assert_eq!(config.exposure, None, "auto: chosen per client");
    assert_eq!(
        config.defer,
        DeferConfig { mode: DeferMode::On, auto_threshold: 0.10, context_window: 200_000 }
    );
    assert_eq!(config.host.gateway.call_timeout, Duration::from_secs(60));
    assert_eq!(config.host.gateway.startup_timeout, Duration::from_secs(30));
    assert_eq!(config.budget, BudgetConfig { first_turn: 96, dynamic: 112, hard: 128 });
    assert!(config.policy.deny.is_empty());
}

#[test]
fn a_server_with_only_a_transport_gets_the_defaults() {
    let config = toml("[servers.time]\ncommand = \"uvx\"\n").unwrap();
    let time = &config.servers["time"];
    let transport =
        Transport::Stdio { command: "uvx".into(), args: Vec::new(), env: BTreeMap::new(), cwd: None };
    assert_eq!(time, &super::server(transport));
    assert_eq!(time.allowed, ["*"]);
    assert_eq!((time.max_active, time.mode, time.side_effects), (24, ServerMode::Auto, SideEffects::Allow));
    assert!(time.enabled);
}

#[test]
fn gateway_settings_are_read() {
    let config = toml(
        "[gateway]\nexposure = \"bridge\"\nmode = \"off\"\nauto_threshold = 1\ncontext_window = 1000000\nstartup_timeout_secs = 5\n",
    )
    .unwrap();
    assert_eq!(config.exposure, Some(Exposure::Bridge));
    assert_eq!(
        config.defer,
        DeferConfig { mode: DeferMode::Off, auto_threshold: 1.0, context_window: 1_000_000 }
    );
    assert_eq!(config.host.gateway.startup_timeout, Duration::from_secs(5));
}

#[test]
fn the_session_store_is_memory_or_a_redis_url() {
    use crate::config::SessionStoreConfig;
    assert_eq!(toml("").unwrap().host.gateway.sessions, SessionStoreConfig::Memory);
    let redis = toml("[gateway]\nsessions = \"redis://:pw@db.internal:6380/2\"\n").unwrap();
    assert_eq!(
        redis.host.gateway.sessions,
        SessionStoreConfig::Redis("redis://:pw@db.internal:6380/2".into())
    );
    for wrong in ["\"postgres://db\"", "\"redis://\"", "5"] {
        let error = toml(&format!("[gateway]\nsessions = {wrong}\n")).unwrap_err().to_string();
        assert!(error.contains("gateway.sessions") && error.contains("redis://127.0.0.1:6379/0"), "{error}");
    }
}

#[test]
fn unknown_keys_are_named_with_the_known_ones() {
    check_error(
        "[servers.github]\ncommand = \"npx\"\nmaxActive = 10\n",
        expect![
            "toolgate.toml: servers.github.maxActive: unknown key `maxActive`; did you mean `max_active`? known keys here: enabled, mode, allowed, denied, pinned, always_load, max_active, side_effects, read_only, trust_always_load, command, args, env, cwd, url, headers, catalog, call_timeout_secs, trust, quarantine, protocol, oauth, tools"
        ],
    );
    check_error(
        "[gateway]\nfoo = 1\n",
        expect![
            "toolgate.toml: gateway.foo: unknown key `foo`; known keys here: exposure, mode, auto_threshold, context_window, call_timeout_secs, startup_timeout_secs, ready_timeout_secs, session_idle_secs, session_hibernate_secs, max_sessions, header_timeout_secs, body_timeout_secs, allowed_hosts, allowed_origins, pins, audit_log, sessions, grant_key, list_max_tools, list_max_pages, list_max_bytes"
        ],
    );
    check_error(
        "[server.github]\ncommand = \"npx\"\n",
        expect![
            "toolgate.toml: server: unknown key `server`; did you mean `servers`? known keys here: gateway, budget, search, models, policy, servers, profiles, tokens, oauth, limits, telemetry"
        ],
    );
    check_error(
        "[profiles.reviewer]\ndisallowedTools = []\n",
        expect![[
            "toolgate.toml: profiles.reviewer.disallowedTools: unknown key `disallowedTools`; did you mean `disallowed_tools`? known keys here: tools, disallowed_tools, limits"
        ]],
    );
}

#[test]
fn wrong_types_name_the_key_and_the_expected_type() {
    check_error(
        "[servers.time]\ncommand = \"uvx\"\nmax_active = \"24\"\n",
        expect![[
            r#"toolgate.toml: servers.time.max_active: expected a number of tools from 1 to 96, found a string ("24")"#
        ]],
    );
    check_error(
        "[servers.time]\ncommand = \"uvx\"\nargs = \"mcp-server-time\"\n",
        expect![[
            r#"toolgate.toml: servers.time.args: expected an array of strings, found a string ("mcp-server-time")"#
        ]],
    );
    check_error(
        "[servers.time]\ncommand = \"uvx\"\nargs = [\"--local-timezone\", 8]\n",
        expect!["toolgate.toml: servers.time.args[1]: expected a string, found an integer (8)"],
    );
    check_error(
        "[servers.time]\ncommand = \"uvx\"\nenv = { TZ = 8 }\n",
        expect!["toolgate.toml: servers.time.env.TZ: expected a string, found an integer (8)"],
    );
    check_error(
        "[servers.time]\ncommand = \"uvx\"\nenabled = \"no\"\n",
        expect![[r#"toolgate.toml: servers.time.enabled: expected true or false, found a string ("no")"#]],
    );
    check_error(
        "servers = 3\n",
        expect!["toolgate.toml: servers: expected a table of servers ([servers.NAME]), found an integer (3)"],
    );
    check_error(
        "[servers]\ntime = \"uvx\"\n",
        expect![[
            r#"toolgate.toml: servers.time: expected a table ([servers.NAME]), found a string ("uvx")"#
        ]],
    );
    check_error(
        "[policy]\ndeny = \"*__drop_*\"\n",
        expect![[
            r#"toolgate.toml: policy.deny: expected an array of glob patterns, like ["list_*"], found a string ("*__drop_*")"#
        ]],
    );
    check_error(
        "[gateway]\nexposure = \"hybrid\"\n",
        expect![[
            r#"toolgate.toml: gateway.exposure: invalid value "hybrid"; expected "auto", "native" or "bridge""#
        ]],
    );
    check_error(
        "[servers.x]\nurl = \"http://h/mcp\"\nside_effects = \"readonly\"\n",
        expect![[
            r#"toolgate.toml: servers.x.side_effects: invalid value "readonly"; expected "allow" or "read_only""#
        ]],
    );
}

#[test]
fn numbers_out_of_range_say_the_range() {
    check_error(
        "[servers.github]\ncommand = \"npx\"\nmax_active = 97\n",
        expect![[
            "toolgate.toml: servers.github.max_active: max_active 97 is above the cap of 96 active tools per server; set it to at most 96"
        ]],
    );
    check_error(
        "[servers.github]\ncommand = \"npx\"\nmax_active = 0\n",
        expect![
            "toolgate.toml: servers.github.max_active: 0 is out of range; expected a number of tools from 1 to 96"
        ],
    );
    check_error(
        "[gateway]\nauto_threshold = 1.5\n",
        expect![[
            "toolgate.toml: gateway.auto_threshold: 1.5 is out of range; expected a share of the context window above 0 and at most 1, like 0.10"
        ]],
    );
    check_error(
        "[gateway]\nauto_threshold = nan\n",
        expect![[
            "toolgate.toml: gateway.auto_threshold: NaN is out of range; expected a share of the context window above 0 and at most 1, like 0.10"
        ]],
    );
    check_error(
        "[gateway]\ncontext_window = -1\n",
        expect![
            "toolgate.toml: gateway.context_window: -1 is out of range; expected a number of tokens above 0, like 200000"
        ],
    );
    check_error(
        "[gateway]\ncall_timeout_secs = 0\n",
        expect![
            "toolgate.toml: gateway.call_timeout_secs: 0 is out of range; expected a whole number of seconds above 0"
        ],
    );
}

#[test]
fn budgets_out_of_order_name_the_keys_and_values() {
    check_error(
        "[budget]\nfirst_turn = 120\n",
        expect![[
            "toolgate.toml: budget: budgets out of order (first_turn = 120, dynamic = 112, hard = 128); they must satisfy 1 <= first_turn <= dynamic <= hard, so raise dynamic to at least 120 or lower first_turn"
        ]],
    );
    check_error(
        "[budget]\nhard = 100\n",
        expect![[
            "toolgate.toml: budget: budgets out of order (first_turn = 96, dynamic = 112, hard = 100); they must satisfy 1 <= first_turn <= dynamic <= hard, so raise hard to at least 112 or lower dynamic"
        ]],
    );
    check_error(
        "[budget]\nfirst_turn = 0\n",
        expect![[
            "toolgate.toml: budget: budgets out of order (first_turn = 0, dynamic = 112, hard = 128); they must satisfy 1 <= first_turn <= dynamic <= hard, so set first_turn to at least 1"
        ]],
    );
    let equal = toml("[budget]\nfirst_turn = 8\ndynamic = 8\nhard = 8\n").unwrap();
    assert_eq!(equal.budget, BudgetConfig { first_turn: 8, dynamic: 8, hard: 8 });
}

#[test]
fn an_allowlist_must_list_something() {
    check_error(
        "[servers.github]\ncommand = \"gh-mcp\"\nmode = \"allowlist\"\n",
        expect![[
            r#"toolgate.toml: servers.github.mode: mode = "allowlist" needs an `allowed` list of the tools to keep; add allowed = ["..."], or use mode = "auto" or "all""#
        ]],
    );
    let c = toml("[servers.github]\ncommand = \"gh-mcp\"\nmode = \"allowlist\"\nallowed = [\"get_*\"]\n")
        .unwrap();
    assert_eq!(c.servers["github"].allowed, ["get_*"]);
}

#[test]
fn a_server_has_exactly_one_transport() {
    check_error(
        "[servers.github]\ncommand = \"npx\"\nurl = \"http://127.0.0.1:9000/mcp\"\n",
        expect![[
            "toolgate.toml: servers.github: server `github` sets both `command` and `url`, but a server has exactly one transport; keep one of them"
        ]],
    );
    check_error(
        "[servers.github]\ncommand = \"npx\"\nurl = \"http://h/mcp\"\ncatalog = \"t.jsonl\"\n",
        expect![[
            "toolgate.toml: servers.github: server `github` sets `command`, `url` and `catalog`, but a server has exactly one transport; keep one of them"
        ]],
    );
    check_error(
        "[servers.github]\nmax_active = 10\n",
        expect![[
            "toolgate.toml: servers.github: server `github` has no transport; set `command` (a stdio child process), `url` (streamable HTTP) or `catalog` (a static catalog file)"
        ]],
    );
    check_error(
        "[servers.github]\nurl = \"http://h/mcp\"\nargs = [\"-y\"]\n",
        expect![
            "toolgate.toml: servers.github.args: `args` only applies to a server with `command`; remove it or fix the transport"
        ],
    );
    check_error(
        "[servers.github]\ncommand = \"npx\"\nheaders = { A = \"b\" }\n",
        expect![
            "toolgate.toml: servers.github.headers: `headers` only applies to a server with `url`; remove it or fix the transport"
        ],
    );
    check_error(
        "[servers.github]\ncommand = \"\"\n",
        expect![[
            r#"toolgate.toml: servers.github.command: empty value; expected a program to run, like "npx""#
        ]],
    );
    check_error(
        "[servers.docs]\nurl = \"localhost:9000/mcp\"\n",
        expect![[
            r#"toolgate.toml: servers.docs.url: "localhost:9000/mcp" is not an HTTP URL; write http://... or https://..., e.g. http://127.0.0.1:9000/mcp"#
        ]],
    );
}

#[test]
fn server_names_are_checked() {
    check_error(
        "[servers.my__github]\ncommand = \"npx\"\n",
        expect![[
            "toolgate.toml: servers.my__github: server name `my__github` contains `__`, which separates server from tool in qualified names (`server__tool`); rename it, e.g. to `my_github`"
        ]],
    );
    check_error(
        "[servers.\"\"]\ncommand = \"npx\"\n",
        expect![[r#"toolgate.toml: servers."": the server name is empty; give the server a name"#]],
    );
    check_error(
        "[servers.\"my server\"]\ncommand = \"npx\"\nmax_active = 100\n",
        expect![[
            r#"toolgate.toml: servers."my server".max_active: max_active 100 is above the cap of 96 active tools per server; set it to at most 96"#
        ]],
    );
}

#[test]
fn patterns_must_be_non_empty_and_printable() {
    check_error(
        "[policy]\ndeny = [\"*__drop_*\", \"\"]\n",
        expect![[
            r#"toolgate.toml: policy.deny[1]: empty pattern; write a glob such as "*" (everything) or "list_*""#
        ]],
    );
    check_error(
        "[profiles.ops]\ntools = [\"github__*\\t\"]\n",
        expect![[
            r#"toolgate.toml: profiles.ops.tools[0]: pattern "github__*\t" contains the control character U+0009; use printable characters, with * and ? as wildcards"#
        ]],
    );
}

#[test]
fn syntax_errors_give_line_and_column() {
    check_error(
        "[gateway]\nmode = \"auto\"\nexposure = bridge\n",
        expect!["toolgate.toml:3:12: invalid TOML: string values must be quoted, expected literal string"],
    );
    check_error(
        "[servers.a]\ncommand = \"x\"\n[servers.a]\n",
        expect!["toolgate.toml:3:10: invalid TOML: duplicate key"],
    );
    check_error(
        "[servers.time]\ncommand = \"uvx\"\nargs = [\"a\", \"b\"\n",
        expect!["toolgate.toml:3:17: invalid TOML: unclosed array, expected `]`"],
    );
    check_error(
        "[servers.time]\nenv = { A = \"é\" B = 1 }\n",
        expect!["toolgate.toml:2:17: invalid TOML: missing comma between key-value pairs, expected `,`"],
    );
}

#[test]
fn unset_variables_are_named() {
    check_error(
        "[servers.github]\ncommand = \"npx\"\nenv = { GITHUB_TOKEN = \"${GH_TOKEN}\" }\n",
        expect![[
            "toolgate.toml: servers.github.env.GITHUB_TOKEN: environment variable `GH_TOKEN` is not set; set it, or write ${GH_TOKEN:-default} to give a default"
        ]],
    );
    check_error(
        "[servers.docs]\nurl = \"https://h/mcp\"\nheaders = { Authorization = \"Bearer ${input:token}\" }\n",
        expect![[
            "toolgate.toml: servers.docs.headers.Authorization: `${input:token}` asks VS Code to prompt for a value, which toolgate cannot do; put the value in an environment variable and write ${NAME}"
        ]],
    );
    // Through the public entry point, with the real environment.
    let err = Config::from_toml(
        "toolgate.toml",
        "[servers.x]\ncommand = \"run\"\nargs = [\"${TOOLGATE_TEST_SURELY_UNSET_VARIABLE}\"]\n",
        Path::new("."),
    )
    .unwrap_err();
    assert_eq!(err.key, "servers.x.args[0]");
    assert_eq!(
        err.kind,
        ConfigErrorKind::UnsetVariable { var: "TOOLGATE_TEST_SURELY_UNSET_VARIABLE".into() }
    );
}

#[test]
fn from_path_picks_the_format_and_names_the_file() {
    let dir = std::env::temp_dir().join(format!("toolgate-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml_path = dir.join("toolgate.toml");
    std::fs::write(&toml_path, "[servers.demo]\ncatalog = \"tools.jsonl\"\n").unwrap();
    let config = Config::from_path(&toml_path).unwrap();
    assert_eq!(config.servers["demo"].host.transport, Transport::Catalog { path: dir.join("tools.jsonl") });

    let json_path = dir.join("mcp.json");
    std::fs::write(&json_path, "\u{feff}{\"mcpServers\": {\"time\": {\"command\": \"uvx\"}}}").unwrap();
    assert!(Config::from_path(&json_path).unwrap().servers.contains_key("time"));

    // No telling extension: a file that opens with `{` is JSON.
    let sniffed = dir.join("servers.conf");
    std::fs::write(&sniffed, "\n  {\"servers\": {\"time\": {\"command\": \"uvx\"}}}").unwrap();
    assert!(Config::from_path(&sniffed).unwrap().servers.contains_key("time"));
    std::fs::write(&sniffed, "[budget]\nhard = 200\n").unwrap();
    assert_eq!(Config::from_path(&sniffed).unwrap().budget.hard, 200);

    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[budget]\nhard = 1\n").unwrap();
    let err = Config::from_path(&bad).unwrap_err();
    assert!(
        err.to_string().starts_with(&format!("{}: budget: budgets out of order", bad.display())),
        "{err}"
    );

    let missing = dir.join("missing.toml");
    let err = Config::from_path(&missing).unwrap_err();
    assert!(matches!(err.kind, ConfigErrorKind::Io(_)));
    assert!(err.to_string().starts_with(&format!("{}: cannot read the file: ", missing.display())), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_models_table_maps_patterns_to_mode_names() {
    let c = toml("[models]\n\"my-claude-*\" = \"anthropic\"\n").unwrap();
    assert_eq!(c.models.get("my-claude-*").map(String::as_str), Some("anthropic"));
    check_error(
        "[models]\n\"gpt-*\" = 3\n",
        expect![[
            r#"toolgate.toml: models."gpt-*": expected a provider mode, like "anthropic" or "chat", found an integer (3)"#
        ]],
    );
}

#[test]
fn tokens_name_their_source_and_a_profile_the_file_defines() {
    let c = toml("[profiles.reader]\n[tokens.ci]\nenv = \"CI_TOKEN\"\n[tokens.r]\nfile = \"r.token\"\nprofile = \"reader\"\n")
        .unwrap();
    assert_eq!(
        c.host.tokens["ci"],
        TokenConfig { source: TokenSource::Env("CI_TOKEN".into()), profile: None }
    );
    assert_eq!(c.host.tokens["r"].source, TokenSource::File("/etc/toolgate/r.token".into()));
    assert_eq!(c.host.tokens["r"].profile.as_deref(), Some("reader"));
    check_error(
        "[tokens.ci]\n",
        expect![
            "toolgate.toml: tokens.ci: empty value; expected one of `env` (an environment variable) or `file` (a file) holding the token"
        ],
    );
    check_error(
        "[tokens.ci]\nenv = \"X\"\nprofile = \"admin\"\n",
        expect![[
            r#"toolgate.toml: tokens.ci.profile: no [profiles.admin] in this configuration (profiles: none); a token serves a profile the configuration defines"#
        ]],
    );
    let short = TokenConfig { source: TokenSource::Env("TOOLGATE_NO_SUCH_VARIABLE".into()), profile: None };
    assert_eq!(
        short.secret("ci").unwrap_err(),
        "tokens.ci: the environment variable TOOLGATE_NO_SUCH_VARIABLE is not set"
    );
}

#[test]
fn pinning_is_per_server_and_quarantine_needs_a_pin() {
    let config = toml("[gateway]\npins = \"p.sqlite3\"\n[servers.gh]\ncommand = \"gh\"\ntrust = \"pin\"\nquarantine = true\n")
        .unwrap();
    assert_eq!(config.servers["gh"].host.trust, crate::config::Trust::Pin);
    assert!(config.servers["gh"].host.quarantine);
    assert!(config.host.gateway.pins.as_ref().unwrap().ends_with("p.sqlite3"));
    check_error(
        "[servers.gh]\ncommand = \"gh\"\nquarantine = true\n",
        expect![[
            r#"toolgate.toml: servers.gh.quarantine: true is out of range; expected false unless the server has `trust = "pin"` (only pinned servers quarantine)"#
        ]],
    );
    check_error(
        "[servers.gh]\ncommand = \"gh\"\ntrust = \"always\"\n",
        expect![[r#"toolgate.toml: servers.gh.trust: invalid value "always"; expected "auto" or "pin""#]],
    );
}

#[test]
fn a_server_is_reached_with_a_discover_probe_unless_its_protocol_says_2025_11_25() {
    use crate::config::UpstreamProtocol;
    let config = toml(
        "[servers.a]\ncommand = \"a\"\n[servers.b]\ncommand = \"b\"\nprotocol = \"2025-11-25\"\n[servers.c]\ncommand = \"c\"\nprotocol = \"auto\"\n",
    )
    .unwrap();
    assert_eq!(config.servers["a"].host.protocol, UpstreamProtocol::Auto);
    assert_eq!(config.servers["b"].host.protocol, UpstreamProtocol::Legacy);
    assert_eq!(config.servers["c"].host.protocol, UpstreamProtocol::Auto);
    let error = toml("[servers.a]\ncommand = \"a\"\nprotocol = \"2026-07-28\"\n").unwrap_err().to_string();
    assert!(error.contains("servers.a.protocol") && error.contains("2025-11-25"), "{error}");
}

#[test]
fn a_grant_key_is_read_from_the_environment_and_never_shown() {
    let dir = Path::new(".");
    let text =
        format!("[gateway]\ngrant_key = \"${{TOOLGATE_TEST_SURELY_UNSET_KEY:-{}}}\"\n", "k".repeat(40));
    let config = Config::from_toml("toolgate.toml", &text, dir).unwrap();
    assert_eq!(config.host.gateway.grant_key.as_ref().map(|k| k.0.len()), Some(40));
    assert!(!format!("{config:?}").contains("kkkk"), "the key shows in Debug");
    let short =
        Config::from_toml("toolgate.toml", "[gateway]\ngrant_key = \"hunter2-hunter2\"\n", dir).unwrap_err();
    let message = short.to_string();
    assert!(message.contains("gateway.grant_key") && message.contains("15 characters"), "{message}");
    assert!(!message.contains("hunter2"), "the error shows the secret: {message}");
}

#[test]
fn a_urls_password_and_its_basic_credential_and_every_variables_value_are_secrets() {
    let dir = Path::new(".");
    let text = "[servers.remote]\nurl = \"http://bob:hunter2-long@h:9/mcp\"\n\n\
                [servers.child]\ncommand = \"run\"\nargs = [\"--key\", \"${PATH}\", \"${TOOLGATE_TEST_SURELY_UNSET_ARG:-in-the-file}\"]\n";
    let config = Config::from_toml("toolgate.toml", text, dir).unwrap();
    let secrets = config.servers["remote"].host.transport.secrets();
    for expected in ["hunter2-long", "bob:hunter2-long", "Ym9iOmh1bnRlcjItbG9uZw=="] {
        assert!(secrets.iter().any(|s| s == expected), "{expected} not in {secrets:?}");
    }
    // What the environment gave; a default written in the file is no secret of the environment.
    assert_eq!(config.expanded, [Secret(std::env::var("PATH").unwrap())]);
}

#[test]
fn each_key_is_read_by_one_side_and_the_library_reads_no_way_to_reach_a_server() {
    use std::collections::BTreeSet;
    let library: BTreeSet<String> = toolgate::config::Config::<NoHost>::known_keys().into_iter().collect();
    let gateway: BTreeSet<String> = <GatewayKeys as Host>::known_keys().into_iter().collect();
    let both: Vec<&String> = library.intersection(&gateway).collect();
    assert!(both.is_empty(), "read by the library and by the gateway: {both:?}");
    assert_eq!(Config::known_keys().len(), library.len() + gateway.len());
    for key in [
        "servers.NAME.command",
        "servers.NAME.url",
        "servers.NAME.protocol",
        "gateway.sessions",
        "oauth.issuers",
    ] {
        assert!(gateway.contains(key) && !library.contains(key), "{key}");
    }
    for key in [
        "gateway.exposure",
        "gateway.mode",
        "servers.NAME.max_active",
        "profiles.NAME.tools",
        "search.strategy",
    ] {
        assert!(library.contains(key) && !gateway.contains(key), "{key}");
    }
}

#[test]
fn limits_are_read_for_everyone_and_per_profile() {
    use crate::rate::{Limits, Rule};
    let c = toml(
        "[limits]\ncalls_per_minute = 60\nburst = 10\n[limits.servers.gh]\ncalls_per_minute = 30\n\
         [limits.tools.\"gh__create_issue\"]\ncalls_per_minute = 2\n\
         [profiles.ci]\n[profiles.ci.limits]\ncalls_per_minute = 1\n",
    )
    .unwrap();
    let limits = &c.host.limits;
    assert_eq!(limits.everyone.all, Some(Rule { calls_per_minute: 60, burst: 10 }));
    assert_eq!(limits.everyone.servers["gh"], Rule { calls_per_minute: 30, burst: 30 });
    assert_eq!(limits.everyone.tools["gh__create_issue"], Rule { calls_per_minute: 2, burst: 2 });
    assert_eq!(
        limits.profiles["ci"],
        Limits { all: Some(Rule { calls_per_minute: 1, burst: 1 }), ..Limits::default() }
    );
    check_error(
        "[limits]\nburst = 3\n",
        expect!["toolgate.toml: limits: empty value; expected `calls_per_minute` beside `burst`"],
    );
    check_error(
        "[limits.servers.gh]\nburst = 3\n",
        expect!["toolgate.toml: limits.servers.gh: empty value; expected `calls_per_minute` beside `burst`"],
    );
    check_error(
        "[limits]\ncalls_per_minute = 0\n",
        expect![
            "toolgate.toml: limits.calls_per_minute: 0 is out of range; expected a number of calls a minute above 0, like 60"
        ],
    );
    check_error(
        "[profiles.ci.limits]\ncals_per_minute = 1\n",
        expect![
            "toolgate.toml: profiles.ci.limits.cals_per_minute: unknown key `cals_per_minute`; did you mean `calls_per_minute`? known keys here: calls_per_minute, burst, servers, tools"
        ],
    );
}

#[test]
fn telemetry_names_a_collector_by_its_url() {
    let c = toml(
        "[telemetry]\notlp_endpoint = \"http://collector:4318\"\nservice_name = \"gw\"\nheaders = { api-key = \"${HOME}\" }\n",
    )
    .unwrap();
    let t = &c.host.telemetry;
    assert_eq!(t.otlp_endpoint.as_deref(), Some("http://collector:4318"));
    assert_eq!(t.service_name.as_deref(), Some("gw"));
    assert_eq!(t.headers["api-key"], "/home/ada");
    assert!(c.expanded.iter().any(|s| s.0 == "/home/ada"), "a header's value is a secret");
    check_error(
        "[telemetry]\notlp_endpoint = \"collector:4318\"\n",
        expect![[
            r#"toolgate.toml: telemetry.otlp_endpoint: "collector:4318" is not an HTTP URL; write http://... or https://..., e.g. http://127.0.0.1:9000/mcp"#
        ]],
    );
}
