//! snapshot: here are the upstreams' listings and the configuration, give me the merged catalog
//! every subject's toolbox is built over. A pure function: no locks, no IO, no MCP types.
//!
//! Qualified names are assigned once, over the whole catalog of every usable upstream, before
//! any policy: a deny rule or a profile never renames what it leaves visible, and every subject
//! sees the same name for the same tool. A tool is identified by its configured server key
//! (`ToolSpec::server`) and its upstream name. An upstream's own `alwaysLoad` mark counts only
//! where the configuration trusts that server (`trust_always_load`); `always_load` patterns
//! always do. A static catalog file may hold tools of several servers: they keep their own
//! server names, and the `[servers.NAME]` rules of the upstream that serves them apply too.
//! The operator's overrides (`[servers.NAME.tools.TOOL]`, [`crate::overrides`]) are applied
//! first, so that everything after sees the tool as the operator wrote it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use toolgate::toolbox::{CatalogState, ServedBy};
use toolgate::{Catalog, Policy, ToolSpec};

use crate::pins::Pins;

/// How one upstream stands, for the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing<'a> {
    /// Starting: its tools are not listed yet.
    Starting,
    /// Starting, its tools served as it listed them last time.
    Remembered,
    /// Ready or static: its tools are served.
    Serving,
    /// Failed, with the reason.
    Failed(&'a str),
    /// Turned off in the configuration.
    Disabled,
}

/// What one upstream listed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listing<'a> {
    /// The upstream's configured name.
    pub(crate) upstream: &'a str,
    /// Where it stands.
    pub(crate) standing: Standing<'a>,
    /// Its tools, as listed (each with its configured server key).
    pub(crate) tools: &'a [Arc<ToolSpec>],
}

/// The merged view of every usable upstream at one moment. Immutable; replaced as a whole.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// What the decider is given: every tool of every ready or static upstream, named once;
    /// the tools of pinned servers held back until approved (in no subject's catalog); the
    /// upstreams still starting (sorted) and failed (with their reasons, sorted by name); and
    /// the upstream of each tool it serves for another server.
    pub(crate) state: CatalogState,
    /// The upstream that serves each tool of the merged catalog (before pinned tools are held
    /// back), every tool's.
    owners: ServedBy,
}

impl Snapshot {
    /// Merges `listings` (sorted by upstream name) under the server rules of `policy` (which
    /// decide `always_load`; they are the same for every subject), each tool as `overrides`
    /// (by server) fix it.
    pub(crate) fn build(
        listings: &[Listing<'_>],
        policy: &Policy,
        overrides: &HashMap<String, crate::overrides::ToolOverrides>,
    ) -> Snapshot {
        let mut specs: Vec<Arc<ToolSpec>> = Vec::new();
        // The upstream of each tool, beside `specs`.
        let mut owner_of: Vec<&str> = Vec::new();
        // The upstream's own name of each tool an override renamed, beside `specs`.
        let mut listed_as: Vec<Option<String>> = Vec::new();
        let mut starting = Vec::new();
        let mut reconnecting = Vec::new();
        let mut failed = Vec::new();
        for listing in listings {
            match listing.standing {
                Standing::Starting => {
                    starting.push(listing.upstream.to_owned());
                    continue;
                }
                Standing::Failed(reason) => {
                    failed.push((listing.upstream.to_owned(), reason.to_owned()));
                    continue;
                }
                Standing::Disabled => continue,
                Standing::Remembered => reconnecting.push(listing.upstream.to_owned()),
                Standing::Serving => {}
            }
            for listed in listing.tools {
                let spec = match overrides.get(&listed.server).and_then(|o| o.apply(listed)) {
                    Some(fixed) => Cow::Owned(Arc::new(fixed)),
                    None => Cow::Borrowed(listed),
                };
                let spec = &*spec;
                if spec.name.is_empty() {
                    tracing::warn!(upstream = listing.upstream, "a tool without a name is ignored");
                    continue;
                }
                // Shared with the upstream's listing unless the rules change it.
                let always_load = policy.is_always_loaded(&spec.server, &spec.name, spec.always_load);
                let spec = if always_load == spec.always_load {
                    spec.clone()
                } else {
                    Arc::new(ToolSpec { always_load, ..(**spec).clone() })
                };
                listed_as.push((spec.name != listed.name).then(|| listed.name.clone()));
                specs.push(spec);
                owner_of.push(listing.upstream);
            }
        }
        let (specs, owner_of, listed_as) = first_of_each(specs, owner_of, listed_as);
        let catalog = match specs.into_iter().fold(Catalog::builder(), |b, s| b.shared(s)).build() {
            Ok(catalog) => catalog,
            Err(e) => {
                // Names are non-empty and pairs unique by now, so this cannot happen; serve
                // nothing rather than something unchecked.
                tracing::error!("the merged catalog is invalid ({e}); serving no tools");
                let state = CatalogState { starting, reconnecting, failed, ..CatalogState::default() };
                return Snapshot { state, ..Snapshot::default() };
            }
        };
        let formerly = catalog
            .tools()
            .iter()
            .zip(listed_as)
            .filter_map(|(t, listed)| Some((t.qualified_name().to_owned(), listed?)))
            .collect();
        // An upstream that serves tools of other servers (a static catalog file) applies its
        // own `[servers.NAME]` rules to them too: the policy's rule, so that a call of one it
        // hides is refused with that rule.
        let upstream_of = || catalog.ids().zip(owner_of.iter().copied());
        let owners = ServedBy::new(&catalog, upstream_of());
        let served_by = ServedBy::new(
            &catalog,
            upstream_of().filter(|&(id, upstream)| upstream != catalog.tool(id).server()),
        );
        let state = CatalogState {
            catalog,
            served_by: Arc::new(served_by),
            formerly: Arc::new(formerly),
            starting,
            reconnecting,
            failed,
            ..CatalogState::default()
        };
        Snapshot { state, owners }
    }

    /// Holds back the tools of pinned upstreams whose definitions are not approved (see
    /// [`crate::pins`]). When the store cannot be read, every tool of a pinned upstream is
    /// held: pinning fails closed.
    pub(crate) fn sift(&mut self, pins: &Pins) {
        let pinned = |t: &toolgate::Tool| self.owner(t.qualified_name()).and_then(|o| pins.pinned(o));
        let catalog = &self.state.catalog;
        let (served, held) = match pins.store.sift(catalog, pinned) {
            Ok(split) => split,
            Err(e) => {
                tracing::error!("{e}; the tools of pinned servers are held until it can be read");
                (catalog.filter(|t| pinned(t).is_none()), catalog.filter(|t| pinned(t).is_some()))
            }
        };
        self.state.catalog = served;
        self.state.held = held;
    }

    /// The upstream serving the tool named `qualified`.
    pub(crate) fn owner(&self, qualified: &str) -> Option<&str> {
        self.owners.get(qualified)
    }
}

/// The specs (with each one's upstream and listed name) but for a second tool of the same
/// server and name, here or from another upstream: only the first is served.
fn first_of_each(
    specs: Vec<Arc<ToolSpec>>,
    owner_of: Vec<&str>,
    listed_as: Vec<Option<String>>,
) -> (Vec<Arc<ToolSpec>>, Vec<&str>, Vec<Option<String>>) {
    // Keyed by borrowed names, seeded against names chosen to collide.
    let mut seen: HashSet<(&str, &str), foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(specs.len(), Default::default());
    let first: Vec<bool> = specs
        .iter()
        .zip(&owner_of)
        .map(|(spec, upstream)| {
            let first = seen.insert((spec.server.as_str(), spec.name.as_str()));
            if !first {
                tracing::warn!(
                    upstream,
                    "tool `{}` of server `{}` is listed twice (here or by another upstream); only the \
                     first is used",
                    spec.name,
                    spec.server
                );
            }
            first
        })
        .collect();
    drop(seen);
    if first.iter().all(|&f| f) {
        return (specs, owner_of, listed_as);
    }
    let mut kept = (Vec::new(), Vec::new(), Vec::new());
    for (((spec, upstream), listed), first) in specs.into_iter().zip(owner_of).zip(listed_as).zip(first) {
        if first {
            kept.0.push(spec);
            kept.1.push(upstream);
            kept.2.push(listed);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn spec(server: &str, name: &str, marked: bool) -> Arc<ToolSpec> {
        let mut s = ToolSpec::mcp(server, name, "");
        s.always_load = marked;
        Arc::new(s)
    }

    #[test]
    fn names_are_assigned_once_and_always_load_needs_trust() {
        let fk = [spec("fk", "delete_repo", false), spec("fk", "delete.repo", true)];
        let other = [spec("other", "ping", true)];
        let config = Config::from_toml(
            "t.toml",
            "[servers.other]\ncatalog = \"x\"\ntrust_always_load = true\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let policy = Policy::new(&config, None).unwrap();
        let listings = [
            Listing { upstream: "fk", standing: Standing::Serving, tools: &fk },
            Listing { upstream: "late", standing: Standing::Starting, tools: &[] },
            Listing { upstream: "other", standing: Standing::Serving, tools: &other },
        ];
        let snapshot = Snapshot::build(&listings, &policy, &HashMap::new());
        let names: Vec<&str> = snapshot.state.catalog.tools().iter().map(|t| t.qualified_name()).collect();
        assert_eq!(names[0], "fk__delete_repo");
        assert!(names[1].starts_with("fk__delete_repo-"), "{names:?}");
        assert!(!snapshot.state.catalog.tools()[1].always_load(), "fk is not trusted");
        assert!(snapshot.state.catalog.tools()[2].always_load(), "other is");
        assert_eq!(snapshot.owner(names[1]), Some("fk"));
        assert_eq!(snapshot.state.starting, ["late"]);
    }

    #[test]
    fn a_tool_listed_twice_is_served_once_by_the_first_and_the_rest_keep_their_upstreams() {
        let first = [spec("s", "x", false), spec("s", "y", false), spec("s", "x", true)];
        let second = [spec("s", "y", false), spec("s", "z", false)];
        let config = Config::from_toml("t.toml", "", std::path::Path::new(".")).unwrap();
        let policy = Policy::new(&config, None).unwrap();
        let listings = [
            Listing { upstream: "a", standing: Standing::Serving, tools: &first },
            Listing { upstream: "b", standing: Standing::Serving, tools: &second },
        ];
        let snapshot = Snapshot::build(&listings, &policy, &HashMap::new());
        let names: Vec<&str> = snapshot.state.catalog.tools().iter().map(|t| t.qualified_name()).collect();
        assert_eq!(names, ["s__x", "s__y", "s__z"]);
        assert_eq!(snapshot.owner("s__x"), Some("a"));
        assert_eq!(snapshot.owner("s__y"), Some("a"));
        assert_eq!(
            snapshot.owner("s__z"),
            Some("b"),
            "the tools after a dropped one keep their own upstream"
        );
    }
}
