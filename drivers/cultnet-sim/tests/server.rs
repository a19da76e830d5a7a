//! The receipt server model against the server rules W-15 to W-32, one clause per test.

use cultnet_receipts::frames::{
    Document, DocumentDelete, DocumentPut, ErrorV1, Hello, Operation, RawValue, WriteAdmitted,
    DOCUMENT_DELETE_V0, DOCUMENT_PUT_V0, ERROR_V1, WRITE_ADMITTED_V0,
};
use cultnet_receipts::hash::put_hash;
use cultnet_receipts::{decode, encode, Frame};
use cultnet_sim::forwarder::Forwarder;
use cultnet_sim::server::{
    str_bytes, Channel, ConnId, Faults, Refusal, Server, ServerConfig, ENTRY_BYTES, TEXT_UNREADABLE,
};
use sha2::{Digest, Sha256};

const R: Channel = Channel::ReliableOrdered;

fn doc(key: &str, payload: u8) -> Document {
    Document {
        schema_id: "notes".to_owned(),
        record_key: key.to_owned(),
        stored_at: "2026-12-04T00:00:00Z".to_owned(),
        payload: RawValue::new(vec![payload & 0x7f]).unwrap(),
        source_runtime_id: None,
        source_agent_id: None,
        source_role: None,
        tags: None,
    }
}

fn put(id: &str, d: Document) -> Vec<u8> {
    encode(&Frame::DocumentPut(DocumentPut {
        message_id: id.to_owned(),
        document: d,
    }))
    .unwrap()
}

fn delete(id: &str, key: &str) -> Vec<u8> {
    encode(&Frame::DocumentDelete(DocumentDelete {
        message_id: id.to_owned(),
        schema_id: "notes".to_owned(),
        record_key: key.to_owned(),
    }))
    .unwrap()
}

fn hello(receipts: bool) -> Vec<u8> {
    let versions = if receipts {
        vec![WRITE_ADMITTED_V0.to_owned(), ERROR_V1.to_owned()]
    } else {
        vec![WRITE_ADMITTED_V0.to_owned()]
    };
    encode(&Frame::Hello(Hello {
        runtime_id: "c".to_owned(),
        runtime_kind: "client".to_owned(),
        agent_id: Some("someone-else".to_owned()),
        supported_message_versions: Some(versions),
        ..Hello::default()
    }))
    .unwrap()
}

fn receipt_conn(s: &mut Server, actor: &str) -> ConnId {
    let c = s.connect(actor, 0);
    s.on_frame(c, R, &hello(true), 0);
    assert!(s.is_receipt_connection(c));
    c
}

/// Every frame due for `conn` at `now`, the server's hello left out.
fn answers(s: &mut Server, conn: ConnId, now: u64) -> Vec<Frame> {
    let mut v = Vec::new();
    while let Some(o) = s.poll_output(now) {
        if o.conn == conn {
            let f = decode(&o.bytes).expect("the server's frames decode");
            if !matches!(f, Frame::Hello(_)) {
                v.push(f);
            }
        }
    }
    v
}

fn admitted(id: &str, key: &str) -> Frame {
    Frame::WriteAdmitted(WriteAdmitted {
        message_id: id.to_owned(),
        operation: Operation::Put,
        schema_id: "notes".to_owned(),
        record_key: key.to_owned(),
    })
}

fn refusal(frame: &Frame) -> (Option<String>, Option<String>, String, Option<String>) {
    match frame {
        Frame::ErrorV1(ErrorV1 {
            message_id,
            error,
            code,
            details,
        }) => (
            message_id.clone(),
            code.as_deref().map(str::to_owned),
            error.clone(),
            details.as_ref().and_then(|d| d.field.clone()),
        ),
        other => panic!("not an error.v1: {other:?}"),
    }
}

fn raw_map(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut v = vec![0x80 | entries.len() as u8];
    for (k, val) in entries {
        v.extend(str_bytes(k));
        v.extend(val);
    }
    v
}

#[test]
fn w_2_the_admission_echoes_a_put_and_a_delete_byte_for_byte() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    // Ids a normalizing or trimming server would rewrite, and a record key with its own spaces.
    let put_id = " e\u{301} ";
    let delete_id = "\u{212B}";
    let mut d = doc(" K\u{212B} ", 1);
    d.schema_id = "notes".to_owned();
    s.on_frame(c, R, &put(put_id, d), 1);
    s.on_frame(c, R, &delete(delete_id, " K\u{212B} "), 2);
    let mut raw = Vec::new();
    while let Some(o) = s.poll_output(2) {
        if o.conn == c && !matches!(decode(&o.bytes), Ok(Frame::Hello(_))) {
            raw.push(o.bytes);
        }
    }
    assert_eq!(raw.len(), 2);
    let expect = [(put_id, Operation::Put), (delete_id, Operation::Delete)];
    for (bytes, (id, operation)) in raw.iter().zip(expect) {
        assert_eq!(
            decode(bytes).unwrap(),
            Frame::WriteAdmitted(WriteAdmitted {
                message_id: id.to_owned(),
                operation,
                schema_id: "notes".to_owned(),
                record_key: " K\u{212B} ".to_owned(),
            })
        );
        let mut id_on_the_wire = str_bytes("messageId");
        id_on_the_wire.extend(str_bytes(id));
        assert!(
            bytes
                .windows(id_on_the_wire.len())
                .any(|w| w == id_on_the_wire),
            "{id:?} byte for byte"
        );
    }
    assert_eq!(s.read("notes", " K\u{212B} "), None, "deleted");
}

#[test]
fn w_15_each_write_on_a_receipt_connection_gets_exactly_one_answer_naming_it() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("a1", doc("k", 1)), 1);
    let mut locked = doc("k", 2);
    locked.schema_id = "locked".to_owned();
    s.on_frame(c, R, &put("a2", locked), 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], admitted("a1", "k"));
    assert_eq!(refusal(&got[1]).0.as_deref(), Some("a2"));
    assert_eq!(refusal(&got[1]).1.as_deref(), Some("write_not_authorized"));
    // Nothing more comes later.
    assert!(answers(&mut s, c, 100_000).is_empty());
}

#[test]
fn w_15_a_connection_without_a_receipt_hello_gets_no_receipt_and_error_v0() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    for h in [None, Some(hello(false))] {
        let c = s.connect("alice", 0);
        if let Some(h) = &h {
            s.on_frame(c, R, h, 0);
        }
        s.on_frame(c, R, &put("a1", doc("k", 1)), 1);
        assert!(
            answers(&mut s, c, 1).is_empty(),
            "no receipt on a legacy connection"
        );
        assert_eq!(s.read("notes", "k"), Some(&[1u8][..]));
        let mut locked = doc("k", 2);
        locked.schema_id = "locked".to_owned();
        s.on_frame(c, R, &put("a2", locked), 2);
        let got = answers(&mut s, c, 2);
        assert!(
            matches!(&got[..], [Frame::ErrorV0(e)] if e.code.as_deref() == Some("write_not_authorized")),
            "{got:?}"
        );
    }
    // A hello after the first write changes nothing.
    let c = s.connect("alice", 0);
    s.on_frame(c, R, &put("a3", doc("k", 3)), 1);
    s.on_frame(c, R, &hello(true), 1);
    assert!(!s.is_receipt_connection(c));
    // A legacy server never makes a receipt connection.
    let mut legacy = Server::new(ServerConfig {
        receipts: false,
        ..ServerConfig::default()
    });
    let c = legacy.connect("alice", 0);
    legacy.on_frame(c, R, &hello(true), 0);
    assert!(!legacy.is_receipt_connection(c));
}

#[test]
fn w_16_the_receipt_comes_only_after_the_commit_is_visible_to_readers() {
    let mut s = Server::new(ServerConfig {
        commit_delay_ms: 100,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("a1", doc("k", 7)), 10);
    assert!(answers(&mut s, c, 109).is_empty());
    assert_eq!(s.read("notes", "k"), None, "not visible before the commit");
    s.on_tick(110);
    assert_eq!(s.read("notes", "k"), Some(&[7u8][..]));
    assert_eq!(answers(&mut s, c, 110), vec![admitted("a1", "k")]);
    // A resend while the commit is pending is answered at the commit, not before.
    s.on_frame(c, R, &put("a2", doc("j", 1)), 200);
    s.on_frame(c, R, &put("a2", doc("j", 1)), 250);
    assert!(answers(&mut s, c, 299).is_empty());
    assert_eq!(
        answers(&mut s, c, 300),
        vec![admitted("a2", "j"), admitted("a2", "j")]
    );
    assert_eq!(s.counters().applied, 2);
}

#[test]
fn w_17_a_refusal_names_the_write_even_when_the_frame_does_not_read() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    // recordKey is an integer: the codec refuses the frame, the id is still read.
    let bad = raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_DELETE_V0)),
        ("messageId", str_bytes("d1")),
        ("schemaId", str_bytes("notes")),
        ("recordKey", vec![0x05]),
    ]);
    s.on_frame(c, R, &bad, 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(
        refusal(&got[0]),
        (
            Some("d1".into()),
            Some("message_invalid".into()),
            Refusal::Unreadable.parts().1.into(),
            Some("message".into())
        )
    );
}

#[test]
fn w_17_a_frame_with_no_readable_id_is_refused_with_a_nil_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    for bad in [
        vec![0xc1],
        raw_map(&[
            ("schemaVersion", str_bytes(DOCUMENT_PUT_V0)),
            ("messageId", vec![0x01]),
        ]),
        raw_map(&[
            ("schemaVersion", str_bytes(DOCUMENT_PUT_V0)),
            ("messageId", str_bytes("")),
        ]),
    ] {
        s.on_frame(c, R, &bad, 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(got.len(), 1);
        assert_eq!(refusal(&got[0]).0, None);
    }
}

/// `frame` with the first occurrence of `from` replaced by `to` (same length).
fn patched(frame: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at = frame
        .windows(from.len())
        .position(|w| w == from)
        .expect("the pattern is in the frame");
    let mut v = frame.to_vec();
    v[at..at + to.len()].copy_from_slice(to);
    v
}

#[test]
fn w_5_a_write_carrying_a_lone_surrogate_is_refused_and_not_applied() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    // U+D800 written as a three-byte sequence: in the id no id can be read, so the refusal
    // names none; in the record key the id still reads and is named.
    let lone = b"a\xED\xA0\x80b";
    let in_id = patched(&put("XSURR", doc("k", 1)), b"XSURR", lone);
    let in_key = patched(&put("p2", doc("XSURR", 1)), b"XSURR", lone);
    s.on_frame(c, R, &in_id, 1);
    s.on_frame(c, R, &in_key, 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 2, "{got:?}");
    for (frame, id) in got.iter().zip([None, Some("p2")]) {
        assert_eq!(
            refusal(frame),
            (
                id.map(str::to_owned),
                Some("message_invalid".into()),
                TEXT_UNREADABLE.into(),
                Some("message".into())
            )
        );
    }
    assert_eq!(s.read("notes", "k"), None);
    assert_eq!(s.counters().applied, 0);
}

#[test]
fn w_17_a_frame_repeating_message_id_is_refused_with_a_nil_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    let mut bytes = put("first", doc("k", 1));
    // Three entries become four; the extra one repeats messageId with another value.
    bytes[0] += 1;
    bytes.extend(str_bytes("messageId"));
    bytes.extend(str_bytes("second"));
    s.on_frame(c, R, &bytes, 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 1);
    let (id, code, _, field) = refusal(&got[0]);
    assert_eq!(
        (id, code.as_deref(), field.as_deref()),
        (None, Some("message_invalid"), Some("message"))
    );
    assert_eq!(s.read("notes", "k"), None);
    assert_eq!(s.remembered(c), Some((0, 0)));
}

#[test]
fn w_17_a_frame_repeating_another_key_is_refused_naming_its_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    // A put whose document repeats storedAt, and one whose top level repeats schemaVersion.
    let mut nested = vec![0x83];
    nested.extend(str_bytes("schemaVersion"));
    nested.extend(str_bytes(DOCUMENT_PUT_V0));
    nested.extend(str_bytes("messageId"));
    nested.extend(str_bytes("w1"));
    nested.extend(str_bytes("document"));
    nested.push(0x85);
    for (k, v) in [("schemaId", "notes"), ("recordKey", "k"), ("storedAt", "t")] {
        nested.extend(str_bytes(k));
        nested.extend(str_bytes(v));
    }
    nested.extend(str_bytes("payload"));
    nested.push(0x01);
    nested.extend(str_bytes("storedAt"));
    nested.extend(str_bytes("t2"));
    let mut top = put("w2", doc("j", 1));
    top[0] += 1;
    top.extend(str_bytes("schemaVersion"));
    top.extend(str_bytes(DOCUMENT_PUT_V0));
    for (bytes, id) in [(nested, "w1"), (top, "w2")] {
        s.on_frame(c, R, &bytes, 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(got.len(), 1, "{got:?}");
        let (got_id, code, _, _) = refusal(&got[0]);
        assert_eq!(
            (got_id.as_deref(), code.as_deref()),
            (Some(id), Some("message_invalid"))
        );
    }
    assert_eq!(s.read("notes", "k"), None);
    assert_eq!(s.read("notes", "j"), None);
}

#[test]
fn w_17_a_put_with_an_empty_id_is_refused_with_a_nil_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    let mut bytes = vec![0x83];
    bytes.extend(str_bytes("schemaVersion"));
    bytes.extend(str_bytes(DOCUMENT_PUT_V0));
    bytes.extend(str_bytes("messageId"));
    bytes.extend(str_bytes(""));
    bytes.extend(str_bytes("document"));
    bytes.push(0x84);
    for (k, v) in [("schemaId", "notes"), ("recordKey", "k"), ("storedAt", "t")] {
        bytes.extend(str_bytes(k));
        bytes.extend(str_bytes(v));
    }
    bytes.extend(str_bytes("payload"));
    bytes.push(0x01);
    s.on_frame(c, R, &bytes, 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let (id, code, _, _) = refusal(&got[0]);
    assert_eq!((id, code.as_deref()), (None, Some("message_invalid")));
    assert_eq!(s.read("notes", "k"), None);
}

#[test]
fn w_18_a_batch_gets_one_answer_per_member_in_its_own_name() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("b1", doc("k1", 1)), 1);
    let mut blank = doc("k2", 2);
    blank.record_key = " ".to_owned();
    s.on_frame(c, R, &put("b2", blank), 1);
    s.on_frame(c, R, &put("b3", doc("k3", 3)), 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], admitted("b1", "k1"));
    assert_eq!(refusal(&got[1]).0.as_deref(), Some("b2"));
    assert_eq!(got[2], admitted("b3", "k3"));
}

#[test]
fn w_18_a_batch_refused_alike_is_still_answered_member_by_member() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let c = receipt_conn(&mut s, "alice");
    // Five members refused for the same reason, then five deletes admitted alike: no two
    // identical answers are merged, and each names its own member, in order.
    for i in 0..5 {
        let mut d = doc("k", i);
        d.schema_id = "locked".to_owned();
        s.on_frame(c, R, &put(&format!("r{i}"), d), 1);
    }
    for i in 0..5 {
        s.on_frame(c, R, &delete(&format!("d{i}"), "k"), 1);
    }
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 10, "{got:?}");
    for (i, frame) in got[..5].iter().enumerate() {
        let (id, code, _, _) = refusal(frame);
        assert_eq!(
            (id, code.as_deref()),
            (Some(format!("r{i}")), Some("write_not_authorized"))
        );
    }
    for (i, frame) in got[5..].iter().enumerate() {
        assert_eq!(
            *frame,
            Frame::WriteAdmitted(WriteAdmitted {
                message_id: format!("d{i}"),
                operation: Operation::Delete,
                schema_id: "notes".to_owned(),
                record_key: "k".to_owned(),
            })
        );
    }
}

#[test]
fn w_19_the_dedupe_key_is_the_transport_actor_with_the_id() {
    let mut s = Server::new(ServerConfig::default());
    // Both hellos claim the same agentId; the transport says who each is.
    let a = receipt_conn(&mut s, "alice");
    let b = receipt_conn(&mut s, "bob");
    s.on_frame(a, R, &put("same", doc("ka", 1)), 1);
    s.on_frame(b, R, &put("same", doc("kb", 2)), 1);
    let mut got = Vec::new();
    while let Some(o) = s.poll_output(1) {
        let f = decode(&o.bytes).unwrap();
        if !matches!(f, Frame::Hello(_)) {
            got.push((o.conn, f));
        }
    }
    assert_eq!(
        got,
        vec![(a, admitted("same", "ka")), (b, admitted("same", "kb"))]
    );
    assert_eq!(s.counters().applied, 2);
    assert_eq!(s.counters().replayed, 0);
}

#[test]
fn w_20_the_server_compares_the_content_hash_of_operation_schema_key_and_payload() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("h1", doc("k", 1)), 1);
    // storedAt and tags are not in the hash: the same content.
    let mut same = doc("k", 1);
    same.stored_at = "2030-01-01T00:00:00Z".to_owned();
    same.tags = Some(vec!["t".to_owned()]);
    same.source_runtime_id = Some("r".to_owned());
    same.source_agent_id = Some("a".to_owned());
    same.source_role = Some("o".to_owned());
    s.on_frame(c, R, &put("h1", same), 2);
    // Another payload, key, schema or operation is other content.
    let mut other_schema = doc("k", 1);
    other_schema.schema_id = "other".to_owned();
    s.on_frame(c, R, &put("h1", doc("k", 2)), 3);
    s.on_frame(c, R, &put("h1", doc("j", 1)), 3);
    s.on_frame(c, R, &put("h1", other_schema), 3);
    s.on_frame(c, R, &delete("h1", "k"), 3);
    let got = answers(&mut s, c, 3);
    assert_eq!(got[0], admitted("h1", "k"));
    assert_eq!(got[1], admitted("h1", "k"));
    for f in &got[2..] {
        assert_eq!(refusal(f).3.as_deref(), Some("messageId"));
    }
    assert_eq!(got.len(), 6);
    assert_eq!(s.read("other", "k"), None);
}

#[test]
fn w_21_a_resend_after_admission_is_admitted_again_and_not_reapplied() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("r1", doc("k", 1)), 1);
    s.on_frame(c, R, &delete("x", "k"), 2);
    s.on_frame(c, R, &put("r1", doc("k", 1)), 3);
    let got = answers(&mut s, c, 3);
    assert_eq!(got[0], admitted("r1", "k"));
    assert_eq!(got[2], admitted("r1", "k"));
    assert_eq!(
        s.read("notes", "k"),
        None,
        "the resend was not applied again"
    );
    assert_eq!(s.counters().applied, 2);
}

#[test]
fn w_21_a_resend_after_refusal_gets_the_same_refusal() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let c = receipt_conn(&mut s, "alice");
    let mut locked = doc("k", 1);
    locked.schema_id = "locked".to_owned();
    s.on_frame(c, R, &put("r1", locked.clone()), 1);
    s.on_frame(c, R, &put("r1", locked), 2);
    let got = answers(&mut s, c, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], got[1]);
    assert_eq!(s.counters().replayed, 1);
}

#[test]
fn w_21_other_content_under_an_admitted_id_is_refused_and_the_old_receipt_is_not_resent() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("r1", doc("k", 1)), 1);
    s.on_frame(c, R, &put("r1", doc("k", 9)), 2);
    let got = answers(&mut s, c, 2);
    assert_eq!(got.len(), 2);
    let (id, code, _, field) = refusal(&got[1]);
    assert_eq!(
        (id.as_deref(), code.as_deref(), field.as_deref()),
        (Some("r1"), Some("message_invalid"), Some("messageId"))
    );
    assert_eq!(
        s.read("notes", "k"),
        Some(&[1u8][..]),
        "the original write is unchanged"
    );
    // The original content is still answered as admitted.
    s.on_frame(c, R, &put("r1", doc("k", 1)), 3);
    assert_eq!(answers(&mut s, c, 3), vec![admitted("r1", "k")]);
}

#[test]
fn w_22_an_id_over_256_bytes_is_refused_before_anything_is_remembered() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    // 256 bytes of UTF-8 (two-byte characters) is allowed; 257 is not.
    let ok = "é".repeat(128);
    let long = format!("{ok}x");
    s.on_frame(c, R, &put(&ok, doc("k", 1)), 1);
    assert!(matches!(
        &answers(&mut s, c, 1)[..],
        [Frame::WriteAdmitted(_)]
    ));
    let used = s.budget_used();
    for now in [2, 3] {
        s.on_frame(c, R, &put(&long, doc("j", 1)), now);
        let got = answers(&mut s, c, now);
        assert_eq!(
            refusal(&got[0]),
            (
                Some(long.clone()),
                Some("message_invalid".into()),
                "message_invalid: messageId exceeds 256 bytes".into(),
                Some("messageId".into())
            )
        );
    }
    assert_eq!(s.remembered(c), Some((1, 0)));
    assert_eq!(s.budget_used(), used);
    assert_eq!(
        s.counters().replayed,
        0,
        "refused afresh, not from the table"
    );
    assert_eq!(s.read("notes", "j"), None);
}

#[test]
fn w_23_only_digests_of_the_id_and_content_hash_and_the_answer_are_kept() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    let id = "i".repeat(200);
    let mut d = doc("k", 1);
    d.payload = RawValue::new([vec![0xc5, 0x10, 0x00], vec![7; 4096]].concat()).unwrap();
    let frame = DocumentPut {
        message_id: id.clone(),
        document: d.clone(),
    };
    s.on_frame(c, R, &put(&id, d), 1);
    let table = s.table(c);
    assert_eq!(table.len(), 1);
    let (key, entry) = table[0];
    assert_eq!(key, <[u8; 32]>::from(Sha256::digest(id.as_bytes())));
    assert_eq!(
        entry.content_digest,
        <[u8; 32]>::from(Sha256::digest(put_hash(&frame)))
    );
    assert_eq!(s.budget_used(), ENTRY_BYTES);
    // A short id with a one-byte payload costs exactly as much.
    s.on_frame(c, R, &put("s", doc("j", 1)), 2);
    assert_eq!(s.budget_used(), 2 * ENTRY_BYTES);
}

fn fill(s: &mut Server, c: ConnId, n: usize, prefix: &str) {
    for i in 0..n {
        s.on_frame(c, R, &put(&format!("{prefix}{i}"), doc("k", 1)), 1);
    }
    let _ = answers(s, c, 1);
}

#[test]
fn w_24_past_1024_entries_a_new_write_is_refused_limit_reached_and_the_session_continues() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    fill(&mut s, c, 1023, "f");
    s.on_frame(c, R, &put("last", doc("k", 2)), 2);
    assert_eq!(answers(&mut s, c, 2), vec![admitted("last", "k")]);
    s.on_frame(c, R, &put("over", doc("j", 3)), 3);
    let got = answers(&mut s, c, 3);
    assert_eq!(
        refusal(&got[0]),
        (
            Some("over".into()),
            Some("limit_reached".into()),
            "limit_reached: the session's remembered-write limit is full".into(),
            None
        )
    );
    assert!(matches!(&got[0], Frame::ErrorV1(e) if e.details.is_none()));
    assert_eq!(s.read("notes", "j"), None);
    assert_eq!(s.remembered(c), Some((1024, 1)));
}

#[test]
fn w_24_a_remembered_key_is_still_answered_from_the_table_at_the_cap() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    fill(&mut s, c, 1024, "f");
    s.on_frame(c, R, &put("f0", doc("k", 1)), 2);
    assert_eq!(answers(&mut s, c, 2), vec![admitted("f0", "k")]);
}

#[test]
fn w_24_the_server_wide_budget_refuses_a_new_write_of_any_session() {
    let mut s = Server::new(ServerConfig {
        server_budget_bytes: Some(ENTRY_BYTES * 3),
        ..ServerConfig::default()
    });
    let a = receipt_conn(&mut s, "alice");
    let b = receipt_conn(&mut s, "bob");
    fill(&mut s, a, 2, "a");
    s.on_frame(b, R, &put("b0", doc("k", 1)), 2);
    s.on_frame(b, R, &put("b1", doc("k", 1)), 2);
    let got = answers(&mut s, b, 2);
    assert_eq!(got[0], admitted("b0", "k"));
    assert_eq!(refusal(&got[1]).1.as_deref(), Some("limit_reached"));
    // The budget frees when a session ends.
    s.drop_connection(a);
    s.on_frame(b, R, &put("b2", doc("k", 1)), 3);
    assert_eq!(answers(&mut s, b, 3), vec![admitted("b2", "k")]);
}

#[test]
fn w_24_the_reference_bounds_are_1024_entries_and_a_32_mib_budget() {
    let c = ServerConfig::default();
    assert_eq!(c.max_entries_per_session, 1024);
    assert_eq!(c.server_budget_bytes, Some(32 * 1024 * 1024));
}

#[test]
fn w_24_past_the_server_budget_a_new_put_or_delete_is_refused_and_remembered_keys_answer() {
    let mut s = Server::new(ServerConfig {
        server_budget_bytes: Some(ENTRY_BYTES * 2),
        ..ServerConfig::default()
    });
    let a = receipt_conn(&mut s, "alice");
    let b = receipt_conn(&mut s, "bob");
    fill(&mut s, a, 1, "a");
    s.on_frame(b, R, &put("b0", doc("kb", 1)), 2);
    assert_eq!(answers(&mut s, b, 2), vec![admitted("b0", "kb")]);
    let applied = s.counters().applied;
    s.on_frame(b, R, &put("b1", doc("new", 2)), 3);
    s.on_frame(b, R, &delete("b2", "kb"), 3);
    s.on_frame(b, R, &put("b0", doc("kb", 1)), 3);
    let got = answers(&mut s, b, 3);
    assert_eq!(got.len(), 3, "{got:?}");
    for (frame, id) in got[..2].iter().zip(["b1", "b2"]) {
        assert_eq!(
            refusal(frame),
            (
                Some(id.into()),
                Some("limit_reached".into()),
                "limit_reached: the session's remembered-write limit is full".into(),
                None
            )
        );
        assert!(matches!(frame, Frame::ErrorV1(e) if e.details.is_none()));
    }
    // Neither refused write was applied; the remembered key is answered from the table and
    // the session goes on.
    assert_eq!(got[2], admitted("b0", "kb"));
    assert_eq!(s.read("notes", "new"), None);
    assert_eq!(s.read("notes", "kb"), Some(&[1u8][..]));
    assert_eq!(s.counters().applied, applied);
    assert!(s.is_receipt_connection(b));
}

#[test]
fn w_25_a_limit_refusal_is_replayed_and_never_becomes_admitted() {
    let mut s = Server::new(ServerConfig {
        server_budget_bytes: Some(ENTRY_BYTES),
        ..ServerConfig::default()
    });
    let a = receipt_conn(&mut s, "alice");
    let b = receipt_conn(&mut s, "bob");
    fill(&mut s, a, 1, "a");
    s.on_frame(b, R, &put("x", doc("k", 1)), 2);
    assert_eq!(
        refusal(&answers(&mut s, b, 2)[0]).1.as_deref(),
        Some("limit_reached")
    );
    s.drop_connection(a); // the budget is free again
    s.on_frame(b, R, &put("x", doc("k", 1)), 3);
    let got = answers(&mut s, b, 3);
    assert_eq!(
        refusal(&got[0]).1.as_deref(),
        Some("limit_reached"),
        "replayed, not admitted"
    );
    // Other content under the refused id is refused as a reused id.
    s.on_frame(b, R, &put("x", doc("k", 2)), 4);
    assert_eq!(
        refusal(&answers(&mut s, b, 4)[0]).3.as_deref(),
        Some("messageId")
    );
    // A new id is admitted now that the budget freed.
    s.on_frame(b, R, &put("y", doc("k", 1)), 5);
    assert_eq!(answers(&mut s, b, 5), vec![admitted("y", "k")]);
}

#[test]
fn w_25_past_the_refusal_set_every_unseen_id_is_refused_for_the_rest_of_the_session() {
    let mut s = Server::new(ServerConfig {
        max_entries_per_session: 1,
        max_refusals_per_session: 2,
        server_budget_bytes: Some(ENTRY_BYTES * 2),
        ..ServerConfig::default()
    });
    let a = receipt_conn(&mut s, "alice");
    let b = receipt_conn(&mut s, "bob");
    fill(&mut s, a, 1, "a");
    fill(&mut s, b, 1, "b");
    for id in ["r0", "r1", "r2"] {
        s.on_frame(b, R, &put(id, doc("k", 1)), 2);
    }
    assert_eq!(s.remembered(b), Some((1, 2)));
    assert_eq!(s.counters().limit_refusals_not_remembered, 1);
    s.drop_connection(a);
    s.on_frame(b, R, &put("r2", doc("k", 1)), 3);
    s.on_frame(b, R, &put("new", doc("k", 1)), 3);
    let got = answers(&mut s, b, 3);
    assert!(
        got.iter()
            .all(|f| refusal(f).1.as_deref() == Some("limit_reached")),
        "{got:?}"
    );
    assert_eq!(got.len(), 5);
    // A remembered admission is still answered.
    s.on_frame(b, R, &put("b0", doc("k", 1)), 4);
    assert_eq!(answers(&mut s, b, 4), vec![admitted("b0", "k")]);
}

#[test]
fn w_26_keys_live_for_the_whole_session_and_a_new_session_is_a_new_write() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("s1", doc("k", 1)), 1);
    // An hour later, the same session still knows the id.
    s.on_frame(c, R, &put("s1", doc("k", 1)), 3_600_000);
    assert_eq!(answers(&mut s, c, 3_600_000).len(), 2);
    assert_eq!(s.counters().applied, 1);
    // The same id on a new session is a new write (retention past the session is off by default).
    s.drop_connection(c);
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("s1", doc("k", 2)), 3_600_001);
    assert_eq!(answers(&mut s, d, 3_600_001), vec![admitted("s1", "k")]);
    assert_eq!(s.counters().applied, 2);
}

#[test]
fn w_27_a_put_without_a_document_names_the_field_document() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    for extra in [vec![], vec![("document", vec![0xc0])]] {
        let mut entries = vec![
            ("schemaVersion", str_bytes(DOCUMENT_PUT_V0)),
            ("messageId", str_bytes("p1")),
        ];
        entries.extend(extra);
        s.on_frame(c, R, &raw_map(&entries), 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(
            refusal(&got[0]),
            (
                Some("p1".into()),
                Some("message_invalid".into()),
                "message_invalid: document is required".into(),
                Some("document".into())
            )
        );
    }
}

#[test]
fn w_27_a_write_without_a_schema_id_names_the_field_schema_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    let document = raw_map(&[
        ("schemaId", vec![0xc0]),
        ("recordKey", str_bytes("k")),
        ("storedAt", str_bytes("t")),
        ("payload", vec![0x01]),
    ]);
    let put = raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_PUT_V0)),
        ("messageId", str_bytes("p1")),
        ("document", document),
    ]);
    let del = raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_DELETE_V0)),
        ("messageId", str_bytes("d1")),
        ("recordKey", str_bytes("k")),
    ]);
    for (frame, id) in [(put, "p1"), (del, "d1")] {
        s.on_frame(c, R, &frame, 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(
            refusal(&got[0]),
            (
                Some(id.into()),
                Some("message_invalid".into()),
                "message_invalid: schemaId is required".into(),
                Some("schemaId".into())
            )
        );
    }
}

#[test]
fn w_27_a_write_that_names_nothing_is_refused_unreadable_and_never_stored() {
    let mut cases: Vec<Vec<u8>> = Vec::new();
    let mut edit = |f: &dyn Fn(&mut Document)| {
        let mut d = doc("k", 1);
        f(&mut d);
        cases.push(put("n", d));
    };
    edit(&|d| d.schema_id = String::new());
    edit(&|d| d.record_key = "\u{3000}".to_owned());
    edit(&|d| d.stored_at = " \t".to_owned());
    edit(&|d| d.payload = RawValue::new(vec![0xc4, 0x00]).unwrap());
    edit(&|d| d.source_runtime_id = Some(String::new()));
    edit(&|d| d.source_agent_id = Some("\u{a0}".to_owned()));
    edit(&|d| d.source_role = Some("\u{2028}".to_owned()));
    edit(&|d| d.tags = Some(vec!["ok".to_owned(), "\u{85}".to_owned()]));
    cases.push(delete("n", " "));
    for frame in cases {
        let mut s = Server::new(ServerConfig::default());
        let c = receipt_conn(&mut s, "alice");
        s.on_frame(c, R, &frame, 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(
            refusal(&got[0]),
            (
                Some("n".into()),
                Some("message_invalid".into()),
                "message_invalid: the message could not be read".into(),
                Some("message".into())
            )
        );
        assert_eq!(s.counters().applied, 0);
    }
    // Absent source ids and tags, and an empty tags list, are valid.
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    let mut d = doc("k", 1);
    d.tags = Some(vec![]);
    s.on_frame(c, R, &put("v", d), 1);
    assert_eq!(answers(&mut s, c, 1), vec![admitted("v", "k")]);
}

#[test]
fn w_27_a_legacy_connection_gets_the_same_refusal_as_error_v0() {
    let mut s = Server::new(ServerConfig::default());
    let c = s.connect("alice", 0);
    let mut d = doc("k", 1);
    d.record_key = " ".to_owned();
    s.on_frame(c, R, &put("n", d), 1);
    let missing = raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_PUT_V0)),
        ("messageId", str_bytes("p1")),
    ]);
    s.on_frame(c, R, &missing, 1);
    let got = answers(&mut s, c, 1);
    let expect = [
        ("message_invalid: the message could not be read", "message"),
        ("message_invalid: document is required", "document"),
    ];
    assert_eq!(got.len(), 2);
    for (f, (text, field)) in got.iter().zip(expect) {
        let Frame::ErrorV0(e) = f else {
            panic!("{f:?}")
        };
        assert_eq!(e.error, text);
        assert_eq!(e.code.as_deref(), Some("message_invalid"));
        assert_eq!(
            e.details.as_ref().and_then(|d| d.field.as_deref()),
            Some(field)
        );
    }
    assert_eq!(s.counters().applied, 0);
}

#[test]
fn w_28_only_white_space_is_blank_other_invisible_code_points_name_something() {
    for (key, blank) in [
        ("\u{200b}", false),
        ("\u{feff}", false),
        ("\u{180e}", false),
        ("\u{1c}", false),
        ("\u{2060}", false),
        ("\u{9}\u{d}", true),
        ("\u{1680}\u{202f}", true),
        ("\u{205f}\u{2029}", true),
    ] {
        let mut s = Server::new(ServerConfig::default());
        let c = receipt_conn(&mut s, "alice");
        let mut d = doc("k", 1);
        d.record_key = key.to_owned();
        s.on_frame(c, R, &put("w", d), 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(matches!(got[0], Frame::ErrorV1(_)), blank, "{key:?}");
    }
}

#[test]
fn w_29_the_refusal_texts_are_fixed() {
    let expect = [
        (
            Refusal::IdTooLong,
            "message_invalid: messageId exceeds 256 bytes",
        ),
        (
            Refusal::DocumentRequired,
            "message_invalid: document is required",
        ),
        (
            Refusal::SchemaIdRequired,
            "message_invalid: schemaId is required",
        ),
        (
            Refusal::Unreadable,
            "message_invalid: the message could not be read",
        ),
        (
            Refusal::Channel,
            "message_invalid: receipt sessions require the reliable channel",
        ),
        (
            Refusal::LimitReached,
            "limit_reached: the session's remembered-write limit is full",
        ),
    ];
    for (r, text) in expect {
        assert_eq!(r.parts().1, text);
    }
}

#[test]
fn w_30_a_write_on_the_sequenced_channel_is_refused_field_channel() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, Channel::Sequenced, &put("q1", doc("k", 1)), 1);
    s.on_frame(c, Channel::ReliableUnordered, &put("q2", doc("j", 1)), 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(
        refusal(&got[0]),
        (
            Some("q1".into()),
            Some("message_invalid".into()),
            "message_invalid: receipt sessions require the reliable channel".into(),
            Some("channel".into())
        )
    );
    assert_eq!(got[1], admitted("q2", "j"));
    assert_eq!(s.read("notes", "k"), None);
}

#[test]
fn w_30_both_reliable_channels_take_writes_and_a_refused_sequenced_write_is_not_remembered() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, Channel::Sequenced, &put("q", doc("k", 1)), 1);
    s.on_frame(c, Channel::Sequenced, &delete("d", "k"), 1);
    s.on_frame(c, Channel::ReliableOrdered, &put("q", doc("k", 1)), 1);
    s.on_frame(c, Channel::ReliableUnordered, &put("u", doc("j", 2)), 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 4, "{got:?}");
    for (frame, id) in got[..2].iter().zip(["q", "d"]) {
        let (named, code, _, field) = refusal(frame);
        assert_eq!(
            (named.as_deref(), code.as_deref(), field.as_deref()),
            (Some(id), Some("message_invalid"), Some("channel"))
        );
    }
    // The id refused on the sequenced channel is new to the table when it comes reliably.
    assert_eq!(got[2], admitted("q", "k"));
    assert_eq!(got[3], admitted("u", "j"));
    assert_eq!(s.read("notes", "k"), Some(&[1u8][..]));
    assert_eq!(s.counters().applied, 2);
}

#[test]
fn w_30_an_unreadable_write_on_the_sequenced_channel_is_refused_field_channel_naming_its_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    // A put without its document: on a reliable channel it is refused field document; on the
    // sequenced channel the channel comes first, and the readable id is named.
    let no_document = raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_PUT_V0)),
        ("messageId", str_bytes("p")),
    ]);
    s.on_frame(c, Channel::Sequenced, &no_document, 1);
    s.on_frame(c, R, &no_document, 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        refusal(&got[0]),
        (
            Some("p".into()),
            Some("message_invalid".into()),
            "message_invalid: receipt sessions require the reliable channel".into(),
            Some("channel".into())
        )
    );
    assert_eq!(refusal(&got[1]).3.as_deref(), Some("document"));
}

fn forwarder_conn(f: &mut Forwarder, actor: &str) -> ConnId {
    let c = f.connect(actor, 0);
    f.on_frame(c, R, &hello(true), 0);
    c
}

fn peer_answers(f: &mut Forwarder, c: ConnId, now: u64) -> Vec<Frame> {
    let mut v = Vec::new();
    while let Some(o) = f.poll_output(now) {
        if o.conn == c {
            let fr = decode(&o.bytes).unwrap();
            if !matches!(fr, Frame::Hello(_)) {
                v.push(fr);
            }
        }
    }
    v
}

#[test]
fn w_30_a_sequenced_write_through_the_forwarder_is_refused_field_channel_under_its_own_id() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = forwarder_conn(&mut f, "alice");
    let _ = peer_answers(&mut f, c, 0);
    // A valid id, and one no admission could carry: the channel is judged first for both.
    f.on_frame(c, Channel::Sequenced, &put("seq", doc("k", 1)), 1);
    f.on_frame(c, Channel::Sequenced, &put("-", doc("j", 1)), 1);
    f.on_frame(c, Channel::ReliableUnordered, &put("rel", doc("i", 1)), 1);
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 3, "{got:?}");
    for (frame, id) in got[..2].iter().zip(["seq", "-"]) {
        assert_eq!(
            refusal(frame),
            (
                Some(id.into()),
                Some("message_invalid".into()),
                "message_invalid: receipt sessions require the reliable channel".into(),
                Some("channel".into())
            )
        );
    }
    assert_eq!(got[2], admitted("rel", "i"));
    assert_eq!(f.primary_mut().read("notes", "k"), None);
    assert_eq!(f.primary_mut().read("notes", "j"), None);
}

#[test]
fn the_forwarders_outbox_is_bounded_in_bytes_and_what_it_drops_is_counted() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    f.set_max_outbox_bytes(1500);
    let c = forwarder_conn(&mut f, "alice");
    let _ = peer_answers(&mut f, c, 0);
    // Each relayed admission echoes a 400-byte record key: three fit in 1500 bytes, not five.
    for i in 0..5 {
        let key = "k".repeat(399) + &i.to_string();
        f.on_frame(c, R, &put(&format!("p{i}"), doc(&key, 1)), 1);
    }
    assert_eq!(f.counters().outbox_dropped, 2);
    let mut bytes = 0;
    let mut n = 0;
    while let Some(o) = f.poll_output(1) {
        bytes += o.bytes.len();
        n += 1;
    }
    assert_eq!(n, 3);
    assert!(bytes <= 1500, "{bytes}");
    f.on_frame(c, R, &put("p5", doc(&"k".repeat(400), 1)), 2);
    assert_eq!(
        peer_answers(&mut f, c, 2).len(),
        1,
        "sent frames gave their bytes back"
    );
}

#[test]
fn w_31_the_forwarder_relays_the_primarys_admission_under_the_original_id() {
    let mut f = Forwarder::new(
        Server::new(ServerConfig {
            commit_delay_ms: 50,
            ..ServerConfig::default()
        }),
        16,
    );
    let c = forwarder_conn(&mut f, "alice");
    f.on_frame(c, R, &put("orig", doc("k", 1)), 1);
    assert!(peer_answers(&mut f, c, 50).is_empty());
    assert_eq!(peer_answers(&mut f, c, 51), vec![admitted("orig", "k")]);
    assert_eq!(f.primary_mut().read("notes", "k"), Some(&[1u8][..]));
}

#[test]
fn w_31_the_forwarder_relays_the_primarys_refusal_under_the_original_id() {
    let mut primary = Server::new(ServerConfig::default());
    primary.deny("alice", "locked");
    let mut f = Forwarder::new(primary, 16);
    let c = forwarder_conn(&mut f, "alice");
    let mut d = doc("k", 1);
    d.schema_id = "locked".to_owned();
    f.on_frame(c, R, &put("orig", d), 1);
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 1);
    let (id, code, _, _) = refusal(&got[0]);
    assert_eq!(
        (id.as_deref(), code.as_deref()),
        (Some("orig"), Some("write_not_authorized"))
    );
}

#[test]
fn w_31_without_a_primary_answer_the_forwarder_relays_nothing() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = forwarder_conn(&mut f, "alice");
    f.primary_mut().set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    f.on_frame(c, R, &put("a", doc("k", 1)), 1);
    f.primary_mut().set_faults(Faults::default());
    f.set_lose_primary_answers(true);
    f.on_frame(c, R, &put("b", doc("j", 1)), 2);
    // A primary answer that does not read names nothing either.
    f.set_lose_primary_answers(false);
    f.primary_mut().set_faults(Faults {
        duplicate_key_receipts: true,
        ..Faults::default()
    });
    f.on_frame(c, R, &put("c", doc("i", 1)), 3);
    assert!(peer_answers(&mut f, c, 100_000).is_empty());
    assert_eq!(
        f.primary_mut().counters().applied,
        3,
        "the primary did commit them"
    );
    assert_eq!(f.counters().relayed, 0);
}

#[test]
fn w_32_an_admission_and_a_refusal_differ_in_schema_version() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("a", doc("k", 1)), 1);
    s.on_frame(c, R, &put("a", doc("k", 2)), 1);
    let mut raw = Vec::new();
    while let Some(o) = s.poll_output(1) {
        raw.push(o.bytes);
    }
    let versions: Vec<String> = raw[1..]
        .iter()
        .map(|b| cultnet_sim::probe::probe(b).schema_version.unwrap())
        .collect();
    assert_eq!(versions, [WRITE_ADMITTED_V0, ERROR_V1]);
}

#[test]
fn fault_late_answers_come_after_the_delay_in_order() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.set_faults(Faults {
        answer_delay_ms: 6000,
        ..Faults::default()
    });
    s.on_frame(c, R, &put("a", doc("k", 1)), 10);
    s.set_faults(Faults::default());
    s.on_frame(c, R, &put("b", doc("j", 1)), 20);
    assert!(
        answers(&mut s, c, 6009).is_empty(),
        "a later answer never overtakes"
    );
    assert_eq!(
        answers(&mut s, c, 6010),
        vec![admitted("a", "k"), admitted("b", "j")]
    );
}

#[test]
fn fault_silence_and_a_dropped_connection_send_nothing_but_the_write_commits() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    s.on_frame(c, R, &put("a", doc("k", 1)), 1);
    assert!(answers(&mut s, c, 1).is_empty());
    s.set_faults(Faults {
        answer_delay_ms: 100,
        ..Faults::default()
    });
    s.on_frame(c, R, &put("b", doc("j", 1)), 2);
    s.drop_connection(c);
    assert!(answers(&mut s, c, 1000).is_empty());
    assert_eq!(s.counters().applied, 2);
    assert_eq!(s.budget_used(), 0);
}

#[test]
fn fault_duplicate_key_receipts_do_not_decode() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.set_faults(Faults {
        duplicate_key_receipts: true,
        ..Faults::default()
    });
    s.on_frame(c, R, &put("a", doc("k", 1)), 1);
    let mut outs = Vec::new();
    while let Some(o) = s.poll_output(1) {
        outs.push(o.bytes);
    }
    let last = outs.last().unwrap();
    assert!(decode(last).is_err());
    assert_eq!(cultnet_sim::probe::probe(last).message_id_keys, 2);
}

#[test]
fn a_full_commit_queue_commits_its_oldest_write_early_and_drops_none() {
    let mut s = Server::new(ServerConfig {
        commit_delay_ms: 1000,
        max_pending_commits: 2,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    for (i, key) in ["a", "b", "c"].iter().enumerate() {
        s.on_frame(c, R, &put(&format!("p{i}"), doc(key, 1)), 1);
    }
    assert_eq!(s.counters().early_commits, 1);
    assert_eq!(answers(&mut s, c, 1), vec![admitted("p0", "a")]);
    assert_eq!(
        answers(&mut s, c, 1001),
        vec![admitted("p1", "b"), admitted("p2", "c")]
    );
}

#[test]
fn a_commit_queue_full_in_bytes_commits_its_oldest_write_early_and_drops_none() {
    let mut s = Server::new(ServerConfig {
        commit_delay_ms: 1000,
        max_pending_commit_bytes: 1000,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    let keys: Vec<String> = ["a", "b", "c"].iter().map(|k| k.repeat(400)).collect();
    for (i, key) in keys.iter().enumerate() {
        s.on_frame(c, R, &put(&format!("p{i}"), doc(key, 1)), 1);
    }
    assert_eq!(
        s.counters().early_commits,
        1,
        "two writes of 400-byte keys fit, not three"
    );
    assert_eq!(answers(&mut s, c, 1), vec![admitted("p0", &keys[0])]);
    assert_eq!(
        answers(&mut s, c, 1001),
        vec![admitted("p1", &keys[1]), admitted("p2", &keys[2])]
    );
}

#[test]
fn the_outbox_is_bounded_in_bytes_and_what_it_drops_is_counted() {
    let mut s = Server::new(ServerConfig {
        max_outbox_bytes: 1500,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    let _ = answers(&mut s, c, 0);
    // Each admission echoes a 400-byte record key: three fit in 1500 bytes, not five.
    for i in 0..5 {
        let key = "k".repeat(399) + &i.to_string();
        s.on_frame(c, R, &put(&format!("p{i}"), doc(&key, 1)), 1);
    }
    assert_eq!(s.counters().outbox_dropped, 2);
    let mut bytes = 0;
    let mut n = 0;
    while let Some(o) = s.poll_output(1) {
        bytes += o.bytes.len();
        n += 1;
    }
    assert_eq!(n, 3);
    assert!(bytes <= 1500, "{bytes}");
    // Sent frames give their bytes back: the next answer fits again.
    s.on_frame(c, R, &put("p5", doc(&"k".repeat(400), 1)), 2);
    assert_eq!(answers(&mut s, c, 2).len(), 1);
    assert_eq!(s.counters().outbox_dropped, 2);
}

fn hello_listing(versions: &[&str]) -> Vec<u8> {
    encode(&Frame::Hello(Hello {
        runtime_id: "c".to_owned(),
        runtime_kind: "client".to_owned(),
        supported_message_versions: Some(versions.iter().map(|v| (*v).to_owned()).collect()),
        ..Hello::default()
    }))
    .unwrap()
}

/// The schemaVersion of every frame due for `conn` at `now` (read without the codec, so a frame
/// the codec would refuse is seen too), the server's hello left out.
fn versions_sent(s: &mut Server, conn: ConnId, now: u64) -> Vec<String> {
    let mut v = Vec::new();
    while let Some(o) = s.poll_output(now) {
        if o.conn == conn {
            let version = cultnet_sim::probe::probe(&o.bytes)
                .schema_version
                .expect("every frame names its version");
            if version != "cultnet.hello.v0" {
                v.push(version);
            }
        }
    }
    v
}

/// Every kind of write the model answers differently: admitted, denied, blank, unreadable, a
/// repeated messageId, an id over 256 bytes, a sequenced channel, and a resend.
fn every_kind_of_write(s: &mut Server, c: ConnId, now: u64) {
    s.on_frame(c, R, &put("k1", doc("k", 1)), now);
    s.on_frame(c, R, &delete("k2", "k"), now);
    let mut locked = doc("k", 2);
    locked.schema_id = "locked".to_owned();
    s.on_frame(c, R, &put("k3", locked), now);
    s.on_frame(c, R, &put("k4", doc(" ", 1)), now);
    s.on_frame(c, R, &[0xc1], now);
    let mut repeated = put("k5", doc("j", 1));
    repeated[0] += 1;
    repeated.extend(str_bytes("messageId"));
    repeated.extend(str_bytes("k6"));
    s.on_frame(c, R, &repeated, now);
    s.on_frame(c, R, &put(&"l".repeat(300), doc("j", 1)), now);
    s.on_frame(c, Channel::Sequenced, &put("k7", doc("j", 1)), now);
    s.on_frame(c, R, &put("k1", doc("k", 1)), now);
}

#[test]
fn w_11_no_connection_without_a_receipt_hello_is_sent_either_new_frame() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let only_v1 = hello_listing(&[ERROR_V1]);
    let only_admitted = hello_listing(&[WRITE_ADMITTED_V0]);
    for before in [None, Some(only_v1), Some(only_admitted)] {
        let c = s.connect("alice", 0);
        if let Some(h) = &before {
            s.on_frame(c, R, h, 0);
        }
        assert!(!s.is_receipt_connection(c));
        every_kind_of_write(&mut s, c, 1);
        let sent = versions_sent(&mut s, c, 1);
        assert!(!sent.is_empty(), "refusals are still sent");
        assert!(
            sent.iter().all(|v| v == "cultnet.error.v0"),
            "only error.v0 on a legacy connection: {sent:?}"
        );
    }
}

#[test]
fn w_11_a_receipt_hello_after_the_first_write_leaves_the_connection_legacy() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let c = s.connect("alice", 0);
    s.on_frame(c, R, &put("first", doc("a", 1)), 1);
    s.on_frame(c, R, &hello(true), 1);
    every_kind_of_write(&mut s, c, 2);
    let sent = versions_sent(&mut s, c, 2);
    assert!(sent.iter().all(|v| v == "cultnet.error.v0"), "{sent:?}");
    assert_eq!(s.counters().late_hellos, 1);
}

#[test]
fn w_11_a_receipt_connection_beside_a_legacy_one_does_not_change_what_the_legacy_one_gets() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let legacy = s.connect("alice", 0);
    let receipts = receipt_conn(&mut s, "alice");
    every_kind_of_write(&mut s, receipts, 1);
    every_kind_of_write(&mut s, legacy, 1);
    let mut to_legacy = Vec::new();
    let mut to_receipts = Vec::new();
    while let Some(o) = s.poll_output(1) {
        let v = cultnet_sim::probe::probe(&o.bytes).schema_version.unwrap();
        if o.conn == legacy {
            to_legacy.push(v);
        } else if o.conn == receipts {
            to_receipts.push(v);
        }
    }
    assert!(to_legacy
        .iter()
        .all(|v| v == "cultnet.error.v0" || v == "cultnet.hello.v0"));
    // The receipt connection got one answer per write, each in a new frame.
    assert_eq!(
        to_receipts
            .iter()
            .filter(|v| *v == WRITE_ADMITTED_V0 || *v == ERROR_V1)
            .count(),
        9
    );
}

fn hello_of(s: &mut Server, c: ConnId) -> Hello {
    while let Some(o) = s.poll_output(0) {
        if o.conn == c {
            if let Ok(Frame::Hello(h)) = decode(&o.bytes) {
                return h;
            }
        }
    }
    panic!("the server sent no hello");
}

#[test]
fn w_12_a_receipt_server_lists_both_new_frames_in_its_hello() {
    let mut s = Server::new(ServerConfig::default());
    let c = s.connect("alice", 0);
    let h = hello_of(&mut s, c);
    let listed = h.supported_message_versions.clone().unwrap();
    assert!(listed.iter().any(|v| v == WRITE_ADMITTED_V0), "{listed:?}");
    assert!(listed.iter().any(|v| v == ERROR_V1), "{listed:?}");
    assert!(h.is_receipt_capable());
    // The forwarder keeps the receipt rules end to end (it relays only the primary's answers)
    // and says so too.
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 4);
    let p = f.connect("alice", 0);
    let o = f.poll_output(0).expect("the forwarder's hello");
    assert_eq!(o.conn, p);
    assert!(matches!(decode(&o.bytes), Ok(Frame::Hello(h)) if h.is_receipt_capable()));
}

#[test]
fn w_12_a_server_without_the_receipt_rules_lists_neither_new_frame() {
    let mut s = Server::new(ServerConfig {
        receipts: false,
        ..ServerConfig::default()
    });
    let c = s.connect("alice", 0);
    let h = hello_of(&mut s, c);
    let listed = h.supported_message_versions.unwrap();
    assert!(
        !listed
            .iter()
            .any(|v| v == WRITE_ADMITTED_V0 || v == ERROR_V1),
        "{listed:?}"
    );
    // And it keeps no receipt rule: even a receipt hello gets the old answers.
    s.on_frame(c, R, &hello(true), 0);
    s.deny("alice", "locked");
    every_kind_of_write(&mut s, c, 1);
    let sent = versions_sent(&mut s, c, 1);
    assert!(sent.iter().all(|v| v == "cultnet.error.v0"), "{sent:?}");
}

#[test]
fn w_13_a_client_that_sends_no_hello_gets_the_legacy_behaviour() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let c = s.connect("alice", 0);
    s.on_frame(c, R, &put("n1", doc("k", 1)), 1);
    assert!(answers(&mut s, c, 1).is_empty(), "no receipt");
    assert_eq!(
        s.read("notes", "k"),
        Some(&[1u8][..]),
        "but the write is applied"
    );
    let mut locked = doc("k", 2);
    locked.schema_id = "locked".to_owned();
    s.on_frame(c, R, &put("n2", locked), 2);
    let got = answers(&mut s, c, 2);
    assert!(
        matches!(&got[..], [Frame::ErrorV0(e)] if e.code.as_deref() == Some("write_not_authorized")),
        "{got:?}"
    );
    // Nothing is remembered for dedupe on a legacy connection.
    assert_eq!(s.remembered(c), Some((0, 0)));
    assert!(!s.is_receipt_connection(c));
}

/// The store after a run of writes as `actor`, with or without a receipt hello claiming to be
/// someone else, and the (code, text, field) of every refusal.
type Run = (
    Vec<Option<Vec<u8>>>,
    Vec<(Option<cultnet_receipts::ErrorCode>, String, Option<String>)>,
);

fn run_writes(receipt_hello: bool) -> Run {
    let mut s = Server::new(ServerConfig::default());
    s.deny("mallory", "locked");
    let c = s.connect("mallory", 0);
    if receipt_hello {
        // hello(true) claims the agent "someone-else"; it must not matter.
        s.on_frame(c, R, &hello(true), 0);
    }
    let mut locked = doc("x", 9);
    locked.schema_id = "locked".to_owned();
    let writes = [
        put("r1", doc("a", 1)),
        put("r2", locked.clone()),
        put("r3", doc("b", 2)),
        delete("r4", "a"),
        put("r5", doc("\u{3000}", 3)),
        put("r6", locked),
    ];
    for w in &writes {
        s.on_frame(c, R, w, 1);
    }
    let mut refusals = Vec::new();
    for f in answers(&mut s, c, 1) {
        match f {
            Frame::ErrorV0(e) => refusals.push((e.code, e.error, e.details.and_then(|d| d.field))),
            Frame::ErrorV1(e) => refusals.push((e.code, e.error, e.details.and_then(|d| d.field))),
            _ => {}
        }
    }
    let store = ["a", "b", "x", "\u{3000}"]
        .iter()
        .map(|k| s.read("notes", k).map(<[u8]>::to_vec))
        .chain([s.read("locked", "x").map(<[u8]>::to_vec)])
        .collect();
    (store, refusals)
}

#[test]
fn w_14_the_capability_changes_the_frames_only_never_what_writes_do_or_who_may_write() {
    let (legacy_store, legacy_refusals) = run_writes(false);
    let (receipt_store, receipt_refusals) = run_writes(true);
    assert_eq!(legacy_store, receipt_store, "the same writes took effect");
    assert_eq!(
        legacy_refusals, receipt_refusals,
        "the same writes were refused, with the same code, text and field"
    );
    assert_eq!(receipt_refusals.len(), 3);
    assert_eq!(receipt_store[4], None, "a refused write is never admitted");
}

#[test]
fn w_14_a_hello_naming_another_agent_authorizes_nothing() {
    let mut s = Server::new(ServerConfig::default());
    s.deny("mallory", "locked");
    let c = s.connect("mallory", 0);
    // The hello claims agent "someone-else", who may write "locked"; the transport's actor is
    // mallory, and that alone decides.
    s.on_frame(c, R, &hello(true), 0);
    let mut locked = doc("x", 9);
    locked.schema_id = "locked".to_owned();
    s.on_frame(c, R, &put("m1", locked.clone()), 1);
    s.on_frame(c, R, &put("m1", locked), 2);
    let got = answers(&mut s, c, 2);
    assert_eq!(got.len(), 2);
    for f in &got {
        assert_eq!(refusal(f).1.as_deref(), Some("write_not_authorized"));
    }
    assert_eq!(s.read("locked", "x"), None);
    assert_eq!(s.counters().applied, 0);
}

#[test]
fn w_8_a_write_repeating_message_id_is_neither_remembered_nor_replayed() {
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    let mut repeated = put("first", doc("k", 1));
    repeated[0] += 1;
    repeated.extend(str_bytes("messageId"));
    repeated.extend(str_bytes("second"));
    s.on_frame(c, R, &repeated, 1);
    s.on_frame(c, R, &repeated, 2);
    let got = answers(&mut s, c, 2);
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|f| refusal(f).0.is_none()), "{got:?}");
    assert_eq!(s.counters().replayed, 0, "nothing was taken from the table");
    assert_eq!(s.remembered(c), Some((0, 0)));
    // Neither id of the malformed frame became a dedupe key: both are new writes.
    s.on_frame(c, R, &put("first", doc("k", 1)), 3);
    s.on_frame(c, R, &put("second", doc("k", 1)), 3);
    assert_eq!(
        answers(&mut s, c, 3),
        vec![admitted("first", "k"), admitted("second", "k")]
    );
    assert_eq!(s.counters().applied, 2);
    assert_eq!(s.counters().replayed, 0);
}

#[test]
fn w_8_the_forwarder_does_not_forward_a_write_repeating_message_id() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = forwarder_conn(&mut f, "alice");
    let mut repeated = put("first", doc("k", 1));
    repeated[0] += 1;
    repeated.extend(str_bytes("messageId"));
    repeated.extend(str_bytes("second"));
    f.on_frame(c, R, &repeated, 1);
    // Not forwarded, and still answered once (W-15): a nil id, since neither id is trusted.
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let (id, code, _, _) = refusal(&got[0]);
    assert_eq!((id, code.as_deref()), (None, Some("message_invalid")));
    assert_eq!(f.counters().forwarded, 0);
    assert_eq!(f.counters().refused, 1);
    assert_eq!(f.primary_mut().read("notes", "k"), None);
}

/// Frames a server cannot decode: a put repeating messageId, one without its document, one
/// without its schemaId, a delete repeating another key, and bytes that are no MessagePack map.
fn unreadable_frames() -> Vec<(&'static str, Vec<u8>)> {
    let mut repeated_id = put("first", doc("k", 1));
    repeated_id[0] += 1;
    repeated_id.extend(str_bytes("messageId"));
    repeated_id.extend(str_bytes("second"));
    let mut no_document = vec![0x82];
    no_document.extend(str_bytes("schemaVersion"));
    no_document.extend(str_bytes(DOCUMENT_PUT_V0));
    no_document.extend(str_bytes("messageId"));
    no_document.extend(str_bytes("w-doc"));
    let mut no_schema = vec![0x83];
    no_schema.extend(str_bytes("schemaVersion"));
    no_schema.extend(str_bytes(DOCUMENT_PUT_V0));
    no_schema.extend(str_bytes("messageId"));
    no_schema.extend(str_bytes("w-schema"));
    no_schema.extend(str_bytes("document"));
    no_schema.push(0x84);
    for (k, v) in [("recordKey", "k"), ("storedAt", "t")] {
        no_schema.extend(str_bytes(k));
        no_schema.extend(str_bytes(v));
    }
    no_schema.extend(str_bytes("payload"));
    no_schema.push(0x01);
    let mut repeated_key = vec![0x85];
    for (k, v) in [
        ("schemaVersion", DOCUMENT_DELETE_V0),
        ("messageId", "w-del"),
        ("schemaId", "notes"),
        ("recordKey", "k"),
        ("recordKey", "k2"),
    ] {
        repeated_key.extend(str_bytes(k));
        repeated_key.extend(str_bytes(v));
    }
    vec![
        ("a repeated messageId", repeated_id),
        ("no document", no_document),
        ("no schemaId", no_schema),
        ("a repeated recordKey", repeated_key),
        ("no map", vec![0xc1, 0x00]),
    ]
}

#[test]
fn w_15_the_forwarder_answers_a_frame_it_cannot_read_once_as_the_primary_would() {
    for (what, bytes) in unreadable_frames() {
        for (receipts, channel) in [(true, R), (true, Channel::Sequenced), (false, R)] {
            let mut direct = Server::new(ServerConfig::default());
            let d = direct.connect("alice", 0);
            direct.on_frame(d, R, &hello(receipts), 0);
            direct.on_frame(d, channel, &bytes, 1);
            let want = answers(&mut direct, d, 1);
            assert_eq!(want.len(), 1, "{what}: the primary answers once");

            let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
            let c = f.connect("alice", 0);
            f.on_frame(c, R, &hello(receipts), 0);
            f.on_frame(c, channel, &bytes, 1);
            let got = peer_answers(&mut f, c, 1);
            assert_eq!(
                got, want,
                "{what}, receipts {receipts}, {channel:?}: one answer, as the primary's"
            );
            assert_eq!(f.counters().forwarded, 0, "{what}: nothing forwarded");
            assert_eq!(f.counters().refused, 1, "{what}: counted as refused");
        }
    }
}

#[test]
fn w_15_an_unreadable_write_through_the_forwarder_makes_a_later_hello_late() {
    let (_, bytes) = unreadable_frames().remove(1);
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = f.connect("alice", 0);
    f.on_frame(c, R, &hello(false), 0);
    f.on_frame(c, R, &bytes, 1);
    // A hello after a write, readable or not, changes nothing (as at the primary).
    f.on_frame(c, R, &hello(true), 2);
    assert_eq!(f.counters().late_hellos, 1);
    let got = peer_answers(&mut f, c, 2);
    assert!(
        matches!(got.as_slice(), [Frame::ErrorV0(_)]),
        "still a legacy peer: {got:?}"
    );
}

fn retaining(retention_ms: u64) -> Server {
    let mut s = Server::new(ServerConfig {
        retention_ms,
        ..ServerConfig::default()
    });
    s.deny("alice", "locked");
    s
}

fn locked(key: &str) -> Document {
    let mut d = doc(key, 5);
    d.schema_id = "locked".to_owned();
    d
}

/// A session of alice that admits `s1`, is refused `r1`, and ends at `end`.
fn first_session(s: &mut Server, end: u64) {
    let c = receipt_conn(s, "alice");
    s.on_frame(c, R, &put("s1", doc("k", 1)), 1);
    s.on_frame(c, R, &put("r1", locked("x")), 1);
    assert_eq!(answers(s, c, 1).len(), 2);
    s.on_tick(end);
    s.drop_connection(c);
}

#[test]
fn w_26_a_server_may_keep_an_actors_writes_past_the_session_up_to_its_retention() {
    let retention = cultnet_receipts::tracker::DEDUPE_RETENTION_MS;
    let mut s = retaining(retention);
    first_session(&mut s, 1000);
    assert_eq!(s.retained(), 2);
    let last = 1000 + retention - 1;
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("s1", doc("k", 1)), last);
    s.on_frame(d, R, &put("r1", locked("x")), last);
    s.on_frame(d, R, &put("s1", doc("k", 2)), last);
    let got = answers(&mut s, d, last);
    assert_eq!(got[0], admitted("s1", "k"), "replayed, not applied again");
    assert_eq!(refusal(&got[1]).1.as_deref(), Some("write_not_authorized"));
    let (id, code, _, field) = refusal(&got[2]);
    assert_eq!(
        (id.as_deref(), code.as_deref(), field.as_deref()),
        (Some("s1"), Some("message_invalid"), Some("messageId")),
        "other content under a retained id is refused, the old receipt not resent"
    );
    assert_eq!(s.counters().applied, 1);
    assert_eq!(s.read("notes", "k"), Some(&[1u8][..]));
    // Retention is per actor: bob's s1 is a write of its own.
    let b = receipt_conn(&mut s, "bob");
    s.on_frame(b, R, &put("s1", doc("j", 3)), last);
    assert_eq!(answers(&mut s, b, last), vec![admitted("s1", "j")]);
    assert_eq!(s.counters().applied, 2);
}

/// A receipt connection of transport actor `actor` whose hello claims the agent id `claimed`.
fn claiming_conn(s: &mut Server, actor: &str, claimed: &str) -> ConnId {
    let c = s.connect(actor, 0);
    let h = encode(&Frame::Hello(Hello {
        runtime_id: claimed.to_owned(),
        runtime_kind: "client".to_owned(),
        agent_id: Some(claimed.to_owned()),
        supported_message_versions: Some(vec![WRITE_ADMITTED_V0.to_owned(), ERROR_V1.to_owned()]),
        ..Hello::default()
    }))
    .unwrap();
    s.on_frame(c, R, &h, 0);
    assert!(s.is_receipt_connection(c));
    c
}

#[test]
fn w_19_a_claimed_name_never_reaches_another_actors_remembered_writes() {
    let mut s = retaining(cultnet_receipts::tracker::DEDUPE_RETENTION_MS);
    first_session(&mut s, 1000);
    // Bob claims to be alice in his hello and in his document: his s1, with other content, is
    // his own new write, neither a reuse of alice's id nor a replay of her admission.
    let b = claiming_conn(&mut s, "bob", "alice");
    let mut d = doc("j", 3);
    d.source_agent_id = Some("alice".to_owned());
    s.on_frame(b, R, &put("s1", d.clone()), 2000);
    assert_eq!(answers(&mut s, b, 2000), vec![admitted("s1", "j")]);
    assert_eq!(s.counters().applied, 2);
    assert_eq!(s.read("notes", "j"), Some(&[3u8][..]));
    // Alice claiming to be bob still finds her own s1 (replayed, not applied again), and bob's
    // s1 content is other content for her.
    let a = claiming_conn(&mut s, "alice", "bob");
    s.on_frame(a, R, &put("s1", doc("k", 1)), 2001);
    s.on_frame(a, R, &put("s1", d), 2001);
    let got = answers(&mut s, a, 2001);
    assert_eq!(got[0], admitted("s1", "k"));
    assert_eq!(refusal(&got[1]).3.as_deref(), Some("messageId"));
    assert_eq!(s.counters().applied, 2);
}

#[test]
fn w_26_retained_writes_expire_at_the_retention_and_a_resend_then_is_a_new_write() {
    // A longer configured retention is cut to DEDUPE_RETENTION_MS.
    let retention = cultnet_receipts::tracker::DEDUPE_RETENTION_MS;
    let mut s = retaining(10 * retention);
    first_session(&mut s, 1000);
    let charged = s.budget_used();
    assert_eq!(charged, 2 * ENTRY_BYTES, "retained writes stay charged");
    s.on_tick(1000 + retention);
    assert_eq!(s.retained(), 0);
    assert_eq!(s.budget_used(), 0, "and are uncharged when they expire");
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("s1", doc("k", 2)), 1000 + retention);
    assert_eq!(
        answers(&mut s, d, 1000 + retention),
        vec![admitted("s1", "k")]
    );
    assert_eq!(s.counters().applied, 2);
    assert_eq!(s.counters().retained_replays, 0);
}

#[test]
fn w_26_a_retained_write_answered_in_a_new_session_stays_for_that_session() {
    let retention = cultnet_receipts::tracker::DEDUPE_RETENTION_MS;
    let mut s = retaining(retention);
    first_session(&mut s, 1000);
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("s1", doc("k", 1)), 2000);
    // Long after the retention, the same session still knows the id.
    s.on_frame(d, R, &put("s1", doc("k", 1)), 10 * retention);
    assert_eq!(
        answers(&mut s, d, 10 * retention),
        vec![admitted("s1", "k"), admitted("s1", "k")]
    );
    assert_eq!(s.counters().applied, 1);
    assert_eq!(s.remembered(d), Some((1, 0)));
}

#[test]
fn w_26_a_write_committed_after_its_session_ended_is_retained_as_admitted() {
    let mut s = Server::new(ServerConfig {
        retention_ms: 60_000,
        commit_delay_ms: 100,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("p1", doc("k", 1)), 10);
    s.drop_connection(c);
    assert_eq!(s.retained(), 0, "not answered yet, so not retained yet");
    s.on_tick(110);
    assert_eq!(s.counters().applied, 1);
    assert_eq!(s.retained(), 1);
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("p1", doc("k", 1)), 200);
    assert_eq!(answers(&mut s, d, 200), vec![admitted("p1", "k")]);
    assert_eq!(s.counters().applied, 1);
}

#[test]
fn retained_writes_are_bounded_and_what_the_bound_drops_is_counted() {
    let mut s = Server::new(ServerConfig {
        retention_ms: 60_000,
        max_retained: 2,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    for (i, key) in ["a", "b", "c"].iter().enumerate() {
        s.on_frame(c, R, &put(&format!("w{i}"), doc(key, 1)), 1);
    }
    s.drop_connection(c);
    assert_eq!(s.retained(), 2);
    assert_eq!(s.counters().retained_dropped, 1);
    assert_eq!(s.budget_used(), 2 * ENTRY_BYTES);
    // Without retention nothing outlives the session.
    let mut plain = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut plain, "alice");
    plain.on_frame(c, R, &put("w", doc("a", 1)), 1);
    plain.drop_connection(c);
    assert_eq!((plain.retained(), plain.budget_used()), (0, 0));
}

#[test]
fn w_7_a_write_whose_id_fails_the_rule_is_refused_before_it_is_applied() {
    for id in ["-", " ", "a\u{200B}", "\u{2800}"] {
        let mut s = Server::new(ServerConfig::default());
        let c = receipt_conn(&mut s, "alice");
        s.on_frame(c, R, &put(id, doc("k", 1)), 1);
        s.on_frame(c, R, &delete(id, "j"), 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(got.len(), 2, "{id:?}: {got:?}");
        for g in &got {
            let (got_id, code, text, field) = refusal(g);
            assert_eq!(got_id.as_deref(), Some(id), "the refusal keeps the id");
            assert_eq!(code.as_deref(), Some("message_invalid"));
            assert_eq!(text, TEXT_UNREADABLE);
            assert_eq!(field.as_deref(), Some("message"));
        }
        assert_eq!(s.read("notes", "k"), None, "{id:?} was applied");
        assert_eq!(s.counters().applied, 0);
        assert_eq!(s.remembered(c), Some((0, 0)), "nothing is remembered");
        // The session goes on.
        s.on_frame(c, R, &put("ok", doc("k", 2)), 2);
        assert_eq!(answers(&mut s, c, 2), vec![admitted("ok", "k")]);
    }
}

#[test]
fn w_7_a_legacy_connection_may_use_any_id() {
    let mut s = Server::new(ServerConfig::default());
    let c = s.connect("alice", 0);
    s.on_frame(c, R, &put("-", doc("k", 1)), 1);
    assert_eq!(s.read("notes", "k"), Some(&[1u8][..]));
    assert!(answers(&mut s, c, 1).is_empty());
}

#[test]
fn w_7_the_duplicate_key_fault_never_panics_on_an_id_that_does_not_encode() {
    let mut s = Server::new(ServerConfig::default());
    s.set_faults(Faults {
        duplicate_key_receipts: true,
        ..Faults::default()
    });
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("-", doc("k", 1)), 1);
    assert_eq!(answers(&mut s, c, 1).len(), 1);
    assert_eq!(s.read("notes", "k"), None);
}

#[test]
fn w_7_the_forwarder_refuses_an_id_that_fails_the_rule_without_forwarding_it() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = forwarder_conn(&mut f, "alice");
    f.on_frame(c, R, &put("a\u{200B}", doc("k", 1)), 1);
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let (id, code, _, _) = refusal(&got[0]);
    assert_eq!(
        (id.as_deref(), code.as_deref()),
        (Some("a\u{200B}"), Some("message_invalid"))
    );
    assert_eq!(f.primary_mut().read("notes", "k"), None);
    assert_eq!(f.counters().forwarded, 0);
}

#[test]
fn w_31_past_the_peers_id_map_the_forwarder_refuses_limit_reached_never_silently() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 2);
    let c = forwarder_conn(&mut f, "alice");
    for i in 0..3 {
        f.on_frame(c, R, &put(&format!("id{i}"), doc(&format!("k{i}"), 1)), 1);
    }
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 3, "every write is answered: {got:?}");
    assert_eq!(got[0], admitted("id0", "k0"));
    assert_eq!(got[1], admitted("id1", "k1"));
    let (id, code, _, field) = refusal(&got[2]);
    assert_eq!(
        (id.as_deref(), code.as_deref(), field),
        (Some("id2"), Some("limit_reached"), None)
    );
    assert_eq!(f.primary_mut().read("notes", "k2"), None);
    assert_eq!(f.counters().map_full, 1);
    // A resend of a mapped id is still forwarded and answered.
    f.on_frame(c, R, &put("id0", doc("k0", 1)), 2);
    assert_eq!(peer_answers(&mut f, c, 2), vec![admitted("id0", "k0")]);
}

#[test]
fn w_31_the_peers_id_map_is_bounded_in_bytes() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 1000);
    f.set_max_id_bytes_per_peer(2 * (200 + 6 + cultnet_sim::forwarder::ID_PAIR_OVERHEAD_BYTES));
    let c = forwarder_conn(&mut f, "alice");
    for i in 0..3 {
        let id = format!("{i}{}", "x".repeat(199));
        f.on_frame(c, R, &put(&id, doc(&format!("k{i}"), 1)), 1);
    }
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(matches!(got[0], Frame::WriteAdmitted(_)));
    assert!(matches!(got[1], Frame::WriteAdmitted(_)));
    assert_eq!(refusal(&got[2]).1.as_deref(), Some("limit_reached"));
}

#[test]
fn w_11_a_legacy_peer_of_the_forwarder_gets_the_legacy_behaviour() {
    let mut primary = Server::new(ServerConfig::default());
    primary.deny("bob", "locked");
    // A bound of 4 ids per peer applies to receipt peers only.
    let mut f = Forwarder::new(primary, 4);
    let c = f.connect("bob", 0);
    f.on_frame(c, R, &hello(false), 0);
    for i in 0..1030 {
        f.on_frame(c, R, &put(&format!("id{i}"), doc(&format!("k{i}"), 1)), 1);
    }
    let applied = (0..1030)
        .filter(|i| f.primary_mut().read("notes", &format!("k{i}")).is_some())
        .count();
    assert_eq!(applied, 1030, "no remembered-write limit on a legacy peer");
    assert!(
        peer_answers(&mut f, c, 1).is_empty(),
        "no receipt for a legacy peer"
    );
    let mut locked = doc("k", 2);
    locked.schema_id = "locked".to_owned();
    f.on_frame(c, R, &put("x", locked), 2);
    let got = peer_answers(&mut f, c, 2);
    assert!(
        matches!(&got[..], [Frame::ErrorV0(e)] if e.code.as_deref() == Some("write_not_authorized")),
        "the primary's error.v0 is relayed: {got:?}"
    );
    // A peer that sent no hello at all is legacy too.
    let d = f.connect("bob", 3);
    f.on_frame(d, R, &put("y", doc("kk", 1)), 3);
    assert!(peer_answers(&mut f, d, 3).is_empty());
    assert_eq!(f.primary_mut().read("notes", "kk"), Some(&[1u8][..]));
}

#[test]
fn w_22_the_forwarder_judges_the_peers_own_id_length() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = forwarder_conn(&mut f, "alice");
    let long = "x".repeat(300);
    f.on_frame(c, R, &put(&long, doc("kk", 1)), 1);
    let got = peer_answers(&mut f, c, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let (id, code, text, field) = refusal(&got[0]);
    assert_eq!(id.as_deref(), Some(long.as_str()));
    assert_eq!(code.as_deref(), Some("message_invalid"));
    assert_eq!(text, "message_invalid: messageId exceeds 256 bytes");
    assert_eq!(field.as_deref(), Some("messageId"));
    assert_eq!(f.primary_mut().read("notes", "kk"), None);
    // Exactly 256 bytes is not over the limit.
    let edge = "y".repeat(256);
    f.on_frame(c, R, &put(&edge, doc("kk", 1)), 2);
    assert_eq!(peer_answers(&mut f, c, 2), vec![admitted(&edge, "kk")]);
}

#[test]
fn w_12_a_forwarder_in_front_of_a_legacy_primary_lists_neither_new_frame() {
    let mut f = Forwarder::new(
        Server::new(ServerConfig {
            receipts: false,
            ..ServerConfig::default()
        }),
        4,
    );
    let p = f.connect("alice", 0);
    let o = f.poll_output(0).expect("the forwarder's hello");
    assert_eq!(o.conn, p);
    let Ok(Frame::Hello(h)) = decode(&o.bytes) else {
        panic!("a hello expected");
    };
    assert!(!h.is_receipt_capable());
    let listed = h.supported_message_versions.unwrap_or_default();
    assert!(
        !listed
            .iter()
            .any(|v| v == WRITE_ADMITTED_V0 || v == ERROR_V1),
        "{listed:?}"
    );
    // A receipt hello from the peer changes nothing: it is answered the old way.
    f.on_frame(p, R, &hello(true), 0);
    f.primary_mut().deny("alice", "locked");
    let mut locked = doc("k", 2);
    locked.schema_id = "locked".to_owned();
    f.on_frame(p, R, &put("x", locked), 1);
    let got = peer_answers(&mut f, p, 1);
    assert!(matches!(&got[..], [Frame::ErrorV0(_)]), "{got:?}");
}

#[test]
fn w_10_a_hello_after_the_first_write_does_not_change_a_forwarder_peer() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = f.connect("alice", 0);
    f.on_frame(c, R, &put("a1", doc("k", 1)), 1);
    f.on_frame(c, R, &hello(true), 1);
    f.on_frame(c, R, &put("a2", doc("j", 1)), 2);
    assert!(peer_answers(&mut f, c, 2).is_empty(), "still legacy");
    assert_eq!(f.counters().late_hellos, 1);
}

/// A put that does not decode (no document) under `id`.
fn put_without_document(id: &str) -> Vec<u8> {
    let mut b = vec![0x82];
    b.extend(str_bytes("schemaVersion"));
    b.extend(str_bytes(DOCUMENT_PUT_V0));
    b.extend(str_bytes("messageId"));
    b.extend(str_bytes(id));
    b
}

#[test]
fn w_22_an_unreadable_write_with_an_id_over_256_bytes_is_refused_for_its_id() {
    for (len, field) in [(256, "document"), (257, "messageId")] {
        let id = "i".repeat(len);
        let mut s = Server::new(ServerConfig::default());
        let c = receipt_conn(&mut s, "alice");
        s.on_frame(c, R, &put_without_document(&id), 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(got.len(), 1);
        let (named, code, _, f) = refusal(&got[0]);
        assert_eq!(
            (code.as_deref(), f.as_deref()),
            (Some("message_invalid"), Some(field)),
            "an id of {len} bytes"
        );
        assert_eq!(named.as_deref(), Some(id.as_str()), "the refusal names it");
    }
}

#[test]
fn w_17_a_frame_repeating_message_id_is_refused_with_a_nil_id_whatever_fails_first() {
    // The document is not a map and comes before the second messageId.
    let mut b = vec![0x84];
    b.extend(str_bytes("schemaVersion"));
    b.extend(str_bytes(DOCUMENT_PUT_V0));
    b.extend(str_bytes("messageId"));
    b.extend(str_bytes("first"));
    b.extend(str_bytes("document"));
    b.push(0x05);
    b.extend(str_bytes("messageId"));
    b.extend(str_bytes("second"));
    let mut s = Server::new(ServerConfig::default());
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &b, 1);
    let got = answers(&mut s, c, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(refusal(&got[0]).0, None, "neither id is named: {got:?}");
}

#[test]
fn w_15_a_readable_frame_that_is_no_write_is_neither_forwarded_nor_answered() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 16);
    let c = forwarder_conn(&mut f, "alice");
    let _ = peer_answers(&mut f, c, 0);
    let admitted = encode(&Frame::ErrorV1(ErrorV1 {
        message_id: Some("x".to_owned()),
        error: "no".to_owned(),
        code: None,
        details: None,
    }))
    .unwrap();
    f.on_frame(c, R, &admitted, 1);
    f.on_frame(c, R, &admitted, 1);
    assert!(peer_answers(&mut f, c, 1).is_empty());
    let n = f.counters();
    assert_eq!((n.not_forwarded, n.forwarded, n.refused), (2, 0, 0));
}

/// The error text and (code, details field) of an error frame of either version.
fn text_of(frame: &Frame) -> (String, Option<String>, Option<String>) {
    match frame {
        Frame::ErrorV1(e) => (
            e.error.clone(),
            e.code.as_deref().map(str::to_owned),
            e.details.as_ref().and_then(|d| d.field.clone()),
        ),
        Frame::ErrorV0(e) => (
            e.error.clone(),
            e.code.as_deref().map(str::to_owned),
            e.details.as_ref().and_then(|d| d.field.clone()),
        ),
        other => panic!("not an error: {other:?}"),
    }
}

/// A delete without its schemaId.
fn delete_without_schema_id(id: &str) -> Vec<u8> {
    raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_DELETE_V0)),
        ("messageId", str_bytes(id)),
        ("recordKey", str_bytes("k")),
    ])
}

/// A delete whose recordKey is an integer: the codec refuses it, its id still reads.
fn delete_with_integer_key(id: &str) -> Vec<u8> {
    raw_map(&[
        ("schemaVersion", str_bytes(DOCUMENT_DELETE_V0)),
        ("messageId", str_bytes(id)),
        ("schemaId", str_bytes("notes")),
        ("recordKey", vec![0x05]),
    ])
}

/// A frame on a channel and the text, code and details field of its refusal.
type TextCase = (
    Channel,
    Vec<u8>,
    &'static str,
    &'static str,
    Option<&'static str>,
);

#[test]
fn w_29_every_fixed_text_reaches_the_wire_verbatim_for_the_refusal_it_names() {
    // The texts are written out here, not taken from the server's constants.
    let too_long = "message_invalid: messageId exceeds 256 bytes";
    let document = "message_invalid: document is required";
    let schema = "message_invalid: schemaId is required";
    let unreadable = "message_invalid: the message could not be read";
    let channel = "message_invalid: receipt sessions require the reliable channel";
    let limit = "limit_reached: the session's remembered-write limit is full";
    let mut blank = doc("k", 1);
    blank.schema_id = " ".to_owned();
    let cases: Vec<TextCase> = vec![
        (
            R,
            put(&"i".repeat(257), doc("k", 1)),
            too_long,
            "message_invalid",
            Some("messageId"),
        ),
        (
            R,
            put_without_document("p"),
            document,
            "message_invalid",
            Some("document"),
        ),
        (
            R,
            delete_without_schema_id("d"),
            schema,
            "message_invalid",
            Some("schemaId"),
        ),
        (
            R,
            delete_with_integer_key("u"),
            unreadable,
            "message_invalid",
            Some("message"),
        ),
        (
            R,
            vec![0xc1],
            unreadable,
            "message_invalid",
            Some("message"),
        ),
        (
            R,
            put("n", blank),
            unreadable,
            "message_invalid",
            Some("message"),
        ),
        (
            Channel::Sequenced,
            put("q", doc("k", 1)),
            channel,
            "message_invalid",
            Some("channel"),
        ),
        (R, put("over", doc("j", 1)), limit, "limit_reached", None),
    ];
    for (ch, frame, text, code, field) in cases {
        let mut s = Server::new(ServerConfig {
            max_entries_per_session: 1,
            ..ServerConfig::default()
        });
        let c = receipt_conn(&mut s, "alice");
        fill(&mut s, c, 1, "f");
        s.on_frame(c, ch, &frame, 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(got.len(), 1, "{text}: {got:?}");
        assert_eq!(
            text_of(&got[0]),
            (
                text.to_owned(),
                Some(code.to_owned()),
                field.map(str::to_owned)
            ),
            "{frame:02x?}"
        );
        assert_eq!(s.counters().applied, 1, "only the filler was applied");
        // The fixed text never carries the decoder's own wording.
        if let Err(e) = decode(&frame) {
            assert!(!text.contains(&e.to_string()));
        }
    }
}

#[test]
fn w_29_a_legacy_connection_and_the_forwarder_carry_the_same_fixed_texts() {
    let mut blank = doc("k", 1);
    blank.record_key = "\u{3000}".to_owned();
    // A legacy connection: error.v0 with the same texts.
    let mut s = Server::new(ServerConfig::default());
    let c = s.connect("alice", 0);
    for (frame, text) in [
        (
            put_without_document("p"),
            "message_invalid: document is required",
        ),
        (
            delete_without_schema_id("d"),
            "message_invalid: schemaId is required",
        ),
        (
            delete_with_integer_key("u"),
            "message_invalid: the message could not be read",
        ),
        (
            put("n", blank.clone()),
            "message_invalid: the message could not be read",
        ),
    ] {
        s.on_frame(c, R, &frame, 1);
        let got = answers(&mut s, c, 1);
        assert!(matches!(&got[..], [Frame::ErrorV0(_)]), "{got:?}");
        assert_eq!(text_of(&got[0]).0, text);
    }
    // The forwarder's own refusals, and the primary's relayed ones, keep the texts too.
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 1);
    let p = forwarder_conn(&mut f, "alice");
    // The peer's one id-map slot is taken.
    f.on_frame(p, R, &put("f0", doc("f", 1)), 0);
    assert_eq!(peer_answers(&mut f, p, 0), vec![admitted("f0", "f")]);
    let cases = [
        (
            put(&"i".repeat(257), doc("k", 1)),
            "message_invalid: messageId exceeds 256 bytes",
        ),
        (
            delete_with_integer_key("u"),
            "message_invalid: the message could not be read",
        ),
        (
            put("n", blank),
            "message_invalid: the message could not be read",
        ),
        (
            put("over", doc("j", 1)),
            "limit_reached: the session's remembered-write limit is full",
        ),
    ];
    for (i, (frame, text)) in cases.into_iter().enumerate() {
        f.on_frame(p, R, &frame, 1 + i as u64);
        let got = peer_answers(&mut f, p, 1 + i as u64);
        assert!(matches!(&got[..], [Frame::ErrorV1(_)]), "{got:?}");
        assert_eq!(text_of(&got[0]).0, text);
    }
}

#[test]
fn w_27_a_write_that_names_nothing_is_refused_as_unreadable_at_the_cap_and_takes_no_slot() {
    let mut s = Server::new(ServerConfig {
        max_entries_per_session: 1,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    let mut blank = doc("k", 1);
    blank.stored_at = "\u{2000}".to_owned();
    let expect = (
        Some("n".to_owned()),
        Some("message_invalid".to_owned()),
        "message_invalid: the message could not be read".to_owned(),
        Some("message".to_owned()),
    );
    // Below the cap: refused as a frame that does not read is, and nothing is remembered.
    s.on_frame(c, R, &put("n", blank.clone()), 1);
    assert_eq!(refusal(&answers(&mut s, c, 1)[0]), expect);
    assert_eq!(s.remembered(c), Some((0, 0)));
    assert_eq!(s.budget_used(), 0);
    // So the one slot is still there for a write that names something.
    s.on_frame(c, R, &put("a", doc("k", 1)), 2);
    assert_eq!(answers(&mut s, c, 2), vec![admitted("a", "k")]);
    // At the cap the same write is still refused as unreadable, not limit_reached, and is
    // neither remembered nor charged; its resend is refused afresh, identically.
    let used = s.budget_used();
    for now in [3, 4] {
        s.on_frame(c, R, &put("n", blank.clone()), now);
        let got = answers(&mut s, c, now);
        assert_eq!(got.len(), 1);
        assert_eq!(refusal(&got[0]), expect);
    }
    assert_eq!(s.remembered(c), Some((1, 0)));
    assert_eq!(s.budget_used(), used);
    assert_eq!(s.counters().applied, 1);
    // A frame that does not decode gets the same refusal at the cap.
    s.on_frame(c, R, &delete_with_integer_key("n"), 5);
    assert_eq!(refusal(&answers(&mut s, c, 5)[0]), expect);
}

#[test]
fn w_25_the_reference_refusal_set_holds_1024_limit_refusals_outside_the_table() {
    let mut s = Server::new(ServerConfig::default());
    assert_eq!(ServerConfig::default().max_refusals_per_session, 1024);
    let c = receipt_conn(&mut s, "alice");
    fill(&mut s, c, 1024, "f");
    for i in 0..1024 {
        s.on_frame(c, R, &put(&format!("r{i}"), doc("k", 2)), 2);
    }
    let got = answers(&mut s, c, 2);
    assert_eq!(got.len(), 1024);
    assert!(got
        .iter()
        .all(|f| refusal(f).1.as_deref() == Some("limit_reached")));
    // Every one remembered, none of them in the table's 1024.
    assert_eq!(s.remembered(c), Some((1024, 1024)));
    assert_eq!(s.counters().limit_refusals_not_remembered, 0);
    // The 1025th is refused without being remembered.
    s.on_frame(c, R, &put("r1024", doc("k", 2)), 3);
    assert_eq!(
        refusal(&answers(&mut s, c, 3)[0]).1.as_deref(),
        Some("limit_reached")
    );
    assert_eq!(s.remembered(c), Some((1024, 1024)));
    assert_eq!(s.counters().limit_refusals_not_remembered, 1);
    // The first and the last remembered refusal are replayed from the set.
    let replayed = s.counters().replayed;
    for id in ["r0", "r1023"] {
        s.on_frame(c, R, &put(id, doc("k", 2)), 4);
    }
    assert_eq!(answers(&mut s, c, 4).len(), 2);
    assert_eq!(s.counters().replayed, replayed + 2);
    assert_eq!(s.counters().applied, 1024);
}

#[test]
fn w_25_a_session_past_its_refusal_set_closes_itself_only() {
    let mut s = Server::new(ServerConfig {
        max_entries_per_session: 1,
        max_refusals_per_session: 1,
        ..ServerConfig::default()
    });
    let a = receipt_conn(&mut s, "alice");
    fill(&mut s, a, 1, "a");
    for id in ["x", "y"] {
        s.on_frame(a, R, &put(id, doc("k", 1)), 2);
    }
    assert_eq!(s.counters().limit_refusals_not_remembered, 1);
    let _ = answers(&mut s, a, 2);
    // Another session of the same actor, and one of another actor, start with room.
    let b = receipt_conn(&mut s, "alice");
    let c = receipt_conn(&mut s, "bob");
    s.on_frame(b, R, &put("y", doc("k", 1)), 3);
    s.on_frame(c, R, &put("z", doc("k", 1)), 3);
    // And the closed one stays closed.
    s.on_frame(a, R, &put("w", doc("k", 1)), 3);
    let mut got = Vec::new();
    while let Some(o) = s.poll_output(3) {
        let f = decode(&o.bytes).unwrap();
        if !matches!(f, Frame::Hello(_)) {
            got.push((o.conn, f));
        }
    }
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0], (b, admitted("y", "k")));
    assert_eq!(got[1], (c, admitted("z", "k")));
    assert_eq!(got[2].0, a);
    assert_eq!(
        (
            refusal(&got[2].1).0.as_deref(),
            refusal(&got[2].1).1.as_deref()
        ),
        (Some("w"), Some("limit_reached"))
    );
    assert_eq!(s.counters().limit_refusals_not_remembered, 2);
}

#[test]
fn w_22_at_the_cap_an_id_over_256_bytes_is_refused_for_its_length_and_remembered_nowhere() {
    let mut s = Server::new(ServerConfig {
        max_entries_per_session: 1,
        max_refusals_per_session: 1,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    fill(&mut s, c, 1, "f");
    let long = "l".repeat(257);
    // At the table's cap, with room in the refusal set: the length is judged first, and the
    // refusal set keeps no digest of the id.
    s.on_frame(c, R, &put(&long, doc("k", 1)), 2);
    let got = answers(&mut s, c, 2);
    assert_eq!(refusal(&got[0]).3.as_deref(), Some("messageId"));
    assert_eq!(s.remembered(c), Some((1, 0)));
    // So the set's one slot still takes the next limit refusal, and past it the long id is
    // still refused for its length, not limit_reached, without being counted as a limit
    // refusal that was not remembered.
    s.on_frame(c, R, &put("x", doc("k", 1)), 3);
    s.on_frame(c, R, &put("y", doc("k", 1)), 3);
    assert_eq!(s.remembered(c), Some((1, 1)));
    assert_eq!(s.counters().limit_refusals_not_remembered, 1);
    s.on_frame(c, R, &put(&long, doc("k", 1)), 4);
    let got = answers(&mut s, c, 4);
    let last = got.last().unwrap();
    assert_eq!(
        refusal(last),
        (
            Some(long.clone()),
            Some("message_invalid".into()),
            "message_invalid: messageId exceeds 256 bytes".into(),
            Some("messageId".into())
        )
    );
    assert_eq!(s.counters().limit_refusals_not_remembered, 1);
}

/// The store and the (code, text, field) of every refusal after a run of writes from the peer
/// `mallory` through a forwarder, with or without a receipt hello claiming someone else.
fn run_writes_through_the_forwarder(receipt_hello: bool) -> Run {
    let mut primary = Server::new(ServerConfig::default());
    primary.deny("mallory", "locked");
    let mut f = Forwarder::new(primary, 16);
    let c = f.connect("mallory", 0);
    if receipt_hello {
        // hello(true) claims the agent "someone-else"; it must not matter.
        f.on_frame(c, R, &hello(true), 0);
    }
    let mut locked = doc("x", 9);
    locked.schema_id = "locked".to_owned();
    for w in [
        put("r1", doc("a", 1)),
        put("r2", locked.clone()),
        put("r3", doc("b", 2)),
        delete("r4", "a"),
        put("r5", doc("\u{3000}", 3)),
        put("r6", locked),
    ] {
        f.on_frame(c, R, &w, 1);
    }
    let mut refusals = Vec::new();
    for fr in peer_answers(&mut f, c, 1) {
        match fr {
            Frame::ErrorV0(e) => refusals.push((e.code, e.error, e.details.and_then(|d| d.field))),
            Frame::ErrorV1(e) => refusals.push((e.code, e.error, e.details.and_then(|d| d.field))),
            _ => {}
        }
    }
    let p = f.primary_mut();
    let store = ["a", "b", "x", "\u{3000}"]
        .iter()
        .map(|k| p.read("notes", k).map(<[u8]>::to_vec))
        .chain([p.read("locked", "x").map(<[u8]>::to_vec)])
        .collect();
    (store, refusals)
}

#[test]
fn w_14_through_the_forwarder_the_capability_changes_the_frames_only() {
    let (legacy_store, legacy_refusals) = run_writes_through_the_forwarder(false);
    let (receipt_store, receipt_refusals) = run_writes_through_the_forwarder(true);
    assert_eq!(legacy_store, receipt_store, "the same writes took effect");
    assert_eq!(legacy_refusals, receipt_refusals);
    // Both locked writes refused as not authorized for the transport's actor, whatever the
    // hello claimed, and the blank key refused as unreadable.
    let codes: Vec<_> = receipt_refusals
        .iter()
        .map(|(c, _, _)| c.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(codes.len(), 3, "{receipt_refusals:?}");
    assert_eq!(
        codes
            .iter()
            .filter(|c| c.as_deref() == Some("write_not_authorized"))
            .count(),
        2
    );
    assert_eq!(
        receipt_store[4], None,
        "the locked record was never written"
    );
    // And the same run straight to the primary ends the same way.
    assert_eq!(run_writes(true), (receipt_store, receipt_refusals));
}

#[test]
fn w_16_every_receipt_a_reader_could_check_finds_the_write_visible_deletes_and_early_commits_included(
) {
    let mut s = Server::new(ServerConfig {
        commit_delay_ms: 100,
        max_pending_commits: 2,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    // Records a delete will remove, committed first.
    s.on_frame(c, R, &put("p0", doc("gone0", 1)), 0);
    s.on_frame(c, R, &put("p1", doc("gone1", 1)), 0);
    s.on_tick(100);
    let _ = answers(&mut s, c, 100);
    // Four writes at once past a commit queue of two: the oldest commit early.
    s.on_frame(c, R, &put("a", doc("ka", 3)), 200);
    s.on_frame(c, R, &delete("b", "gone0"), 200);
    s.on_frame(c, R, &put("c", doc("kc", 4)), 200);
    s.on_frame(c, R, &delete("d", "gone1"), 200);
    assert!(s.counters().early_commits >= 2);
    let mut seen = Vec::new();
    for now in 200..=400 {
        while let Some(o) = s.poll_output(now) {
            let Ok(Frame::WriteAdmitted(a)) = decode(&o.bytes) else {
                continue;
            };
            let visible = s.read(&a.schema_id, &a.record_key).map(<[u8]>::to_vec);
            match a.operation {
                Operation::Put => assert!(visible.is_some(), "{a:?} at {now}"),
                Operation::Delete => assert_eq!(visible, None, "{a:?} at {now}"),
            }
            seen.push(a.message_id);
        }
    }
    assert_eq!(seen, ["a", "b", "c", "d"]);
    // And before its commit a pending delete has not yet removed anything, so it has no receipt.
    s.on_frame(c, R, &put("e", doc("ke", 5)), 500);
    s.on_tick(600);
    let _ = answers(&mut s, c, 600);
    s.on_frame(c, R, &delete("f", "ke"), 700);
    assert!(answers(&mut s, c, 799).is_empty());
    assert_eq!(s.read("notes", "ke"), Some(&[5u8][..]));
    assert_eq!(answers(&mut s, c, 800).len(), 1);
    assert_eq!(s.read("notes", "ke"), None);
}

#[test]
fn w_23_a_delete_and_a_refusal_are_kept_as_digests_and_their_answer_at_one_fixed_cost() {
    use cultnet_receipts::hash::delete_hash;
    use cultnet_sim::server::Answer;
    let mut s = Server::new(ServerConfig::default());
    s.deny("alice", "locked");
    let c = receipt_conn(&mut s, "alice");
    let del_id = "d".repeat(256);
    let del = DocumentDelete {
        message_id: del_id.clone(),
        schema_id: "notes".to_owned(),
        record_key: "k".repeat(1000),
    };
    s.on_frame(
        c,
        R,
        &encode(&Frame::DocumentDelete(del.clone())).unwrap(),
        1,
    );
    let mut locked = doc("k", 1);
    locked.schema_id = "locked".to_owned();
    let locked_put = DocumentPut {
        message_id: "x".to_owned(),
        document: locked.clone(),
    };
    s.on_frame(c, R, &put("x", locked), 1);
    let sha = |b: &[u8]| <[u8; 32]>::from(Sha256::digest(b));
    let table = s.table(c);
    assert_eq!(table.len(), 2);
    let find = |id: &str| {
        table
            .iter()
            .find(|(k, _)| *k == sha(id.as_bytes()))
            .map(|(_, r)| *r)
            .expect("kept under the digest of its id")
    };
    let d = find(&del_id);
    assert_eq!(d.content_digest, sha(&delete_hash(&del)));
    assert_eq!(d.answer, Answer::Admitted);
    let x = find("x");
    assert_eq!(x.content_digest, sha(&put_hash(&locked_put)));
    assert_eq!(x.answer, Answer::Refused(Refusal::NotAuthorized));
    // Both cost the same fixed size: two digests and a small answer, nothing of the id, key or
    // payload.
    assert_eq!(s.budget_used(), 2 * ENTRY_BYTES);
    const { assert!(ENTRY_BYTES <= 2 * 32 + 16) };
}

#[test]
fn w_27_a_payload_of_zero_bytes_names_nothing_in_every_bin_head() {
    // An empty bin written with an 8-, 16- or 32-bit length is the same empty payload.
    for empty in [
        vec![0xc4, 0x00],
        vec![0xc5, 0x00, 0x00],
        vec![0xc6, 0, 0, 0, 0],
    ] {
        let mut s = Server::new(ServerConfig::default());
        let c = receipt_conn(&mut s, "alice");
        let mut d = doc("k", 1);
        d.payload = RawValue::new(empty.clone()).unwrap();
        s.on_frame(c, R, &put("z", d), 1);
        let got = answers(&mut s, c, 1);
        assert_eq!(
            refusal(&got[0]),
            (
                Some("z".into()),
                Some("message_invalid".into()),
                "message_invalid: the message could not be read".into(),
                Some("message".into())
            ),
            "{empty:02x?}"
        );
        assert_eq!(s.counters().applied, 0, "{empty:02x?}");
    }
    // One byte of payload in any head names something.
    for one in [vec![0xc4, 0x01, 0x00], vec![0xc5, 0x00, 0x01, 0x00]] {
        let mut s = Server::new(ServerConfig::default());
        let c = receipt_conn(&mut s, "alice");
        let mut d = doc("k", 1);
        d.payload = RawValue::new(one.clone()).unwrap();
        s.on_frame(c, R, &put("z", d), 1);
        assert_eq!(
            answers(&mut s, c, 1),
            vec![admitted("z", "k")],
            "{one:02x?}"
        );
    }
}

#[test]
fn w_27_through_the_forwarder_a_write_that_names_nothing_is_refused_as_unreadable_at_its_id_map_cap(
) {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 1);
    let c = forwarder_conn(&mut f, "alice");
    let _ = peer_answers(&mut f, c, 0);
    let mut blank = doc("k", 1);
    blank.record_key = "\u{2029}".to_owned();
    let expect = (
        Some("n".to_owned()),
        Some("message_invalid".to_owned()),
        "message_invalid: the message could not be read".to_owned(),
        Some("message".to_owned()),
    );
    // Below the cap it takes no slot of the peer's id map ...
    f.on_frame(c, R, &put("n", blank.clone()), 1);
    assert_eq!(refusal(&peer_answers(&mut f, c, 1)[0]), expect);
    f.on_frame(c, R, &put("a", doc("k", 1)), 2);
    assert_eq!(peer_answers(&mut f, c, 2), vec![admitted("a", "k")]);
    // ... and at the cap it is still refused as unreadable, not limit_reached.
    for now in [3, 4] {
        f.on_frame(c, R, &put("n", blank.clone()), now);
        let got = peer_answers(&mut f, c, now);
        assert_eq!(got.len(), 1);
        assert_eq!(refusal(&got[0]), expect);
    }
    assert_eq!(f.counters().map_full, 0);
    assert_eq!(f.primary_mut().counters().applied, 1);
}

#[test]
fn w_30_through_the_forwarder_a_sequenced_write_is_refused_for_its_channel_at_the_id_map_cap() {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 1);
    let c = forwarder_conn(&mut f, "alice");
    let _ = peer_answers(&mut f, c, 0);
    // A refused sequenced write takes no slot of the peer's id map ...
    f.on_frame(c, Channel::Sequenced, &put("q", doc("k", 1)), 1);
    assert_eq!(
        refusal(&peer_answers(&mut f, c, 1)[0]).3.as_deref(),
        Some("channel")
    );
    f.on_frame(c, R, &put("a", doc("k", 1)), 2);
    assert_eq!(peer_answers(&mut f, c, 2), vec![admitted("a", "k")]);
    // ... and at the cap it is still refused for its channel, as the server refuses it, not
    // limit_reached.
    f.on_frame(c, Channel::Sequenced, &put("q2", doc("j", 1)), 3);
    let got = peer_answers(&mut f, c, 3);
    assert_eq!(
        refusal(&got[0]),
        (
            Some("q2".into()),
            Some("message_invalid".into()),
            "message_invalid: receipt sessions require the reliable channel".into(),
            Some("channel".into())
        )
    );
    assert_eq!(f.counters().map_full, 0);
    assert_eq!(f.primary_mut().read("notes", "j"), None);
}

#[test]
fn w_22_through_the_forwarder_an_id_over_256_bytes_takes_no_slot_and_is_refused_for_its_length_at_the_cap(
) {
    let mut f = Forwarder::new(Server::new(ServerConfig::default()), 1);
    let c = forwarder_conn(&mut f, "alice");
    let _ = peer_answers(&mut f, c, 0);
    let long = "z".repeat(257);
    f.on_frame(c, R, &put(&long, doc("k", 1)), 1);
    assert_eq!(
        refusal(&peer_answers(&mut f, c, 1)[0]).3.as_deref(),
        Some("messageId")
    );
    // The one slot is still free ...
    f.on_frame(c, R, &put("a", doc("k", 1)), 2);
    assert_eq!(peer_answers(&mut f, c, 2), vec![admitted("a", "k")]);
    // ... and at the cap the long id is refused for its length, afresh, never limit_reached.
    for now in [3, 4] {
        f.on_frame(c, R, &put(&long, doc("k", 1)), now);
        let got = peer_answers(&mut f, c, now);
        assert_eq!(
            refusal(&got[0]),
            (
                Some(long.clone()),
                Some("message_invalid".into()),
                "message_invalid: messageId exceeds 256 bytes".into(),
                Some("messageId".into())
            )
        );
    }
    assert_eq!(f.counters().map_full, 0);
}

#[test]
fn w_26_a_retained_write_answered_at_the_cap_keeps_its_answer_for_the_session() {
    let retention = cultnet_receipts::tracker::DEDUPE_RETENTION_MS;
    let mut s = Server::new(ServerConfig {
        retention_ms: retention,
        max_entries_per_session: 1,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("s1", doc("k", 1)), 1);
    assert_eq!(answers(&mut s, c, 1), vec![admitted("s1", "k")]);
    s.on_tick(1000);
    s.drop_connection(c);
    assert_eq!(s.retained(), 1);
    // A new session of the same actor fills its table, then sends the retained id again.
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("f1", doc("j", 2)), 2000);
    assert_eq!(answers(&mut s, d, 2000), vec![admitted("f1", "j")]);
    s.on_frame(d, R, &put("s1", doc("k", 1)), 2000);
    let first = answers(&mut s, d, 2000);
    assert_eq!(first.len(), 1, "{first:?}");
    // Past the retention the same session is sent the same key and content again: a key lives
    // for the whole session, so it gets the answer it got before.
    let later = 1000 + retention;
    s.on_frame(d, R, &put("s1", doc("k", 1)), later);
    assert_eq!(answers(&mut s, d, later), first);
    assert_eq!(s.counters().applied, 2, "s1 once, f1 once");
}

#[test]
fn w_26_a_session_past_its_refusal_set_refuses_a_retained_id_it_never_saw() {
    let mut s = Server::new(ServerConfig {
        retention_ms: cultnet_receipts::tracker::DEDUPE_RETENTION_MS,
        max_entries_per_session: 4,
        max_refusals_per_session: 0,
        server_budget_bytes: Some(ENTRY_BYTES * 2),
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("s1", doc("k", 1)), 1);
    assert_eq!(answers(&mut s, c, 1), vec![admitted("s1", "k")]);
    s.drop_connection(c);
    assert_eq!(s.retained(), 1);
    // Bob takes the rest of the budget; alice's new session is refused past it, and its refusal
    // set (of none) overflows: it refuses every id it has not seen from then on.
    let b = receipt_conn(&mut s, "bob");
    fill(&mut s, b, 1, "b");
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("n1", doc("j", 2)), 2);
    assert_eq!(
        refusal(&answers(&mut s, d, 2)[0]).1.as_deref(),
        Some("limit_reached")
    );
    assert_eq!(s.counters().limit_refusals_not_remembered, 1);
    // The budget frees, and the session still has table room; the retained id is one it never
    // saw, so it is refused like any other, never admitted.
    s.drop_connection(b);
    s.on_frame(d, R, &put("s1", doc("k", 1)), 3);
    let got = answers(&mut s, d, 3);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        refusal(&got[0]).1.as_deref(),
        Some("limit_reached"),
        "{got:?}"
    );
    assert_eq!(s.remembered(d), Some((0, 0)));
}

#[test]
fn w_21_other_content_under_a_retained_id_is_refused_alike_for_the_whole_session() {
    let retention = cultnet_receipts::tracker::DEDUPE_RETENTION_MS;
    let mut s = Server::new(ServerConfig {
        retention_ms: retention,
        ..ServerConfig::default()
    });
    let c = receipt_conn(&mut s, "alice");
    s.on_frame(c, R, &put("s1", doc("k", 1)), 1);
    assert_eq!(answers(&mut s, c, 1), vec![admitted("s1", "k")]);
    s.on_tick(1000);
    s.drop_connection(c);
    // A new session of the actor sends other content under the retained id: refused, and the
    // old receipt is not re-sent.
    let d = receipt_conn(&mut s, "alice");
    s.on_frame(d, R, &put("s1", doc("k", 2)), 2000);
    let first = answers(&mut s, d, 2000);
    assert_eq!(first.len(), 1, "{first:?}");
    let (id, code, _, field) = refusal(&first[0]);
    assert_eq!(
        (id.as_deref(), code.as_deref(), field.as_deref()),
        (Some("s1"), Some("message_invalid"), Some("messageId"))
    );
    // Past the retention the same session sends the same key and content again: the same
    // refusal, never an admission of the other content.
    let later = 1000 + retention;
    s.on_frame(d, R, &put("s1", doc("k", 2)), later);
    assert_eq!(answers(&mut s, d, later), first);
    assert_eq!(
        s.read("notes", "k"),
        Some(&[1u8][..]),
        "the other content is never applied"
    );
    assert_eq!(s.counters().applied, 1);
}
