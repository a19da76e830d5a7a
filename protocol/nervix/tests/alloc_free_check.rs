//! F-3: checked reading of a frame allocates nothing, however many cells it holds. A counting
//! global allocator sees every heap allocation of this test binary; only the allocations made
//! while `check_slice` runs are counted.

use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{check_slice, ServerMessageRoot};
use nervix_protocol::limits::FRAME_LIMIT;
use nervix_protocol::schema::*;

#[path = "support/counting.rs"]
mod counting;

use counting::allocations_during;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

fn cell(value: CellValueT) -> CellT {
    CellT { value }
}

/// A row with one cell of each kind a subscription carries, a list and bytes included.
fn row(i: u64) -> RowT {
    let n = i as i64;
    RowT {
        cells: vec![
            cell(CellValueT::U64Cell(Box::new(U64CellT { value: i }))),
            cell(CellValueT::I64Cell(Box::new(I64CellT { value: -n }))),
            cell(CellValueT::F32Cell(Box::new(F32CellT {
                value: Some(-0.0),
            }))),
            cell(CellValueT::F64Cell(Box::new(F64CellT {
                value: Some(n as f64 / 3.0),
            }))),
            cell(CellValueT::BoolCell(Box::new(BoolCellT {
                value: i.is_multiple_of(2),
            }))),
            cell(CellValueT::StringCell(Box::new(StringCellT {
                value: format!("cell {i}"),
            }))),
            cell(CellValueT::BytesCell(Box::new(BytesCellT {
                value: vec![i as u8; 5],
            }))),
            cell(CellValueT::DatetimeCell(Box::new(DatetimeCellT {
                unix_nanos: n * 1_000,
            }))),
            cell(CellValueT::NullCell(Box::new(NullCellT {}))),
            cell(CellValueT::RedactedCell(Box::new(RedactedCellT {}))),
            cell(CellValueT::ListCell(Box::new(ListCellT {
                elements: (0..3)
                    .map(|k| cell(CellValueT::I32Cell(Box::new(I32CellT { value: k }))))
                    .collect(),
            }))),
        ],
    }
}

#[test]
fn f_3_checked_reading_allocates_nothing_per_cell() {
    let rows = 500;
    let message = ServerMessageT {
        body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: Box::new(SubscriptionHandleT {
                name: "sub".to_owned(),
                generation: 1,
            }),
            batch: Box::new(RowBatchT {
                branch_key: Some(Box::new(BranchKeyT {
                    cells: vec![cell(CellValueT::StringCell(Box::new(StringCellT {
                        value: "branch".to_owned(),
                    })))],
                })),
                rows: (0..rows).map(row).collect(),
            }),
        })),
    };
    let bytes = Encoder::new()
        .encode::<ServerMessageRoot>(&message)
        .expect("the frame obeys the schema");

    let (result, allocations) =
        allocations_during(|| check_slice::<ServerMessageRoot>(&bytes, FRAME_LIMIT).is_ok());
    assert!(result, "the frame passes checked reading");
    assert_eq!(
        allocations,
        0,
        "checked reading of {rows} rows ({} cells) allocated",
        rows * 14
    );

    // The counter works: the same thread allocating while armed is seen.
    let (_, seen) = allocations_during(|| std::hint::black_box(vec![0u8; 64]));
    assert!(seen >= 1, "the counting allocator counts");
}
