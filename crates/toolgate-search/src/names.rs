//! The names a query may call a tool by: its qualified name, its bare name, and its bare name
//! normalised the way qualified names are made, each in lower case.
//!
//! A map from each such name to its tools kept a copy of every name and a vector per name: 13
//! MB at 100,000 tools. This table keeps, per distinct name, its hash and the range of its
//! tools in one array (2.5 to 4 MB), and compares one tool's name where the tool holds it.

use toolgate_catalog::{Catalog, Tool, ToolId, naming};

/// What a name of the table is of its tools.
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

    /// The name of this kind `tool` has.
    fn key(self, tool: &Tool) -> String {
        match self {
            Kind::Qualified => tool.qualified_name().to_ascii_lowercase(),
            Kind::Bare => tool.name().to_lowercase(),
            Kind::Normalized => naming::normalize_tool(tool.name()).to_ascii_lowercase(),
        }
    }

    /// Whether the name of this kind `tool` has is `lower`, without making it.
    fn is(self, tool: &Tool, lower: &str) -> bool {
        match self {
            Kind::Qualified => ascii_lower_is(tool.qualified_name(), lower),
            Kind::Bare => tool.name().chars().flat_map(char::to_lowercase).eq(lower.chars()),
            Kind::Normalized => ascii_lower_is(&naming::normalize_tool(tool.name()), lower),
        }
    }
}

/// One distinct name of one kind.
#[derive(Debug, Clone, Copy)]
struct Group {
    hash: u32,
    /// Where its tools start in [`ToolNames::tools`], shifted left by two bits, with the
    /// [`Kind`] in those bits.
    tag: u32,
    /// How many tools.
    len: u32,
}

/// The tools a lower-case name names.
#[derive(Debug, Default)]
pub(crate) struct ToolNames {
    /// Sorted by hash.
    groups: Vec<Group>,
    /// Each group's tools, by position in the catalog, in qualified-name order.
    tools: Vec<u32>,
}

impl ToolNames {
    /// The names of `catalog`'s tools; `order` is their positions in qualified-name order.
    pub(crate) fn new(catalog: &Catalog, order: &[u32]) -> ToolNames {
        let tools = catalog.tools();
        // (hash, position << 2 | kind), in qualified-name order: each core its share of the
        // tools, since making and hashing every tool's names was most of the table's build.
        let entries_of = |share: &[u32]| {
            let mut entries = Vec::with_capacity(share.len() * 2);
            for &pos in share {
                let t = &tools[pos as usize];
                let tag = |kind: Kind| (pos << 2) | kind as u32;
                entries.push((hash(&Kind::Qualified.key(t)), tag(Kind::Qualified)));
                let bare = Kind::Bare.key(t);
                let normalized = Kind::Normalized.key(t);
                if normalized != bare {
                    entries.push((hash(&normalized), tag(Kind::Normalized)));
                }
                entries.push((hash(&bare), tag(Kind::Bare)));
            }
            entries
        };
        let shares = order.chunks(crate::cores::share_len(order.len())).collect();
        let mut entries: Vec<(u32, u32)> = crate::cores::on_parts(shares, entries_of).concat();
        // Stable: within a hash, the tools stay in qualified-name order.
        entries.sort_by_key(|&(h, _)| h);
        let mut names = ToolNames { groups: Vec::new(), tools: Vec::with_capacity(entries.len()) };
        let tool_of = |tag: u32| &tools[(tag >> 2) as usize];
        for run in entries.chunk_by(|a, b| a.0 == b.0) {
            let h = run[0].0;
            if let [(_, tag)] = run {
                // One name of one tool, almost every run.
                names.groups.push(Group {
                    hash: h,
                    tag: (names.tools.len() as u32) << 2 | (tag & 3),
                    len: 1,
                });
                names.tools.push(tag >> 2);
                continue;
            }
            // The names of one hash are almost always one name; tell them apart by comparing.
            let mut keys: Vec<(Kind, String)> = Vec::new();
            let mut members: Vec<Vec<u32>> = Vec::new();
            for &(_, tag) in run {
                let kind = Kind::of(tag);
                match keys.iter().position(|(k, key)| *k == kind && kind.is(tool_of(tag), key)) {
                    Some(g) => members[g].push(tag >> 2),
                    None => {
                        keys.push((kind, kind.key(tool_of(tag))));
                        members.push(vec![tag >> 2]);
                    }
                }
            }
            for ((kind, _), positions) in keys.iter().zip(members) {
                let start = names.tools.len() as u32;
                names.groups.push(Group {
                    hash: h,
                    tag: (start << 2) | *kind as u32,
                    len: positions.len() as u32,
                });
                names.tools.extend(positions);
            }
        }
        names.groups.shrink_to_fit();
        names
    }

    /// The tools `lower` names, or `None` if it names none: the tool whose qualified name it is
    /// (a qualified name wins over bare names equal to it; of qualified names equal in lower
    /// case, the last in order), otherwise every tool whose bare name (or normalised bare
    /// name) it is, in qualified-name order (`name_rank`: each tool's place in that order).
    pub(crate) fn get(&self, catalog: &Catalog, name_rank: &[u32], lower: &str) -> Option<Vec<ToolId>> {
        let h = hash(lower);
        let tools = catalog.tools();
        let mut named: Vec<u32> = Vec::new();
        let first = self.groups.partition_point(|g| g.hash < h);
        for g in self.groups[first..].iter().take_while(|g| g.hash == h) {
            let start = (g.tag >> 2) as usize;
            let positions = &self.tools[start..start + g.len as usize];
            let kind = Kind::of(g.tag);
            if !kind.is(&tools[positions[0] as usize], lower) {
                continue;
            }
            if kind == Kind::Qualified {
                let last = *positions.last().expect("a group has a tool");
                return Some(vec![catalog.id(last as usize)]);
            }
            named.extend_from_slice(positions);
        }
        // A bare name and another tool's normalised name may be the same name.
        named.sort_unstable_by_key(|&pos| name_rank[pos as usize]);
        named.dedup();
        (!named.is_empty()).then(|| named.iter().map(|&pos| catalog.id(pos as usize)).collect())
    }
}

/// Whether `name` in ASCII lower case is `lower`.
fn ascii_lower_is(name: &str, lower: &str) -> bool {
    name.len() == lower.len() && name.bytes().map(|b| b.to_ascii_lowercase()).eq(lower.bytes())
}

/// The hash a name is filed under.
#[cfg(not(test))]
fn hash(name: &str) -> u32 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    (hasher.finish() >> 32) as u32
}

/// Under test, names are filed by their length alone, so that many names share a hash and the
/// table has to tell them apart.
#[cfg(test)]
fn hash(name: &str) -> u32 {
    name.len() as u32 % 4
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
            let mut name_rank = vec![0; order.len()];
            for (rank, &pos) in (0u32..).zip(&order) {
                name_rank[pos as usize] = rank;
            }
            let table = ToolNames::new(&catalog, &order);
            let map = map_of_names(&catalog, &order);
            // Every name of the map, and names that may be of no tool.
            let asked = asked.iter().map(|a| a.to_lowercase()).chain(map.keys().cloned());
            for lower in asked {
                proptest::prop_assert_eq!(table.get(&catalog, &name_rank, &lower), map.get(&lower).cloned(), "{}", lower);
            }
        }
    }
}
