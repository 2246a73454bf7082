//! defer: here is a catalog, tell me which tools the model sees in full and which only by name.
//!
//! The rule is Claude Code's `isDeferredTool`, in its order:
//! always-load → core; MCP → deferred; `tool_search` → core; a built-in → deferred only if it
//! says `should_defer`. On top of it, a [`DeferMode`]: `on` defers by that rule, `off` defers
//! nothing, and `auto` defers only when the deferred definitions take at least a share of the
//! context window (10% by default), counted with a real tokenizer.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::catalog::{Brand, Catalog, Origin, TOOL_SEARCH, Tool, ToolId};
use crate::tokens::TokenCounter;

/// Whether deferral is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeferMode {
    /// Always defer by the rule.
    On,
    /// Never defer: every definition is sent, and there is no `tool_search`.
    Off,
    /// Defer only when the deferred definitions are large enough to matter.
    #[default]
    Auto,
}

impl FromStr for DeferMode {
    type Err = String;
    fn from_str(s: &str) -> Result<DeferMode, String> {
        match s {
            "on" => Ok(DeferMode::On),
            "off" => Ok(DeferMode::Off),
            "auto" => Ok(DeferMode::Auto),
            other => Err(format!("unknown mode `{other}` (expected on, off or auto)")),
        }
    }
}

impl fmt::Display for DeferMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeferMode::On => "on",
            DeferMode::Off => "off",
            DeferMode::Auto => "auto",
        })
    }
}

/// How deferral is decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeferConfig {
    /// On, off or auto.
    pub mode: DeferMode,
    /// In auto mode, the share of the context window the deferred definitions must take.
    pub auto_threshold: f64,
    /// The model's context window in tokens.
    pub context_window: usize,
}

impl Default for DeferConfig {
    fn default() -> DeferConfig {
        DeferConfig { mode: DeferMode::Auto, auto_threshold: 0.10, context_window: 200_000 }
    }
}

/// Claude Code's `isDeferredTool`, exactly.
pub fn is_deferred(tool: &Tool) -> bool {
    if tool.always_load() {
        return false;
    }
    if tool.origin() == Origin::Mcp {
        return true;
    }
    if tool.name() == TOOL_SEARCH {
        return false;
    }
    tool.should_defer()
}

/// The deferral decision for one catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Deferral {
    enabled: bool,
    deferred: Vec<bool>,
    deferred_tokens: Option<usize>,
    threshold_tokens: usize,
    /// The catalog decided for: an id of another is refused.
    brand: Brand,
}

impl Deferral {
    /// Decides for `catalog`. Only `auto` counts tokens.
    pub fn decide(catalog: &Catalog, config: &DeferConfig) -> Deferral {
        let deferred: Vec<bool> = catalog.tools().iter().map(is_deferred).collect();
        let threshold_tokens = (config.context_window as f64 * config.auto_threshold).ceil() as usize;
        let (enabled, deferred_tokens) = match config.mode {
            DeferMode::On => (true, None),
            DeferMode::Off => (false, None),
            DeferMode::Auto => {
                let counter = TokenCounter::get();
                let tokens: usize = catalog
                    .ids()
                    .filter(|id| deferred[id.index()])
                    .map(|id| counter.definition(catalog.tool(id)))
                    .sum();
                (tokens >= threshold_tokens, Some(tokens))
            }
        };
        Deferral { enabled, deferred, deferred_tokens, threshold_tokens, brand: catalog.brand() }
    }

    /// Whether tool search is used at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether `id` is deferred (false for every tool when deferral is off).
    ///
    /// # Panics
    /// When `id` is of a catalog other than the one decided for.
    pub fn is_deferred(&self, id: ToolId) -> bool {
        assert!(id.brand() == self.brand, "a tool id of another catalog was asked about its deferral");
        self.enabled && self.deferred[id.index()]
    }

    /// In auto mode, the tokens of the deferred definitions.
    pub fn deferred_tokens(&self) -> Option<usize> {
        self.deferred_tokens
    }

    /// The token count at which auto mode turns deferral on.
    pub fn threshold_tokens(&self) -> usize {
        self.threshold_tokens
    }
}

/// Deferral across a host's catalog snapshots: decided afresh for each new one, and once on,
/// on for good. A catalog that shrinks below `auto`'s threshold (an upstream down, a server
/// turned off) does not flood every client's tool list with full definitions again, and a
/// model that learned to search keeps searching. A host that serves some clients in bridge
/// exposure (`call_tool` only) defers from the start: bridge has nothing without it.
#[derive(Debug, Default)]
pub struct DeferLatch {
    on: AtomicBool,
}

impl DeferLatch {
    /// Whether tools are deferred over `catalog`: `bridge`, the latch already on, or
    /// [`Deferral::decide`] says so; an answer of yes is kept for every later snapshot.
    pub fn decide(&self, catalog: &Catalog, config: &DeferConfig, bridge: bool) -> bool {
        let on = bridge || self.on.load(Ordering::Relaxed) || Deferral::decide(catalog, config).enabled();
        if on {
            self.on.store(true, Ordering::Relaxed);
        }
        on
    }

    /// What [`DeferLatch::decide`] would answer, keeping nothing.
    pub fn would_decide(&self, catalog: &Catalog, config: &DeferConfig, bridge: bool) -> bool {
        bridge || self.on.load(Ordering::Relaxed) || Deferral::decide(catalog, config).enabled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolSpec;

    #[test]
    fn rule_follows_is_deferred_tool() {
        let mut always = ToolSpec::mcp("s", "pinned", "");
        always.always_load = true;
        let mut lazy = ToolSpec::builtin("WebSearch", "");
        lazy.should_defer = true;
        let cat = Catalog::builder()
            .tool(ToolSpec::mcp("s", "t", ""))
            .tool(always)
            .tool(ToolSpec::builtin("Read", ""))
            .tool(lazy)
            .build()
            .unwrap();
        let got: Vec<bool> = cat.tools().iter().map(is_deferred).collect();
        assert_eq!(got, [true, false, false, true]);
        assert!(!is_deferred(&crate::request::tool_search_tool()));
    }

    #[test]
    fn auto_mode_defers_only_past_the_threshold() {
        let cat = Catalog::embedded();
        let big = Deferral::decide(&cat, &DeferConfig::default());
        assert!(big.enabled());
        let tokens = big.deferred_tokens().unwrap();
        assert!(tokens > 20_000, "{tokens}");
        // The same catalog in a context window so large that 10% is more than all of it.
        let roomy = DeferConfig { context_window: tokens * 20, ..DeferConfig::default() };
        assert!(!Deferral::decide(&cat, &roomy).enabled());
        let off = Deferral::decide(&cat, &DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() });
        assert!(!off.is_deferred(cat.id(0)));
    }

    #[test]
    fn once_deferral_is_on_it_stays_on_whatever_the_catalog() {
        let cat = Catalog::embedded();
        let tokens = Deferral::decide(&cat, &DeferConfig::default()).deferred_tokens().unwrap();
        let roomy = DeferConfig { context_window: tokens * 20, ..DeferConfig::default() };
        let small = Catalog::builder().tool(ToolSpec::mcp("s", "t", "one tool")).build().unwrap();
        let latch = DeferLatch::default();
        assert!(!latch.decide(&small, &DeferConfig::default(), false), "one tool: off");
        assert!(!latch.decide(&cat, &roomy, false), "under the threshold: off");
        assert!(latch.decide(&cat, &DeferConfig::default(), false), "past it: on");
        assert!(latch.decide(&small, &DeferConfig::default(), false), "and on for good");
        let off = DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() };
        assert!(DeferLatch::default().decide(&small, &off, true), "bridge defers from the start");
    }
}
