//! A catalog's lookups by name: the exact qualified name ([`Names::get`]) and the same in any
//! letter case ([`Names::folded`]). Neither keeps a copy of a name: they keep positions and
//! hashes, and compare the candidates' names where the tools hold them. At 100,000 tools a map
//! of names cost 11 MB (every qualified name twice); the table costs 1 MB.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, OnceLock};

use crate::Tool;

/// A slot no tool holds.
const EMPTY: u32 = u32::MAX;

/// The positions of a catalog's tools, found by name.
#[derive(Clone, Default)]
pub(crate) struct Names {
    /// Open addressing by the hash of the qualified name, probing linearly: each slot the
    /// position of a tool or [`EMPTY`]; at least twice as many slots as tools, a power of two.
    slots: Arc<[u32]>,
    /// The hash of each tool's qualified name in lower case and the tool's position, sorted:
    /// made the first time a name is looked up in another letter case, so that a lookup reads
    /// the few tools of that hash, not every name lowered (at 100,000 tools that scan was 3.5
    /// ms of each `tool_search`, whose query may be a name).
    folded: Arc<OnceLock<Vec<(u64, u32)>>>,
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Names").field("slots", &self.slots.len()).finish_non_exhaustive()
    }
}

impl Names {
    /// The table of `tools`, whose qualified names are distinct (the first of a repeated name is
    /// the one found).
    pub(crate) fn new(tools: &[Tool]) -> Names {
        let size = (tools.len() * 2).next_power_of_two().max(2);
        let mut slots = vec![EMPTY; size];
        let mask = size - 1;
        for (pos, tool) in tools.iter().enumerate() {
            let mut slot = hash(&tool.qualified) as usize & mask;
            loop {
                match slots[slot] {
                    EMPTY => {
                        slots[slot] = pos as u32;
                        break;
                    }
                    held if tools[held as usize].qualified == tool.qualified => break,
                    _ => slot = (slot + 1) & mask,
                }
            }
        }
        Names { slots: slots.into(), folded: Arc::default() }
    }

    /// The position of the tool named `qualified` exactly.
    pub(crate) fn get(&self, tools: &[Tool], qualified: &str) -> Option<u32> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut slot = hash(qualified) as usize & mask;
        loop {
            match self.slots[slot] {
                EMPTY => return None,
                pos if tools[pos as usize].qualified == qualified => return Some(pos),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// The positions of the tools whose qualified name in lower case is `lower`, in order.
    pub(crate) fn folded<'a>(&'a self, tools: &'a [Tool], lower: &'a str) -> impl Iterator<Item = u32> + 'a {
        let folded = self.folded.get_or_init(|| {
            let mut folded: Vec<(u64, u32)> =
                tools.iter().zip(0..).map(|(t, pos)| (hash(&t.qualified.to_lowercase()), pos)).collect();
            folded.sort_unstable();
            folded
        });
        let h = hash(lower);
        folded[folded.partition_point(|&(k, _)| k < h)..]
            .iter()
            .take_while(move |&&(k, _)| k == h)
            .filter(move |&&(_, pos)| tools[pos as usize].qualified.to_lowercase() == lower)
            .map(|&(_, pos)| pos)
    }
}

/// The hash a name is filed under.
fn hash(name: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use crate::{Catalog, ToolSpec};

    proptest::proptest! {
        #[test]
        fn every_name_finds_its_tool_and_no_other_name_finds_one(
            names in proptest::collection::btree_set("[a-d]{1,4}", 0..60),
            absent in proptest::collection::vec("[a-e]{0,5}", 0..20),
        ) {
            let cat = names
                .iter()
                .fold(Catalog::builder(), |b, n| b.tool(ToolSpec::mcp("s", n, "")))
                .build()
                .unwrap();
            for (pos, tool) in cat.tools().iter().enumerate() {
                proptest::prop_assert_eq!(cat.get(tool.qualified_name()), Some(cat.id(pos)));
            }
            for name in absent {
                let qualified = format!("s__{name}");
                let listed = cat.tools().iter().position(|t| t.qualified_name() == qualified);
                proptest::prop_assert_eq!(cat.get(&qualified), listed.map(|pos| cat.id(pos)));
            }
        }
    }
}
