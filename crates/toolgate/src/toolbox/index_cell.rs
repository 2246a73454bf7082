//! index_cell: a toolbox's search index, built with the toolbox or on a thread of its own.
//!
//! Indexing 100,000 tools takes one to two seconds of a gateway's start, and nothing but a
//! search reads the index: the instructions, the tool list and a call's checks do not. A host
//! that builds its toolboxes [in the background](super::ToolboxBuilder::index_in_background)
//! publishes a snapshot as soon as the policy is applied, and the first search waits for the
//! index instead of every client's `initialize`.

use std::sync::{Arc, Mutex, OnceLock};

use crate::catalog::Catalog;
use crate::search::{Index, IndexBuilder, Strategy};

/// One background build at a time, in the process: snapshots published in quick succession
/// (servers listing one after another at a gateway's start) would otherwise build side by
/// side, each with its own peak of memory, and every one but the last for a toolbox already
/// dropped. A build that waits here starts only if its toolbox is still held by someone.
static BUILDS: Mutex<()> = Mutex::new(());

/// The index of one toolbox's visible tools (shared by the toolboxes of one subject and
/// snapshot), built once: by whoever asks first, the thread started for it or a search.
#[derive(Debug)]
pub(crate) struct IndexCell {
    /// The tools indexed, in order.
    catalog: Catalog,
    builder: IndexBuilder,
    index: OnceLock<Index>,
}

impl IndexCell {
    /// The index of `catalog` by `builder`, built now.
    pub(crate) fn built(builder: IndexBuilder, catalog: &Catalog) -> Arc<IndexCell> {
        let cell = IndexCell::new(builder, catalog);
        cell.build();
        Arc::new(cell)
    }

    /// The index of `catalog` by `builder`, built on a thread of its own; [`IndexCell::get`]
    /// waits for it. Where no thread can be started it is built now.
    pub(crate) fn in_background(builder: IndexBuilder, catalog: &Catalog) -> Arc<IndexCell> {
        let cell = Arc::new(IndexCell::new(builder, catalog));
        if let Err(e) = cell.start() {
            tracing::warn!("no thread to index the tools on ({e}); indexing them now");
            cell.build();
        }
        cell
    }

    /// Starts the thread that builds this index when its turn comes ([`BUILDS`]), unless the
    /// cell is dropped by then; the thread answers whether it built.
    fn start(self: &Arc<IndexCell>) -> std::io::Result<std::thread::JoinHandle<bool>> {
        let weak = Arc::downgrade(self);
        std::thread::Builder::new().name("toolgate-index".to_owned()).spawn(move || {
            let _turn = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
            let Some(cell) = weak.upgrade() else { return false };
            let started = std::time::Instant::now();
            cell.build();
            tracing::debug!(
                tools = cell.catalog.len(),
                ms = started.elapsed().as_millis() as u64,
                "tools indexed"
            );
            true
        })
    }

    fn new(builder: IndexBuilder, catalog: &Catalog) -> IndexCell {
        IndexCell { catalog: catalog.clone(), builder, index: OnceLock::new() }
    }

    /// The index. One not built yet is built here, in its turn among the background builds
    /// ([`BUILDS`]): a search that came before its thread's turn must not build beside another
    /// snapshot's index, both at their peak of memory. A build that panicked left nothing: the
    /// next caller builds again.
    pub(crate) fn get(&self) -> &Index {
        if let Some(index) = self.index.get() {
            return index;
        }
        let _turn = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
        self.build()
    }

    /// The index, built now unless it is (or waited for, while another thread builds it).
    fn build(&self) -> &Index {
        self.index.get_or_init(|| self.builder.clone().build(&self.catalog))
    }

    /// The strategy the index ranks with once built (`lexical` for a `bert` index without a
    /// usable model); until then, the one asked for.
    pub(crate) fn strategy(&self) -> Strategy {
        self.index.get().map_or(self.builder.strategy_of(), Index::strategy)
    }

    /// Whether [`IndexCell::get`] returns at once.
    pub(crate) fn is_built(&self) -> bool {
        self.index.get().is_some()
    }

    /// The tools indexed.
    #[cfg(test)]
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Whether this is the index `builder` would build over `visible`: the same strategy
    /// asked for, and exactly the same tools (names and definitions, in order).
    pub(crate) fn serves(&self, builder: &IndexBuilder, visible: &Catalog) -> bool {
        let theirs = self.catalog.tools();
        self.builder.strategy_of() == builder.strategy_of()
            && theirs.len() == visible.len()
            && theirs
                .iter()
                .zip(visible.tools())
                .all(|(a, b)| a.qualified_name() == b.qualified_name() && a.hash() == b.hash())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Policy;
    use crate::catalog::ToolSpec;
    use crate::toolbox::{DeferConfig, DeferMode, Toolbox};

    fn catalog() -> Catalog {
        let specs = [
            ToolSpec::mcp("fs", "read_file", "Read a file"),
            ToolSpec::mcp("fs", "write_file", "Write a file"),
            ToolSpec::mcp("mail", "send_email", "Send an email"),
        ];
        specs.into_iter().fold(Catalog::builder(), |b, s| b.tool(s)).build().unwrap()
    }

    /// Holds every background build back until the guard is dropped.
    fn hold_builds() -> std::sync::MutexGuard<'static, ()> {
        BUILDS.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn a_toolbox_indexed_in_the_background_lists_and_checks_before_its_index_and_searches_alike() {
        let cat = catalog();
        let on = DeferConfig { mode: DeferMode::On, ..DeferConfig::default() };
        let now = Toolbox::builder(&cat, Policy::permissive()).defer(on).build().unwrap();
        let held = hold_builds();
        let later =
            Toolbox::builder(&cat, Policy::permissive()).defer(on).index_in_background(true).build().unwrap();
        // The instructions, the tool list and a call's check need no index.
        let mut chat = later.conversation();
        assert!(!later.briefing().instructions(&mut chat).is_empty());
        assert_eq!(later.tools(&mut chat).unwrap().len(), 1, "tool_search alone");
        assert!(!later.check(&mut chat, "fs__write_file", &json!({})).is_allow());
        assert!(!later.is_indexed(), "nothing above read the index");
        // A search waits for its turn among the background builds: held back, it waits.
        let search = json!({"query": "send an email to the team"});
        let (sent, searched) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| sent.send(later.tool_search(&mut chat, &search).unwrap().text()).unwrap());
            std::thread::sleep(std::time::Duration::from_millis(100));
            let waited = searched.try_recv().is_err();
            drop(held);
            assert!(waited, "the search waited for the builds held back");
        });
        let found = searched.recv().unwrap();
        assert!(later.is_indexed());
        let mut other = now.conversation();
        let expected = now.tool_search(&mut other, &search).unwrap();
        assert_eq!(found, expected.text());
        assert!(later.check(&mut chat, "mail__send_email", &json!({})).is_allow());
    }

    #[test]
    fn a_background_build_whose_toolbox_is_gone_by_its_turn_does_not_run() {
        let held = hold_builds();
        let gone = Arc::new(IndexCell::new(Index::builder(), &catalog()));
        let thread = gone.start().unwrap();
        drop(gone);
        let kept = Arc::new(IndexCell::new(Index::builder(), &catalog()));
        let other = kept.start().unwrap();
        assert!(!kept.is_built(), "its turn has not come");
        assert_eq!(kept.strategy(), Strategy::DEFAULT, "until built, the strategy asked for");
        drop(held);
        assert!(!thread.join().unwrap(), "nothing to build for");
        assert!(other.join().unwrap());
        assert!(kept.is_built());
        assert_eq!(kept.get().catalog().len(), 3);
    }
}
