//! Reading catalog files: JSONL (one tool a line) and `tools/list` maps.
//!
//! A JSONL line holds `server`, `name`, `description`, `input_schema`, `annotations` (the format
//! of `bench/README.md`), and may add `_meta` (MCP; `"anthropic/alwaysLoad": true` makes the
//! tool core), `search_hint`, `always_load`, `should_defer`, `origin` (`"mcp"` or `"builtin"`),
//! and the MCP fields `title`, `output_schema` / `outputSchema` and `icons`, which are accepted
//! and not used. Any other key is an error, so that a typo never goes unnoticed.
//!
//! A `tools/list` map is one JSON object: server id → the `tools/list` result of that server
//! (`{"tools": [...]}`, or the bare array). Tools there follow MCP (`inputSchema`) and unknown
//! keys are tolerated, since the protocol grows.

use std::fmt;
use std::io::{BufRead, Read};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{InputSchema, Origin, ToolSpec};

/// Where in a catalog source a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// The file as a whole.
    File,
    /// A line of a JSONL file (1-based).
    Line(usize),
    /// A place in a JSON document, as a path like `github.tools[3].name`.
    Path(String),
    /// The n-th tool (1-based) added to a builder in code.
    Tool(usize),
}

/// What was wrong with a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogErrorKind {
    /// The file could not be read.
    Io(String),
    /// Not valid JSON.
    Json(String),
    /// A line or entry is not a JSON object.
    NotAnObject,
    /// A required key is missing.
    MissingKey(&'static str),
    /// A key holds a value of the wrong type.
    WrongType {
        /// The key.
        key: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// A key that the format does not have (a typo, most likely).
    UnknownKey(String),
    /// The tool name is empty.
    EmptyName,
    /// The server id is empty.
    EmptyServer,
    /// Two tools share server and name.
    DuplicateName(String),
    /// The file holds no tool at all.
    NoTools,
}

/// A catalog that could not be loaded; names the source, the place and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// The file (or other source label) the problem is in.
    pub source_label: String,
    /// Where in the source.
    pub location: Location,
    /// What was wrong.
    pub kind: CatalogErrorKind,
}

impl CatalogError {
    pub(crate) fn at_tool(
        label: Option<&(Arc<str>, Location)>,
        index: usize,
        kind: CatalogErrorKind,
    ) -> CatalogError {
        match label {
            Some((source_label, location)) => {
                CatalogError { source_label: source_label.to_string(), location: location.clone(), kind }
            }
            None => CatalogError { source_label: String::new(), location: Location::Tool(index + 1), kind },
        }
    }
}

impl fmt::Display for CatalogErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogErrorKind::Io(e) => write!(f, "cannot read: {e}"),
            CatalogErrorKind::Json(e) => write!(f, "invalid JSON: {e}"),
            CatalogErrorKind::NotAnObject => f.write_str("expected a JSON object"),
            CatalogErrorKind::MissingKey(k) => write!(f, "missing key `{k}`"),
            CatalogErrorKind::WrongType { key, expected } => {
                write!(f, "key `{key}` must be {expected}")
            }
            CatalogErrorKind::UnknownKey(k) => {
                write!(f, "unknown key `{k}` (expected server, name, description, input_schema, annotations)")
            }
            CatalogErrorKind::EmptyName => f.write_str("tool name is empty"),
            CatalogErrorKind::EmptyServer => f.write_str("server id is empty"),
            CatalogErrorKind::DuplicateName(n) => write!(f, "duplicate qualified name {n}"),
            CatalogErrorKind::NoTools => f.write_str("no tools in catalog"),
        }
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Location::File => write!(f, "{}: {}", self.source_label, self.kind),
            Location::Line(n) => write!(f, "{}:{n}: {}", self.source_label, self.kind),
            Location::Path(p) => write!(f, "{}: at {p}: {}", self.source_label, self.kind),
            Location::Tool(n) => write!(f, "tool {n}: {}", self.kind),
        }
    }
}

impl std::error::Error for CatalogError {}

/// Tools parsed from one source, each with where it came from.
pub(crate) type Parsed = Vec<(ToolSpec, Location)>;

/// Parses a catalog text, JSONL or a `tools/list` map (told apart by content).
pub(crate) fn parse(label: &str, text: &str) -> Result<Parsed, CatalogError> {
    let err = |location, kind| CatalogError { source_label: label.to_owned(), location, kind };
    let tools = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) if !looks_like_line(&map) => {
            parse_map(&map).map_err(|(p, k)| err(Location::Path(p), k))?
        }
        _ => parse_jsonl(text).map_err(|(n, k)| err(Location::Line(n), k))?,
    };
    if tools.is_empty() {
        return Err(err(Location::File, CatalogErrorKind::NoTools));
    }
    Ok(tools)
}

/// Whether a whole-file object is one JSONL line rather than a `tools/list` map (whose values
/// are all objects or arrays).
fn looks_like_line(map: &Map<String, Value>) -> bool {
    map.values().any(|v| !v.is_object() && !v.is_array())
}

/// Reads a catalog file as [`parse`] reads its text, a JSONL file a line at a time (a large
/// catalog's text is never held whole); the format is told apart by the first line that is not
/// blank, as [`parse`] would tell it.
pub(crate) fn parse_file(label: &str, file: std::fs::File) -> Result<Parsed, CatalogError> {
    let err = |location, kind| CatalogError { source_label: label.to_owned(), location, kind };
    let io = |e: std::io::Error| err(Location::File, CatalogErrorKind::Io(e.to_string()));
    let mut reader = std::io::BufReader::new(file);
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            return Err(err(Location::File, CatalogErrorKind::NoTools));
        }
        n += 1;
        if !line.trim().is_empty() {
            break;
        }
    }
    let is_line =
        matches!(serde_json::from_str::<Value>(&line), Ok(Value::Object(map)) if looks_like_line(&map));
    if !is_line {
        // A `tools/list` map (or not JSON at all): read whole, as before.
        let mut text = "\n".repeat(n - 1);
        text.push_str(&line);
        reader.read_to_string(&mut text).map_err(io)?;
        return parse(label, &text);
    }
    parse_lines(n, line, reader).map_err(|e| match e {
        LinesError::Io(e) => io(e),
        LinesError::Line(n, kind) => err(Location::Line(n), kind),
    })
}

/// Lines read at a time and parsed by one thread ([`parse_lines`]).
const BATCH_LINES: usize = 512;

/// Why [`parse_lines`] stopped.
enum LinesError {
    Io(std::io::Error),
    Line(usize, CatalogErrorKind),
}

/// The tools of a JSONL catalog from line `n` (`first`, already read) on. Batches of
/// [`BATCH_LINES`] lines are parsed on every core while the next are read, and put together in
/// the file's order; the error of the first bad line wins, as when read one line at a time.
/// At most two batches per core are held at once, so a large catalog's text is never held
/// whole (parsing was a fifth of a 100,000-tool gateway's start, on one core).
fn parse_lines(n: usize, first: String, mut reader: impl std::io::BufRead) -> Result<Parsed, LinesError> {
    use std::sync::mpsc;
    let workers = std::thread::available_parallelism().map_or(1, |t| t.get()).min(8);
    type Batch = (usize, Vec<(usize, String)>);
    type Done = (usize, Result<Parsed, (usize, CatalogErrorKind)>);
    let parse_batch = |lines: Vec<(usize, String)>| -> Result<Parsed, (usize, CatalogErrorKind)> {
        let mut out = Vec::with_capacity(lines.len());
        for (n, line) in &lines {
            // What `str::lines` strips: the line feed, and a carriage return before it.
            let text = line.strip_suffix('\n').map_or(line.as_str(), |l| l.strip_suffix('\r').unwrap_or(l));
            out.extend(jsonl_line(*n, text)?);
        }
        Ok(out)
    };
    let (to_workers, batches) = mpsc::sync_channel::<Batch>(workers * 2);
    let batches = std::sync::Mutex::new(batches);
    let (to_reader, done) = mpsc::channel::<Done>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (batches, to_reader, parse_batch) = (&batches, to_reader.clone(), &parse_batch);
            scope.spawn(move || {
                loop {
                    let next = batches.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((k, lines)) = next else { return };
                    if to_reader.send((k, parse_batch(lines))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(to_reader);
        // Read and hand out every batch, then put the parsed ones in order.
        let mut sent = 0;
        let mut batch = vec![(n, first)];
        let mut n = n;
        let read = loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Err(e) => break Err(LinesError::Io(e)),
                Ok(0) => break Ok(()),
                Ok(_) => {
                    n += 1;
                    batch.push((n, line));
                }
            }
            if batch.len() == BATCH_LINES {
                if to_workers.send((sent, std::mem::take(&mut batch))).is_err() {
                    break Ok(());
                }
                sent += 1;
            }
        };
        if read.is_ok() && !batch.is_empty() && to_workers.send((sent, batch)).is_ok() {
            sent += 1;
        }
        drop(to_workers);
        read?;
        let mut parsed: Vec<Option<Result<Parsed, (usize, CatalogErrorKind)>>> =
            (0..sent).map(|_| None).collect();
        for (k, result) in done {
            parsed[k] = Some(result);
        }
        let tools = parsed.iter().flatten().map(|r| r.as_ref().map_or(0, Vec::len)).sum();
        let mut out = Vec::with_capacity(tools);
        for result in parsed {
            let batch =
                result.expect("every batch sent is parsed").map_err(|(n, k)| LinesError::Line(n, k))?;
            out.extend(batch);
        }
        Ok(out)
    })
}

fn parse_jsonl(text: &str) -> Result<Parsed, (usize, CatalogErrorKind)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(tool) = jsonl_line(i + 1, line)? {
            out.push(tool);
        }
    }
    Ok(out)
}

/// Line `n` of a JSONL catalog: a tool, or nothing when the line is blank.
fn jsonl_line(n: usize, line: &str) -> Result<Option<(ToolSpec, Location)>, (usize, CatalogErrorKind)> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_str(line).map_err(|e| (n, CatalogErrorKind::Json(json_message(&e))))?;
    let Value::Object(map) = value else {
        return Err((n, CatalogErrorKind::NotAnObject));
    };
    Ok(Some((line_tool(&map).map_err(|k| (n, k))?, Location::Line(n))))
}

/// serde_json's message without its own "at line 1 column N" (the line is ours to name).
fn json_message(e: &serde_json::Error) -> String {
    format!("{} at column {}", strip_position(&e.to_string()), e.column())
}

fn strip_position(msg: &str) -> &str {
    msg.find(" at line ").map_or(msg, |i| &msg[..i])
}

const LINE_KEYS: &[&str] = &[
    "server",
    "name",
    "description",
    "input_schema",
    "annotations",
    "_meta",
    "search_hint",
    "always_load",
    "should_defer",
    "origin",
    "title",
    "output_schema",
    "outputSchema",
    "icons",
];

fn line_tool(map: &Map<String, Value>) -> Result<ToolSpec, CatalogErrorKind> {
    if let Some(k) = map.keys().find(|k| !LINE_KEYS.contains(&k.as_str())) {
        return Err(CatalogErrorKind::UnknownKey(k.clone()));
    }
    let server = req_str(map, "server")?;
    if server.trim().is_empty() {
        return Err(CatalogErrorKind::EmptyServer);
    }
    let mut spec = common_fields(map, server, "input_schema")?;
    if let Some(h) = opt_str(map, "search_hint")? {
        spec.search_hint = Some(h.to_owned());
    }
    spec.always_load |= opt_bool(map, "always_load")?;
    spec.should_defer = opt_bool(map, "should_defer")?;
    spec.origin = match map.get("origin") {
        None | Some(Value::Null) => Origin::Mcp,
        Some(Value::String(s)) if s == "mcp" => Origin::Mcp,
        Some(Value::String(s)) if s == "builtin" => Origin::Builtin,
        Some(_) => {
            return Err(CatalogErrorKind::WrongType {
                key: "origin".into(),
                expected: "\"mcp\" or \"builtin\"",
            });
        }
    };
    Ok(spec)
}

/// The fields shared by both formats: name, description, schema, annotations, `_meta`.
fn common_fields(
    map: &Map<String, Value>,
    server: &str,
    schema_key: &'static str,
) -> Result<ToolSpec, CatalogErrorKind> {
    let name = req_str(map, "name")?;
    if name.is_empty() {
        return Err(CatalogErrorKind::EmptyName);
    }
    let description = opt_str(map, "description")?.unwrap_or_default();
    let schema_value =
        map.get(schema_key).or_else(|| map.get("inputSchema")).or_else(|| map.get("input_schema"));
    let input_schema = match schema_value {
        None | Some(Value::Null) => InputSchema::empty_object(),
        Some(v @ Value::Object(_)) => InputSchema::from(v),
        Some(_) => return Err(wrong(schema_key, "an object")),
    };
    let annotations = match map.get("annotations") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => {
            m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect()
        }
        Some(_) => return Err(wrong("annotations", "an object")),
    };
    let always_load = match map.get("_meta") {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => m.get("anthropic/alwaysLoad") == Some(&Value::Bool(true)),
        Some(_) => return Err(wrong("_meta", "an object")),
    };
    Ok(ToolSpec {
        server: server.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema,
        annotations,
        origin: Origin::Mcp,
        always_load,
        should_defer: false,
        search_hint: None,
    })
}

fn wrong(key: &str, expected: &'static str) -> CatalogErrorKind {
    CatalogErrorKind::WrongType { key: key.to_owned(), expected }
}

fn req_str<'a>(map: &'a Map<String, Value>, key: &'static str) -> Result<&'a str, CatalogErrorKind> {
    match map.get(key) {
        None | Some(Value::Null) => Err(CatalogErrorKind::MissingKey(key)),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(wrong(key, "a string")),
    }
}

fn opt_str<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, CatalogErrorKind> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(wrong(key, "a string")),
    }
}

fn opt_bool(map: &Map<String, Value>, key: &str) -> Result<bool, CatalogErrorKind> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(wrong(key, "true or false")),
    }
}

fn parse_map(map: &Map<String, Value>) -> Result<Parsed, (String, CatalogErrorKind)> {
    let mut out = Vec::new();
    for (server, result) in map {
        if server.trim().is_empty() {
            return Err((format!("{server:?}"), CatalogErrorKind::EmptyServer));
        }
        let (tools, path) = match result {
            Value::Array(a) => (a, server.clone()),
            Value::Object(o) => match o.get("tools") {
                Some(Value::Array(a)) => (a, format!("{server}.tools")),
                Some(_) => {
                    return Err((
                        format!("{server}.tools"),
                        CatalogErrorKind::WrongType { key: "tools".into(), expected: "an array" },
                    ));
                }
                None => return Err((server.clone(), CatalogErrorKind::MissingKey("tools"))),
            },
            _ => return Err((server.clone(), CatalogErrorKind::NotAnObject)),
        };
        for (i, tool) in tools.iter().enumerate() {
            let here = format!("{path}[{i}]");
            let Value::Object(t) = tool else {
                return Err((here, CatalogErrorKind::NotAnObject));
            };
            let spec = common_fields(t, server, "inputSchema").map_err(|k| (here.clone(), k))?;
            out.push((spec, Location::Path(here)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        parse("cat.jsonl", text).unwrap_err().to_string()
    }

    /// What `parse` makes of a text, and what `parse_file` makes of a file holding it, each
    /// as the tools' names and lines or the error.
    fn both_ways(text: &str) -> (String, String) {
        let show = |r: Result<Parsed, CatalogError>| match r {
            Ok(tools) => tools.iter().map(|(t, at)| format!("{}@{at:?} ", t.name)).collect(),
            Err(e) => e.to_string(),
        };
        let path = std::env::temp_dir().join(format!("toolgate-load-{}-{}", std::process::id(), text.len()));
        std::fs::write(&path, text).unwrap();
        let from_file = parse_file("cat.jsonl", std::fs::File::open(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        (show(parse("cat.jsonl", text)), show(from_file))
    }

    /// `n` lines of tools named by their number, every tenth blank, and the lines `bad`
    /// (1-based) not JSON.
    fn many(n: usize, bad: &[usize]) -> String {
        (1..=n)
            .map(|i| match i {
                _ if bad.contains(&i) => format!("{{\"server\": \"s\", \"name\": \"t{i}\"\n"),
                _ if i % 10 == 0 => "\n".to_owned(),
                _ => format!("{{\"server\": \"s\", \"name\": \"t{i}\"}}\n"),
            })
            .collect()
    }

    #[test]
    fn a_file_read_a_line_at_a_time_reads_as_its_whole_text() {
        let good = r#"{"server": "git", "name": "git_log", "description": "", "input_schema": {}, "annotations": {}}"#;
        let other = good.replace("git_log", "git_diff");
        let texts = [
            format!("{good}\n{other}\n"),
            format!("\n\n{good}\r\n\r\n{other}"),
            format!("{good}\n{{\"server\": \"git\", \"name\": \"x\"\n"),
            format!("\n{good}\n[1]\n"),
            r#"{"git": {"tools": [{"name": "log", "inputSchema": {}}]}}"#.to_owned(),
            "{\n  \"git\": {\"tools\": [{\"name\": \"log\"}]}\n}\n".to_owned(),
            "\n\n".to_owned(),
            String::new(),
            "not json\n".to_owned(),
            // Longer than a batch of lines: read in several, in order, with blank lines among
            // them; and the first of two bad lines in different batches is the one named.
            many(1300, &[]),
            many(1300, &[700, 1200]),
            many(1300, &[1200, 1299]),
        ];
        for text in texts {
            let (whole, by_lines) = both_ways(&text);
            assert_eq!(whole, by_lines, "{text:?}");
        }
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let good = r#"{"server": "git", "name": "git_log", "description": "", "input_schema": {}, "annotations": {}}"#;
        assert_eq!(
            error(&format!("{good}\n\n{{\"server\": \"git\", \"name\": 3}}\n")),
            "cat.jsonl:3: key `name` must be a string"
        );
        assert_eq!(
            error(&format!("{good}\n{{\"server\": \"git\", \"name\": \"x\"\n")),
            "cat.jsonl:2: invalid JSON: EOF while parsing an object at column 29"
        );
        assert_eq!(error(&format!("{good}\n[1]\n")), "cat.jsonl:2: expected a JSON object");
        assert_eq!(error(r#"{"name": "x"}"#), "cat.jsonl:1: missing key `server`");
        assert_eq!(error(r#"{"git": {}}"#), "cat.jsonl: at git: missing key `tools`");
        assert_eq!(
            error(&format!("{good}\n{{\"server\": \"git\", \"name\": \"x\", \"descripton\": \"typo\"}}")),
            "cat.jsonl:2: unknown key `descripton` (expected server, name, description, input_schema, annotations)"
        );
        assert_eq!(error("\n\n"), "cat.jsonl: no tools in catalog");
    }

    #[test]
    fn tools_list_map_is_read() {
        let text = r#"{"memory": {"tools": [{"name": "read_graph", "inputSchema": {"type": "object"}, "_meta": {"anthropic/alwaysLoad": true}}]},
                      "time": [{"name": "get_time", "description": "now", "annotations": {"readOnlyHint": true, "title": null}}]}"#;
        let tools = parse("servers.json", text).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].0.server, "memory");
        assert!(tools[0].0.always_load);
        assert_eq!(tools[1].0.annotations.len(), 1);
        assert_eq!(tools[1].1, Location::Path("time[0]".into()));
        assert_eq!(
            parse("servers.json", r#"{"time": {"tools": [{"description": "x"}]}}"#).unwrap_err().to_string(),
            "servers.json: at time.tools[0]: missing key `name`"
        );
    }
}
