//! Differential property test of the host's decider against the toolbox builder it stands for.
//! For random sequences of catalog snapshots (tools of several servers, some served for them by
//! a catalog upstream with rules of its own), random policies (global deny patterns, server
//! rules, a profile) and random deferral settings (on, off, auto around the threshold, a host
//! in bridge exposure), every toolbox the decider gives, for every subject, exposure and grant,
//! equals one built directly with `Toolbox::builder` and the child policy, with deferral as a
//! plain model says: on when the host bridges, or when any snapshot so far was large enough.
//! A tool its serving upstream's rules hide is hidden for every subject and refused by name.
//! A snapshot is refused exactly when the direct build of the served subject's toolbox in the
//! tightest exposure fails, with the same error.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use toolgate::config::{Config, Exposure};
use toolgate::defer::{DeferConfig, DeferMode, Deferral};
use toolgate::policy::ServedBy;
use toolgate::toolbox::{CatalogState, Decider, Decision, Denial, HostSettings};
use toolgate::{Catalog, Index, Policy, ToolSpec, Toolbox};

const SERVERS: [&str; 3] = ["fs", "git", "db"];
const NAMES: [&str; 6] = ["read_file", "write_file", "log", "commit", "query", "drop_table"];
/// The configuration: a global deny, server rules, a profile, and the rules of `hub`, the
/// catalog upstream that serves some tools for their servers.
const CONFIGS: [&str; 4] = [
    "",
    "[policy]\ndeny = [\"*__drop_*\"]\n[profiles.reader]\ntools = [\"fs__*\", \"git__log\"]\n",
    "[servers.hub]\ndenied = [\"write_*\", \"commit\"]\n[profiles.reader]\ntools = [\"*__read_*\"]\n",
    "[servers.git]\nmode = \"all\"\nmax_active = 2\n[servers.hub]\nallowed = [\"read_*\", \"log\"]\n",
];
const PROFILES: [Option<&str>; 3] = [None, Some("reader"), Some("ghost")];

#[derive(Debug, Clone)]
struct Snapshot {
    /// (server, name, served by `hub`)
    tools: Vec<(usize, usize, bool)>,
}

fn snapshot() -> impl Strategy<Value = Snapshot> {
    prop::collection::vec((0..SERVERS.len(), 0..NAMES.len(), any::<bool>()), 0..14)
        .prop_map(|tools| Snapshot { tools })
}

fn state(snapshot: &Snapshot) -> CatalogState {
    let mut seen = BTreeSet::new();
    let mut builder = Catalog::builder();
    let mut hub = Vec::new();
    for &(s, n, served) in &snapshot.tools {
        if !seen.insert((s, n)) {
            continue;
        }
        builder = builder.tool(ToolSpec::mcp(SERVERS[s], NAMES[n], "does something with the named thing"));
        if served {
            hub.push(format!("{}__{}", SERVERS[s], NAMES[n]));
        }
    }
    let catalog = builder.build().unwrap();
    let served_by = ServedBy::new(&catalog, hub.iter().map(|t| (catalog.get(t).unwrap(), "hub")));
    CatalogState { catalog, served_by: Arc::new(served_by), ..CatalogState::default() }
}

/// The direct build the decider stands for, over `catalog`: the snapshot's, less what the
/// rules of the upstream serving a tool (`hub`) hide, which only the decider knows about.
fn direct(
    catalog: &Catalog,
    policy: Policy,
    defers: bool,
    exposure: Exposure,
    granted: bool,
) -> Result<Toolbox, toolgate::toolbox::PolicyError> {
    let mode = if defers { DeferMode::On } else { DeferMode::Off };
    Toolbox::builder(catalog, policy)
        .defer(DeferConfig { mode, ..DeferConfig::default() })
        .exposure(exposure)
        .granted(granted)
        .build()
}

fn names(toolbox: &Toolbox) -> Vec<String> {
    toolbox.visible().tools().iter().map(|t| t.qualified_name().to_owned()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_decider_gives_what_the_toolbox_builder_would_with_deferral_kept_on(
        config in 0..CONFIGS.len(),
        snapshots in prop::collection::vec(snapshot(), 1..5),
        mode in 0..3usize,
        window in prop::sample::select(vec![200usize, 2_000, 200_000]),
        exposure in prop::sample::select(vec![None, Some(Exposure::Native), Some(Exposure::Bridge)]),
    ) {
        let config: Config = Config::from_toml("toolgate.toml", CONFIGS[config], Path::new(".")).unwrap();
        let root = Policy::new(&config, None).unwrap();
        let mode = [DeferMode::On, DeferMode::Off, DeferMode::Auto][mode];
        let defer = DeferConfig { mode, context_window: window, ..DeferConfig::default() };
        let decider = Decider::new(root.clone(), HostSettings { defer, exposure, index: Index::builder(), index_in_background: false });
        let mut latched = exposure == Some(Exposure::Bridge);
        for snapshot in &snapshots {
            let state = state(snapshot);
            latched = latched || Deferral::decide(&state.catalog, &defer).enabled();
            let hidden_by_hub = |tool: &toolgate::Tool| {
                state.served_by.get(tool.qualified_name()).is_some() && !root.decide_under("hub", tool).is_allow()
            };
            let served = state.catalog.filter(|t| !hidden_by_hub(t));
            let tightest = Exposure::tightest(exposure);
            let expected = direct(&served, root.clone(), latched, tightest, false);
            let toolboxes = match (decider.publish(state.clone()), expected) {
                (Ok(toolboxes), Ok(_)) => toolboxes,
                (Err(got), Err(want)) => {
                    prop_assert_eq!(got, want);
                    continue;
                }
                (got, want) => {
                    return Err(TestCaseError::fail(format!("decider {:?}, direct build {:?}", got.err(), want.err())));
                }
            };
            prop_assert_eq!(toolboxes.defers(), latched);
            for profile in PROFILES {
                for (exposure, granted) in [(Exposure::Native, false), (Exposure::Bridge, false), (Exposure::Native, true)] {
                    let got = if granted { toolboxes.granted(profile) } else { toolboxes.get(profile, exposure) };
                    let exposure = if granted && latched { Exposure::Bridge } else { exposure };
                    let policy = match profile {
                        None => Ok(root.clone()),
                        Some(name) => root.child(name),
                    };
                    let want = policy.and_then(|p| direct(&served, p, latched, exposure, granted));
                    let Ok(want) = want else {
                        prop_assert!(got.visible().is_empty(), "fail closed: {:?}", names(&got));
                        continue;
                    };
                    prop_assert_eq!(names(&got), names(&want));
                    prop_assert_eq!(got.about().defers(), want.about().defers());
                    prop_assert_eq!(got.about().exposure(), want.about().exposure());
                    prop_assert_eq!(got.about().is_granted(), granted);
                    prop_assert_eq!(got.about().subject(), want.about().subject());
                    if granted {
                        continue;
                    }
                    // A tool hidden by the upstream serving it is refused by name, with the rule.
                    let policy = match profile {
                        None => root.clone(),
                        Some(name) => root.child(name).unwrap(),
                    };
                    for tool in state.catalog.tools() {
                        let name = tool.qualified_name();
                        if !hidden_by_hub(tool) || !policy.decide(tool).is_allow() {
                            continue;
                        }
                        let mut chat = got.conversation();
                        let decision = got.check(&mut chat, name, &json!({}));
                        prop_assert!(
                            matches!(decision, Decision::Deny(Denial::Forbidden { .. })),
                            "{name}: {decision:?}"
                        );
                    }
                }
            }
        }
    }
}
