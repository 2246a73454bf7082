//! overrides: the operator's fixes to an upstream's tool definitions (`[servers.NAME.tools.TOOL]`),
//! and the calls of a fixed tool put back into the upstream's terms.
//!
//! An override renames a tool, replaces or extends its description, hides a parameter behind
//! a fixed value, gives a parameter a default, or marks the tool read-only or destructive. It
//! is applied where the upstreams' listings are merged (`snapshot.rs`), before names are
//! assigned, pins compared, the policy applied or the index built: what the model, the index,
//! pinning and the policy see is the overridden definition. A call goes back the other way
//! ([`ToolOverrides::upstream_call`]): the upstream's own name, the defaults of parameters the
//! call left out, and the fixed values, which the caller can never set: a call that sets one
//! is refused, whatever the tool's schema allows.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};
use toolgate::ToolSpec;

/// What the configuration changes of one tool (`[servers.NAME.tools.TOOL]`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOverride {
    /// The name the tool is shown under instead of the upstream's (`name`).
    pub name: Option<String>,
    /// The description shown instead of the upstream's (`description`).
    pub description: Option<String>,
    /// Text added after the description, on a line of its own (`append`).
    pub append: Option<String>,
    /// Parameters taken out of the schema, each sent upstream with this value on every call
    /// (`hide = { owner = "acme" }`).
    pub hide: BTreeMap<String, Value>,
    /// Parameters whose value is this when a call leaves them out (`defaults`): the schema
    /// shows the default and no longer requires the parameter.
    pub defaults: BTreeMap<String, Value>,
    /// Sets the `readOnlyHint` annotation (`read_only`).
    pub read_only: Option<bool>,
    /// Sets the `destructiveHint` annotation (`destructive`).
    pub destructive: Option<bool>,
}

impl ToolOverride {
    /// What it changes, in words, for `toolgate doctor`.
    pub fn changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(name) = &self.name {
            out.push(format!("shown as `{name}`"));
        }
        if self.description.is_some() {
            out.push("description replaced".to_owned());
        }
        if self.append.is_some() {
            out.push("description extended".to_owned());
        }
        let names =
            |m: &BTreeMap<String, Value>| m.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        if !self.hide.is_empty() {
            out.push(format!("hides {} (fixed values sent upstream)", names(&self.hide)));
        }
        if !self.defaults.is_empty() {
            out.push(format!("defaults for {}", names(&self.defaults)));
        }
        for (hint, value) in [("readOnlyHint", self.read_only), ("destructiveHint", self.destructive)] {
            if let Some(value) = value {
                out.push(format!("{hint} = {value}"));
            }
        }
        out
    }
}

/// The overrides of one server's tools, by the upstream's tool name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOverrides {
    by_upstream: BTreeMap<String, ToolOverride>,
    /// The upstream's name of each renamed tool, by the name it is shown under.
    upstream_of: HashMap<String, String>,
}

impl ToolOverrides {
    /// The overrides of `by_upstream` (the upstream's tool name → what changes).
    pub fn new(by_upstream: BTreeMap<String, ToolOverride>) -> ToolOverrides {
        let upstream_of = by_upstream
            .iter()
            .filter_map(|(upstream, o)| o.name.as_ref().map(|shown| (shown.clone(), upstream.clone())))
            .collect();
        ToolOverrides { by_upstream, upstream_of }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.by_upstream.is_empty()
    }

    /// Each override, by the upstream's tool name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &ToolOverride)> {
        self.by_upstream.iter()
    }

    /// `spec` as the configuration fixes it (unchanged when nothing names it).
    pub fn apply(&self, spec: &ToolSpec) -> Option<ToolSpec> {
        let o = self.by_upstream.get(&spec.name)?;
        let mut spec = spec.clone();
        if let Some(name) = &o.name {
            spec.name = name.clone();
        }
        if let Some(description) = &o.description {
            spec.description = description.clone();
        }
        if let Some(append) = &o.append {
            spec.description = if spec.description.trim().is_empty() {
                append.clone()
            } else {
                format!("{}\n{append}", spec.description.trim_end())
            };
        }
        if !o.hide.is_empty() || !o.defaults.is_empty() {
            let mut schema = spec.input_schema.value().clone();
            fix_schema(&mut schema, o);
            spec.input_schema = schema.into();
        }
        for (key, value) in [("readOnlyHint", o.read_only), ("destructiveHint", o.destructive)] {
            if let Some(value) = value {
                spec.annotations.insert(key.to_owned(), Value::Bool(value));
            }
        }
        Some(spec)
    }

    /// The call of the tool shown as `shown` with `arguments`, in the upstream's terms: its own
    /// name, and the arguments with the defaults of parameters left out and the fixed values.
    /// A call that sets a hidden parameter is an error naming it.
    pub fn upstream_call(
        &self,
        shown: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<(String, Option<Map<String, Value>>), String> {
        let upstream = match self.upstream_of.get(shown) {
            Some(upstream) => upstream.clone(),
            None => shown.to_owned(),
        };
        let Some(o) = self.by_upstream.get(&upstream) else {
            return Ok((upstream, arguments));
        };
        // A renamed tool is reached under its new name only: its old one fails closed.
        if let Some(name) = o.name.as_deref().filter(|name| *name != shown) {
            return Err(format!("tool `{shown}` is shown as `{name}` by the gateway's configuration"));
        }
        if o.hide.is_empty() && o.defaults.is_empty() {
            return Ok((upstream, arguments));
        }
        let mut arguments = arguments.unwrap_or_default();
        if let Some(set) = o.hide.keys().find(|k| arguments.contains_key(*k)) {
            return Err(format!(
                "parameter `{set}` of tool `{shown}` is fixed by the gateway's configuration; call the tool without it"
            ));
        }
        for (key, value) in &o.defaults {
            arguments.entry(key.clone()).or_insert_with(|| value.clone());
        }
        for (key, value) in &o.hide {
            arguments.insert(key.clone(), value.clone());
        }
        Ok((upstream, Some(arguments)))
    }
}

/// `schema` without the hidden parameters, and with each defaulted one showing its default
/// and no longer required.
fn fix_schema(schema: &mut Value, o: &ToolOverride) {
    let Some(object) = schema.as_object_mut() else { return };
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for key in o.hide.keys() {
            properties.remove(key);
        }
        for (key, value) in &o.defaults {
            if let Some(Value::Object(property)) = properties.get_mut(key) {
                property.insert("default".to_owned(), value.clone());
            }
        }
    }
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required
            .retain(|r| r.as_str().is_none_or(|r| !o.hide.contains_key(r) && !o.defaults.contains_key(r)));
        if required.is_empty() {
            object.remove("required");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn issue_tool() -> ToolSpec {
        let mut spec = ToolSpec::mcp("gh", "create_issue", "Creates an issue.");
        spec.input_schema = json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string"},
                "title": {"type": "string"},
                "labels": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["owner", "repo", "title", "labels"]
        })
        .into();
        spec
    }

    fn overrides() -> ToolOverrides {
        let o = ToolOverride {
            name: Some("open_issue".into()),
            append: Some("Only for the acme/app repository.".into()),
            hide: BTreeMap::from([("owner".into(), json!("acme")), ("repo".into(), json!("app"))]),
            defaults: BTreeMap::from([("labels".into(), json!(["triage"]))]),
            destructive: Some(false),
            ..ToolOverride::default()
        };
        ToolOverrides::new(BTreeMap::from([("create_issue".into(), o)]))
    }

    #[test]
    fn the_definition_is_what_the_operator_wrote() {
        let spec = overrides().apply(&issue_tool()).unwrap();
        assert_eq!(spec.name, "open_issue");
        assert_eq!(spec.description, "Creates an issue.\nOnly for the acme/app repository.");
        let schema = spec.input_schema.value();
        assert_eq!(schema["required"], json!(["title"]), "hidden and defaulted ones are not required");
        assert!(schema["properties"].get("owner").is_none() && schema["properties"].get("repo").is_none());
        assert_eq!(schema["properties"]["labels"]["default"], json!(["triage"]));
        assert_eq!(spec.annotations["destructiveHint"], json!(false));
        assert!(overrides().apply(&ToolSpec::mcp("gh", "list_issues", "")).is_none());
    }

    #[test]
    fn a_call_goes_upstream_under_its_own_name_with_the_fixed_values_and_defaults() {
        let o = overrides();
        let (name, args) =
            o.upstream_call("open_issue", Some(json!({"title": "t"}).as_object().cloned().unwrap())).unwrap();
        assert_eq!(name, "create_issue");
        assert_eq!(
            Value::Object(args.unwrap()),
            json!({"title": "t", "labels": ["triage"], "owner": "acme", "repo": "app"})
        );
        let (_, args) =
            o.upstream_call("open_issue", json!({"title": "t", "labels": []}).as_object().cloned()).unwrap();
        assert_eq!(args.unwrap()["labels"], json!([]), "a default never replaces what the call set");
        let err = o.upstream_call("open_issue", json!({"title": "t", "owner": "evil"}).as_object().cloned());
        assert_eq!(
            err.unwrap_err(),
            "parameter `owner` of tool `open_issue` is fixed by the gateway's configuration; call the tool without it"
        );
        assert_eq!(o.upstream_call("list_issues", None).unwrap(), ("list_issues".to_owned(), None));
        // The upstream's old name is not a way around the rename's fixed values.
        let err = o.upstream_call("create_issue", None).unwrap_err();
        assert_eq!(err, "tool `create_issue` is shown as `open_issue` by the gateway's configuration");
    }
}
