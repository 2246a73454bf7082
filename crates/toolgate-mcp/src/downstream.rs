//! downstream: the gateway's side of its clients: the MCP server each session gets
//! (`server`, with what it adds in `asking`, `instructions`, `tasks` and `resume`, and
//! what it says of a refused call, `refusal`), the
//! passthrough of prompts, resources and logs, and the transports (`stdio`, `http` with its
//! session `door`, and `too_many`, a rate-limited call's status 429).

pub(crate) mod asking;
pub(crate) mod call;
pub(crate) mod door;
pub(crate) mod endpoints;
pub mod http;
pub(crate) mod instructions;
pub(crate) mod passthrough;
pub(crate) mod refusal;
pub(crate) mod resume;
pub mod server;
pub(crate) mod stdio;
pub(crate) mod tasks;
pub(crate) mod too_many;
