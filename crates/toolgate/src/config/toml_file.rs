//! Reading `toolgate.toml`: strict, by hand from a `toml::Table`, every key checked.

use std::collections::BTreeMap;
use std::time::Duration;

use toml::{Table, Value};

use super::error::{line_column, suggest};
use super::{
    BudgetConfig, Config, ConfigError, ConfigErrorKind, Exposure, GatewayConfig, MAX_ACTIVE_CAP, OAuthConfig,
    OAuthGrant, PolicyConfig, ProfileConfig, SearchConfig, ServerConfig, ServerMode, ServerOAuth,
    SessionStoreConfig, SideEffects, Source, TokenConfig, TokenSource, Transport, Trust, UpstreamProtocol,
    child_key,
};
use crate::defer::DeferMode;
use crate::search::Strategy;

/// Every key `toolgate.toml` accepts, as dotted paths with `NAME` for a server's or profile's
/// name, in the order of the tables.
pub(super) fn known_keys() -> Vec<String> {
    let mut keys = Vec::new();
    for (table, names) in [
        ("gateway", GATEWAY_KEYS),
        ("budget", BUDGET_KEYS),
        ("search", SEARCH_KEYS),
        ("models", &["PATTERN"]),
        ("policy", POLICY_KEYS),
        ("servers.NAME", SERVER_KEYS),
        ("profiles.NAME", PROFILE_KEYS),
        ("tokens.NAME", TOKEN_KEYS),
        ("oauth", OAUTH_KEYS),
        ("servers.NAME.oauth", SERVER_OAUTH_KEYS),
    ] {
        keys.extend(names.iter().map(|k| format!("{table}.{k}")));
    }
    keys
}

const TOP_KEYS: &[&str] =
    &["gateway", "budget", "search", "models", "policy", "servers", "profiles", "tokens", "oauth"];
const OAUTH_KEYS: &[&str] =
    &["resource", "issuers", "scopes", "profiles", "gateway_claims", "default_profile"];
const SERVER_OAUTH_KEYS: &[&str] =
    &["grant", "client_id", "client_secret", "scopes", "issuer", "resource", "redirect_port"];
const TOKEN_KEYS: &[&str] = &["env", "file", "profile"];
const GATEWAY_KEYS: &[&str] = &[
    "exposure",
    "mode",
    "auto_threshold",
    "context_window",
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
const BUDGET_KEYS: &[&str] = &["first_turn", "dynamic", "hard"];
const SEARCH_KEYS: &[&str] = &["strategy", "model", "index_cache"];
const POLICY_KEYS: &[&str] = &["deny"];
const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "catalog",
    "enabled",
    "mode",
    "allowed",
    "denied",
    "pinned",
    "always_load",
    "max_active",
    "side_effects",
    "read_only",
    "call_timeout_secs",
    "trust_always_load",
    "trust",
    "quarantine",
    "protocol",
    "oauth",
];
const PROFILE_KEYS: &[&str] = &["tools", "disallowed_tools"];

/// Keys that only apply to a stdio server (`command`) or an HTTP server (`url`).
const STDIO_ONLY: &[&str] = &["args", "env", "cwd"];
const HTTP_ONLY: &[&str] = &["headers", "oauth"];

/// Reads `toolgate.toml` text.
pub(super) fn parse(src: &Source<'_>, text: &str) -> Result<Config, ConfigError> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
        let message = e.message().trim_end().trim_end_matches('.').to_owned();
        src.error("", ConfigErrorKind::Toml { line, column, message })
    })?;
    let top = Fields::new(src, &table, String::new(), TOP_KEYS)?;
    let mut config = Config::default();
    if let Some(t) = top.table("gateway", "a table ([gateway])")? {
        config.gateway = gateway(&Fields::new(src, t, "gateway".into(), GATEWAY_KEYS)?)?;
    }
    if let Some(t) = top.table("budget", "a table ([budget])")? {
        config.budget = budget(&Fields::new(src, t, "budget".into(), BUDGET_KEYS)?)?;
    }
    if let Some(t) = top.table("search", "a table ([search])")? {
        config.search = search(&Fields::new(src, t, "search".into(), SEARCH_KEYS)?)?;
    }
    if let Some(t) = top.table("models", "a table of model patterns ([models])")? {
        for (pattern, mode) in t {
            let key = child_key("models", pattern);
            src.pattern(&key, pattern)?;
            let mode = mode.as_str().ok_or_else(|| {
                let kind = ConfigErrorKind::WrongType {
                    expected: "a provider mode, like \"anthropic\" or \"chat\"",
                    found: describe(mode),
                };
                src.error(&key, kind)
            })?;
            config.models.insert(pattern.clone(), mode.to_owned());
        }
    }
    if let Some(t) = top.table("policy", "a table ([policy])")? {
        let policy = Fields::new(src, t, "policy".into(), POLICY_KEYS)?;
        config.policy = PolicyConfig { deny: policy.patterns("deny")?.unwrap_or_default() };
    }
    if let Some(t) = top.table("servers", "a table of servers ([servers.NAME])")? {
        for (name, value) in t {
            let key = child_key("servers", name);
            src.server_name(&key, name)?;
            let t = table_value(src, &key, value, "a table ([servers.NAME])")?;
            config.servers.insert(name.clone(), server(&Fields::new(src, t, key, SERVER_KEYS)?, name)?);
        }
    }
    if let Some(t) = top.table("profiles", "a table of profiles ([profiles.NAME])")? {
        for (name, value) in t {
            let key = child_key("profiles", name);
            if name.trim().is_empty() {
                return Err(src.error(&key, ConfigErrorKind::EmptyName { what: "profile" }));
            }
            let t = table_value(src, &key, value, "a table ([profiles.NAME])")?;
            let fields = Fields::new(src, t, key, PROFILE_KEYS)?;
            let defaults = ProfileConfig::default();
            let profile = ProfileConfig {
                tools: fields.patterns("tools")?.unwrap_or(defaults.tools),
                disallowed_tools: fields.patterns("disallowed_tools")?.unwrap_or(defaults.disallowed_tools),
            };
            config.profiles.insert(name.clone(), profile);
        }
    }
    if let Some(t) = top.table("tokens", "a table of tokens ([tokens.NAME])")? {
        for (name, value) in t {
            let key = child_key("tokens", name);
            let t = table_value(src, &key, value, "a table ([tokens.NAME])")?;
            let fields = Fields::new(src, t, key.clone(), TOKEN_KEYS)?;
            let source = match (
                fields.string("env", "a variable name")?,
                fields.string("file", "a file path")?,
            ) {
                (Some(var), None) => TokenSource::Env(var.to_owned()),
                (None, Some(path)) => TokenSource::File(src.path(path)),
                _ => {
                    let kind = ConfigErrorKind::Empty {
                        expected: "one of `env` (an environment variable) or `file` (a file) holding the token",
                    };
                    return Err(src.error(&key, kind));
                }
            };
            let profile = fields.string("profile", "a profile name")?.map(str::to_owned);
            if let Some(p) = &profile
                && !config.profiles.contains_key(p)
            {
                let known = config.profiles.keys().cloned().collect();
                let kind = ConfigErrorKind::UnknownProfile { name: p.clone(), known };
                return Err(src.error(&child_key(&key, "profile"), kind));
            }
            config.tokens.insert(name.clone(), TokenConfig { source, profile });
        }
    }
    if let Some(t) = top.table("oauth", "a table ([oauth])")? {
        config.oauth = Some(oauth(&Fields::new(src, t, "oauth".into(), OAUTH_KEYS)?, &config.profiles)?);
    }
    Ok(config)
}

/// `[oauth]`: the issuers, audience and claim mapping of inbound access tokens.
fn oauth(f: &Fields<'_, '_>, profiles: &BTreeMap<String, ProfileConfig>) -> Result<OAuthConfig, ConfigError> {
    let resource = f.expanded("resource")?.ok_or_else(|| {
        let kind = ConfigErrorKind::Empty {
            expected: "`resource`, this gateway's URL as its clients reach it, like \"https://gateway.example/mcp\"",
        };
        f.src.error(&f.key("resource"), kind)
    })?;
    let resource = f.src.url(&f.key("resource"), resource)?;
    let issuers = f.expanded_list("issuers")?.unwrap_or_default();
    if issuers.is_empty() {
        let kind = ConfigErrorKind::Empty {
            expected: "`issuers`, the authorization servers whose tokens are accepted, like [\"https://id.example\"]",
        };
        return Err(f.src.error(&f.key("issuers"), kind));
    }
    for (i, issuer) in issuers.iter().enumerate() {
        f.src.url(&format!("{}[{i}]", f.key("issuers")), issuer.clone())?;
    }
    let known_profile = |key: String, name: &str| {
        if profiles.contains_key(name) {
            return Ok(());
        }
        let known = profiles.keys().cloned().collect();
        Err(f.src.error(&key, ConfigErrorKind::UnknownProfile { name: name.to_owned(), known }))
    };
    let mut mapped = BTreeMap::new();
    if let Some(t) =
        f.table("profiles", "a table of profile = [claims], like { reader = [\"groups=readers\"] }")?
    {
        let table = Fields { src: f.src, table: t, path: f.key("profiles") };
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
                Err(f.src.error(&key, kind))
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
        client_secret: f.expanded("client_secret")?.map(super::Secret),
        scopes: f.expanded_list("scopes")?.unwrap_or_default(),
        issuer: f.expanded("issuer")?.map(|u| f.src.url(&f.key("issuer"), u)).transpose()?,
        resource: f.expanded("resource")?.map(|u| f.src.url(&f.key("resource"), u)).transpose()?,
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
        return Err(f.src.error(&f.path, kind));
    }
    Ok(o)
}

fn gateway(f: &Fields<'_, '_>) -> Result<GatewayConfig, ConfigError> {
    let mut g = GatewayConfig::default();
    if let Some(e) = f.choice("exposure", &["auto", "native", "bridge"])? {
        g.exposure = match e {
            "native" => Some(Exposure::Native),
            "bridge" => Some(Exposure::Bridge),
            _ => None,
        };
    }
    if let Some(m) = f.choice("mode", &["on", "off", "auto"])? {
        g.defer.mode = match m {
            "on" => DeferMode::On,
            "off" => DeferMode::Off,
            _ => DeferMode::Auto,
        };
    }
    if let Some(v) = f.get("auto_threshold") {
        let x = match v {
            Value::Float(x) => *x,
            Value::Integer(i) => *i as f64,
            _ => return Err(f.wrong("auto_threshold", "a number between 0 and 1", v)),
        };
        if !(x > 0.0 && x <= 1.0) {
            return Err(f.out_of_range(
                "auto_threshold",
                v,
                "a share of the context window above 0 and at most 1, like 0.10",
            ));
        }
        g.defer.auto_threshold = x;
    }
    if let Some(n) = f.count("context_window", 1, "a number of tokens above 0, like 200000")? {
        g.defer.context_window = n;
    }
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
        g.pins = Some(f.src.path(path));
    }
    if let Some(v) = f.get("audit_log") {
        let path = v.as_str().ok_or_else(|| f.wrong("audit_log", "a path, like \"audit.jsonl\"", v))?;
        g.audit_log = Some(f.src.path(path));
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
            return Err(f.src.error(&f.key("grant_key"), ConfigErrorKind::WrongType { expected, found }));
        }
        g.grant_key = Some(super::Secret(key));
    }
    Ok(g)
}

/// The names `[search] strategy` takes.
const STRATEGY_NAMES: &[&str] = &[
    "keyword",
    "bm25",
    #[cfg(feature = "bm25-crate")]
    "bm25-crate",
    "bm25f",
    "lexical",
    #[cfg(feature = "semantic")]
    "semantic",
    #[cfg(feature = "bert")]
    "bert",
];

/// The names `[search] strategy` takes (a test holds them to `Strategy::NAMED`).
#[cfg(test)]
pub(super) fn strategy_names() -> &'static [&'static str] {
    STRATEGY_NAMES
}

fn search(f: &Fields<'_, '_>) -> Result<SearchConfig, ConfigError> {
    let model = f.string("model", "a model directory path")?.map(|p| f.src.path(p));
    let index_cache = f.string("index_cache", "a directory path")?.map(|p| f.src.path(p));
    let named = f.choice("strategy", STRATEGY_NAMES)?;
    let fail = |problem| {
        Err(f.src.error(
            &f.key(if named.is_some() { "strategy" } else { "model" }),
            ConfigErrorKind::SearchModel { problem },
        ))
    };
    let strategy = match (named, &model) {
        (Some(name), _) => name.parse::<Strategy>().expect("one of the names of Strategy::NAMED"),
        (None, Some(_)) if cfg!(feature = "bert") => {
            "bert".parse().expect("a strategy with the bert feature")
        }
        (None, Some(_)) => {
            return fail(
                "`model` needs the `bert` strategy, and this toolgate was built without the `bert` feature",
            );
        }
        (None, None) => Strategy::DEFAULT,
    };
    let is_bert = strategy.as_str() == "bert";
    match (is_bert, &model) {
        (true, None) => fail("strategy \"bert\" needs `model`, a sentence-transformers model directory"),
        (false, Some(_)) => {
            fail("`model` is only read by strategy \"bert\"; remove it or set strategy = \"bert\"")
        }
        _ => Ok(SearchConfig { strategy, model, index_cache }),
    }
}

fn budget(f: &Fields<'_, '_>) -> Result<BudgetConfig, ConfigError> {
    let mut b = BudgetConfig::default();
    const EXPECTED: &str = "a number of tool definitions, at least 1";
    b.first_turn = f.count("first_turn", 0, EXPECTED)?.unwrap_or(b.first_turn);
    b.dynamic = f.count("dynamic", 0, EXPECTED)?.unwrap_or(b.dynamic);
    b.hard = f.count("hard", 0, EXPECTED)?.unwrap_or(b.hard);
    if !b.is_ordered() {
        let kind =
            ConfigErrorKind::BudgetOrder { first_turn: b.first_turn, dynamic: b.dynamic, hard: b.hard };
        return Err(f.src.error("budget", kind));
    }
    Ok(b)
}

fn server(f: &Fields<'_, '_>, name: &str) -> Result<ServerConfig, ConfigError> {
    let keys: Vec<&'static str> =
        ["command", "url", "catalog"].into_iter().filter(|k| f.table.contains_key(*k)).collect();
    let transport = match keys.as_slice() {
        [] => {
            let expected = "`command` (a stdio child process), `url` (streamable HTTP) \
                            or `catalog` (a static catalog file)";
            return Err(f
                .src
                .error(&f.path, ConfigErrorKind::NoTransport { server: name.to_owned(), expected }));
        }
        ["command"] => {
            f.only_with(HTTP_ONLY, "url")?;
            let command = f.expanded("command")?.unwrap_or_default();
            if command.trim().is_empty() {
                let kind = ConfigErrorKind::Empty { expected: "a program to run, like \"npx\"" };
                return Err(f.src.error(&f.key("command"), kind));
            }
            Transport::Stdio {
                command,
                args: f.expanded_list("args")?.unwrap_or_default(),
                env: f.expanded_map("env")?.unwrap_or_default(),
                cwd: f.string("cwd", "a folder path")?.map(|p| f.src.path(p)),
            }
        }
        ["url"] => {
            f.only_with(STDIO_ONLY, "command")?;
            let url = f.expanded("url")?.unwrap_or_default();
            Transport::Http {
                url: f.src.url(&f.key("url"), url)?,
                headers: f.expanded_map("headers")?.unwrap_or_default(),
            }
        }
        ["catalog"] => {
            f.only_with(STDIO_ONLY, "command")?;
            f.only_with(HTTP_ONLY, "url")?;
            let path = f.string("catalog", "a catalog file path")?.unwrap_or_default();
            if path.is_empty() {
                let kind = ConfigErrorKind::Empty { expected: "a catalog file path, like \"tools.jsonl\"" };
                return Err(f.src.error(&f.key("catalog"), kind));
            }
            Transport::Catalog { path: f.src.path(path) }
        }
        _ => {
            return Err(f
                .src
                .error(&f.path, ConfigErrorKind::TransportConflict { server: name.to_owned(), keys }));
        }
    };
    let mut s = ServerConfig::new(transport);
    if let Some(m) = f.choice("mode", &["auto", "allowlist", "all"])? {
        s.mode = match m {
            "allowlist" => ServerMode::Allowlist,
            "all" => ServerMode::All,
            _ => ServerMode::Auto,
        };
    }
    match f.patterns("allowed")? {
        Some(allowed) => s.allowed = allowed,
        // An allowlist keeps only what it lists (docs/policy.md); the default `*` would keep all.
        None if s.mode == ServerMode::Allowlist => {
            return Err(f.src.error(&f.key("mode"), ConfigErrorKind::AllowlistWithoutAllowed));
        }
        None => {}
    }
    s.denied = f.patterns("denied")?.unwrap_or_default();
    s.pinned = f.patterns("pinned")?.unwrap_or_default();
    s.always_load = f.patterns("always_load")?.unwrap_or_default();
    if let Some(n) = f.count("max_active", 1, "a number of tools from 1 to 96")? {
        if n > MAX_ACTIVE_CAP {
            let kind = ConfigErrorKind::MaxActiveAboveCap { value: n, cap: MAX_ACTIVE_CAP };
            return Err(f.src.error(&f.key("max_active"), kind));
        }
        s.max_active = n;
    }
    if let Some(e) = f.choice("side_effects", &["allow", "read_only"])? {
        s.side_effects = if e == "allow" { SideEffects::Allow } else { SideEffects::ReadOnly };
    }
    s.read_only = f.patterns("read_only")?.unwrap_or_default();
    if let Some(v) = f.get("enabled") {
        s.enabled = v.as_bool().ok_or_else(|| f.wrong("enabled", "true or false", v))?;
    }
    s.call_timeout = f.seconds("call_timeout_secs")?;
    if let Some(v) = f.get("trust_always_load") {
        s.trust_always_load = v.as_bool().ok_or_else(|| f.wrong("trust_always_load", "true or false", v))?;
    }
    if let Some(p) = f.choice("protocol", &["auto", "2025-11-25"])? {
        s.protocol = if p == "auto" { UpstreamProtocol::Auto } else { UpstreamProtocol::Legacy };
    }
    if let Some(t) = f.table("oauth", "a table ([servers.NAME.oauth])")? {
        s.oauth = Some(server_oauth(&Fields::new(f.src, t, f.key("oauth"), SERVER_OAUTH_KEYS)?)?);
    }
    if let Some(t) = f.choice("trust", &["auto", "pin"])? {
        s.trust = if t == "pin" { Trust::Pin } else { Trust::Auto };
    }
    if let Some(v) = f.get("quarantine") {
        s.quarantine = v.as_bool().ok_or_else(|| f.wrong("quarantine", "true or false", v))?;
        if s.quarantine && s.trust != Trust::Pin {
            let kind = ConfigErrorKind::OutOfRange {
                value: "true".into(),
                expected: "false unless the server has `trust = \"pin\"` (only pinned servers quarantine)",
            };
            return Err(f.src.error(&f.key("quarantine"), kind));
        }
    }
    Ok(s)
}

fn table_value<'t>(
    src: &Source<'_>,
    key: &str,
    value: &'t Value,
    expected: &'static str,
) -> Result<&'t Table, ConfigError> {
    value
        .as_table()
        .ok_or_else(|| src.error(key, ConfigErrorKind::WrongType { expected, found: describe(value) }))
}

/// A value for an error message: its type, and the value itself when it is short.
fn describe(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() <= 40 => format!("a string ({s:?})"),
        Value::String(_) => "a string".to_owned(),
        Value::Integer(i) => format!("an integer ({i})"),
        Value::Float(x) => format!("a float ({x})"),
        Value::Boolean(b) => format!("a boolean ({b})"),
        Value::Datetime(d) => format!("a date-time ({d})"),
        Value::Array(_) => "an array".to_owned(),
        Value::Table(_) => "a table".to_owned(),
    }
}

/// One table of the file, at a dotted path, with typed getters whose errors name the key.
struct Fields<'s, 't> {
    src: &'s Source<'s>,
    table: &'t Table,
    path: String,
}

impl<'s, 't> Fields<'s, 't> {
    /// Checks that `table` has only `known` keys.
    fn new(
        src: &'s Source<'s>,
        table: &'t Table,
        path: String,
        known: &'static [&'static str],
    ) -> Result<Fields<'s, 't>, ConfigError> {
        if let Some(name) = table.keys().find(|k| !known.contains(&k.as_str())) {
            let kind =
                ConfigErrorKind::UnknownKey { name: name.clone(), suggestion: suggest(name, known), known };
            return Err(src.error(&child_key(&path, name), kind));
        }
        Ok(Fields { src, table, path })
    }

    fn key(&self, name: &str) -> String {
        child_key(&self.path, name)
    }

    fn get(&self, name: &str) -> Option<&'t Value> {
        self.table.get(name)
    }

    fn wrong(&self, name: &str, expected: &'static str, value: &Value) -> ConfigError {
        self.src.error(&self.key(name), ConfigErrorKind::WrongType { expected, found: describe(value) })
    }

    fn out_of_range(&self, name: &str, value: &Value, expected: &'static str) -> ConfigError {
        let value = match value {
            Value::Integer(i) => i.to_string(),
            Value::Float(x) => x.to_string(),
            other => describe(other),
        };
        self.src.error(&self.key(name), ConfigErrorKind::OutOfRange { value, expected })
    }

    /// Fails when any of `keys` is set: they only apply to the transport `needs`.
    fn only_with(&self, keys: &'static [&'static str], needs: &'static str) -> Result<(), ConfigError> {
        match keys.iter().find(|k| self.table.contains_key(**k)) {
            Some(name) => Err(self.src.error(&self.key(name), ConfigErrorKind::MisplacedKey { name, needs })),
            None => Ok(()),
        }
    }

    fn table(&self, name: &str, expected: &'static str) -> Result<Option<&'t Table>, ConfigError> {
        self.get(name).map(|v| table_value(self.src, &self.key(name), v, expected)).transpose()
    }

    fn string(&self, name: &str, expected: &'static str) -> Result<Option<&'t str>, ConfigError> {
        self.get(name).map(|v| v.as_str().ok_or_else(|| self.wrong(name, expected, v))).transpose()
    }

    /// A string with `${VAR}` expanded.
    fn expanded(&self, name: &str) -> Result<Option<String>, ConfigError> {
        self.string(name, "a string")?.map(|s| self.src.expand(&self.key(name), s)).transpose()
    }

    /// One of `choices`.
    fn choice(&self, name: &str, choices: &'static [&'static str]) -> Result<Option<&'t str>, ConfigError> {
        let Some(s) = self.string(name, "a string")? else {
            return Ok(None);
        };
        if !choices.contains(&s) {
            let kind = ConfigErrorKind::InvalidChoice { value: s.to_owned(), choices };
            return Err(self.src.error(&self.key(name), kind));
        }
        Ok(Some(s))
    }

    /// An integer of at least `min`.
    fn count(&self, name: &str, min: usize, expected: &'static str) -> Result<Option<usize>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let Value::Integer(i) = v else {
            return Err(self.wrong(name, expected, v));
        };
        match usize::try_from(*i) {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(self.out_of_range(name, v, expected)),
        }
    }

    /// A whole number of seconds above 0.
    fn seconds(&self, name: &str) -> Result<Option<Duration>, ConfigError> {
        let expected = "a whole number of seconds above 0";
        Ok(self.count(name, 1, expected)?.map(|n| Duration::from_secs(n as u64)))
    }

    fn array(
        &self,
        name: &str,
        expected: &'static str,
    ) -> Result<Option<Vec<(String, &'t str)>>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let items = v.as_array().ok_or_else(|| self.wrong(name, expected, v))?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = format!("{}[{i}]", self.key(name));
            let s = item.as_str().ok_or_else(|| {
                self.src
                    .error(&key, ConfigErrorKind::WrongType { expected: "a string", found: describe(item) })
            })?;
            out.push((key, s));
        }
        Ok(Some(out))
    }

    /// An array of strings with `${VAR}` expanded.
    fn expanded_list(&self, name: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = self.array(name, "an array of strings")? else {
            return Ok(None);
        };
        items.into_iter().map(|(key, s)| self.src.expand(&key, s)).collect::<Result<_, _>>().map(Some)
    }

    /// An array of glob patterns.
    fn patterns(&self, name: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = self.array(name, "an array of glob patterns, like [\"list_*\"]")? else {
            return Ok(None);
        };
        items.into_iter().map(|(key, s)| self.src.pattern(&key, s)).collect::<Result<_, _>>().map(Some)
    }

    /// A table of strings with `${VAR}` expanded in the values.
    fn expanded_map(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, ConfigError> {
        let Some(t) = self.table(name, "a table of strings, like { NAME = \"value\" }")? else {
            return Ok(None);
        };
        let mut out = BTreeMap::new();
        for (k, v) in t {
            let key = child_key(&self.key(name), k);
            let s = v.as_str().ok_or_else(|| {
                self.src.error(&key, ConfigErrorKind::WrongType { expected: "a string", found: describe(v) })
            })?;
            out.insert(k.clone(), self.src.expand(&key, s)?);
        }
        Ok(Some(out))
    }
}
