//! `docs/config.md` documents every key the `toolgate.toml` parser accepts, and no other; its
//! example configuration parses.

use std::collections::BTreeSet;
use std::path::Path;

use toolgate::config::Config;

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md")).unwrap()
}

#[test]
fn the_reference_lists_exactly_the_keys_the_parser_accepts() {
    let documented: BTreeSet<String> = doc()
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(key, _)| key.to_owned())
        .filter(|key| key != "key")
        .collect();
    let known: BTreeSet<String> = Config::known_keys().into_iter().collect();
    let missing: Vec<&String> = known.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&known).collect();
    assert!(missing.is_empty(), "docs/config.md does not document: {missing:?}");
    assert!(unknown.is_empty(), "docs/config.md documents keys the parser does not accept: {unknown:?}");
}

#[test]
fn the_example_configuration_parses() {
    let text = doc();
    let start = text.find("```toml\n").expect("an example") + 8;
    let end = start + text[start..].find("```").unwrap();
    let config = Config::from_toml("docs/config.md", &text[start..end], Path::new(".")).unwrap();
    assert_eq!(config.servers.len(), 2);
    assert!(config.profiles.contains_key("reader"));
}
