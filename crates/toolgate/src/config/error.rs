//! Configuration errors: the file, the dotted key and a typed problem that says what to do.

use std::fmt;

/// A configuration that could not be read. Displays as `{file}: {key}: {problem}`, or
/// `{file}:{line}:{column}: invalid TOML: ...` for a syntax error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or other source label) the problem is in.
    pub file: String,
    /// The dotted key of the problem, like `servers.github.max_active`; empty for the file as
    /// a whole.
    pub key: String,
    /// What was wrong.
    pub kind: ConfigErrorKind,
}

/// What was wrong with a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The file could not be read.
    Io(String),
    /// Not valid TOML.
    Toml {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column (in characters) of the problem.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// Not valid JSON.
    Json {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A key the table does not have (a typo, most likely).
    UnknownKey {
        /// The key as written.
        name: String,
        /// A known key that looks like it.
        suggestion: Option<&'static str>,
        /// The keys the table has: the library's, then those of the program reading the file
        /// ([`Host`](super::Host)).
        known: Vec<&'static str>,
    },
    /// Something this reader does not read at all.
    Unsupported {
        /// What, and who reads it.
        what: &'static str,
    },
    /// A value of the wrong type.
    WrongType {
        /// What the key holds.
        expected: &'static str,
        /// What was found, like `an integer (3)`.
        found: String,
    },
    /// A string that is none of the allowed words.
    InvalidChoice {
        /// The string.
        value: String,
        /// The allowed words.
        choices: &'static [&'static str],
    },
    /// A number outside its range.
    OutOfRange {
        /// The number as written.
        value: String,
        /// The range, in words.
        expected: &'static str,
    },
    /// A server's `max_active` above the cap.
    MaxActiveAboveCap {
        /// The value.
        value: usize,
        /// The cap, [`MAX_ACTIVE_CAP`](super::MAX_ACTIVE_CAP).
        cap: usize,
    },
    /// `mode = "allowlist"` without an `allowed` list: the allowlist would be everything.
    AllowlistWithoutAllowed,
    /// Budgets not in the order `1 <= first_turn <= dynamic <= hard`.
    BudgetOrder {
        /// `first_turn`.
        first_turn: usize,
        /// `dynamic`.
        dynamic: usize,
        /// `hard`.
        hard: usize,
    },
    /// An empty value where something is needed.
    Empty {
        /// What the key holds.
        expected: &'static str,
    },
    /// An empty server or profile name.
    EmptyName {
        /// `"server"` or `"profile"`.
        what: &'static str,
    },
    /// A server name with `__`, which separates server from tool in qualified names.
    DoubleUnderscore {
        /// The name.
        name: String,
    },
    /// A server with more than one of `command`, `url` and `catalog`.
    TransportConflict {
        /// The server.
        server: String,
        /// The transport keys it sets.
        keys: Vec<&'static str>,
    },
    /// A server with none of its format's transport keys.
    NoTransport {
        /// The server.
        server: String,
        /// The keys that would give it one, in words.
        expected: &'static str,
    },
    /// A key that only applies to another transport, like `headers` beside `command`.
    MisplacedKey {
        /// The key.
        name: &'static str,
        /// The transport key it needs.
        needs: &'static str,
    },
    /// A JSON `type` whose transport key is missing, like `"type": "http"` without `url`.
    TypeWithoutKey {
        /// The declared type.
        declared: String,
        /// The key that type needs.
        needs: &'static str,
    },
    /// A JSON `"type": "sse"`: the deprecated HTTP+SSE transport.
    SseNotSupported {
        /// The server.
        server: String,
    },
    /// A `url` that is not `http://` or `https://`.
    InvalidUrl {
        /// The URL.
        url: String,
    },
    /// `${VAR}` of a variable that is not set, without a default.
    UnsetVariable {
        /// The variable.
        var: String,
    },
    /// A glob pattern that is empty or holds a control character.
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        problem: PatternProblem,
    },
    /// A token's `profile` that names no `[profiles.NAME]`.
    UnknownProfile {
        /// The name as written.
        name: String,
        /// The profiles the configuration has.
        known: Vec<String>,
    },
    /// A `[search]` table whose strategy and model do not go together.
    SearchModel {
        /// What is wrong, and what to do.
        problem: &'static str,
    },
    /// A JSON file with neither `mcpServers` nor `servers` at the top.
    NoServers {
        /// The top-level keys it has.
        keys: Vec<String>,
    },
}

/// What is wrong with a glob pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternProblem {
    /// The pattern is empty.
    Empty,
    /// The pattern holds a control character (a tab, a newline, ...).
    ControlCharacter(char),
}

impl fmt::Display for ConfigErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigErrorKind::Io(e) => write!(f, "cannot read the file: {e}"),
            ConfigErrorKind::Toml { message, .. } => write!(f, "invalid TOML: {message}"),
            ConfigErrorKind::Json { message, .. } => write!(f, "invalid JSON: {message}"),
            ConfigErrorKind::UnknownKey { name, suggestion, known } => {
                write!(f, "unknown key `{name}`; ")?;
                if let Some(s) = suggestion {
                    write!(f, "did you mean `{s}`? ")?;
                }
                write!(f, "known keys here: {}", known.join(", "))
            }
            ConfigErrorKind::Unsupported { what } => write!(f, "this reader does not read {what}"),
            ConfigErrorKind::WrongType { expected, found } => write!(f, "expected {expected}, found {found}"),
            ConfigErrorKind::InvalidChoice { value, choices } => {
                write!(f, "invalid value {value:?}; expected {}", one_of(choices))
            }
            ConfigErrorKind::OutOfRange { value, expected } => {
                write!(f, "{value} is out of range; expected {expected}")
            }
            ConfigErrorKind::MaxActiveAboveCap { value, cap } => write!(
                f,
                "max_active {value} is above the cap of {cap} active tools per server; \
                 set it to at most {cap}"
            ),
            ConfigErrorKind::AllowlistWithoutAllowed => f.write_str(
                "mode = \"allowlist\" needs an `allowed` list of the tools to keep; \
                 add allowed = [\"...\"], or use mode = \"auto\" or \"all\"",
            ),
            ConfigErrorKind::BudgetOrder { first_turn, dynamic, hard } => {
                write!(
                    f,
                    "budgets out of order (first_turn = {first_turn}, dynamic = {dynamic}, hard = {hard}); \
                     they must satisfy 1 <= first_turn <= dynamic <= hard, so "
                )?;
                if *first_turn == 0 {
                    f.write_str("set first_turn to at least 1")
                } else if first_turn > dynamic {
                    write!(f, "raise dynamic to at least {first_turn} or lower first_turn")
                } else {
                    write!(f, "raise hard to at least {dynamic} or lower dynamic")
                }
            }
            ConfigErrorKind::Empty { expected } => write!(f, "empty value; expected {expected}"),
            ConfigErrorKind::EmptyName { what } => {
                write!(f, "the {what} name is empty; give the {what} a name")
            }
            ConfigErrorKind::DoubleUnderscore { name } => write!(
                f,
                "server name `{name}` contains `__`, which separates server from tool in qualified \
                 names (`server__tool`); rename it, e.g. to `{}`",
                single_underscores(name)
            ),
            ConfigErrorKind::TransportConflict { server, keys } => write!(
                f,
                "server `{server}` sets {}, but a server has exactly one transport; keep one of them",
                both(keys)
            ),
            ConfigErrorKind::NoTransport { server, expected } => {
                write!(f, "server `{server}` has no transport; set {expected}")
            }
            ConfigErrorKind::SearchModel { problem } => f.write_str(problem),
            ConfigErrorKind::UnknownProfile { name, known } => write!(
                f,
                "no [profiles.{name}] in this configuration (profiles: {}); a token serves a profile the \
                 configuration defines",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ),
            ConfigErrorKind::MisplacedKey { name, needs } => {
                write!(f, "`{name}` only applies to a server with `{needs}`; remove it or fix the transport")
            }
            ConfigErrorKind::TypeWithoutKey { declared, needs } => write!(
                f,
                "type {declared:?} needs `{needs}`, which the server does not set; \
                 set `{needs}` or fix `type`"
            ),
            ConfigErrorKind::SseNotSupported { server } => write!(
                f,
                "server `{server}` uses the SSE transport, which is not supported; use streamable HTTP \
                 (\"type\": \"http\" and the server's streamable HTTP endpoint, often ending in /mcp)"
            ),
            ConfigErrorKind::InvalidUrl { url } => write!(
                f,
                "{url:?} is not an HTTP URL; write http://... or https://..., e.g. http://127.0.0.1:9000/mcp"
            ),
            ConfigErrorKind::UnsetVariable { var } if var.starts_with("input:") => write!(
                f,
                "`${{{var}}}` asks VS Code to prompt for a value, which toolgate cannot do; put the value \
                 in an environment variable and write ${{NAME}}"
            ),
            ConfigErrorKind::UnsetVariable { var } => write!(
                f,
                "environment variable `{var}` is not set; \
                 set it, or write ${{{var}:-default}} to give a default"
            ),
            ConfigErrorKind::InvalidPattern { pattern, problem } => match problem {
                PatternProblem::Empty => {
                    f.write_str("empty pattern; write a glob such as \"*\" (everything) or \"list_*\"")
                }
                PatternProblem::ControlCharacter(c) => write!(
                    f,
                    "pattern {pattern:?} contains the control character U+{:04X}; use printable \
                     characters, with * and ? as wildcards",
                    u32::from(*c)
                ),
            },
            ConfigErrorKind::NoServers { keys } => {
                f.write_str(
                    "expected a top-level `mcpServers` object (Claude Desktop, Claude Code, Cursor) \
                     or `servers` object (VS Code)",
                )?;
                if keys.is_empty() {
                    f.write_str(", found an empty object")
                } else {
                    write!(f, ", found keys {}", keys.join(", "))
                }
            }
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ConfigErrorKind::Toml { line, column, .. } | ConfigErrorKind::Json { line, column, .. } => {
                write!(f, "{}:{line}:{column}: {}", self.file, self.kind)
            }
            _ if self.key.is_empty() => write!(f, "{}: {}", self.file, self.kind),
            _ => write!(f, "{}: {}: {}", self.file, self.key, self.kind),
        }
    }
}

impl std::error::Error for ConfigError {}

/// `"a" or "b"`, `"a", "b" or "c"`.
fn one_of(choices: &[&str]) -> String {
    let quoted: Vec<String> = choices.iter().map(|c| format!("{c:?}")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// `both `a` and `b``, `` `a`, `b` and `c` ``.
fn both(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.split_last() {
        Some((last, [one])) => format!("both {one} and {last}"),
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// `name` with every run of `_` made one, the way qualified names will show it.
fn single_underscores(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out
}

/// A known key that `name` was probably meant to be: the same but for case, `_` and `-`
/// (`maxActive` for `max_active`), or at most two edits away.
pub(super) fn suggest(name: &str, known: &[&'static str]) -> Option<&'static str> {
    let fold = |s: &str| -> String {
        s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
    };
    let folded = fold(name);
    if let Some(k) = known.iter().find(|k| fold(k) == folded) {
        return Some(k);
    }
    let limit = if name.chars().count() < 4 { 1 } else { 2 };
    known
        .iter()
        .map(|k| (edit_distance(&folded, &fold(k)), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// 1-based line and column (in characters) of a byte offset into `text`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_forgive_case_separators_and_small_typos() {
        const KNOWN: &[&str] = &["max_active", "always_load", "disallowed_tools", "url"];
        assert_eq!(suggest("maxActive", KNOWN), Some("max_active"));
        assert_eq!(suggest("max-active", KNOWN), Some("max_active"));
        assert_eq!(suggest("alwaysLoad", KNOWN), Some("always_load"));
        assert_eq!(suggest("max_actve", KNOWN), Some("max_active"));
        assert_eq!(suggest("disallowedTools", KNOWN), Some("disallowed_tools"));
        assert_eq!(suggest("uri", KNOWN), Some("url"));
        assert_eq!(suggest("timeout", KNOWN), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn line_and_column_count_characters() {
        let text = "a = 1\nb = \"é\" x\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, text.find('x').unwrap()), (2, 9));
        assert_eq!(line_column(text, text.len() + 5), (3, 1));
    }

    #[test]
    fn lists_read_as_english() {
        assert_eq!(one_of(&["native", "bridge"]), r#""native" or "bridge""#);
        assert_eq!(one_of(&["on", "off", "auto"]), r#""on", "off" or "auto""#);
        assert_eq!(both(&["command", "url"]), "both `command` and `url`");
        assert_eq!(both(&["command", "url", "catalog"]), "`command`, `url` and `catalog`");
        assert_eq!(single_underscores("my__big___srv"), "my_big_srv");
    }
}
