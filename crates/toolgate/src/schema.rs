//! schema: here are a tool and the arguments of a call, tell me what is wrong with them.
//!
//! Validators are compiled once per tool definition (keyed by its definition hash) and shared
//! by every [`Toolbox`](crate::Toolbox) built with the same [`Validators`], so a call costs
//! one lookup and one validation. A schema that does not compile refuses every call of its
//! tool (fail-closed): arguments that cannot be checked are never forwarded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::catalog::{DefinitionHash, Tool};

/// At most this many problems are listed in one error.
const MAX_PROBLEMS: usize = 5;

/// The compiled validators of every tool definition seen so far. Share one between the
/// toolboxes of successive catalog snapshots ([`ToolboxBuilder::validators`]) so that a
/// definition is compiled once.
///
/// [`ToolboxBuilder::validators`]: crate::toolbox::ToolboxBuilder::validators
#[derive(Default)]
pub struct Validators {
    compiled: Mutex<HashMap<DefinitionHash, Arc<Result<jsonschema::Validator, String>>>>,
}

/// Why a call's arguments were not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// The arguments do not match the schema; the message lists what is wrong.
    Arguments(String),
    /// The tool's input schema does not compile; the message says why.
    Schema(String),
}

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.compiled.lock().map(|c| c.len()).unwrap_or_default();
        f.debug_struct("Validators").field("compiled", &n).finish()
    }
}

impl Validators {
    /// Checks `arguments` against the input schema of `tool`; on failure, what the model
    /// reads.
    pub(crate) fn check(&self, tool: &Tool, arguments: &Value) -> Result<(), Problem> {
        let validator = self.validator(tool);
        let validator = match validator.as_ref() {
            Ok(v) => v,
            Err(e) => return Err(Problem::Schema(e.clone())),
        };
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .take(MAX_PROBLEMS + 1)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() { "the arguments".to_owned() } else { format!("`{path}`") };
                format!("- {at}: {e}")
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        let mut out = format!(
            "the arguments of `{}` do not match its input schema, so it was not called:\n",
            tool.qualified_name()
        );
        for p in problems.iter().take(MAX_PROBLEMS) {
            out.push_str(p);
            out.push('\n');
        }
        if problems.len() > MAX_PROBLEMS {
            out.push_str("- (more problems not shown)\n");
        }
        out.push_str("Fix the arguments to match the schema and call it again.");
        Err(Problem::Arguments(out))
    }

    fn validator(&self, tool: &Tool) -> Arc<Result<jsonschema::Validator, String>> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        compiled
            .entry(tool.hash())
            .or_insert_with(|| {
                Arc::new(jsonschema::validator_for(tool.input_schema()).map_err(|e| e.to_string()))
            })
            .clone()
    }

    /// How many definitions have a compiled validator (or a known-bad schema).
    pub fn len(&self) -> usize {
        self.compiled.lock().map(|c| c.len()).unwrap_or_default()
    }

    /// Whether no definition was compiled yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::{Catalog, ToolSpec};

    #[test]
    fn a_wrong_type_is_named_with_its_path_and_the_validator_is_compiled_once() {
        let spec = ToolSpec::mcp("s", "t", "").with_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        }));
        let catalog = Catalog::builder().tool(spec).build().unwrap();
        let tool = &catalog.tools()[0];
        let v = Validators::default();
        assert!(v.check(tool, &json!({"n": 3})).is_ok());
        let Err(Problem::Arguments(err)) = v.check(tool, &json!({"n": "three"})) else { panic!() };
        assert!(err.contains("`/n`"), "{err}");
        assert!(err.contains("integer"), "{err}");
        let Err(Problem::Arguments(err)) = v.check(tool, &json!({})) else { panic!() };
        assert!(err.contains("\"n\" is a required property"), "{err}");
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn a_schema_that_does_not_compile_refuses_every_call() {
        let spec = ToolSpec::mcp("s", "t", "").with_schema(json!({"type": 12}));
        let catalog = Catalog::builder().tool(spec).build().unwrap();
        let got = Validators::default().check(&catalog.tools()[0], &json!({"x": 1}));
        assert!(matches!(got, Err(Problem::Schema(_))), "{got:?}");
    }
}
