//! status_page: the operator's HTML page for the data of [`Gateway::status`]
//! (crate::Gateway::status): servers, quarantined tools with their diffs and approve buttons,
//! sessions with the tokens they save, recent refusals, and a search box with `--explain`'s
//! reasons. No script: it refreshes itself with a `<meta>` refresh (not while showing a
//! search), and its forms post to the same origin only (the page's CSP says so).

use std::fmt::Write as _;

use serde_json::Value;

/// How often the page reloads itself, in seconds.
const REFRESH_SECS: u32 = 5;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}\
    table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ccc;padding:.2em .6em;\
    text-align:left;vertical-align:top}.failed{color:#b00}.ready,.static{color:#070}.starting{color:#a60}\
    pre{margin:0;font-size:.85em}.add{color:#070}.del{color:#b00}form.inline{display:inline}\
    .muted{color:#666}.charts figure{display:inline-block;margin:.2em 1.5em .6em 0}\
    figcaption{font-size:.9em}";

/// The page for `status`, with `found` (a [`Gateway::explain`](crate::Gateway::explain)
/// result) when the search box was used; its approval forms carry `token`
/// ([`crate::operator::approval::page_token`]).
pub(crate) fn render(status: &Value, found: Option<&Value>, token: &str) -> String {
    let mut out =
        String::from("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>toolgate</title>\n");
    if found.is_none() {
        let _ = writeln!(out, "<meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\">");
    }
    let _ = write!(out, "<style>{STYLE}</style></head><body>\n<h1>toolgate</h1>\n");
    let _ = writeln!(
        out,
        "<p>{} tools ({} deferred), exposure <b>{}</b>, strategy <b>{}</b>, up {}; MCP endpoint: \
         <code>/mcp</code>; data: <a href=\"/status.json\">status.json</a>, <a href=\"/metrics\">metrics</a></p>",
        status["tools"],
        status["deferred"],
        esc(str_of(&status["exposure"])),
        esc(str_of(&status["strategy"])),
        uptime(status["uptime_secs"].as_u64().unwrap_or(0)),
    );
    configuration(&mut out, &status["configuration"]);
    servers(&mut out, status);
    quarantined(&mut out, status, token);
    super::charts::section(&mut out, status);
    sessions(&mut out, status);
    refusals(&mut out, status);
    search(&mut out, found);
    out.push_str("</body></html>\n");
    out
}

/// The configuration's reloads: a failing one first and in red (the running configuration is
/// kept), else the last one applied, and the keys that wait for a restart.
fn configuration(out: &mut String, configuration: &Value) {
    let file = esc(str_of(&configuration["file"]));
    if let Some(failing) = configuration["failing"].as_object() {
        let _ = writeln!(
            out,
            "<p id=\"configuration\" class=\"failed\">The configuration <code>{file}</code> was not reloaded at {}: \
             {}. The running configuration is kept.</p>",
            clock(failing["at"].as_u64().unwrap_or(0)),
            esc(failing["error"].as_str().unwrap_or_default()),
        );
    } else if let Some(applied) = configuration["last_applied"].as_object() {
        let changes: Vec<&str> =
            applied["changes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let _ = writeln!(
            out,
            "<p id=\"configuration\">The configuration <code>{file}</code> was reloaded at {} ({}).</p>",
            clock(applied["at"].as_u64().unwrap_or(0)),
            esc(&if changes.is_empty() { "no change".to_owned() } else { changes.join("; ") }),
        );
    }
    let at_restart: Vec<&str> =
        configuration["at_restart"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if !at_restart.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"starting\">Changed in the file, applied at the next start: <code>{}</code>.</p>",
            esc(&at_restart.join(", "))
        );
    }
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn uptime(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s / 60 % 60),
        s => format!("{} d {} h", s / 86_400, s / 3600 % 24),
    }
}

fn servers(out: &mut String, status: &Value) {
    out.push_str(
        "<h2>Servers</h2>\n<table id=\"servers\"><tr><th>server</th><th>transport</th><th>state</th>\
         <th>tools</th><th>quarantined</th><th>restarts</th><th>last error</th></tr>\n",
    );
    for s in status["servers"].as_array().into_iter().flatten() {
        let state = str_of(&s["state"]);
        let mut state_cell = esc(state);
        if let Some(error) = s["error"].as_str() {
            let _ = write!(state_cell, ": {}", esc(error));
        }
        let mut tools = s["tools"].to_string();
        if s["visible"].is_u64() && s["visible"] != s["tools"] {
            let _ = write!(tools, " ({} visible)", s["visible"]);
        }
        if let Some(by_server) = s["catalog_servers"].as_object() {
            let _ = write!(tools, " from {} catalog servers", by_server.len());
        }
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(str_of(&s["name"])),
            esc(str_of(&s["transport"])),
            esc(state),
            state_cell,
            tools,
            s["quarantined"].as_u64().unwrap_or(0),
            s["restarts"].as_u64().unwrap_or(0),
            esc(s["last_error"].as_str().unwrap_or("")),
        );
    }
    out.push_str("</table>\n");
}

/// The held tools, each with the definition shown and a form approving that definition (its
/// hash); "Approve all" approves every definition on the page.
fn quarantined(out: &mut String, status: &Value, token: &str) {
    let held = status["quarantined"].as_array().map(Vec::as_slice).unwrap_or_default();
    out.push_str("<h2>Quarantined tools</h2>\n");
    if held.is_empty() {
        out.push_str("<p id=\"quarantine\">No tool is waiting for approval.</p>\n");
        return;
    }
    let page = format!(
        "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
        crate::operator::approval::PAGE_FIELD,
        esc(token)
    );
    let shown = |h: &Value| {
        format!(
            "<input type=\"hidden\" name=\"tool\" value=\"{}\"><input type=\"hidden\" name=\"hash\" value=\"{}\">",
            esc(str_of(&h["name"])),
            esc(str_of(&h["hash"]))
        )
    };
    let every: String = held.iter().filter(|h| h["error"].is_null()).map(shown).collect();
    let _ = write!(
        out,
        "<form method=\"post\" action=\"/approve\" class=\"inline\">{page}{every}\
         <button type=\"submit\" id=\"approve-all\">Approve all</button></form>\n\
         <table id=\"quarantine\"><tr><th>tool</th><th>why</th><th>definition</th><th></th></tr>\n",
    );
    for h in held {
        if let Some(error) = h["error"].as_str() {
            let _ = writeln!(out, "<tr><td colspan=\"4\" class=\"failed\">{}</td></tr>", esc(error));
            continue;
        }
        let mut diff = String::new();
        for line in h["diff"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            let class = match line.as_bytes().first() {
                Some(b'+') => "add",
                Some(b'-') => "del",
                _ => "muted",
            };
            let _ = writeln!(diff, "<span class=\"{class}\">{}</span>", esc(line));
        }
        let name = esc(str_of(&h["name"]));
        let _ = writeln!(
            out,
            "<tr><td><code>{name}</code></td><td>{}</td><td><pre>{diff}</pre></td><td><form method=\"post\" \
             action=\"/approve\" class=\"inline\">{page}{}\
             <button type=\"submit\" name=\"approve\" value=\"{name}\">Approve</button></form></td></tr>",
            esc(str_of(&h["reason"])),
            shown(h),
        );
    }
    out.push_str("</table>\n");
}

fn sessions(out: &mut String, status: &Value) {
    out.push_str("<h2>Sessions</h2>\n");
    let sessions = status["sessions"].as_array().map(Vec::as_slice).unwrap_or_default();
    if sessions.is_empty() {
        out.push_str("<p id=\"sessions\">No client is connected.</p>\n");
        return;
    }
    out.push_str(
        "<table id=\"sessions\"><tr><th>session</th><th>client</th><th>revision</th><th>last activity</th>\
         <th>kind</th><th>profile</th><th>exposure</th><th>active tools</th><th>tool list tokens</th>\
         <th>saved against a full load</th></tr>\n",
    );
    for s in sessions {
        let active: Vec<String> = s["active"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|n| format!("<code>{}</code>", esc(n)))
            .collect();
        let tokens = &s["tokens"];
        let last = match (s["in_flight"].as_u64(), s["idle_secs"].as_u64()) {
            (Some(n), _) if n > 0 => format!("{n} request(s) in flight"),
            (_, Some(idle)) => format!("{} ago", uptime(idle)),
            _ => "none yet".to_owned(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{} of {}</td></tr>",
            s["id"],
            esc(str_of(&s["client"])),
            esc(s["revision"].as_str().unwrap_or("?")),
            esc(s["transport"].as_str().unwrap_or("?")),
            esc(&last),
            esc(s["kind"].as_str().unwrap_or("")),
            esc(s["profile"].as_str().unwrap_or("(all)")),
            esc(str_of(&s["exposure"])),
            if active.is_empty() { "none".to_owned() } else { active.join(", ") },
            tokens["tool_list"],
            counted(&tokens["saved"]),
            counted(&tokens["full_load"]),
        );
    }
    out.push_str("</table>\n");
}

/// A count of tokens, or what stands for one not counted yet (`null`).
fn counted(tokens: &Value) -> String {
    if tokens.is_null() { "(counting)".to_owned() } else { tokens.to_string() }
}

fn refusals(out: &mut String, status: &Value) {
    out.push_str("<h2>Recent refusals</h2>\n");
    let refusals = status["refusals"].as_array().map(Vec::as_slice).unwrap_or_default();
    if refusals.is_empty() {
        out.push_str("<p id=\"refusals\">No call was refused.</p>\n");
        return;
    }
    out.push_str(
        "<table id=\"refusals\"><tr><th>when</th><th>session</th><th>subject</th><th>tool</th><th>reason</th>\
         <th>rule</th></tr>\n",
    );
    for r in refusals {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            clock(r["at"].as_u64().unwrap_or(0)),
            r["session"],
            esc(str_of(&r["subject"])),
            esc(str_of(&r["tool"])),
            esc(str_of(&r["reason"])),
            esc(str_of(&r["rule"])),
        );
    }
    out.push_str("</table>\n");
}

/// A Unix time as `HH:MM:SS` UTC.
pub(crate) fn clock(at: u64) -> String {
    format!("{:02}:{:02}:{:02} UTC", at / 3600 % 24, at / 60 % 60, at % 60)
}

fn search(out: &mut String, found: Option<&Value>) {
    let query = found.map_or("", |f| str_of(&f["query"]));
    let _ = writeln!(
        out,
        "<h2>Search</h2>\n<form method=\"get\" action=\"/\"><input type=\"search\" name=\"q\" value=\"{}\" \
         size=\"50\" placeholder=\"what the model would ask tool_search\"> <button type=\"submit\" \
         id=\"search\">Search</button></form>",
        esc(query)
    );
    let Some(found) = found else { return };
    let matches = found["matches"].as_array().map(Vec::as_slice).unwrap_or_default();
    if matches.is_empty() {
        let _ = writeln!(out, "<p id=\"results\">No tools matched “{}”.</p>", esc(query));
        return;
    }
    let would = match found["loaded"].as_array().map_or(0, Vec::len) {
        0 => "nothing fits: a <code>tool_search</code> would load none of them".to_owned(),
        n => format!("a <code>tool_search</code> would load the first {n}"),
    };
    let _ = writeln!(
        out,
        "<p class=\"muted\">ranked by <b>{}</b>; nothing is loaded by this search; {would}</p>\n<table id=\"results\">\
         <tr><th>#</th><th>tool</th><th>score</th><th>why</th></tr>",
        esc(str_of(&found["strategy"]))
    );
    for (i, m) in matches.iter().enumerate() {
        let explain = &m["explain"];
        let mut why = format!("via {}", esc(str_of(&explain["via"])));
        for t in explain["terms"].as_array().into_iter().flatten() {
            let fields: Vec<String> = t["fields"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(f, s)| format!("{} {}", esc(f), s))
                .collect();
            let _ = write!(why, "<br><code>{}</code> {}", esc(str_of(&t["term"])), fields.join(" + "));
            if let Some(from) = t["expanded_from"].as_object() {
                let _ = write!(
                    why,
                    " <span class=\"muted\">(from {}, {})</span>",
                    esc(from.get("text").and_then(Value::as_str).unwrap_or("")),
                    esc(from.get("via").and_then(Value::as_str).unwrap_or(""))
                );
            }
        }
        let score = if m["score"].is_null() { "exact".to_owned() } else { m["score"].to_string() };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code><br><span class=\"muted\">{}</span></td><td>{}</td><td>{}</td></tr>",
            i + 1,
            esc(str_of(&m["name"])),
            esc(str_of(&m["description"])),
            score,
            why
        );
    }
    out.push_str("</table>\n");
}

/// `text` with the HTML special characters escaped.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_page_escapes_what_upstreams_and_clients_name_and_shows_failures() {
        let status = json!({
            "tools": 2, "deferred": 2, "exposure": "native", "uptime_secs": 4000,
            "servers": [{"name": "<x>", "transport": "stdio", "state": "failed", "error": "exited", "tools": 0,
                "restarts": 3, "last_error": "exited"}],
            "sessions": [
                {"id": 1, "client": "c 1", "active": ["a__b"], "tokens": {"tool_list": 10, "full_load": 90, "saved": 80},
                 "revision": "2026-07-28", "transport": "stdio", "in_flight": 0, "idle_secs": 75, "kind": "agent"},
                {"id": 2, "client": "c 2", "profile": "<rev>", "active": [], "revision": "2025-11-25",
                 "transport": "http", "in_flight": 1, "idle_secs": 3, "kind": "listed only"}
            ],
            "quarantined": [{"name": "x__<evil>", "reason": "changed", "diff": ["- old", "+ <script>"]}],
            "refusals": [{"at": 3661, "session": 1, "subject": "main", "tool": "x__y", "reason": "not_loaded", "rule": "r"}],
            "configuration": {"file": "/etc/toolgate.toml", "failing": {"at": 7322, "error": "line 1: expected `]` <here>"},
                "at_restart": ["gateway.sessions"]},
        });
        let html = render(&status, None, "1.tok");
        assert!(html.contains("&lt;x&gt;") && !html.contains("<x>"));
        assert!(html.contains("failed: exited") && html.contains("<td>3</td>"));
        assert!(html.contains("<code>a__b</code>") && html.contains("80 of 90"));
        assert!(html.contains("<td>2026-07-28 (stdio)</td><td>1 min ago</td><td>agent</td>"), "{html}");
        assert!(
            html.contains("<td>2025-11-25 (http)</td><td>1 request(s) in flight</td><td>listed only</td>")
        );
        assert!(html.contains("<td>(all)</td>") && html.contains("<td>&lt;rev&gt;</td>"), "{html}");
        assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"));
        assert!(html.contains("01:01:01 UTC") && html.contains("1 h 6 min"));
        assert!(html.contains("http-equiv=\"refresh\""));
        assert!(
            html.contains(
                "class=\"failed\">The configuration <code>/etc/toolgate.toml</code> was not reloaded at \
                           02:02:02 UTC: line 1: expected `]` &lt;here&gt;."
            ),
            "{html}"
        );
        assert!(html.contains("applied at the next start: <code>gateway.sessions</code>"));
        let found = json!({"query": "q\"", "strategy": "lexical", "matches": []});
        let html = render(&status, Some(&found), "1.tok");
        assert!(!html.contains("http-equiv=\"refresh\""), "a search result does not reload away");
        assert!(html.contains("value=\"q&quot;\""));
    }

    #[test]
    fn the_search_box_says_what_a_tool_search_would_load() {
        let status = json!({"tools": 2, "servers": [], "sessions": []});
        let hit = |name: &str| json!({"name": name, "score": 1.0, "description": "", "explain": {"via": "semantic"}});
        let found = |loaded| json!({"query": "q", "strategy": "semantic", "matches": [hit("a__b"), hit("c__d")], "loaded": loaded});
        let html = render(&status, Some(&found(json!(["a__b"]))), "1.tok");
        assert!(html.contains("would load the first 1</p>"), "{html}");
        let html = render(&status, Some(&found(json!([]))), "1.tok");
        assert!(
            html.contains("nothing fits: a <code>tool_search</code> would load none of them</p>"),
            "{html}"
        );
        assert!(html.contains("<code>c__d</code>"), "the nearest are still listed");
    }
}
