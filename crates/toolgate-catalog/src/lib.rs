//! toolgate's catalog: every tool known to the host, normalised and hashed, with how a
//! qualified name is written ([`naming`]) and the small file and secret helpers its caches use
//! ([`files`], [`secret`]). It is the bottom layer: the ranking (`toolgate-search`) and the
//! facade (`toolgate`, which re-exports it as `toolgate::catalog`) build on it.
//!
//! Tools come from JSONL catalog files (one tool a line), from the JSON object that maps each
//! server to its MCP `tools/list` result, or from code ([`ToolSpec`]). Each tool gets a
//! [qualified name](crate::naming) `server__tool` and a [definition hash](DefinitionHash).

#![deny(missing_docs)]

pub mod files;
mod input_schema;
mod load;
mod names;
pub mod naming;
pub mod secret;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use input_schema::InputSchema;
pub use load::{CatalogError, CatalogErrorKind, Location};
use names::Names;

/// The label of the embedded catalog in messages.
pub const EMBEDDED_LABEL: &str = "<embedded livemcpbench catalog>";
const EMBEDDED_JSONL: &str = include_str!("../../../bench/livemcpbench/catalog.jsonl");

/// Where a tool comes from; decides how it is deferred (see `toolgate::defer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A tool of an MCP server: deferred unless it is marked always-load.
    Mcp,
    /// A built-in tool of the host: deferred only when it says `should_defer`.
    Builtin,
}

/// A tool's position inside one [`Catalog`], marked with that catalog's [`Brand`].
///
/// An id is meaningful only for the catalog it came from: [`Catalog::tool`] refuses (panics on)
/// an id of a catalog that lists other tools, instead of handing back whichever tool sits at
/// that position. Two catalogs that list the same qualified names in the same order share a
/// brand, so an id means the same tool in both (a snapshot rebuilt unchanged, a clone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolId {
    pos: u32,
    brand: Brand,
}

impl ToolId {
    /// The position of the tool in its catalog.
    pub fn index(self) -> usize {
        self.pos as usize
    }

    /// The brand of the catalog the id belongs to.
    pub fn brand(self) -> Brand {
        self.brand
    }
}

/// What ties a [`ToolId`] to its catalog: a fingerprint of the catalog's qualified names in
/// order (FNV-1a, 32 bits). A ranker built over a catalog keeps its brand and makes the ids of
/// its hits with [`Brand::id`], so that they are checked wherever they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Brand(u32);

impl Brand {
    /// The id of the tool at `pos` of a catalog with this brand. The position is checked when
    /// the id is read ([`Catalog::tool`]).
    pub fn id(self, pos: u32) -> ToolId {
        ToolId { pos, brand: self }
    }

    /// The brand of a catalog listing `names` in this order.
    fn of<'a>(names: impl Iterator<Item = &'a str>) -> Brand {
        let mut h: u32 = 0x811c_9dc5;
        for name in names {
            for &b in name.as_bytes().iter().chain(&[0xff]) {
                h ^= u32::from(b);
                h = h.wrapping_mul(0x0100_0193);
            }
        }
        Brand(h)
    }
}

/// SHA-256 of a tool's canonical JSON definition (keys sorted, no white space).
///
/// The definition is `{"annotations", "description", "input_schema", "name"}` with the tool's
/// own (not qualified) name, so that the hash changes exactly when what the model would read
/// changes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DefinitionHash([u8; 32]);

impl DefinitionHash {
    /// A hash from its raw digest (as [`DefinitionHash::as_bytes`] gave it, say from a cache).
    pub fn from_bytes(bytes: [u8; 32]) -> DefinitionHash {
        DefinitionHash(bytes)
    }

    /// The raw digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for DefinitionHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DefinitionHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DefinitionHash({self})")
    }
}

/// The name of the search meta-tool. It is never deferred.
pub const TOOL_SEARCH: &str = "tool_search";

/// What a caller hands the catalog builder for one tool.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The server id (or pseudo-server) the tool belongs to.
    pub server: String,
    /// The tool's own name, exactly as published.
    pub name: String,
    /// The published description, verbatim.
    pub description: String,
    /// The JSON Schema of the arguments, held as text and parsed when needed.
    pub input_schema: InputSchema,
    /// MCP tool annotations (`readOnlyHint`, `title`, ...).
    pub annotations: Map<String, Value>,
    /// MCP or built-in.
    pub origin: Origin,
    /// Always sent in full (`alwaysLoad`, or MCP `_meta["anthropic/alwaysLoad"]`).
    pub always_load: bool,
    /// For built-ins: deferred even though not MCP.
    pub should_defer: bool,
    /// Extra words for search only; never shown to the model.
    pub search_hint: Option<String>,
}

impl ToolSpec {
    /// An MCP tool with an empty object schema and no annotations.
    pub fn mcp(server: &str, name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            server: server.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: InputSchema::empty_object(),
            annotations: Map::new(),
            origin: Origin::Mcp,
            always_load: false,
            should_defer: false,
            search_hint: None,
        }
    }

    /// A built-in tool of the host (pseudo-server `builtin`).
    pub fn builtin(name: &str, description: &str) -> ToolSpec {
        ToolSpec { origin: Origin::Builtin, ..ToolSpec::mcp("builtin", name, description) }
    }

    /// Replaces the input schema.
    pub fn with_schema(mut self, schema: impl Into<InputSchema>) -> ToolSpec {
        self.input_schema = schema.into();
        self
    }
}

/// One tool of the catalog: immutable once built.
#[derive(Debug, Clone)]
pub struct Tool {
    qualified: String,
    /// Shared by every catalog that holds the tool (a policy's visible catalog, the next
    /// snapshot of an upstream that did not change): a clone never copies the schema.
    spec: Arc<ToolSpec>,
    hash: DefinitionHash,
}

impl Tool {
    /// The unique `server__tool` name shown to the model.
    pub fn qualified_name(&self) -> &str {
        &self.qualified
    }
    /// The server id as given.
    pub fn server(&self) -> &str {
        &self.spec.server
    }
    /// The tool's own name as published.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
    /// The published description.
    pub fn description(&self) -> &str {
        &self.spec.description
    }
    /// The JSON Schema of the arguments (parsed on first use; see [`InputSchema`]).
    pub fn input_schema(&self) -> &Value {
        self.spec.input_schema.value()
    }
    /// The input schema as held: its canonical text and the words search reads.
    pub fn schema(&self) -> &InputSchema {
        &self.spec.input_schema
    }
    /// The spec the tool was built from, shared: give it to [`CatalogBuilder::shared`] to put
    /// the same tool in another catalog without copying it.
    pub fn spec(&self) -> &Arc<ToolSpec> {
        &self.spec
    }
    /// The first line of the description, trimmed, cut to `max_chars` characters with an
    /// ellipsis: what a result list shows.
    pub fn short_description(&self, max_chars: usize) -> String {
        let line = self.spec.description.trim().lines().next().unwrap_or_default().trim();
        if line.chars().count() <= max_chars {
            return line.to_owned();
        }
        let cut: String = line.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }

    /// MCP annotations.
    pub fn annotations(&self) -> &Map<String, Value> {
        &self.spec.annotations
    }
    /// MCP or built-in.
    pub fn origin(&self) -> Origin {
        self.spec.origin
    }
    /// Whether the tool is always sent in full.
    pub fn always_load(&self) -> bool {
        self.spec.always_load
    }
    /// Whether a built-in asks to be deferred.
    pub fn should_defer(&self) -> bool {
        self.spec.should_defer
    }
    /// Extra search words, never shown to the model.
    pub fn search_hint(&self) -> Option<&str> {
        self.spec.search_hint.as_deref()
    }
    /// The SHA-256 of the canonical definition.
    pub fn hash(&self) -> DefinitionHash {
        self.hash
    }
    /// `readOnlyHint: true` in the annotations.
    pub fn read_only_hint(&self) -> bool {
        self.spec.annotations.get("readOnlyHint") == Some(&Value::Bool(true))
    }

    /// A meta-tool of toolgate itself (`tool_search`, `call_tool`): its qualified name is its
    /// bare name, and it belongs to no catalog.
    pub fn meta(name: &str, description: &str, input_schema: Value) -> Tool {
        let spec = ToolSpec { input_schema: input_schema.into(), ..ToolSpec::builtin(name, description) };
        let hash = definition_hash(&spec);
        Tool { qualified: name.to_owned(), spec: Arc::new(spec), hash }
    }

    /// The definition as a model API receives it: `{"name", "description", "input_schema"}`
    /// with the qualified name.
    pub fn definition(&self) -> Value {
        serde_json::json!({
            "name": self.qualified,
            "description": self.spec.description,
            "input_schema": self.spec.input_schema.value(),
        })
    }

    /// [`Tool::definition`] as compact JSON text (keys sorted), written from the schema's text
    /// without parsing it: what token counts read for every tool of a catalog.
    pub fn definition_text(&self) -> String {
        let mut out = Sink(Vec::with_capacity(self.spec.input_schema.held_len() * 2 + 64));
        out.put(b"{\"description\":");
        out.string(&self.spec.description);
        out.put(b",\"input_schema\":");
        self.spec.input_schema.pieces().for_each(|piece| out.put(piece));
        out.put(b",\"name\":");
        out.string(&self.qualified);
        out.put(b"}");
        String::from_utf8(out.0).expect("JSON written here is UTF-8")
    }
}

/// Every tool known to the host. Build it with [`Catalog::builder`].
///
/// Immutable and cheap to clone (the tools are shared).
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    tools: Arc<[Tool]>,
    names: Names,
    brand: Brand,
}

impl Catalog {
    /// A builder collecting tools from files and code.
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// Reads a catalog file: JSONL (one tool a line) or a JSON object mapping each server to
    /// its `tools/list` result. `label` names the source in errors (usually the path).
    pub fn from_text(label: &str, text: &str) -> Result<Catalog, CatalogError> {
        Catalog::builder().text(label, text)?.build()
    }

    /// Reads a catalog file from disk (see [`Catalog::from_text`]).
    pub fn from_path(path: &std::path::Path) -> Result<Catalog, CatalogError> {
        Catalog::builder().path(path)?.build()
    }

    /// The default catalog compiled into the library: the 527 real MCP tools of 70 servers
    /// from LiveMCPBench (Apache-2.0; see `bench/livemcpbench/SOURCE.md` in the repository).
    pub fn embedded() -> Catalog {
        static EMBEDDED: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        EMBEDDED
            .get_or_init(|| {
                Catalog::from_text(EMBEDDED_LABEL, EMBEDDED_JSONL).expect("the embedded catalog is valid")
            })
            .clone()
    }

    /// All tools, in the order they were added.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool with this id.
    ///
    /// # Panics
    /// When the id comes from a catalog that lists other tools (another [`Brand`]), or is out
    /// of range: reading it here would name whichever tool sits at its position.
    pub fn tool(&self, id: ToolId) -> &Tool {
        assert!(
            id.brand == self.brand,
            "a tool id of another catalog (position {}) was read in a catalog of {} tools",
            id.pos,
            self.tools.len()
        );
        &self.tools[id.index()]
    }

    /// The id of the tool at `pos`.
    ///
    /// # Panics
    /// When `pos` is out of range.
    pub fn id(&self, pos: usize) -> ToolId {
        assert!(pos < self.tools.len(), "position {pos} in a catalog of {} tools", self.tools.len());
        self.brand.id(pos as u32)
    }

    /// What ties this catalog's ids to it.
    pub fn brand(&self) -> Brand {
        self.brand
    }

    /// Ids of all tools in catalog order.
    pub fn ids(&self) -> impl Iterator<Item = ToolId> + '_ {
        let brand = self.brand;
        (0..self.tools.len() as u32).map(move |pos| brand.id(pos))
    }

    /// Looks a tool up by its qualified name (exactly).
    pub fn get(&self, qualified: &str) -> Option<ToolId> {
        self.names.get(&self.tools, qualified).map(|pos| self.brand.id(pos))
    }

    /// Resolves a name the way a model may write it: the qualified name, the same with an
    /// `mcp__` prefix (`mcp__server__tool`), in any letter case. A spelling that differs only by
    /// case from several tools names none of them.
    pub fn resolve(&self, name: &str) -> Option<ToolId> {
        self.identify(name).flatten()
    }

    /// What [`Catalog::resolve`] finds, telling apart a name that matches no tool (`None`) from
    /// one that matches several only in other letter cases (`Some(None)`: ambiguous).
    pub fn identify(&self, name: &str) -> Option<Option<ToolId>> {
        let bare = crate::naming::strip_mcp_prefix(name.trim());
        if let Some(id) = self.get(name).or_else(|| self.get(bare)) {
            return Some(Some(id));
        }
        let lower = bare.to_lowercase();
        let mut found = self.names.folded(&self.tools, &lower).map(|pos| self.brand.id(pos));
        let first = found.next()?;
        Some(found.next().is_none().then_some(first))
    }

    /// The distinct server ids, sorted.
    pub fn servers(&self) -> Vec<&str> {
        // A server's tools are mostly side by side: dropping repeats first leaves a list about
        // as long as the servers to sort, not as the tools.
        let mut s: Vec<&str> = self.tools.iter().map(|t| t.server()).collect();
        s.dedup();
        s.sort_unstable();
        s.dedup();
        s
    }

    /// A new catalog holding only the tools for which `keep` is true (order kept).
    pub fn filter(&self, mut keep: impl FnMut(&Tool) -> bool) -> Catalog {
        let kept: Vec<bool> = self.tools.iter().map(&mut keep).collect();
        if kept.iter().all(|&k| k) {
            // The same tools in the same order: the same catalog, shared rather than copied
            // (a permissive policy over 100,000 tools would copy every name twice).
            return self.clone();
        }
        let tools: Vec<Tool> =
            self.tools.iter().zip(&kept).filter(|&(_, &k)| k).map(|(t, _)| t.clone()).collect();
        Catalog::index_tools(tools)
    }

    fn index_tools(tools: Vec<Tool>) -> Catalog {
        let brand = Brand::of(tools.iter().map(|t| t.qualified.as_str()));
        let names = Names::new(&tools);
        Catalog { tools: tools.into(), names, brand }
    }
}

/// Collects tools; [`CatalogBuilder::build`] names and hashes them.
#[derive(Debug, Default)]
pub struct CatalogBuilder {
    specs: Vec<Arc<ToolSpec>>,
    /// Where each spec came from (file and line), for errors found at build time.
    origins: Vec<Option<(Arc<str>, Location)>>,
}

impl CatalogBuilder {
    /// Adds one tool.
    pub fn tool(self, spec: ToolSpec) -> CatalogBuilder {
        self.shared(Arc::new(spec))
    }

    /// Adds one tool whose spec another catalog holds too ([`Tool::spec`]); nothing is copied.
    pub fn shared(mut self, spec: Arc<ToolSpec>) -> CatalogBuilder {
        self.specs.push(spec);
        self.origins.push(None);
        self
    }

    /// Adds every tool of a catalog text (JSONL or a `tools/list` map); see
    /// [`Catalog::from_text`].
    pub fn text(mut self, label: &str, text: &str) -> Result<CatalogBuilder, CatalogError> {
        self.add_parsed(label, load::parse(label, text)?);
        Ok(self)
    }

    /// Adds every tool of a catalog file.
    pub fn path(mut self, path: &std::path::Path) -> Result<CatalogBuilder, CatalogError> {
        let label = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| CatalogError {
            source_label: label.clone(),
            location: Location::File,
            kind: CatalogErrorKind::Io(e.to_string()),
        })?;
        self.add_parsed(&label, load::parse_file(&label, file)?);
        Ok(self)
    }

    fn add_parsed(&mut self, label: &str, parsed: load::Parsed) {
        let label: Arc<str> = label.into();
        self.specs.reserve(parsed.len());
        self.origins.reserve(parsed.len());
        for (spec, location) in parsed {
            self.specs.push(Arc::new(spec));
            self.origins.push(Some((label.clone(), location)));
        }
    }

    /// Names (see [`crate::naming`]), hashes and indexes the tools.
    ///
    /// Two tools with the same server and the same name are an error: the second would
    /// shadow the first.
    pub fn build(self) -> Result<Catalog, CatalogError> {
        self.check()?;
        let pairs: Vec<(&str, &str)> =
            self.specs.iter().map(|s| (s.server.as_str(), s.name.as_str())).collect();
        let names = naming::qualify_all(&pairs);
        let hashes = hash_all(&self.specs);
        let tools = self
            .specs
            .into_iter()
            .zip(names)
            .zip(hashes)
            .map(|((spec, qualified), hash)| Tool { qualified, spec, hash })
            .collect();
        Ok(Catalog::index_tools(tools))
    }

    /// The specs as added, checked as [`CatalogBuilder::build`] checks them, but neither named,
    /// hashed nor indexed: for a caller that puts them in a catalog of its own (a gateway reads
    /// a catalog file, then builds one catalog of every upstream's tools; building this one too
    /// cost 100,000 tools their hashes and names twice at every start).
    pub fn into_specs(self) -> Result<Vec<Arc<ToolSpec>>, CatalogError> {
        self.check()?;
        Ok(self.specs)
    }

    /// An empty name or a second tool with the same server and name is an error.
    fn check(&self) -> Result<(), CatalogError> {
        let mut seen: HashMap<(&str, &str), usize, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(self.specs.len(), Default::default());
        for (i, s) in self.specs.iter().enumerate() {
            if s.name.is_empty() {
                return Err(CatalogError::at_tool(self.origins[i].as_ref(), i, CatalogErrorKind::EmptyName));
            }
            if seen.insert((&s.server, &s.name), i).is_some() {
                return Err(CatalogError::at_tool(
                    self.origins[i].as_ref(),
                    i,
                    CatalogErrorKind::DuplicateName(format!("{}__{}", s.server, s.name)),
                ));
            }
        }
        Ok(())
    }
}

/// The definition hash of every spec, in order, on every core for a large catalog.
fn hash_all(specs: &[Arc<ToolSpec>]) -> Vec<DefinitionHash> {
    const PER_THREAD: usize = 4096;
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    if threads < 2 || specs.len() < 2 * PER_THREAD {
        return specs.iter().map(|s| definition_hash(s)).collect();
    }
    let chunk = specs.len().div_ceil(threads).max(PER_THREAD);
    std::thread::scope(|scope| {
        let parts: Vec<_> = specs
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|s| definition_hash(s)).collect::<Vec<_>>()))
            .collect();
        parts.into_iter().flat_map(|h| h.join().expect("hashing panicked")).collect()
    })
}

fn definition_hash(spec: &ToolSpec) -> DefinitionHash {
    // The canonical JSON of {"annotations", "description", "input_schema", "name"} (keys in
    // sorted order), streamed into the hash without building the document.
    let mut h = Sink(HashWriter(Sha256::new()));
    h.put(b"{\"annotations\":");
    canonical_object(spec.annotations.iter(), &mut h);
    h.put(b",\"description\":");
    h.string(&spec.description);
    h.put(b",\"input_schema\":");
    // The schema's text is its canonical JSON already.
    spec.input_schema.pieces().for_each(|piece| h.put(piece));
    h.put(b",\"name\":");
    h.string(&spec.name);
    h.put(b"}");
    DefinitionHash(h.0.0.finalize().into())
}

/// Writes `v` as canonical JSON: object keys sorted by their UTF-8 bytes, no white space.
///
/// Written by hand so that the result does not depend on whether some crate in the build
/// turned on `serde_json/preserve_order`.
pub fn write_canonical(v: &Value, out: &mut String) {
    let mut bytes = Vec::new();
    write_canonical_onto(v, &mut bytes);
    out.push_str(&String::from_utf8(bytes).expect("serde_json writes UTF-8"));
}

/// [`write_canonical`] onto bytes (UTF-8 text).
pub(crate) fn write_canonical_onto(v: &Value, out: &mut Vec<u8>) {
    canonical(v, &mut Sink(out));
}

/// Where canonical JSON goes: a buffer or a hash.
struct Sink<T>(T);

impl<T: std::io::Write> Sink<T> {
    fn put(&mut self, bytes: &[u8]) {
        self.0.write_all(bytes).expect("writing to memory does not fail");
    }

    fn string(&mut self, s: &str) {
        serde_json::to_writer(&mut self.0, s).expect("writing to memory does not fail");
    }
}

/// A SHA-256 that takes writes.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn canonical<T: std::io::Write>(v: &Value, out: &mut Sink<T>) {
    match v {
        Value::Object(map) => canonical_object(map.iter(), out),
        Value::Array(items) => {
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                canonical(item, out);
            }
            out.put(b"]");
        }
        scalar => serde_json::to_writer(&mut out.0, scalar).expect("writing to memory does not fail"),
    }
}

fn canonical_object<'a, T: std::io::Write>(
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
    out: &mut Sink<T>,
) {
    let mut entries: Vec<(&String, &Value)> = entries.collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.put(b"{");
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        out.string(k);
        out.put(b":");
        canonical(v, out);
    }
    out.put(b"}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_catalog_hashes_on_every_core_as_one_thread_would_and_a_full_filter_shares_it() {
        let catalog = (0..9000)
            .fold(Catalog::builder(), |b, i| {
                b.tool(ToolSpec::mcp(&format!("s{}", i % 7), &format!("t{i}"), &format!("d{i}")))
            })
            .build()
            .unwrap();
        assert!(catalog.tools().iter().all(|t| t.hash() == definition_hash(&t.spec)));
        let hashes: std::collections::HashSet<_> = catalog.tools().iter().map(Tool::hash).collect();
        assert_eq!(hashes.len(), 9000, "every definition differs, and so does every hash");
        let all = catalog.filter(|_| true);
        assert!(Arc::ptr_eq(&all.tools, &catalog.tools), "shared, not copied");
        let mut seen = 0;
        let some = catalog.filter(|t| {
            seen += 1;
            t.name().ends_with('7')
        });
        assert_eq!(seen, 9000, "asked once a tool");
        assert_eq!(some.len(), 900);
        assert!(
            some.tools()
                .iter()
                .all(|t| t.hash() == catalog.tool(catalog.get(t.qualified_name()).unwrap()).hash())
        );
    }

    #[test]
    fn hash_ignores_key_order_but_not_content() {
        let a = ToolSpec::mcp("s", "t", "d")
            .with_schema(serde_json::json!({"type": "object", "properties": {"a": {}, "b": {}}}));
        let b: Value =
            serde_json::from_str(r#"{"properties": {"b": {}, "a": {}}, "type": "object"}"#).unwrap();
        let b = ToolSpec::mcp("s", "t", "d").with_schema(b);
        assert_eq!(definition_hash(&a), definition_hash(&b));
        let c = ToolSpec::mcp("s", "t", "d2");
        assert_ne!(definition_hash(&a), definition_hash(&c));
        assert_eq!(definition_hash(&a).to_string().len(), 64);
    }

    #[test]
    fn the_definition_text_is_the_definition_serialized() {
        for tool in Catalog::embedded().tools() {
            assert_eq!(tool.definition_text(), tool.definition().to_string(), "{}", tool.qualified_name());
        }
        let meta =
            Tool::meta("x", "say \"hi\"\n", serde_json::json!({"type": "object", "b": 1, "a": [null]}));
        assert_eq!(meta.definition_text(), meta.definition().to_string());
    }

    #[test]
    fn resolve_accepts_mcp_prefix_and_case() {
        let cat = Catalog::builder().tool(ToolSpec::mcp("git", "git_log", "")).build().unwrap();
        assert_eq!(cat.resolve("git__git_log"), Some(cat.id(0)));
        assert_eq!(cat.resolve("mcp__git__git_log"), Some(cat.id(0)));
        assert_eq!(cat.resolve("GIT__Git_Log"), Some(cat.id(0)));
        assert_eq!(cat.resolve("git__git"), None);
    }

    proptest::proptest! {
        #[test]
        fn a_name_in_any_letter_case_names_what_a_scan_of_every_name_finds(
            names in proptest::collection::btree_set("[aAbB]{1,3}", 1..12),
            asked in "(mcp__)?s__[aAbB]{1,3}",
        ) {
            let cat = names
                .iter()
                .fold(Catalog::builder(), |b, n| b.tool(ToolSpec::mcp("s", n, "")))
                .build()
                .unwrap();
            let bare = crate::naming::strip_mcp_prefix(&asked);
            let scan = || {
                let lower = bare.to_lowercase();
                let mut found = cat.ids().filter(|&id| cat.tool(id).qualified_name().to_lowercase() == lower);
                let first = found.next()?;
                Some(found.next().is_none().then_some(first))
            };
            let expected = cat.get(bare).map(Some).or_else(scan);
            proptest::prop_assert_eq!(cat.identify(&asked), expected);
        }
    }

    fn three() -> Catalog {
        Catalog::builder()
            .tool(ToolSpec::mcp("git", "git_log", "History"))
            .tool(ToolSpec::mcp("git", "git_push", "Push"))
            .tool(ToolSpec::mcp("fs", "delete_file", "Delete"))
            .build()
            .unwrap()
    }

    #[test]
    fn an_id_is_read_only_in_a_catalog_of_the_same_tools() {
        let whole = three();
        let visible = whole.filter(|t| t.server() == "git");
        // The filtered catalog lists other tools: its ids are not the whole catalog's.
        assert_ne!(visible.brand(), whole.brand());
        assert_ne!(visible.get("git__git_log"), whole.get("git__git_log"));
        // The same names in the same order (rebuilt, cloned, filtered keeping all) share a brand.
        assert_eq!(three().brand(), whole.brand());
        assert_eq!(whole.filter(|_| true).get("fs__delete_file"), whole.get("fs__delete_file"));
        // An order of its own is another catalog.
        let reversed = Catalog::builder()
            .tool(ToolSpec::mcp("git", "git_push", "Push"))
            .tool(ToolSpec::mcp("git", "git_log", "History"))
            .build()
            .unwrap();
        assert_ne!(reversed.brand(), visible.brand());
    }

    #[test]
    #[should_panic(expected = "a tool id of another catalog")]
    fn a_catalog_refuses_the_id_of_another() {
        let whole = three();
        let visible = whole.filter(|t| t.server() == "git");
        // Position 2 of the whole catalog is fs__delete_file; the visible one has no such id.
        let delete = whole.get("fs__delete_file").unwrap();
        let _ = visible.filter(|_| true).tool(whole.id(1));
        let _ = visible.tool(delete);
    }

    #[test]
    fn duplicate_tool_is_an_error() {
        let err = Catalog::builder()
            .tool(ToolSpec::mcp("git", "log", ""))
            .tool(ToolSpec::mcp("git", "log", ""))
            .build()
            .unwrap_err();
        assert_eq!(err.to_string(), "tool 2: duplicate qualified name git__log");
    }

    #[test]
    fn specs_alone_are_checked_as_a_catalog_is() {
        let twice =
            Catalog::builder().tool(ToolSpec::mcp("git", "log", "")).tool(ToolSpec::mcp("git", "log", ""));
        assert_eq!(twice.into_specs().unwrap_err().to_string(), "tool 2: duplicate qualified name git__log");
        let unnamed = || Catalog::builder().tool(ToolSpec::mcp("git", "", ""));
        assert_eq!(
            unnamed().into_specs().unwrap_err().to_string(),
            unnamed().build().unwrap_err().to_string()
        );
        let specs = Catalog::builder()
            .tool(ToolSpec::mcp("git", "log", "history"))
            .tool(ToolSpec::mcp("git", "diff", "changes"))
            .into_specs()
            .unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["log", "diff"]);
    }
}
