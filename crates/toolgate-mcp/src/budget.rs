//! budget: here is a session that just loaded tools, unload the least recently used ones until
//! each server is within its `max_active` and the tool list within `[budget] hard`.
//!
//! "Used" means loaded or called; the tools the current search loaded go last, so a search
//! never unloads its own results unless they alone are over a limit.

use std::collections::BTreeMap;

use toolgate::budget::Recency;

use crate::gateway::Snapshot;

/// Which active tools to unload, least recently used first, so that every upstream keeps at
/// most its `max_active` tools and core tools, `tool_search` and the active set together fit
/// in `hard`. `fresh` are the tools the current search loaded.
pub(crate) fn over_budget(
    active: &[String],
    snapshot: &Snapshot,
    recency: &Recency,
    fresh: &[String],
    hard: usize,
) -> Vec<String> {
    // Oldest first, the fresh ones after every other.
    let mut order: Vec<&String> = active.iter().filter(|n| snapshot.catalog.get(n).is_some()).collect();
    order.sort_by_key(|n| (fresh.contains(n), recency.last_used(n).unwrap_or(0)));
    let mut evicted: Vec<String> = Vec::new();

    let mut per_owner: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for n in &order {
        let id = snapshot.catalog.get(n).expect("filtered above");
        per_owner.entry(snapshot.owner(id)).or_default().push(n);
    }
    for (owner, names) in per_owner {
        if let Some(limit) = snapshot.max_active(owner) {
            let over = names.len().saturating_sub(limit);
            evicted.extend(names.iter().take(over).map(|n| (*n).clone()));
        }
    }

    let core = snapshot.catalog.ids().filter(|&id| !snapshot.deferral.is_deferred(id)).count();
    let mut listed = core + 1 + order.len() - evicted.len();
    for n in order {
        if listed <= hard {
            break;
        }
        if !evicted.contains(n) {
            evicted.push(n.clone());
            listed -= 1;
        }
    }
    evicted
}

/// Unloads `names` from `session`, forgetting their recency.
pub(crate) fn unload(session: &mut toolgate::Session, recency: &mut Recency, names: &[String]) {
    for n in names {
        session.deactivate(n);
        recency.forget(n);
    }
}
