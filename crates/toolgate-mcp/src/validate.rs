//! validate: here are a tool and the arguments of a call, tell me what is wrong with them.
//!
//! Validators are compiled once per tool definition (keyed by its definition hash) and kept
//! for the life of the gateway, so a call costs one lookup and one validation. A schema that
//! does not compile is reported once in the log and its tool's calls are forwarded unchecked:
//! the upstream published it and is the judge of its own arguments.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolgate::Tool;
use toolgate::catalog::DefinitionHash;

/// At most this many problems are listed in one error.
const MAX_PROBLEMS: usize = 5;

/// The compiled validators of every tool definition seen so far.
#[derive(Default)]
pub(crate) struct Validators {
    compiled: Mutex<HashMap<DefinitionHash, Arc<Option<jsonschema::Validator>>>>,
}

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.compiled.lock().map(|c| c.len()).unwrap_or_default();
        f.debug_struct("Validators").field("compiled", &n).finish()
    }
}

impl Validators {
    /// Checks `arguments` against the input schema of `tool`; on failure, the message the
    /// model reads.
    pub(crate) fn check(&self, tool: &Tool, arguments: &Value) -> Result<(), String> {
        let validator = self.validator(tool);
        let Some(validator) = validator.as_ref() else {
            return Ok(());
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
        Err(out)
    }

    fn validator(&self, tool: &Tool) -> Arc<Option<jsonschema::Validator>> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        compiled
            .entry(tool.hash())
            .or_insert_with(|| match jsonschema::validator_for(tool.input_schema()) {
                Ok(v) => Arc::new(Some(v)),
                Err(e) => {
                    tracing::warn!(
                        tool = tool.qualified_name(),
                        "the input schema does not compile ({e}); calls are forwarded without checking arguments"
                    );
                    Arc::new(None)
                }
            })
            .clone()
    }

    /// How many definitions have a compiled validator (or a known-bad schema).
    pub(crate) fn len(&self) -> usize {
        self.compiled.lock().map(|c| c.len()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate::{Catalog, ToolSpec};

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
        let err = v.check(tool, &json!({"n": "three"})).unwrap_err();
        assert!(err.contains("`/n`"), "{err}");
        assert!(err.contains("integer"), "{err}");
        let err = v.check(tool, &json!({})).unwrap_err();
        assert!(err.contains("\"n\" is a required property"), "{err}");
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn a_schema_that_does_not_compile_lets_calls_through() {
        let spec = ToolSpec::mcp("s", "t", "").with_schema(json!({"type": 12}));
        let catalog = Catalog::builder().tool(spec).build().unwrap();
        assert!(Validators::default().check(&catalog.tools()[0], &json!({"x": 1})).is_ok());
    }
}
