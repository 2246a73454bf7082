//! Tests of the library's reader alone ([`NoHost`]) and of what a [`Host`] adds to it. The
//! gateway's reader (toolgate-mcp's `config`) tests the whole file, every key and error.

use std::path::Path;

use expect_test::{Expect, expect};

use super::*;

fn toml(text: &str) -> Result<Config, ConfigError> {
    let env = |_: &str| None;
    Config::read_toml(&Source::with_env("toolgate.toml", Path::new("/etc/toolgate"), &env), text)
}

fn check_error(text: &str, want: Expect) {
    want.assert_eq(&toml(text).unwrap_err().to_string());
}

#[test]
fn the_library_alone_reads_its_keys_and_no_other() {
    let c = toml(
        "[gateway]\nexposure = \"bridge\"\nmode = \"auto\"\n[servers.git]\nmax_active = 3\n[profiles.r]\ntools = [\"git__*\"]\n",
    )
    .unwrap();
    assert_eq!(c.exposure, Some(Exposure::Bridge));
    assert_eq!(c.defer.mode, crate::defer::DeferMode::Auto);
    assert_eq!(c.servers["git"].max_active, 3);
    assert_eq!(c.servers["git"].host, ());
    assert_eq!(
        Config::<NoHost>::default().defer.mode,
        crate::defer::DeferMode::On,
        "deferral is on by default"
    );
    // How to reach a server is the gateway's key: the library alone does not know it.
    let err = toml("[servers.git]\ncommand = \"git-mcp\"\n").unwrap_err();
    assert_eq!(err.key, "servers.git.command");
    assert!(
        matches!(&err.kind, ConfigErrorKind::UnknownKey { known, .. } if !known.contains(&"command")),
        "{err}"
    );
    let err = toml("[tokens.ci]\nenv = \"CI\"\n").unwrap_err();
    assert_eq!(err.key, "tokens");
    let err = Config::<NoHost>::from_mcp_json("mcp.json", "{}", Path::new(".")).unwrap_err();
    assert!(err.to_string().contains("the gateway"), "{err}");
    assert!(Config::<NoHost>::known_keys().iter().all(|k| !k.ends_with(".command")));
}

/// A host that reads one key of `[gateway]`, one of `[servers.NAME]` and a table of its own.
#[derive(Debug, Clone, PartialEq, Default)]
struct Probe {
    colour: Option<String>,
    greeting: Option<String>,
}

impl Host for Probe {
    type Server = Option<usize>;
    const TABLES: &'static [&'static str] = &["hello"];
    const GATEWAY_KEYS: &'static [&'static str] = &["colour"];
    const SERVER_KEYS: &'static [&'static str] = &["weight"];

    fn known_keys() -> Vec<String> {
        vec!["gateway.colour".into(), "servers.NAME.weight".into(), "hello.text".into()]
    }

    fn gateway(&mut self, f: &Fields<'_, '_>) -> Result<(), ConfigError> {
        self.colour = f.string("colour", "a colour")?.map(str::to_owned);
        Ok(())
    }

    fn server(f: &Fields<'_, '_>, _: &str) -> Result<Option<usize>, ConfigError> {
        f.count("weight", 1, "a weight above 0")
    }

    fn tables(
        &mut self,
        top: &Fields<'_, '_>,
        profiles: &std::collections::BTreeMap<String, ProfileConfig>,
        _: &std::collections::BTreeMap<String, ServerConfig<Option<usize>>>,
    ) -> Result<(), ConfigError> {
        if let Some(hello) = top.child("hello", "a table", &["text"])? {
            let text = hello.expanded("text")?.unwrap_or_default();
            self.greeting = Some(format!("{text} ({} profiles)", profiles.len()));
        }
        Ok(())
    }
}

#[test]
fn a_host_reads_its_keys_in_the_same_pass_and_unknown_keys_name_both_sets() {
    let text = "[gateway]\ncolour = \"teal\"\nmode = \"off\"\n[servers.a]\nweight = 2\nmax_active = 5\n\
                [profiles.p]\n[hello]\ntext = \"${WHO:-hi}\"\n";
    let c = Config::<Probe>::from_toml("probe.toml", text, Path::new(".")).unwrap();
    assert_eq!(c.host.colour.as_deref(), Some("teal"));
    assert_eq!(c.host.greeting.as_deref(), Some("hi (1 profiles)"));
    assert_eq!(c.defer.mode, crate::defer::DeferMode::Off);
    assert_eq!((c.servers["a"].host, c.servers["a"].max_active), (Some(2), 5));
    let err =
        Config::<Probe>::from_toml("probe.toml", "[servers.a]\nwieght = 2\n", Path::new(".")).unwrap_err();
    let ConfigErrorKind::UnknownKey { suggestion, known, .. } = &err.kind else { panic!("{err}") };
    assert_eq!(*suggestion, Some("weight"));
    assert!(known.contains(&"max_active") && known.contains(&"weight"), "{known:?}");
    let err =
        Config::<Probe>::from_toml("probe.toml", "[servers.a]\nweight = 0\n", Path::new(".")).unwrap_err();
    assert_eq!(err.to_string(), "probe.toml: servers.a.weight: 0 is out of range; expected a weight above 0");
    let keys = Config::<Probe>::known_keys();
    assert!(keys.contains(&"gateway.mode".to_owned()) && keys.contains(&"hello.text".to_owned()));
}

#[test]
fn the_search_table_names_every_strategy_a_name_can_give() {
    let names: Vec<&str> = crate::search::Strategy::NAMED.iter().map(|s| s.as_str()).collect();
    assert_eq!(toml_file::strategy_names(), names.as_slice());
    assert_eq!(toml("").unwrap().search, SearchConfig::default());
    let c = toml("[search]\nstrategy = \"bm25f\"\n").unwrap();
    assert_eq!(c.search.strategy, crate::search::Strategy::Bm25f);
    // The names listed depend on the features built.
    let err = toml("[search]\nstrategy = \"vector\"\n").unwrap_err().to_string();
    assert!(
        err.starts_with(r#"toolgate.toml: search.strategy: invalid value "vector"; expected "keyword""#),
        "{err}"
    );
    check_error(
        "[search]\nstrategy = \"lexical\"\nmodel = \"minilm\"\n",
        expect![[
            r#"toolgate.toml: search.strategy: `model` is only read by strategy "bert"; remove it or set strategy = "bert""#
        ]],
    );
}

#[test]
fn the_index_cache_is_a_directory_relative_to_the_file_or_off_or_left_to_the_gateway() {
    let c = toml("[search]\nindex_cache = \"cache/index\"\n").unwrap();
    assert_eq!(c.search.index_cache.dir(), Some(Path::new("/etc/toolgate/cache/index")));
    assert_eq!(c.search.strategy, crate::search::Strategy::DEFAULT);
    let off = toml("[search]\nindex_cache = false\n").unwrap();
    assert_eq!(
        (off.search.index_cache.clone(), off.search.index_cache.dir()),
        (crate::search::IndexCache::Off, None)
    );
    let unset = toml("[search]\nstrategy = \"lexical\"\n").unwrap();
    assert_eq!(
        (unset.search.index_cache.clone(), unset.search.index_cache.dir()),
        (crate::search::IndexCache::Auto, None)
    );
    check_error(
        "[search]\nindex_cache = true\n",
        expect![
            "toolgate.toml: search.index_cache: expected a directory path, or false, found a boolean (true)"
        ],
    );
}

#[cfg(feature = "bert")]
#[test]
fn a_model_directory_means_bert_and_bert_needs_one() {
    let c = toml("[search]\nmodel = \"models/minilm\"\n").unwrap();
    assert_eq!(c.search.strategy, crate::search::Strategy::Bert);
    assert_eq!(c.search.model.as_deref(), Some(Path::new("/etc/toolgate/models/minilm")));
    check_error(
        "[search]\nstrategy = \"bert\"\n",
        expect![[
            r#"toolgate.toml: search.strategy: strategy "bert" needs `model`, a sentence-transformers model directory"#
        ]],
    );
}
