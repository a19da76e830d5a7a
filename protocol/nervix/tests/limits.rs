//! Every size limit of F-3 (receive) and F-6 (send) pinned at its exact boundary: the largest
//! accepted value passes and one more is refused, so turning any `>` of the checks into `>=`
//! (or moving a limit by one) fails a test here. Also: the vector entry limit binds what is
//! sent and never what is received.

use bytes::Bytes;
use flatbuffers::{FlatBufferBuilder, InvalidFlatbuffer, VerifierOptions};
use nervix_protocol::encode::{EncodeError, Encoder};
use nervix_protocol::frame::*;
use nervix_protocol::limits::{
    FRAME_LIMIT, MAX_DEPTH, MAX_STRING_BYTES, MAX_VECTOR_ENTRIES, MIN_FRAME, TRANSFER_LIMIT,
};
use nervix_protocol::schema::*;
use nervix_protocol::violation::{Fault, ProtocolViolation, Site};
use nervix_protocol::Root;

/// Packs `value` as a frame of root `R` without the encoder's checks or limits.
fn unchecked<R: Root>(value: &R::Owned) -> Bytes {
    let mut fbb = FlatBufferBuilder::new();
    R::finish(value, &mut fbb);
    Bytes::copy_from_slice(fbb.finished_data())
}

/// The first frame `build(n)` of exactly `target` bytes, searching `n` upward from just below
/// where the frame's fixed overhead puts it.
fn of_exact_len(target: usize, build: impl Fn(usize) -> Bytes) -> (usize, Bytes) {
    let overhead = build(1).len() - 1;
    let mut n = target.saturating_sub(overhead + 32).max(1);
    loop {
        let b = build(n);
        if b.len() == target {
            return (n, b);
        }
        assert!(b.len() < target, "no n gives exactly {target} bytes");
        n += 1;
    }
}

fn reply(request_id: u64, body: ReplyBodyT) -> ServerMessageT {
    ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT { request_id, body })),
    }
}

fn transfer_part(chunk: Vec<u8>) -> ServerMessageT {
    reply(
        7,
        ReplyBodyT::TransferPart(Box::new(TransferPartT {
            total_bytes: TRANSFER_LIMIT as u64,
            offset: 0,
            chunk,
        })),
    )
}

fn malformed(v: &ProtocolViolation) -> &InvalidFlatbuffer {
    match v {
        ProtocolViolation::Malformed { error, .. } => error,
        other => panic!("expected a verifier failure, got {other:?}"),
    }
}

// ===== Received vectors are not held to the send limit (F-3, F-7) =====

/// Distinct bytes so a truncated or shifted read would show.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn f_3_a_transfer_part_chunk_of_300_kb_is_read() {
    let chunk = pattern(300_000);
    let frame = ServerFrame::check(unchecked::<ServerMessageRoot>(&transfer_part(
        chunk.clone(),
    )))
    .expect("a 300 KB chunk is within the frame limit");
    let part = frame
        .view()
        .body_as_reply()
        .unwrap()
        .body_as_transfer_part()
        .unwrap();
    assert_eq!(part.chunk().bytes(), &chunk[..]);
}

#[test]
fn f_3_a_backup_archive_chunk_above_256_kib_is_read() {
    let bytes = pattern(MAX_VECTOR_ENTRIES + 40_000);
    let msg = BackupDownloadMessageT {
        part: BackupDownloadPartT::BackupArchiveChunk(Box::new(BackupArchiveChunkT {
            bytes: bytes.clone(),
        })),
    };
    let frame = BackupDownloadFrame::check(unchecked::<BackupDownloadMessageRoot>(&msg))
        .expect("a chunk above 256 KiB is within the frame limit");
    let chunk = frame.view().part_as_backup_archive_chunk().unwrap();
    assert_eq!(chunk.bytes().bytes(), &bytes[..]);
}

#[test]
fn f_3_an_emitter_batch_body_above_256_kib_is_read() {
    let batch = pattern(MAX_VECTOR_ENTRIES + 1);
    let msg = reply(
        9,
        ReplyBodyT::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
            disposition: ReadEmitterDispositionT::EmitterBatchReceived(Box::new(
                EmitterBatchReceivedT {
                    identity: vec![1; 16],
                    reference: vec![2; 16],
                    source_relay: "readings".into(),
                    branch_fingerprint: None,
                    batch: batch.clone(),
                    members: 1,
                    execution_now_unix_nanos: 0,
                },
            )),
            message: String::new(),
        })),
    );
    let frame = ServerFrame::check(unchecked::<ServerMessageRoot>(&msg))
        .expect("a batch above 256 KiB is within the frame limit");
    let received = frame
        .view()
        .body_as_reply()
        .unwrap()
        .body_as_read_emitter_batch_outcome()
        .unwrap()
        .disposition_as_emitter_batch_received()
        .unwrap();
    assert_eq!(received.batch().bytes(), &batch[..]);
}

#[test]
fn f_3_a_bytes_cell_above_256_kib_is_read() {
    let value = pattern(MAX_VECTOR_ENTRIES + 100_000);
    let msg = ServerMessageT {
        body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: Box::new(SubscriptionHandleT {
                name: "s".into(),
                generation: 1,
            }),
            batch: Box::new(RowBatchT {
                branch_key: None,
                rows: vec![RowT {
                    cells: vec![CellT {
                        value: CellValueT::BytesCell(Box::new(BytesCellT {
                            value: value.clone(),
                        })),
                    }],
                }],
            }),
        })),
    };
    let frame = ServerFrame::check(unchecked::<ServerMessageRoot>(&msg))
        .expect("a bytes cell above 256 KiB is within the frame limit");
    let rows = frame.view().body_as_subscription_rows().unwrap();
    let cell = rows.batch().rows().get(0).cells().get(0);
    assert_eq!(
        cell.value_as_bytes_cell().unwrap().value().bytes(),
        &value[..]
    );
}

#[test]
fn f_6_a_vector_of_262145_entries_is_refused_on_send_and_read_on_receive() {
    let submit = |n: usize| ClientMessageT {
        request_id: 9,
        request: ClientRequestT::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
            producer: 3,
            batch: vec![7; n],
        })),
    };
    let over = submit(MAX_VECTOR_ENTRIES + 1);
    assert_eq!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&over)
            .unwrap_err(),
        EncodeError::Field {
            site: Site::new("SubmitBatchRequest", "batch"),
            fault: Fault::TooManyEntries {
                len: MAX_VECTOR_ENTRIES + 1
            }
        }
    );
    // The same frame, written by a peer, is read: the entry limit is not a receive rule.
    let frame = ClientFrame::check(unchecked::<ClientMessageRoot>(&over)).unwrap();
    assert_eq!(frame.unpack(), over);
    assert!(Encoder::new()
        .encode::<ClientMessageRoot>(&submit(MAX_VECTOR_ENTRIES))
        .is_ok());
}

// ===== F-3: frame size =====

#[test]
fn f_3_a_frame_of_exactly_4_mib_is_read_and_one_byte_more_is_refused() {
    let (_, exact) = of_exact_len(FRAME_LIMIT, |n| {
        unchecked::<ServerMessageRoot>(&transfer_part(vec![0x5a; n]))
    });
    assert_eq!(exact.len(), FRAME_LIMIT);
    assert!(ServerFrame::check(exact.clone()).is_ok());

    // One trailing byte more: a frame the verifier accepts (it does under a larger limit), so
    // only the size check refuses it.
    let mut longer = exact.to_vec();
    longer.push(0);
    let longer = Bytes::from(longer);
    assert!(ServerFrame::check_with_limit(longer.clone(), FRAME_LIMIT + 1).is_ok());
    assert_eq!(
        ServerFrame::check(longer).unwrap_err(),
        ProtocolViolation::FrameTooLarge {
            root: "ServerMessage",
            len: FRAME_LIMIT + 1,
            limit: FRAME_LIMIT
        }
    );
}

#[test]
fn f_3_eight_bytes_pass_the_size_check_and_seven_do_not() {
    let mut eight = vec![0u8; MIN_FRAME];
    eight[4..8].copy_from_slice(b"NXSM");
    // Eight bytes hold no table, so the verifier refuses them; the size check let them through.
    let v = ServerFrame::check(Bytes::from(eight.clone())).unwrap_err();
    assert!(
        matches!(v, ProtocolViolation::Malformed { .. }),
        "eight bytes reach the verifier: {v:?}"
    );
    eight[4..8].copy_from_slice(b"NXCM");
    assert!(matches!(
        ServerFrame::check(Bytes::from(eight)).unwrap_err(),
        ProtocolViolation::WrongIdentifier { .. }
    ));
    assert_eq!(
        ServerFrame::check(Bytes::from_static(b"\0\0\0\0NXS")).unwrap_err(),
        ProtocolViolation::FrameTooShort {
            root: "ServerMessage",
            len: 7
        }
    );
}

// ===== F-3: the verifier's limits =====

/// Whether `buf` verifies as a ServerMessage under `opts`, with the flatbuffers verifier alone.
fn verifies(buf: &[u8], opts: &VerifierOptions) -> bool {
    flatbuffers::root_with_opts::<ServerMessage>(opts, buf).is_ok()
}

/// The least value of one verifier limit (set by `set`, all others unbounded) under which `buf`
/// verifies: the frame's depth, table count or apparent size as the verifier counts it.
fn measure(buf: &[u8], set: impl Fn(&mut VerifierOptions, usize)) -> usize {
    let opts = |v: usize| {
        let mut o = VerifierOptions {
            max_depth: usize::MAX,
            max_tables: usize::MAX,
            max_apparent_size: usize::MAX,
            ignore_missing_null_terminator: false,
        };
        set(&mut o, v);
        o
    };
    let (mut lo, mut hi) = (0usize, 1usize << 32);
    assert!(verifies(buf, &opts(hi)), "the frame does not verify at all");
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if verifies(buf, &opts(mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

fn depth_of(buf: &[u8]) -> usize {
    measure(buf, |o, v| o.max_depth = v)
}
fn tables_of(buf: &[u8]) -> usize {
    measure(buf, |o, v| o.max_tables = v)
}
fn apparent_size_of(buf: &[u8]) -> usize {
    measure(buf, |o, v| o.max_apparent_size = v)
}

/// A field type `levels` fixed lists deep around a scalar: two tables per level.
fn nested_field_type(levels: usize) -> FieldTypeT {
    let mut t = FieldTypeT {
        shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
            scalar: Some(ScalarType::U8),
        })),
    };
    for _ in 0..levels {
        t = FieldTypeT {
            shape: FieldTypeShapeT::FixedListFieldType(Box::new(FixedListFieldTypeT {
                element: Box::new(t),
                length: 2,
            })),
        };
    }
    t
}

fn row_field(field_type: FieldTypeT) -> RowFieldT {
    RowFieldT {
        name: "f".into(),
        field_type: Box::new(field_type),
        nullable: false,
        sensitive: false,
    }
}

/// A SubscriptionOpened reply whose deep field type sits in the schema's fields (an even total
/// depth) or one table deeper, in its branch's key fields (an odd one).
fn opened(levels: usize, in_branch: bool) -> ServerMessageT {
    let deep = row_field(nested_field_type(levels));
    let (fields, branch) = if in_branch {
        (
            vec![row_field(nested_field_type(0))],
            Some(Box::new(RowBranchT {
                branch: "b".into(),
                fields: vec![deep],
            })),
        )
    } else {
        (vec![deep], None)
    };
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
                schema: Box::new(RowSchemaT { fields, branch }),
            })),
            message: String::new(),
            diagnostics: vec![],
        })),
    )
}

/// Server messages nested exactly `depth` tables deep.
fn of_depth(depth: usize) -> ServerMessageT {
    // ServerMessage > Reply > SubscribeOutcome > SubscriptionOpened > RowSchema > RowField >
    // FieldType > ScalarFieldType is eight; the branch adds one; each level adds two.
    let in_branch = depth % 2 == 1;
    let base = if in_branch { 9 } else { 8 };
    opened((depth - base) / 2, in_branch)
}

#[test]
fn f_3_nesting_of_64_is_read_and_65_is_refused() {
    let at = unchecked::<ServerMessageRoot>(&of_depth(MAX_DEPTH));
    let over = unchecked::<ServerMessageRoot>(&of_depth(MAX_DEPTH + 1));
    assert_eq!(depth_of(&at), 64);
    assert_eq!(depth_of(&over), 65);
    assert!(ServerFrame::check(at).is_ok());
    let v = ServerFrame::check(over).unwrap_err();
    assert_eq!(*malformed(&v), InvalidFlatbuffer::DepthLimitReached);
}

/// A SubscriptionRows frame whose rows vector points `copies` times at one shared row of one
/// string cell holding `text` bytes, with a subscription name of `pad + 1` bytes. The verifier
/// visits the shared row once per pointer, so `copies` drives the table count and the apparent
/// size without growing the frame much; `pad` grows the frame alone.
fn shared_rows(copies: usize, text: usize, pad: usize) -> Bytes {
    let mut fbb = FlatBufferBuilder::new();
    let s = fbb.create_string(&"x".repeat(text));
    let string_cell = StringCell::create(&mut fbb, &StringCellArgs { value: Some(s) });
    let cell = Cell::create(
        &mut fbb,
        &CellArgs {
            value_type: CellValue::StringCell,
            value: Some(string_cell.as_union_value()),
        },
    );
    let cells = fbb.create_vector(&[cell]);
    let row = Row::create(&mut fbb, &RowArgs { cells: Some(cells) });
    let rows = fbb.create_vector(&vec![row; copies]);
    let batch = RowBatch::create(
        &mut fbb,
        &RowBatchArgs {
            branch_key: None,
            rows: Some(rows),
        },
    );
    let name = fbb.create_string(&"s".repeat(pad + 1));
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
fn f_3_a_table_count_of_len_over_4_is_read_and_one_more_is_refused() {
    // The table count does not depend on the padding, and len / 4 grows with it (by two at a
    // time: frames holding a ulong are 8-aligned), so the padding puts the count at the limit
    // or one past it, depending on the parity the number of shared rows gives the count.
    let find = |excess: usize| {
        (60..64)
            .flat_map(|copies| {
                let tables = tables_of(&shared_rows(copies, 0, 0));
                (0..4096)
                    .map(move |pad| shared_rows(copies, 0, pad))
                    .find(|f| tables == f.len() / 4 + excess)
            })
            .next()
            .expect("a frame with its table count there")
    };
    let at = find(0);
    let over = find(1);
    assert_eq!(tables_of(&at), at.len() / 4);
    assert_eq!(tables_of(&over), over.len() / 4 + 1);
    assert!(ServerFrame::check(at).is_ok());
    let v = ServerFrame::check(over).unwrap_err();
    assert_eq!(*malformed(&v), InvalidFlatbuffer::TooManyTables);
}

#[test]
fn f_3_an_apparent_size_of_8_times_len_is_read_and_one_byte_more_is_refused() {
    // The padding is visited once: it adds one to the apparent size per byte and eight times
    // the frame's growth (four bytes at a time) to the limit, so within one four-byte step the
    // excess over the limit takes four consecutive values. Trying several shared text lengths
    // shifts those windows until one holds exactly 0 and one holds exactly 1.
    let copies = 16;
    let mut at = None;
    let mut over = None;
    'search: for text in 380..480 {
        let base = apparent_size_of(&shared_rows(copies, text, 0));
        for pad in 0..2048 {
            let frame = shared_rows(copies, text, pad);
            let apparent = base + pad;
            let limit = 8 * frame.len();
            if apparent == limit && at.is_none() {
                at = Some(frame);
            } else if apparent == limit + 1 && over.is_none() {
                over = Some(frame);
            }
            if at.is_some() && over.is_some() {
                break 'search;
            }
        }
    }
    let (at, over) = (at.expect("an exact frame"), over.expect("a frame one past"));
    assert_eq!(apparent_size_of(&at), 8 * at.len());
    assert_eq!(apparent_size_of(&over), 8 * over.len() + 1);
    assert!(ServerFrame::check(at).is_ok());
    let v = ServerFrame::check(over).unwrap_err();
    assert_eq!(*malformed(&v), InvalidFlatbuffer::ApparentSizeTooLarge);
}

// ===== F-6: send limits =====

fn command_with_query(query: String) -> ClientMessageT {
    ClientMessageT {
        request_id: 1,
        request: ClientRequestT::CommandRequest(Box::new(CommandRequestT {
            query,
            domain: None,
            execution_reference: "r".into(),
            expected_transaction_position: None,
            expected_preview: None,
        })),
    }
}

#[test]
fn f_6_a_frame_of_exactly_4_mib_is_written_and_a_larger_one_is_not() {
    let build = |n: usize| {
        Encoder::new()
            .encode_with_limit::<ClientMessageRoot>(&command_with_query("q".repeat(n)), usize::MAX)
            .unwrap()
    };
    let (n, exact) = of_exact_len(FRAME_LIMIT, build);
    let written = Encoder::new()
        .encode::<ClientMessageRoot>(&command_with_query("q".repeat(n)))
        .expect("exactly 4 MiB is within the limit");
    assert_eq!(written, exact);
    // The next larger frame: its payload still fits, so the finished length is what refuses it.
    let mut m = n + 1;
    while build(m).len() == FRAME_LIMIT {
        m += 1;
    }
    let len = build(m).len();
    assert!(len > FRAME_LIMIT);
    assert_eq!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&command_with_query("q".repeat(m)))
            .unwrap_err(),
        EncodeError::FrameTooLarge {
            len,
            limit: FRAME_LIMIT
        }
    );
}

#[test]
fn f_6_a_request_frame_of_exactly_4_mib_is_written_and_a_larger_one_is_not() {
    let request = |n: usize| {
        ClientRequestT::CommandRequest(Box::new(CommandRequestT {
            query: "q".repeat(n),
            domain: None,
            execution_reference: "r".into(),
            expected_transaction_position: None,
            expected_preview: None,
        }))
    };
    // encode_request writes the same frame as encode of the whole message.
    let build = |n: usize| {
        Encoder::new()
            .encode_with_limit::<ClientMessageRoot>(
                &ClientMessageT {
                    request_id: 1,
                    request: request(n),
                },
                usize::MAX,
            )
            .unwrap()
    };
    let (n, exact) = of_exact_len(FRAME_LIMIT, build);
    assert_eq!(
        Encoder::new().encode_request(1, &request(n)).unwrap(),
        exact
    );
    let mut m = n + 1;
    while build(m).len() == FRAME_LIMIT {
        m += 1;
    }
    assert!(matches!(
        Encoder::new().encode_request(1, &request(m)).unwrap_err(),
        EncodeError::FrameTooLarge { len, limit: FRAME_LIMIT } if len > FRAME_LIMIT
    ));
}

#[test]
fn f_6_a_command_written_from_its_parts_is_refused_at_exactly_the_owned_requests_length() {
    use nervix_protocol::encode::CommandParts;
    let owned = |n: usize| CommandRequestT {
        query: "q".repeat(n),
        domain: Some("d".into()),
        execution_reference: "r".into(),
        expected_transaction_position: Some(1),
        expected_preview: None,
    };
    let build = |n: usize| {
        Encoder::new()
            .encode_with_limit::<ClientMessageRoot>(
                &ClientMessageT {
                    request_id: 1,
                    request: ClientRequestT::CommandRequest(Box::new(owned(n))),
                },
                usize::MAX,
            )
            .unwrap()
    };
    let (n, exact) = of_exact_len(FRAME_LIMIT, build);
    let at = owned(n);
    let written = Encoder::new()
        .encode_command(1, &CommandParts::of(&at))
        .unwrap();
    assert_eq!(written.frame, exact);
    assert_eq!(Encoder::new().check_command(&CommandParts::of(&at)), Ok(()));
    let mut m = n + 1;
    while build(m).len() == FRAME_LIMIT {
        m += 1;
    }
    let above = owned(m);
    let refused = EncodeError::FrameTooLarge {
        len: build(m).len(),
        limit: FRAME_LIMIT,
    };
    assert_eq!(
        Encoder::new()
            .encode_command(1, &CommandParts::of(&above))
            .unwrap_err(),
        refused
    );
    assert_eq!(
        Encoder::new()
            .check_command(&CommandParts::of(&above))
            .unwrap_err(),
        refused
    );
}

#[test]
fn f_6_payload_of_exactly_the_frame_limit_is_left_to_the_finished_length() {
    // A string of exactly 4 MiB passes the early payload estimate (it is not above the limit)
    // and is refused by the finished frame's length; one byte more is refused early, by the
    // estimate, before anything is built.
    let e = Encoder::new()
        .encode::<ClientMessageRoot>(&command_with_query("q".repeat(FRAME_LIMIT)))
        .unwrap_err();
    assert!(
        matches!(e, EncodeError::FrameTooLarge { len, limit: FRAME_LIMIT } if len > FRAME_LIMIT),
        "{e:?}"
    );
    assert_eq!(
        Encoder::new()
            .encode::<ClientMessageRoot>(&command_with_query("q".repeat(FRAME_LIMIT + 1)))
            .unwrap_err(),
        EncodeError::FrameTooLarge {
            len: FRAME_LIMIT + 1,
            limit: FRAME_LIMIT
        }
    );
}

#[test]
fn f_6_a_string_of_exactly_64_mib_is_written_and_one_byte_more_is_not() {
    // Only a frame limit above 64 MiB (a test double's joined reply) lets such a string be
    // written at all; under it, the string limit alone decides.
    let limit = 2 * MAX_STRING_BYTES;
    let mut msg = command_with_query("q".repeat(MAX_STRING_BYTES));
    let frame = Encoder::new()
        .encode_with_limit::<ClientMessageRoot>(&msg, limit)
        .expect("exactly 64 MiB is within the string limit");
    assert!(frame.len() > MAX_STRING_BYTES);
    drop(frame);
    if let ClientRequestT::CommandRequest(c) = &mut msg.request {
        c.query.push('q');
    }
    assert_eq!(
        Encoder::new()
            .encode_with_limit::<ClientMessageRoot>(&msg, limit)
            .unwrap_err(),
        EncodeError::Field {
            site: Site::new("CommandRequest", "query"),
            fault: Fault::StringTooLong {
                len: MAX_STRING_BYTES + 1
            }
        }
    );
}

#[test]
fn f_6_nesting_of_64_is_written_and_65_is_not() {
    let at = of_depth(MAX_DEPTH);
    let frame = Encoder::new()
        .encode::<ServerMessageRoot>(&at)
        .expect("64 tables deep is within the limit");
    // The encoder counts depth as the verifier does.
    assert_eq!(depth_of(&frame), 64);
    let e = Encoder::new()
        .encode::<ServerMessageRoot>(&of_depth(MAX_DEPTH + 1))
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
