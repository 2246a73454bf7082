//! The `bm25-crate` strategy: the `bm25` crate (2.3) configured as Codex configures it, a
//! baseline for the ranking a user of Codex gets (needs the `bm25-crate` feature).
//!
//! Codex builds one text per tool from its name, server, description and input-schema
//! properties, and ranks with `SearchEngineBuilder::with_documents(Language::English, ...)`:
//! the crate's default tokenizer (Unicode words, English stop words, Snowball stemming),
//! k1 1.2, b 0.75. Here a tool's text is its name split into parts, its server, its
//! description and its schema property names and descriptions.

use bm25::{Document, Language, SearchEngine, SearchEngineBuilder};

use super::text::split_identifier;
use toolgate_catalog::Catalog;

/// The `bm25` crate's search engine over a catalog, tools keyed by their position.
pub(crate) struct CodexIndex {
    engine: SearchEngine<u32>,
}

impl std::fmt::Debug for CodexIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The engine's own Debug prints every document.
        f.write_str("CodexIndex")
    }
}

impl CodexIndex {
    pub(crate) fn build(catalog: &Catalog) -> CodexIndex {
        let documents = catalog.tools().iter().enumerate().map(|(i, t)| {
            let mut text = split_identifier(t.name());
            for part in [t.server(), t.description()] {
                text.push(' ');
                text.push_str(part);
            }
            for s in t.schema().words() {
                text.push(' ');
                text.push_str(s);
            }
            Document::new(i as u32, text)
        });
        let engine = SearchEngineBuilder::<u32>::with_documents(Language::English, documents).build();
        CodexIndex { engine }
    }

    /// The `limit` best tools for `query`, as (tool position, score), best first.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(u32, f32)> {
        self.engine.search(query, limit).into_iter().map(|r| (r.document.id, r.score)).collect()
    }
}
