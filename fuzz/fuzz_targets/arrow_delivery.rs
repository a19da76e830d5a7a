//! An emitter delivery under hostile bytes (EC-3): the input names the consumer's fields (any
//! scalar, fixed list or list type, nested, nullable or not, sensitive or not), the delivery's
//! member count and its Arrow IPC bytes, either taken raw or made from a canonical stream of
//! those fields with bytes flipped, cut off or appended. The checked decode a consumer uses,
//! `arrow::decode`, must refuse with a typed `DeliveryFault` or give a batch; it never panics.
//!
//! Asserted of an accepted batch: it holds exactly `members` rows, passes `check_record_batch`
//! against the same fields, every column is valid Arrow data, and it encodes again to a stream
//! that decodes to the same batch.
#![no_main]

use arrow_array::{new_empty_array, new_null_array, ArrayRef, RecordBatch};
use libfuzzer_sys::fuzz_target;
use nervix_fuzz::Input;
use nervix_protocol::arrow::{arrow_schema, arrow_type, check_record_batch, decode, encode};
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType};
use std::hint::black_box;
use std::num::NonZeroU32;

const SCALARS: [ScalarType; 14] = [
    ScalarType::U8,
    ScalarType::I8,
    ScalarType::U16,
    ScalarType::I16,
    ScalarType::U32,
    ScalarType::I32,
    ScalarType::U64,
    ScalarType::I64,
    ScalarType::F32,
    ScalarType::F64,
    ScalarType::Bool,
    ScalarType::String,
    ScalarType::Datetime,
    ScalarType::Bytes,
];

/// The most fields a drawn endpoint has.
const MAX_FIELDS: u8 = 6;
/// The deepest list nesting drawn.
const MAX_DEPTH: u8 = 2;

fn field_type(input: &mut Input<'_>, depth: u8) -> FieldType {
    let b = input.byte();
    let pick = usize::from(b % 16);
    if depth >= MAX_DEPTH || pick < SCALARS.len() {
        return FieldType::Scalar(SCALARS[pick % SCALARS.len()]);
    }
    let element = Box::new(field_type(input, depth + 1));
    if pick == SCALARS.len() {
        let length = NonZeroU32::MIN.saturating_add(u32::from(input.byte() % 4));
        FieldType::FixedList { element, length }
    } else {
        FieldType::List { element }
    }
}

fn fields(input: &mut Input<'_>) -> Vec<FieldSpec> {
    let n = input.byte() % (MAX_FIELDS + 1);
    (0..n)
        .map(|i| {
            let flags = input.byte();
            // A name now and then repeats the first one.
            let name = if flags & 4 != 0 {
                "c0".to_string()
            } else {
                format!("c{i}")
            };
            let t = field_type(input, 0);
            FieldSpec::new(name, t, flags & 1 != 0, flags & 2 != 0)
        })
        .collect()
}

/// A canonical stream of `fields` holding `rows` rows (all null) or none when a field may not
/// hold a null, and the rows it holds.
fn canonical(fields: &[FieldSpec], rows: usize) -> Option<(Vec<u8>, usize)> {
    let rows = if fields.iter().all(FieldSpec::nullable) {
        rows
    } else {
        0
    };
    let columns: Vec<ArrayRef> = fields
        .iter()
        .map(|f| {
            let t = arrow_type(f.field_type());
            if rows == 0 {
                new_empty_array(&t)
            } else {
                new_null_array(&t, rows)
            }
        })
        .collect();
    let schema = arrow_schema(fields);
    let batch = if columns.is_empty() {
        RecordBatch::new_empty(schema)
    } else {
        RecordBatch::try_new(schema, columns).ok()?
    };
    Some((encode(&batch).ok()?, rows))
}

fn delivery(input: &mut Input<'_>, fields: &[FieldSpec]) -> (Vec<u8>, u32) {
    let mode = input.byte();
    let arbitrary_members = input.le::<4>() as u32;
    if mode.is_multiple_of(2) {
        return (input.rest().to_vec(), arbitrary_members);
    }
    let Some((mut bytes, rows)) = canonical(fields, usize::from(input.byte() % 4)) else {
        return (input.rest().to_vec(), arbitrary_members);
    };
    for _ in 0..input.byte() % 8 {
        let at = input.le::<2>() as usize;
        let flip = input.byte();
        if let Some(len) = std::num::NonZeroUsize::new(bytes.len()) {
            bytes[at % len.get()] ^= flip;
        }
    }
    if mode & 2 != 0 {
        let keep = input.le::<2>() as usize;
        bytes.truncate(keep % (bytes.len() + 1));
    }
    if mode & 4 != 0 {
        bytes.extend_from_slice(input.rest());
    }
    let members = if mode & 8 != 0 {
        arbitrary_members
    } else {
        rows as u32
    };
    (bytes, members)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let fields = fields(&mut input);
    let (bytes, members) = delivery(&mut input, &fields);
    match decode(&bytes, &fields, members) {
        Err(fault) => {
            black_box(fault.to_string());
        }
        Ok(batch) => {
            assert_eq!(batch.num_rows(), members as usize, "rows are the members");
            assert_eq!(
                check_record_batch(&fields, &batch),
                Ok(()),
                "an accepted delivery is a batch of the consumer's fields"
            );
            for column in batch.columns() {
                column
                    .to_data()
                    .validate_full()
                    .expect("an accepted column is valid Arrow data");
            }
            let again = encode(&batch).expect("an accepted batch encodes");
            let back = decode(&again, &fields, members).expect("its encoding decodes");
            assert_eq!(back, batch, "the batch survives a round trip");
        }
    }
});
