//! telemetry: traces of what the gateway did for each client request, exported to an
//! OpenTelemetry collector over OTLP/HTTP (protobuf). Off unless configured (`[telemetry]
//! otlp_endpoint`, or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` and
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` and
//! `OTEL_SDK_DISABLED` are honoured too).
//!
//! Each `tools/call` and `tools/list` a client sends is one span (kind server), a child of the
//! client's own span when the request carries a W3C `traceparent` (the HTTP header, or
//! `_meta.traceparent` as SEP-414 puts it). Its children: a search (`tool_search`: the query,
//! the hits, what loaded), the gate's check of a call (the tool, the decision) and each request
//! to an upstream (kind client; the server, the tool, the outcome), which carries the trace on
//! to the upstream in its own `_meta.traceparent`. Attributes say who asked (the subject), which
//! server and tool, the decision and the protocol revision; never an argument's value or a
//! secret.
//!
//! A finished span is queued, never waited on: a task sends the queue in batches, and a span
//! that finds the queue full, or a batch the collector does not take, is dropped and counted
//! (`toolgate_trace_spans_dropped_total`).

mod otlp;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::metrics::counter::Counter;
use tokio::sync::mpsc;

/// Spans waiting for export at most; past it a span is dropped.
const QUEUE: usize = 4096;
/// Spans in one export request at most.
const BATCH: usize = 512;
/// How long a span waits for others to fill its batch.
const LINGER: Duration = Duration::from_millis(500);

/// Where traces go (`[telemetry]`, or the `OTEL_*` variables).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP base URL (`otlp_endpoint`, like `http://127.0.0.1:4318`);
    /// spans go to its `/v1/traces`. `None`: no traces.
    pub otlp_endpoint: Option<String>,
    /// The service name spans carry (`service_name`, default `toolgate`).
    pub service_name: Option<String>,
    /// Headers sent with each export (`headers`), such as a collector's API key.
    pub headers: BTreeMap<String, String>,
}

impl TelemetryConfig {
    /// Where spans are sent and what with, from this table and then the environment (`env`):
    /// `OTEL_SDK_DISABLED=true` turns traces off; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is the
    /// whole URL; `OTEL_EXPORTER_OTLP_ENDPOINT` a base URL; the configuration's endpoint wins
    /// over both. `None` when traces are off.
    pub fn target(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<Target> {
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return None;
        }
        let base = |url: &str| format!("{}/v1/traces", url.trim_end_matches('/'));
        let url = match &self.otlp_endpoint {
            Some(url) => base(url),
            None => match env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|u| !u.trim().is_empty()) {
                Some(url) => url,
                None => base(&env("OTEL_EXPORTER_OTLP_ENDPOINT").filter(|u| !u.trim().is_empty())?),
            },
        };
        let mut headers: Vec<(String, String)> = env("OTEL_EXPORTER_OTLP_HEADERS")
            .unwrap_or_default()
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .filter(|(k, _)| !k.is_empty())
            .collect();
        headers.extend(self.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        let service = self
            .service_name
            .clone()
            .or_else(|| env("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| "toolgate".into());
        Some(Target { url, headers, service })
    }
}

/// Where spans are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The collector's `/v1/traces` URL.
    pub url: String,
    /// Headers of each export.
    pub headers: Vec<(String, String)>,
    /// The service name.
    pub service: String,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attr {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl From<&str> for Attr {
    fn from(s: &str) -> Attr {
        Attr::Str(s.to_owned())
    }
}

impl From<String> for Attr {
    fn from(s: String) -> Attr {
        Attr::Str(s)
    }
}

impl From<usize> for Attr {
    fn from(n: usize) -> Attr {
        Attr::Int(n as i64)
    }
}

impl From<bool> for Attr {
    fn from(b: bool) -> Attr {
        Attr::Bool(b)
    }
}

/// What a span is to the gateway (OTLP `SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A step inside the gateway.
    Internal,
    /// A client's request.
    Server,
    /// A request to an upstream.
    Client,
}

/// A finished span, as exported.
#[derive(Debug, Clone)]
pub(crate) struct SpanData {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) parent: Option<[u8; 8]>,
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) start_ns: u64,
    pub(crate) end_ns: u64,
    pub(crate) attributes: Vec<(&'static str, Attr)>,
    pub(crate) error: Option<String>,
}

/// The exporter of one gateway: a queue and the counts of what became of its spans.
#[derive(Debug)]
pub struct Tracer {
    queue: mpsc::Sender<SpanData>,
    /// Spans dropped: the queue was full, or the collector did not take their batch.
    dropped: Counter,
}

impl Tracer {
    /// The exporter of a configuration's `[telemetry]` (and the process's `OTEL_*` variables),
    /// started in a task of its own on the current Tokio runtime, counting into `metrics`;
    /// `None` when traces are off, or when there is no runtime to export from.
    pub(crate) fn for_config(
        config: &TelemetryConfig,
        metrics: &crate::metrics::Metrics,
    ) -> Option<Arc<Tracer>> {
        let target = config.target(&|name| std::env::var(name).ok())?;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("traces are configured, but the gateway runs outside a Tokio runtime: no traces");
            return None;
        };
        tracing::info!(collector = %target.url, "traces are exported over OTLP/HTTP");
        let (queue, receiver) = mpsc::channel(QUEUE);
        let (exported, dropped) = (metrics.trace_spans_exported.clone(), metrics.trace_spans_dropped.clone());
        runtime.spawn(export(target, receiver, exported, dropped.clone()));
        Some(Arc::new(Tracer { queue, dropped }))
    }

    /// A new span of a client's request named `name`, a child of `parent` (the client's
    /// `traceparent`) if it gave one.
    pub(crate) fn request(self: &Arc<Tracer>, name: &str, parent: Option<&str>) -> Span {
        let (trace_id, parent) = match parent.and_then(parse_traceparent) {
            Some((trace, span)) => (trace, Some(span)),
            None => (random_bytes(), None),
        };
        Span::open(self.clone(), trace_id, parent, name, Kind::Server)
    }
}

/// A span in progress; it is exported when it ends (dropped). A span of a gateway without
/// traces does nothing.
#[derive(Debug)]
pub(crate) struct Span {
    tracer: Option<Arc<Tracer>>,
    data: SpanData,
}

impl Span {
    /// A span that records nothing: no clock read, no id drawn.
    pub(crate) fn none() -> Span {
        Span { tracer: None, data: Span::none_data() }
    }

    fn open(
        tracer: Arc<Tracer>,
        trace_id: [u8; 16],
        parent: Option<[u8; 8]>,
        name: &str,
        kind: Kind,
    ) -> Span {
        let data = SpanData {
            trace_id,
            span_id: random_bytes(),
            parent,
            name: name.to_owned(),
            kind,
            start_ns: now_ns(),
            end_ns: 0,
            attributes: Vec::new(),
            error: None,
        };
        Span { tracer: Some(tracer), data }
    }

    /// Whether the span records (traces are on): a caller asks before working out an attribute
    /// that costs something.
    pub(crate) fn is_recording(&self) -> bool {
        self.tracer.is_some()
    }

    /// A child of this span.
    pub(crate) fn child(&self, name: &str, kind: Kind) -> Span {
        match &self.tracer {
            Some(tracer) => {
                Span::open(tracer.clone(), self.data.trace_id, Some(self.data.span_id), name, kind)
            }
            None => Span::none(),
        }
    }

    /// Sets an attribute.
    pub(crate) fn set(&mut self, key: &'static str, value: impl Into<Attr>) {
        if self.tracer.is_some() {
            self.data.attributes.push((key, value.into()));
        }
    }

    /// Marks the span failed, with what happened.
    pub(crate) fn fail(&mut self, message: impl Into<String>) {
        if self.tracer.is_some() {
            self.data.error = Some(message.into());
        }
    }

    /// This span as a W3C `traceparent`, for a request it makes; `None` without traces.
    pub(crate) fn traceparent(&self) -> Option<String> {
        self.tracer.as_ref()?;
        Some(format!("00-{}-{}-01", hex(&self.data.trace_id), hex(&self.data.span_id)))
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        let Some(tracer) = &self.tracer else { return };
        let mut data = std::mem::replace(&mut self.data, Span::none_data());
        data.end_ns = now_ns().max(data.start_ns);
        if tracer.queue.try_send(data).is_err() {
            tracer.dropped.inc();
        }
    }
}

impl Span {
    fn none_data() -> SpanData {
        SpanData {
            trace_id: [0; 16],
            span_id: [0; 8],
            parent: None,
            name: String::new(),
            kind: Kind::Internal,
            start_ns: 0,
            end_ns: 0,
            attributes: Vec::new(),
            error: None,
        }
    }
}

/// Sends the queue's spans in batches until every sender is gone.
async fn export(target: Target, mut queue: mpsc::Receiver<SpanData>, exported: Counter, dropped: Counter) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap_or_default();
    let mut warned = false;
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + LINGER;
        while batch.len() < BATCH {
            match tokio::time::timeout_at(deadline, queue.recv()).await {
                Ok(Some(span)) => batch.push(span),
                Ok(None) | Err(_) => break,
            }
        }
        let body = otlp::export_request(&target.service, &batch);
        let mut request =
            client.post(&target.url).header("Content-Type", "application/x-protobuf").body(body);
        for (k, v) in &target.headers {
            request = request.header(k, v);
        }
        let n = batch.len() as u64;
        match request.send().await {
            Ok(r) if r.status().is_success() => {
                exported.inc_by(n);
                warned = false;
            }
            outcome => {
                dropped.inc_by(n);
                if !warned {
                    let why = match outcome {
                        Ok(r) => format!("answered {}", r.status()),
                        Err(e) => e.to_string(),
                    };
                    tracing::warn!(
                        "the trace collector at {} did not take {n} spans ({why}); spans are dropped until it does",
                        target.url
                    );
                    warned = true;
                }
            }
        }
    }
}

/// The trace and parent span of a W3C `traceparent` (`00-TRACE-SPAN-FLAGS`), if it is one.
fn parse_traceparent(value: &str) -> Option<([u8; 16], [u8; 8])> {
    let mut parts = value.trim().split('-');
    let (version, trace, span, _flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version.len() != 2 || version == "ff" || trace.len() != 32 || span.len() != 16 {
        return None;
    }
    let trace: [u8; 16] = unhex(trace)?.try_into().ok()?;
    let span: [u8; 8] = unhex(span)?.try_into().ok()?;
    (trace != [0; 16] && span != [0; 8]).then_some((trace, span))
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let secret = toolgate::secret::random_secret();
    let mut out = [0u8; N];
    out.copy_from_slice(&secret[..N]);
    out
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_and_written_as_w3c_says() {
        let (trace, span) =
            parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").unwrap();
        assert_eq!(hex(&trace), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(hex(&span), "b7ad6b7169203331");
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-zzad6b7169203331-01",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_endpoint_comes_from_the_configuration_then_the_standard_variables() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let none = TelemetryConfig::default();
        assert_eq!(none.target(&env(&[])), None, "off unless configured");
        let t = none
            .target(&env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "x-key=1, b = 2"),
            ]))
            .unwrap();
        assert_eq!(t.url, "http://c:4318/v1/traces");
        assert_eq!(t.headers, [("x-key".to_owned(), "1".to_owned()), ("b".to_owned(), "2".to_owned())]);
        let t = none
            .target(&env(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/custom"),
                ("OTEL_SERVICE_NAME", "gw"),
            ]))
            .unwrap();
        assert_eq!((t.url.as_str(), t.service.as_str()), ("http://c:4318/custom", "gw"));
        let configured =
            TelemetryConfig { otlp_endpoint: Some("http://d:4318".into()), ..Default::default() };
        assert_eq!(
            configured.target(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")])).unwrap().url,
            "http://d:4318/v1/traces"
        );
        assert_eq!(configured.target(&env(&[("OTEL_SDK_DISABLED", "true")])), None);
    }
}
