//! One JSON-RPC message from an MCP client, as the gateway takes it on stdio: the size and
//! depth screen first (a refused request must get a stand-in that names its id), then rmcp's
//! parser, then, for `tools/call`, the facade's gate on a toolbox that shows nothing loaded:
//! no call of a real tool may be allowed.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::Value;
use toolgate::{Catalog, Policy, Toolbox};
use toolgate_mcp::limits;

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        let policy = Policy::new(&toolgate_mcp::config::Config::default(), None).unwrap();
        Toolbox::builder(&Catalog::embedded(), policy).build().unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    if let Err(why) = limits::screen(data) {
        if let Some(stand_in) = limits::substitute(data, &why) {
            assert!(limits::screen(&stand_in).is_ok(), "the stand-in passes the screen");
            let parsed: Result<ClientJsonRpcMessage, _> = serde_json::from_slice(&stand_in);
            assert!(parsed.is_ok(), "the stand-in parses: {}", String::from_utf8_lossy(&stand_in));
        }
        return;
    }
    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(data) else { return };
    let JsonRpcMessage::Request(request) = message else { return };
    if let ClientRequest::CallToolRequest(call) = request.request {
        let toolbox = toolbox();
        let mut conversation = toolbox.conversation();
        let arguments = call.params.arguments.map_or(Value::Null, Value::Object);
        if call.params.name == "tool_search" {
            let _ = toolbox.tool_search(&mut conversation, &arguments);
        } else {
            let decision = toolbox.check(&mut toolbox.conversation(), &call.params.name, &arguments);
            assert!(!decision.is_allow(), "an unshown tool was allowed: {}", call.params.name);
        }
    }
});
