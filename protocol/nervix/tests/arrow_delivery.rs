//! EC-3: the checked decode of an emitter delivery refuses hostile Arrow IPC with a typed fault
//! and never panics.

use nervix_protocol::arrow::{decode, encode, BatchBuilder, DeliveryFault};
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType};
use std::sync::Arc;

fn fields() -> Vec<FieldSpec> {
    vec![FieldSpec::new(
        "v",
        FieldType::Scalar(ScalarType::U64),
        false,
        false,
    )]
}

fn stream(values: &[u64]) -> Vec<u8> {
    let mut b = BatchBuilder::new(Arc::from(fields()));
    b.column("v", values).unwrap();
    encode(&b.finish().unwrap()).unwrap()
}

/// Where the record batch message's metadata starts, and its length.
fn second_message(bytes: &[u8]) -> (usize, usize) {
    let len = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let schema = 8 + len(4);
    (schema + 8, len(schema + 4))
}

#[test]
fn ec_3_a_delivery_whose_buffer_lies_outside_its_body_is_a_typed_fault() {
    let good = stream(&[1, 2, 3]);
    assert!(decode(&good, &fields(), 3).is_ok());
    let (meta, meta_len) = second_message(&good);
    // The values buffer is 24 bytes long; every position in the metadata holding that length
    // as a little-endian i64 is made to promise far more than the body holds.
    let mut hits = 0;
    for at in meta..meta + meta_len - 8 {
        if good[at..at + 8] == 24i64.to_le_bytes() {
            let mut bad = good.clone();
            bad[at..at + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
            match decode(&bad, &fields(), 3) {
                Err(DeliveryFault::Ipc(_)) => hits += 1,
                other => panic!("a buffer beyond the body at byte {at} gave {other:?}"),
            }
        }
    }
    assert!(
        hits > 0,
        "the values buffer's length was found in the metadata"
    );
}

#[test]
fn ec_3_any_single_byte_flip_of_a_delivery_is_refused_or_read_never_a_panic() {
    let good = stream(&[1, 2, 3]);
    for at in 0..good.len() {
        for flip in [0x01u8, 0x80, 0x99, 0xff] {
            let mut bad = good.clone();
            bad[at] ^= flip;
            if let Ok(batch) = decode(&bad, &fields(), 3) {
                assert_eq!(batch.num_rows(), 3);
            }
        }
    }
}

#[test]
fn ec_3_a_delivery_whose_lengths_overflow_a_fixed_list_is_a_typed_fault() {
    let fields = vec![FieldSpec::new(
        "pair",
        FieldType::FixedList {
            element: Box::new(FieldType::Scalar(ScalarType::U8)),
            length: std::num::NonZeroU32::new(4).unwrap(),
        },
        false,
        false,
    )];
    let mut b = BatchBuilder::new(Arc::from(fields.clone()));
    b.list_column("pair", &[Some(&[1u8, 2, 3, 4][..])]).unwrap();
    let good = encode(&b.finish().unwrap()).unwrap();
    assert!(decode(&good, &fields, 1).is_ok());
    let (meta, meta_len) = second_message(&good);
    // The batch's row count and its list's length are 1: each made 2^62, so that the list's
    // values (its length times 4) overflow.
    let mut hits = 0;
    for at in meta..meta + meta_len - 8 {
        if good[at..at + 8] == 1i64.to_le_bytes() {
            let mut bad = good.clone();
            bad[at..at + 8].copy_from_slice(&(1i64 << 62).to_le_bytes());
            assert!(
                decode(&bad, &fields, 1).is_err(),
                "a length of 2^62 at byte {at} was read"
            );
            hits += 1;
        }
    }
    assert!(hits > 0, "the lengths were found in the metadata");
}

#[test]
fn ec_3_a_delivery_whose_buffer_is_misaligned_or_cut_is_refused_never_a_panic() {
    let fields = vec![
        FieldSpec::new("v", FieldType::Scalar(ScalarType::U64), false, false),
        FieldSpec::new("s", FieldType::Scalar(ScalarType::String), true, false),
    ];
    let mut b = BatchBuilder::new(Arc::from(fields.clone()));
    b.column("v", &[1u64, 2]).unwrap();
    b.nullable_column("s", &[Some("ab"), None]).unwrap();
    let good = encode(&b.finish().unwrap()).unwrap();
    assert!(decode(&good, &fields, 2).is_ok());
    // Any byte of the metadata plus one: a buffer's offset so moved is no longer aligned.
    let (meta, meta_len) = second_message(&good);
    for at in meta..meta + meta_len {
        let mut bad = good.clone();
        bad[at] = bad[at].wrapping_add(1);
        if let Ok(batch) = decode(&bad, &fields, 2) {
            assert_eq!(batch.num_rows(), 2);
        }
    }
}
