//! Hand-built MessagePack for tests, independent of the crate's writer.
#![allow(dead_code)]

use cultnet_receipts::frames::{Document, RawValue};

pub const NIL: u8 = 0xc0;

/// A string value from raw bytes (which need not be UTF-8).
pub fn str_bytes(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    if b.len() < 32 {
        out.push(0xa0 | b.len() as u8);
    } else if b.len() < 256 {
        out.extend_from_slice(&[0xd9, b.len() as u8]);
    } else {
        out.push(0xda);
        out.extend_from_slice(&(b.len() as u16).to_be_bytes());
    }
    out.extend_from_slice(b);
    out
}

pub fn s(text: &str) -> Vec<u8> {
    str_bytes(text.as_bytes())
}

pub fn nil() -> Vec<u8> {
    vec![NIL]
}

pub fn int(v: u8) -> Vec<u8> {
    assert!(v < 128);
    vec![v]
}

pub fn arr(items: &[Vec<u8>]) -> Vec<u8> {
    assert!(items.len() < 16);
    let mut out = vec![0x90 | items.len() as u8];
    for i in items {
        out.extend_from_slice(i);
    }
    out
}

/// A map of the pairs in order (repeats allowed: that is the point).
pub fn map(pairs: &[(&str, Vec<u8>)]) -> Vec<u8> {
    assert!(pairs.len() < 16);
    let mut out = vec![0x80 | pairs.len() as u8];
    for (k, v) in pairs {
        out.extend_from_slice(&s(k));
        out.extend_from_slice(v);
    }
    out
}

pub fn admitted_pairs(id: &str) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("schemaVersion", s("cultnet.write_admitted.v0")),
        ("messageId", s(id)),
        ("operation", s("put")),
        ("schemaId", s("notes.v1")),
        ("recordKey", s("note:1")),
    ]
}

/// The payload `{"a": 1}`.
pub fn payload() -> RawValue {
    RawValue::new(vec![0x81, 0xa1, b'a', 0x01]).unwrap()
}

pub fn document(key: &str) -> Document {
    Document {
        schema_id: "notes.v1".into(),
        record_key: key.into(),
        stored_at: "2026-12-04T12:00:00Z".into(),
        payload: payload(),
        source_runtime_id: None,
        source_agent_id: None,
        source_role: None,
        tags: None,
    }
}
