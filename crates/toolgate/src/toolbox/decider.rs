//! decider: here are a host's settings and the policy of the subject it serves; for each
//! catalog snapshot, give me the toolbox of every subject over it.
//!
//! A host that serves many sessions over a catalog that changes (the gateway) asks this one
//! type, and nothing else, what a subject sees or may run. For each snapshot
//! [`Decider::publish`] decides deferral once, for every subject, and keeps it on once it was
//! on ([`DeferLatch`]); it checks the served subject's required tools against the tightest
//! exposure any of its sessions may get, and refuses the snapshot when they do not fit. The
//! [`Toolboxes`] it returns build each subject's toolbox when first asked for, once per
//! subject, exposure and grant, and fail closed: a profile that is not configured, or whose
//! policy cannot be applied, sees no tool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use super::{Toolbox, ToolboxBuilder};
use crate::catalog::Catalog;
use crate::config::Exposure;
use crate::defer::{DeferConfig, DeferLatch, DeferMode};
use crate::policy::{Policy, PolicyError, ServedBy};
use crate::schema::Validators;
use crate::search::IndexBuilder;

/// How a host builds its toolboxes: the same for every subject and snapshot.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// When tools are deferred (`auto` is decided over each snapshot's whole catalog).
    pub defer: DeferConfig,
    /// The exposure every session gets, when the host fixes one (`None`: each session's own).
    pub exposure: Option<Exposure>,
    /// How visible tools are indexed.
    pub index: IndexBuilder,
    /// Whether a toolbox's index is built on a thread of its own, so that a snapshot is
    /// published before its tools are indexed ([`ToolboxBuilder::index_in_background`]).
    pub index_in_background: bool,
}

/// A host's catalog at one moment: the tools it serves and how its servers stand.
#[derive(Debug, Clone, Default)]
pub struct CatalogState {
    /// Every tool served, named once.
    pub catalog: Catalog,
    /// Tools withheld from every subject until an operator approves them.
    pub held: Catalog,
    /// Servers still starting, not listed yet.
    pub starting: Vec<String>,
    /// Servers starting whose tools the catalog holds as they listed them last time.
    pub reconnecting: Vec<String>,
    /// Servers that failed, each with its reason.
    pub failed: Vec<(String, String)>,
    /// The server serving each tool of another server (a catalog file that holds several
    /// servers' tools), by qualified name: that server's `[servers.NAME]` rules apply to the
    /// tool too, for every subject.
    pub served_by: Arc<ServedBy>,
    /// The upstream's own name of each tool the host shows under another (an operator's
    /// rename), by qualified name: a deny that names the tool as its upstream lists it still
    /// holds.
    pub formerly: Arc<HashMap<String, String>>,
}

/// The host's one decider: fed each catalog snapshot ([`Decider::publish`]), it gives every
/// subject's toolbox over it ([`Toolboxes`]), deciding deferral once for all of them.
#[derive(Debug)]
pub struct Decider {
    /// Replaced whole by [`Decider::reconfigure`]; each [`Toolboxes`] keeps the one it was
    /// published with.
    shared: RwLock<Arc<Shared>>,
    latch: DeferLatch,
}

/// What every snapshot's toolboxes are built with.
#[derive(Debug)]
struct Shared {
    /// The served subject's policy.
    root: Policy,
    settings: HostSettings,
    /// Compiled argument validators, kept across snapshots (keyed by definition hash).
    validators: Arc<Validators>,
    /// The last index built for each subject (`None`: the served subject) under these
    /// settings: a snapshot that leaves a subject's visible tools as they were (a server
    /// starting, failing with no tools, a reload of other rules) reuses it instead of indexing
    /// the same catalog again. [`ToolboxBuilder::shared_index`] takes it only for the same
    /// tools and definitions in the same order; new settings start without any.
    indexes: Mutex<HashMap<Option<String>, Arc<super::IndexCell>>>,
}

/// A toolbox's key: the profile (`None`: the served subject), the exposure, and whether it
/// hands out grants.
type Key = (Option<String>, Exposure, bool);

/// Every subject's toolbox over one snapshot, built when first asked for.
#[derive(Debug)]
pub struct Toolboxes {
    shared: Arc<Shared>,
    /// The served subject's policy over this snapshot.
    root: Policy,
    state: CatalogState,
    defers: bool,
    built: Mutex<HashMap<Key, Arc<Toolbox>>>,
}

impl Decider {
    /// A decider for the subject of `root`, building toolboxes with `settings`.
    pub fn new(root: Policy, settings: HostSettings) -> Decider {
        let shared = Shared { root, settings, validators: Arc::default(), indexes: Mutex::default() };
        Decider { shared: RwLock::new(Arc::new(shared)), latch: DeferLatch::default() }
    }

    /// Decides from now on with `root` and `settings` (a host's configuration reloaded): the
    /// next [`Decider::publish`] uses them; toolboxes published before keep theirs. Deferral,
    /// once on, stays on, and compiled validators are kept.
    pub fn reconfigure(&self, root: Policy, settings: HostSettings) {
        let mut shared = self.shared.write().unwrap_or_else(|e| e.into_inner());
        let validators = shared.validators.clone();
        *shared = Arc::new(Shared { root, settings, validators, indexes: Mutex::default() });
    }

    fn shared(&self) -> Arc<Shared> {
        self.shared.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The served subject's policy (its server rules hold for every subject).
    pub fn policy(&self) -> Policy {
        self.shared().root.clone()
    }

    /// Whether `profile` is configured (`[profiles.NAME]`).
    pub fn has_profile(&self, profile: &str) -> bool {
        self.shared().root.has_profile(profile)
    }

    /// The configured profiles' names, sorted.
    pub fn profiles(&self) -> Vec<String> {
        self.shared().root.profile_names()
    }

    /// How many argument validators are compiled.
    pub fn validators(&self) -> usize {
        self.shared().validators.len()
    }

    /// The toolboxes of `state`: deferral decided (on for good once on; from the start when
    /// the host fixes bridge exposure), and the served subject's required tools checked against
    /// the budgets in the tightest exposure. Fails, publishing nothing, when they do not fit.
    pub fn publish(&self, state: CatalogState) -> Result<Toolboxes, PolicyError> {
        self.publish_with(self.shared(), state, true)
    }

    /// Whether `root` and `settings` could decide over `state`: [`Decider::publish`] with
    /// them, changing nothing (neither this decider nor its deferral latch). A host checks a
    /// new configuration with this before [`Decider::reconfigure`].
    pub fn trial(
        &self,
        root: Policy,
        settings: HostSettings,
        state: CatalogState,
    ) -> Result<Toolboxes, PolicyError> {
        let validators = self.shared().validators.clone();
        self.publish_with(
            Arc::new(Shared { root, settings, validators, indexes: Mutex::default() }),
            state,
            false,
        )
    }

    fn publish_with(
        &self,
        shared: Arc<Shared>,
        state: CatalogState,
        latch: bool,
    ) -> Result<Toolboxes, PolicyError> {
        let settings = &shared.settings;
        let bridge = settings.exposure == Some(Exposure::Bridge);
        let defers = if latch {
            self.latch.decide(&state.catalog, &settings.defer, bridge)
        } else {
            self.latch.would_decide(&state.catalog, &settings.defer, bridge)
        };
        let root = shared.root.clone().served_by(state.served_by.clone()).formerly(state.formerly.clone());
        let tightest = Exposure::tightest(settings.exposure);
        let toolboxes = Toolboxes { shared, root, state, defers, built: Mutex::default() };
        let root = toolboxes.build(None, toolboxes.root.clone(), tightest, false, None)?;
        toolboxes
            .built
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((None, tightest, false), Arc::new(root));
        Ok(toolboxes)
    }

    /// Toolboxes over no tools at all, deferring as nothing was decided yet (off), before the
    /// first snapshot.
    pub fn empty(&self) -> Toolboxes {
        let shared = self.shared();
        Toolboxes {
            root: shared.root.clone(),
            shared,
            state: CatalogState::default(),
            defers: false,
            built: Mutex::default(),
        }
    }
}

impl Toolboxes {
    /// Whether tools are deferred, for every subject of this snapshot.
    pub fn defers(&self) -> bool {
        self.defers
    }

    /// The toolbox of `profile`'s subject (`None`: the served subject) in `exposure`.
    pub fn get(&self, profile: Option<&str>, exposure: Exposure) -> Arc<Toolbox> {
        self.get_keyed(profile, exposure, false)
    }

    /// The toolbox of `profile`'s subject for callers the host keeps no conversation for
    /// ([`ToolboxBuilder::granted`]): bridge exposure whose `call_tool` takes the grant
    /// `tool_search` gives, or native, listing every tool, when nothing is deferred (the list
    /// is then the same for every caller and counts as read by each).
    pub fn granted(&self, profile: Option<&str>) -> Arc<Toolbox> {
        let exposure = if self.defers { Exposure::Bridge } else { Exposure::Native };
        self.get_keyed(profile, exposure, true)
    }

    fn get_keyed(&self, profile: Option<&str>, exposure: Exposure, granted: bool) -> Arc<Toolbox> {
        let key = (profile.map(str::to_owned), exposure, granted);
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(toolbox) = built.get(&key) {
            return toolbox.clone();
        }
        // The same subject in another exposure sees the same tools: its index is reused.
        let sibling =
            built.iter().find(|((p, _, _), _)| p.as_deref() == profile).map(|(_, t)| t.shared_index());
        let root = &self.root;
        let policy = match profile {
            None => Ok(root.clone()),
            Some(name) => root.child(name),
        };
        let toolbox = policy
            .and_then(|policy| self.build(profile, policy, exposure, granted, sibling))
            .unwrap_or_else(|e| {
                tracing::error!(subject = profile.unwrap_or("main"), "{e}; this subject sees no tools");
                self.builder(&Catalog::default(), Policy::permissive(), exposure, granted)
                    .build()
                    .expect("an empty catalog fits any budget")
            });
        let toolbox = Arc::new(toolbox);
        built.insert(key, toolbox.clone());
        toolbox
    }

    /// The last index built for `profile`'s subject under this snapshot's settings.
    fn last_index(&self, profile: Option<&str>) -> Option<Arc<super::IndexCell>> {
        let indexes = self.shared.indexes.lock().unwrap_or_else(|e| e.into_inner());
        indexes.get(&profile.map(str::to_owned)).cloned()
    }

    /// The toolbox of `profile`'s subject under `policy`, indexed with `sibling` (the same
    /// subject's index in another exposure) or else the subject's last index, when either holds
    /// exactly its visible tools. A toolbox built keeps its index as the subject's last: only a
    /// configured subject's, since a name no profile has fails before.
    fn build(
        &self,
        profile: Option<&str>,
        policy: Policy,
        exposure: Exposure,
        granted: bool,
        sibling: Option<Arc<super::IndexCell>>,
    ) -> Result<Toolbox, PolicyError> {
        let builder = self
            .builder(&self.state.catalog, policy, exposure, granted)
            .quarantined(self.state.held.clone())
            .starting(self.state.starting.clone())
            .reconnecting(self.state.reconnecting.clone())
            .failed(self.state.failed.clone());
        let toolbox = match sibling.or_else(|| self.last_index(profile)) {
            Some(index) => builder.shared_index(index),
            None => builder,
        }
        .build()?;
        let mut indexes = self.shared.indexes.lock().unwrap_or_else(|e| e.into_inner());
        indexes.insert(profile.map(str::to_owned), toolbox.shared_index());
        Ok(toolbox)
    }

    fn builder(
        &self,
        catalog: &Catalog,
        policy: Policy,
        exposure: Exposure,
        granted: bool,
    ) -> ToolboxBuilder {
        let settings = &self.shared.settings;
        let mode = if self.defers { DeferMode::On } else { DeferMode::Off };
        Toolbox::builder(catalog, policy)
            .defer(DeferConfig { mode, ..settings.defer })
            .exposure(exposure)
            .granted(granted)
            .validators(self.shared.validators.clone())
            .index(settings.index.clone())
            .index_in_background(settings.index_in_background)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;
    use crate::{Index, ToolSpec};

    const CONFIG: &str = "[policy]\ndeny = [\"secrets\"]\n\n[profiles.reader]\ntools = [\"fs__*\"]\n";

    fn decider(text: &str, defer: DeferConfig, exposure: Option<Exposure>) -> Decider {
        let config: Config = Config::from_toml("toolgate.toml", text, Path::new(".")).unwrap();
        let settings = HostSettings { defer, exposure, index: Index::builder(), index_in_background: false };
        Decider::new(Policy::new(&config, None).unwrap(), settings)
    }

    fn state(tools: &[(&str, &str)]) -> CatalogState {
        let catalog = tools
            .iter()
            .fold(Catalog::builder(), |b, (s, n)| b.tool(ToolSpec::mcp(s, n, "does things")))
            .build();
        CatalogState { catalog: catalog.unwrap(), ..CatalogState::default() }
    }

    fn names(toolbox: &Toolbox) -> Vec<&str> {
        toolbox.visible().tools().iter().map(|t| t.qualified_name()).collect()
    }

    #[test]
    fn every_subject_sees_what_its_policy_lets_it_and_an_unknown_profile_nothing() {
        let decider = decider(CONFIG, DeferConfig::default(), None);
        let toolboxes =
            decider.publish(state(&[("fs", "read"), ("git", "log"), ("secrets", "dump")])).unwrap();
        assert_eq!(names(&toolboxes.get(None, Exposure::Native)), ["fs__read", "git__log"]);
        assert_eq!(names(&toolboxes.get(Some("reader"), Exposure::Bridge)), ["fs__read"]);
        assert!(names(&toolboxes.get(Some("writer"), Exposure::Native)).is_empty(), "fail closed");
        assert!(decider.has_profile("reader") && !decider.has_profile("writer"));
        assert_eq!(decider.profiles(), ["reader"]);
    }

    #[test]
    fn deferral_is_decided_once_per_snapshot_and_stays_on() {
        let decider = decider("", DeferConfig::default(), None);
        assert!(!decider.empty().defers(), "nothing decided before the first snapshot");
        let small = state(&[("fs", "read")]);
        assert!(!decider.publish(small.clone()).unwrap().defers(), "one tool is not worth deferring");
        let big = CatalogState { catalog: Catalog::embedded(), ..CatalogState::default() };
        let toolboxes = decider.publish(big).unwrap();
        assert!(toolboxes.defers());
        assert!(
            toolboxes.get(Some("nobody"), Exposure::Native).about().defers(),
            "the same for every subject"
        );
        assert!(decider.publish(small.clone()).unwrap().defers(), "and on for good");
        let bridged = self::decider("", DeferConfig::default(), Some(Exposure::Bridge));
        assert!(bridged.publish(small).unwrap().defers(), "a host in bridge exposure defers from the start");
    }

    #[test]
    fn a_reconfigured_decider_decides_with_the_new_policy_from_its_next_snapshot() {
        let decider = decider(CONFIG, DeferConfig::default(), None);
        let tools = [("fs", "read"), ("git", "log"), ("secrets", "dump")];
        let before = decider.publish(state(&tools)).unwrap();
        let config: Config =
            Config::from_toml("toolgate.toml", "[policy]\ndeny = [\"git\"]\n", Path::new(".")).unwrap();
        let policy = Policy::new(&config, None).unwrap();
        let settings = HostSettings {
            defer: DeferConfig::default(),
            exposure: None,
            index: Index::builder(),
            index_in_background: false,
        };
        let trial = decider.trial(policy.clone(), settings.clone(), state(&tools)).unwrap();
        assert_eq!(names(&trial.get(None, Exposure::Native)), ["fs__read", "secrets__dump"]);
        assert!(decider.has_profile("reader"), "a trial changes nothing");
        decider.reconfigure(policy, settings);
        assert!(!decider.has_profile("reader"), "the profile is gone with the old file");
        let after = decider.publish(state(&tools)).unwrap();
        assert_eq!(names(&after.get(None, Exposure::Native)), ["fs__read", "secrets__dump"]);
        assert!(names(&after.get(Some("reader"), Exposure::Native)).is_empty(), "fail closed");
        assert_eq!(
            names(&before.get(Some("reader"), Exposure::Native)),
            ["fs__read"],
            "toolboxes published before keep the policy they were published with"
        );
    }

    #[test]
    fn a_snapshot_whose_required_tools_do_not_fit_is_refused() {
        let text = "[servers.fs]\nmode = \"all\"\nmax_active = 1\n";
        let decider = decider(text, DeferConfig { mode: DeferMode::On, ..DeferConfig::default() }, None);
        let err = decider.publish(state(&[("fs", "read"), ("fs", "write")])).unwrap_err();
        assert!(matches!(err, PolicyError::RequiredOverBudget { ref server, .. } if server == "fs"), "{err}");
        assert!(decider.publish(state(&[("fs", "read")])).is_ok());
    }

    #[test]
    fn a_toolbox_is_built_once_per_key_and_its_index_shared_across_exposures() {
        let decider = decider("", DeferConfig { mode: DeferMode::On, ..DeferConfig::default() }, None);
        let toolboxes = decider.publish(state(&[("fs", "read"), ("git", "log")])).unwrap();
        let native = toolboxes.get(None, Exposure::Native);
        assert!(Arc::ptr_eq(&native, &toolboxes.get(None, Exposure::Native)));
        let bridge = toolboxes.get(None, Exposure::Bridge);
        assert!(Arc::ptr_eq(&native.shared_index(), &bridge.shared_index()));
        let granted = toolboxes.granted(None);
        assert!(
            granted.about().is_granted() && granted.about().exposure() == Exposure::Bridge,
            "deferring: bridge"
        );
        let off = self::decider("", DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() }, None);
        let toolboxes = off.publish(state(&[("fs", "read")])).unwrap();
        assert_eq!(toolboxes.granted(None).about().exposure(), Exposure::Native, "nothing deferred: native");
    }
    #[test]
    fn a_snapshot_that_leaves_a_subjects_tools_as_they_were_reuses_its_index() {
        let decider = decider(CONFIG, DeferConfig::default(), None);
        let tools = [("fs", "read"), ("git", "log")];
        let index = |t: &Toolboxes, profile| t.get(profile, Exposure::Native).shared_index();
        let first = decider.publish(state(&tools)).unwrap();
        // A server starting or failing with no tools: the same catalog, the same indexes.
        let again = decider.publish(state(&tools)).unwrap();
        assert!(Arc::ptr_eq(&index(&first, None), &index(&again, None)));
        assert!(Arc::ptr_eq(&index(&first, Some("reader")), &index(&again, Some("reader"))));
        // A tool the reader cannot see changes the served subject's index only.
        let more = decider.publish(state(&[("fs", "read"), ("git", "log"), ("git", "diff")])).unwrap();
        assert!(!Arc::ptr_eq(&index(&again, None), &index(&more, None)));
        assert_eq!(index(&more, None).catalog().len(), 3);
        assert!(Arc::ptr_eq(&index(&again, Some("reader")), &index(&more, Some("reader"))));
        // A definition that changes is indexed again.
        let changed = CatalogState {
            catalog: Catalog::builder()
                .tool(ToolSpec::mcp("fs", "read", "reads files"))
                .tool(ToolSpec::mcp("git", "log", "does things"))
                .build()
                .unwrap(),
            ..CatalogState::default()
        };
        let changed = decider.publish(changed).unwrap();
        assert!(!Arc::ptr_eq(&index(&first, Some("reader")), &index(&changed, Some("reader"))));
        // A subject no profile names keeps no index.
        let _ = again.get(Some("nobody"), Exposure::Native);
        assert!(again.last_index(Some("nobody")).is_none());
        // New settings start afresh.
        let settings = HostSettings {
            defer: DeferConfig::default(),
            exposure: None,
            index: Index::builder(),
            index_in_background: false,
        };
        decider.reconfigure(decider.policy(), settings);
        let fresh = decider.publish(state(&tools)).unwrap();
        assert!(!Arc::ptr_eq(&index(&first, None), &index(&fresh, None)));
    }

    #[test]
    fn a_server_serving_another_servers_tools_applies_its_rules_as_the_policys() {
        let text = "[servers.demo]\ndenied = [\"write\"]\n";
        let decider = decider(text, DeferConfig { mode: DeferMode::On, ..DeferConfig::default() }, None);
        let mut state = state(&[("fs", "read"), ("fs", "write"), ("git", "write")]);
        let served = [("fs__read", "demo"), ("fs__write", "demo")];
        let ids = served.iter().map(|&(t, s)| (state.catalog.get(t).unwrap(), s));
        state.served_by = Arc::new(ServedBy::new(&state.catalog, ids));
        let toolboxes = decider.publish(state).unwrap();
        let toolbox = toolboxes.get(None, Exposure::Native);
        assert_eq!(names(&toolbox), ["fs__read", "git__write"], "git serves its own write");
        let mut chat = toolbox.conversation();
        match toolbox.check(&mut chat, "fs__write", &serde_json::json!({})) {
            crate::gate::Decision::Deny(crate::gate::Denial::Forbidden { rule, .. }) => {
                assert_eq!(rule.key(), "servers.demo.denied")
            }
            other => panic!("refused by the serving server's rule, not as unknown: {other:?}"),
        }
        let reader = toolboxes.get(Some("nobody"), Exposure::Native);
        assert!(reader.visible().is_empty(), "an unknown profile still sees nothing");
    }
}
