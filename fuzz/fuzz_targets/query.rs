//! A `tool_search` query from a model: any text, through the facade (the `select:` screen, the
//! query language, every strategy the toolbox ranks with) over the embedded catalog.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolgate_mcp::config::Config;
use toolgate::{Catalog, Policy, Toolbox};

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        let config = Config::from_toml("fuzz.toml", "[policy]\ndeny = [\"*__delete*\"]\n", ".".as_ref()).unwrap();
        let policy = Policy::new(&config, None).unwrap();
        Toolbox::builder(&Catalog::embedded(), policy).build().unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else { return };
    let toolbox = toolbox();
    let mut conversation = toolbox.conversation();
    let limit = data.first().map_or(5, |b| usize::from(*b % 12));
    if let Ok(found) = toolbox.tool_search(&mut conversation, &json!({"query": query, "limit": limit})) {
        for tool in found.matches() {
            assert!(!tool.qualified_name().contains("__delete"), "a denied tool was found: {}", tool.qualified_name());
        }
    }
    let _ = toolbox.tools(&mut conversation);
});
