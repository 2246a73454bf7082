//! otlp: spans as an OTLP/HTTP `ExportTraceServiceRequest`, in protobuf, written by hand (the
//! message is small and fixed; `opentelemetry-proto`'s `trace.proto` gives the field numbers).

use super::{Attr, Kind, SpanData};

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const BYTES: u8 = 2;

/// The request that exports `spans` of service `service` (with its version).
pub(crate) fn export_request(service: &str, spans: &[SpanData]) -> Vec<u8> {
    // ResourceSpans { resource = 1, scope_spans = 2 }
    let mut resource = Vec::new();
    key_value(&mut resource, "service.name", &Attr::Str(service.to_owned()));
    key_value(&mut resource, "service.version", &Attr::Str(env!("CARGO_PKG_VERSION").to_owned()));
    let mut scope = Vec::new();
    string(&mut scope, 1, "toolgate");
    string(&mut scope, 2, env!("CARGO_PKG_VERSION"));
    let mut scope_spans = Vec::new();
    message(&mut scope_spans, 1, &scope);
    for span in spans {
        message(&mut scope_spans, 2, &span_message(span));
    }
    let mut resource_spans = Vec::new();
    let mut resource_message = Vec::new();
    // Resource.attributes = 1: the key-values were written as field 1 already.
    resource_message.extend_from_slice(&resource);
    message(&mut resource_spans, 1, &resource_message);
    message(&mut resource_spans, 2, &scope_spans);
    let mut out = Vec::new();
    message(&mut out, 1, &resource_spans);
    out
}

/// One `Span`.
fn span_message(span: &SpanData) -> Vec<u8> {
    let mut out = Vec::new();
    bytes(&mut out, 1, &span.trace_id);
    bytes(&mut out, 2, &span.span_id);
    if let Some(parent) = span.parent {
        bytes(&mut out, 4, &parent);
    }
    string(&mut out, 5, &span.name);
    varint_field(
        &mut out,
        6,
        match span.kind {
            Kind::Internal => 1,
            Kind::Server => 2,
            Kind::Client => 3,
        },
    );
    fixed64(&mut out, 7, span.start_ns);
    fixed64(&mut out, 8, span.end_ns);
    for (key, value) in &span.attributes {
        // Span.attributes = 9.
        let mut kv = Vec::new();
        string(&mut kv, 1, key);
        message(&mut kv, 2, &any_value(value));
        message(&mut out, 9, &kv);
    }
    // Status { message = 2, code = 3 }: ERROR (2) with its message, else UNSET.
    if let Some(error) = &span.error {
        let mut status = Vec::new();
        string(&mut status, 2, error);
        varint_field(&mut status, 3, 2);
        message(&mut out, 15, &status);
    }
    out
}

/// A `KeyValue` as field 1 of its container (a `Resource`'s attributes).
fn key_value(out: &mut Vec<u8>, key: &str, value: &Attr) {
    let mut kv = Vec::new();
    string(&mut kv, 1, key);
    message(&mut kv, 2, &any_value(value));
    message(out, 1, &kv);
}

/// An `AnyValue`: `string_value` = 1, `bool_value` = 2, `int_value` = 3.
fn any_value(value: &Attr) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        Attr::Str(s) => string(&mut out, 1, s),
        Attr::Bool(b) => varint_field(&mut out, 2, u64::from(*b)),
        Attr::Int(i) => varint_field(&mut out, 3, *i as u64),
    }
    out
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn varint_field(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, VARINT);
    varint(out, n);
}

fn fixed64(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&n.to_le_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    tag(out, field, BYTES);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    bytes(out, field, s.as_bytes());
}

fn message(out: &mut Vec<u8>, field: u32, m: &[u8]) {
    bytes(out, field, m);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_tags_are_protobufs() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        varint_field(&mut out, 6, 2);
        assert_eq!(out, [0x30, 0x02]);
        let mut out = Vec::new();
        fixed64(&mut out, 7, 1);
        assert_eq!(out, [0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut out = Vec::new();
        varint_field(&mut out, 3, -1i64 as u64);
        assert_eq!(out.len(), 11, "a negative int64 takes ten bytes");
    }
}
