//! The names a query may call a tool by: its qualified name, its bare name, and its bare name
//! normalised the way qualified names are made, each in lower case.
//!
//! A map from each such name to its tools kept a copy of every name and a vector per name: 13
//! MB at 100,000 tools. This table keeps a 32-bit hash and a position per name (8 bytes), and
//! compares a candidate's name where its tool holds it.

use std::hash::{DefaultHasher, Hash, Hasher};

use toolgate_catalog::{Catalog, ToolId, naming};

/// What a name of the table is of its tool.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// The qualified name, in ASCII lower case.
    Qualified = 0,
    /// The bare name, in lower case.
    Bare = 1,
    /// The bare name normalised, in ASCII lower case (only where that differs from the bare).
    Normalized = 2,
}

impl Kind {
    fn of(tag: u32) -> Kind {
        match tag & 3 {
            0 => Kind::Qualified,
            1 => Kind::Bare,
            _ => Kind::Normalized,
        }
    }
}

/// The tools a lower-case name names.
#[derive(Debug, Default)]
pub(crate) struct ToolNames {
    /// The hash of each name and its tool's position shifted left by two bits, with the
    /// [`Kind`] in those bits; sorted by hash, and within a hash in qualified-name order.
    entries: Vec<(u32, u32)>,
}

impl ToolNames {
    /// The names of `catalog`'s tools; `order` is their positions in qualified-name order.
    pub(crate) fn new(catalog: &Catalog, order: &[u32]) -> ToolNames {
        let tools = catalog.tools();
        let mut entries = Vec::with_capacity(tools.len() * 2);
        for &pos in order {
            let t = &tools[pos as usize];
            let tag = |kind: Kind| (pos << 2) | kind as u32;
            entries.push((hash(&t.qualified_name().to_ascii_lowercase()), tag(Kind::Qualified)));
            let bare = t.name().to_lowercase();
            let normalized = naming::normalize_tool(t.name());
            if !normalized.eq_ignore_ascii_case(&bare) {
                entries.push((hash(&normalized.to_ascii_lowercase()), tag(Kind::Normalized)));
            }
            entries.push((hash(&bare), tag(Kind::Bare)));
        }
        // Stable: within a hash, the tools stay in qualified-name order.
        entries.sort_by_key(|&(h, _)| h);
        entries.shrink_to_fit();
        ToolNames { entries }
    }

    /// The tools `lower` names, or `None` if it names none: the tool whose qualified name it is
    /// (a qualified name wins over bare names equal to it; of qualified names equal in lower
    /// case, the last in order), otherwise every tool whose bare name (or normalised bare
    /// name) it is, in qualified-name order.
    pub(crate) fn get(&self, catalog: &Catalog, lower: &str) -> Option<Vec<ToolId>> {
        let h = hash(lower);
        let tools = catalog.tools();
        let mut qualified = None;
        let mut named: Vec<ToolId> = Vec::new();
        let start = self.entries.partition_point(|&(k, _)| k < h);
        for &(_, tag) in self.entries[start..].iter().take_while(|&&(k, _)| k == h) {
            let pos = (tag >> 2) as usize;
            let t = &tools[pos];
            let is = match Kind::of(tag) {
                Kind::Qualified => ascii_lower_is(t.qualified_name(), lower),
                Kind::Bare => t.name().chars().flat_map(char::to_lowercase).eq(lower.chars()),
                Kind::Normalized => ascii_lower_is(&naming::normalize_tool(t.name()), lower),
            };
            if !is {
                continue;
            }
            let id = catalog.id(pos);
            if Kind::of(tag) == Kind::Qualified {
                qualified = Some(id);
            } else if !named.contains(&id) {
                named.push(id);
            }
        }
        match qualified {
            Some(id) => Some(vec![id]),
            None => (!named.is_empty()).then_some(named),
        }
    }
}

/// Whether `name` in ASCII lower case is `lower`.
fn ascii_lower_is(name: &str, lower: &str) -> bool {
    name.len() == lower.len() && name.bytes().map(|b| b.to_ascii_lowercase()).eq(lower.bytes())
}

/// The hash a name is filed under.
fn hash(name: &str) -> u32 {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    (hasher.finish() >> 32) as u32
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use toolgate_catalog::ToolSpec;

    use super::*;

    /// What the table replaced: a map from every name to its tools, built the same way.
    fn map_of_names(catalog: &Catalog, order: &[u32]) -> HashMap<String, Vec<ToolId>> {
        let tools = catalog.tools();
        let mut names: HashMap<String, Vec<ToolId>> = HashMap::new();
        let mut qualified = Vec::new();
        for &pos in order {
            let (t, id) = (&tools[pos as usize], catalog.id(pos as usize));
            qualified.push((t.qualified_name().to_ascii_lowercase(), id));
            let bare = t.name().to_lowercase();
            let normalized = naming::normalize_tool(t.name());
            let extra = (!normalized.eq_ignore_ascii_case(&bare)).then(|| normalized.to_ascii_lowercase());
            for key in std::iter::once(bare).chain(extra) {
                let v = names.entry(key).or_default();
                if !v.contains(&id) {
                    v.push(id);
                }
            }
        }
        for (k, id) in qualified {
            names.insert(k, vec![id]);
        }
        names
    }

    proptest::proptest! {
        #[test]
        fn every_name_names_what_a_map_of_every_name_names(
            tools in proptest::collection::btree_set(("[ab]{1,2}", "[aAbB_é É.]{1,5}"), 0..40),
            asked in proptest::collection::vec("[aAbB_é É.]{0,6}", 0..20),
        ) {
            let catalog = tools
                .iter()
                .fold(Catalog::builder(), |b, (server, name)| b.tool(ToolSpec::mcp(server, name, "")))
                .build()
                .unwrap();
            let ts = catalog.tools();
            let mut order: Vec<u32> = (0..catalog.len() as u32).collect();
            order.sort_by(|&a, &b| ts[a as usize].qualified_name().cmp(ts[b as usize].qualified_name()));
            let table = ToolNames::new(&catalog, &order);
            let map = map_of_names(&catalog, &order);
            // Every name of the map, and names that may be of no tool.
            let asked = asked.iter().map(|a| a.to_lowercase()).chain(map.keys().cloned());
            for lower in asked {
                proptest::prop_assert_eq!(table.get(&catalog, &lower), map.get(&lower).cloned(), "{}", lower);
            }
        }
    }
}
