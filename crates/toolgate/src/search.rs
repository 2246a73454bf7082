//! Retrieval's seam: the names a host sets or reads about the ranking, and nothing of how it
//! ranks. The ranking itself (the index, its tuning, the lexical baselines, the embedding
//! models and the evaluation over labelled request sets) is the `toolgate-search` crate, which
//! a host needs only to measure or tune a ranking; the toolbox builds and asks its index.
//!
//! A host picks a ranker ([`Strategy`], or [`SearchConfig`] as `toolgate.toml` writes it),
//! builds the index a toolbox searches with ([`IndexBuilder`], the model an embedding ranker
//! reads and the error when it cannot, [`ModelError`]), and shows why a tool ranked where it did
//! ([`Explanation`], [`score_json`]). A [`Request`] is one query with its limit and turns.

pub use toolgate_search::{
    AUTO_CACHE_MIN_TOOLS, Explanation, Index, IndexBuilder, IndexCache, ModelError, Request, SearchConfig,
    Strategy, UnknownStrategy, score_json,
};
pub(crate) use toolgate_search::{Found, Hit, select_list};

// The relevance cut, for the toolbox's tests only.
#[cfg(test)]
pub(crate) use toolgate_search::LoadCut;
