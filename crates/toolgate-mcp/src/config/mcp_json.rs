//! Reading the `mcpServers` JSON of Claude Desktop, Claude Code and Cursor (and VS Code's
//! `servers`) as is.
//!
//! Each entry becomes a server with the default policy. The keys read are `command`, `args`,
//! `env`, `cwd`, `type`, `url`, `headers` and `disabled`; a wrong type there is an error. Any
//! other key (`autoApprove`, `alwaysAllow`, `timeout`, `description`, `transportType`,
//! `envFile`, ...) and any other top-level key is ignored: clients add keys of their own, and
//! reading their files unchanged matters more here than strictness. A `null` counts as absent.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{
    Config, ConfigError, ConfigErrorKind, ServerConfig, Source, Transport, child_key, server as reached_by,
};

/// Reads `mcpServers` JSON text.
pub(super) fn parse(src: &Source<'_>, text: &str) -> Result<Config, ConfigError> {
    let value: Value = serde_json::from_str(&strip_jsonc(text)).map_err(|e| {
        let message = e.to_string();
        let message = message.find(" at line ").map_or(message.as_str(), |i| &message[..i]).to_owned();
        src.error("", ConfigErrorKind::Json { line: e.line(), column: e.column(), message })
    })?;
    let Value::Object(top) = value else {
        let expected = "a JSON object with `mcpServers`";
        return Err(src.error("", ConfigErrorKind::WrongType { expected, found: describe(&value) }));
    };
    // Claude Desktop, Claude Code and Cursor write `mcpServers`; VS Code writes `servers`.
    let (root, servers) = match (top.get("mcpServers"), top.get("servers")) {
        (Some(v), _) => ("mcpServers", v),
        (None, Some(v)) => ("servers", v),
        (None, None) => {
            return Err(src.error("", ConfigErrorKind::NoServers { keys: top.keys().cloned().collect() }));
        }
    };
    let Value::Object(servers) = servers else {
        let kind = ConfigErrorKind::WrongType {
            expected: "an object mapping server names to entries",
            found: describe(servers),
        };
        return Err(src.error(root, kind));
    };
    let mut config = Config::default();
    for (name, entry) in servers {
        let key = child_key(root, name);
        src.server_name(&key, name)?;
        let Value::Object(entry) = entry else {
            let kind = ConfigErrorKind::WrongType { expected: "an object", found: describe(entry) };
            return Err(src.error(&key, kind));
        };
        config.servers.insert(name.clone(), server(&Entry { src, map: entry, path: key }, name)?);
    }
    Ok(config)
}

const TYPES: &[&str] = &["stdio", "http", "streamable-http", "sse"];

fn server(e: &Entry<'_, '_>, name: &str) -> Result<ServerConfig, ConfigError> {
    let declared = e.string("type")?;
    if let Some(t) = declared {
        if !TYPES.contains(&t) {
            let kind = ConfigErrorKind::InvalidChoice { value: t.to_owned(), choices: TYPES };
            return Err(e.src.error(&e.key("type"), kind));
        }
        if t == "sse" {
            return Err(e
                .src
                .error(&e.key("type"), ConfigErrorKind::SseNotSupported { server: name.to_owned() }));
        }
    }
    let command = e.string("command")?;
    let url = e.string("url")?;
    let transport = match (command, url) {
        (Some(_), Some(_)) => {
            let kind =
                ConfigErrorKind::TransportConflict { server: name.to_owned(), keys: vec!["command", "url"] };
            return Err(e.src.error(&e.path, kind));
        }
        (None, None) => {
            if let Some(t) = declared {
                let needs = if t == "stdio" { "command" } else { "url" };
                let kind = ConfigErrorKind::TypeWithoutKey { declared: t.to_owned(), needs };
                return Err(e.src.error(&e.key("type"), kind));
            }
            let expected = "`command` (a stdio child process) or `url` (streamable HTTP)";
            return Err(e
                .src
                .error(&e.path, ConfigErrorKind::NoTransport { server: name.to_owned(), expected }));
        }
        (Some(command), None) => {
            if let Some(t) = declared.filter(|t| *t != "stdio") {
                let kind = ConfigErrorKind::TypeWithoutKey { declared: t.to_owned(), needs: "url" };
                return Err(e.src.error(&e.key("type"), kind));
            }
            let command = e.src.expand(&e.key("command"), command)?;
            if command.trim().is_empty() {
                let kind = ConfigErrorKind::Empty { expected: "a program to run, like \"npx\"" };
                return Err(e.src.error(&e.key("command"), kind));
            }
            Transport::Stdio {
                command,
                args: e.args()?,
                env: e.map("env")?,
                cwd: e.string("cwd")?.filter(|c| !c.is_empty()).map(|c| e.src.path(c)),
            }
        }
        (None, Some(url)) => {
            if declared == Some("stdio") {
                let kind = ConfigErrorKind::TypeWithoutKey { declared: "stdio".to_owned(), needs: "command" };
                return Err(e.src.error(&e.key("type"), kind));
            }
            let url = e.src.expand(&e.key("url"), url)?;
            Transport::Http { url: e.src.url(&e.key("url"), url)?, headers: e.map("headers")? }
        }
    };
    let mut server = reached_by(transport);
    server.enabled = !e.bool("disabled")?;
    Ok(server)
}

/// A value for an error message: its JSON type, and the value itself when it is short.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::String(s) if s.chars().count() <= 40 => format!("a string ({s:?})"),
        Value::String(_) => "a string".to_owned(),
        Value::Number(n) => format!("a number ({n})"),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// One server entry at a dotted path, with typed getters whose errors name the key.
struct Entry<'s, 'm> {
    src: &'s Source<'s>,
    map: &'m Map<String, Value>,
    path: String,
}

impl<'m> Entry<'_, 'm> {
    fn key(&self, name: &str) -> String {
        child_key(&self.path, name)
    }

    fn get(&self, name: &str) -> Option<&'m Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, expected: &'static str, value: &Value) -> ConfigError {
        self.src.error(key, ConfigErrorKind::WrongType { expected, found: describe(value) })
    }

    fn string(&self, name: &str) -> Result<Option<&'m str>, ConfigError> {
        self.get(name)
            .map(|v| v.as_str().ok_or_else(|| self.wrong(&self.key(name), "a string", v)))
            .transpose()
    }

    fn bool(&self, name: &str) -> Result<bool, ConfigError> {
        match self.get(name) {
            None => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| self.wrong(&self.key(name), "true or false", v)),
        }
    }

    /// `args`, each with `${VAR}` expanded.
    fn args(&self) -> Result<Vec<String>, ConfigError> {
        let Some(v) = self.get("args") else {
            return Ok(Vec::new());
        };
        let items = v.as_array().ok_or_else(|| self.wrong(&self.key("args"), "an array of strings", v))?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = format!("{}[{i}]", self.key("args"));
            let s = item.as_str().ok_or_else(|| self.wrong(&key, "a string", item))?;
            out.push(self.src.expand(&key, s)?);
        }
        Ok(out)
    }

    /// `env` or `headers`, with `${VAR}` expanded in the values. Numbers and booleans are
    /// taken as their text (`"PORT": 3000`), as a shell would see them.
    fn map(&self, name: &str) -> Result<BTreeMap<String, String>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(BTreeMap::new());
        };
        let map = v.as_object().ok_or_else(|| self.wrong(&self.key(name), "an object of strings", v))?;
        let mut out = BTreeMap::new();
        for (k, v) in map {
            let key = child_key(&self.key(name), k);
            let value = match v {
                Value::String(s) => self.src.expand(&key, s)?,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(self.wrong(&key, "a string", v)),
            };
            out.insert(k.clone(), value);
        }
        Ok(out)
    }
}

/// JSONC (VS Code's `mcp.json`) as JSON: comments and trailing commas become spaces, so lines
/// and columns of errors stay those of the file.
fn strip_jsonc(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let mut i = 0;
    // Where the last comma outside strings is, while only blanks and comments follow it.
    let mut comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    bytes[i] = b' ';
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
                for b in &mut bytes[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
                continue;
            }
            b',' => comma = Some(i),
            b'}' | b']' => {
                if let Some(c) = comma.take() {
                    bytes[c] = b' ';
                }
            }
            b if b.is_ascii_whitespace() => {}
            _ => comma = None,
        }
        i += 1;
    }
    // Whole characters were blanked (commas, and comments byte by byte), so this is still UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests;
