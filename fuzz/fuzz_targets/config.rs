//! A configuration as a user writes it: `toolgate.toml`, or an `mcpServers` JSON file of
//! another client. The first byte picks the loader; errors name the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::Policy;
use toolgate_mcp::config::Config;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let (label, parsed) = if kind % 2 == 0 {
        ("fuzz.toml", Config::from_toml("fuzz.toml", text, ".".as_ref()))
    } else {
        ("fuzz.json", Config::from_mcp_json("fuzz.json", text, ".".as_ref()))
    };
    match parsed {
        Ok(config) => {
            // Every profile it defines gives a policy or a clear error.
            let _ = Policy::new(&config, None);
            for name in config.profiles.keys() {
                let _ = Policy::new(&config, Some(name));
            }
        }
        Err(e) => assert!(e.to_string().starts_with(label), "{e}"),
    }
});
