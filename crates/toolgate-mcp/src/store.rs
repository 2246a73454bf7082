//! store: where an HTTP session's state lives between requests, so that it outlives the
//! process serving it.
//!
//! One small trait, [`SessionStore`], keeps one text record per `Mcp-Session-Id` with an
//! expiry: [`MemoryStore`] in this process (the default), [`RedisStore`] in a Redis server
//! shared by every gateway that names it (`[gateway] sessions = "redis://…"`). The record
//! (`Saved`) holds the client's `initialize`, the token and profile the session was opened
//! under, and its [`Conversation`](toolgate::Conversation) in its saved form: names and hashes,
//! never definitions. A gateway that meets a session it does not hold (after a restart, or as
//! another replica) reads the record, replays the `initialize` through rmcp's restore, and
//! resumes the conversation, re-checked against its own catalog and policy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::SessionStoreConfig;
use crate::rate::{Bucket, Level, Rule};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::{SessionState, SessionStoreError};
use serde_json::{Value, json};

/// A store that failed: what it was asked and why it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "session store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// What the store knows of one session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Its record.
    Record(String),
    /// It was ended (`DELETE`): no request may use it again, on any gateway.
    Ended,
    /// Nothing: never opened here, or expired.
    Missing,
}

/// Records by session id, each with an expiry refreshed when it is read or written.
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync + std::fmt::Debug + 'static {
    /// The record of session `id`, if it has one that has not expired and it was not ended;
    /// reading it keeps it for another `ttl`.
    async fn load(&self, id: &str, ttl: Duration) -> Result<Option<String>, StoreError> {
        Ok(match self.lookup(id, ttl).await? {
            Lookup::Record(record) => Some(record),
            Lookup::Ended | Lookup::Missing => None,
        })
    }
    /// What the store knows of session `id`; a record read is kept for another `ttl`.
    async fn lookup(&self, id: &str, ttl: Duration) -> Result<Lookup, StoreError>;
    /// Writes the record of session `id`, kept for `ttl`, unless the session was ended: an
    /// ended session's record never comes back.
    async fn save(&self, id: &str, record: &str, ttl: Duration) -> Result<(), StoreError>;
    /// Forgets session `id`'s record (it may be written again).
    async fn delete(&self, id: &str) -> Result<(), StoreError>;
    /// Ends session `id` for every gateway sharing the store: its record goes, and for `ttl` no
    /// record of it can be written again and [`SessionStore::lookup`] says [`Lookup::Ended`].
    async fn end(&self, id: &str, ttl: Duration) -> Result<(), StoreError>;
    /// What the store is, for logs and the status page (never a password).
    fn describe(&self) -> String;
    /// Tells every other gateway sharing this store that session `id`'s tool list changed, so
    /// that the one holding the client's event stream can tell the client. Nothing to tell
    /// when no other gateway shares the store.
    async fn announce(&self, _id: &str) -> Result<(), StoreError> {
        Ok(())
    }
    /// The sessions other gateways announced ([`SessionStore::announce`]), if any may.
    fn announced(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        None
    }
    /// Takes one call from each of `buckets` if every one has a call left, all at once for
    /// every gateway sharing the store; else takes nothing and says which bucket is short and
    /// how long until the call could run ([`crate::rate`]). A bucket not seen before is full.
    async fn take(&self, buckets: &[Bucket]) -> Result<Result<(), (usize, Duration)>, StoreError>;
}

/// The store of `[gateway] sessions`: connects to Redis now, so that a wrong URL or a server
/// that is down stops the gateway at start with the reason.
pub async fn open(config: &SessionStoreConfig) -> Result<Arc<dyn SessionStore>, StoreError> {
    match config {
        SessionStoreConfig::Memory => Ok(Arc::new(MemoryStore::default())),
        SessionStoreConfig::Redis(url) => Ok(Arc::new(RedisStore::connect(url).await?)),
    }
}

/// Records in this process's memory: sessions end with it.
#[derive(Debug)]
pub struct MemoryStore {
    records: Mutex<Records>,
    /// The rate buckets ([`crate::rate`]) by key, on a clock that starts with the store.
    levels: Mutex<HashMap<String, Level>>,
    started: Instant,
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore { records: Mutex::default(), levels: Mutex::default(), started: Instant::now() }
    }
}

/// The records, and how many there were after expired ones last went.
#[derive(Debug, Default)]
struct Records {
    by_id: HashMap<String, (String, Instant)>,
    after_sweep: usize,
    /// Ended sessions, until when they stay ended.
    ended: HashMap<String, Instant>,
}

impl MemoryStore {
    fn records(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait::async_trait]
impl SessionStore for MemoryStore {
    async fn lookup(&self, id: &str, ttl: Duration) -> Result<Lookup, StoreError> {
        let now = Instant::now();
        let mut records = self.records();
        if records.ended.get(id).is_some_and(|until| *until > now) {
            return Ok(Lookup::Ended);
        }
        let Some((record, until)) = records.by_id.get_mut(id) else {
            return Ok(Lookup::Missing);
        };
        if *until <= now {
            records.by_id.remove(id);
            return Ok(Lookup::Missing);
        }
        *until = now + ttl;
        Ok(Lookup::Record(record.clone()))
    }

    async fn save(&self, id: &str, record: &str, ttl: Duration) -> Result<(), StoreError> {
        let now = Instant::now();
        let mut records = self.records();
        if records.ended.get(id).is_some_and(|until| *until > now) {
            return Ok(());
        }
        records.by_id.insert(id.to_owned(), (record.to_owned(), now + ttl));
        // Expired records go once the map has doubled since they last went: a request costs
        // a lookup, and the map holds at most twice the sessions of the last `ttl`.
        if records.by_id.len() + records.ended.len() > 2 * records.after_sweep.max(64) {
            records.by_id.retain(|_, (_, until)| *until > now);
            records.ended.retain(|_, until| *until > now);
            records.after_sweep = records.by_id.len() + records.ended.len();
        }
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.records().by_id.remove(id);
        Ok(())
    }

    async fn end(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut records = self.records();
        records.by_id.remove(id);
        records.ended.insert(id.to_owned(), Instant::now() + ttl);
        Ok(())
    }

    fn describe(&self) -> String {
        "memory".to_owned()
    }

    async fn take(&self, buckets: &[Bucket]) -> Result<Result<(), (usize, Duration)>, StoreError> {
        let now_ms = self.started.elapsed().as_millis() as u64;
        let mut levels = self.levels.lock().unwrap_or_else(|e| e.into_inner());
        let mut taking: Vec<(Level, Rule)> = buckets
            .iter()
            .map(|b| {
                let full = Level { calls: f64::from(b.rule.burst), at_ms: now_ms };
                (*levels.get(&b.key).unwrap_or(&full), b.rule)
            })
            .collect();
        let taken = crate::rate::take(&mut taking, now_ms);
        if taken.is_ok() {
            for (b, (level, _)) in buckets.iter().zip(taking) {
                levels.insert(b.key.clone(), level);
            }
            // Full buckets are the same as none: forget them now and then.
            if levels.len() > 4096 {
                levels.retain(|_, l| now_ms.saturating_sub(l.at_ms) < 3_600_000);
            }
        }
        Ok(taken)
    }
}

/// Takes a call from every bucket of `KEYS` or from none (ARGV: each bucket's calls a minute
/// and burst), on Redis's own clock, as [`crate::rate::take`] does: `{0, 0}` when taken, else
/// the short bucket (from 1) and the wait in milliseconds. A bucket is kept until it would be
/// full again.
const TAKE_CALL: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local levels = {}
local longest, short = -1, 0
for i = 1, #KEYS do
  local per_ms = tonumber(ARGV[2 * i - 1]) / 60000
  local burst = tonumber(ARGV[2 * i])
  local v = redis.call('HMGET', KEYS[i], 'c', 't')
  local calls = tonumber(v[1]) or burst
  local at = tonumber(v[2]) or now
  if now > at then calls = calls + (now - at) * per_ms; at = now end
  if calls > burst then calls = burst end
  levels[i] = {calls, at, burst / per_ms}
  if calls < 1 then
    local wait = (1 - calls) / per_ms
    if wait > longest then longest = wait; short = i end
  end
end
if longest >= 0 then return {short, math.ceil(longest)} end
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], 'c', tostring(levels[i][1] - 1), 't', levels[i][2])
  redis.call('PEXPIRE', KEYS[i], math.ceil(levels[i][3]) + 1000)
end
return {0, 0}
";

/// The prefix of every key toolgate writes in Redis.
const KEY_PREFIX: &str = "toolgate:session:";
/// The prefix of the keys that mark an ended session.
const ENDED_PREFIX: &str = "toolgate:ended:";
/// Writes a record unless its session was ended, in one step.
const SAVE_UNLESS_ENDED: &str = "if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end \
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) return 1";
/// The channel on which gateways announce sessions whose tool list changed.
const CHANGED_CHANNEL: &str = "toolgate:changed";

/// Records in a Redis server, shared by every gateway that names it. The connection is
/// re-made after Redis restarts; a request that meets Redis down is answered from this
/// process's own state, with a warning.
pub struct RedisStore {
    connection: redis::aio::ConnectionManager,
    /// The URL without its password.
    shown: String,
    /// This process among the gateways, so that it skips its own announcements.
    origin: String,
    /// Other gateways' announcements, as the subscription hears them.
    announced: tokio::sync::broadcast::Sender<String>,
    /// The subscription, ended with the store.
    listening: tokio::task::JoinHandle<()>,
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").field("url", &self.shown).finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to the Redis server at `url` (`redis://[:PASSWORD@]HOST[:PORT][/DB]`).
    pub async fn connect(url: &str) -> Result<RedisStore, StoreError> {
        let shown = without_password(url);
        let failed = |e: redis::RedisError| {
            StoreError(format!("cannot reach Redis at {shown} ([gateway] sessions): {e}"))
        };
        let client = redis::Client::open(url).map_err(failed)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(2);
        let connection =
            redis::aio::ConnectionManager::new_with_config(client.clone(), config).await.map_err(failed)?;
        let mut probe = connection.clone();
        redis::cmd("PING").query_async::<String>(&mut probe).await.map_err(failed)?;
        let origin = format!("{}-{:016x}", std::process::id(), random_bits());
        let (announced, _) = tokio::sync::broadcast::channel(256);
        let listening = tokio::spawn(listen(client, origin.clone(), announced.clone(), shown.clone()));
        Ok(RedisStore { connection, shown, origin, announced, listening })
    }

    fn failed(&self, what: &str, e: redis::RedisError) -> StoreError {
        StoreError(format!("{what} at Redis {}: {e}", self.shown))
    }
}

#[async_trait::async_trait]
impl SessionStore for RedisStore {
    async fn lookup(&self, id: &str, ttl: Duration) -> Result<Lookup, StoreError> {
        let mut connection = self.connection.clone();
        let (ended, record): (bool, Option<String>) = redis::pipe()
            .cmd("EXISTS")
            .arg(format!("{ENDED_PREFIX}{id}"))
            .cmd("GETEX")
            .arg(format!("{KEY_PREFIX}{id}"))
            .arg("EX")
            .arg(ttl.as_secs().max(1))
            .query_async(&mut connection)
            .await
            .map_err(|e| self.failed("reading a session", e))?;
        Ok(match (ended, record) {
            (true, _) => Lookup::Ended,
            (false, Some(record)) => Lookup::Record(record),
            (false, None) => Lookup::Missing,
        })
    }

    async fn save(&self, id: &str, record: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        redis::cmd("EVAL")
            .arg(SAVE_UNLESS_ENDED)
            .arg(2)
            .arg(format!("{KEY_PREFIX}{id}"))
            .arg(format!("{ENDED_PREFIX}{id}"))
            .arg(record)
            .arg(ttl.as_secs().max(1))
            .query_async::<()>(&mut connection)
            .await
            .map_err(|e| self.failed("writing a session", e))
    }

    async fn end(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(format!("{ENDED_PREFIX}{id}"))
            .arg(1)
            .arg("EX")
            .arg(ttl.as_secs().max(1))
            .ignore()
            .cmd("DEL")
            .arg(format!("{KEY_PREFIX}{id}"))
            .ignore()
            .query_async::<()>(&mut connection)
            .await
            .map_err(|e| self.failed("ending a session", e))
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        redis::cmd("DEL")
            .arg(format!("{KEY_PREFIX}{id}"))
            .query_async::<()>(&mut connection)
            .await
            .map_err(|e| self.failed("deleting a session", e))
    }

    async fn take(&self, buckets: &[Bucket]) -> Result<Result<(), (usize, Duration)>, StoreError> {
        let mut connection = self.connection.clone();
        let mut script = redis::cmd("EVAL");
        script.arg(TAKE_CALL).arg(buckets.len());
        for b in buckets {
            script.arg(&b.key);
        }
        for b in buckets {
            script.arg(b.rule.calls_per_minute).arg(b.rule.burst);
        }
        let (short, wait): (usize, u64) = script
            .query_async(&mut connection)
            .await
            .map_err(|e| self.failed("taking a call from the rate limits", e))?;
        Ok(match short {
            0 => Ok(()),
            i => Err((i - 1, Duration::from_millis(wait.max(1)))),
        })
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }

    async fn announce(&self, id: &str) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        redis::cmd("PUBLISH")
            .arg(CHANGED_CHANNEL)
            .arg(format!("{} {id}", self.origin))
            .query_async::<()>(&mut connection)
            .await
            .map_err(|e| self.failed("announcing a changed tool list", e))
    }

    fn announced(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.announced.subscribe())
    }
}

/// Hears other gateways' announcements until the store ends, subscribing again (after a
/// second) whenever the connection is lost.
async fn listen(
    client: redis::Client,
    origin: String,
    out: tokio::sync::broadcast::Sender<String>,
    shown: String,
) {
    use futures_util::StreamExt;
    loop {
        match client.get_async_pubsub().await {
            Ok(mut pubsub) => match pubsub.subscribe(CHANGED_CHANNEL).await {
                Ok(()) => {
                    let mut messages = pubsub.on_message();
                    while let Some(message) = messages.next().await {
                        let Ok(payload) = message.get_payload::<String>() else { continue };
                        if let Some((from, id)) = payload.split_once(' ')
                            && from != origin
                        {
                            let _ = out.send(id.to_owned());
                        }
                    }
                    tracing::warn!("lost the subscription to Redis at {shown}; subscribing again");
                }
                Err(e) => tracing::warn!("cannot subscribe at Redis {shown}: {e}"),
            },
            Err(e) => tracing::warn!("cannot reach Redis at {shown} for announcements: {e}"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A few bits that differ between processes started at the same moment.
fn random_bits() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// `url` with any password replaced by `***`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_owned(),
    }
}

/// The version of the record's form.
const FORMAT: u64 = 1;

/// One session's record in the store.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Saved {
    /// Bumped by every write, so that a gateway can tell a newer record from its own.
    pub(crate) seq: u64,
    /// The client's `initialize` parameters, replayed when another gateway restores it.
    pub(crate) initialize: Value,
    /// The bearer token the session was opened with (by name), if any: no other may use it.
    pub(crate) token: Option<String>,
    /// The profile the session was opened under.
    pub(crate) profile: Option<String>,
    /// The conversation's saved form ([`toolgate::Conversation::to_json`]), once it has one.
    pub(crate) conversation: Option<Value>,
}

impl Saved {
    /// A record as the store keeps it.
    pub(crate) fn to_text(&self) -> String {
        json!({
            "format": FORMAT,
            "seq": self.seq,
            "initialize": self.initialize,
            "token": self.token,
            "profile": self.profile,
            "conversation": self.conversation,
        })
        .to_string()
    }

    /// A record read back from the store; a damaged one is an error naming what is wrong.
    pub(crate) fn from_text(text: &str) -> Result<Saved, StoreError> {
        let bad = |why: &str| StoreError(format!("a session record {why}"));
        let value: Value = serde_json::from_str(text).map_err(|e| bad(&format!("is not JSON: {e}")))?;
        if value.get("format").and_then(Value::as_u64) != Some(FORMAT) {
            return Err(bad(&format!("is not of format {FORMAT}")));
        }
        let text_field = |key: &str| match value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(&format!("has a `{key}` that is not a string"))),
        };
        Ok(Saved {
            seq: value.get("seq").and_then(Value::as_u64).ok_or_else(|| bad("has no `seq`"))?,
            initialize: value.get("initialize").cloned().ok_or_else(|| bad("has no `initialize`"))?,
            token: text_field("token")?,
            profile: text_field("profile")?,
            conversation: value.get("conversation").filter(|c| !c.is_null()).cloned(),
        })
    }
}

/// Who a session belongs to: the token that opened it (by name; `None` when the gateway has no
/// tokens) and the profile it was opened under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) token: Option<String>,
    pub(crate) profile: Option<String>,
}

/// A session's record as the HTTP door read it for this request, so that the request's
/// handler does not read it from the store a second time.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    /// The session it is the record of.
    pub(crate) id: String,
    /// The record.
    pub(crate) saved: Saved,
}

tokio::task_local! {
    /// The owner of a session being opened by the request in this scope.
    pub(crate) static OPENING: Owner;
}

/// Our store as rmcp's: rmcp writes a new session's `initialize` after the handshake, reads it
/// back to restore a session this process does not hold, and deletes it on `DELETE`.
#[derive(Debug)]
pub(crate) struct ForRmcp {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) ttl: Duration,
}

#[async_trait::async_trait]
impl rmcp::transport::streamable_http_server::session::SessionStore for ForRmcp {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(text) = self.store.load(session_id, self.ttl).await? else {
            return Ok(None);
        };
        let saved = Saved::from_text(&text)?;
        let params: InitializeRequestParams = serde_json::from_value(saved.initialize)
            .map_err(|e| StoreError(format!("a session record's `initialize` does not parse: {e}")))?;
        Ok(Some(SessionState::new(params)))
    }

    /// The session's first record, with its owner: rmcp writes it while the `initialize` that
    /// opened it is answered, inside the door's [`OPENING`] scope of that request.
    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let initialize =
            serde_json::to_value(&state.initialize_params).map_err(|e| StoreError(e.to_string()))?;
        let Ok(owner) = OPENING.try_with(Owner::clone) else {
            // Not opened through the door: no owner, no record (nobody could restore it).
            return Err(StoreError("a session opened outside the HTTP door has no owner".into()).into());
        };
        let saved =
            Saved { seq: 0, initialize, token: owner.token, profile: owner.profile, conversation: None };
        Ok(self.store.save(session_id, &saved.to_text(), self.ttl).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.store.delete(session_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_memory_store_forgets_a_record_after_its_time() {
        let store = MemoryStore::default();
        store.save("a", "one", Duration::from_millis(50)).await.unwrap();
        assert_eq!(store.load("a", Duration::from_millis(50)).await.unwrap().as_deref(), Some("one"));
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert_eq!(store.load("a", Duration::from_millis(50)).await.unwrap(), None);
        store.save("b", "two", Duration::from_secs(5)).await.unwrap();
        store.delete("b").await.unwrap();
        assert_eq!(store.load("b", Duration::from_secs(5)).await.unwrap(), None);
        // Expired records that are never read again still go, as the map grows.
        for i in 0..200 {
            store.save(&format!("old{i}"), "x", Duration::from_millis(1)).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        for i in 0..200 {
            store.save(&format!("new{i}"), "x", Duration::from_secs(60)).await.unwrap();
        }
        let held = store.records().by_id.len();
        assert!(held < 300, "{held} records held for 200 live sessions");
    }

    #[test]
    fn a_record_reads_back_and_a_damaged_one_says_what_is_wrong() {
        let saved = Saved {
            seq: 3,
            initialize: json!({"protocolVersion": "2025-06-18"}),
            token: Some("ci".into()),
            profile: None,
            conversation: Some(json!({"version": 1})),
        };
        assert_eq!(Saved::from_text(&saved.to_text()).unwrap(), saved);
        for (text, needle) in [
            ("nope", "not JSON"),
            ("{\"format\": 7}", "format 1"),
            ("{\"format\": 1, \"initialize\": {}}", "`seq`"),
            ("{\"format\": 1, \"seq\": 1, \"initialize\": {}, \"token\": 5}", "`token`"),
        ] {
            let error = Saved::from_text(text).unwrap_err().to_string();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }

    #[test]
    fn a_redis_password_never_shows() {
        assert_eq!(without_password("redis://:hunter2@db:6379/0"), "redis://:***@db:6379/0");
        assert_eq!(without_password("redis://app:hunter2@db"), "redis://app:***@db");
        assert_eq!(without_password("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
