//! pins: here are the tools a snapshot would serve and which servers are pinned, tell me which
//! definitions an operator approved and hold back the rest. The approved definitions live in
//! an SQLite file (`[gateway] pins`), so that an approval outlives the process.
//!
//! A tool is known by its server key and its own name; a definition by its
//! [`DefinitionHash`](toolgate::catalog::DefinitionHash). On a pinned server (`trust = "pin"`) a tool is served only
//! when its current hash is the approved one: a new tool, a changed definition and a renamed
//! tool (a new name) wait in quarantine, recorded with their definition so that the operator
//! can read what changed, until `toolgate approve` or the status page approves them. The first
//! listing ever seen of a pinned server is approved as found (trust on first use) unless the
//! server says `quarantine = true`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use toolgate::{Catalog, Tool};

/// The store could not be opened, read or written.
#[derive(Debug)]
pub struct PinError {
    /// The store's file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the pin store {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for PinError {}

/// One tool waiting in quarantine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Its server key.
    pub server: String,
    /// Its own name on that server.
    pub tool: String,
    /// Its qualified name when it was last seen.
    pub qualified: String,
    /// The hash of the definition waiting for approval.
    pub hash: String,
    /// That definition, pretty-printed JSON.
    pub definition: String,
    /// The approved definition it would replace (`None`: a new tool).
    pub approved: Option<String>,
}

impl Held {
    /// `new` or `changed`.
    pub fn reason(&self) -> &'static str {
        if self.approved.is_some() { "changed" } else { "new" }
    }

    /// As `/status.json` and `toolgate approve --json` show it: `{"name", "server", "tool",
    /// "reason", "hash", "diff"}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"name": self.qualified, "server": self.server, "tool": self.tool,
            "reason": self.reason(), "hash": self.hash, "diff": self.diff()})
    }

    /// The definition's change as lines of a diff: `  ` kept, `- ` approved only, `+ ` new only.
    pub fn diff(&self) -> Vec<String> {
        line_diff(self.approved.as_deref().unwrap_or(""), &self.definition)
    }
}

/// Which held tools an approval takes.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'a> {
    /// Every held tool.
    All,
    /// Every held tool of these server keys.
    Servers(&'a [String]),
    /// These tools, each by qualified name or as `server/tool`.
    Tools(&'a [String]),
    /// These tools (by qualified name), each in the definition whose hash was shown for
    /// approval: if any is held in another definition now, nothing is approved.
    Shown(&'a [(String, String)]),
}

/// The gateway's pinning: the store and which upstreams are pinned.
#[derive(Debug)]
pub(crate) struct Pins {
    pub(crate) store: std::sync::Arc<PinStore>,
    /// Each pinned upstream by configured name, with whether its first listing is held too.
    upstreams: HashMap<String, bool>,
}

impl Pins {
    /// The pinning `config` asks for: `None` when no server has `trust = "pin"`. When it
    /// replaces `running` pins (a reload), the store they have open is kept if the file names
    /// the same one.
    pub(crate) fn reusing(
        config: &crate::config::Config,
        running: Option<&Pins>,
    ) -> Result<Option<Pins>, PinError> {
        let upstreams: HashMap<String, bool> = config
            .servers
            .iter()
            .filter(|(_, s)| s.host.trust == crate::config::Trust::Pin)
            .map(|(name, s)| (name.clone(), s.host.quarantine))
            .collect();
        if upstreams.is_empty() {
            return Ok(None);
        }
        let path = config.host.gateway.pins.clone().unwrap_or_else(PinStore::default_path);
        let store = match running.filter(|p| p.store.path == path) {
            Some(running) => running.store.clone(),
            None => std::sync::Arc::new(PinStore::open(&path)?),
        };
        Ok(Some(Pins { store, upstreams }))
    }

    /// For a tool served by `upstream`: `None` when that upstream is not pinned, else whether
    /// its first listing is quarantined.
    pub(crate) fn pinned(&self, upstream: &str) -> Option<bool> {
        self.upstreams.get(upstream).copied()
    }
}

/// The approved definitions, kept in one SQLite file.
#[derive(Debug)]
pub struct PinStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS approved (
    server TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL, definition TEXT NOT NULL,
    approved_at INTEGER NOT NULL, PRIMARY KEY (server, tool));
CREATE TABLE IF NOT EXISTS held (
    server TEXT NOT NULL, tool TEXT NOT NULL, qualified TEXT NOT NULL, hash TEXT NOT NULL,
    definition TEXT NOT NULL, seen_at INTEGER NOT NULL, PRIMARY KEY (server, tool));
CREATE TABLE IF NOT EXISTS servers (server TEXT PRIMARY KEY, first_seen INTEGER NOT NULL);
";

impl PinStore {
    /// Opens (creating it and its directory if need be) the store at `path`.
    pub fn open(path: &Path) -> Result<PinStore, PinError> {
        let error = |message: String| PinError { path: path.to_owned(), message };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| error(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path).map_err(|e| error(e.to_string()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| error(e.to_string()))?;
        conn.execute_batch(SCHEMA).map_err(|e| error(format!("not a toolgate pin store ({e})")))?;
        Ok(PinStore { path: path.to_owned(), conn: Mutex::new(conn) })
    }

    /// The default store: `$XDG_DATA_HOME/toolgate/pins.sqlite3`, else
    /// `$HOME/.local/share/toolgate/pins.sqlite3`, else `toolgate-pins.sqlite3` here.
    pub fn default_path() -> PathBuf {
        match toolgate::files::data_dir() {
            Some(dir) => dir.join("pins.sqlite3"),
            None => PathBuf::from("toolgate-pins.sqlite3"),
        }
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn fail(&self, e: rusqlite::Error) -> PinError {
        PinError { path: self.path.clone(), message: e.to_string() }
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A number that changes whenever another process (`toolgate approve`) wrote the store.
    pub(crate) fn version(&self) -> Result<i64, PinError> {
        self.conn().query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(|e| self.fail(e))
    }

    /// Splits `catalog` into the tools served and the tools held back. `pinned` gives, for a
    /// tool, whether its upstream is pinned and, if so, whether that upstream's first listing
    /// is quarantined too. Records what it held (and forgets what is no longer held) in one
    /// transaction.
    pub(crate) fn sift(
        &self,
        catalog: &Catalog,
        pinned: impl Fn(&Tool) -> Option<bool>,
    ) -> Result<(Catalog, Catalog), PinError> {
        let now = unix_now();
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.fail(e))?;
        let mut approved: HashMap<(String, String), String> = HashMap::new();
        let mut seen: HashSet<String> = HashSet::new();
        {
            let mut rows = tx.prepare("SELECT server, tool, hash FROM approved").map_err(|e| self.fail(e))?;
            let found =
                rows.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?))).map_err(|e| self.fail(e))?;
            for row in found {
                let (key, hash) = row.map_err(|e| self.fail(e))?;
                approved.insert(key, hash);
            }
            let mut rows = tx.prepare("SELECT server FROM servers").map_err(|e| self.fail(e))?;
            for row in rows.query_map([], |r| r.get(0)).map_err(|e| self.fail(e))? {
                seen.insert(row.map_err(|e| self.fail(e))?);
            }
        }
        // First sight of a pinned server: its listing is approved as found, or held whole.
        let mut first: HashMap<String, bool> = HashMap::new();
        for tool in catalog.tools() {
            if let Some(quarantine) = pinned(tool)
                && !seen.contains(tool.server())
            {
                first.entry(tool.server().to_owned()).or_insert(quarantine);
            }
        }
        for (server, quarantine) in &first {
            tx.execute(
                "INSERT OR IGNORE INTO servers (server, first_seen) VALUES (?1, ?2)",
                params![server, now],
            )
            .map_err(|e| self.fail(e))?;
            if *quarantine {
                continue;
            }
            for tool in catalog.tools().iter().filter(|t| t.server() == server) {
                let hash = tool.hash().to_string();
                tx.execute(
                    "INSERT OR REPLACE INTO approved (server, tool, hash, definition, approved_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![server, tool.name(), hash, pretty(tool), now],
                )
                .map_err(|e| self.fail(e))?;
                approved.insert((server.clone(), tool.name().to_owned()), hash);
            }
        }
        let mut held_now: HashSet<(String, String)> = HashSet::new();
        let mut pinned_servers: HashSet<String> = HashSet::new();
        let held = catalog.filter(|tool| {
            if pinned(tool).is_none() {
                return false;
            }
            pinned_servers.insert(tool.server().to_owned());
            let key = (tool.server().to_owned(), tool.name().to_owned());
            let ok = approved.get(&key).is_some_and(|h| *h == tool.hash().to_string());
            if !ok {
                held_now.insert(key);
            }
            !ok
        });
        for tool in held.tools() {
            tx.execute(
                "INSERT INTO held (server, tool, qualified, hash, definition, seen_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (server, tool) DO UPDATE SET \
                 qualified = ?3, hash = ?4, definition = ?5, seen_at = CASE WHEN hash = ?4 THEN seen_at ELSE ?6 END",
                params![tool.server(), tool.name(), tool.qualified_name(), tool.hash().to_string(), pretty(tool), now],
            )
            .map_err(|e| self.fail(e))?;
        }
        // What a served pinned server no longer lists, or lists as approved, is held no more.
        {
            let mut rows = tx.prepare("SELECT server, tool FROM held").map_err(|e| self.fail(e))?;
            let stale: Vec<(String, String)> = rows
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| self.fail(e))?
                .filter_map(Result::ok)
                .filter(|(s, t): &(String, String)| {
                    pinned_servers.contains(s) && !held_now.contains(&(s.clone(), t.clone()))
                })
                .collect();
            for (server, tool) in stale {
                tx.execute("DELETE FROM held WHERE server = ?1 AND tool = ?2", params![server, tool])
                    .map_err(|e| self.fail(e))?;
            }
        }
        tx.commit().map_err(|e| self.fail(e))?;
        let served = catalog.filter(|t| !held_now.contains(&(t.server().to_owned(), t.name().to_owned())));
        Ok((served, held))
    }

    /// Every tool waiting in quarantine, by server and name.
    pub fn held(&self) -> Result<Vec<Held>, PinError> {
        let conn = self.conn();
        let mut rows = conn
            .prepare(
                "SELECT h.server, h.tool, h.qualified, h.hash, h.definition, a.definition FROM held h \
                 LEFT JOIN approved a ON a.server = h.server AND a.tool = h.tool ORDER BY h.server, h.tool",
            )
            .map_err(|e| self.fail(e))?;
        let found = rows
            .query_map([], |r| {
                Ok(Held {
                    server: r.get(0)?,
                    tool: r.get(1)?,
                    qualified: r.get(2)?,
                    hash: r.get(3)?,
                    definition: r.get(4)?,
                    approved: r.get(5)?,
                })
            })
            .map_err(|e| self.fail(e))?;
        found.collect::<Result<_, _>>().map_err(|e| self.fail(e))
    }

    /// Approves the held tools `selection` takes: their held definitions become the approved
    /// ones. Returns what it approved; names that match no held tool are returned as the error
    /// of [`Selection::Tools`] when none matched.
    pub fn approve(&self, selection: Selection<'_>) -> Result<Vec<Held>, PinError> {
        let held = self.held()?;
        if let Selection::Shown(shown) = selection {
            for (name, hash) in shown {
                match held.iter().find(|h| &h.qualified == name) {
                    Some(h) if &h.hash == hash => {}
                    Some(h) => {
                        return Err(PinError {
                            path: self.path.clone(),
                            message: format!(
                                "the held definition of `{name}` changed since it was shown for approval \
                                 (shown {}, held now {}); nothing was approved: review it again",
                                short(hash),
                                short(&h.hash)
                            ),
                        });
                    }
                    None => {
                        return Err(PinError {
                            path: self.path.clone(),
                            message: format!("`{name}` is not held for approval; nothing was approved"),
                        });
                    }
                }
            }
        }
        let taken: Vec<Held> = held
            .into_iter()
            .filter(|h| match selection {
                Selection::All => true,
                Selection::Servers(servers) => servers.iter().any(|s| s == &h.server),
                Selection::Tools(names) => names.iter().any(|n| {
                    n == &h.qualified || n.split_once('/').is_some_and(|(s, t)| s == h.server && t == h.tool)
                }),
                Selection::Shown(shown) => shown.iter().any(|(n, hash)| n == &h.qualified && hash == &h.hash),
            })
            .collect();
        let now = unix_now();
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.fail(e))?;
        for h in &taken {
            // Only the definition that was shown for approval: one that changed again meanwhile
            // stays held.
            let still: Option<String> = tx
                .query_row(
                    "SELECT hash FROM held WHERE server = ?1 AND tool = ?2",
                    params![h.server, h.tool],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.fail(e))?;
            if still.as_deref() != Some(h.hash.as_str()) {
                if let Selection::Shown(_) = selection {
                    // Changed between the check above and now: approve none of what was shown.
                    return Err(PinError {
                        path: self.path.clone(),
                        message: format!(
                            "the held definition of `{}` changed while it was being approved; nothing was approved",
                            h.qualified
                        ),
                    });
                }
                continue;
            }
            tx.execute(
                "INSERT OR REPLACE INTO approved (server, tool, hash, definition, approved_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![h.server, h.tool, h.hash, h.definition, now],
            )
            .map_err(|e| self.fail(e))?;
            tx.execute("DELETE FROM held WHERE server = ?1 AND tool = ?2", params![h.server, h.tool])
                .map_err(|e| self.fail(e))?;
        }
        tx.commit().map_err(|e| self.fail(e))?;
        Ok(taken)
    }
}

/// A tool's own definition (its own name, not the qualified one), keys sorted, pretty-printed.
fn pretty(tool: &Tool) -> String {
    let definition = serde_json::json!({
        "name": tool.name(),
        "description": tool.description(),
        "input_schema": tool.input_schema(),
        "annotations": tool.annotations(),
    });
    serde_json::to_string_pretty(&definition).unwrap_or_default()
}

/// The first 12 characters of a hash, as the page and the command line show it.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// A line diff of `old` and `new` (longest common subsequence; definitions are short).
fn line_diff(old: &str, new: &str) -> Vec<String> {
    let a: Vec<&str> = if old.is_empty() { Vec::new() } else { old.lines().collect() };
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(format!("  {}", a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("+ {}", b[j]));
            j += 1;
        } else {
            out.push(format!("- {}", a[i]));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate::ToolSpec;

    fn catalog(tools: &[(&str, &str, &str)]) -> Catalog {
        tools.iter().fold(Catalog::builder(), |b, (s, n, d)| b.tool(ToolSpec::mcp(s, n, d))).build().unwrap()
    }

    fn names(c: &Catalog) -> Vec<&str> {
        c.tools().iter().map(Tool::qualified_name).collect()
    }

    #[test]
    fn first_listing_is_trusted_then_changes_wait_until_approved() {
        let dir = std::env::temp_dir().join(format!("toolgate-pins-{}", std::process::id()));
        let path = dir.join("pins.sqlite3");
        let _ = std::fs::remove_file(&path);
        let store = PinStore::open(&path).unwrap();
        let pinned = |t: &Tool| (t.server() != "free").then_some(false);
        let v1 = catalog(&[("gh", "read", "Reads."), ("gh", "write", "Writes."), ("free", "x", "X.")]);
        let (served, held) = store.sift(&v1, pinned).unwrap();
        assert_eq!(names(&served).len(), 3);
        assert!(held.is_empty());

        let v2 = catalog(&[
            ("gh", "read", "Reads and deletes."),
            ("gh", "write", "Writes."),
            ("gh", "new", "N."),
            ("free", "x", "Y."),
        ]);
        let (served, held) = store.sift(&v2, pinned).unwrap();
        assert_eq!(names(&served), ["gh__write", "free__x"]);
        assert_eq!(names(&held), ["gh__read", "gh__new"]);
        let waiting = store.held().unwrap();
        assert_eq!(waiting.iter().map(Held::reason).collect::<Vec<_>>(), ["new", "changed"]);
        assert!(
            waiting[1].diff().iter().any(|l| l.starts_with("+ ") && l.contains("deletes")),
            "{:?}",
            waiting[1].diff()
        );
        assert!(waiting[1].diff().iter().any(|l| l.starts_with("- ") && l.contains("\"Reads.\"")));

        // A second store on the same file (a restart) remembers; an approval serves the tool.
        drop(store);
        let store = PinStore::open(&path).unwrap();
        let (_, held) = store.sift(&v2, pinned).unwrap();
        assert_eq!(held.len(), 2);
        let done = store.approve(Selection::Tools(&["gh/read".to_owned()])).unwrap();
        assert_eq!(done.len(), 1);
        let (served, held) = store.sift(&v2, pinned).unwrap();
        assert_eq!(names(&held), ["gh__new"]);
        assert!(names(&served).contains(&"gh__read"));
        store.approve(Selection::All).unwrap();
        assert!(store.sift(&v2, pinned).unwrap().1.is_empty());
        assert!(store.held().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_quarantined_server_starts_with_everything_held() {
        let dir = std::env::temp_dir().join(format!("toolgate-pins-q-{}", std::process::id()));
        let store = PinStore::open(&dir.join("p.sqlite3")).unwrap();
        let v1 = catalog(&[("gh", "read", "Reads.")]);
        let (served, held) = store.sift(&v1, |_| Some(true)).unwrap();
        assert!(served.is_empty());
        assert_eq!(names(&held), ["gh__read"]);
        assert_eq!(store.approve(Selection::Servers(&["gh".to_owned()])).unwrap().len(), 1);
        assert_eq!(names(&store.sift(&v1, |_| Some(true)).unwrap().0), ["gh__read"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_that_is_not_a_store_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("toolgate-pins-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notes.txt");
        std::fs::write(&path, "hello, this is not sqlite at all, just some text that is long enough")
            .unwrap();
        let e = PinStore::open(&path).unwrap_err();
        assert!(e.to_string().contains("notes.txt"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
