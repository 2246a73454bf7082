//! Reading `toolgate.toml`: strict, by hand from a `toml::Table`, every key checked against the
//! library's keys and the host's together.

use toml::{Table, Value};

use super::error::line_column;
use super::fields::{describe, table_value};
use super::{
    BudgetConfig, Config, ConfigError, ConfigErrorKind, Exposure, Fields, Host, MAX_ACTIVE_CAP, PolicyConfig,
    ProfileConfig, SearchConfig, ServerConfig, ServerMode, SideEffects, Source, child_key,
};
use crate::defer::{DeferConfig, DeferMode};
use crate::search::{IndexCache, Strategy};

/// Every key of the library, as dotted paths with `NAME` for a server's or profile's name, in
/// the order of the tables.
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
    ] {
        keys.extend(names.iter().map(|k| format!("{table}.{k}")));
    }
    keys
}

const TOP_KEYS: &[&str] = &["gateway", "budget", "search", "models", "policy", "servers", "profiles"];
const GATEWAY_KEYS: &[&str] = &["exposure", "mode", "auto_threshold", "context_window"];
const BUDGET_KEYS: &[&str] = &["first_turn", "dynamic", "hard"];
const SEARCH_KEYS: &[&str] = &["strategy", "model", "index_cache"];
const POLICY_KEYS: &[&str] = &["deny"];
const SERVER_KEYS: &[&str] = &[
    "enabled",
    "mode",
    "allowed",
    "denied",
    "pinned",
    "always_load",
    "max_active",
    "side_effects",
    "read_only",
    "trust_always_load",
];
const PROFILE_KEYS: &[&str] = &["tools", "disallowed_tools"];

/// The library's keys of a table followed by the host's.
fn both(library: &[&'static str], host: &[&'static str]) -> Vec<&'static str> {
    library.iter().chain(host).copied().collect()
}

/// Reads `toolgate.toml` text.
pub(super) fn parse<H: Host>(src: &Source<'_>, text: &str) -> Result<Config<H>, ConfigError> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
        let message = e.message().trim_end().trim_end_matches('.').to_owned();
        src.error("", ConfigErrorKind::Toml { line, column, message })
    })?;
    let top = Fields::new(src, &table, String::new(), &both(TOP_KEYS, H::TABLES))?;
    let mut config = Config::<H>::default();
    if let Some(g) = top.child("gateway", "a table ([gateway])", &both(GATEWAY_KEYS, H::GATEWAY_KEYS))? {
        (config.exposure, config.defer) = gateway(&g)?;
        config.host.gateway(&g)?;
    }
    if let Some(b) = top.child("budget", "a table ([budget])", BUDGET_KEYS)? {
        config.budget = budget(&b)?;
    }
    if let Some(s) = top.child("search", "a table ([search])", SEARCH_KEYS)? {
        config.search = search(&s)?;
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
    if let Some(p) = top.child("policy", "a table ([policy])", POLICY_KEYS)? {
        config.policy = PolicyConfig { deny: p.patterns("deny")?.unwrap_or_default() };
    }
    if let Some(t) = top.table("servers", "a table of servers ([servers.NAME])")? {
        let known = both(SERVER_KEYS, H::SERVER_KEYS);
        for (name, value) in t {
            let key = child_key("servers", name);
            src.server_name(&key, name)?;
            let t = table_value(src, &key, value, "a table ([servers.NAME])")?;
            let fields = Fields::new(src, t, key, &known)?;
            let host = H::server(&fields, name)?;
            config.servers.insert(name.clone(), server(&fields, host)?);
        }
    }
    for (name, fields) in top.children(
        "profiles",
        "a table of profiles ([profiles.NAME])",
        "a table ([profiles.NAME])",
        &both(PROFILE_KEYS, H::PROFILE_KEYS),
    )? {
        if name.trim().is_empty() {
            return Err(src.error(fields.path(), ConfigErrorKind::EmptyName { what: "profile" }));
        }
        let defaults = ProfileConfig::default();
        let profile = ProfileConfig {
            tools: fields.patterns("tools")?.unwrap_or(defaults.tools),
            disallowed_tools: fields.patterns("disallowed_tools")?.unwrap_or(defaults.disallowed_tools),
        };
        config.profiles.insert(name.clone(), profile);
        config.host.profile(&fields, name)?;
    }
    config.host.tables(&top, &config.profiles, &config.servers)?;
    Ok(config)
}

/// The library's keys of `[gateway]`: exposure and deferral.
fn gateway(f: &Fields<'_, '_>) -> Result<(Option<Exposure>, DeferConfig), ConfigError> {
    let mut exposure = None;
    let mut defer = Config::<super::NoHost>::default().defer;
    if let Some(e) = f.choice("exposure", &["auto", "native", "bridge"])? {
        exposure = match e {
            "native" => Some(Exposure::Native),
            "bridge" => Some(Exposure::Bridge),
            _ => None,
        };
    }
    if let Some(m) = f.choice("mode", &["on", "off", "auto"])? {
        defer.mode = match m {
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
        defer.auto_threshold = x;
    }
    if let Some(n) = f.count("context_window", 1, "a number of tokens above 0, like 200000")? {
        defer.context_window = n;
    }
    Ok((exposure, defer))
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
    let model = f.string("model", "a model directory path")?.map(|p| f.src().path(p));
    let index_cache = match f.get("index_cache") {
        None => IndexCache::Auto,
        Some(Value::Boolean(false)) => IndexCache::Off,
        Some(v) => {
            let dir = v.as_str().ok_or_else(|| f.wrong("index_cache", "a directory path, or false", v))?;
            IndexCache::Dir(f.src().path(dir))
        }
    };
    let named = f.choice("strategy", STRATEGY_NAMES)?;
    let fail = |problem| {
        Err(f.src().error(
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
        return Err(f.src().error("budget", kind));
    }
    Ok(b)
}

/// The library's keys of one `[servers.NAME]`: the rules of its tools.
fn server<S>(f: &Fields<'_, '_>, host: S) -> Result<ServerConfig<S>, ConfigError> {
    let mut s = ServerConfig::new(host);
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
            return Err(f.src().error(&f.key("mode"), ConfigErrorKind::AllowlistWithoutAllowed));
        }
        None => {}
    }
    s.denied = f.patterns("denied")?.unwrap_or_default();
    s.pinned = f.patterns("pinned")?.unwrap_or_default();
    s.always_load = f.patterns("always_load")?.unwrap_or_default();
    if let Some(n) = f.count("max_active", 1, "a number of tools from 1 to 96")? {
        if n > MAX_ACTIVE_CAP {
            let kind = ConfigErrorKind::MaxActiveAboveCap { value: n, cap: MAX_ACTIVE_CAP };
            return Err(f.src().error(&f.key("max_active"), kind));
        }
        s.max_active = n;
    }
    if let Some(e) = f.choice("side_effects", &["allow", "read_only"])? {
        s.side_effects = if e == "allow" { SideEffects::Allow } else { SideEffects::ReadOnly };
    }
    s.read_only = f.patterns("read_only")?.unwrap_or_default();
    if let Some(enabled) = f.bool("enabled")? {
        s.enabled = enabled;
    }
    if let Some(trust) = f.bool("trust_always_load")? {
        s.trust_always_load = trust;
    }
    Ok(s)
}
