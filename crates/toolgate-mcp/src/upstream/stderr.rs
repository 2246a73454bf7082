//! A child's stderr: every line goes to the log (secrets masked), and the last few are kept to
//! explain why the child failed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;
use tokio::sync::Notify;

use crate::upstream::redact::redact;

/// The last lines a child wrote to stderr (also logged), to explain why it failed.
#[derive(Clone, Default)]
pub(super) struct StderrTail {
    lines: Arc<std::sync::Mutex<VecDeque<String>>>,
    /// Closed when the child's stderr ends.
    ended: Arc<Notify>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    const KEEP: usize = 3;

    /// Reads `stderr` line by line into the log and the tail, `secrets` and token-shaped
    /// words masked.
    pub(super) fn follow(&self, name: String, stderr: tokio::process::ChildStderr, secrets: Vec<String>) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = redact(&line, &secrets);
                tracing::info!(target: "toolgate::upstream::stderr", upstream = %name, "{line}");
                let mut kept = tail.lines.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() == Self::KEEP {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
            tail.done.store(true, std::sync::atomic::Ordering::SeqCst);
            tail.ended.notify_waiters();
        });
    }

    /// `reason`, with the child's last stderr lines once its stderr has ended (waiting a moment
    /// for that).
    pub(super) async fn explain(&self, reason: String) -> String {
        let ended = self.ended.notified();
        if !self.done.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = tokio::time::timeout(Duration::from_millis(300), ended).await;
        }
        let kept = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_empty() {
            return reason;
        }
        let last: Vec<&str> = kept.iter().map(String::as_str).collect();
        format!("{reason}; its last stderr lines: {}", last.join(" | "))
    }
}
