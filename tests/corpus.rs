//! The committed conformance corpus (`vectors/corpus/`) against its builders and the readers.
//!
//! The files are the contract: the builders must still produce them byte for byte, every valid
//! frame must read back to exactly the committed report, and every malformed frame must give
//! exactly its committed violation. Spot checks read decoded values through the views (not the
//! report) to show that the values careless readers break on survive.

use bytes::Bytes;
use flatbuffers::InvalidFlatbuffer;
use nervix_conformance::corpus::{
    check_as, corpus_dir, corpus_files, extension, list_files, long_reference, malformed_frames,
    readings_rows, readings_schema, report_text, root_name, try_report_text, tsv_escape,
    valid_frames, CorpusFile, F32_MAX_FINITE, F32_MIN_SUBNORMAL, F32_NAN_PAYLOAD, F32_NEG_INF,
    F32_NEG_ZERO, F32_POS_INF, F64_MAX_FINITE, F64_MIN_SUBNORMAL, F64_NAN_PAYLOAD, F64_NEG_INF,
    F64_NEG_ZERO, F64_POS_INF, NON_UTF8, NUL_TEXT, TWO_POW_53,
};
use nervix_protocol::frame::{
    BackupDownloadMessageRoot, BackupDownloadRequestRoot, ClientMessageRoot, Frame,
    RestoreMessageRoot, RestoreReplyRoot, ServerMessageRoot, UploadMessageRoot, UploadReplyRoot,
    ROOT_EXTENSIONS,
};
use nervix_protocol::limits::FRAME_LIMIT;
use nervix_protocol::schema::*;
use nervix_protocol::violation::{Fault, ProtocolViolation, Site};
use nervix_protocol::Root;
use std::collections::BTreeSet;

const REGENERATE: &str = "if (and only if) the change is intended, run `just corpus` and review \
                          the diff of vectors/corpus before committing it";

// ===== Reading the committed files =====

fn committed(rel: &str) -> Bytes {
    let path = corpus_dir().join(rel);
    match std::fs::read(&path) {
        Ok(bytes) => Bytes::from(bytes),
        Err(e) => panic!("vectors/corpus/{rel} cannot be read ({e}); {REGENERATE}"),
    }
}

fn committed_text(rel: &str) -> String {
    String::from_utf8(committed(rel).to_vec())
        .unwrap_or_else(|_| panic!("vectors/corpus/{rel} is not UTF-8"))
}

/// The committed valid frames: every file at the top of the corpus with a root's extension.
fn committed_frames() -> Vec<CorpusFile> {
    let names = list_files(&corpus_dir()).expect("vectors/corpus can be listed");
    names
        .into_iter()
        .filter(|n| !n.contains('/') && root_name(extension(n)).is_some())
        .map(|n| {
            let bytes = committed(&n);
            (n, bytes)
        })
        .collect()
}

fn checked<R: Root>(file: &str) -> Frame<R> {
    assert_eq!(
        extension(file),
        R::EXTENSION,
        "{file} is not a {} frame",
        R::NAME
    );
    Frame::<R>::check(committed(file))
        .unwrap_or_else(|v| panic!("committed frame {file} does not pass its reader: {v}"))
}

fn refused<R: Root>(name: &str) -> ProtocolViolation {
    match Frame::<R>::check(committed(&format!("malformed/{name}.bin"))) {
        Ok(_) => panic!("malformed frame {name} passes the {} reader", R::NAME),
        Err(v) => v,
    }
}

fn field_violation(v: &ProtocolViolation) -> (Site, Fault) {
    match v {
        ProtocolViolation::Field { site, fault } => (*site, fault.clone()),
        other => panic!("expected a field violation, got {other:?}"),
    }
}

/// A diff-like excerpt around the first line where `committed` and `regenerated` differ.
fn diff_excerpt(committed: &str, regenerated: &str) -> String {
    let old: Vec<&str> = committed.lines().collect();
    let new: Vec<&str> = regenerated.lines().collect();
    let Some(first) = (0..old.len().max(new.len())).find(|&i| old.get(i) != new.get(i)) else {
        return String::from("(the texts differ only in their line endings)");
    };
    let mut out = format!(
        "first difference at line {} (committed {} lines, regenerated {} lines):\n",
        first + 1,
        old.len(),
        new.len()
    );
    for line in &old[first.saturating_sub(3)..first] {
        out.push_str(&format!("  {line}\n"));
    }
    for line in old.iter().skip(first).take(6) {
        out.push_str(&format!("- {line}\n"));
    }
    for line in new.iter().skip(first).take(6) {
        out.push_str(&format!("+ {line}\n"));
    }
    out
}

// ===== Views of the committed frames =====

fn subscription_rows<'a>(frame: &'a Frame<ServerMessageRoot>) -> SubscriptionRows<'a> {
    frame
        .view()
        .body_as_subscription_rows()
        .expect("a SubscriptionRows frame")
}

fn cell_at<'a>(rows: &SubscriptionRows<'a>, row: usize, column: usize) -> Cell<'a> {
    rows.batch().rows().get(row).cells().get(column)
}

fn command_outcome<'a>(frame: &'a Frame<ServerMessageRoot>) -> CommandOutcome<'a> {
    frame
        .view()
        .body_as_reply()
        .and_then(|r| r.body_as_command_outcome())
        .expect("a Reply holding a CommandOutcome")
}

fn f32_bits(cell: &Cell<'_>) -> u32 {
    cell.value_as_f32_cell()
        .and_then(|c| c.value())
        .expect("a present F32Cell")
        .to_bits()
}

fn f64_bits(cell: &Cell<'_>) -> u64 {
    cell.value_as_f64_cell()
        .and_then(|c| c.value())
        .expect("a present F64Cell")
        .to_bits()
}

// ===== The files against the builders =====

#[test]
fn f_1_corpus_files_match_their_builders() {
    let built = corpus_files();
    let wanted: BTreeSet<String> = built.iter().map(|(n, _)| n.clone()).collect();
    let found = list_files(&corpus_dir()).expect("vectors/corpus can be listed");
    let missing: Vec<&String> = wanted.difference(&found).collect();
    let stray: Vec<&String> = found.difference(&wanted).collect();
    assert!(
        missing.is_empty() && stray.is_empty(),
        "vectors/corpus is out of step with its builders: missing {missing:?}, stray {stray:?}; \
         {REGENERATE}"
    );
    let frames = valid_frames();
    let malformed = malformed_frames();
    let mut differing = Vec::new();
    for (name, bytes) in &frames {
        if committed(name) != *bytes {
            differing.push(name.clone());
        }
    }
    for m in &malformed {
        let rel = format!("malformed/{}", m.file_name());
        if committed(&rel) != m.bytes {
            differing.push(rel);
        }
    }
    assert!(
        differing.is_empty(),
        "the builders no longer produce these committed frames byte for byte: {differing:?}; \
         {REGENERATE}"
    );
}

#[test]
fn f_1_corpus_covers_every_root_and_enough_frames() {
    let frames = valid_frames();
    assert!(frames.len() >= 45, "only {} valid frames", frames.len());
    for (ext, name) in ROOT_EXTENSIONS {
        let n = frames.iter().filter(|(f, _)| extension(f) == *ext).count();
        assert!(n > 0, "no corpus frame of root {name}");
    }
    let mut names = BTreeSet::new();
    for (name, _) in &frames {
        assert!(names.insert(name.clone()), "two frames named {name}");
    }
    let mut malformed = BTreeSet::new();
    for m in malformed_frames() {
        assert!(
            malformed.insert(m.name),
            "two malformed frames named {}",
            m.name
        );
    }
}

#[test]
fn f_1_corpus_report_matches() {
    let regenerated =
        try_report_text(&committed_frames()).unwrap_or_else(|e| panic!("{e}; {REGENERATE}"));
    let committed = committed_text("report.txt");
    if regenerated != committed {
        panic!(
            "reading the committed frames no longer gives the committed report.txt\n{}\n{REGENERATE}",
            diff_excerpt(&committed, &regenerated)
        );
    }
    let built = report_text(&valid_frames());
    assert!(
        built == committed,
        "the builders' report differs from report.txt\n{}\n{REGENERATE}",
        diff_excerpt(&committed, &built)
    );
    let listed = committed
        .lines()
        .filter(|l| l.starts_with("FRAME "))
        .count();
    assert_eq!(listed, committed_frames().len());
}

#[test]
fn f_3_malformed_corpus_gives_exactly_its_violations() {
    let tsv = committed_text("malformed.tsv");
    let built: Vec<_> = malformed_frames();
    let mut seen = BTreeSet::new();
    for line in tsv.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        assert_eq!(
            cols.len(),
            4,
            "malformed.tsv line {line:?} has not four columns"
        );
        let (name, root, rule, display) = (cols[0], cols[1], cols[2], cols[3]);
        let ext = ROOT_EXTENSIONS
            .iter()
            .find(|(_, r)| *r == root)
            .map(|(e, _)| *e)
            .unwrap_or_else(|| panic!("malformed.tsv names an unknown root {root}"));
        let bytes = committed(&format!("malformed/{name}.bin"));
        let violation = match check_as(ext, bytes) {
            Some(Err(v)) => v,
            Some(Ok(_)) => panic!("malformed frame {name} passes the {root} reader"),
            None => unreachable!(),
        };
        assert_eq!(violation.rule(), rule, "{name}: {violation}");
        assert_eq!(tsv_escape(&violation.to_string()), display, "{name}");
        let m = built
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("malformed.tsv names {name}, which no builder makes"));
        assert_eq!(m.root(), root, "{name}");
        assert_eq!(m.expected.rule(), rule, "{name}");
        assert!(
            m.expected.matches(root, &violation),
            "{name}: expected {:?}, got {violation:?}",
            m.expected
        );
        assert!(seen.insert(name.to_string()), "{name} is listed twice");
    }
    let all: BTreeSet<String> = built.iter().map(|m| m.name.to_string()).collect();
    assert_eq!(
        seen, all,
        "malformed.tsv and the builders list other frames; {REGENERATE}"
    );
}

// ===== F-3: frames that cannot be read at all =====

#[test]
fn f_3_truncated_frame_is_refused() {
    let v = refused::<ServerMessageRoot>("truncated-below-eight-bytes");
    assert_eq!(
        v,
        ProtocolViolation::FrameTooShort {
            root: "ServerMessage",
            len: 5
        }
    );
    assert_eq!(v.rule(), "F-3");

    let v = refused::<ServerMessageRoot>("truncated-in-half");
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                root: "ServerMessage",
                error: InvalidFlatbuffer::RangeOutOfBounds { .. }
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.rule(), "F-3");
}

#[test]
fn f_3_wrong_identifier_is_refused() {
    let v = refused::<UploadReplyRoot>("identifier-server-frame-read-as-upload-reply");
    assert_eq!(
        v,
        ProtocolViolation::WrongIdentifier {
            root: "UploadReply",
            expected: *b"NXUR",
            found: *b"NXSM"
        }
    );
    assert_eq!(v.rule(), "F-3");
    // The same bytes are a valid server frame.
    let bytes = committed("malformed/identifier-server-frame-read-as-upload-reply.bin");
    assert!(Frame::<ServerMessageRoot>::check(bytes).is_ok());

    let v = refused::<ServerMessageRoot>("identifier-bytes-changed");
    assert_eq!(
        v,
        ProtocolViolation::WrongIdentifier {
            root: "ServerMessage",
            expected: *b"NXSM",
            found: *b"NXQQ"
        }
    );
    assert_eq!(v.rule(), "F-3");
}

#[test]
fn f_3_bad_offset_is_refused() {
    let v = refused::<ServerMessageRoot>("offset-root-past-end");
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                root: "ServerMessage",
                error: InvalidFlatbuffer::RangeOutOfBounds { .. }
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.rule(), "F-3");

    let v = refused::<ServerMessageRoot>("offset-vtable-out-of-range");
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                root: "ServerMessage",
                error: InvalidFlatbuffer::SignedOffsetOutOfBounds { .. }
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.rule(), "F-3");
}

#[test]
fn f_3_invalid_utf8_string_is_refused() {
    let v = refused::<ServerMessageRoot>("utf8-invalid-string");
    assert!(
        matches!(
            &v,
            ProtocolViolation::Malformed {
                root: "ServerMessage",
                error: InvalidFlatbuffer::Utf8Error { .. }
            }
        ),
        "{v:?}"
    );
    assert_eq!(v.rule(), "F-3");
}

#[test]
fn f_3_oversized_frame_is_refused() {
    let bytes = committed("malformed/oversized-frame.bin");
    assert!(bytes.len() > FRAME_LIMIT);
    let v = refused::<UploadMessageRoot>("oversized-frame");
    assert_eq!(
        v,
        ProtocolViolation::FrameTooLarge {
            root: "UploadMessage",
            len: bytes.len(),
            limit: FRAME_LIMIT
        }
    );
    assert_eq!(v.rule(), "F-3");
}

// ===== F-4: frames that verify but break the schema's rules =====

#[test]
fn f_4_none_union_is_a_violation() {
    let v = refused::<ServerMessageRoot>("union-none");
    assert_eq!(
        field_violation(&v),
        (Site::new("ServerMessage", "body"), Fault::NoneUnion)
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_undeclared_union_is_a_violation() {
    let v = refused::<ServerMessageRoot>("union-undeclared-discriminant");
    assert_eq!(
        field_violation(&v),
        (
            Site::new("ServerMessage", "body"),
            Fault::UndeclaredUnion { tag: 200 }
        )
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_missing_required_union_is_a_violation() {
    let v = refused::<ServerMessageRoot>("union-required-missing");
    match &v {
        ProtocolViolation::Malformed {
            root: "ServerMessage",
            error: InvalidFlatbuffer::MissingRequiredField { required, .. },
        } => assert_eq!(required, "body"),
        other => panic!("expected a missing required member, got {other:?}"),
    }
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_undeclared_enum_is_a_violation() {
    let v = refused::<ServerMessageRoot>("enum-undeclared-value");
    assert_eq!(
        field_violation(&v),
        (
            Site::new("RequestRejected", "rejection"),
            Fault::UndeclaredEnum { value: 99 }
        )
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_absent_required_scalar_is_a_violation() {
    let v = refused::<ServerMessageRoot>("required-scalar-absent");
    assert_eq!(
        field_violation(&v),
        (Site::new("RequestCancelled", "stage"), Fault::Absent)
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_forbidden_zero_is_a_violation() {
    let v = refused::<ServerMessageRoot>("zero-reply-request-id");
    assert_eq!(
        field_violation(&v),
        (Site::new("Reply", "request_id"), Fault::Zero)
    );
    assert_eq!(v.rule(), "F-4");

    let v = refused::<ClientMessageRoot>("zero-producer");
    assert_eq!(
        field_violation(&v),
        (Site::new("CloseIngestorRequest", "producer"), Fault::Zero)
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_forbidden_empty_is_a_violation() {
    let v = refused::<ServerMessageRoot>("empty-row-batch");
    assert_eq!(
        field_violation(&v),
        (Site::new("RowBatch", "rows"), Fault::Empty)
    );
    assert_eq!(v.rule(), "F-4");
}

#[test]
fn f_4_wrong_fixed_length_is_a_violation() {
    let v = refused::<BackupDownloadMessageRoot>("length-fingerprint-31-bytes");
    assert_eq!(
        field_violation(&v),
        (
            Site::new("Fingerprint", "bytes"),
            Fault::Length {
                expected: 32,
                found: 31
            }
        )
    );
    assert_eq!(v.rule(), "F-4");
}

// ===== Spot checks through the views =====

#[test]
fn f_5_absent_and_present_zero_stay_distinct_in_the_corpus() {
    let absent = checked::<ClientMessageRoot>("client-command-no-position.nxcm");
    let zero = checked::<ClientMessageRoot>("client-command-position-zero.nxcm");
    let position = |f: &Frame<ClientMessageRoot>| {
        f.view()
            .request_as_command_request()
            .expect("a CommandRequest")
            .expected_transaction_position()
    };
    assert_eq!(position(&absent), None);
    assert_eq!(position(&zero), Some(0));

    let absent = checked::<ServerMessageRoot>("server-reply-command-completed-domain-backup.nxsm");
    let zero = checked::<ServerMessageRoot>("server-reply-command-completed-cluster-backup.nxsm");
    let users =
        |f: &Frame<ServerMessageRoot>| command_outcome(f).backup().expect("a backup").users();
    assert_eq!(users(&absent), None);
    assert_eq!(users(&zero), Some(0));

    let absent = checked::<UploadReplyRoot>("upload-reply-failed-no-request.nxur");
    let zero = checked::<UploadReplyRoot>("upload-reply-failed-request-zero.nxur");
    assert_eq!(absent.view().request_id(), None);
    assert_eq!(zero.view().request_id(), Some(0));
    let assigned = |f: &Frame<UploadReplyRoot>| {
        f.view()
            .disposition_as_upload_failed()
            .expect("an UploadFailed")
            .assigned_version()
    };
    assert_eq!(assigned(&absent), None);
    assert_eq!(assigned(&zero), Some(u64::MAX));

    let absent = checked::<RestoreReplyRoot>("restore-reply-failed-no-request.nxrr");
    let zero = checked::<RestoreReplyRoot>("restore-reply-failed-request-zero.nxrr");
    assert_eq!(absent.view().request_id(), None);
    assert_eq!(zero.view().request_id(), Some(0));

    // A present zero enum (the first declared value) is not an absent one.
    let cancelled = checked::<ServerMessageRoot>("server-reply-request-cancelled.nxsm");
    let stage = cancelled
        .view()
        .body_as_reply()
        .and_then(|r| r.body_as_request_cancelled())
        .expect("a RequestCancelled")
        .stage();
    assert_eq!(stage, Some(CancellationStage::BeforeAdmission));
    let settle = checked::<ServerMessageRoot>("server-reply-emitter-settle-no-disposition.nxsm");
    let disposition = settle
        .view()
        .body_as_reply()
        .and_then(|r| r.body_as_settle_emitter_batch_outcome())
        .expect("a SettleEmitterBatchOutcome")
        .disposition();
    assert_eq!(disposition, None);

    // The owned copies keep the difference too.
    assert_eq!(absent.unpack().request_id, None);
    assert_eq!(zero.unpack().request_id, Some(0));
}

#[test]
fn r_5_float_bits_survive_in_the_corpus() {
    let frame = checked::<ServerMessageRoot>("server-subscription-rows-readings.nxsm");
    let rows = subscription_rows(&frame);
    let (single, double, triple) = (8, 9, 14);
    let expected: [(u32, u64); 6] = [
        (F32_NEG_ZERO, F64_NEG_ZERO),
        (F32_NAN_PAYLOAD, F64_NAN_PAYLOAD),
        (F32_MIN_SUBNORMAL, F64_MIN_SUBNORMAL),
        (F32_MAX_FINITE, F64_MAX_FINITE),
        (F32_POS_INF, F64_NEG_INF),
        (F32_NEG_INF, F64_POS_INF),
    ];
    for (row, (f32_expected, f64_expected)) in expected.iter().enumerate() {
        assert_eq!(
            f32_bits(&cell_at(&rows, row, single)),
            *f32_expected,
            "row {row}"
        );
        assert_eq!(
            f64_bits(&cell_at(&rows, row, double)),
            *f64_expected,
            "row {row}"
        );
    }
    let neg_zero = cell_at(&rows, 0, single)
        .value_as_f32_cell()
        .and_then(|c| c.value())
        .expect("a present F32Cell");
    assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
    let nan = cell_at(&rows, 1, double)
        .value_as_f64_cell()
        .and_then(|c| c.value())
        .expect("a present F64Cell");
    assert!(nan.is_nan() && nan.to_bits() & 0x000f_ffff_ffff_ffff == 0x0008_0000_0000_0001);

    let listed = cell_at(&rows, 1, triple)
        .value_as_list_cell()
        .expect("a ListCell")
        .elements();
    let bits: Vec<u64> = listed.iter().map(|c| f64_bits(&c)).collect();
    assert_eq!(bits, [F64_POS_INF, F64_NAN_PAYLOAD, F64_NEG_ZERO]);

    let attached = checked::<ServerMessageRoot>("server-reply-domain-clock-attached-paced.nxsm");
    let clock = attached
        .view()
        .body_as_reply()
        .and_then(|r| r.body_as_domain_clock_attach_outcome())
        .and_then(|o| o.disposition_as_domain_clock_attached())
        .expect("a DomainClockAttached")
        .clock();
    assert_eq!(clock.generation(), u64::MAX);
    let rate = clock
        .state_as_paced_domain_clock()
        .and_then(|p| p.time_rate())
        .expect("a paced clock with a rate");
    assert_eq!(rate.to_bits(), f64::MIN_POSITIVE.to_bits());
}

#[test]
fn r_3_values_keep_their_types_in_the_corpus() {
    let frame = checked::<ServerMessageRoot>("server-subscription-rows-readings.nxsm");
    let rows = subscription_rows(&frame);
    let u = |row, col| cell_at(&rows, row, col);

    // Every integer width at both extremes, each in its own cell type.
    assert_eq!(u(0, 0).value_as_u8_cell().map(|c| c.value()), Some(u8::MIN));
    assert_eq!(u(1, 0).value_as_u8_cell().map(|c| c.value()), Some(u8::MAX));
    assert_eq!(u(0, 1).value_as_i8_cell().map(|c| c.value()), Some(i8::MIN));
    assert_eq!(u(1, 1).value_as_i8_cell().map(|c| c.value()), Some(i8::MAX));
    assert_eq!(
        u(0, 2).value_as_u16_cell().map(|c| c.value()),
        Some(u16::MIN)
    );
    assert_eq!(
        u(1, 2).value_as_u16_cell().map(|c| c.value()),
        Some(u16::MAX)
    );
    assert_eq!(
        u(0, 3).value_as_i16_cell().map(|c| c.value()),
        Some(i16::MIN)
    );
    assert_eq!(
        u(1, 3).value_as_i16_cell().map(|c| c.value()),
        Some(i16::MAX)
    );
    assert_eq!(
        u(0, 4).value_as_u32_cell().map(|c| c.value()),
        Some(u32::MIN)
    );
    assert_eq!(
        u(1, 4).value_as_u32_cell().map(|c| c.value()),
        Some(u32::MAX)
    );
    assert_eq!(
        u(0, 5).value_as_i32_cell().map(|c| c.value()),
        Some(i32::MIN)
    );
    assert_eq!(
        u(1, 5).value_as_i32_cell().map(|c| c.value()),
        Some(i32::MAX)
    );
    assert_eq!(
        u(0, 6).value_as_u64_cell().map(|c| c.value()),
        Some(u64::MIN)
    );
    assert_eq!(
        u(1, 6).value_as_u64_cell().map(|c| c.value()),
        Some(u64::MAX)
    );
    assert_eq!(
        u(0, 7).value_as_i64_cell().map(|c| c.value()),
        Some(i64::MIN)
    );
    assert_eq!(
        u(1, 7).value_as_i64_cell().map(|c| c.value()),
        Some(i64::MAX)
    );
    // A cell of one type is not readable as another.
    assert!(u(1, 6).value_as_i64_cell().is_none());
    assert!(u(1, 7).value_as_u64_cell().is_none());

    // Either side of 2^53.
    let wide_u: Vec<u64> = (2..5)
        .map(|r| u(r, 6).value_as_u64_cell().expect("a U64Cell").value())
        .collect();
    assert_eq!(wide_u, [TWO_POW_53 - 1, TWO_POW_53, TWO_POW_53 + 1]);
    let t = TWO_POW_53 as i64;
    let wide_i: Vec<i64> = (2..6)
        .map(|r| u(r, 7).value_as_i64_cell().expect("an I64Cell").value())
        .collect();
    assert_eq!(wide_i, [t - 1, -t, -(t + 1), t + 1]);

    // DATETIME extremes.
    let stamp = |r| {
        u(r, 12)
            .value_as_datetime_cell()
            .expect("a DatetimeCell")
            .unix_nanos()
    };
    assert_eq!((stamp(0), stamp(1)), (i64::MIN, i64::MAX));

    // Text with NUL and multi-byte characters, empty text; bytes that are not UTF-8, empty bytes.
    let label = |r| {
        u(r, 11)
            .value_as_string_cell()
            .expect("a StringCell")
            .value()
    };
    assert_eq!(label(0), "");
    assert_eq!(label(1), NUL_TEXT);
    assert!(label(1).contains('\0') && label(1).len() > label(1).chars().count());
    let blob = |r| {
        u(r, 13)
            .value_as_bytes_cell()
            .expect("a BytesCell")
            .value()
            .bytes()
    };
    assert!(blob(0).is_empty());
    assert_eq!(blob(1), NON_UTF8);
    assert!(std::str::from_utf8(blob(1)).is_err());

    // A list of fixed lists, and the null and redacted cells.
    let tracks = u(1, 15)
        .value_as_list_cell()
        .expect("a ListCell")
        .elements();
    let pairs: Vec<Vec<i32>> = tracks
        .iter()
        .map(|pair| {
            pair.value_as_list_cell()
                .expect("an inner ListCell")
                .elements()
                .iter()
                .map(|c| c.value_as_i32_cell().expect("an I32Cell").value())
                .collect()
        })
        .collect();
    assert_eq!(pairs, [vec![i32::MIN, i32::MAX], vec![0, -1]]);
    assert_eq!(u(0, 16).value_type(), CellValue::NullCell);
    assert_eq!(u(1, 16).value_type(), CellValue::StringCell);
    assert_eq!(u(0, 17).value_type(), CellValue::RedactedCell);
    let key = rows.batch().branch_key().expect("a branch key").cells();
    let kinds: Vec<CellValue> = key.iter().map(|c| c.value_type()).collect();
    assert_eq!(
        kinds,
        [
            CellValue::NullCell,
            CellValue::RedactedCell,
            CellValue::U16Cell
        ]
    );

    // Identities at their extremes.
    let cancel = checked::<ClientMessageRoot>("client-cancel-max.nxcm");
    let target = cancel
        .view()
        .request_as_cancel_request()
        .expect("a CancelRequest")
        .target_request_id();
    assert_eq!(target, u64::MAX);
    let command = checked::<ClientMessageRoot>("client-command-long-reference-preview.nxcm");
    assert_eq!(command.view().request_id(), u64::MAX);
    let reference = command
        .view()
        .request_as_command_request()
        .expect("a CommandRequest")
        .execution_reference();
    assert_eq!(reference.len(), 128);
    assert_eq!(reference, long_reference());

    let failed = checked::<ServerMessageRoot>("server-reply-command-failed-diagnostics.nxsm");
    let spans: Vec<Option<(u32, u32)>> = command_outcome(&failed)
        .diagnostics()
        .iter()
        .map(|d| d.span().map(|s| (s.start(), s.end())))
        .collect();
    assert_eq!(spans, [Some((7, 14)), Some((u32::MAX, u32::MAX)), None]);
}

#[test]
fn r_3_corpus_rows_match_their_announced_schema() {
    fn accepts(field: &RowField<'_>, cell: &Cell<'_>, top_level: bool) -> bool {
        let kind = cell.value_type();
        if top_level && field.sensitive() {
            return kind == CellValue::RedactedCell;
        }
        if kind == CellValue::NullCell {
            return top_level && field.nullable();
        }
        fits(&field.field_type(), cell)
    }
    fn fits(ty: &FieldType<'_>, cell: &Cell<'_>) -> bool {
        if let Some(s) = ty.shape_as_scalar_field_type() {
            let want = match s.scalar().expect("a declared scalar") {
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
                _ => return false,
            };
            return cell.value_type() == want;
        }
        let Some(list) = cell.value_as_list_cell() else {
            return false;
        };
        if let Some(fixed) = ty.shape_as_fixed_list_field_type() {
            let element = fixed.element();
            return list.elements().len() == fixed.length() as usize
                && list.elements().iter().all(|c| fits(&element, &c));
        }
        let element = ty
            .shape_as_list_field_type()
            .expect("a scalar, fixed list or list")
            .element();
        list.elements().iter().all(|c| fits(&element, &c))
    }

    let pairs = [
        (
            "server-reply-subscription-opened-readings.nxsm",
            &[
                "server-subscription-rows-readings.nxsm",
                "server-subscription-rows-readings-device.nxsm",
            ][..],
        ),
        (
            "server-reply-subscription-opened-summary.nxsm",
            &["server-subscription-rows-summary.nxsm"][..],
        ),
    ];
    for (opened_file, rows_files) in pairs {
        let opened_frame = checked::<ServerMessageRoot>(opened_file);
        let opened = opened_frame
            .view()
            .body_as_reply()
            .and_then(|r| r.body_as_subscribe_outcome())
            .and_then(|o| o.disposition_as_subscription_opened())
            .expect("a SubscriptionOpened");
        let schema = opened.schema();
        for rows_file in rows_files {
            let rows_frame = checked::<ServerMessageRoot>(rows_file);
            let rows = subscription_rows(&rows_frame);
            assert_eq!(rows.subscription().name(), opened.subscription().name());
            assert_eq!(
                rows.subscription().generation(),
                opened.subscription().generation()
            );
            let batch = rows.batch();
            match (schema.branch(), batch.branch_key()) {
                (Some(branch), Some(key)) => {
                    assert_eq!(branch.fields().len(), key.cells().len(), "{rows_file}");
                    for (f, c) in branch.fields().iter().zip(key.cells().iter()) {
                        assert!(accepts(&f, &c, true), "{rows_file}: key field {}", f.name());
                    }
                }
                (None, None) => {}
                _ => panic!("{rows_file}: branch key present iff the relay is branched"),
            }
            for (i, row) in batch.rows().iter().enumerate() {
                assert_eq!(
                    row.cells().len(),
                    schema.fields().len(),
                    "{rows_file} row {i}"
                );
                for (f, c) in schema.fields().iter().zip(row.cells().iter()) {
                    assert!(
                        accepts(&f, &c, true),
                        "{rows_file} row {i}: field {}",
                        f.name()
                    );
                }
            }
        }
    }
    // The builders' schema and rows agree with what the files hold.
    assert_eq!(
        readings_schema().fields.len(),
        readings_rows()[0].cells.len()
    );
}

#[test]
fn f_4_corpus_carries_every_union_variant_and_enum_value_of_the_schema() {
    let c = nervix_conformance::coverage::coverage(&valid_frames());
    assert!(
        c.declared.len() > 300,
        "the schema declares {} values",
        c.declared.len()
    );
    let missing: Vec<String> = c
        .missing()
        .iter()
        .map(|(t, v)| format!("{t}.{v}"))
        .collect();
    assert!(
        missing.is_empty(),
        "no corpus frame carries:\n{}",
        missing.join("\n")
    );
}

#[test]
fn f_4_coverage_check_notices_a_value_no_frame_carries() {
    let mut frames = valid_frames();
    let full = nervix_conformance::coverage::coverage(&frames);
    let live = ("BackupCutKind".to_string(), "Live".to_string());
    assert!(full.declared.contains(&live), "read from the schema");
    // Drop the frames that carry it, one at a time, until none does.
    let mut dropped = 0;
    loop {
        let c = nervix_conformance::coverage::coverage(&frames);
        assert_eq!(c.declared, full.declared);
        let Some(carrier) = c.carried.get(&live).cloned() else {
            assert!(c.missing().contains(&&live));
            break;
        };
        frames.retain(|(n, _)| *n != carrier);
        dropped += 1;
        assert!(dropped < 50, "too many carriers");
    }
    assert!(dropped >= 1);
}

#[test]
fn f_1_corpus_references_span_every_allowed_length_and_character() {
    let every = nervix_conformance::corpus::reference_of_every_class();
    assert_eq!(every.len(), 128);
    for c in nervix_conformance::corpus::REFERENCE_CLASSES.chars() {
        assert!(
            every.contains(c),
            "{c:?} is missing from the long reference"
        );
    }
    for (name, expected) in [("one-byte", "7"), ("every-class", every.as_str())] {
        let cm = checked::<ClientMessageRoot>(&format!("client-command-reference-{name}.nxcm"));
        let sent = cm.view().request_as_command_request().unwrap();
        assert_eq!(sent.execution_reference(), expected);
        let sm =
            checked::<ServerMessageRoot>(&format!("server-reply-command-reference-{name}.nxsm"));
        assert_eq!(command_outcome(&sm).execution_reference(), expected);
        let bq =
            checked::<BackupDownloadRequestRoot>(&format!("backup-request-reference-{name}.nxbq"));
        assert_eq!(bq.view().execution_reference(), expected);
        let rm = checked::<RestoreMessageRoot>(&format!("restore-start-reference-{name}.nxrm"));
        let start = rm.view().part_as_restore_start().unwrap();
        assert_eq!(start.execution_reference(), expected);
        assert_eq!(start.total_bytes(), u64::MAX);
    }
}

#[test]
fn f_1_corpus_chunks_and_totals_reach_their_boundaries() {
    let every: Vec<u8> = (0..=255u8).collect();
    for (name, bytes) in [("00", vec![0u8]), ("ff", vec![0xff]), ("every-byte", every)] {
        let up = checked::<UploadMessageRoot>(&format!("upload-chunk-{name}.nxum"));
        let chunk = up.view().part_as_upload_chunk().unwrap();
        assert_eq!(chunk.bytes().bytes(), &bytes[..]);
        let bd =
            checked::<BackupDownloadMessageRoot>(&format!("backup-download-chunk-{name}.nxbd"));
        let chunk = bd.view().part_as_backup_archive_chunk().unwrap();
        assert_eq!(chunk.bytes().bytes(), &bytes[..]);
        let rm = checked::<RestoreMessageRoot>(&format!("restore-chunk-{name}.nxrm"));
        let chunk = rm.view().part_as_restore_chunk().unwrap();
        assert_eq!(chunk.bytes().bytes(), &bytes[..]);
        let sm =
            checked::<ServerMessageRoot>(&format!("server-reply-transfer-part-chunk-{name}.nxsm"));
        let part = sm
            .view()
            .body_as_reply()
            .unwrap()
            .body_as_transfer_part()
            .unwrap();
        assert_eq!(part.chunk().bytes(), &bytes[..]);
    }
    for total in [1, u64::MAX] {
        let up = checked::<UploadMessageRoot>(&format!("upload-start-total-{total}.nxum"));
        assert_eq!(
            up.view().part_as_upload_start().unwrap().total_bytes(),
            total
        );
    }
    for (file, total) in [
        ("backup-download-start-total-1.nxbd", 1),
        ("backup-download-start.nxbd", u64::MAX),
    ] {
        let bd = checked::<BackupDownloadMessageRoot>(file);
        let start = bd.view().part_as_backup_archive_start().unwrap();
        assert_eq!(start.total_bytes(), total, "{file}");
    }
    for (file, total) in [
        ("restore-start.nxrm", 1),
        ("restore-start-reference-one-byte.nxrm", u64::MAX),
    ] {
        let rm = checked::<RestoreMessageRoot>(file);
        let start = rm.view().part_as_restore_start().unwrap();
        assert_eq!(start.total_bytes(), total, "{file}");
    }
    for total in [1, 64 * 1024 * 1024, u64::MAX] {
        let sm =
            checked::<ServerMessageRoot>(&format!("server-reply-transfer-part-total-{total}.nxsm"));
        let part = sm
            .view()
            .body_as_reply()
            .unwrap()
            .body_as_transfer_part()
            .unwrap();
        assert_eq!(part.total_bytes(), total);
        assert_eq!(part.offset(), total - 1, "the last byte of the total");
    }
}

/// The report of one committed frame.
fn frame_report(file: &str) -> String {
    match check_as(extension(file), committed(file)) {
        Some(Ok(report)) => report,
        other => panic!("{file}: {other:?}"),
    }
}

#[test]
fn f_1_corpus_carries_the_values_a_careful_reader_must_survive() {
    // Values the release's own conformance report exercises, each in a hand-built frame.
    let long_domain = format!("request.domain=str:{}", "64".repeat(128));
    let expected: &[(&str, &str)] = &[
        (
            "client-command-position-zero.nxcm",
            "request.expected_transaction_position=0",
        ),
        (
            "client-commit-preview-position-max.nxcm",
            "request.expected_transaction_position=18446744073709551615",
        ),
        (
            "client-commit-preview-position-max.nxcm",
            "request.expected_preview.position=18446744073709551615",
        ),
        ("client-detach-domain-clock-long-domain.nxcm", &long_domain),
        ("client-suggest-multibyte-cursor.nxcm", "request.cursor=13"),
        (
            "server-reply-suggest-multibyte-edit.nxsm",
            "body.body.suggestions[0].edit.start=11",
        ),
        (
            "server-reply-command-failed-diagnostics.nxsm",
            "body.body.diagnostics[1].span.start=4294967295",
        ),
        (
            "server-reply-command-failed-diagnostics.nxsm",
            "body.body.diagnostics[2].span=none",
        ),
        (
            "server-domain-clock-observed-paced.nxsm",
            "body.clock.state.period_nanos=1",
        ),
        (
            "server-domain-clock-observed-paced.nxsm",
            "body.clock.state.time_rate=f64:0010000000000000",
        ),
        (
            "server-domain-clock-observed-paced.nxsm",
            "body.clock.state.logical_origin_unix_nanos=-9223372036854775808",
        ),
        (
            "server-domain-clock-observed-paced.nxsm",
            "body.clock.state.utc_anchor_unix_nanos=9223372036854775807",
        ),
        (
            "server-reply-domain-list.nxsm",
            "body.body.domains[0].pace.skew_nanos=0",
        ),
        (
            "server-domain-clock-ticked.nxsm",
            "body.generation=18446744073709551615",
        ),
        (
            "server-reply-command-completed-cluster-backup.nxsm",
            "body.body.backup.total_bytes=18446744073709551615",
        ),
        (
            "server-reply-command-completed-cluster-backup.nxsm",
            "body.body.backup.resources=Omitted",
        ),
        (
            "server-reply-command-completed-cluster-backup.nxsm",
            "body.body.backup.users=0",
        ),
        (
            "server-reply-command-completed-cluster-backup.nxsm",
            "body.body.backup.domains[0].revision=18446744073709551615",
        ),
        (
            "server-reply-command-completed-cluster-backup.nxsm",
            "body.body.backup.domains[0].section_bytes=18446744073709551615",
        ),
        (
            "server-reply-command-completed-domain-backup.nxsm",
            "body.body.backup.domains[0].cut.engaged_at=-9223372036854775808",
        ),
        (
            "server-reply-command-completed-domain-backup.nxsm",
            "body.body.backup.domains[1].cut.engaged_at=none",
        ),
        (
            "server-reply-command-completed-cluster-backup.nxsm",
            "body.body.backup.domains[2].cut.released_at=0",
        ),
    ];
    for (file, line) in expected {
        let report = frame_report(file);
        assert!(
            report.lines().any(|l| l == *line),
            "{file} does not carry {line}"
        );
    }
}

#[test]
fn f_4_corpus_gives_every_nonempty_vector_its_shortest_length() {
    let c = nervix_conformance::coverage::coverage(&valid_frames());
    assert!(
        c.nonempty
            .contains(&("TransferPart".to_string(), "chunk".to_string())),
        "read from the schema's marks"
    );
    let not_shortest: Vec<String> = c
        .nonempty
        .iter()
        .filter(|m| c.shortest.get(*m).map(|(n, _)| *n) != Some(1))
        .map(|(t, f)| format!("{t}.{f}: {:?}", c.shortest.get(&(t.clone(), f.clone()))))
        .collect();
    assert!(
        not_shortest.is_empty(),
        "no corpus frame gives these [nonempty] vectors exactly one entry:\n{}",
        not_shortest.join("\n")
    );
}

#[test]
fn f_1_corpus_carries_the_edges_the_upstream_tests_check() {
    // A leader named by a download's redirect, the largest choice page, an empty query, and a
    // U64 field beside a nullable sensitive one in an emitter's fields and a subscription's
    // schema.
    let hex = |s: &str| {
        format!(
            "str:{}",
            s.bytes().map(|b| format!("{b:02x}")).collect::<String>()
        )
    };
    let expected: Vec<(&str, String)> = vec![
        (
            "backup-download-leader-redirect-leader.nxbd",
            "part=LeaderRedirect".into(),
        ),
        (
            "backup-download-leader-redirect-leader.nxbd",
            format!("part.leader.node={}", hex("node-c")),
        ),
        (
            "backup-download-leader-redirect-leader.nxbd",
            format!(
                "part.leader.grpc_uri={}",
                hex("https://node-c.example:7443")
            ),
        ),
        (
            "backup-download-leader-redirect-leader.nxbd",
            format!(
                "part.leader.web_console_uri={}",
                hex("https://node-c.example:8443")
            ),
        ),
        (
            "client-choice-lookup-page-size-100.nxcm",
            "request.page_size=100".into(),
        ),
        (
            "client-command-empty-query.nxcm",
            "request=CommandRequest".into(),
        ),
        (
            "client-command-empty-query.nxcm",
            "request.query=str:".into(),
        ),
        (
            "client-open-emitter-u64-nullable-sensitive.nxcm",
            "request=OpenEmitterRequest".into(),
        ),
        (
            "client-open-emitter-u64-nullable-sensitive.nxcm",
            "request.expected_fields[0].field_type.shape.scalar=U64".into(),
        ),
        (
            "client-open-emitter-u64-nullable-sensitive.nxcm",
            "request.expected_fields[1].nullable=true".into(),
        ),
        (
            "client-open-emitter-u64-nullable-sensitive.nxcm",
            "request.expected_fields[1].sensitive=true".into(),
        ),
        (
            "server-reply-subscription-opened-nullable-sensitive.nxsm",
            "body.body.disposition=SubscriptionOpened".into(),
        ),
        (
            "server-reply-subscription-opened-nullable-sensitive.nxsm",
            "body.body.disposition.schema.fields[0].field_type.shape.scalar=U64".into(),
        ),
        (
            "server-reply-subscription-opened-nullable-sensitive.nxsm",
            "body.body.disposition.schema.fields[1].nullable=true".into(),
        ),
        (
            "server-reply-subscription-opened-nullable-sensitive.nxsm",
            "body.body.disposition.schema.fields[1].sensitive=true".into(),
        ),
    ];
    for (file, line) in &expected {
        let report = frame_report(file);
        assert!(
            report.lines().any(|l| l == line),
            "{file} does not carry {line}:\n{report}"
        );
    }
}
