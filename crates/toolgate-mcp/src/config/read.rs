//! Reading the gateway's keys of `toolgate.toml`, in the library's pass ([`GatewayKeys`] as
//! its [`Host`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::{
    Config, ConfigError, ConfigErrorKind, Fields, GatewayConfig, GatewayKeys, Host, OAuthConfig, OAuthGrant,
    ProfileConfig, Secret, ServerConfig, ServerOAuth, SessionStoreConfig, Source, TokenConfig, TokenSource,
    Transport, Trust, UpstreamConfig, UpstreamProtocol,
};
use crate::overrides::{ToolOverride, ToolOverrides};

const TABLES: &[&str] = &["tokens", "oauth", "limits", "telemetry"];
const TELEMETRY_KEYS: &[&str] = &["otlp_endpoint", "service_name", "headers"];
const PROFILE_KEYS: &[&str] = &["limits"];
const LIMITS_KEYS: &[&str] = &["calls_per_minute", "burst", "servers", "tools"];
const RULE_KEYS: &[&str] = &["calls_per_minute", "burst"];
const GATEWAY_KEYS: &[&str] = &[
    "call_timeout_secs",
    "startup_timeout_secs",
    "ready_timeout_secs",
    "session_idle_secs",
    "session_hibernate_secs",
    "max_sessions",
    "header_timeout_secs",
    "body_timeout_secs",
    "allowed_hosts",
    "allowed_origins",
    "pins",
    "audit_log",
    "sessions",
    "grant_key",
    "list_max_tools",
    "list_max_pages",
    "list_max_bytes",
];
const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "catalog",
    "call_timeout_secs",
    "trust",
    "quarantine",
    "protocol",
    "oauth",
    "tools",
];
const TOOL_KEYS: &[&str] = &["name", "description", "append", "hide", "defaults", "read_only", "destructive"];
const OAUTH_KEYS: &[&str] =
    &["resource", "issuers", "scopes", "profiles", "gateway_claims", "default_profile"];
const SERVER_OAUTH_KEYS: &[&str] =
    &["grant", "client_id", "client_secret", "scopes", "issuer", "resource", "redirect_port"];
const TOKEN_KEYS: &[&str] = &["env", "file", "profile"];

/// Keys that only apply to a stdio server (`command`) or an HTTP server (`url`).
const STDIO_ONLY: &[&str] = &["args", "env", "cwd"];
const HTTP_ONLY: &[&str] = &["headers", "oauth"];

impl Host for GatewayKeys {
    type Server = UpstreamConfig;

    const TABLES: &'static [&'static str] = TABLES;
    const GATEWAY_KEYS: &'static [&'static str] = GATEWAY_KEYS;
    const SERVER_KEYS: &'static [&'static str] = SERVER_KEYS;
    const PROFILE_KEYS: &'static [&'static str] = PROFILE_KEYS;

    fn known_keys() -> Vec<String> {
        let mut keys = Vec::new();
        for (table, names) in [
            ("gateway", GATEWAY_KEYS),
            ("servers.NAME", SERVER_KEYS),
            ("tokens.NAME", TOKEN_KEYS),
            ("oauth", OAUTH_KEYS),
            ("servers.NAME.oauth", SERVER_OAUTH_KEYS),
            ("servers.NAME.tools.TOOL", TOOL_KEYS),
            ("limits", LIMITS_KEYS),
            ("telemetry", TELEMETRY_KEYS),
            ("limits.servers.NAME", RULE_KEYS),
            ("limits.tools.TOOL", RULE_KEYS),
            ("profiles.NAME", PROFILE_KEYS),
        ] {
            keys.extend(names.iter().map(|k| format!("{table}.{k}")));
        }
        keys
    }

    fn profile(&mut self, f: &Fields<'_, '_>, name: &str) -> Result<(), ConfigError> {
        if let Some(l) = f.child("limits", "a table ([profiles.NAME.limits])", LIMITS_KEYS)? {
            self.limits.profiles.insert(name.to_owned(), limits(&l)?);
        }
        Ok(())
    }

    fn gateway(&mut self, f: &Fields<'_, '_>) -> Result<(), ConfigError> {
        gateway(f, &mut self.gateway)
    }

    fn server(f: &Fields<'_, '_>, name: &str) -> Result<UpstreamConfig, ConfigError> {
        upstream(f, name)
    }

    fn tables(
        &mut self,
        top: &Fields<'_, '_>,
        profiles: &BTreeMap<String, ProfileConfig>,
        _: &BTreeMap<String, ServerConfig>,
    ) -> Result<(), ConfigError> {
        for (name, fields) in top.children(
            "tokens",
            "a table of tokens ([tokens.NAME])",
            "a table ([tokens.NAME])",
            TOKEN_KEYS,
        )? {
            self.tokens.insert(name.clone(), token(&fields, profiles)?);
        }
        if let Some(o) = top.child("oauth", "a table ([oauth])", OAUTH_KEYS)? {
            self.oauth = Some(oauth(&o, profiles)?);
        }
        if let Some(l) = top.child("limits", "a table ([limits])", LIMITS_KEYS)? {
            self.limits.everyone = limits(&l)?;
        }
        if let Some(t) = top.child("telemetry", "a table ([telemetry])", TELEMETRY_KEYS)? {
            self.telemetry = crate::telemetry::TelemetryConfig {
                otlp_endpoint: t
                    .expanded("otlp_endpoint")?
                    .map(|u| t.src().url(&t.key("otlp_endpoint"), u))
                    .transpose()?,
                service_name: t
                    .string("service_name", "a service name, like \"toolgate\"")?
                    .map(str::to_owned),
                headers: t.expanded_map("headers")?.unwrap_or_default(),
            };
        }
        Ok(())
    }

    fn from_mcp_json(src: &Source<'_>, text: &str) -> Result<Config, ConfigError> {
        super::mcp_json::parse(src, text)
    }
}

/// `[tokens.NAME]`: where a bearer token's secret is and which profile it serves.
fn token(f: &Fields<'_, '_>, profiles: &BTreeMap<String, ProfileConfig>) -> Result<TokenConfig, ConfigError> {
    let source = match (f.string("env", "a variable name")?, f.string("file", "a file path")?) {
        (Some(var), None) => TokenSource::Env(var.to_owned()),
        (None, Some(path)) => TokenSource::File(f.src().path(path)),
        _ => {
            let kind = ConfigErrorKind::Empty {
                expected: "one of `env` (an environment variable) or `file` (a file) holding the token",
            };
            return Err(f.src().error(f.path(), kind));
        }
    };
    let profile = f.string("profile", "a profile name")?.map(str::to_owned);
    if let Some(p) = &profile
        && !profiles.contains_key(p)
    {
        let known = profiles.keys().cloned().collect();
        let kind = ConfigErrorKind::UnknownProfile { name: p.clone(), known };
        return Err(f.src().error(&f.key("profile"), kind));
    }
    Ok(TokenConfig { source, profile })
}

/// `[oauth]`: the issuers, audience and claim mapping of inbound access tokens.
fn oauth(f: &Fields<'_, '_>, profiles: &BTreeMap<String, ProfileConfig>) -> Result<OAuthConfig, ConfigError> {
    let resource = f.expanded("resource")?.ok_or_else(|| {
        let kind = ConfigErrorKind::Empty {
            expected: "`resource`, this gateway's URL as its clients reach it, like \"https://gateway.example/mcp\"",
        };
        f.src().error(&f.key("resource"), kind)
    })?;
    let resource = f.src().url(&f.key("resource"), resource)?;
    let issuers = f.expanded_list("issuers")?.unwrap_or_default();
    if issuers.is_empty() {
        let kind = ConfigErrorKind::Empty {
            expected: "`issuers`, the authorization servers whose tokens are accepted, like [\"https://id.example\"]",
        };
        return Err(f.src().error(&f.key("issuers"), kind));
    }
    for (i, issuer) in issuers.iter().enumerate() {
        f.src().url(&format!("{}[{i}]", f.key("issuers")), issuer.clone())?;
    }
    let known_profile = |key: String, name: &str| {
        if profiles.contains_key(name) {
            return Ok(());
        }
        let known = profiles.keys().cloned().collect();
        Err(f.src().error(&key, ConfigErrorKind::UnknownProfile { name: name.to_owned(), known }))
    };
    let mut mapped = BTreeMap::new();
    if let Some(t) =
        f.table("profiles", "a table of profile = [claims], like { reader = [\"groups=readers\"] }")?
    {
        let table = Fields::named(f.src(), t, f.key("profiles"));
        for name in t.keys() {
            known_profile(table.key(name), name)?;
            let claims =
                table.array(name, "an array of claims, like [\"groups=readers\"]")?.unwrap_or_default();
            mapped.insert(name.clone(), claims_of(f, claims)?);
        }
    }
    let gateway_claims = claims_of(
        f,
        f.array("gateway_claims", "an array of claims, like [\"groups=admins\"]")?.unwrap_or_default(),
    )?;
    let default_profile = f.string("default_profile", "a profile name")?.map(str::to_owned);
    if let Some(p) = &default_profile {
        known_profile(f.key("default_profile"), p)?;
    }
    Ok(OAuthConfig {
        resource,
        issuers,
        scopes: f.expanded_list("scopes")?.unwrap_or_default(),
        profiles: mapped,
        gateway_claims,
        default_profile,
    })
}

/// Claims written `NAME=VALUE`.
fn claims_of(f: &Fields<'_, '_>, items: Vec<(String, &str)>) -> Result<Vec<String>, ConfigError> {
    items
        .into_iter()
        .map(|(key, claim)| match claim.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() && !value.is_empty() => Ok(claim.to_owned()),
            _ => {
                let kind = ConfigErrorKind::WrongType {
                    expected: "a claim and the value it must hold, like \"groups=readers\"",
                    found: format!("{claim:?}"),
                };
                Err(f.src().error(&key, kind))
            }
        })
        .collect()
}

/// `[servers.NAME.oauth]`: how the gateway gets the server's access tokens.
fn server_oauth(f: &Fields<'_, '_>) -> Result<ServerOAuth, ConfigError> {
    let grant = match f.choice("grant", &["authorization_code", "client_credentials", "token_exchange"])? {
        Some("client_credentials") => OAuthGrant::ClientCredentials,
        Some("token_exchange") => OAuthGrant::TokenExchange,
        _ => OAuthGrant::AuthorizationCode,
    };
    let mut o = ServerOAuth {
        grant,
        client_id: f.expanded("client_id")?,
        client_secret: f.expanded("client_secret")?.map(Secret),
        scopes: f.expanded_list("scopes")?.unwrap_or_default(),
        issuer: f.expanded("issuer")?.map(|u| f.src().url(&f.key("issuer"), u)).transpose()?,
        resource: f.expanded("resource")?.map(|u| f.src().url(&f.key("resource"), u)).transpose()?,
        redirect_port: 0,
    };
    if let Some(n) = f.count("redirect_port", 0, "a port number from 0 to 65535")? {
        o.redirect_port = u16::try_from(n).map_err(|_| {
            f.out_of_range(
                "redirect_port",
                f.get("redirect_port").expect("read above"),
                "a port number from 0 to 65535",
            )
        })?;
    }
    if grant != OAuthGrant::AuthorizationCode && (o.client_id.is_none() || o.client_secret.is_none()) {
        let kind = ConfigErrorKind::Empty {
            expected: "`client_id` and `client_secret`: grants \"client_credentials\" and \"token_exchange\" authenticate the gateway as a client",
        };
        return Err(f.src().error(f.path(), kind));
    }
    Ok(o)
}

/// The gateway's keys of `[gateway]`.
fn gateway(f: &Fields<'_, '_>, g: &mut GatewayConfig) -> Result<(), ConfigError> {
    if let Some(d) = f.seconds("call_timeout_secs")? {
        g.call_timeout = d;
    }
    if let Some(n) = f.count("ready_timeout_secs", 0, "a whole number of seconds, 0 for no wait")? {
        g.ready_timeout = Duration::from_secs(n as u64);
    }
    if let Some(d) = f.seconds("session_idle_secs")? {
        g.session_idle = d;
    }
    if let Some(d) = f.seconds("session_hibernate_secs")? {
        g.session_hibernate = d;
    }
    if let Some(n) = f.count("max_sessions", 1, "a number of sessions above 0, like 1000")? {
        g.max_sessions = n;
    }
    if let Some(d) = f.seconds("startup_timeout_secs")? {
        g.startup_timeout = d;
    }
    if let Some(d) = f.seconds("header_timeout_secs")? {
        g.header_timeout = d;
    }
    if let Some(d) = f.seconds("body_timeout_secs")? {
        g.body_timeout = d;
    }
    if let Some(hosts) = f.array("allowed_hosts", "an array of host names, like [\"gateway.internal\"]")? {
        g.allowed_hosts = hosts.into_iter().map(|(_, h)| h.trim().to_ascii_lowercase()).collect();
    }
    if let Some(origins) =
        f.array("allowed_origins", "an array of origins, like [\"https://app.example\"]")?
    {
        g.allowed_origins =
            origins.into_iter().map(|(_, o)| o.trim().trim_end_matches('/').to_ascii_lowercase()).collect();
    }
    if let Some(v) = f.get("pins") {
        let path = v.as_str().ok_or_else(|| f.wrong("pins", "a path, like \"pins.sqlite3\"", v))?;
        g.pins = Some(f.src().path(path));
    }
    if let Some(v) = f.get("audit_log") {
        let path = v.as_str().ok_or_else(|| f.wrong("audit_log", "a path, like \"audit.jsonl\"", v))?;
        g.audit_log = Some(f.src().path(path));
    }
    if let Some(v) = f.get("sessions") {
        let expected = "\"memory\" or a Redis URL, like \"redis://127.0.0.1:6379/0\"";
        g.sessions = match v.as_str().map(str::trim) {
            Some("memory") => SessionStoreConfig::Memory,
            Some(url) if url.starts_with("redis://") && url.len() > "redis://".len() => {
                SessionStoreConfig::Redis(url.to_owned())
            }
            _ => return Err(f.wrong("sessions", expected, v)),
        };
    }
    if let Some(n) = f.count("list_max_tools", 1, "a number of tools above 0, like 10000")? {
        g.list_caps.tools = n;
    }
    if let Some(n) = f.count("list_max_pages", 1, "a number of pages above 0, like 1000")? {
        g.list_caps.pages = n;
    }
    if let Some(n) = f.count("list_max_bytes", 1024, "a number of bytes of at least 1024, like 67108864")? {
        g.list_caps.bytes = n;
    }
    if let Some(key) = f.expanded("grant_key")? {
        // The value is a secret: the error says how long it is, never what it is.
        let length = key.chars().count();
        if length < 32 {
            let found = format!("a string of {length} characters");
            let expected = "a secret of at least 32 characters, like \"${TOOLGATE_GRANT_KEY}\"";
            return Err(f.src().error(&f.key("grant_key"), ConfigErrorKind::WrongType { expected, found }));
        }
        g.grant_key = Some(Secret(key));
    }
    Ok(())
}

/// The gateway's keys of one `[servers.NAME]`: how to reach it, and what it trusts of it.
fn upstream(f: &Fields<'_, '_>, name: &str) -> Result<UpstreamConfig, ConfigError> {
    let keys: Vec<&'static str> = ["command", "url", "catalog"].into_iter().filter(|k| f.has(k)).collect();
    let transport = match keys.as_slice() {
        [] => {
            let expected = "`command` (a stdio child process), `url` (streamable HTTP) \
                            or `catalog` (a static catalog file)";
            return Err(f
                .src()
                .error(f.path(), ConfigErrorKind::NoTransport { server: name.to_owned(), expected }));
        }
        ["command"] => {
            f.only_with(HTTP_ONLY, "url")?;
            let command = f.expanded("command")?.unwrap_or_default();
            if command.trim().is_empty() {
                let kind = ConfigErrorKind::Empty { expected: "a program to run, like \"npx\"" };
                return Err(f.src().error(&f.key("command"), kind));
            }
            Transport::Stdio {
                command,
                args: f.expanded_list("args")?.unwrap_or_default(),
                env: f.expanded_map("env")?.unwrap_or_default(),
                cwd: f.string("cwd", "a folder path")?.map(|p| f.src().path(p)),
            }
        }
        ["url"] => {
            f.only_with(STDIO_ONLY, "command")?;
            let url = f.expanded("url")?.unwrap_or_default();
            Transport::Http {
                url: f.src().url(&f.key("url"), url)?,
                headers: f.expanded_map("headers")?.unwrap_or_default(),
            }
        }
        ["catalog"] => {
            f.only_with(STDIO_ONLY, "command")?;
            f.only_with(HTTP_ONLY, "url")?;
            let path = f.string("catalog", "a catalog file path")?.unwrap_or_default();
            if path.is_empty() {
                let kind = ConfigErrorKind::Empty { expected: "a catalog file path, like \"tools.jsonl\"" };
                return Err(f.src().error(&f.key("catalog"), kind));
            }
            Transport::Catalog { path: f.src().path(path) }
        }
        _ => {
            return Err(f
                .src()
                .error(f.path(), ConfigErrorKind::TransportConflict { server: name.to_owned(), keys }));
        }
    };
    let mut s = UpstreamConfig::new(transport);
    s.call_timeout = f.seconds("call_timeout_secs")?;
    if let Some(p) = f.choice("protocol", &["auto", "2025-11-25"])? {
        s.protocol = if p == "auto" { UpstreamProtocol::Auto } else { UpstreamProtocol::Legacy };
    }
    if let Some(o) = f.child("oauth", "a table ([servers.NAME.oauth])", SERVER_OAUTH_KEYS)? {
        s.oauth = Some(server_oauth(&o)?);
    }
    s.tools = tool_overrides(f)?;
    if let Some(t) = f.choice("trust", &["auto", "pin"])? {
        s.trust = if t == "pin" { Trust::Pin } else { Trust::Auto };
    }
    if let Some(quarantine) = f.bool("quarantine")? {
        s.quarantine = quarantine;
        if s.quarantine && s.trust != Trust::Pin {
            let kind = ConfigErrorKind::OutOfRange {
                value: "true".into(),
                expected: "false unless the server has `trust = \"pin\"` (only pinned servers quarantine)",
            };
            return Err(f.src().error(&f.key("quarantine"), kind));
        }
    }
    Ok(s)
}

/// `[servers.NAME.tools.TOOL]`: the operator's fixes to the server's tools, by the upstream's
/// tool name.
fn tool_overrides(f: &Fields<'_, '_>) -> Result<ToolOverrides, ConfigError> {
    let mut by_upstream = std::collections::BTreeMap::new();
    let mut shown: BTreeMap<String, String> = BTreeMap::new();
    for (tool, t) in f.children(
        "tools",
        "a table of tools ([servers.NAME.tools.TOOL])",
        "a table ([servers.NAME.tools.TOOL])",
        TOOL_KEYS,
    )? {
        let o = ToolOverride {
            name: t.string("name", "a tool name")?.map(|n| tool_name(&t, n)).transpose()?,
            description: t.string("description", "the description the model reads")?.map(str::to_owned),
            append: t.string("append", "text added to the description")?.map(str::to_owned),
            hide: values(&t, "hide", "a table of parameter = fixed value, like { owner = \"acme\" }")?,
            defaults: values(&t, "defaults", "a table of parameter = default value, like { limit = 20 }")?,
            read_only: t.bool("read_only")?,
            destructive: t.bool("destructive")?,
        };
        if let Some(both) = o.hide.keys().find(|k| o.defaults.contains_key(*k)) {
            let kind = ConfigErrorKind::OutOfRange {
                value: format!("{both:?}"),
                expected: "a parameter either hidden (a fixed value) or given a default, not both",
            };
            return Err(t.src().error(&t.key("defaults"), kind));
        }
        if o.description.is_some() && o.append.is_some() {
            let kind = ConfigErrorKind::OutOfRange {
                value: "both".into(),
                expected: "`description` (replaces the upstream's) or `append` (adds to it), not both",
            };
            return Err(t.src().error(&t.key("append"), kind));
        }
        let shown_as = o.name.clone().unwrap_or_else(|| tool.clone());
        if let Some(other) = shown.insert(shown_as.clone(), tool.clone()) {
            let kind = ConfigErrorKind::OutOfRange {
                value: format!("{shown_as:?} (also the name of {other:?})"),
                expected: "a name no other tool of the server is shown under",
            };
            return Err(t.src().error(&t.key("name"), kind));
        }
        by_upstream.insert(tool.clone(), o);
    }
    Ok(ToolOverrides::new(by_upstream))
}

/// A tool's new name: what MCP allows in a name, without `__`, which separates server from
/// tool in qualified names.
fn tool_name(t: &Fields<'_, '_>, name: &str) -> Result<String, ConfigError> {
    let fits = (1..=64).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        && !name.contains("__");
    if !fits {
        let kind = ConfigErrorKind::OutOfRange {
            value: format!("{name:?}"),
            expected: "a tool name of 1 to 64 letters, digits, `_`, `-` or `.`, without `__`",
        };
        return Err(t.src().error(&t.key("name"), kind));
    }
    Ok(name.to_owned())
}

/// A table of parameter names to values, as JSON.
fn values(
    t: &Fields<'_, '_>,
    name: &str,
    expected: &'static str,
) -> Result<BTreeMap<String, Value>, ConfigError> {
    let Some(table) = t.table(name, expected)? else {
        return Ok(BTreeMap::new());
    };
    table
        .iter()
        .map(|(k, v)| {
            let json = serde_json::to_value(v).map_err(|e| {
                let kind = ConfigErrorKind::WrongType { expected: "a JSON value", found: e.to_string() };
                t.src().error(&toolgate::config::child_key(&t.key(name), k), kind)
            })?;
            Ok((k.clone(), json))
        })
        .collect()
}

/// A `[limits]` table (or a profile's): the limit of all calls, and of one server's or one
/// tool's.
fn limits(f: &Fields<'_, '_>) -> Result<crate::rate::Limits, ConfigError> {
    let mut limits = crate::rate::Limits { all: rule(f)?, ..Default::default() };
    for (server, r) in f.children(
        "servers",
        "a table of servers ([limits.servers.NAME])",
        "a table ([limits.servers.NAME])",
        RULE_KEYS,
    )? {
        limits.servers.insert(server.clone(), required_rule(&r)?);
    }
    for (tool, r) in f.children(
        "tools",
        "a table of tools ([limits.tools.\"server__tool\"])",
        "a table ([limits.tools.TOOL])",
        RULE_KEYS,
    )? {
        limits.tools.insert(tool.clone(), required_rule(&r)?);
    }
    Ok(limits)
}

/// `calls_per_minute` and `burst` of a table, if it has a rate.
fn rule(f: &Fields<'_, '_>) -> Result<Option<crate::rate::Rule>, ConfigError> {
    let per_minute = f.count("calls_per_minute", 1, "a number of calls a minute above 0, like 60")?;
    let burst = f.count("burst", 1, "a number of calls above 0, like 10")?;
    let Some(per_minute) = per_minute else {
        if burst.is_some() {
            let kind = ConfigErrorKind::Empty { expected: "`calls_per_minute` beside `burst`" };
            return Err(f.src().error(f.path(), kind));
        }
        return Ok(None);
    };
    let fit = |n: usize, key: &str| {
        u32::try_from(n).map_err(|_| {
            let kind = ConfigErrorKind::OutOfRange { value: n.to_string(), expected: "at most 4294967295" };
            f.src().error(&f.key(key), kind)
        })
    };
    let calls_per_minute = fit(per_minute, "calls_per_minute")?;
    let burst = burst.map_or(Ok(calls_per_minute), |b| fit(b, "burst"))?;
    Ok(Some(crate::rate::Rule { calls_per_minute, burst }))
}

/// [`rule`] of a table that exists only to give one.
fn required_rule(f: &Fields<'_, '_>) -> Result<crate::rate::Rule, ConfigError> {
    rule(f)?.ok_or_else(|| {
        f.src().error(f.path(), ConfigErrorKind::Empty { expected: "`calls_per_minute`, like 60" })
    })
}
