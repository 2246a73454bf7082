//! Tests of `mcpServers` JSON: real-looking client files, read as is, and their errors.

use std::path::Path;

use expect_test::{Expect, expect};

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/Users/ada".into()),
        "NOTION_TOKEN" => Some("ntn_test".into()),
        _ => None,
    }
}

fn json(text: &str) -> Result<Config, ConfigError> {
    parse(&Source::with_env("mcp.json", Path::new("/Users/ada/project"), &env), text)
}

fn check_error(text: &str, want: Expect) {
    want.assert_eq(&json(text).unwrap_err().to_string());
}

#[test]
fn claude_desktop_config_with_three_servers() {
    let text = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "${HOME}/Desktop",
        "${HOME}/Downloads"
      ]
    },
    "time": {
      "command": "uvx",
      "args": ["mcp-server-time", "--local-timezone=Europe/Paris"],
      "env": { "PYTHONIOENCODING": "utf-8", "PORT": 3000 }
    },
    "notion": {
      "type": "http",
      "url": "https://mcp.notion.com/mcp",
      "headers": { "Authorization": "Bearer ${NOTION_TOKEN}" }
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;
    let config = json(text).unwrap();
    assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["filesystem", "notion", "time"]);
    assert_eq!(config.servers["time"].allowed, ["*"], "each entry gets the default policy");
    expect![[r#"
        {
            "filesystem": Stdio {
                command: "npx",
                args: [
                    "-y",
                    "@modelcontextprotocol/server-filesystem",
                    "/Users/ada/Desktop",
                    "/Users/ada/Downloads",
                ],
                env: {},
                cwd: None,
            },
            "notion": Http {
                url: "https://mcp.notion.com/mcp",
                headers: {
                    "Authorization": "Bearer ntn_test",
                },
            },
            "time": Stdio {
                command: "uvx",
                args: [
                    "mcp-server-time",
                    "--local-timezone=Europe/Paris",
                ],
                env: {
                    "PORT": "3000",
                    "PYTHONIOENCODING": "utf-8",
                },
                cwd: None,
            },
        }
    "#]]
    .assert_debug_eq(&config.servers.iter().map(|(k, s)| (k, &s.host.transport)).collect::<BTreeMap<_, _>>());
    let mut rest = config.clone();
    rest.servers.clear();
    assert_eq!(rest, Config::default());
}

#[test]
fn cursor_file_with_extra_keys_is_read_as_is() {
    let text = r#"{
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PAT:-}" },
      "envFile": "${workspaceFolder}/.env",
      "autoApprove": ["get_me"],
      "alwaysAllow": ["search_issues"],
      "timeout": 60,
      "description": "GitHub",
      "transportType": "stdio"
    },
    "local-notes": {
      "type": "stdio",
      "command": "node",
      "args": ["build/index.js"],
      "cwd": "tools/notes",
      "disabled": true
    },
    "context7": { "url": "https://mcp.context7.com/mcp", "disabled": false, "headers": null }
  }
}"#;
    let config = json(text).unwrap();
    let github = &config.servers["github"];
    let Transport::Stdio { env, args, .. } = &github.host.transport else { panic!("{github:?}") };
    assert_eq!(env["GITHUB_PERSONAL_ACCESS_TOKEN"], "");
    assert_eq!(args.len(), 6);
    assert!(github.enabled);
    let notes = &config.servers["local-notes"];
    assert!(!notes.enabled);
    let Transport::Stdio { cwd, .. } = &notes.host.transport else { panic!("{notes:?}") };
    assert_eq!(cwd.as_deref(), Some(Path::new("/Users/ada/project/tools/notes")));
    assert_eq!(
        config.servers["context7"].host.transport,
        Transport::Http { url: "https://mcp.context7.com/mcp".into(), headers: BTreeMap::new() }
    );
}

#[test]
fn vs_code_servers_with_comments_and_trailing_commas() {
    let text = r#"{
  // VS Code writes JSONC.
  "inputs": [{ "type": "promptString", "id": "token", "password": true }],
  "servers": {
    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch",], },
    /* a remote one,
       with a URL that holds // and /* */
    "remote": { "type": "streamable-http", "url": "http://127.0.0.1:9000/mcp?a=1//b" },
  },
}"#;
    let config = json(text).unwrap();
    assert_eq!(config.servers.len(), 2);
    let Transport::Stdio { args, .. } = &config.servers["fetch"].host.transport else { panic!() };
    assert_eq!(args, &["mcp-server-fetch"]);
    assert!(
        matches!(&config.servers["remote"].host.transport, Transport::Http { url, .. } if url == "http://127.0.0.1:9000/mcp?a=1//b")
    );
}

#[test]
fn jsonc_blanks_keep_positions() {
    let text = "{\"a\": [1,], // x\n \"b\": \"//,]\" /* y\n */}";
    let stripped = strip_jsonc(text);
    assert_eq!(stripped, "{\"a\": [1 ],     \n \"b\": \"//,]\"     \n   }");
    assert_eq!(strip_jsonc("\"esc \\\" // still a string\""), "\"esc \\\" // still a string\"");
}

#[test]
fn errors_name_the_file_the_key_and_the_problem() {
    check_error(
        r#"{"mcpServers": {"events": {"type": "sse", "url": "http://localhost:8000/sse"}}}"#,
        expect![[
            r#"mcp.json: mcpServers.events.type: server `events` uses the SSE transport, which is not supported; use streamable HTTP ("type": "http" and the server's streamable HTTP endpoint, often ending in /mcp)"#
        ]],
    );
    check_error(
        r#"{"projects": {}, "theme": "dark"}"#,
        expect![[
            "mcp.json: expected a top-level `mcpServers` object (Claude Desktop, Claude Code, Cursor) or `servers` object (VS Code), found keys projects, theme"
        ]],
    );
    check_error(
        "{}",
        expect![[
            "mcp.json: expected a top-level `mcpServers` object (Claude Desktop, Claude Code, Cursor) or `servers` object (VS Code), found an empty object"
        ]],
    );
    check_error(r#"[1]"#, expect!["mcp.json: expected a JSON object with `mcpServers`, found an array"]);
    check_error(
        r#"{"mcpServers": [{"command": "npx"}]}"#,
        expect!["mcp.json: mcpServers: expected an object mapping server names to entries, found an array"],
    );
    check_error(
        r#"{"mcpServers": {"a": {"command": "npx", "url": "http://h/mcp"}}}"#,
        expect![[
            "mcp.json: mcpServers.a: server `a` sets both `command` and `url`, but a server has exactly one transport; keep one of them"
        ]],
    );
    check_error(
        r#"{"mcpServers": {"a": {"args": ["x"]}}}"#,
        expect![[
            "mcp.json: mcpServers.a: server `a` has no transport; set `command` (a stdio child process) or `url` (streamable HTTP)"
        ]],
    );
    check_error(
        r#"{"mcpServers": {"a": {"type": "http", "command": "npx"}}}"#,
        expect![[
            r#"mcp.json: mcpServers.a.type: type "http" needs `url`, which the server does not set; set `url` or fix `type`"#
        ]],
    );
    check_error(
        r#"{"mcpServers": {"a": {"type": "websocket", "url": "ws://h"}}}"#,
        expect![[
            r#"mcp.json: mcpServers.a.type: invalid value "websocket"; expected "stdio", "http", "streamable-http" or "sse""#
        ]],
    );
    check_error(
        r#"{"mcpServers": {"a": {"command": "npx", "args": "-y server"}}}"#,
        expect![[
            r#"mcp.json: mcpServers.a.args: expected an array of strings, found a string ("-y server")"#
        ]],
    );
    check_error(
        r#"{"mcpServers": {"a": {"command": "npx", "disabled": "yes"}}}"#,
        expect![[r#"mcp.json: mcpServers.a.disabled: expected true or false, found a string ("yes")"#]],
    );
    check_error(
        r#"{"mcpServers": {"a": {"command": "npx", "env": {"TOKEN": "${API_TOKEN}"}}}}"#,
        expect![[
            "mcp.json: mcpServers.a.env.TOKEN: environment variable `API_TOKEN` is not set; set it, or write ${API_TOKEN:-default} to give a default"
        ]],
    );
    check_error(
        r#"{"servers": {"github__mcp": {"command": "npx"}}}"#,
        expect![[
            "mcp.json: servers.github__mcp: server name `github__mcp` contains `__`, which separates server from tool in qualified names (`server__tool`); rename it, e.g. to `github_mcp`"
        ]],
    );
    check_error(
        "{\"mcpServers\": {\n  \"a\": {\"command\": \"npx\"\n}",
        expect!["mcp.json:3:1: invalid JSON: EOF while parsing an object"],
    );
}
