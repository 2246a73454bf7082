//! toolbox: the facade. Here are a catalog snapshot, a subject's policy and the settings, give
//! me everything one turn needs, and the one answer to "may this call run?".
//!
//! A [`Toolbox`] is built once per catalog snapshot × subject × settings and never changes:
//! the visible catalog ([`Policy::filter`]), the deferral decision, the index, the required
//! tools, the budgets and the meta-tools. A [`Conversation`] is one chat or MCP session: its
//! active set, when each tool was last used, and the definitions it was shown. Every surface
//! (the gateway, `toolgate search`, an agent loop) goes through these two types and nothing
//! else decides what is shown or what runs.
//!
//! **The execution invariant, decided here and only here ([`Toolbox::check`]):** a call runs
//! only if this conversation was shown the tool's current definition (in a tool list or a
//! search result), the policy allows it for this subject now, and its arguments validate
//! against a schema that compiled. Deferral changes what is shown, never what is checked.
//!
//! A conversation outlives the toolbox it started with: when the catalog changes, the next
//! toolbox picks the conversation up ([`Toolbox::resume`], also done by every operation) and
//! unloads every tool whose definition changed, so that it must be searched (and read) again
//! before it runs.
//!
//! ```
//! use serde_json::json;
//! use toolgate::{Catalog, Policy, Toolbox};
//!
//! let toolbox = Toolbox::builder(&Catalog::embedded(), Policy::permissive()).build()?;
//! let mut chat = toolbox.conversation();
//! assert_eq!(toolbox.tools(&mut chat)?.len(), 1, "only tool_search at first");
//! let shot = "playwright__playwright_screenshot";
//! assert!(!toolbox.check(&mut chat, shot, &json!({"name": "page"})).is_allow(), "never shown");
//!
//! let found = toolbox.tool_search(&mut chat, &json!({"query": "take a screenshot of a web page", "limit": 3}))?;
//! assert!(found.loaded().any(|t| t.qualified_name() == shot));
//! assert!(toolbox.check(&mut chat, shot, &json!({"name": "page"})).is_allow());
//! assert!(!toolbox.check(&mut chat, shot, &json!({"name": 3})).is_allow(), "arguments are checked");
//! assert_eq!(toolbox.tools(&mut chat)?.len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::budget::{ActiveBudget, OverHardLimit, Recency};
use crate::catalog::{Catalog, DefinitionHash, Tool, ToolId};
use crate::config::Exposure;
use crate::defer::Deferral;
use crate::policy::{Action, AuditEvent, Policy, Required, Verdict};
use crate::request::{self, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT};
use crate::schema::Problem;
use crate::search::{Index, IndexBuilder, Request, Strategy};
use crate::session::ActiveSet;
use index_cell::IndexCell;

// The types the facade's signatures use, so that a host names the facade only (their
// modules are the crate's own).
pub use crate::defer::{DeferConfig, DeferMode};
pub use crate::gate::{Decision, Denial};
pub use crate::grant::GrantProblem;
pub use crate::policy::{PolicyError, ServedBy};
pub use crate::preselect::{Preselection, Score, Scored};
pub use crate::request::TOOL_SEARCH;
pub use crate::schema::Validators;
pub use about::About;
pub use bridge::{BridgeCall, call_tool_tool};
pub use decider::{CatalogState, Decider, HostSettings, Toolboxes};
pub use explained::{Explained, ExplainedHit};
pub use granted::Grants;
pub use instructions::Briefing;
pub use offers::ServerData;
pub use outcome::SearchOutcome;
pub use saved::BadSavedConversation;

/// The name of the bridge meta-tool that runs a loaded tool.
pub const CALL_TOOL: &str = "call_tool";

/// Every toolbox gets its own stamp, so a conversation knows when it meets a new one.
static STAMPS: AtomicU64 = AtomicU64::new(1);

/// Builds a [`Toolbox`].
#[derive(Debug)]
pub struct ToolboxBuilder {
    catalog: Catalog,
    policy: Policy,
    defer: DeferConfig,
    exposure: Exposure,
    index: IndexBuilder,
    starting: Vec<String>,
    reconnecting: Vec<String>,
    failed: Vec<(String, String)>,
    validators: Arc<Validators>,
    quarantined: Catalog,
    shared: Option<Arc<IndexCell>>,
    granted: bool,
    background: bool,
}

impl ToolboxBuilder {
    /// When tools are deferred (default: [`DeferConfig::default`], `auto`). `auto` is decided
    /// over the whole catalog given to [`Toolbox::builder`], so every subject of one snapshot
    /// gets the same decision. Bridge exposure always defers.
    pub fn defer(mut self, defer: DeferConfig) -> ToolboxBuilder {
        self.defer = defer;
        self
    }

    /// `native` (default: active tools in the tool list) or `bridge` (`tool_search` and
    /// `call_tool` only, a list that never changes).
    pub fn exposure(mut self, exposure: Exposure) -> ToolboxBuilder {
        self.exposure = exposure;
        self
    }

    /// The ranker for free keywords (default [`Strategy::DEFAULT`]).
    pub fn strategy(mut self, strategy: Strategy) -> ToolboxBuilder {
        self.index = self.index.strategy(strategy);
        self
    }

    /// How the visible tools are indexed: a strategy and, for `bert`, its model (the index
    /// builder is kept for the toolboxes of sub-agents).
    pub fn index(mut self, index: IndexBuilder) -> ToolboxBuilder {
        self.index = index;
        self
    }

    /// Servers still starting (not listed yet), named in search results.
    pub fn starting(mut self, servers: Vec<String>) -> ToolboxBuilder {
        self.starting = servers;
        self
    }

    /// Servers starting whose tools are served as they listed them last time (a host that keeps
    /// its servers' last listings), named in the instructions: their tools are announced and
    /// searchable at once, and a call waits for the server.
    pub fn reconnecting(mut self, servers: Vec<String>) -> ToolboxBuilder {
        self.reconnecting = servers;
        self
    }

    /// Servers that failed, each with its reason in one line, named in search results.
    pub fn failed(mut self, servers: Vec<(String, String)>) -> ToolboxBuilder {
        self.failed = servers;
        self
    }

    /// Tools of the snapshot withheld from every subject until an operator approves them
    /// (pinned definitions that are new or changed). They are never indexed, listed or run; a
    /// call of one the policy would allow is refused as [`Denial::Quarantined`], not unknown.
    pub fn quarantined(mut self, tools: Catalog) -> ToolboxBuilder {
        self.quarantined = tools;
        self
    }

    /// An index another toolbox built (see [`Toolbox::shared_index`]), used instead of
    /// building one when it holds exactly this toolbox's visible tools (same names and
    /// definitions, in the same order) under this builder's strategy; otherwise ignored.
    /// Only the strategy is checked: share only between toolboxes given the same
    /// [`ToolboxBuilder::index`] (the gateway's bridge and native toolboxes of one subject
    /// share one index this way).
    pub(crate) fn shared_index(mut self, index: Arc<IndexCell>) -> ToolboxBuilder {
        self.shared = Some(index);
        self
    }

    /// Whether [`ToolboxBuilder::build`] indexes the visible tools on a thread of its own
    /// (default off: it indexes them before it returns). The toolbox is then ready to render
    /// turns and check calls at once, and its first search waits for the index; a host that
    /// must answer before a large catalog is indexed (a gateway's `initialize`) builds so.
    /// Background builds run one at a time, a search's that comes before its thread's turn
    /// too (two snapshots' indexes are never built side by side), and one whose toolbox was
    /// dropped before its turn does not run.
    pub fn index_in_background(mut self, background: bool) -> ToolboxBuilder {
        self.background = background;
        self
    }

    /// Whether the toolbox serves callers the host keeps no conversation for (MCP 2026-07-28
    /// over HTTP): what shows a tool hands out a grant ([`GrantKey`](crate::GrantKey)) with it, and the bridge's
    /// `call_tool` takes it back (`{name, arguments, grant}`). Default off.
    pub fn granted(mut self, granted: bool) -> ToolboxBuilder {
        self.granted = granted;
        self
    }

    /// Compiled argument validators to share with other toolboxes (keyed by definition hash).
    pub fn validators(mut self, validators: Arc<Validators>) -> ToolboxBuilder {
        self.validators = validators;
        self
    }

    /// Applies the policy, decides deferral, checks the required tools against the budgets and
    /// indexes the visible tools. Fails when the required tools (pins, `mode = "all"`, core
    /// tools and meta-tools) do not fit the budgets.
    pub fn build(self) -> Result<Toolbox, PolicyError> {
        let filtered = self.policy.filter(&self.catalog);
        let visible = filtered.catalog;
        let defers =
            self.exposure == Exposure::Bridge || Deferral::decide(&self.catalog, &self.defer).enabled();
        let mode = if defers { DeferMode::On } else { DeferMode::Off };
        let deferral = Deferral::decide(&visible, &DeferConfig { mode, ..self.defer });
        let mut meta = Vec::new();
        if deferral.enabled() {
            meta.push(request::tool_search_tool_in(self.exposure));
            if self.exposure == Exposure::Bridge {
                meta.push(if self.granted { bridge::granted_call_tool_tool() } else { call_tool_tool() });
            }
        }
        let required = self.policy.required(&visible, &deferral, meta.len())?;
        let budget = ActiveBudget::from_policy(&self.policy, &visible, &required);
        let index = match self.shared.filter(|index| index.serves(&self.index, &visible)) {
            Some(index) => index,
            None if self.background => IndexCell::in_background(self.index.clone(), &visible),
            None => IndexCell::built(self.index.clone(), &visible),
        };
        Ok(Toolbox {
            stamp: STAMPS.fetch_add(1, Ordering::Relaxed),
            catalog: self.catalog,
            policy: self.policy,
            visible,
            hidden: filtered.audit,
            deferral,
            index,
            index_builder: self.index,
            required,
            budget,
            meta,
            exposure: self.exposure,
            starting: self.starting,
            reconnecting: self.reconnecting,
            failed: self.failed,
            validators: self.validators,
            quarantined: self.quarantined,
            announced: std::sync::OnceLock::new(),
            news: std::sync::Mutex::default(),
            granted: self.granted,
            instructions: std::sync::OnceLock::new(),
            full_load: std::sync::OnceLock::new(),
            listed_tokens: std::sync::Mutex::default(),
        })
    }
}

/// One definition of a turn's tool list: the toolbox's own, or a meta-tool written for this
/// conversation (`tool_search` telling of servers that finished starting late).
pub type Listed<'a> = std::borrow::Cow<'a, Tool>;

/// Everything one subject's turns need over one catalog snapshot. Immutable, `Send + Sync`.
#[derive(Debug)]
pub struct Toolbox {
    stamp: u64,
    catalog: Catalog,
    policy: Policy,
    visible: Catalog,
    hidden: Vec<AuditEvent>,
    deferral: Deferral,
    index: Arc<IndexCell>,
    /// How `index` was built, for sub-agents' toolboxes.
    index_builder: IndexBuilder,
    required: Required,
    budget: ActiveBudget,
    meta: Vec<Tool>,
    exposure: Exposure,
    starting: Vec<String>,
    reconnecting: Vec<String>,
    failed: Vec<(String, String)>,
    validators: Arc<Validators>,
    /// Tools withheld until approved, for the refusal's reason.
    quarantined: Catalog,
    /// The announcement, rendered once for every conversation of this toolbox.
    announced: std::sync::OnceLock<Arc<str>>,
    /// `tool_search` with news, per announcement an older conversation fixed (by a digest of
    /// its text): worked out once for all the conversations that share one, not per session.
    news: std::sync::Mutex<HashMap<u64, Option<Tool>>>,
    /// Whether callers present grants ([`ToolboxBuilder::granted`]).
    granted: bool,
    /// The instructions, written once for every conversation ([`Briefing::instructions`]).
    instructions: std::sync::OnceLock<Arc<str>>,
    /// The tokens of every visible definition, counted once ([`About::full_load_tokens`]).
    full_load: std::sync::OnceLock<usize>,
    /// The tokens of each definition a tool list sent, by qualified name with the definition's
    /// hash ([`About::definitions_tokens`]): counted once per definition, not per list.
    listed_tokens: std::sync::Mutex<HashMap<String, (crate::catalog::DefinitionHash, usize)>>,
}

/// One chat or MCP session: its active set, when each tool was last used, and the
/// definitions it was shown. Holds names and definition hashes, never ids, so it can move
/// from one toolbox to the next.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// The toolbox this conversation was last synchronised with (0: none yet).
    stamp: u64,
    active: ActiveSet,
    recency: Recency,
    /// The definitions this conversation was shown, by qualified name: the tool's server and
    /// its definition hash (a re-list that gives the name to another server's tool with the
    /// same definition is a change too).
    shown: HashMap<String, Shown>,
    /// Loaded tools whose definitions changed, not yet told to the model.
    changed: Vec<String>,
    /// The announcement, fixed when first rendered so that it stays byte-identical (shared with
    /// the toolbox that rendered it: a conversation holds no copy of its own).
    announcement: Option<Arc<str>>,
    /// `tool_search` with the names that became loadable since the announcement was fixed,
    /// when there are any (worked out when the conversation meets a new toolbox).
    news: Option<Tool>,
    /// Whether `tool_search`'s description carries the announcement itself, for a client that
    /// does not show its model the host's instructions ([`Conversation::announce_in_tool_search`]).
    in_search: bool,
}

impl Conversation {
    /// For a client that does not show its model the host's instructions (the MCP server
    /// instructions, where the announcement of the deferred names goes): `tool_search`'s
    /// description carries the announcement it refers to, so the model still reads which tools
    /// it can load. Not saved with the conversation: the host sets it for the client at hand.
    pub fn announce_in_tool_search(&mut self) {
        self.in_search = true;
    }
}

/// What a conversation was shown under one name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shown {
    server: String,
    hash: DefinitionHash,
}

impl Shown {
    fn of(tool: &Tool) -> Shown {
        Shown { server: tool.server().to_owned(), hash: tool.hash() }
    }

    /// An earlier definition of `tool`, known only by a grant's prefix of its hash: never
    /// [`Shown::is`] the current one.
    fn earlier(tool: &Tool) -> Shown {
        let mut bytes = *tool.hash().as_bytes();
        bytes[31] ^= 0xff;
        Shown { server: tool.server().to_owned(), hash: DefinitionHash::from_bytes(bytes) }
    }

    fn is(&self, tool: &Tool) -> bool {
        self.hash == tool.hash() && self.server == tool.server()
    }
}

impl Conversation {
    /// The active tools' qualified names, in activation order.
    pub fn active(&self) -> &[String] {
        self.active.active()
    }

    /// Whether this conversation was shown `tool` (under its name, from its server) in its
    /// current definition.
    pub fn was_shown(&self, tool: &Tool) -> bool {
        self.shown.get(tool.qualified_name()).is_some_and(|s| s.is(tool))
    }
}

/// Arguments of `tool_search` that do not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSearch(pub String);

impl std::fmt::Display for BadSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadSearch {}

impl Toolbox {
    /// A builder over `catalog` (the whole snapshot, before any policy) for `policy`'s subject.
    pub fn builder(catalog: &Catalog, policy: Policy) -> ToolboxBuilder {
        ToolboxBuilder {
            catalog: catalog.clone(),
            policy,
            defer: DeferConfig::default(),
            exposure: Exposure::Native,
            index: Index::builder(),
            starting: Vec::new(),
            reconnecting: Vec::new(),
            failed: Vec::new(),
            validators: Arc::default(),
            quarantined: Catalog::default(),
            shared: None,
            granted: false,
            background: false,
        }
    }

    /// This toolbox's index, for another toolbox of the same subject and snapshot
    /// ([`ToolboxBuilder::shared_index`]).
    pub(crate) fn shared_index(&self) -> Arc<IndexCell> {
        self.index.clone()
    }

    /// Whether the visible tools are indexed, so that a search answers without waiting for a
    /// [background](ToolboxBuilder::index_in_background) build. A host on an async runtime
    /// waits for [`Toolbox::wait_for_index`] on a blocking thread while this is false.
    pub fn is_indexed(&self) -> bool {
        self.index.is_built()
    }

    /// Blocks until the visible tools are indexed (at once if they are).
    pub fn wait_for_index(&self) {
        self.index.get();
    }

    /// The tools this subject may see (the policy's visible catalog).
    pub fn visible(&self) -> &Catalog {
        &self.visible
    }

    /// Whether a visible tool is deferred.
    pub fn is_deferred(&self, tool: &Tool) -> bool {
        self.visible.get(tool.qualified_name()).is_some_and(|id| self.deferral.is_deferred(id))
    }

    /// A new conversation, with the required tools (pins, `mode = "all"`) active.
    pub fn conversation(&self) -> Conversation {
        let mut conversation = Conversation::default();
        self.resume(&mut conversation);
        conversation
    }

    /// A conversation rebuilt from a transcript (Anthropic `tool_reference` blocks, client- or
    /// server-side; OpenAI `tool_search_output` items; toolgate's own `tool_search` results;
    /// compaction boundary records), with the
    /// required tools active. The tools it names become active again, but not shown: the next
    /// tool list shows them before they may run.
    pub fn conversation_from_transcript(&self, messages: &[Value]) -> Conversation {
        let mut conversation = Conversation {
            active: ActiveSet::from_transcript(messages, &self.visible),
            ..Conversation::default()
        };
        self.resume(&mut conversation);
        conversation
    }

    /// The compaction boundary record that carries `conversation`'s active set across a
    /// summary (read back by [`Toolbox::conversation_from_transcript`]).
    pub fn boundary(&self, conversation: &Conversation) -> Value {
        conversation.active.boundary()
    }

    /// Takes `conversation` over from the toolbox it last met (nothing to do when that was
    /// this one): every active tool whose definition changed since the conversation was shown
    /// it leaves the active set (those are returned, and named in the next search result);
    /// tools the subject does not see now are neither listed nor callable; required tools are
    /// activated. Every
    /// operation below calls this first.
    pub fn resume(&self, conversation: &mut Conversation) -> Vec<String> {
        if conversation.stamp == self.stamp {
            return Vec::new();
        }
        conversation.stamp = self.stamp;
        let mut changed = Vec::new();
        for name in conversation.active.active().to_vec() {
            let current = self.visible.get(&name).map(|id| self.visible.tool(id));
            let seen = conversation.shown.get(&name);
            // A tool that is gone (its server restarting, say) stays in the set: it is not
            // listed or callable while gone, and when it comes back in the definition this
            // conversation was shown it is loaded still.
            let keep = match (current, seen) {
                (Some(now), Some(then)) if !then.is(now) => {
                    changed.push(name.clone());
                    false
                }
                _ => true,
            };
            if !keep {
                conversation.active.unload(&name);
                conversation.recency.forget(&name);
            }
        }
        for &id in self.required.tools() {
            let name = self.visible.tool(id).qualified_name();
            if conversation.active.activate([name]).len() == 1 {
                conversation.recency.touch(name);
            }
        }
        conversation.changed.extend(changed.iter().cloned());
        conversation.news = self.news(conversation);
        changed
    }

    /// This turn's definitions, in cache-stable order: core tools (by name), the meta-tools,
    /// then the active tools in activation order; in bridge exposure the meta-tools alone.
    /// Every definition listed counts as shown. Fails when the list is over `[budget] hard`.
    pub fn tools<'a>(&'a self, conversation: &mut Conversation) -> Result<Vec<Listed<'a>>, OverHardLimit> {
        self.resume(conversation);
        let list = self.preview(conversation);
        self.budget.check_hard(list.len())?;
        for tool in &list {
            if let Listed::Borrowed(tool) = tool
                && !self.meta.iter().any(|m| std::ptr::eq(m, *tool))
            {
                conversation.shown.insert(tool.qualified_name().to_owned(), Shown::of(tool));
            }
        }
        Ok(list)
    }

    /// The definitions [`Toolbox::tools`] would send now, without counting them as shown (to
    /// tell whether a conversation's list changed). Call [`Toolbox::resume`] first when the
    /// conversation may come from another toolbox.
    pub fn preview<'a>(&'a self, conversation: &Conversation) -> Vec<Listed<'a>> {
        // `tool_search` carries the news of late servers, when the conversation has any, and
        // for a client that reads no instructions, the announcement itself.
        let meta = self.meta.iter().map(|m| {
            if m.qualified_name() != request::TOOL_SEARCH {
                return Listed::Borrowed(m);
            }
            let base = conversation.news.as_ref().unwrap_or(m);
            if !conversation.in_search {
                return if conversation.news.is_some() {
                    Listed::Owned(base.clone())
                } else {
                    Listed::Borrowed(m)
                };
            }
            let announcement = conversation
                .announcement
                .as_deref()
                .unwrap_or_else(|| self.briefing().current_announcement());
            if announcement.is_empty() {
                return Listed::Owned(base.clone());
            }
            let description = format!("{}\n\n{announcement}", base.description());
            Listed::Owned(Tool::meta(request::TOOL_SEARCH, &description, base.input_schema().clone()))
        });
        match self.exposure {
            Exposure::Bridge => meta.collect(),
            Exposure::Native if !self.deferral.enabled() => {
                self.visible.tools().iter().map(Listed::Borrowed).collect()
            }
            Exposure::Native => {
                let mut core: Vec<&Tool> = self
                    .visible
                    .ids()
                    .filter(|&id| !self.deferral.is_deferred(id))
                    .map(|id| self.visible.tool(id))
                    .collect();
                core.sort_by(|a, b| a.qualified_name().cmp(b.qualified_name()));
                let mut list: Vec<Listed<'a>> = core.into_iter().map(Listed::Borrowed).collect();
                list.extend(meta);
                for name in conversation.active.active() {
                    if let Some(id) = self.visible.get(name).filter(|&id| self.deferral.is_deferred(id)) {
                        list.push(Listed::Borrowed(self.visible.tool(id)));
                    }
                }
                list
            }
        }
    }

    /// The first turn's working set (EthanKit's preselection): the required tools, then the
    /// deferred tools that rank best against the user's message and the system prompt, within
    /// `[budget] first_turn` and each server's fairness cap. They become active.
    pub fn preselect<'a>(
        &'a self,
        conversation: &mut Conversation,
        user_message: &str,
        system_prompt: &str,
    ) -> Result<Vec<&'a Tool>, PolicyError> {
        self.resume(conversation);
        let first = self.policy.first_turn(
            &self.visible,
            &self.deferral,
            self.meta.len(),
            user_message,
            system_prompt,
        )?;
        let tools: Vec<&Tool> = first.chosen.iter().map(|&id| self.visible.tool(id)).collect();
        for tool in &tools {
            conversation.active.activate([tool.qualified_name()]);
            conversation.recency.touch(tool.qualified_name());
        }
        Ok(tools)
    }

    /// Runs one `tool_search` call with the model's `arguments` (`{query, limit?, servers?}`,
    /// checked against the meta-tool's schema): searches the visible tools, loads the deferred
    /// hits, unloads the least recently used tools past the budgets. Every match counts as
    /// shown.
    pub fn tool_search<'a>(
        &'a self,
        conversation: &mut Conversation,
        arguments: &Value,
    ) -> Result<SearchOutcome<'a>, BadSearch> {
        self.resume(conversation);
        // Built once: a search's arguments are checked against it on every call.
        static SEARCH_TOOL: std::sync::OnceLock<Tool> = std::sync::OnceLock::new();
        let search_tool = SEARCH_TOOL.get_or_init(request::tool_search_tool);
        match self.validators.check(search_tool, arguments) {
            Ok(()) => {}
            Err(Problem::Arguments(p) | Problem::Schema(p)) => return Err(BadSearch(p)),
        }
        let query = arguments["query"].as_str().unwrap_or_default();
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_SEARCH_LIMIT, |n| (n as usize).clamp(1, MAX_SEARCH_LIMIT));
        let servers: Option<Vec<String>> = arguments
            .get("servers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect());
        let (screened, hidden) = self.screen(query);
        let request = Request { servers: servers.as_deref(), ..Request::new(&screened, limit) };
        let mut sorted = conversation.active.tool_search(self.index.get(), &self.deferral, request);
        sorted.unmatched_terms.extend(hidden);
        for hit in &sorted.matches {
            let tool = self.visible.tool(hit.tool);
            conversation.shown.insert(tool.qualified_name().to_owned(), Shown::of(tool));
        }
        let fresh: Vec<String> =
            sorted.loaded().map(|id| self.visible.tool(id).qualified_name().to_owned()).collect();
        let unloaded = self.budget.enforce(
            &self.visible,
            &self.deferral,
            &mut conversation.active,
            &mut conversation.recency,
            &fresh,
        );
        let changed = std::mem::take(&mut conversation.changed);
        Ok(SearchOutcome::new(self, query.to_owned(), sorted, unloaded, changed))
    }

    /// Takes in tools a provider's own search found (Anthropic's server-side tool search):
    /// each visible one counts as shown, and the deferred ones become active (within the
    /// budgets). Names of tools this subject may not see are ignored: the provider only
    /// searched what it was sent. Returns the names that became active.
    pub fn found_by_provider(&self, conversation: &mut Conversation, names: &[&str]) -> Vec<String> {
        self.resume(conversation);
        let mut fresh = Vec::new();
        for &name in names {
            let Some(id) = self.visible.get(name) else { continue };
            let tool = self.visible.tool(id);
            conversation.shown.insert(tool.qualified_name().to_owned(), Shown::of(tool));
            if self.deferral.is_deferred(id)
                && !conversation.active.is_active(name)
                && !fresh.iter().any(|f| f == name)
            {
                fresh.push(name.to_owned());
            }
        }
        conversation.active.activate(fresh.iter().map(String::as_str));
        self.budget.enforce(
            &self.visible,
            &self.deferral,
            &mut conversation.active,
            &mut conversation.recency,
            &fresh,
        );
        fresh.retain(|n| conversation.active.is_active(n));
        fresh
    }

    /// The visible tool a name the model wrote means, or why there is none. Hidden tools are
    /// named only to the audit log (the rule in [`Denial::Forbidden`]), never to the model.
    fn resolve(&self, name: &str) -> Result<ToolId, Denial> {
        let unknown = || Denial::Unknown { name: name.to_owned() };
        let Some(id) = self.catalog.identify(name).flatten() else {
            let held = self.quarantined.identify(name).flatten().map(|id| self.quarantined.tool(id));
            return Err(match held.map(|tool| (tool, self.policy.decide(tool))) {
                Some((tool, Verdict::Allow)) => {
                    Denial::Quarantined { name: tool.qualified_name().to_owned() }
                }
                Some((tool, Verdict::Deny(rule))) => {
                    Denial::Forbidden { name: tool.qualified_name().to_owned(), rule }
                }
                None => unknown(),
            });
        };
        let tool = self.catalog.tool(id);
        if let Some(visible) = self.visible.get(tool.qualified_name()) {
            return Ok(visible);
        }
        match self.policy.decide(tool) {
            Verdict::Deny(rule) => Err(Denial::Forbidden { name: tool.qualified_name().to_owned(), rule }),
            Verdict::Allow => Err(unknown()),
        }
    }

    /// `query` with every tool name in it (a `select:` list, or a whole query that is one
    /// name) replaced by the visible tool it means, and the names that mean no visible tool
    /// (hidden, or ambiguous in letter case) taken out and returned: they find nothing, not
    /// even a visible tool whose name differs only by case.
    fn screen(&self, query: &str) -> (String, Vec<String>) {
        let trimmed = query.trim();
        let meaning = |name: &str| -> Option<Result<String, ()>> {
            let id = self.catalog.identify(name)?;
            let tool =
                id.map(|id| self.catalog.tool(id)).filter(|t| self.visible.get(t.qualified_name()).is_some());
            Some(tool.map(|t| t.qualified_name().to_owned()).ok_or(()))
        };
        if let Some(names) = crate::search::select_list(trimmed) {
            let mut kept = Vec::new();
            let mut gone = Vec::new();
            for name in names {
                match meaning(name) {
                    Some(Ok(exact)) => kept.push(exact),
                    Some(Err(())) => gone.push(name.to_owned()),
                    None => kept.push(name.to_owned()),
                }
            }
            return (format!("select:{}", kept.join(",")), gone);
        }
        match meaning(trimmed) {
            Some(Ok(exact)) => (exact, Vec::new()),
            Some(Err(())) => ("select:".to_owned(), vec![trimmed.to_owned()]),
            None => (query.to_owned(), Vec::new()),
        }
    }

    /// The execution check. A call of `name` (as the model wrote it) with `arguments` runs only
    /// if the policy allows the tool for this subject now, this conversation was shown the
    /// tool's current definition and, for a deferred tool, it is still loaded, and the
    /// arguments validate against its input schema (a schema that does not compile refuses).
    /// An allowed call of a loaded tool counts as a use for the budget's recency.
    pub fn check<'a>(
        &'a self,
        conversation: &mut Conversation,
        name: &str,
        arguments: &Value,
    ) -> Decision<'a> {
        // The bridge's `call_tool` is checked as the call it carries.
        if name == CALL_TOOL && self.exposure == Exposure::Bridge {
            return match BridgeCall::parse(arguments) {
                Ok(call) => self.check(conversation, &call.name, &Value::Object(call.arguments)),
                Err(problems) => {
                    Decision::Deny(Denial::InvalidArguments { name: CALL_TOOL.to_owned(), problems })
                }
            };
        }
        self.resume(conversation);
        let id = match self.resolve(name) {
            Ok(id) => id,
            Err(denial) => return Decision::Deny(denial),
        };
        let tool = self.visible.tool(id);
        let qualified = tool.qualified_name();
        if let Verdict::Deny(rule) = self.policy.decide(tool) {
            return Decision::Deny(Denial::Forbidden { name: qualified.to_owned(), rule });
        }
        match conversation.shown.get(qualified) {
            Some(shown) if shown.is(tool) => {}
            Some(_) => return Decision::Deny(Denial::Changed { name: qualified.to_owned() }),
            None => return Decision::Deny(Denial::NotLoaded { name: qualified.to_owned() }),
        }
        if self.deferral.is_deferred(id) && !conversation.active.is_active(qualified) {
            return Decision::Deny(Denial::NotLoaded { name: qualified.to_owned() });
        }
        match self.validators.check(tool, arguments) {
            Ok(()) => {}
            Err(Problem::Arguments(problems)) => {
                return Decision::Deny(Denial::InvalidArguments { name: qualified.to_owned(), problems });
            }
            Err(Problem::Schema(problem)) => {
                return Decision::Deny(Denial::BadSchema { name: qualified.to_owned(), problem });
            }
        }
        if conversation.active.is_active(qualified) {
            conversation.recency.touch(qualified);
        }
        Decision::Allow(tool)
    }

    /// Whether this subject may use tool `name` now, outside a call: for following what an
    /// earlier allowed call started (a task). The policy decides, as for a call; what the
    /// conversation was shown and the arguments were checked when the call was made.
    pub fn may_use(&self, name: &str) -> Result<&Tool, Denial> {
        let tool = self.visible.tool(self.resolve(name)?);
        match self.policy.decide(tool) {
            Verdict::Deny(rule) => Err(Denial::Forbidden { name: tool.qualified_name().to_owned(), rule }),
            Verdict::Allow => Ok(tool),
        }
    }

    /// The audit event of a refused call, for the host's log (policy refusals name their rule).
    pub fn refusal(&self, denial: &Denial) -> Option<AuditEvent> {
        match denial {
            Denial::Forbidden { name, rule } => Some(self.policy.event(name, rule.clone(), Action::Refused)),
            _ => None,
        }
    }
}

mod about;
mod announce;
mod bridge;
mod decider;
mod explained;
mod granted;
mod index_cell;
mod instructions;
mod offers;
mod outcome;
mod saved;
mod sub_agent;
#[cfg(test)]
mod tests;
