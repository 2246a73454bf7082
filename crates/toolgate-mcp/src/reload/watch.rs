//! watch: a gateway reloads its configuration on `SIGHUP`, and when the file's content changes
//! (looked at every second; a change must hold for a quarter of a second, so that an editor's
//! half-written file is not read).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::gateway::Gateway;
use crate::settings::Settings;

/// How often the file is looked at.
const POLL: Duration = Duration::from_secs(1);

/// How long a change must hold before the file is read.
const SETTLE: Duration = Duration::from_millis(250);

/// Reloads `gateway`'s configuration from `path` until the gateway shuts down: on `SIGHUP`,
/// and whenever the file's content changes. `load` reads the file into the configuration and
/// the settings it is served with (as at start); its error, or the gateway's refusal of what it
/// read, keeps the running configuration ([`Gateway::reconfigure`], [`Gateway::reload_failed`]).
pub async fn watch<F>(gateway: Gateway, path: PathBuf, load: F)
where
    F: Fn(&Path) -> Result<(Config, Settings), String> + Send + Sync + 'static,
{
    let load = Arc::new(load);
    let mut seen = fingerprint(&path);
    let mut hangup = hangups();
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let why = tokio::select! {
            () = gateway.inner.shutdown.cancelled() => return,
            () = next_hangup(&mut hangup) => "SIGHUP",
            _ = tick.tick() => {
                let now = fingerprint(&path);
                if now == seen {
                    continue;
                }
                tokio::time::sleep(SETTLE).await;
                if fingerprint(&path) != now {
                    continue;
                }
                "the file changed"
            }
        };
        seen = fingerprint(&path);
        tracing::info!(file = %path.display(), "reloading the configuration: {why}");
        let (load, file) = (load.clone(), path.clone());
        match tokio::task::spawn_blocking(move || load(&file)).await {
            Ok(Ok((config, settings))) => {
                let _ = gateway.reconfigure(config, settings).await;
            }
            Ok(Err(why)) => gateway.reload_failed(&why),
            Err(e) => gateway.reload_failed(&format!("reading the configuration failed: {e}")),
        }
    }
}

/// The file's content as a number (`None` when it cannot be read).
fn fingerprint(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = ();

#[cfg(unix)]
fn hangups() -> Hangups {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(signal) => Some(signal),
        Err(e) => {
            tracing::warn!("cannot listen for SIGHUP ({e}); the configuration reloads when its file changes");
            None
        }
    }
}

#[cfg(not(unix))]
fn hangups() -> Hangups {}

/// The next `SIGHUP`; never, where there is none.
async fn next_hangup(hangups: &mut Hangups) {
    #[cfg(unix)]
    if let Some(signal) = hangups
        && signal.recv().await.is_some()
    {
        return;
    }
    let _ = hangups;
    std::future::pending::<()>().await
}
