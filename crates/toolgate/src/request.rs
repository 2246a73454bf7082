//! request: here are the catalog, the deferral decision and a session, give me this turn's
//! tool list and how to announce the deferred names.
//!
//! The order of the tool list is what keeps a provider's prompt cache warm: core tools first
//! (sorted by qualified name, so an upstream listing its tools in another order changes
//! nothing), then `tool_search`, then the session's active tools in activation order. A new
//! activation only appends; the bytes before it stay the same.

use std::collections::BTreeSet;

use serde_json::json;

use crate::catalog::{Catalog, Tool};
use crate::config::Exposure;
use crate::defer::Deferral;

pub use crate::catalog::TOOL_SEARCH;

/// Default number of tools one `tool_search` call loads.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// Most tools one `tool_search` call may load.
pub const MAX_SEARCH_LIMIT: usize = 20;

/// The `tool_search` meta-tool as the model sees it when loaded tools join its tool list
/// (native exposure).
pub fn tool_search_tool() -> Tool {
    tool_search_tool_in(Exposure::Native)
}

/// The `tool_search` meta-tool as the model sees it under `exposure`: loaded tools are called
/// directly (native), or run with `call_tool` (bridge), which is also what a client that turns
/// MCP tools into code declarations (Codex's code mode) shows as the tool's doc comment.
pub fn tool_search_tool_in(exposure: Exposure) -> Tool {
    let then = match exposure {
        Exposure::Native => "Loaded tools are callable directly on your next step.",
        Exposure::Bridge => "Run a loaded tool on your next step with call_tool {\"name\", \"arguments\"}.",
    };
    Tool::meta(
        TOOL_SEARCH,
        &format!(
            "Load tools that are not in your tool list yet. The tools you can load are listed in \
             <available-deferred-tools>, by server (\"SERVER: TOOL, TOOL\"); a tool's name is SERVER__TOOL. \
             {then}\n{QUERY_FORMS}"
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Use \"select:<tool_name>\" for direct selection, or keywords to search."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SEARCH_LIMIT,
                    "default": DEFAULT_SEARCH_LIMIT,
                    "description": "How many tools to load at most."
                },
                "servers": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Only tools of these servers."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// The query forms `tool_search`'s description lists.
const QUERY_FORMS: &str = "Query forms:\n\
    - \"select:name_a,name_b\": load these tools by exact name (best when you know the names)\n\
    - keywords, in any language (\"send slack message\", \"截图 网页\"): search names, descriptions and parameters\n\
    - \"server__\": the tools of one server\n\
    - \"+term\": a term every result must match";

/// Most bytes of the announcement [`grouped_announcement`] writes, whatever the catalog
/// (about 3,500 tokens).
pub const ANNOUNCEMENT_BUDGET: usize = 12 * 1024;

/// The announcement of deferred names, grouped by server and bounded by `budget` bytes:
/// `SERVER: TOOL, TOOL` a line (the qualified name is `SERVER__TOOL`), servers and tools sorted.
/// When every name does not fit, the servers that come first keep their names and each other
/// server gets a line `SERVER: N tools, find them with tool_search`; when even those lines do
/// not fit, one last line counts the servers and tools left out. Byte-identical for the same
/// names, whatever their order.
pub fn grouped_announcement<'a>(names: impl IntoIterator<Item = &'a str>, budget: usize) -> String {
    grouped_block("<available-deferred-tools>\n", "</available-deferred-tools>", names, budget)
}

/// [`grouped_announcement`]'s lines between `open` and `close`, within `budget` bytes.
fn grouped_block<'a>(
    open: &str,
    close: &str,
    names: impl IntoIterator<Item = &'a str>,
    budget: usize,
) -> String {
    // Sorted as a set would hold them; a server's names are side by side (they share the
    // prefix `SERVER__`), so each group is a run of them, read only as far as the budget goes.
    let mut sorted: Vec<&str> = names.into_iter().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let split = |name: &'a str| name.split_once("__").unwrap_or(("", name));
    let mut groups = sorted.chunk_by(|a, b| split(a).0 == split(b).0);
    let full = |server: &str, names: &[&'a str]| {
        let tools: Vec<&str> = names.iter().map(|&n| split(n).1).collect();
        format!("{server}: {}\n", tools.join(", "))
    };
    let counted = |server: &str, n: usize| format!("{server}: {n} tools, find them with tool_search\n");
    // The longest tail line, kept free so that the block always ends within the budget.
    let tail_room = 120;
    let mut out = String::from(open);
    let mut listed = 0;
    let mut listing = true;
    while let Some(group) = groups.next() {
        let server = split(group[0]).0;
        let line = if listing { full(server, group) } else { counted(server, group.len()) };
        let fits = out.len() + line.len() + close.len() + tail_room <= budget;
        if fits {
            out.push_str(&line);
            listed += group.len();
            continue;
        }
        if listing {
            // From here on, counts only: try this server again as a count.
            listing = false;
            let line = counted(server, group.len());
            if out.len() + line.len() + close.len() + tail_room <= budget {
                out.push_str(&line);
                listed += group.len();
                continue;
            }
        }
        let left = 1 + groups.count();
        let tools_left = sorted.len() - listed;
        out.push_str(&format!(
            "and {left} more servers with {tools_left} tools: find them with tool_search (keywords, or \"SERVER__\")\n"
        ));
        break;
    }
    out.push_str(close);
    out
}

/// Most bytes of the news [`tool_search_with_news`] adds to `tool_search`'s description, so
/// that the whole description stays within what clients keep of one (Claude Code keeps 2,048
/// characters).
pub const NEWS_BUDGET: usize = 1024;

/// What an announcement told the model, read back from its text: the names it lists, the
/// servers it gives only a count for, and whether its last line left servers out unnamed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Told {
    names: BTreeSet<String>,
    /// The servers whose tools are listed by name.
    named: BTreeSet<String>,
    counted: BTreeSet<String>,
    cut: bool,
}

impl Told {
    /// Reads an announcement [`grouped_announcement`] wrote (any other text tells nothing).
    pub(crate) fn read(announcement: &str) -> Told {
        let mut told = Told::default();
        for line in announcement.lines() {
            if line.starts_with('<') {
                continue;
            }
            if line.starts_with("and ") && line.contains(" more servers with ") {
                told.cut = true;
                continue;
            }
            let Some((server, tools)) = line.split_once(": ") else { continue };
            if tools.ends_with(" tools, find them with tool_search") {
                told.counted.insert(server.to_owned());
                continue;
            }
            told.named.insert(server.to_owned());
            for tool in tools.split(", ") {
                told.names.insert(if server.is_empty() {
                    tool.to_owned()
                } else {
                    format!("{server}__{tool}")
                });
            }
        }
        told
    }

    /// Whether the model was told of `name` (by name, or by its server's count). Past a cut,
    /// a server the text does not name may have been among those left out: it counts as told.
    pub(crate) fn covers(&self, name: &str) -> bool {
        if self.names.contains(name) {
            return true;
        }
        let server = name.split_once("__").map_or("", |(server, _)| server);
        if self.counted.contains(server) {
            return true;
        }
        self.cut && !self.named.contains(server)
    }
}

/// `tool_search` with news for a model whose announcement no longer lists every deferred name:
/// the names that became loadable since (`late`, grouped by server as in the announcement,
/// within [`NEWS_BUDGET`] bytes) follow the usual description. `None` when nothing is late.
pub(crate) fn tool_search_with_news<'a>(
    exposure: Exposure,
    late: impl IntoIterator<Item = &'a str>,
) -> Option<Tool> {
    let mut late = late.into_iter().peekable();
    late.peek()?;
    let usual = tool_search_tool_in(exposure);
    let news = grouped_block(
        "\n\nLoadable since <available-deferred-tools> was written (servers that finished starting \
         later); load them the same way:\n<deferred-tools-added>\n",
        "</deferred-tools-added>",
        late,
        NEWS_BUDGET,
    );
    Some(Tool::meta(TOOL_SEARCH, &format!("{}{news}", usual.description()), usual.input_schema().clone()))
}

/// What changed in the deferred names since the last announcement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delta {
    /// Names that became available, sorted.
    pub added: Vec<String>,
    /// Names that went away, sorted.
    pub removed: Vec<String>,
}

impl Delta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// The delta as a block the model reads; empty when nothing changed.
    pub fn render(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = String::from("<deferred-tools-delta>\n");
        for n in &self.added {
            out.push_str(&format!("+ {n}\n"));
        }
        for n in &self.removed {
            out.push_str(&format!("- {n}\n"));
        }
        out.push_str("</deferred-tools-delta>");
        out
    }
}

/// Announces deferred names as deltas: the first call announces every name as added, later
/// calls only what changed.
#[derive(Debug, Clone, Default)]
pub struct Announcer {
    announced: BTreeSet<String>,
}

impl Announcer {
    /// An announcer that has announced nothing yet.
    pub fn new() -> Announcer {
        Announcer::default()
    }

    /// The names announced so far, sorted.
    pub fn announced(&self) -> impl Iterator<Item = &str> {
        self.announced.iter().map(String::as_str)
    }

    /// Records `current` as announced and returns what changed.
    pub fn announce<'a>(&mut self, current: impl IntoIterator<Item = &'a str>) -> Delta {
        let now: BTreeSet<String> = current.into_iter().map(str::to_owned).collect();
        let added = now.difference(&self.announced).cloned().collect();
        let removed = self.announced.difference(&now).cloned().collect();
        self.announced = now;
        Delta { added, removed }
    }
}

/// The deferred names the model may load (every deferred tool of the catalog, sorted).
pub(crate) fn deferred_names<'a>(catalog: &'a Catalog, deferral: &Deferral) -> Vec<&'a str> {
    let mut names: Vec<&str> = catalog
        .ids()
        .filter(|&id| deferral.is_deferred(id))
        .map(|id| catalog.tool(id).qualified_name())
        .collect();
    names.sort_unstable();
    names
}
