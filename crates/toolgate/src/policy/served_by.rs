//! Which upstream serves each of some tools: for the policy, those of another server.

use std::collections::HashMap;

use crate::catalog::{Catalog, ToolId};

/// No upstream was given for the tool.
const NONE: u32 = u32::MAX;

/// The upstream serving each of some tools of a catalog, by qualified name. As the policy's
/// ([`CatalogState::served_by`](crate::toolbox::CatalogState)) it holds the tools an upstream
/// serves for another server (a host's catalog file that holds several servers' tools): that
/// upstream's `[servers.NAME]` rules apply to the tool too
/// ([`Policy::decide`](super::Policy::decide)). Kept by the tool's position in the catalog it
/// was made for, an index into the few upstreams: a map by name held a copy of every qualified
/// name and of its upstream's (at 100,000 tools about 13 MB against 0.4 MB).
#[derive(Debug, Clone, Default)]
pub struct ServedBy {
    /// The catalog whose positions `of` follows.
    catalog: Catalog,
    /// Per tool of `catalog`: the index of its upstream in `upstreams`, or [`NONE`].
    of: Vec<u32>,
    /// The upstreams named, each once.
    upstreams: Vec<String>,
}

impl ServedBy {
    /// For tools of `catalog` (ids of it), the upstream serving each; a tool named twice keeps
    /// the last upstream given. Ids of another catalog are ignored.
    pub fn new<'a>(catalog: &Catalog, served: impl IntoIterator<Item = (ToolId, &'a str)>) -> ServedBy {
        let mut of = vec![NONE; catalog.len()];
        let mut upstreams: Vec<String> = Vec::new();
        let mut index_of: HashMap<&'a str, u32> = HashMap::new();
        for (id, upstream) in served {
            if id.brand() != catalog.brand() {
                continue;
            }
            of[id.index()] = *index_of.entry(upstream).or_insert_with(|| {
                upstreams.push(upstream.to_owned());
                upstreams.len() as u32 - 1
            });
        }
        ServedBy { catalog: catalog.clone(), of, upstreams }
    }

    /// The upstream serving the tool named `qualified`, if one was given for it.
    pub fn get(&self, qualified: &str) -> Option<&str> {
        let id = self.catalog.get(qualified)?;
        self.upstreams.get(self.of[id.index()] as usize).map(String::as_str)
    }

    /// How many tools have an upstream.
    pub fn len(&self) -> usize {
        self.of.iter().filter(|&&o| o != NONE).count()
    }

    /// True when no tool has one.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;

    #[test]
    fn a_tool_names_the_upstream_it_was_given_and_others_none() {
        let catalog = ["a", "b", "c", "d"]
            .iter()
            .fold(Catalog::builder(), |b, n| b.tool(ToolSpec::mcp("s", n, "")))
            .build()
            .unwrap();
        let other = Catalog::builder().tool(ToolSpec::mcp("t", "x", "")).build().unwrap();
        let id = |n: &str| catalog.get(n).unwrap();
        let served = ServedBy::new(
            &catalog,
            [(id("s__a"), "hub"), (id("s__c"), "files"), (id("s__d"), "hub"), (other.id(0), "stray")],
        );
        assert_eq!(served.get("s__a"), Some("hub"));
        assert_eq!(served.get("s__b"), None);
        assert_eq!(served.get("s__c"), Some("files"));
        assert_eq!(served.get("s__d"), Some("hub"));
        assert_eq!(served.get("t__x"), None, "an id of another catalog names nothing");
        assert_eq!(served.get("s__zz"), None);
        assert_eq!(served.len(), 3);
        assert!(ServedBy::default().is_empty() && ServedBy::default().get("s__a").is_none());
    }
}
