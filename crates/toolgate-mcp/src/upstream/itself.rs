//! itself: here is a configuration, tell me whether it would start toolgate on itself.
//!
//! A user who moves the `mcpServers` file of their client behind toolgate may move toolgate's
//! own entry with it: the gateway then starts a gateway on the same file, which starts another,
//! without end (188 processes in six seconds were seen, and orphans after the first exited).
//! Three checks stop it, by what the processes are rather than what they are called:
//!
//! - **By the configuration**, before anything is spawned: a stdio server whose command line
//!   runs this executable (under any name: a link, a relative path, a copy of the same bytes, a
//!   program or package named `toolgate`, behind `env -i` or inside `sh -c "…"`) with `serve`
//!   and `--config` naming this same file (by identity: links and relative paths resolved) is
//!   refused, naming the server's key.
//! - **By a lock**, which no wrapper can clear: a gateway serving a configuration file holds a
//!   shared lock on it ([`Serving`]). A gateway about to serve a file that one of its own
//!   ancestor processes holds such a lock on refuses to start (on Linux, read from
//!   `/proc/locks` and the ancestors' open files), so a loop through a wrapper script that
//!   clears the environment ends at its first turn.
//! - **By the environment**: every stdio server toolgate starts gets [`SERVING`], the
//!   configurations served by the gateways above it and by this one. A toolgate that finds its
//!   own configuration there, or more than [`MAX_DEPTH`] gateways above it, refuses to start
//!   (where the lock cannot be read back, and for a loop through several files).

use std::path::{Path, PathBuf};

use crate::config::{Config, Transport};

use crate::settings::GatewayError;

/// The environment variable that carries, to the servers toolgate starts, the configurations
/// served above them (one absolute path a line; `-` for a gateway without a file).
pub(crate) const SERVING: &str = "TOOLGATE_SERVING";

/// Most gateways one above the other.
pub(crate) const MAX_DEPTH: usize = 8;

/// What this process inherited in [`SERVING`].
pub(crate) fn inherited() -> String {
    std::env::var(SERVING).unwrap_or_default()
}

/// What a gateway that may serve its configuration keeps while it does: the value of
/// [`SERVING`] for the servers it starts, and the shared lock on the configuration file that
/// tells its descendants who serves it.
#[derive(Debug)]
pub(crate) struct Serving {
    /// The configurations served above the servers this gateway starts, and this one's.
    pub(crate) chain: std::sync::Arc<str>,
    /// The configuration file, opened and locked (shared) while the gateway lives.
    pub(crate) lock: Option<std::fs::File>,
}

/// Refuses a configuration that would start toolgate on itself; otherwise what the gateway
/// keeps while it serves it ([`Serving`]).
pub(crate) fn refuse(config: &Config) -> Result<Serving, GatewayError> {
    if let Some(source) = &config.source
        && let Some(pid) = ancestor_serving(source)
    {
        return Err(GatewayError {
            key: "servers".into(),
            message: format!(
                "{} is already served by toolgate process {pid}, which started this one (through its servers): \
                 a server of this configuration runs toolgate on it again, which would start gateways without \
                 end; remove that server",
                source.display()
            ),
        });
    }
    let above = inherited();
    let chain: Vec<&str> = above.lines().filter(|l| !l.is_empty()).collect();
    let here = config.source.as_deref().map_or_else(|| "-".to_owned(), |p| p.display().to_string());
    if config.source.is_some() && chain.contains(&here.as_str()) {
        return Err(GatewayError {
            key: "servers".into(),
            message: format!(
                "this configuration is already served by a toolgate that started this one ({} → {here}): one of \
                 its servers runs toolgate on it again, which would start gateways without end; remove that server",
                chain.join(" → ")
            ),
        });
    }
    if chain.len() >= MAX_DEPTH {
        return Err(GatewayError {
            key: "servers".into(),
            message: format!(
                "{} gateways run one above the other ({}), more than {MAX_DEPTH}: a configuration starts toolgate on \
                 itself through another; remove that server",
                chain.len(),
                chain.join(" → ")
            ),
        });
    }
    if let Some(source) = &config.source {
        for (name, server) in &config.servers {
            if server.enabled
                && let Transport::Stdio { command, args, cwd, .. } = &server.host.transport
                && serves(command, args, cwd.as_deref(), source)
            {
                return Err(GatewayError {
                    key: format!("servers.{name}"),
                    message: format!(
                        "this server is toolgate serving this same configuration ({}), which would start itself \
                         without end; remove `{name}` from the configuration (toolgate is the one entry your \
                         client needs)",
                        source.display()
                    ),
                });
            }
        }
    }
    let mut serving = above;
    if !serving.is_empty() && !serving.ends_with('\n') {
        serving.push('\n');
    }
    serving.push_str(&here);
    let lock = config.source.as_deref().and_then(lock_shared);
    Ok(Serving { chain: serving.into(), lock })
}

/// The configuration file at `source`, open and locked (shared: every gateway on one file holds
/// one at once); `None` where the file cannot be opened or locked.
fn lock_shared(source: &Path) -> Option<std::fs::File> {
    let file = std::fs::File::open(source).ok()?;
    match file.try_lock_shared() {
        Ok(()) => Some(file),
        Err(e) => {
            tracing::debug!("cannot lock {} to mark it served: {e:?}", source.display());
            None
        }
    }
}

/// The ancestor process (parent, its parent, …) that holds the serving lock on the file at
/// `source`, if one does (Linux; elsewhere, never found).
fn ancestor_serving(source: &Path) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(source).ok()?;
        let holders = flock_holders(&std::fs::read_to_string("/proc/locks").ok()?, meta.ino());
        if holders.is_empty() {
            return None;
        }
        let mut pid = std::process::id();
        for _ in 0..256 {
            pid = parent_of(pid)?;
            if pid <= 1 {
                return None;
            }
            if holders.contains(&pid) && has_open(pid, meta.dev(), meta.ino()) {
                return Some(pid);
            }
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = source;
        None
    }
}

/// The processes `/proc/locks` (its text is `locks`) says hold a `flock` lock on inode `ino`.
/// The device is not compared there (it is the file system's own number, which differs from
/// what `stat` says on some, overlayfs among them); [`has_open`] checks the file itself.
#[cfg(target_os = "linux")]
fn flock_holders(locks: &str, ino: u64) -> Vec<u32> {
    locks
        .lines()
        .filter_map(|line| {
            // `1: FLOCK  ADVISORY  READ 1979 fe:00:10133507 0 EOF`, or `1: -> FLOCK …` for a waiter.
            let words: Vec<&str> = line.split_whitespace().collect();
            let words = match words.get(1) {
                Some(&"->") => return None,
                _ => words.get(1..)?,
            };
            if words.first() != Some(&"FLOCK") {
                return None;
            }
            let pid: u32 = words.get(3)?.parse().ok()?;
            let inode: u64 = words.get(4)?.rsplit(':').next()?.parse().ok()?;
            (inode == ino).then_some(pid)
        })
        .collect()
}

/// The parent of process `pid`, from `/proc/PID/stat` (the field after the command's name,
/// which may hold spaces and parentheses itself).
#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Whether process `pid` has the file of device `dev` and inode `ino` open; true when its open
/// files cannot be read (another user's process), leaving the lock's word to stand.
#[cfg(target_os = "linux")]
fn has_open(pid: u32, dev: u64, ino: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return true };
    fds.filter_map(Result::ok)
        .filter_map(|fd| std::fs::metadata(fd.path()).ok())
        .any(|m| m.dev() == dev && m.ino() == ino)
}

/// Whether `command args` (run in `cwd`) is toolgate serving the configuration at `source`:
/// some word of the command line (a shell's `-c` script split into words too) runs this
/// executable or a program named toolgate, another is `serve`, and `--config` names the same
/// file. A wrapper that hides all of this in a script of its own is caught by the lock
/// ([`refuse`]) when the nested gateway starts.
fn serves(command: &str, args: &[String], cwd: Option<&Path>, source: &Path) -> bool {
    let words = command_words(command, args);
    let named = |word: &str| {
        let file = Path::new(word).file_name().and_then(|f| f.to_str()).unwrap_or_default();
        file == "toolgate" || file == "toolgate.exe" || word.starts_with("toolgate@")
    };
    let is_toolgate = words.iter().any(|w| named(w) || is_this_executable(w, cwd));
    if !is_toolgate || !words.iter().any(|a| a == "serve") {
        return false;
    }
    let config = words.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--config") {
        Some("") => words.get(i + 1).cloned(),
        Some(rest) => rest.strip_prefix('=').map(str::to_owned),
        None => None,
    });
    config.is_some_and(|c| same_file(&resolve(&c, cwd), source))
}

/// The words of a command line: the command, its arguments, and the words of the script a
/// shell is given with `-c` (split on white space, quotes dropped: enough to find a program
/// and its arguments, not a shell).
fn command_words(command: &str, args: &[String]) -> Vec<String> {
    let mut words = vec![command.to_owned()];
    words.extend(args.iter().cloned());
    let scripts: Vec<String> = words
        .windows(2)
        .filter(|pair| {
            pair[0] == "-c" || (pair[0].starts_with('-') && pair[0].ends_with('c') && pair[0].len() <= 4)
        })
        .map(|pair| pair[1].clone())
        .collect();
    for script in scripts {
        words.extend(
            script
                .split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|')
                .map(|w| w.replace(['"', '\'', '`'], ""))
                .filter(|w| !w.is_empty()),
        );
    }
    words
}

/// Whether `command` (a path, relative to `cwd` if it is one, or a name looked up on `PATH`)
/// is the running executable: the same file, or a copy of the same bytes.
fn is_this_executable(command: &str, cwd: Option<&Path>) -> bool {
    let Ok(me) = std::env::current_exe().and_then(std::fs::canonicalize) else { return false };
    let candidates: Vec<PathBuf> = if command.contains('/') {
        vec![resolve(command, cwd)]
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(command)).collect())
            .unwrap_or_default()
    };
    candidates.iter().filter_map(|c| std::fs::canonicalize(c).ok()).any(|c| c == me || same_bytes(&c, &me))
}

/// Whether two files hold the same bytes (read only when their lengths agree).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let len = |p: &Path| std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len());
    match (len(a), len(b)) {
        (Some(x), Some(y)) if x == y && x > 0 => {
            matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
        }
        _ => false,
    }
}

/// A path as the child would read it: `~/` is the home directory, a relative path is relative
/// to the child's working directory (or this process's).
fn resolve(path: &str, cwd: Option<&Path>) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    let path = PathBuf::from(path);
    match cwd {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path,
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_in_proc_locks_names_its_holder_and_a_parent_is_found() {
        let locks = "1: FLOCK  ADVISORY  READ 1979 fe:00:10133507 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 77 fe:00:10133507 0 EOF\n\
                     3: POSIX  ADVISORY  READ 55 fe:00:10133507 0 EOF\n\
                     4: FLOCK  ADVISORY  READ 12 00:2a:99 0 EOF\n";
        assert_eq!(flock_holders(locks, 10133507), vec![1979]);
        assert_eq!(flock_holders(locks, 99), vec![12]);
        assert_eq!(parent_of(std::process::id()), Some(std::os::unix::process::parent_id()));
    }

    #[test]
    #[cfg(unix)]
    fn toolgate_serving_the_same_file_is_itself_under_any_spelling() {
        let dir = std::env::temp_dir().join(format!("toolgate-itself-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("servers.json");
        std::fs::write(&config, "{}").unwrap();
        let path = config.display().to_string();
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(serves("toolgate", &args(&["serve", "--stdio", "--config", &path]), None, &config));
        assert!(serves(
            "/usr/local/bin/toolgate",
            &args(&["serve", &format!("--config={path}")]),
            None,
            &config
        ));
        assert!(serves(
            "npx",
            &args(&["-y", "toolgate@0.1.0", "serve", "--config", "servers.json"]),
            Some(&dir),
            &config
        ));
        // Another configuration is a gateway in front of a gateway: allowed (the environment
        // check stops a loop through it).
        let other = dir.join("other.toml");
        std::fs::write(&other, "").unwrap();
        assert!(!serves(
            "toolgate",
            &args(&["serve", "--config", &other.display().to_string()]),
            None,
            &config
        ));
        assert!(!serves("toolgate", &args(&["search", "--config", &path]), None, &config));
        assert!(!serves("mcp-server-memory", &args(&["--config", &path]), None, &config));
        assert!(!serves("toolgate", &args(&["serve", "--stdio"]), None, &config), "the embedded catalog");

        // This executable under other names: a link, behind `env -i`, a copy, inside `sh -c`,
        // a relative path.
        let me = std::env::current_exe().unwrap();
        let link = dir.join("a-link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&me, &link).unwrap();
        let link = link.display().to_string();
        assert!(serves("env", &args(&["-i", &link, "serve", "--stdio", "--config", &path]), None, &config));
        let copy = dir.join("copied");
        std::fs::copy(&me, &copy).unwrap();
        let script = format!("exec ./copied serve --stdio --config='{}'", "servers.json");
        assert!(serves("sh", &args(&["-c", &script]), Some(&dir), &config));
        assert!(serves("./copied", &args(&["serve", "--config", "servers.json"]), Some(&dir), &config));
        assert!(serves("bash", &args(&["-lc", &format!("{link} serve --config {path}")]), None, &config));
        // The same executable on another file, or running something else, is not itself.
        let elsewhere = other.display().to_string();
        assert!(!serves("env", &args(&["-i", &link, "serve", "--config", &elsewhere]), None, &config));
        assert!(!serves("env", &args(&["-i", &link, "search", "--config", &path]), None, &config));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
