//! remembered: here is a server's listing, keep it; here is a server starting again, give me
//! what it listed last time.
//!
//! A client that does not wait for its MCP servers (Claude Code registered without
//! `alwaysLoad`) sends its first model request with whatever answered by then. So that a
//! gateway whose servers are slow to start still answers at once, and still names their tools,
//! each live server's last listing is kept on disk: a start serves those tools while the server
//! starts (announced and searchable; a call waits for the server, and runs only if the
//! definition the server then lists is the one the model was shown), and the server's own
//! listing replaces them when it comes.
//!
//! One file a server, in the directory `[search] index_cache` names when it names one, else
//! in the data directory's `listings`; named by the SHA-256 of the configuration file, the
//! server's key and how it is reached (command, arguments and working directory, or URL), so a
//! changed entry starts from nothing. Each file ends with an HMAC-SHA-256 under the key that
//! authenticates the index cache (`index-cache.key` of the data directory): a file that is
//! short, edited, or planted by anyone without the key is not read. It is read only if it is a
//! regular file of at most [`MOST_BYTES`], and written whole to a new file renamed into place.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Transport;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolgate::ToolSpec;

/// The most one remembered listing may hold (bytes), as `[gateway] list_max_bytes` allows.
const MOST_BYTES: u64 = 64 << 20;

/// The bytes of the MAC that ends every file.
const MAC_BYTES: usize = 32;

/// Where listings are kept, and the key that authenticates them.
#[derive(Debug, Clone)]
pub(crate) struct Remembered {
    dir: PathBuf,
    mac: [u8; 32],
}

impl Remembered {
    /// The store in `cache_dir` (the index cache's), else the data directory's `listings`;
    /// `None` when neither the directory nor the key can be had (nothing is remembered then).
    pub(crate) fn open(cache_dir: Option<&Path>) -> Option<Remembered> {
        let data = toolgate::files::data_dir()?;
        let dir = cache_dir.map(Path::to_path_buf).unwrap_or_else(|| data.join("listings"));
        let mac = toolgate::files::key_file(&data.join("index-cache.key"))?;
        Some(Remembered { dir, mac })
    }

    /// The file of server `name`, reached by `transport`, of the configuration at `source`.
    pub(crate) fn path(&self, source: Option<&Path>, name: &str, transport: &Transport) -> PathBuf {
        let mut h = Sha256::new();
        for part in [
            source.map(|p| p.display().to_string()).unwrap_or_default(),
            name.to_owned(),
            identity(transport),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        let hex: String = h.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("listing-{hex}.json"))
    }

    /// What the server of `file` listed last time, if a whole, authenticated file is there.
    pub(crate) fn load(&self, file: &Path) -> Option<Vec<Arc<ToolSpec>>> {
        let bytes = toolgate::files::read_regular(file, MOST_BYTES).ok()?;
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(MAC_BYTES)?)?;
        let expected = toolgate::secret::hmac_sha256(&self.mac, body);
        if !toolgate::secret::constant_time_eq(&expected, sum) {
            tracing::warn!("{} is not a listing this gateway wrote; it is not read", file.display());
            return None;
        }
        let tools: Vec<Value> = serde_json::from_slice(body).ok()?;
        tools
            .iter()
            .map(spec_from_json)
            .collect::<Option<Vec<_>>>()
            .map(|t| t.into_iter().map(Arc::new).collect())
    }

    /// Keeps `tools`, a server's listing, in `file`; a failure only means nothing is kept.
    pub(crate) fn save(&self, file: &Path, tools: &[Arc<ToolSpec>]) {
        let listed: Vec<Value> = tools.iter().map(|t| spec_to_json(t)).collect();
        let Ok(mut bytes) = serde_json::to_vec(&listed) else { return };
        let sum = toolgate::secret::hmac_sha256(&self.mac, &bytes);
        bytes.extend_from_slice(&sum);
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        if let Err(e) = toolgate::files::replace(file, &bytes, 0o600) {
            tracing::debug!("cannot keep a listing in {}: {e}", file.display());
        }
    }
}

/// How a server is reached, for its file's name: a changed command or URL is another server.
fn identity(transport: &Transport) -> String {
    match transport {
        Transport::Stdio { command, args, cwd, .. } => {
            format!(
                "stdio\0{command}\0{}\0{}",
                args.join("\0"),
                cwd.as_ref().map(|c| c.display().to_string()).unwrap_or_default()
            )
        }
        Transport::Http { url, .. } => format!("http\0{url}"),
        Transport::Catalog { path } => format!("catalog\0{}", path.display()),
    }
}

/// A listed tool as kept: everything its definition and its search read.
fn spec_to_json(spec: &ToolSpec) -> Value {
    json!({
        "server": spec.server,
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema.value_once(),
        "annotations": spec.annotations,
        "always_load": spec.always_load,
        "search_hint": spec.search_hint,
    })
}

/// A kept tool back as the catalog's spec, if it is one.
fn spec_from_json(value: &Value) -> Option<ToolSpec> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut spec = ToolSpec::mcp(&text("server")?, &text("name")?, &text("description").unwrap_or_default());
    spec.input_schema = value.get("input_schema").filter(|s| s.is_object())?.into();
    spec.annotations = value.get("annotations").and_then(Value::as_object).cloned().unwrap_or_default();
    spec.always_load = value.get("always_load").and_then(Value::as_bool).unwrap_or(false);
    spec.search_hint = text("search_hint");
    Some(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_comes_back_as_it_was_kept_and_a_tampered_one_does_not() {
        let dir = std::env::temp_dir().join(format!("toolgate-remembered-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Remembered { dir: dir.clone(), mac: [7; 32] };
        let transport = Transport::Stdio {
            command: "mcp-server-memory".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        };
        let file = store.path(Some(Path::new("/etc/toolgate.toml")), "memory", &transport);
        assert_ne!(file, store.path(Some(Path::new("/etc/other.toml")), "memory", &transport));
        let mut spec = ToolSpec::mcp("memory", "create_entities", "Create entities");
        spec.input_schema = json!({"type": "object", "properties": {"entities": {"type": "array"}}}).into();
        spec.annotations.insert("title".into(), json!("Create"));
        store.save(&file, &[Arc::new(spec.clone())]);
        let back = store.load(&file).expect("read back");
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].name, "create_entities");
        assert_eq!(back[0].input_schema.text(), spec.input_schema.text());
        assert_eq!(back[0].annotations, spec.annotations);
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[5] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert!(store.load(&file).is_none(), "an edited file is not read");
        let other = Remembered { dir: dir.clone(), mac: [8; 32] };
        other.save(&file, &[Arc::new(spec)]);
        assert!(store.load(&file).is_none(), "one written with another key is not read");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
