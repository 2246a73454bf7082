//! logging: what `toolgate serve` writes about itself. The log on standard error, filtered by
//! `RUST_LOG` or the command line, has the configuration's secrets masked and every line
//! escaped where it is written ([`RedactedStderr`]). The audit trail (every event of the
//! `toolgate::audit` target: a token or a session refused, a call allowed or refused, a tool
//! loaded or unloaded, an approval) is also written as JSON lines to the file `[gateway]
//! audit_log` names ([`AuditLog`]): one object a decision, its `time`, `level`, `message` and
//! fields, each value a JSON string or number, so that no value a client, an upstream or a
//! token controls can end its field or its line. Secrets are masked there too.

use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer};

/// The target of the audit trail's events.
pub(crate) const TARGET: &str = "toolgate::audit";

/// The audit log, once the configuration named one.
static FILE: OnceLock<Mutex<std::fs::File>> = OnceLock::new();

/// Opens `path` for the audit trail (appended to; made readable by its owner only).
pub(crate) fn open_audit(path: &Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(path)
        .with_context(|| format!("cannot open the audit log {} ([gateway] audit_log)", path.display()))?;
    let _ = FILE.set(Mutex::new(file));
    Ok(())
}

/// The layer that writes the audit trail's events to the audit log, when one is open.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AuditLog;

impl<S: tracing::Subscriber> Layer<S> for AuditLog {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != TARGET {
            return;
        }
        let Some(file) = FILE.get() else { return };
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let mut object = Map::new();
        object.insert("time".into(), Value::String(now_rfc3339()));
        object.insert("level".into(), Value::String(event.metadata().level().to_string()));
        if let Some(message) = fields.0.remove("message") {
            object.insert("message".into(), message);
        }
        object.extend(fields.0);
        let mut line = Value::Object(object).to_string();
        line.push('\n');
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = file.write_all(line.as_bytes());
    }
}

/// An event's fields as JSON values: numbers and booleans as they are, everything else as the
/// text it formats to, secrets masked.
struct Fields(Map<String, Value>);

impl Fields {
    fn text(&mut self, field: &Field, text: String) {
        let masked = toolgate_mcp::redact::redact(&text, &secrets());
        self.0.insert(field.name().to_owned(), Value::String(masked));
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.text(field, format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, value.to_owned());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
}

/// Now, in UTC, as RFC 3339 with microseconds (`2026-12-06T02:33:01.123456Z`).
fn now_rfc3339() -> String {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_micros())
}

/// `secs` since the epoch (and `micros`) as an RFC 3339 UTC time.
fn rfc3339(secs: u64, micros: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    // The civil date of a day count (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// The configuration's secrets (servers' `env` and `headers` values, tokens), masked in every
/// log line once the settings are read.
static SECRETS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Masks `secrets` in every log line from now on, beside those masked already (a reloaded
/// configuration's secrets join the old ones', which may still be spoken of).
pub(crate) fn mask(secrets: Vec<String>) {
    let mut masked = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    masked.extend(secrets);
    masked.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    masked.dedup();
}

/// The configuration's secrets, once read (none before).
fn secrets() -> std::sync::RwLockReadGuard<'static, Vec<String>> {
    SECRETS.read().unwrap_or_else(|e| e.into_inner())
}

/// Whether log lines carry the formatter's colours (standard error is a terminal).
static COLOURS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Standard error with every line's secrets masked (the configuration's, URL query values and
/// token-shaped words, whoever logs them: rmcp logs a failed upstream's whole URL) and every
/// character that could start another line or steer a terminal escaped
/// ([`toolgate_mcp::redact::escape_line`]): each event is written in one call, so a value a
/// client, an upstream or a token put in it stays inside its own line.
struct RedactedStderr;

impl std::io::Write for RedactedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let masked = toolgate_mcp::redact::redact(&text, &secrets());
        let colours = COLOURS.load(std::sync::atomic::Ordering::Relaxed);
        std::io::stderr().write_all(toolgate_mcp::redact::escape_line(&masked, colours).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Logs to stderr, secrets masked and lines escaped, filtered by `RUST_LOG` if set, else by
/// `default`; and the audit trail, every level of it, to the audit log once one is opened
/// ([`open_audit`]).
pub(crate) fn init(default: String) {
    use std::io::IsTerminal;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let colours = std::io::stderr().is_terminal();
    COLOURS.store(colours, std::sync::atomic::Ordering::Relaxed);
    let text = tracing_subscriber::fmt::layer()
        .with_writer(|| RedactedStderr)
        .with_ansi(colours)
        .with_filter(filter);
    let audit = AuditLog.with_filter(tracing_subscriber::filter::filter_fn(|meta| meta.target() == TARGET));
    let _ = tracing_subscriber::registry().with(text).with(audit).try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(rfc3339(951_782_400 + 3_661, 7), "2000-02-29T01:01:01.000007Z");
        assert_eq!(rfc3339(1_796_515_200, 123_456), "2026-12-06T00:00:00.123456Z");
    }
}
