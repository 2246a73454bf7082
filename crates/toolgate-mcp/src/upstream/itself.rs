//! itself: here is a configuration, tell me whether it would start toolgate on itself.
//!
//! A user who moves the `mcpServers` file of their client behind toolgate may move toolgate's
//! own entry with it: the gateway then starts a gateway on the same file, which starts another,
//! without end (188 processes in six seconds were seen, and orphans after the first exited).
//! Two checks stop it before anything is spawned:
//!
//! - **By the configuration**: a stdio server that runs toolgate (this very executable, or a
//!   program or package named `toolgate`) with `serve` and `--config` naming this same file is
//!   refused, naming the server's key.
//! - **By the environment**: every stdio server toolgate starts gets [`SERVING`], the
//!   configurations served by the gateways above it and by this one. A toolgate that finds its
//!   own configuration there, or more than [`MAX_DEPTH`] gateways above it, refuses to start,
//!   so a loop through a wrapper script, `npx` or another configuration ends at the first turn.

use std::path::{Path, PathBuf};

use toolgate::config::{Config, Transport};

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

/// Refuses a configuration that would start toolgate on itself; otherwise the value of
/// [`SERVING`] for the servers it starts.
pub(crate) fn refuse(config: &Config) -> Result<std::sync::Arc<str>, GatewayError> {
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
                && let Transport::Stdio { command, args, cwd, .. } = &server.transport
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
    Ok(serving.into())
}

/// Whether `command args` (run in `cwd`) is toolgate serving the configuration at `source`.
fn serves(command: &str, args: &[String], cwd: Option<&Path>, source: &Path) -> bool {
    let named = |word: &str| {
        let file = Path::new(word).file_name().and_then(|f| f.to_str()).unwrap_or_default();
        file == "toolgate" || file == "toolgate.exe" || word.starts_with("toolgate@")
    };
    let is_toolgate = named(command) || is_this_executable(command) || args.iter().any(|a| named(a));
    if !is_toolgate || !args.iter().any(|a| a == "serve") {
        return false;
    }
    let config = args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--config") {
        Some("") => args.get(i + 1).cloned(),
        Some(rest) => rest.strip_prefix('=').map(str::to_owned),
        None => None,
    });
    config.is_some_and(|c| same_file(&resolve(&c, cwd), source))
}

/// Whether `command` (a path, or a name looked up on `PATH`) is the running executable.
fn is_this_executable(command: &str) -> bool {
    let Ok(me) = std::env::current_exe().and_then(std::fs::canonicalize) else { return false };
    let candidates: Vec<PathBuf> = if command.contains('/') {
        vec![PathBuf::from(command)]
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(command)).collect())
            .unwrap_or_default()
    };
    candidates.iter().filter_map(|c| std::fs::canonicalize(c).ok()).any(|c| c == me)
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

    #[test]
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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
