//! R-1 to R-5: typed rows, checked against their schema before any value is read.

use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ServerFrame, ServerMessageRoot};
use nervix_protocol::rng::Rng;
use nervix_protocol::rows::{
    self, CellAt, CellFault, CheckedBatch, OwnedValue, Part, RowViolation, Value,
};
use nervix_protocol::schema::*;
use nervix_protocol::violation::ProtocolViolation;
use proptest::prelude::*;
use std::num::NonZeroU32;
use std::sync::Arc;

#[path = "support/counting.rs"]
mod counting;

use counting::allocations_during;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

// ---------------------------------------------------------------------------------------------
// Schemas and frames
// ---------------------------------------------------------------------------------------------

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

fn scalar(s: ScalarType) -> FieldTypeT {
    FieldTypeT {
        shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT { scalar: Some(s) })),
    }
}

fn fixed(element: FieldTypeT, length: u32) -> FieldTypeT {
    FieldTypeT {
        shape: FieldTypeShapeT::FixedListFieldType(Box::new(FixedListFieldTypeT {
            element: Box::new(element),
            length,
        })),
    }
}

fn list(element: FieldTypeT) -> FieldTypeT {
    FieldTypeT {
        shape: FieldTypeShapeT::ListFieldType(Box::new(ListFieldTypeT {
            element: Box::new(element),
        })),
    }
}

fn field(name: &str, ty: FieldTypeT) -> RowFieldT {
    RowFieldT {
        name: name.to_owned(),
        field_type: Box::new(ty),
        nullable: false,
        sensitive: false,
    }
}

fn nullable(mut f: RowFieldT) -> RowFieldT {
    f.nullable = true;
    f
}

fn sensitive(mut f: RowFieldT) -> RowFieldT {
    f.sensitive = true;
    f
}

fn unbranched(fields: Vec<RowFieldT>) -> RowSchemaT {
    RowSchemaT {
        fields,
        branch: None,
    }
}

fn branched(fields: Vec<RowFieldT>, key: Vec<RowFieldT>) -> RowSchemaT {
    RowSchemaT {
        fields,
        branch: Some(Box::new(RowBranchT {
            branch: "region".to_owned(),
            fields: key,
        })),
    }
}

fn encode(body: ServerBodyT) -> ServerFrame {
    let bytes = Encoder::new()
        .encode::<ServerMessageRoot>(&ServerMessageT { body })
        .expect("the frame obeys the schema");
    ServerFrame::check(bytes).expect("the frame passes the wire checks")
}

/// The reply that opens subscription `name` generation `generation` with `schema`.
fn opened(name: &str, generation: u64, schema: RowSchemaT) -> ServerFrame {
    encode(ServerBodyT::Reply(Box::new(ReplyT {
        request_id: 1,
        body: ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: Box::new(SubscriptionHandleT {
                    name: name.to_owned(),
                    generation,
                }),
                domain: "d".to_owned(),
                relay: "r".to_owned(),
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::new(schema),
            })),
            message: String::new(),
            diagnostics: vec![],
        })),
    })))
}

/// The schema of an opening reply, copied out of its frame as a client does.
fn schema_of(frame: &ServerFrame) -> Result<rows::RowSchema, ProtocolViolation> {
    let view = frame.view();
    let opened = view
        .body_as_reply()
        .and_then(|r| r.body_as_subscribe_outcome())
        .and_then(|o| o.disposition_as_subscription_opened())
        .expect("an opening reply");
    rows::RowSchema::from_view(opened.schema())
}

fn compile(schema: RowSchemaT) -> Arc<rows::RowSchema> {
    Arc::new(schema_of(&opened("s", 1, schema)).expect("the schema compiles"))
}

fn cells(values: &[OwnedValue]) -> Vec<CellT> {
    values.iter().map(OwnedValue::to_cell).collect()
}

fn batch_frame(
    name: &str,
    generation: u64,
    key: Option<Vec<CellT>>,
    rows: Vec<Vec<CellT>>,
) -> ServerFrame {
    encode(ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
        subscription: Box::new(SubscriptionHandleT {
            name: name.to_owned(),
            generation,
        }),
        batch: Box::new(RowBatchT {
            branch_key: key.map(|cells| Box::new(BranchKeyT { cells })),
            rows: rows.into_iter().map(|cells| RowT { cells }).collect(),
        }),
    })))
}

fn batch(key: Option<&[OwnedValue]>, rows: &[Vec<OwnedValue>]) -> ServerFrame {
    batch_frame(
        "s",
        1,
        key.map(cells),
        rows.iter().map(|r| cells(r)).collect(),
    )
}

fn check(schema: &Arc<rows::RowSchema>, frame: ServerFrame) -> Result<CheckedBatch, RowViolation> {
    CheckedBatch::check(frame, Arc::clone(schema)).map_err(|e| {
        assert_eq!(e.rule(), "R-2", "{e}");
        match e {
            ProtocolViolation::Rows(v) => *v,
            other => panic!("not a row violation: {other:?}"),
        }
    })
}

fn at(part: Part, field: usize, elements: &[usize]) -> CellAt {
    CellAt {
        part,
        field,
        elements: elements.to_vec(),
    }
}

fn cell_fault(part: Part, field: usize, elements: &[usize], fault: CellFault) -> RowViolation {
    RowViolation::Cell {
        at: at(part, field, elements),
        fault,
    }
}

/// A present value of each scalar type.
fn sample(s: ScalarType) -> OwnedValue {
    match s {
        ScalarType::U8 => OwnedValue::U8(1),
        ScalarType::I8 => OwnedValue::I8(-1),
        ScalarType::U16 => OwnedValue::U16(2),
        ScalarType::I16 => OwnedValue::I16(-2),
        ScalarType::U32 => OwnedValue::U32(3),
        ScalarType::I32 => OwnedValue::I32(-3),
        ScalarType::U64 => OwnedValue::U64(4),
        ScalarType::I64 => OwnedValue::I64(-4),
        ScalarType::F32 => OwnedValue::F32(0.5),
        ScalarType::F64 => OwnedValue::F64(-0.5),
        ScalarType::Bool => OwnedValue::Bool(true),
        ScalarType::String => OwnedValue::String("x".to_owned()),
        ScalarType::Datetime => OwnedValue::Datetime(5),
        ScalarType::Bytes => OwnedValue::Bytes(vec![6]),
        other => panic!("undeclared scalar {other:?}"),
    }
}

fn cell_variant(s: ScalarType) -> CellValue {
    match s {
        ScalarType::U8 => CellValue::U8Cell,
        ScalarType::I8 => CellValue::I8Cell,
        ScalarType::U16 => CellValue::U16Cell,
        ScalarType::I16 => CellValue::I16Cell,
        ScalarType::U32 => CellValue::U32Cell,
        ScalarType::I32 => CellValue::I32Cell,
        ScalarType::U64 => CellValue::U64Cell,
        ScalarType::I64 => CellValue::I64Cell,
        ScalarType::F32 => CellValue::F32Cell,
        ScalarType::F64 => CellValue::F64Cell,
        ScalarType::Bool => CellValue::BoolCell,
        ScalarType::String => CellValue::StringCell,
        ScalarType::Datetime => CellValue::DatetimeCell,
        ScalarType::Bytes => CellValue::BytesCell,
        other => panic!("undeclared scalar {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// R-1
// ---------------------------------------------------------------------------------------------

#[test]
fn r_1_a_batch_is_read_against_exactly_the_schema_it_is_given() {
    let generation_1 = compile(unbranched(vec![
        field("id", scalar(ScalarType::U64)),
        field("name", scalar(ScalarType::String)),
    ]));
    let generation_2 = compile(unbranched(vec![
        field("name", scalar(ScalarType::String)),
        field("id", scalar(ScalarType::U64)),
    ]));
    let rows = [vec![OwnedValue::U64(7), OwnedValue::String("seven".into())]];

    let checked = check(&generation_1, batch(None, &rows)).expect("conforms to its own schema");
    assert!(Arc::ptr_eq(checked.schema_arc(), &generation_1));
    assert_eq!(
        checked.row(0).and_then(|r| r.get("id")),
        Some(Value::U64(7))
    );

    assert_eq!(
        check(&generation_2, batch(None, &rows)).err(),
        Some(cell_fault(
            Part::Row(0),
            0,
            &[],
            CellFault::WrongType {
                expected: CellValue::StringCell,
                found: CellValue::U64Cell,
            }
        )),
        "the same frame against another generation's schema is refused"
    );

    // Same shape, other names: the names of the schema given are the ones read.
    let renamed = compile(unbranched(vec![
        field("key", scalar(ScalarType::U64)),
        field("label", scalar(ScalarType::String)),
    ]));
    let checked = check(&renamed, batch(None, &rows)).expect("same shape");
    let row = checked.row(0).expect("one row");
    assert_eq!(row.get("key"), Some(Value::U64(7)));
    assert_eq!(row.get("id"), None);
    assert_eq!(row.fields()[1].name(), "label");
}

#[test]
fn r_1_the_schema_outlives_its_opening_frame_and_the_batch_names_its_generation() {
    let reply = opened(
        "prices",
        9,
        unbranched(vec![field("p", scalar(ScalarType::I64))]),
    );
    let schema = Arc::new(schema_of(&reply).expect("compiles"));
    drop(reply);
    let frame = batch_frame(
        "prices",
        9,
        None,
        vec![cells(&[OwnedValue::I64(-3)]), cells(&[OwnedValue::I64(4)])],
    );
    let checked = CheckedBatch::check(frame, Arc::clone(&schema)).expect("conforms");
    assert_eq!(checked.subscription(), "prices");
    assert_eq!(checked.generation(), 9);
    assert_eq!(checked.len(), 2);
    assert_eq!(checked.schema(), &*schema);
    let values: Vec<_> = checked.rows().map(|r| r.cell(0)).collect();
    assert_eq!(values, vec![Some(Value::I64(-3)), Some(Value::I64(4))]);
}

// ---------------------------------------------------------------------------------------------
// R-2
// ---------------------------------------------------------------------------------------------

fn key_schema() -> Arc<rows::RowSchema> {
    compile(branched(
        vec![field("v", scalar(ScalarType::U8))],
        vec![
            field("zone", scalar(ScalarType::String)),
            field("rack", scalar(ScalarType::U32)),
        ],
    ))
}

fn key() -> Vec<OwnedValue> {
    vec![OwnedValue::String("eu".into()), OwnedValue::U32(3)]
}

#[test]
fn r_2_a_batch_of_a_branched_relay_carries_a_branch_key() {
    let schema = key_schema();
    let rows = [vec![OwnedValue::U8(1)]];
    let checked = check(&schema, batch(Some(&key()), &rows)).expect("carries its key");
    let k = checked.branch_key().expect("a key");
    assert_eq!(k.len(), 2);
    assert_eq!(k.get("zone"), Some(Value::String("eu")));
    assert_eq!(k.cell(1), Some(Value::U32(3)));
    assert_eq!(checked.schema().branch().map(|b| b.name()), Some("region"));
    assert_eq!(
        check(&schema, batch(None, &rows)).err(),
        Some(RowViolation::MissingBranchKey)
    );
}

#[test]
fn r_2_a_batch_of_an_unbranched_relay_carries_no_branch_key() {
    let schema = compile(unbranched(vec![field("v", scalar(ScalarType::U8))]));
    let rows = [vec![OwnedValue::U8(1)]];
    let checked = check(&schema, batch(None, &rows)).expect("no key");
    assert!(checked.branch_key().is_none());
    assert_eq!(
        check(&schema, batch(Some(&[OwnedValue::U8(0)]), &rows)).err(),
        Some(RowViolation::UnexpectedBranchKey)
    );
}

#[test]
fn r_2_a_row_holds_exactly_one_cell_per_field() {
    let schema = compile(unbranched(vec![
        field("a", scalar(ScalarType::U8)),
        field("b", scalar(ScalarType::U8)),
        field("c", scalar(ScalarType::U8)),
    ]));
    let full = vec![OwnedValue::U8(1), OwnedValue::U8(2), OwnedValue::U8(3)];
    assert!(check(&schema, batch(None, &[full.clone(), full.clone()])).is_ok());
    let short = full[..2].to_vec();
    assert_eq!(
        check(&schema, batch(None, &[full.clone(), short])).err(),
        Some(RowViolation::CellCount {
            part: Part::Row(1),
            expected: 3,
            found: 2
        })
    );
    let mut long = full.clone();
    long.push(OwnedValue::U8(4));
    assert_eq!(
        check(&schema, batch(None, &[long, full])).err(),
        Some(RowViolation::CellCount {
            part: Part::Row(0),
            expected: 3,
            found: 4
        })
    );
    // A schema without fields takes rows without cells, and nothing else.
    let empty = compile(unbranched(vec![]));
    assert!(check(&empty, batch(None, &[vec![]])).is_ok());
    assert_eq!(
        check(&empty, batch(None, &[vec![OwnedValue::U8(1)]])).err(),
        Some(RowViolation::CellCount {
            part: Part::Row(0),
            expected: 0,
            found: 1
        })
    );
}

#[test]
fn r_2_a_branch_key_holds_exactly_one_cell_per_key_field_in_declared_order() {
    let schema = key_schema();
    let rows = [vec![OwnedValue::U8(1)]];
    assert_eq!(
        check(&schema, batch(Some(&key()[..1]), &rows)).err(),
        Some(RowViolation::CellCount {
            part: Part::BranchKey,
            expected: 2,
            found: 1
        })
    );
    let mut long = key();
    long.push(OwnedValue::U32(4));
    assert_eq!(
        check(&schema, batch(Some(&long), &rows)).err(),
        Some(RowViolation::CellCount {
            part: Part::BranchKey,
            expected: 2,
            found: 3
        })
    );
    let swapped = [OwnedValue::U32(3), OwnedValue::String("eu".into())];
    assert_eq!(
        check(&schema, batch(Some(&swapped), &rows)).err(),
        Some(cell_fault(
            Part::BranchKey,
            0,
            &[],
            CellFault::WrongType {
                expected: CellValue::StringCell,
                found: CellValue::U32Cell
            }
        ))
    );
}

#[test]
fn r_2_cells_are_positional_in_declared_field_order() {
    let schema = compile(unbranched(vec![
        field("n", scalar(ScalarType::I32)),
        field("t", scalar(ScalarType::String)),
    ]));
    let ok = [vec![OwnedValue::I32(1), OwnedValue::String("a".into())]];
    assert!(check(&schema, batch(None, &ok)).is_ok());
    let swapped = [vec![OwnedValue::String("a".into()), OwnedValue::I32(1)]];
    assert_eq!(
        check(&schema, batch(None, &swapped)).err(),
        Some(cell_fault(
            Part::Row(0),
            0,
            &[],
            CellFault::WrongType {
                expected: CellValue::I32Cell,
                found: CellValue::StringCell
            }
        ))
    );
}

#[test]
fn r_2_sensitive_field_holds_redacted_cell() {
    let schema = compile(branched(
        vec![
            field("open", scalar(ScalarType::U64)),
            sensitive(field("secret", scalar(ScalarType::U64))),
            nullable(sensitive(field("maybe", scalar(ScalarType::String)))),
        ],
        vec![sensitive(field("k", list(scalar(ScalarType::U8))))],
    ));
    let key = [OwnedValue::Withheld];
    let good = vec![
        OwnedValue::U64(1),
        OwnedValue::Withheld,
        OwnedValue::Withheld,
    ];
    let checked = check(&schema, batch(Some(&key), &[good.clone(), good.clone()])).expect("ok");
    assert_eq!(
        checked.row(1).and_then(|r| r.cell(1)),
        Some(Value::Withheld)
    );
    assert_eq!(
        checked.branch_key().and_then(|k| k.cell(0)),
        Some(Value::Withheld)
    );

    let leaked = vec![OwnedValue::U64(1), OwnedValue::U64(2), OwnedValue::Withheld];
    assert_eq!(
        check(&schema, batch(Some(&key), &[good.clone(), leaked])).err(),
        Some(cell_fault(
            Part::Row(1),
            1,
            &[],
            CellFault::NotRedacted {
                found: CellValue::U64Cell
            }
        ))
    );
    // A nullable sensitive field is still withheld in every row, never null.
    let null = vec![OwnedValue::U64(1), OwnedValue::Withheld, OwnedValue::Null];
    assert_eq!(
        check(&schema, batch(Some(&key), &[null])).err(),
        Some(cell_fault(
            Part::Row(0),
            2,
            &[],
            CellFault::NotRedacted {
                found: CellValue::NullCell
            }
        ))
    );
    let leaked_key = [OwnedValue::List(vec![OwnedValue::U8(1)])];
    assert_eq!(
        check(&schema, batch(Some(&leaked_key), &[good])).err(),
        Some(cell_fault(
            Part::BranchKey,
            0,
            &[],
            CellFault::NotRedacted {
                found: CellValue::ListCell
            }
        ))
    );
}

#[test]
fn r_2_no_field_but_a_sensitive_one_holds_redacted_cell() {
    let schema = compile(branched(
        vec![
            nullable(field("n", scalar(ScalarType::Bool))),
            field("m", list(scalar(ScalarType::Bool))),
        ],
        vec![nullable(field("k", scalar(ScalarType::Bool)))],
    ));
    let key = [OwnedValue::Bool(true)];
    let good = vec![OwnedValue::Bool(false), OwnedValue::List(vec![])];
    assert!(check(&schema, batch(Some(&key), std::slice::from_ref(&good))).is_ok());
    let redacted = vec![OwnedValue::Withheld, OwnedValue::List(vec![])];
    assert_eq!(
        check(&schema, batch(Some(&key), &[good.clone(), redacted])).err(),
        Some(cell_fault(Part::Row(1), 0, &[], CellFault::Redacted))
    );
    let redacted_list = vec![OwnedValue::Bool(false), OwnedValue::Withheld];
    assert_eq!(
        check(&schema, batch(Some(&key), &[redacted_list])).err(),
        Some(cell_fault(Part::Row(0), 1, &[], CellFault::Redacted))
    );
    assert_eq!(
        check(&schema, batch(Some(&[OwnedValue::Withheld]), &[good])).err(),
        Some(cell_fault(Part::BranchKey, 0, &[], CellFault::Redacted))
    );
}

#[test]
fn r_2_only_a_nullable_field_holds_null_cell() {
    let schema = compile(branched(
        vec![
            nullable(field("n", scalar(ScalarType::I16))),
            field("m", scalar(ScalarType::I16)),
        ],
        vec![
            nullable(field("kn", scalar(ScalarType::Datetime))),
            field("km", scalar(ScalarType::Datetime)),
        ],
    ));
    let key = [OwnedValue::Null, OwnedValue::Datetime(0)];
    let good = vec![OwnedValue::Null, OwnedValue::I16(0)];
    let checked =
        check(&schema, batch(Some(&key), std::slice::from_ref(&good))).expect("nulls allowed");
    assert_eq!(checked.row(0).and_then(|r| r.cell(0)), Some(Value::Null));
    assert_eq!(
        checked.branch_key().and_then(|k| k.cell(0)),
        Some(Value::Null)
    );

    let bad = vec![OwnedValue::I16(0), OwnedValue::Null];
    assert_eq!(
        check(&schema, batch(Some(&key), &[good.clone(), bad])).err(),
        Some(cell_fault(Part::Row(1), 1, &[], CellFault::Null))
    );
    let bad_key = [OwnedValue::Null, OwnedValue::Null];
    assert_eq!(
        check(&schema, batch(Some(&bad_key), &[good])).err(),
        Some(cell_fault(Part::BranchKey, 1, &[], CellFault::Null))
    );
}

#[test]
fn r_2_every_other_cell_holds_exactly_its_declared_types_cell() {
    let others = |s: ScalarType| {
        SCALARS
            .into_iter()
            .filter(move |t| *t != s)
            .map(sample)
            .chain([OwnedValue::List(vec![])])
    };
    for s in SCALARS {
        let schema = compile(unbranched(vec![field("f", scalar(s))]));
        let checked = check(&schema, batch(None, &[vec![sample(s)]])).expect("its own type");
        assert_eq!(
            checked
                .row(0)
                .and_then(|r| r.cell(0))
                .map(|v| v == sample(s)),
            Some(true)
        );
        for wrong in others(s) {
            let found = wrong.to_cell().value.cell_value_type();
            assert_eq!(
                check(&schema, batch(None, &[vec![wrong.clone()]])).err(),
                Some(cell_fault(
                    Part::Row(0),
                    0,
                    &[],
                    CellFault::WrongType {
                        expected: cell_variant(s),
                        found
                    }
                )),
                "{s:?} field holding {wrong:?}"
            );
        }
        // A list field never holds a scalar.
        let schema = compile(unbranched(vec![field("l", list(scalar(s)))]));
        assert!(check(
            &schema,
            batch(None, &[vec![OwnedValue::List(vec![sample(s)])]])
        )
        .is_ok());
        assert_eq!(
            check(&schema, batch(None, &[vec![sample(s)]])).err(),
            Some(cell_fault(
                Part::Row(0),
                0,
                &[],
                CellFault::WrongType {
                    expected: CellValue::ListCell,
                    found: cell_variant(s)
                }
            ))
        );
    }
}

#[test]
fn r_2_a_fixed_length_list_holds_exactly_its_declared_number_of_elements() {
    let schema = compile(unbranched(vec![
        field("fixed", fixed(scalar(ScalarType::U16), 3)),
        field("any", list(scalar(ScalarType::U16))),
    ]));
    let l = |n: u16| OwnedValue::List((0..n).map(OwnedValue::U16).collect());
    assert!(check(&schema, batch(None, &[vec![l(3), l(0)], vec![l(3), l(9)]])).is_ok());
    for n in [0, 2, 4] {
        assert_eq!(
            check(&schema, batch(None, &[vec![l(3), l(1)], vec![l(n), l(1)]])).err(),
            Some(cell_fault(
                Part::Row(1),
                0,
                &[],
                CellFault::ListLength {
                    expected: 3,
                    found: n as usize
                }
            )),
            "{n} elements"
        );
    }
    assert_eq!(
        schema.fields()[0].field_type(),
        &rows::FieldType::FixedList {
            element: Box::new(rows::FieldType::Scalar(rows::ScalarType::U16)),
            length: NonZeroU32::new(3).expect("nonzero"),
        }
    );
}

#[test]
fn r_2_list_elements_are_checked_recursively_against_the_element_type() {
    // A list of fixed pairs of lists of I32.
    let schema = compile(unbranched(vec![nullable(field(
        "nested",
        list(fixed(list(scalar(ScalarType::I32)), 2)),
    ))]));
    let inner = |v: &[i32]| OwnedValue::List(v.iter().copied().map(OwnedValue::I32).collect());
    let pair = |a: &[i32], b: &[i32]| OwnedValue::List(vec![inner(a), inner(b)]);
    let good = OwnedValue::List(vec![pair(&[1], &[]), pair(&[2, 3], &[4])]);
    let checked = check(
        &schema,
        batch(None, &[vec![good.clone()], vec![OwnedValue::Null]]),
    )
    .expect("conforms");
    assert_eq!(
        checked.to_owned_rows().rows,
        vec![vec![good], vec![OwnedValue::Null]]
    );

    // Outer element 0, pair element 1, leaf element 1: a path that reads differently reversed.
    let wrong_leaf = OwnedValue::List(vec![
        OwnedValue::List(vec![
            inner(&[2]),
            OwnedValue::List(vec![OwnedValue::I32(5), OwnedValue::I64(6)]),
        ]),
        pair(&[1], &[]),
    ]);
    assert_eq!(
        check(&schema, batch(None, &[vec![wrong_leaf]])).err(),
        Some(cell_fault(
            Part::Row(0),
            0,
            &[0, 1, 1],
            CellFault::WrongType {
                expected: CellValue::I32Cell,
                found: CellValue::I64Cell
            }
        ))
    );
    let short_pair = OwnedValue::List(vec![pair(&[1], &[]), OwnedValue::List(vec![inner(&[2])])]);
    assert_eq!(
        check(&schema, batch(None, &[vec![short_pair]])).err(),
        Some(cell_fault(
            Part::Row(0),
            0,
            &[1],
            CellFault::ListLength {
                expected: 2,
                found: 1
            }
        ))
    );
    let scalar_for_pair = OwnedValue::List(vec![OwnedValue::I32(1)]);
    assert_eq!(
        check(&schema, batch(None, &[vec![scalar_for_pair]])).err(),
        Some(cell_fault(
            Part::Row(0),
            0,
            &[0],
            CellFault::WrongType {
                expected: CellValue::ListCell,
                found: CellValue::I32Cell
            }
        ))
    );
}

#[test]
fn r_2_a_list_element_is_never_null_or_redacted() {
    // Nullable and sensitive say nothing about elements.
    let schema = compile(unbranched(vec![
        nullable(field("l", list(scalar(ScalarType::F64)))),
        nullable(field("ll", list(list(scalar(ScalarType::F64))))),
    ]));
    let ok = vec![
        OwnedValue::List(vec![OwnedValue::F64(1.0)]),
        OwnedValue::List(vec![OwnedValue::List(vec![])]),
    ];
    assert!(check(&schema, batch(None, std::slice::from_ref(&ok))).is_ok());
    let cases = [
        (OwnedValue::Null, CellFault::NullElement),
        (OwnedValue::Withheld, CellFault::RedactedElement),
    ];
    for (bad, fault) in cases {
        let row = vec![
            OwnedValue::List(vec![OwnedValue::F64(1.0), bad.clone()]),
            ok[1].clone(),
        ];
        assert_eq!(
            check(&schema, batch(None, &[row])).err(),
            Some(cell_fault(Part::Row(0), 0, &[1], fault.clone()))
        );
        let row = vec![
            ok[0].clone(),
            OwnedValue::List(vec![OwnedValue::List(vec![bad])]),
        ];
        assert_eq!(
            check(&schema, batch(None, &[row])).err(),
            Some(cell_fault(Part::Row(0), 1, &[0, 0], fault))
        );
    }
}

#[test]
fn r_2_a_frame_that_is_not_subscription_rows_is_refused() {
    let schema = compile(unbranched(vec![]));
    let tick = encode(ServerBodyT::DomainClockTicked(Box::new(
        DomainClockTickedT {
            domain: "d".to_owned(),
            generation: 1,
            tick_id: 1,
            ..Default::default()
        },
    )));
    assert_eq!(
        check(&schema, tick).err(),
        Some(RowViolation::NotRows {
            found: "DomainClockTicked"
        })
    );
}

#[test]
fn r_2_a_violation_names_its_rule_and_where_the_cell_is() {
    let schema = compile(unbranched(vec![
        field("a", scalar(ScalarType::U8)),
        field("b", list(scalar(ScalarType::U8))),
    ]));
    let row = vec![
        OwnedValue::U8(0),
        OwnedValue::List(vec![OwnedValue::U8(1), OwnedValue::Null]),
    ];
    let err =
        CheckedBatch::check(batch(None, &[row.clone(), row]), schema).expect_err("a null element");
    assert_eq!(err.rule(), "R-2");
    let text = err.to_string();
    assert!(text.contains("row 0, field 1, element 1"), "{text}");
    assert!(text.contains("NullCell"), "{text}");
}

#[test]
fn r_2_checking_a_batch_allocates_nothing() {
    let schema = compile(branched(
        vec![
            field("a", scalar(ScalarType::U64)),
            field("b", scalar(ScalarType::F64)),
            nullable(field("c", scalar(ScalarType::String))),
            sensitive(field("d", scalar(ScalarType::Bytes))),
            field("e", fixed(scalar(ScalarType::I32), 3)),
            field("f", list(list(scalar(ScalarType::Bool)))),
            field("g", scalar(ScalarType::Datetime)),
        ],
        vec![field("k", scalar(ScalarType::String))],
    ));
    let row = |i: u64| {
        vec![
            OwnedValue::U64(i),
            OwnedValue::F64(i as f64),
            if i.is_multiple_of(2) {
                OwnedValue::Null
            } else {
                OwnedValue::String(format!("{i}"))
            },
            OwnedValue::Withheld,
            OwnedValue::List(vec![
                OwnedValue::I32(1),
                OwnedValue::I32(2),
                OwnedValue::I32(3),
            ]),
            OwnedValue::List(vec![OwnedValue::List(vec![OwnedValue::Bool(true)])]),
            OwnedValue::Datetime(-(i as i64)),
        ]
    };
    let n = 2_000;
    let rows: Vec<_> = (0..n).map(row).collect();
    let frame = batch(Some(&[OwnedValue::String("k".into())]), &rows);
    let bad = {
        let mut rows = rows.clone();
        rows[n as usize - 1][4] = OwnedValue::List(vec![]);
        batch(Some(&[OwnedValue::String("k".into())]), &rows)
    };
    let arc = Arc::clone(&schema);

    let (checked, allocations) = allocations_during(|| CheckedBatch::check(frame, arc));
    let checked = checked.expect("conforms");
    assert_eq!(
        allocations,
        0,
        "checking {} cells allocated",
        checked.cell_count()
    );

    // Reading every value in place allocates nothing either.
    let (sum, allocations) = allocations_during(|| {
        let mut sum = 0u64;
        for r in checked.rows() {
            for v in r.iter() {
                sum += match v {
                    Value::U64(x) => x,
                    Value::List(l) => l.len() as u64,
                    Value::String(s) => s.len() as u64,
                    _ => 1,
                };
            }
        }
        sum
    });
    assert!(sum > 0);
    assert_eq!(allocations, 0, "reading in place allocated");

    // The counter works: a refused batch allocates its violation.
    let (refused, allocations) = allocations_during(|| CheckedBatch::check(bad, schema).is_err());
    assert!(refused);
    assert!(allocations >= 1, "the counting allocator counts");
}

// ---------------------------------------------------------------------------------------------
// R-3, R-4, R-5 and the language pitfalls
// ---------------------------------------------------------------------------------------------

/// Checks `values` as one row of a schema with one (non-null, non-sensitive) field per value,
/// typed as the value is, and returns the checked batch.
fn round_trip(types: &[FieldTypeT], values: &[OwnedValue]) -> CheckedBatch {
    let schema = compile(unbranched(
        types
            .iter()
            .enumerate()
            .map(|(i, t)| field(&format!("f{i}"), t.clone()))
            .collect(),
    ));
    check(&schema, batch(None, &[values.to_vec()])).expect("conforms")
}

#[test]
fn r_3_integers_keep_their_width_and_signedness_at_both_extremes() {
    use OwnedValue as O;
    let values = [
        O::U8(0),
        O::U8(u8::MAX),
        O::I8(i8::MIN),
        O::I8(i8::MAX),
        O::U16(0),
        O::U16(u16::MAX),
        O::I16(i16::MIN),
        O::I16(i16::MAX),
        O::U32(0),
        O::U32(u32::MAX),
        O::I32(i32::MIN),
        O::I32(i32::MAX),
        O::U64(0),
        O::U64(u64::MAX),
        O::U64((1 << 53) - 1),
        O::U64((1 << 53) + 1),
        O::I64(i64::MIN),
        O::I64(i64::MAX),
        O::I64(-(1 << 53) - 1),
        O::I64((1 << 53) + 1),
    ];
    let types: Vec<_> = values
        .iter()
        .map(|v| {
            let s = match v {
                O::U8(_) => ScalarType::U8,
                O::I8(_) => ScalarType::I8,
                O::U16(_) => ScalarType::U16,
                O::I16(_) => ScalarType::I16,
                O::U32(_) => ScalarType::U32,
                O::I32(_) => ScalarType::I32,
                O::U64(_) => ScalarType::U64,
                _ => ScalarType::I64,
            };
            scalar(s)
        })
        .collect();
    let checked = round_trip(&types, &values);
    let row = checked.row(0).expect("a row");
    assert_eq!(row.cell(1), Some(Value::U8(255)));
    assert_eq!(row.cell(2), Some(Value::I8(-128)));
    assert_eq!(row.cell(13), Some(Value::U64(u64::MAX)));
    assert_eq!(row.cell(15), Some(Value::U64(9_007_199_254_740_993)));
    assert_eq!(row.cell(16), Some(Value::I64(i64::MIN)));
    assert_ne!(
        row.cell(1),
        Some(Value::U16(255)),
        "the width is part of the value"
    );
    assert_eq!(checked.to_owned_rows().rows, vec![values.to_vec()]);
    for (v, w) in row.iter().zip(&values) {
        assert!(v == *w, "{v:?} read back as written {w:?}");
    }
}

#[test]
fn r_3_datetime_is_signed_nanoseconds_since_the_epoch_at_the_extremes() {
    let values: Vec<_> = [i64::MIN, -1, 0, 1, i64::MAX]
        .into_iter()
        .map(OwnedValue::Datetime)
        .collect();
    let types = vec![scalar(ScalarType::Datetime); values.len()];
    let checked = round_trip(&types, &values);
    let read: Vec<_> = checked.row(0).expect("a row").iter().collect();
    assert_eq!(
        read,
        vec![
            Value::Datetime(i64::MIN),
            Value::Datetime(-1),
            Value::Datetime(0),
            Value::Datetime(1),
            Value::Datetime(i64::MAX)
        ]
    );
    assert_ne!(read[2], Value::I64(0), "a DATETIME is not an I64");
}

#[test]
fn r_3_text_keeps_nul_and_bytes_stay_raw_octets_read_in_place() {
    let values = [
        OwnedValue::String("a\0b".into()),
        OwnedValue::String("ü€😀".into()),
        OwnedValue::String(String::new()),
        OwnedValue::Bytes(vec![0xff, 0xfe, 0x00, 0xc3]),
        OwnedValue::Bytes(vec![]),
    ];
    let types = [
        scalar(ScalarType::String),
        scalar(ScalarType::String),
        scalar(ScalarType::String),
        scalar(ScalarType::Bytes),
        scalar(ScalarType::Bytes),
    ];
    let checked = round_trip(&types, &values);
    let row = checked.row(0).expect("a row");
    assert_eq!(row.cell(0), Some(Value::String("a\0b")));
    assert_eq!(row.cell(1), Some(Value::String("ü€😀")));
    assert_eq!(row.cell(2), Some(Value::String("")));
    assert_eq!(row.cell(3), Some(Value::Bytes(&[0xff, 0xfe, 0x00, 0xc3])));
    assert_eq!(row.cell(4), Some(Value::Bytes(&[])));
    assert_ne!(
        row.cell(2),
        Some(Value::Bytes(&[])),
        "empty text is not empty bytes"
    );
    // Zero-copy: the text and bytes lie inside the frame's own buffer.
    let frame = checked.frame().bytes().as_ptr_range();
    for v in row.iter() {
        let ptr = match v {
            Value::String(s) if !s.is_empty() => s.as_ptr(),
            Value::Bytes(b) if !b.is_empty() => b.as_ptr(),
            _ => continue,
        };
        assert!(frame.contains(&ptr), "{v:?} was copied");
    }
    assert_eq!(checked.to_owned_rows().rows, vec![values.to_vec()]);
}

#[test]
fn r_4_null_withheld_and_present_values_stay_distinct() {
    let schema = compile(branched(
        vec![
            nullable(field("n", scalar(ScalarType::U8))),
            sensitive(field("s", scalar(ScalarType::U8))),
            nullable(field("p", scalar(ScalarType::U8))),
        ],
        vec![
            nullable(field("kn", scalar(ScalarType::String))),
            sensitive(field("ks", scalar(ScalarType::String))),
            nullable(sensitive(field("kns", scalar(ScalarType::String)))),
        ],
    ));
    let key = [OwnedValue::Null, OwnedValue::Withheld, OwnedValue::Withheld];
    let row = vec![OwnedValue::Null, OwnedValue::Withheld, OwnedValue::U8(0)];
    let checked = check(&schema, batch(Some(&key), std::slice::from_ref(&row))).expect("conforms");
    let values: Vec<_> = checked.row(0).expect("a row").iter().collect();
    assert_eq!(values, vec![Value::Null, Value::Withheld, Value::U8(0)]);
    assert!(values[0].is_null() && !values[0].is_withheld());
    assert!(values[1].is_withheld() && !values[1].is_null());
    assert_ne!(values[0], values[1]);
    assert_ne!(values[0], values[2]);
    assert_ne!(values[1], values[2]);
    let key_values: Vec<_> = checked.branch_key().expect("a key").iter().collect();
    assert_eq!(
        key_values,
        vec![Value::Null, Value::Withheld, Value::Withheld]
    );
    let owned = checked.to_owned_rows();
    assert_eq!(owned.rows, vec![row]);
    assert_eq!(owned.branch_key, Some(key.to_vec()));
    assert_ne!(OwnedValue::Null, OwnedValue::Withheld);
}

#[test]
fn r_5_float_bits_survive_exactly() {
    let f32s = [
        -0.0f32,
        0.0,
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0xffa0_0001),
        f32::from_bits(0x7f80_0001),
        f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let f64s = [
        -0.0f64,
        0.0,
        f64::from_bits(0x7ff8_0000_dead_beef),
        f64::from_bits(0xfff0_0000_0000_0001),
        f64::from_bits(1),
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let values: Vec<_> = f32s
        .iter()
        .map(|f| OwnedValue::F32(*f))
        .chain(f64s.iter().map(|f| OwnedValue::F64(*f)))
        .collect();
    let types: Vec<_> = f32s
        .iter()
        .map(|_| scalar(ScalarType::F32))
        .chain(f64s.iter().map(|_| scalar(ScalarType::F64)))
        .collect();
    let checked = round_trip(&types, &values);
    let row = checked.row(0).expect("a row");
    for (i, f) in f32s.iter().enumerate() {
        let Some(Value::F32(read)) = row.cell(i) else {
            panic!("F32 at {i}")
        };
        assert_eq!(read.to_bits(), f.to_bits(), "F32 {i}");
    }
    for (i, f) in f64s.iter().enumerate() {
        let Some(Value::F64(read)) = row.cell(f32s.len() + i) else {
            panic!("F64 at {i}")
        };
        assert_eq!(read.to_bits(), f.to_bits(), "F64 {i}");
    }
    let owned = checked.to_owned_rows();
    for (o, v) in owned.rows[0].iter().zip(&values) {
        let bits = |x: &OwnedValue| match x {
            OwnedValue::F32(f) => u64::from(f.to_bits()),
            OwnedValue::F64(f) => f.to_bits(),
            _ => panic!("a float"),
        };
        assert_eq!(bits(o), bits(v));
    }
    // Equality is by bits: -0.0 differs from 0.0, a NaN equals itself.
    assert_ne!(row.cell(0), row.cell(1));
    assert_eq!(row.cell(2), Some(Value::F32(f32::from_bits(0x7fc0_1234))));
    assert_ne!(row.cell(2), Some(Value::F32(f32::NAN)));
}

#[test]
fn r_3_language_pitfall_values_read_back_exactly() {
    use OwnedValue as O;
    let schema = compile(branched(
        vec![
            field("u64", scalar(ScalarType::U64)),
            field("i64", scalar(ScalarType::I64)),
            field("f32", scalar(ScalarType::F32)),
            field("f64", scalar(ScalarType::F64)),
            field("text", scalar(ScalarType::String)),
            field("bytes", scalar(ScalarType::Bytes)),
            field("when", scalar(ScalarType::Datetime)),
            sensitive(field("secret", scalar(ScalarType::String))),
            nullable(field("absent", scalar(ScalarType::I32))),
            field("zero", scalar(ScalarType::I32)),
            field("lists", list(fixed(scalar(ScalarType::F64), 2))),
        ],
        vec![
            nullable(field("k_null", scalar(ScalarType::U16))),
            sensitive(field("k_secret", scalar(ScalarType::Bytes))),
        ],
    ));
    let rows = vec![
        vec![
            O::U64(u64::MAX),
            O::I64(i64::MIN),
            O::F32(f32::from_bits(1)),
            O::F64(f64::from_bits(0x7ff4_0000_0000_0042)),
            O::String("nul\0inside, ü".into()),
            O::Bytes(vec![0x80, 0xff]),
            O::Datetime(i64::MAX),
            O::Withheld,
            O::Null,
            O::I32(0),
            O::List(vec![
                O::List(vec![O::F64(-0.0), O::F64(f64::INFINITY)]),
                O::List(vec![O::F64(f64::MAX), O::F64(f64::from_bits(1))]),
            ]),
        ],
        vec![
            O::U64(0),
            O::I64(i64::MAX),
            O::F32(-0.0),
            O::F64(f64::NEG_INFINITY),
            O::String(String::new()),
            O::Bytes(vec![]),
            O::Datetime(i64::MIN),
            O::Withheld,
            O::I32(i32::MIN),
            O::I32(i32::MAX),
            O::List(vec![]),
        ],
    ];
    let key = vec![O::Null, O::Withheld];
    let checked = check(&schema, batch(Some(&key), &rows)).expect("conforms");
    let owned = checked.to_owned_rows();
    assert_eq!(owned.rows, rows);
    assert_eq!(owned.branch_key, Some(key));
    assert!(Arc::ptr_eq(&owned.schema, checked.schema_arc()));
    drop(checked);
    // Owned values outlive the frame; in place, every value equals what was written.
    assert_eq!(owned.rows[0][8], O::Null);
    let checked = check(
        &schema,
        batch(Some(&owned.branch_key.clone().unwrap_or_default()), &rows),
    )
    .expect("conforms");
    for (r, written) in checked.rows().zip(&rows) {
        assert_eq!(r.len(), written.len());
        for (v, w) in r.iter().zip(written) {
            assert!(v == *w, "{v:?} != {w:?}");
        }
    }
    let Some(Value::List(outer)) = checked.row(0).and_then(|r| r.get("lists")) else {
        panic!("a list")
    };
    let Some(Value::List(first)) = outer.get(0) else {
        panic!("a nested list")
    };
    assert_eq!(first.get(0).map(|v| v == Value::F64(-0.0)), Some(true));
    assert_eq!(first.get(2), None);
    assert_eq!(outer.get(2), None);
    assert_eq!(checked.row(2).map(|r| r.len()), None);
}

// ---------------------------------------------------------------------------------------------
// Generated schemas and batches
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Ty {
    Scalar(ScalarType),
    Fixed(Box<Ty>, u32),
    List(Box<Ty>),
}

impl Ty {
    fn wire(&self) -> FieldTypeT {
        match self {
            Ty::Scalar(s) => scalar(*s),
            Ty::Fixed(e, n) => fixed(e.wire(), *n),
            Ty::List(e) => list(e.wire()),
        }
    }

    fn is_list(&self) -> bool {
        !matches!(self, Ty::Scalar(_))
    }
}

#[derive(Debug, Clone)]
struct Spec {
    ty: Ty,
    nullable: bool,
    sensitive: bool,
}

fn gen_ty(rng: &mut Rng, depth: u32) -> Ty {
    match rng.below(if depth >= 3 { 1 } else { 4 }) {
        0 | 1 if depth >= 3 => Ty::Scalar(SCALARS[rng.below(14) as usize]),
        0 => Ty::Fixed(Box::new(gen_ty(rng, depth + 1)), 1 + rng.below(3) as u32),
        1 => Ty::List(Box::new(gen_ty(rng, depth + 1))),
        _ => Ty::Scalar(SCALARS[rng.below(14) as usize]),
    }
}

fn gen_spec(rng: &mut Rng) -> Spec {
    Spec {
        ty: gen_ty(rng, 0),
        nullable: rng.chance(0.3),
        sensitive: rng.chance(0.15),
    }
}

fn gen_scalar(rng: &mut Rng, s: ScalarType) -> OwnedValue {
    let bits = rng.next_u64();
    let pick = rng.below(4);
    let edge = |min: u64, max: u64| match pick {
        0 => min,
        1 => max,
        _ => bits,
    };
    match s {
        ScalarType::U8 => OwnedValue::U8(edge(0, u64::MAX) as u8),
        ScalarType::I8 => OwnedValue::I8(edge(0x80, 0x7f) as i8),
        ScalarType::U16 => OwnedValue::U16(edge(0, u64::MAX) as u16),
        ScalarType::I16 => OwnedValue::I16(edge(0x8000, 0x7fff) as i16),
        ScalarType::U32 => OwnedValue::U32(edge(0, u64::MAX) as u32),
        ScalarType::I32 => OwnedValue::I32(edge(0x8000_0000, 0x7fff_ffff) as i32),
        ScalarType::U64 => OwnedValue::U64(edge(0, u64::MAX)),
        ScalarType::I64 => OwnedValue::I64(edge(1 << 63, (1 << 63) - 1) as i64),
        // Any bits at all: NaN payloads, signs of zero, subnormals, infinities.
        ScalarType::F32 => OwnedValue::F32(f32::from_bits(bits as u32)),
        ScalarType::F64 => OwnedValue::F64(f64::from_bits(bits)),
        ScalarType::Bool => OwnedValue::Bool(bits & 1 == 1),
        ScalarType::Datetime => OwnedValue::Datetime(edge(1 << 63, (1 << 63) - 1) as i64),
        ScalarType::String => {
            const PIECES: [&str; 6] = ["a", "\0", "ü", "€", "😀", " "];
            let n = rng.below(6);
            OwnedValue::String((0..n).map(|_| PIECES[rng.below(6) as usize]).collect())
        }
        ScalarType::Bytes => {
            let mut b = vec![0u8; rng.below(6) as usize];
            rng.fill(&mut b);
            OwnedValue::Bytes(b)
        }
        other => panic!("undeclared scalar {other:?}"),
    }
}

/// A present value of type `ty` (never null or withheld).
fn gen_value(rng: &mut Rng, ty: &Ty) -> OwnedValue {
    match ty {
        Ty::Scalar(s) => gen_scalar(rng, *s),
        Ty::Fixed(e, n) => OwnedValue::List((0..*n).map(|_| gen_value(rng, e)).collect()),
        Ty::List(e) => {
            let n = rng.below(4);
            OwnedValue::List((0..n).map(|_| gen_value(rng, e)).collect())
        }
    }
}

fn gen_cell(rng: &mut Rng, spec: &Spec) -> OwnedValue {
    if spec.sensitive {
        OwnedValue::Withheld
    } else if spec.nullable && rng.chance(0.3) {
        OwnedValue::Null
    } else {
        gen_value(rng, &spec.ty)
    }
}

/// A present value whose cell variant differs from every cell `ty` allows.
fn wrong_value(rng: &mut Rng, ty: &Ty) -> OwnedValue {
    match ty {
        Ty::Scalar(s) => {
            if rng.chance(0.2) {
                return OwnedValue::List(vec![]);
            }
            let others: Vec<_> = SCALARS.into_iter().filter(|t| t != s).collect();
            let pick = others[rng.below(others.len() as u64) as usize];
            gen_scalar(rng, pick)
        }
        Ty::Fixed(..) | Ty::List(_) => {
            let pick = SCALARS[rng.below(14) as usize];
            gen_scalar(rng, pick)
        }
    }
}

/// Breaks a present value of list type `ty` somewhere inside it: its length, or one element
/// (an empty variable list is given a null element).
fn break_inside(rng: &mut Rng, ty: &Ty, value: &mut OwnedValue) {
    let OwnedValue::List(elements) = value else {
        unreachable!("a list value")
    };
    let (element_ty, fixed) = match ty {
        Ty::Fixed(e, n) => (&**e, Some(*n)),
        Ty::List(e) => (&**e, None),
        Ty::Scalar(_) => unreachable!("a list type"),
    };
    let choice = rng.below(4);
    if fixed.is_some() && choice == 0 {
        if rng.chance(0.5) {
            elements.pop();
        } else {
            elements.push(gen_value(rng, element_ty));
        }
        return;
    }
    if elements.is_empty() {
        elements.push(OwnedValue::Null);
        if let Some(n) = fixed {
            // Keep the length right so the element is what is wrong.
            while elements.len() < n as usize {
                elements.push(gen_value(rng, element_ty));
            }
        }
        return;
    }
    let i = rng.below(elements.len() as u64) as usize;
    elements[i] = match choice {
        1 => OwnedValue::Null,
        2 => OwnedValue::Withheld,
        _ if element_ty.is_list() && rng.chance(0.5) => {
            let mut inner = elements[i].clone();
            break_inside(rng, element_ty, &mut inner);
            inner
        }
        _ => wrong_value(rng, element_ty),
    };
}

/// Breaks one cell of a row or key in place so that it no longer conforms to `spec`.
fn break_cell(rng: &mut Rng, spec: &Spec, cell: &mut OwnedValue) {
    if spec.sensitive {
        *cell = match rng.below(3) {
            0 => OwnedValue::Null,
            1 => gen_value(rng, &spec.ty),
            _ => wrong_value(rng, &spec.ty),
        };
        return;
    }
    let present = !matches!(cell, OwnedValue::Null);
    match rng.below(4) {
        0 => *cell = OwnedValue::Withheld,
        1 if !spec.nullable => *cell = OwnedValue::Null,
        2 if present && spec.ty.is_list() => break_inside(rng, &spec.ty, cell),
        _ => *cell = wrong_value(rng, &spec.ty),
    }
}

struct Generated {
    schema: RowSchemaT,
    fields: Vec<Spec>,
    key_fields: Option<Vec<Spec>>,
    key: Option<Vec<OwnedValue>>,
    rows: Vec<Vec<OwnedValue>>,
}

fn generate(seed: u64) -> Generated {
    let mut rng = Rng::new(seed);
    let fields: Vec<Spec> = (0..rng.below(7)).map(|_| gen_spec(&mut rng)).collect();
    let key_fields: Option<Vec<Spec>> = rng
        .chance(0.4)
        .then(|| (0..1 + rng.below(3)).map(|_| gen_spec(&mut rng)).collect());
    let wire = |specs: &[Spec]| {
        specs
            .iter()
            .enumerate()
            .map(|(i, s)| RowFieldT {
                name: format!("f{i}"),
                field_type: Box::new(s.ty.wire()),
                nullable: s.nullable,
                sensitive: s.sensitive,
            })
            .collect::<Vec<_>>()
    };
    let schema = RowSchemaT {
        fields: wire(&fields),
        branch: key_fields.as_ref().map(|k| {
            Box::new(RowBranchT {
                branch: "b".to_owned(),
                fields: wire(k),
            })
        }),
    };
    let key = key_fields
        .as_ref()
        .map(|k| k.iter().map(|s| gen_cell(&mut rng, s)).collect());
    let rows = (0..1 + rng.below(5))
        .map(|_| fields.iter().map(|s| gen_cell(&mut rng, s)).collect())
        .collect();
    Generated {
        schema,
        fields,
        key_fields,
        key,
        rows,
    }
}

/// Breaks the generated batch in exactly one place.
fn mutate(g: &mut Generated, seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed);
    let r = rng.below(g.rows.len() as u64) as usize;
    match rng.below(5) {
        0 if !g.fields.is_empty() => {
            let f = rng.below(g.fields.len() as u64) as usize;
            g.rows[r].remove(f);
        }
        1 => {
            let f = rng.below(g.fields.len() as u64 + 1) as usize;
            g.rows[r].insert(f, OwnedValue::Null);
        }
        2 | 3 if !g.fields.is_empty() => {
            let f = rng.below(g.fields.len() as u64) as usize;
            break_cell(&mut rng, &g.fields[f], &mut g.rows[r][f]);
        }
        4 if g.key_fields.is_some() => {
            let specs = g.key_fields.as_ref().expect("branched");
            let key = g.key.as_mut().expect("a key");
            let f = rng.below(specs.len() as u64) as usize;
            break_cell(&mut rng, &specs[f], &mut key[f]);
        }
        _ => {
            // Give an unbranched batch a key, or take a branched batch's key away.
            g.key = match g.key.take() {
                Some(_) => None,
                None => Some(vec![OwnedValue::U8(0)]),
            };
        }
    }
}

proptest! {
    #[test]
    fn r_2_generated_batches_conform_or_are_refused_without_exposing_values(
        seed in any::<u64>(), broken in any::<bool>()
    ) {
        let mut g = generate(seed);
        let schema = compile(g.schema.clone());
        if broken {
            mutate(&mut g, seed);
        }
        let frame = batch(g.key.as_deref(), &g.rows);
        match CheckedBatch::check(frame, Arc::clone(&schema)) {
            Ok(checked) => {
                prop_assert!(!broken, "a broken batch was accepted: {:?}", g.rows);
                let owned = checked.to_owned_rows();
                prop_assert_eq!(&owned.rows, &g.rows);
                prop_assert_eq!(&owned.branch_key, &g.key);
                for (r, written) in checked.rows().zip(&g.rows) {
                    prop_assert_eq!(r.len(), written.len());
                    for (v, w) in r.iter().zip(written) {
                        prop_assert!(v == *w, "{:?} != {:?}", v, w);
                    }
                }
            }
            Err(e) => {
                prop_assert!(broken, "a conforming batch was refused: {}", e);
                prop_assert_eq!(e.rule(), "R-2");
                prop_assert!(matches!(e, ProtocolViolation::Rows(_)));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// R-2 with rows found alike: when the frame check notes that every row is like the first, only
// the first is walked; anything that makes a later row differ must bring the full walk back.
// ---------------------------------------------------------------------------------------------

#[test]
fn r_2_a_later_row_unlike_the_first_is_still_checked() {
    let schema = compile(unbranched(vec![
        field("a", scalar(ScalarType::U8)),
        field("b", scalar(ScalarType::U32)),
    ]));
    let good = || vec![OwnedValue::U8(1), OwnedValue::U32(2)];
    let rows = |last: Vec<OwnedValue>| {
        let mut r = vec![good(); 5];
        r.push(last);
        batch(None, &r)
    };
    assert!(check(&schema, rows(good())).is_ok());
    assert_eq!(
        check(&schema, rows(vec![OwnedValue::U8(1), OwnedValue::Null])).err(),
        Some(cell_fault(Part::Row(5), 1, &[], CellFault::Null))
    );
    assert_eq!(
        check(&schema, rows(vec![OwnedValue::U32(1), OwnedValue::U32(2)])).err(),
        Some(cell_fault(
            Part::Row(5),
            0,
            &[],
            CellFault::WrongType {
                expected: CellValue::U8Cell,
                found: CellValue::U32Cell
            }
        ))
    );
    assert_eq!(
        check(&schema, rows(vec![OwnedValue::U8(1)])).err(),
        Some(RowViolation::CellCount {
            part: Part::Row(5),
            expected: 2,
            found: 1
        })
    );
    let mut long = good();
    long.push(OwnedValue::U8(3));
    assert_eq!(
        check(&schema, rows(long)).err(),
        Some(RowViolation::CellCount {
            part: Part::Row(5),
            expected: 2,
            found: 3
        })
    );
}

#[test]
fn r_2_rows_alike_that_all_break_the_schema_fail_at_the_first_row() {
    let schema = compile(branched(
        vec![field("a", scalar(ScalarType::U8))],
        vec![field("k", scalar(ScalarType::String))],
    ));
    let key = [OwnedValue::String("eu".to_owned())];
    let same = vec![vec![OwnedValue::I8(1)]; 4];
    assert_eq!(
        check(&schema, batch(Some(&key), &same)).err(),
        Some(cell_fault(
            Part::Row(0),
            0,
            &[],
            CellFault::WrongType {
                expected: CellValue::U8Cell,
                found: CellValue::I8Cell
            }
        ))
    );
    // The branch key is checked as before, ahead of the rows.
    let bad_key = [OwnedValue::U8(1)];
    let good = vec![vec![OwnedValue::U8(1)]; 4];
    assert!(matches!(
        check(&schema, batch(Some(&bad_key), &good)).err(),
        Some(RowViolation::Cell {
            at: CellAt {
                part: Part::BranchKey,
                ..
            },
            ..
        })
    ));
    assert!(check(&schema, batch(Some(&key), &good)).is_ok());
    // The same frame checked again (a clone of the checked frame) gets the same answer.
    let frame = batch(Some(&key), &same);
    assert_eq!(
        check(&schema, frame.clone()).err(),
        check(&schema, frame).err()
    );
}

#[test]
fn r_2_rows_whose_lists_look_alike_are_each_checked() {
    let schema = compile(unbranched(vec![field(
        "fixed",
        fixed(scalar(ScalarType::U16), 2),
    )]));
    let l = |n: u16| OwnedValue::List((0..n).map(OwnedValue::U16).collect());
    assert!(check(&schema, batch(None, &[vec![l(2)], vec![l(2)], vec![l(2)]])).is_ok());
    assert_eq!(
        check(&schema, batch(None, &[vec![l(2)], vec![l(2)], vec![l(3)]])).err(),
        Some(cell_fault(
            Part::Row(2),
            0,
            &[],
            CellFault::ListLength {
                expected: 2,
                found: 3
            }
        ))
    );
    let strange = OwnedValue::List(vec![OwnedValue::U16(1), OwnedValue::U8(2)]);
    assert_eq!(
        check(&schema, batch(None, &[vec![l(2)], vec![strange]])).err(),
        Some(cell_fault(
            Part::Row(1),
            0,
            &[1],
            CellFault::WrongType {
                expected: CellValue::U16Cell,
                found: CellValue::U8Cell
            }
        ))
    );
}
