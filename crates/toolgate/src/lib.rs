//! toolgate: an AI agent works with thousands of tools while the model sees, each turn, only
//! the few definitions it needs.
//!
//! The full [catalog](catalog) stays on the host. Each turn the model gets the core tools,
//! the `tool_search` meta-tool and the tools it loaded ([session]); everything else is
//! [deferred](defer) and known by name only. Search runs over an [index](search) with the
//! query language of Claude Code's ToolSearch and a field-weighted BM25 ranker.
//!
//! One turn, end to end:
//!
//! ```
//! use toolgate::defer::{DeferConfig, DeferMode, Deferral};
//! use toolgate::request::{deferred_names, frozen_announcement, tool_list, tool_search_tool};
//! use toolgate::search::Request;
//! use toolgate::{Catalog, Index, Session};
//!
//! // The catalog: 527 real MCP tools compiled into the library (or Catalog::from_path).
//! let catalog = Catalog::embedded();
//! let deferral = Deferral::decide(&catalog, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
//! let index = Index::builder().build(&catalog);
//! let mut session = Session::new();
//!
//! // First request: core tools and tool_search, with the deferred names announced once.
//! let search = tool_search_tool();
//! assert_eq!(tool_list(&catalog, &deferral, &session, &search).len(), 1);
//! let announcement = frozen_announcement(deferred_names(&catalog, &deferral));
//! assert!(announcement.contains("playwright__playwright_screenshot"));
//!
//! // The model calls tool_search; the hits join the active set.
//! let result = session.tool_search(&index, &deferral, Request::new("take a screenshot of a web page", 3), &[]);
//! println!("{}", result.render(&catalog));
//! assert!(session.is_active("playwright__playwright_screenshot"));
//!
//! // Next request: the loaded tools follow tool_search, with their full schemas.
//! let tools = tool_list(&catalog, &deferral, &session, &search);
//! assert_eq!(tools[0].qualified_name(), "tool_search");
//! assert_eq!(tools.len(), 4);
//!
//! // The gate: only core or active tools may run.
//! let shot = catalog.get("playwright__playwright_screenshot").unwrap();
//! assert!(toolgate::gate::check(&catalog, &deferral, &session, "playwright__playwright_screenshot").is_allow());
//! assert!(!toolgate::gate::check(&catalog, &deferral, &session, "git__git_log").is_allow());
//! # let _ = shot;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod budget;
pub mod catalog;
pub mod config;
pub mod defer;
pub mod eval;
pub mod gate;
pub mod naming;
pub mod policy;
pub mod preselect;
pub mod request;
pub mod search;
pub mod semantic;
pub mod session;
pub mod tokens;

pub use catalog::{Catalog, Tool, ToolId, ToolSpec};
pub use policy::Policy;
pub use search::{Index, Strategy};
pub use session::Session;
