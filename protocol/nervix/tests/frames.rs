//! Frame rules F-2 to F-6, F-8 and F-9 on the checked reader and writer.

use bytes::Bytes;
use flatbuffers::{FlatBufferBuilder, InvalidFlatbuffer};
use nervix_protocol::encode::{EncodeError, Encoder};
use nervix_protocol::frame::*;
use nervix_protocol::limits::{
    verifier_options, FRAME_LIMIT, MAX_STRING_BYTES, MAX_VECTOR_ENTRIES,
};
use nervix_protocol::schema::*;
use nervix_protocol::violation::{Fault, ProtocolViolation, Site};

fn command(reference: &str, position: Option<u64>) -> ClientMessageT {
    ClientMessageT {
        request_id: 1,
        request: ClientRequestT::CommandRequest(Box::new(CommandRequestT {
            query: "SHOW DOMAINS;".into(),
            domain: Some("tenant".into()),
            execution_reference: reference.into(),
            expected_transaction_position: position,
            expected_preview: None,
        })),
    }
}

fn reply(request_id: u64, body: ReplyBodyT) -> ServerMessageT {
    ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT { request_id, body })),
    }
}

fn cancelled(request_id: u64) -> ServerMessageT {
    reply(
        request_id,
        ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
            stage: Some(CancellationStage::BeforeAdmission),
        })),
    )
}

/// Packs without the encoder's checks, to build frames a careful writer never sends.
fn pack_unchecked(msg: &ServerMessageT) -> Bytes {
    let mut fbb = FlatBufferBuilder::new();
    let root = msg.pack(&mut fbb);
    fbb.finish(root, Some("NXSM"));
    Bytes::copy_from_slice(fbb.finished_data())
}

fn field_fault(v: &ProtocolViolation) -> (Site, Fault) {
    match v {
        ProtocolViolation::Field { site, fault } => (*site, fault.clone()),
        other => panic!("expected a member violation, got {other:?}"),
    }
}

#[test]
fn f_2_one_finished_frame_with_identifier_and_no_size_prefix() {
    let bytes = Encoder::new()
        .encode::<ClientMessageRoot>(&command("r-1", None))
        .unwrap();
    assert_eq!(&bytes[4..8], b"NXCM");
    let root_offset = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    assert!(
        root_offset >= 8 && root_offset < bytes.len(),
        "the first word is the root offset"
    );
    // Read as a plain (not size-prefixed) buffer, the frame is complete on its own.
    let view = flatbuffers::root::<ClientMessage>(&bytes).unwrap();
    assert_eq!(view.request_id(), 1);
    assert!(flatbuffers::size_prefixed_root::<ClientMessage>(&bytes).is_err());
    // Each encode is one frame: two messages are two independent buffers.
    let mut enc = Encoder::new();
    let a = enc
        .encode::<ClientMessageRoot>(&command("r-1", None))
        .unwrap();
    let b = enc
        .encode::<ClientMessageRoot>(&command("r-2", None))
        .unwrap();
    assert_ne!(a, b);
    assert!(ClientFrame::check(a).is_ok() && ClientFrame::check(b).is_ok());
}

#[test]
fn f_2_every_client_root_carries_its_identifier() {
    let upload = UploadMessageT {
        part: UploadPartT::UploadChunk(Box::new(UploadChunkT {
            bytes: vec![1, 2, 3],
        })),
    };
    let download = BackupDownloadRequestT {
        execution_reference: "b-1".into(),
    };
    let restore = RestoreMessageT {
        part: RestorePartT::RestoreChunk(Box::new(RestoreChunkT { bytes: vec![9] })),
    };
    let mut enc = Encoder::new();
    assert_eq!(
        &enc.encode::<UploadMessageRoot>(&upload).unwrap()[4..8],
        b"NXUM"
    );
    assert_eq!(
        &enc.encode::<BackupDownloadRequestRoot>(&download).unwrap()[4..8],
        b"NXBQ"
    );
    assert_eq!(
        &enc.encode::<RestoreMessageRoot>(&restore).unwrap()[4..8],
        b"NXRM"
    );
}

#[test]
fn f_3_oversized_frame_is_refused_before_anything_is_read() {
    // Garbage above the limit: the size check must answer, not the verifier.
    let big = Bytes::from(vec![0xffu8; FRAME_LIMIT + 1]);
    let v = ServerFrame::check(big).unwrap_err();
    assert!(
        matches!(v, ProtocolViolation::FrameTooLarge { len, limit, .. } if len == FRAME_LIMIT + 1 && limit == FRAME_LIMIT)
    );
    assert_eq!(v.rule(), "F-3");
}

#[test]
fn f_3_frame_shorter_than_eight_bytes_is_refused() {
    for len in 0..8 {
        let v = ServerFrame::check(Bytes::from(vec![0u8; len])).unwrap_err();
        assert_eq!(
            v,
            ProtocolViolation::FrameTooShort {
                root: "ServerMessage",
                len
            }
        );
    }
}

#[test]
fn f_3_wrong_identifier_is_refused() {
    let client = Encoder::new()
        .encode::<ClientMessageRoot>(&command("r", None))
        .unwrap();
    let v = ServerFrame::check(client.clone()).unwrap_err();
    assert_eq!(
        v,
        ProtocolViolation::WrongIdentifier {
            root: "ServerMessage",
            expected: *b"NXSM",
            found: *b"NXCM"
        }
    );
    // A server frame is not an upload reply either, though both come from the server.
    let server = Encoder::new()
        .encode::<ServerMessageRoot>(&cancelled(3))
        .unwrap();
    assert!(matches!(
        UploadReplyFrame::check(server).unwrap_err(),
        ProtocolViolation::WrongIdentifier { expected, .. } if expected == *b"NXUR"
    ));
}

#[test]
fn f_3_verifier_uses_the_manuals_limits() {
    let o = verifier_options(1000);
    assert_eq!(
        (o.max_depth, o.max_tables, o.max_apparent_size),
        (64, 250, 8000)
    );
    assert!(!o.ignore_missing_null_terminator);
}

fn nested_field_type(depth: usize) -> FieldTypeT {
    let mut t = FieldTypeT {
        shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
            scalar: Some(ScalarType::U8),
        })),
    };
    for _ in 0..depth {
        t = FieldTypeT {
            shape: FieldTypeShapeT::FixedListFieldType(Box::new(FixedListFieldTypeT {
                element: Box::new(t),
                length: 2,
            })),
        };
    }
    t
}

fn opened_with_field(field_type: FieldTypeT) -> ServerMessageT {
    reply(
        5,
        ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: Box::new(SubscriptionHandleT {
                    name: "s".into(),
                    generation: 1,
                }),
                domain: "d".into(),
                relay: "r".into(),
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::new(RowSchemaT {
                    fields: vec![RowFieldT {
                        name: "deep".into(),
                        field_type: Box::new(field_type),
                        nullable: false,
                        sensitive: false,
                    }],
                    branch: None,
                }),
            })),
            message: String::new(),
            diagnostics: vec![],
        })),
    )
}

#[test]
fn f_3_nesting_deeper_than_64_is_refused() {
    let shallow = pack_unchecked(&opened_with_field(nested_field_type(20)));
    assert!(ServerFrame::check(shallow).is_ok());
    let deep = pack_unchecked(&opened_with_field(nested_field_type(40)));
    let v = ServerFrame::check(deep).unwrap_err();
    assert!(
        matches!(
            v,
            ProtocolViolation::Malformed {
                error: InvalidFlatbuffer::DepthLimitReached,
                ..
            }
        ),
        "{v:?}"
    );
}

/// A RowBatch whose rows vector points `copies` times at one shared row of `cells` cells.
fn shared_rows(copies: usize, cells: usize, text: &str) -> Bytes {
    let mut fbb = FlatBufferBuilder::new();
    let s = fbb.create_string(text);
    let string_cell = StringCell::create(&mut fbb, &StringCellArgs { value: Some(s) });
    let cell = Cell::create(
        &mut fbb,
        &CellArgs {
            value_type: CellValue::StringCell,
            value: Some(string_cell.as_union_value()),
        },
    );
    let cell_vec = fbb.create_vector(&vec![cell; cells]);
    let row = Row::create(
        &mut fbb,
        &RowArgs {
            cells: Some(cell_vec),
        },
    );
    let rows = fbb.create_vector(&vec![row; copies]);
    let batch = RowBatch::create(
        &mut fbb,
        &RowBatchArgs {
            branch_key: None,
            rows: Some(rows),
        },
    );
    let name = fbb.create_string("s");
    let handle = SubscriptionHandle::create(
        &mut fbb,
        &SubscriptionHandleArgs {
            name: Some(name),
            generation: 1,
        },
    );
    let body = SubscriptionRows::create(
        &mut fbb,
        &SubscriptionRowsArgs {
            subscription: Some(handle),
            batch: Some(batch),
        },
    );
    let msg = ServerMessage::create(
        &mut fbb,
        &ServerMessageArgs {
            body_type: ServerBody::SubscriptionRows,
            body: Some(body.as_union_value()),
        },
    );
    fbb.finish(msg, Some("NXSM"));
    Bytes::copy_from_slice(fbb.finished_data())
}

#[test]
fn f_3_apparent_size_above_eight_times_the_frame_is_refused() {
    assert!(ServerFrame::check(shared_rows(4, 1, &"x".repeat(400))).is_ok());
    let v = ServerFrame::check(shared_rows(64, 1, &"x".repeat(400))).unwrap_err();
    assert!(
        matches!(
            v,
            ProtocolViolation::Malformed {
                error: InvalidFlatbuffer::ApparentSizeTooLarge,
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn f_3_more_tables_than_a_quarter_of_the_frame_length_is_refused() {
    assert!(ServerFrame::check(shared_rows(2, 2, "")).is_ok());
    let v = ServerFrame::check(shared_rows(400, 40, "")).unwrap_err();
    assert!(
        matches!(
            v,
            ProtocolViolation::Malformed {
                error: InvalidFlatbuffer::TooManyTables,
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn f_4_zero_request_id_in_a_reply_is_a_violation() {
    let v = ServerFrame::check(pack_unchecked(&cancelled(0))).unwrap_err();
    assert_eq!(
        field_fault(&v),
        (Site::new("Reply", "request_id"), Fault::Zero)
    );
    assert_eq!(v.rule(), "F-4");
}

/// A ServerMessage with body discriminant `tag`, and a body value only when `with_value`.
fn raw_body(tag: u8, with_value: bool) -> Bytes {
    raw_notice(tag, with_value, true)
}

/// Like [`raw_body`], with a ServerNotice body whose required message may be left out.
fn raw_notice(tag: u8, with_value: bool, with_message: bool) -> Bytes {
    let mut fbb = FlatBufferBuilder::new();
    let notice = {
        let m = fbb.create_string("hello");
        let start = fbb.start_table();
        if with_message {
            fbb.push_slot_always(ServerNotice::VT_MESSAGE, m);
        }
        fbb.push_slot_always::<u8>(ServerNotice::VT_LEVEL, NoticeLevel::Info.0);
        fbb.end_table(start)
    };
    let start = fbb.start_table();
    if with_value {
        fbb.push_slot_always(ServerMessage::VT_BODY, notice);
    }
    fbb.push_slot_always::<u8>(ServerMessage::VT_BODY_TYPE, tag);
    let root = fbb.end_table(start);
    fbb.finish(root, Some("NXSM"));
    Bytes::copy_from_slice(fbb.finished_data())
}

#[test]
fn f_4_missing_required_member_is_a_violation() {
    assert!(ServerFrame::check(raw_body(ServerBody::ServerNotice.0, true)).is_ok());
    let v = ServerFrame::check(raw_notice(ServerBody::ServerNotice.0, true, false)).unwrap_err();
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                error: InvalidFlatbuffer::MissingRequiredField { .. },
                ..
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.rule(), "F-4");
    // A discriminant without its required value is refused as well.
    let v = ServerFrame::check(raw_body(ServerBody::ServerNotice.0, false)).unwrap_err();
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                error: InvalidFlatbuffer::InconsistentUnion { .. },
                ..
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_none_or_undeclared_union_discriminant_is_a_violation() {
    let v = ServerFrame::check(raw_body(0, true)).unwrap_err();
    assert_eq!(
        field_fault(&v),
        (Site::new("ServerMessage", "body"), Fault::NoneUnion)
    );
    let v = ServerFrame::check(raw_body(200, true)).unwrap_err();
    assert_eq!(
        field_fault(&v),
        (
            Site::new("ServerMessage", "body"),
            Fault::UndeclaredUnion { tag: 200 }
        )
    );
}

#[test]
fn f_4_absent_required_optional_scalar_is_not_defaulted() {
    let msg = reply(
        4,
        ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT { stage: None })),
    );
    let v = ServerFrame::check(pack_unchecked(&msg)).unwrap_err();
    assert_eq!(
        field_fault(&v),
        (Site::new("RequestCancelled", "stage"), Fault::Absent)
    );
}

#[test]
fn f_4_undeclared_enum_value_is_not_mapped() {
    let msg = reply(
        4,
        ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
            stage: Some(CancellationStage(7)),
        })),
    );
    let v = ServerFrame::check(pack_unchecked(&msg)).unwrap_err();
    assert_eq!(
        field_fault(&v),
        (
            Site::new("RequestCancelled", "stage"),
            Fault::UndeclaredEnum { value: 7 }
        )
    );
}

#[test]
fn f_4_fingerprint_of_wrong_length_is_a_violation() {
    let msg = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT {
            request_id: 2,
            body: ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
                disposition: OpenIngestorDispositionT::ProducerRefused(Box::new(
                    ProducerRefusedT {
                        refusal: Some(ProducerRefusal::SchemaMismatch),
                    },
                )),
                message: "m".into(),
            })),
        })),
    };
    assert!(ServerFrame::check(pack_unchecked(&msg)).is_ok());
    let start = BackupDownloadMessageT {
        part: BackupDownloadPartT::BackupArchiveStart(Box::new(BackupArchiveStartT {
            total_bytes: 10,
            digest: Box::new(FingerprintT { bytes: vec![7; 31] }),
        })),
    };
    let mut fbb = FlatBufferBuilder::new();
    let root = start.pack(&mut fbb);
    fbb.finish(root, Some("NXBD"));
    let v = BackupDownloadFrame::check(Bytes::copy_from_slice(fbb.finished_data())).unwrap_err();
    assert_eq!(
        field_fault(&v),
        (
            Site::new("Fingerprint", "bytes"),
            Fault::Length {
                expected: 32,
                found: 31
            }
        )
    );
}

#[test]
fn f_5_absent_optional_and_present_zero_stay_distinct() {
    let mut enc = Encoder::new();
    let absent = enc
        .encode::<ClientMessageRoot>(&command("r", None))
        .unwrap();
    let zero = enc
        .encode::<ClientMessageRoot>(&command("r", Some(0)))
        .unwrap();
    assert_ne!(
        absent, zero,
        "a present zero is written, an absent value is not"
    );
    let read = |b: Bytes| {
        let f = ClientFrame::check(b).unwrap();
        let pos = f
            .view()
            .request_as_command_request()
            .unwrap()
            .expected_transaction_position();
        (pos, f.unpack())
    };
    let (a, a_owned) = read(absent);
    let (z, z_owned) = read(zero);
    assert_eq!((a, z), (None, Some(0)));
    assert_eq!(a_owned, command("r", None));
    assert_eq!(z_owned, command("r", Some(0)));
}

#[test]
fn f_6_frame_above_four_mebibytes_is_not_written() {
    let mut msg = command("r", None);
    if let ClientRequestT::CommandRequest(c) = &mut msg.request {
        c.query = "x".repeat(FRAME_LIMIT);
    }
    let e = Encoder::new()
        .encode::<ClientMessageRoot>(&msg)
        .unwrap_err();
    assert!(matches!(e, EncodeError::FrameTooLarge { limit, .. } if limit == FRAME_LIMIT));
    if let ClientRequestT::CommandRequest(c) = &mut msg.request {
        c.query = "x".repeat(FRAME_LIMIT - 200);
    }
    assert!(
        Encoder::new().encode::<ClientMessageRoot>(&msg).is_ok(),
        "just under fits"
    );
}

#[test]
fn f_6_string_above_sixty_four_mebibytes_is_not_written() {
    let mut msg = command("r", None);
    if let ClientRequestT::CommandRequest(c) = &mut msg.request {
        c.query = "q".repeat(MAX_STRING_BYTES + 1);
    }
    let e = Encoder::new()
        .encode::<ClientMessageRoot>(&msg)
        .unwrap_err();
    assert_eq!(
        e,
        EncodeError::Field {
            site: Site::new("CommandRequest", "query"),
            fault: Fault::StringTooLong {
                len: MAX_STRING_BYTES + 1
            }
        }
    );
}

#[test]
fn f_6_vector_above_262144_entries_is_not_written() {
    let submit = |n: usize| ClientMessageT {
        request_id: 9,
        request: ClientRequestT::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
            producer: 3,
            batch: vec![0; n],
        })),
    };
    assert!(Encoder::new()
        .encode::<ClientMessageRoot>(&submit(MAX_VECTOR_ENTRIES))
        .is_ok());
    let e = Encoder::new()
        .encode::<ClientMessageRoot>(&submit(MAX_VECTOR_ENTRIES + 1))
        .unwrap_err();
    assert_eq!(
        e,
        EncodeError::Field {
            site: Site::new("SubmitBatchRequest", "batch"),
            fault: Fault::TooManyEntries {
                len: MAX_VECTOR_ENTRIES + 1
            }
        }
    );
}

fn open_ingestor(field_type: FieldTypeT) -> ClientMessageT {
    ClientMessageT {
        request_id: 4,
        request: ClientRequestT::OpenIngestorRequest(Box::new(OpenIngestorRequestT {
            domain: "d".into(),
            ingestor: "i".into(),
            expected_fields: vec![RowFieldT {
                name: "f".into(),
                field_type: Box::new(field_type),
                nullable: false,
                sensitive: false,
            }],
            max_outstanding_batches: 8,
            max_outstanding_bytes: 1 << 20,
        })),
    }
}

#[test]
fn f_6_tables_nested_deeper_than_64_are_not_written() {
    // ClientMessage > OpenIngestorRequest > RowField > FieldType, then two tables per level.
    assert!(Encoder::new()
        .encode::<ClientMessageRoot>(&open_ingestor(nested_field_type(29)))
        .is_ok());
    let e = Encoder::new()
        .encode::<ClientMessageRoot>(&open_ingestor(nested_field_type(31)))
        .unwrap_err();
    assert!(
        matches!(
            e,
            EncodeError::Field {
                fault: Fault::TooDeep,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn f_6_application_input_that_breaks_the_schema_gets_a_typed_error() {
    let cancel = |target| ClientMessageT {
        request_id: 2,
        request: ClientRequestT::CancelRequest(Box::new(CancelRequestT {
            target_request_id: target,
        })),
    };
    assert_eq!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&cancel(0))
            .unwrap_err(),
        EncodeError::Field {
            site: Site::new("CancelRequest", "target_request_id"),
            fault: Fault::Zero
        }
    );
    let none = ClientMessageT {
        request_id: 2,
        request: ClientRequestT::NONE,
    };
    assert_eq!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&none)
            .unwrap_err(),
        EncodeError::Field {
            site: Site::new("ClientMessage", "request"),
            fault: Fault::NoneUnion
        }
    );
    let mut too_much = open_ingestor(nested_field_type(0));
    if let ClientRequestT::OpenIngestorRequest(o) = &mut too_much.request {
        o.max_outstanding_batches = 1025;
    }
    assert!(matches!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&too_much)
            .unwrap_err(),
        EncodeError::Field {
            fault: Fault::OutOfRange {
                value: 1025,
                max: 1024,
                ..
            },
            ..
        }
    ));
    let zero_id = ClientMessageT {
        request_id: 0,
        ..cancel(1)
    };
    assert_eq!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&zero_id)
            .unwrap_err(),
        EncodeError::Field {
            site: Site::new("ClientMessage", "request_id"),
            fault: Fault::Zero
        }
    );
}

#[test]
fn f_8_violation_names_the_rule_and_the_member() {
    let v = ServerFrame::check(pack_unchecked(&cancelled(0))).unwrap_err();
    assert_eq!(v.to_string(), "Reply.request_id: value must not be zero");
    assert_eq!(v.rule(), "F-4");
    let short = ServerFrame::check(Bytes::from_static(b"abc")).unwrap_err();
    assert!(short.to_string().contains("shorter than 8 bytes"));
    assert_eq!(short.rule(), "F-3");
}

#[test]
fn f_9_small_frame_is_copied_out_of_a_large_receive_buffer() {
    let frame = Encoder::new()
        .encode::<ServerMessageRoot>(&cancelled(8))
        .unwrap();
    let mut buffer = vec![0u8; 1 << 20];
    buffer[1000..1000 + frame.len()].copy_from_slice(&frame);
    let buffer = Bytes::from(buffer);
    let range = buffer.as_ptr() as usize..buffer.as_ptr() as usize + buffer.len();
    let kept = ServerFrame::check_compact(buffer.slice(1000..1000 + frame.len())).unwrap();
    assert!(
        !range.contains(&(kept.bytes().as_ptr() as usize)),
        "small frame copied out"
    );
    assert_eq!(kept.bytes(), &frame);
    // A large frame stays where it is: copying it would cost more than it saves.
    let mut big = command("r", None);
    if let ClientRequestT::CommandRequest(c) = &mut big.request {
        c.query = "y".repeat(100_000);
    }
    let big = Encoder::new().encode::<ClientMessageRoot>(&big).unwrap();
    let start = big.as_ptr() as usize;
    let kept = ClientFrame::check_compact(big.clone()).unwrap();
    assert_eq!(kept.bytes().as_ptr() as usize, start);
}

#[test]
fn f_9_views_borrow_the_frame_and_owned_copies_outlive_it() {
    let frame = ClientFrame::check(
        Encoder::new()
            .encode::<ClientMessageRoot>(&command("ref-9", None))
            .unwrap(),
    )
    .unwrap();
    let bytes = frame.bytes().clone();
    let span = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
    let reference = frame
        .view()
        .request_as_command_request()
        .unwrap()
        .execution_reference();
    assert!(
        span.contains(&(reference.as_ptr() as usize)),
        "read in place, not copied"
    );
    let owned = frame.unpack();
    drop(frame);
    drop(bytes);
    assert_eq!(owned, command("ref-9", None));
}

// ---------------------------------------------------------------------------------------------
// Frames carrying rows are verified and checked in one walk; a frame that breaks a rule there
// still gets the same typed violation as through verification and then the semantic checks.
// ---------------------------------------------------------------------------------------------

/// How a cell of [`raw_rows`] is written: a declared variant with its value, or a raw tag
/// (NONE or undeclared) over a table.
#[derive(Clone, Copy)]
enum RawCell {
    U8,
    Tag(u8),
    F32(Option<f32>),
    F64(Option<f64>),
    Text(&'static str),
    List(&'static [RawCell]),
}

fn raw_cell<'a>(fbb: &mut FlatBufferBuilder<'a>, c: RawCell) -> flatbuffers::WIPOffset<Cell<'a>> {
    let (tag, value) = match c {
        RawCell::U8 => (
            CellValue::U8Cell,
            U8Cell::create(fbb, &U8CellArgs { value: 3 }).as_union_value(),
        ),
        RawCell::Tag(t) => (
            CellValue(t),
            U8Cell::create(fbb, &U8CellArgs { value: 3 }).as_union_value(),
        ),
        RawCell::F32(value) => {
            let start = fbb.start_table();
            if let Some(v) = value {
                fbb.push_slot_always::<f32>(F32Cell::VT_VALUE, v);
            }
            (
                CellValue::F32Cell,
                flatbuffers::WIPOffset::<F32Cell>::new(fbb.end_table(start).value())
                    .as_union_value(),
            )
        }
        RawCell::F64(value) => {
            let start = fbb.start_table();
            if let Some(v) = value {
                fbb.push_slot_always::<f64>(F64Cell::VT_VALUE, v);
            }
            (
                CellValue::F64Cell,
                flatbuffers::WIPOffset::<F64Cell>::new(fbb.end_table(start).value())
                    .as_union_value(),
            )
        }
        RawCell::Text(text) => {
            let s = fbb.create_string(text);
            (
                CellValue::StringCell,
                StringCell::create(fbb, &StringCellArgs { value: Some(s) }).as_union_value(),
            )
        }
        RawCell::List(elements) => {
            let cells: Vec<_> = elements.iter().map(|e| raw_cell(fbb, *e)).collect();
            let cells = fbb.create_vector(&cells);
            (
                CellValue::ListCell,
                ListCell::create(
                    fbb,
                    &ListCellArgs {
                        elements: Some(cells),
                    },
                )
                .as_union_value(),
            )
        }
    };
    let start = fbb.start_table();
    fbb.push_slot_always(Cell::VT_VALUE, value);
    fbb.push_slot_always::<u8>(Cell::VT_VALUE_TYPE, tag.0);
    flatbuffers::WIPOffset::new(fbb.end_table(start).value())
}

/// A SubscriptionRows frame of `rows` written cell by cell, with an optional branch key.
fn raw_rows(generation: u64, key: Option<&[RawCell]>, rows: &[&[RawCell]]) -> Bytes {
    let mut fbb = FlatBufferBuilder::new();
    let branch_key = key.map(|k| {
        let cells: Vec<_> = k.iter().map(|c| raw_cell(&mut fbb, *c)).collect();
        let cells = fbb.create_vector(&cells);
        BranchKey::create(&mut fbb, &BranchKeyArgs { cells: Some(cells) })
    });
    let rows: Vec<_> = rows
        .iter()
        .map(|r| {
            let cells: Vec<_> = r.iter().map(|c| raw_cell(&mut fbb, *c)).collect();
            let cells = fbb.create_vector(&cells);
            Row::create(&mut fbb, &RowArgs { cells: Some(cells) })
        })
        .collect();
    let rows = fbb.create_vector(&rows);
    let batch = RowBatch::create(
        &mut fbb,
        &RowBatchArgs {
            branch_key,
            rows: Some(rows),
        },
    );
    let name = fbb.create_string("prices");
    let subscription = SubscriptionHandle::create(
        &mut fbb,
        &SubscriptionHandleArgs {
            name: Some(name),
            generation,
        },
    );
    let body = SubscriptionRows::create(
        &mut fbb,
        &SubscriptionRowsArgs {
            subscription: Some(subscription),
            batch: Some(batch),
        },
    );
    let root = ServerMessage::create(
        &mut fbb,
        &ServerMessageArgs {
            body_type: ServerBody::SubscriptionRows,
            body: Some(body.as_union_value()),
        },
    );
    fbb.finish(root, Some("NXSM"));
    Bytes::copy_from_slice(fbb.finished_data())
}

const GOOD_ROW: &[RawCell] = &[
    RawCell::U8,
    RawCell::F32(Some(0.5)),
    RawCell::F64(Some(2.0)),
    RawCell::Text("ok"),
    RawCell::List(&[RawCell::U8, RawCell::List(&[RawCell::U8])]),
];

fn rows_fault(key: Option<&[RawCell]>, rows: &[&[RawCell]]) -> (Site, Fault) {
    field_fault(&ServerFrame::check(raw_rows(1, key, rows)).unwrap_err())
}

#[test]
fn f_4_a_conforming_rows_frame_written_cell_by_cell_is_read() {
    let frame = ServerFrame::check(raw_rows(1, Some(GOOD_ROW), &[GOOD_ROW, GOOD_ROW])).unwrap();
    let rows = frame.view().body_as_subscription_rows().unwrap();
    assert_eq!(rows.batch().rows().len(), 2);
    assert_eq!(rows.subscription().generation(), 1);
}

#[test]
fn f_4_a_none_or_undeclared_cell_variant_in_a_row_is_a_violation() {
    let none = (Site::new("Cell", "value"), Fault::NoneUnion);
    let undeclared = (
        Site::new("Cell", "value"),
        Fault::UndeclaredUnion { tag: 200 },
    );
    assert_eq!(rows_fault(None, &[GOOD_ROW, &[RawCell::Tag(0)]]), none);
    assert_eq!(
        rows_fault(None, &[&[RawCell::U8, RawCell::Tag(200)]]),
        undeclared
    );
    // One past the last declared variant.
    assert_eq!(
        rows_fault(None, &[&[RawCell::Tag(CellValue::ENUM_MAX + 1)]]),
        (
            Site::new("Cell", "value"),
            Fault::UndeclaredUnion {
                tag: CellValue::ENUM_MAX + 1
            }
        )
    );
}

#[test]
fn f_4_a_none_or_undeclared_cell_variant_in_a_branch_key_or_list_is_a_violation() {
    let none = (Site::new("Cell", "value"), Fault::NoneUnion);
    assert_eq!(rows_fault(Some(&[RawCell::Tag(0)]), &[GOOD_ROW]), none);
    assert_eq!(
        rows_fault(
            None,
            &[GOOD_ROW, &[RawCell::List(&[RawCell::U8, RawCell::Tag(0)])]]
        ),
        none
    );
    assert_eq!(
        rows_fault(
            None,
            &[&[RawCell::List(&[RawCell::List(&[RawCell::Tag(99)])])]]
        ),
        (
            Site::new("Cell", "value"),
            Fault::UndeclaredUnion { tag: 99 }
        )
    );
}

#[test]
fn f_4_an_absent_float_cell_value_in_a_row_is_a_violation() {
    assert_eq!(
        rows_fault(None, &[GOOD_ROW, &[RawCell::F32(None)]]),
        (Site::new("F32Cell", "value"), Fault::Absent)
    );
    assert_eq!(
        rows_fault(None, &[&[RawCell::List(&[RawCell::F64(None)])]]),
        (Site::new("F64Cell", "value"), Fault::Absent)
    );
    assert_eq!(
        rows_fault(Some(&[RawCell::F64(None)]), &[GOOD_ROW]),
        (Site::new("F64Cell", "value"), Fault::Absent)
    );
}

#[test]
fn f_4_an_empty_batch_or_a_zero_generation_is_a_violation() {
    assert_eq!(
        rows_fault(Some(GOOD_ROW), &[]),
        (Site::new("RowBatch", "rows"), Fault::Empty)
    );
    assert_eq!(
        field_fault(&ServerFrame::check(raw_rows(0, None, &[GOOD_ROW])).unwrap_err()),
        (Site::new("SubscriptionHandle", "generation"), Fault::Zero)
    );
}

#[test]
fn f_4_a_rows_frame_that_is_also_malformed_is_refused_as_malformed() {
    // The broken rule comes first in the frame; verification still decides first.
    let mut bytes = raw_rows(
        0,
        None,
        &[&[RawCell::Tag(0)], &[RawCell::Text("<not utf-8>")]],
    )
    .to_vec();
    let at = bytes.windows(11).position(|w| w == b"<not utf-8>").unwrap();
    bytes[at] = 0xff;
    bytes[at + 1] = 0xfe;
    let v = ServerFrame::check(Bytes::from(bytes)).unwrap_err();
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                error: InvalidFlatbuffer::Utf8Error { .. },
                ..
            }
        ),
        "{v:?}"
    );
    // A truncated rows frame.
    let whole = raw_rows(1, None, &[GOOD_ROW, GOOD_ROW]);
    let v = ServerFrame::check(whole.slice(..whole.len() - 9)).unwrap_err();
    assert!(matches!(v, ProtocolViolation::Malformed { .. }), "{v:?}");
}

#[test]
fn f_2_a_command_written_from_its_parts_is_the_frame_of_the_owned_request() {
    use nervix_protocol::encode::CommandParts;
    let preview = |id: &str| TransactionPreviewIdentityT {
        transaction_id: id.into(),
        position: 7,
        planning_basis: Box::new(FingerprintT { bytes: vec![3; 32] }),
    };
    let mut enc = Encoder::new();
    let mut checker = Encoder::new();
    // Every optional member present and absent, at string lengths that move the alignment.
    for n in 0..9 {
        for domain in [None, Some("d".repeat(n + 1))] {
            for position in [None, Some(0), Some(u64::MAX)] {
                for preview in [None, Some(preview(&"t".repeat(n + 1)))] {
                    let owned = CommandRequestT {
                        query: "q".repeat(n * 3),
                        domain: domain.clone(),
                        execution_reference: format!("ref-{}", "x".repeat(n)),
                        expected_transaction_position: position,
                        expected_preview: preview.map(Box::new),
                    };
                    let request = ClientRequestT::CommandRequest(Box::new(owned.clone()));
                    let id = 1 + n as u64;
                    let whole = enc.encode_request(id, &request).unwrap();
                    let parts = CommandParts::of(&owned);
                    let written = enc.encode_command(id, &parts).unwrap();
                    assert_eq!(written.frame, whole, "{owned:?}");
                    assert_eq!(
                        &written.frame[written.reference.clone()],
                        owned.execution_reference.as_bytes()
                    );
                    // The range is where the checked frame's reference is read from.
                    let frame = ClientFrame::check(written.frame.clone()).unwrap();
                    let read = frame.view().request_as_command_request().unwrap();
                    let at = read.execution_reference().as_ptr() as usize
                        - frame.bytes().as_ptr() as usize;
                    assert_eq!(written.reference.start, at);
                    assert_eq!(checker.check_command(&parts), Ok(()));
                }
            }
        }
    }
    // The same refusals, in the same order: identity zero first, then the members.
    let long = CommandRequestT {
        query: "q".repeat(MAX_STRING_BYTES + 1),
        domain: Some("d".repeat(MAX_STRING_BYTES + 1)),
        execution_reference: "r".into(),
        expected_transaction_position: None,
        expected_preview: None,
    };
    let request = ClientRequestT::CommandRequest(Box::new(long.clone()));
    let parts = CommandParts::of(&long);
    for id in [0, 1] {
        assert_eq!(
            enc.encode_command(id, &parts).unwrap_err(),
            enc.encode_request(id, &request).unwrap_err()
        );
    }
    assert_eq!(
        checker.check_command(&parts).unwrap_err(),
        enc.encode_request(1, &request).unwrap_err()
    );
}
