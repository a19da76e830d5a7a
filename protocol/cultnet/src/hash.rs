//! The content hash of a write (W-20).

use crate::frames::{DocumentDelete, DocumentPut, Operation};
use crate::msgpack::Writer;
use sha2::{Digest, Sha256};

/// SHA-256 of the MessagePack array `[operation, schemaId, recordKey, payload]`, where payload
/// is the put's raw document payload (its encoded MessagePack bytes) as a MessagePack bin, and
/// nil for a delete.
#[must_use]
pub fn content_hash(
    operation: Operation,
    schema_id: &str,
    record_key: &str,
    payload: Option<&[u8]>,
) -> [u8; 32] {
    let mut w = Writer::new();
    w.array(4);
    w.str(operation.as_str());
    w.str(schema_id);
    w.str(record_key);
    match payload {
        Some(p) => w.bin(p),
        None => w.nil(),
    }
    Sha256::digest(&w.out).into()
}

/// The content hash of a put.
#[must_use]
pub fn put_hash(put: &DocumentPut) -> [u8; 32] {
    let d = &put.document;
    content_hash(
        Operation::Put,
        &d.schema_id,
        &d.record_key,
        Some(d.payload.as_bytes()),
    )
}

/// The content hash of a delete.
#[must_use]
pub fn delete_hash(delete: &DocumentDelete) -> [u8; 32] {
    content_hash(
        Operation::Delete,
        &delete.schema_id,
        &delete.record_key,
        None,
    )
}
