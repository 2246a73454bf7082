//! A catalog file (JSONL, or a JSON map of server to `tools/list` result) as a user or an
//! upstream writes it: any bytes load or fail with an error naming the line, never panic; and
//! every definition loaded is counted in tokens, as the gateway counts what a list saves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::Catalog;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Catalog::from_text("fuzz.jsonl", text) {
        Ok(catalog) => {
            for tool in catalog.tools() {
                assert!(catalog.get(tool.qualified_name()).is_some());
                assert!(tool.qualified_name().len() <= 64, "{}", tool.qualified_name());
                let tokens = toolgate::tokens::TokenCounter::get().definition(tool);
                assert!(tokens <= tool.definition_text().len(), "more tokens than bytes");
            }
        }
        Err(e) => assert!(e.to_string().contains("fuzz.jsonl"), "{e}"),
    }
});
