//! budget: here is a session that just loaded tools, tell me which active tools to unload so the
//! tool list stays within `[budget] dynamic` and every server within its `max_active`, and
//! check the final list against `[budget] hard` before a request leaves.
//!
//! Every definition counts (EthanKit's budgets, docs/policy.md): core tools, built-ins and meta-tools are the fixed part,
//! the active set the rest. EthanKit's active set only grows and stops at the dynamic mark;
//! here it rolls instead: when a search would push past a limit, the least recently used
//! active tools (loaded or called longest ago) are unloaded, and the model is told which
//! ([`notice`]). The tools the current search loaded go last, in reverse rank order, so a
//! search never unloads its own results unless they alone are over a limit; required tools
//! (pins, `mode = "all"`) are never unloaded.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use crate::catalog::Catalog;
use crate::config::{BudgetConfig, DEFAULT_MAX_ACTIVE};
use crate::defer::Deferral;
use crate::policy::{Action, AuditEvent, Policy, Required, Rule};
use crate::session::ActiveSet;

/// When each active tool was last loaded or called, on a per-session clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Recency {
    clock: u64,
    used: HashMap<String, u64>,
}

impl Recency {
    /// Nothing used yet.
    #[cfg(test)]
    pub(crate) fn new() -> Recency {
        Recency::default()
    }

    /// The clock and when each tool was last used (the saved form of a conversation).
    pub(crate) fn parts(&self) -> (u64, &HashMap<String, u64>) {
        (self.clock, &self.used)
    }

    /// Recency read back from [`Recency::parts`]; the clock is at least every use in it.
    pub(crate) fn from_parts(clock: u64, used: HashMap<String, u64>) -> Recency {
        let clock = used.values().copied().max().unwrap_or(0).max(clock);
        Recency { clock, used }
    }

    /// Records a load or call of `name` now.
    pub(crate) fn touch(&mut self, name: &str) {
        self.clock += 1;
        self.used.insert(name.to_owned(), self.clock);
    }

    /// Forgets `name` (after it was unloaded).
    pub(crate) fn forget(&mut self, name: &str) {
        self.used.remove(name);
    }

    /// When `name` was last used (a larger number is more recent); `None` if never.
    pub(crate) fn last_used(&self, name: &str) -> Option<u64> {
        self.used.get(name).copied()
    }
}

/// One tool to unload, and the limit that made it go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unload {
    /// The tool's qualified name.
    pub tool: String,
    /// [`Rule::MaxActive`] or [`Rule::DynamicBudget`].
    pub rule: Rule,
}

impl Unload {
    /// The audit event of this unload for `policy`'s subject.
    pub fn audit(&self, policy: &Policy) -> AuditEvent {
        policy.event(&self.tool, self.rule.clone(), Action::Unloaded)
    }
}

/// What the model reads about unloads (appended to the `tool_search` result); empty when
/// nothing was unloaded.
pub fn notice(unloads: &[Unload]) -> String {
    if unloads.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = unloads.iter().map(|e| e.tool.as_str()).collect();
    format!(
        "Unloaded to stay within the tool budget (least recently used first; load again with \
         tool_search if you need them): {}",
        names.join(", ")
    )
}

/// A request whose tool list is over `[budget] hard`: it must not be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverHardLimit {
    /// Definitions in the request.
    pub definitions: usize,
    /// `[budget] hard`.
    pub hard: usize,
}

impl fmt::Display for OverHardLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the request has {} tool definitions, over the hard limit of {} ([budget] hard); it was not sent",
            self.definitions, self.hard
        )
    }
}

impl std::error::Error for OverHardLimit {}

/// The limits one session's active set lives in. Immutable; build one per subject and catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActiveBudget {
    fixed: usize,
    dynamic: usize,
    hard: usize,
    default_limit: usize,
    limits: BTreeMap<String, usize>,
    protected: HashSet<String>,
}

impl ActiveBudget {
    /// `budget` with `fixed` definitions always sent (core tools plus meta-tools), every
    /// server at the default `max_active` and nothing protected.
    pub(crate) fn new(budget: BudgetConfig, fixed: usize) -> ActiveBudget {
        ActiveBudget {
            fixed,
            dynamic: budget.dynamic,
            hard: budget.hard,
            default_limit: DEFAULT_MAX_ACTIVE,
            limits: BTreeMap::new(),
            protected: HashSet::new(),
        }
    }

    /// The budget of `policy`'s subject over `visible` (the filtered catalog): its `[budget]`,
    /// each server's `max_active`, the fixed part and the protected tools of `required`.
    pub(crate) fn from_policy(policy: &Policy, visible: &Catalog, required: &Required) -> ActiveBudget {
        let mut b = ActiveBudget::new(policy.budget(), required.fixed());
        for server in visible.servers() {
            b.limits.insert(server.to_owned(), policy.max_active(server));
        }
        b.protected =
            required.tools().iter().map(|&id| visible.tool(id).qualified_name().to_owned()).collect();
        b
    }

    /// Sets one server's `max_active`.
    #[cfg(test)]
    pub(crate) fn with_server_limit(mut self, server: &str, limit: usize) -> ActiveBudget {
        self.limits.insert(server.to_owned(), limit);
        self
    }

    /// Never unloads these tools.
    #[cfg(test)]
    pub(crate) fn with_protected<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> ActiveBudget {
        self.protected.extend(names.into_iter().map(str::to_owned));
        self
    }

    /// How many active tools fit under `[budget] dynamic` beside the fixed part.
    #[cfg(test)]
    pub(crate) fn room(&self) -> usize {
        self.dynamic.saturating_sub(self.fixed)
    }

    /// A server's `max_active`.
    pub(crate) fn server_limit(&self, server: &str) -> usize {
        self.limits.get(server).copied().unwrap_or(self.default_limit)
    }

    /// Which active tools to unload so that every server keeps at most its `max_active` and
    /// the list at most `[budget] dynamic` definitions. `fresh` are the tools the current
    /// search loaded, best first. Active names not in `catalog`, or not deferred there, are
    /// not counted.
    pub(crate) fn plan(
        &self,
        catalog: &Catalog,
        deferral: &Deferral,
        active: &[String],
        recency: &Recency,
        fresh: &[String],
    ) -> Vec<Unload> {
        let listed: Vec<(usize, &str, &str)> = active
            .iter()
            .enumerate()
            .filter_map(|(pos, name)| {
                let id = catalog.get(name).filter(|&id| deferral.is_deferred(id))?;
                Some((pos, name.as_str(), catalog.tool(id).server()))
            })
            .collect();
        // Unload order: older tools by last use (then activation order), then this search's
        // own results from the worst ranked up.
        let mut order: Vec<(usize, &str, &str)> =
            listed.iter().copied().filter(|(_, n, _)| !self.protected.contains(*n)).collect();
        let key = |(pos, name, _): &(usize, &str, &str)| match fresh.iter().position(|f| f == name) {
            Some(rank) => (1, u64::MAX - rank as u64, *pos),
            None => (0, recency.last_used(name).unwrap_or(0), *pos),
        };
        order.sort_by_key(key);

        let mut unloaded: Vec<Unload> = Vec::new();
        let mut gone: HashSet<&str> = HashSet::new();
        let mut per_server: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, _, server) in &listed {
            *per_server.entry(server).or_default() += 1;
        }
        for (server, count) in per_server {
            let limit = self.server_limit(server);
            let over = count.saturating_sub(limit);
            for (_, name, _) in order.iter().filter(|(_, _, s)| *s == server).take(over) {
                gone.insert(name);
                unloaded.push(Unload {
                    tool: (*name).to_owned(),
                    rule: Rule::MaxActive { server: server.to_owned(), limit },
                });
            }
        }
        let mut total = self.fixed + listed.len() - gone.len();
        for (_, name, _) in &order {
            if total <= self.dynamic {
                break;
            }
            if gone.insert(name) {
                unloaded.push(Unload {
                    tool: (*name).to_owned(),
                    rule: Rule::DynamicBudget { limit: self.dynamic },
                });
                total -= 1;
            }
        }
        unloaded
    }

    /// Records `fresh` as used, then unloads what [`ActiveBudget::plan`] says from `session`
    /// and `recency`; returns the unloads for the model ([`notice`]) and the audit log.
    pub(crate) fn enforce(
        &self,
        catalog: &Catalog,
        deferral: &Deferral,
        session: &mut ActiveSet,
        recency: &mut Recency,
        fresh: &[String],
    ) -> Vec<Unload> {
        for name in fresh {
            recency.touch(name);
        }
        let unloads = self.plan(catalog, deferral, session.active(), recency, fresh);
        for e in &unloads {
            session.unload(&e.tool);
            recency.forget(&e.tool);
        }
        unloads
    }

    /// The final check before a request leaves: `definitions` (every tool in the list,
    /// built-ins and meta-tools included) must not exceed `[budget] hard`.
    pub(crate) fn check_hard(&self, definitions: usize) -> Result<(), OverHardLimit> {
        if definitions > self.hard {
            return Err(OverHardLimit { definitions, hard: self.hard });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolSpec;
    use crate::defer::{DeferConfig, DeferMode};

    fn setup(servers: &[(&str, usize)]) -> (Catalog, Deferral) {
        let mut b = Catalog::builder();
        for (server, n) in servers {
            for i in 0..*n {
                b = b.tool(ToolSpec::mcp(server, &format!("t{i}"), ""));
            }
        }
        let catalog = b.build().unwrap();
        let deferral =
            Deferral::decide(&catalog, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
        (catalog, deferral)
    }

    fn names(v: &[Unload]) -> Vec<&str> {
        v.iter().map(|e| e.tool.as_str()).collect()
    }

    #[test]
    fn least_recently_used_goes_first_and_fresh_results_stay() {
        let (catalog, deferral) = setup(&[("a", 6)]);
        let budget = ActiveBudget::new(BudgetConfig { first_turn: 3, dynamic: 4, hard: 5 }, 1);
        assert_eq!(budget.room(), 3);
        let mut s = ActiveSet::new();
        let mut r = Recency::new();
        s.activate(["a__t0", "a__t1", "a__t2"]);
        for n in ["a__t0", "a__t1", "a__t2"] {
            r.touch(n);
        }
        r.touch("a__t0"); // called: now the most recently used
        s.activate(["a__t3", "a__t4"]);
        let fresh = vec!["a__t3".to_owned(), "a__t4".to_owned()];
        let ev = budget.enforce(&catalog, &deferral, &mut s, &mut r, &fresh);
        assert_eq!(names(&ev), ["a__t1", "a__t2"]);
        assert_eq!(ev[0].rule, Rule::DynamicBudget { limit: 4 });
        assert_eq!(s.active(), ["a__t0", "a__t3", "a__t4"]);
        assert_eq!(r.last_used("a__t1"), None);
        assert!(notice(&ev).ends_with("a__t1, a__t2"), "{}", notice(&ev));
        assert_eq!(notice(&[]), "");
    }

    #[test]
    fn a_search_over_the_limit_alone_drops_its_worst_results() {
        let (catalog, deferral) = setup(&[("a", 6)]);
        let budget = ActiveBudget::new(BudgetConfig { first_turn: 2, dynamic: 3, hard: 4 }, 1);
        let mut s = ActiveSet::new();
        let fresh: Vec<String> = (0..4).map(|i| format!("a__t{i}")).collect();
        s.activate(fresh.iter().map(String::as_str));
        let ev = budget.enforce(&catalog, &deferral, &mut s, &mut Recency::new(), &fresh);
        assert_eq!(names(&ev), ["a__t3", "a__t2"]);
        assert_eq!(s.active(), ["a__t0", "a__t1"]);
    }

    #[test]
    fn max_active_is_per_server_and_protected_tools_stay() {
        let (catalog, deferral) = setup(&[("a", 5), ("b", 5)]);
        let budget =
            ActiveBudget::new(BudgetConfig::default(), 1).with_server_limit("a", 2).with_protected(["a__t0"]);
        let mut s = ActiveSet::new();
        let mut r = Recency::new();
        s.activate(["a__t0", "a__t1", "b__t0", "b__t1"]);
        for n in s.active().to_vec() {
            r.touch(&n);
        }
        s.activate(["a__t2"]);
        let ev = budget.enforce(&catalog, &deferral, &mut s, &mut r, &["a__t2".to_owned()]);
        assert_eq!(names(&ev), ["a__t1"]);
        assert_eq!(ev[0].rule, Rule::MaxActive { server: "a".into(), limit: 2 });
        assert_eq!(ev[0].rule.to_string(), "servers.a.max_active = 2");
        assert_eq!(budget.server_limit("b"), DEFAULT_MAX_ACTIVE);
    }

    proptest::proptest! {
        /// Against a plain model: after `enforce`, every server is within its limit and the
        /// list within `dynamic` (as far as protected tools allow), protected tools stay, and
        /// no kept tool was used less recently than an unloaded one of the same kind.
        #[test]
        fn enforce_keeps_the_limits_and_unloads_least_recently_used_first(
            active in proptest::collection::vec((0..3usize, 0..8usize), 0..24),
            uses in proptest::collection::vec((0..3usize, 0..8usize), 0..30),
            fresh in proptest::collection::vec((0..3usize, 0..8usize), 0..6),
            protected in proptest::collection::vec((0..3usize, 0..8usize), 0..3),
            limit in 1..6usize,
            dynamic in 2..14usize,
        ) {
            let (catalog, deferral) = setup(&[("a", 8), ("b", 8), ("c", 8)]);
            let name = |(s, i): (usize, usize)| format!("{}__t{i}", ["a", "b", "c"][s]);
            let budget = ActiveBudget::new(BudgetConfig { first_turn: 1, dynamic, hard: dynamic }, 1)
                .with_server_limit("a", limit)
                .with_protected(protected.iter().map(|&p| name(p)).collect::<Vec<_>>().iter().map(String::as_str));
            let mut s = ActiveSet::new();
            let mut r = Recency::new();
            for &t in &active {
                s.activate([name(t).as_str()]);
                r.touch(&name(t));
            }
            for &t in &uses {
                if s.is_active(&name(t)) {
                    r.touch(&name(t));
                }
            }
            let fresh: Vec<String> = fresh.iter().map(|&t| name(t)).filter(|n| !s.is_active(n)).collect();
            let mut fresh_unique = Vec::new();
            for f in fresh {
                if !fresh_unique.contains(&f) {
                    fresh_unique.push(f);
                }
            }
            s.activate(fresh_unique.iter().map(String::as_str));
            let before = r.clone();
            let ev = budget.enforce(&catalog, &deferral, &mut s, &mut r, &fresh_unique);

            let is_protected = |n: &str| protected.iter().any(|&p| name(p) == n);
            let kept: BTreeMap<&str, usize> = s.active().iter().fold(BTreeMap::new(), |mut m, n| {
                *m.entry(&n[..1]).or_default() += 1;
                m
            });
            let protected_a = s.active().iter().filter(|n| n.starts_with("a__") && is_protected(n)).count();
            proptest::prop_assert!(kept.get("a").copied().unwrap_or(0) <= limit.max(protected_a));
            for srv in ["b", "c"] {
                proptest::prop_assert!(kept.get(srv).copied().unwrap_or(0) <= DEFAULT_MAX_ACTIVE);
            }
            let protected_active = s.active().iter().filter(|n| is_protected(n)).count();
            let listed = 1 + s.active().len(); // the fixed part, then the active set
            proptest::prop_assert!(listed <= dynamic.max(1 + protected_active));
            for e in &ev {
                proptest::prop_assert!(!is_protected(&e.tool));
                proptest::prop_assert!(!s.is_active(&e.tool));
            }
            // A tool unloaded for the dynamic budget was used no later than any kept tool that is
            // neither protected nor fresh (fresh ones go last).
            for e in ev.iter().filter(|e| matches!(e.rule, Rule::DynamicBudget { .. })) {
                if fresh_unique.contains(&e.tool) {
                    continue;
                }
                let t = before.last_used(&e.tool).unwrap_or(0);
                for k in s.active().iter().filter(|k| !is_protected(k) && !fresh_unique.contains(k)) {
                    proptest::prop_assert!(before.last_used(k).unwrap_or(0) >= t, "{} kept over {}", k, e.tool);
                }
            }
        }
    }

    #[test]
    fn the_hard_limit_refuses_a_request() {
        let budget = ActiveBudget::new(BudgetConfig::default(), 4);
        assert!(budget.check_hard(128).is_ok());
        let err = budget.check_hard(129).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the request has 129 tool definitions, over the hard limit of 128 ([budget] hard); it was not sent"
        );
    }
}
