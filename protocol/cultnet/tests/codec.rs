//! The frame codec, the messageId rule and the framing (W-1 to W-7, W-9, W-10, W-47).

mod support;

use cultnet_receipts::frames::{
    DocumentDelete, DocumentPut, ErrorCode, ErrorDetails, ErrorV0, ErrorV1, Hello, Operation,
    RawValue, WriteAdmitted,
};
use cultnet_receipts::framing::{encode_frame, FrameDecoder};
use cultnet_receipts::message_id::{
    is_default_ignorable, is_letter_or_number, is_valid_admitted_message_id, is_white_space,
    tables, UNICODE_VERSION,
};
use cultnet_receipts::{decode, encode, DecodeError, EncodeError, Frame, FramingError};
use support::*;

fn admitted(id: &str, op: Operation) -> WriteAdmitted {
    WriteAdmitted {
        message_id: id.into(),
        operation: op,
        schema_id: "notes.v1".into(),
        record_key: "note:1".into(),
    }
}

fn round_trip(f: Frame) {
    let bytes = encode(&f).expect("encodes");
    assert_eq!(decode(&bytes).expect("decodes"), f);
}

// ---- W-1 -------------------------------------------------------------------------------------

#[test]
fn w_1_write_admitted_round_trips_for_put_and_delete() {
    round_trip(Frame::WriteAdmitted(admitted("m-1", Operation::Put)));
    round_trip(Frame::WriteAdmitted(admitted("m-2", Operation::Delete)));
    let bytes = map(&admitted_pairs("m-1"));
    assert_eq!(
        decode(&bytes).unwrap(),
        Frame::WriteAdmitted(admitted("m-1", Operation::Put))
    );
}

#[test]
fn w_1_write_admitted_needs_every_key() {
    let all = admitted_pairs("m-1");
    for skip in 1..all.len() {
        let pairs: Vec<_> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, p)| p.clone())
            .collect();
        assert_eq!(
            decode(&map(&pairs)),
            Err(DecodeError::MissingKey(all[skip].0)),
            "without {}",
            all[skip].0
        );
    }
}

#[test]
fn w_1_write_admitted_has_no_nil_key() {
    let all = admitted_pairs("m-1");
    for i in 1..all.len() {
        let mut pairs = all.clone();
        pairs[i].1 = nil();
        assert_eq!(
            decode(&map(&pairs)),
            Err(DecodeError::WrongType(all[i].0)),
            "{} nil",
            all[i].0
        );
    }
}

#[test]
fn w_1_operation_is_put_or_delete_only() {
    for bad in ["Put", "upsert", "", "delete "] {
        let mut pairs = admitted_pairs("m-1");
        pairs[2].1 = s(bad);
        assert_eq!(decode(&map(&pairs)), Err(DecodeError::InvalidOperation));
    }
}

// ---- W-3, W-4, W-5, W-7 ------------------------------------------------------------------------

#[test]
fn w_3_message_id_needs_a_letter_or_number() {
    for valid in [
        "a", "Z", "1", "\u{663}", "\u{216B}", "\u{BD}", "\u{2B0}", "\u{1C5}", "\u{4E2D}", "-a-",
    ] {
        assert!(is_valid_admitted_message_id(valid), "{valid:?}");
    }
    for invalid in [
        "",
        "-",
        "_.-",
        " ",
        "\u{2800}",
        "!?",
        "\u{301}",
        "\u{1F600}",
    ] {
        assert!(!is_valid_admitted_message_id(invalid), "{invalid:?}");
    }
}

#[test]
fn w_3_a_default_ignorable_code_point_refuses_the_id() {
    for invalid in [
        "a\u{200B}",
        "\u{200B}a",
        "a\u{AD}",
        "a\u{FEFF}",
        "a\u{180E}",
        "a\u{E0001}",
        "1\u{2060}2",
        "a\u{34F}",
    ] {
        assert!(!is_valid_admitted_message_id(invalid), "{invalid:?}");
    }
}

#[test]
fn w_3_the_tables_are_unicode_16() {
    assert_eq!(UNICODE_VERSION, "16.0.0");
    // New in 16.0: CYRILLIC CAPITAL LETTER TJE, a Garay letter and an Ol Onal letter.
    for c in ['\u{1C89}', '\u{10D4A}', '\u{1E5D0}'] {
        assert!(is_letter_or_number(c), "{c:?}");
    }
    // Unassigned in 16.0.
    assert!(!is_letter_or_number('\u{1C8B}'));
}

#[test]
fn w_3_every_table_range_is_probed_at_its_edges() {
    for (name, ranges) in tables() {
        let test: fn(char) -> bool = match name {
            "letterOrNumber" => is_letter_or_number,
            "defaultIgnorable" => is_default_ignorable,
            _ => is_white_space,
        };
        assert!(!ranges.is_empty());
        for w in ranges.windows(2) {
            assert!(w[0].1 + 1 < w[1].0, "{name}: ranges sorted and apart");
        }
        for &(lo, hi) in ranges {
            for (cp, inside) in [
                (Some(lo), true),
                (Some(hi), true),
                (lo.checked_sub(1), false),
                (Some(hi + 1), false),
            ] {
                if let Some(c) = cp.and_then(char::from_u32) {
                    assert_eq!(test(c), inside, "{name} U+{:04X}", u32::from(c));
                }
            }
        }
    }
}

#[test]
fn w_3_a_decoder_refuses_an_invalid_write_admitted_id() {
    for bad in ["-", "a\u{200B}", "\u{2800}"] {
        assert_eq!(
            decode(&map(&admitted_pairs(bad))),
            Err(DecodeError::InvalidMessageId),
            "{bad:?}"
        );
    }
}

#[test]
fn w_4_the_compare_is_raw() {
    assert!(is_valid_admitted_message_id(" a "));
    assert!(is_valid_admitted_message_id("\u{3000}a\u{3000}"));
    assert!(!is_valid_admitted_message_id("\u{2800}"));
    assert!(!is_valid_admitted_message_id("a\u{200B}"));
    // Not a White_Space test: an id of spaces has no letter, one of U+200B is ignorable.
    assert!(!is_valid_admitted_message_id("   "));
    // No normalization: a decomposed letter keeps its combining mark and stays valid.
    assert!(is_valid_admitted_message_id("e\u{301}"));
    // Echoed byte for byte: the decoder keeps the spaces.
    let f = decode(&map(&admitted_pairs(" a "))).unwrap();
    let Frame::WriteAdmitted(a) = f else { panic!() };
    assert_eq!(a.message_id, " a ");
}

#[test]
fn w_4_no_normalization_neither_validates_nor_rewrites_an_id() {
    // U+2122 and U+33A1 are symbols: compatibility normalization would make them letters
    // ("TM", "m2") and the id valid; the raw compare refuses them.
    for symbol in ["\u{2122}", "\u{33A1}", "-\u{2122}-"] {
        assert!(!is_valid_admitted_message_id(symbol), "{symbol:?}");
        assert_eq!(
            decode(&map(&admitted_pairs(symbol))),
            Err(DecodeError::InvalidMessageId),
            "{symbol:?}"
        );
    }
    // U+212B (canonically U+00C5), a decomposed letter and padding spaces are decoded and
    // encoded byte for byte: neither direction composes, decomposes or trims.
    for id in ["\u{212B}", "e\u{301}", " a ", "\u{3000}a\u{3000}"] {
        let Frame::WriteAdmitted(a) = decode(&map(&admitted_pairs(id))).unwrap() else {
            panic!()
        };
        assert_eq!(a.message_id.as_bytes(), id.as_bytes(), "{id:?} decoded");
        let bytes = encode(&Frame::WriteAdmitted(admitted(id, Operation::Put))).unwrap();
        assert!(
            bytes.windows(id.len()).any(|w| w == id.as_bytes()),
            "{id:?} encoded"
        );
        assert_eq!(bytes, map(&admitted_pairs(id)), "{id:?} encoded");
    }
}

#[test]
fn w_5_a_lone_surrogate_refuses_the_frame() {
    // U+D800 and U+DC00 written as (invalid) three-byte UTF-8 sequences.
    for id in [&b"\xED\xA0\x80"[..], b"a\xED\xB0\x80", b"\xED\xA0\x80a"] {
        let mut pairs = admitted_pairs("x");
        pairs[1].1 = str_bytes(id);
        assert_eq!(decode(&map(&pairs)), Err(DecodeError::InvalidUtf8));
    }
}

#[test]
fn w_7_an_invalid_id_is_refused_like_an_empty_or_ill_typed_one() {
    let mut empty = admitted_pairs("x");
    empty[1].1 = s("");
    assert!(decode(&map(&empty)).is_err());
    let mut typed = admitted_pairs("x");
    typed[1].1 = int(7);
    assert_eq!(
        decode(&map(&typed)),
        Err(DecodeError::WrongType("messageId"))
    );
    assert!(decode(&map(&admitted_pairs("\u{200B}"))).is_err());
    assert_eq!(
        encode(&Frame::WriteAdmitted(admitted("\u{200B}", Operation::Put))),
        Err(EncodeError::InvalidMessageId)
    );
}

#[test]
fn w_7_the_id_rule_is_for_write_admitted_only() {
    let err = map(&[
        ("schemaVersion", s("cultnet.error.v1")),
        ("messageId", s("-")),
        ("error", s("nope")),
        ("code", s("message_invalid")),
        ("details", nil()),
    ]);
    let Frame::ErrorV1(e) = decode(&err).unwrap() else {
        panic!()
    };
    assert_eq!(e.message_id.as_deref(), Some("-"));
    let del = map(&[
        ("schemaVersion", s("cultnet.document_delete.v0")),
        ("messageId", s("\u{200B}")),
        ("schemaId", s("notes.v1")),
        ("recordKey", s("k")),
    ]);
    assert!(decode(&del).is_ok());
}

// ---- W-6 ---------------------------------------------------------------------------------------

#[test]
fn w_6_a_repeated_message_id_is_malformed() {
    // The same valid value twice, and a valid value after an invalid one.
    for (first, second) in [("m-1", "m-1"), ("m-1", "m-2"), ("m-1", "-")] {
        let mut pairs = admitted_pairs(first);
        pairs.push(("messageId", s(second)));
        assert_eq!(
            decode(&map(&pairs)),
            Err(DecodeError::DuplicateKey("messageId"))
        );
    }
    // An invalid first value is refused as soon as it is read; the frame never decodes.
    let mut pairs = admitted_pairs("-");
    pairs.push(("messageId", s("m-1")));
    assert_eq!(decode(&map(&pairs)), Err(DecodeError::InvalidMessageId));
    let put = map(&[
        ("schemaVersion", s("cultnet.document_put.v0")),
        ("messageId", s("a")),
        ("messageId", s("b")),
        ("document", nil()),
    ]);
    assert_eq!(decode(&put), Err(DecodeError::DuplicateKey("messageId")));
    let del = map(&[
        ("schemaVersion", s("cultnet.document_delete.v0")),
        ("messageId", s("a")),
        ("schemaId", s("notes.v1")),
        ("recordKey", s("k")),
        ("messageId", s("a")),
    ]);
    assert_eq!(decode(&del), Err(DecodeError::DuplicateKey("messageId")));
    let err = map(&[
        ("schemaVersion", s("cultnet.error.v1")),
        ("messageId", nil()),
        ("messageId", s("a")),
        ("error", s("e")),
    ]);
    assert_eq!(decode(&err), Err(DecodeError::DuplicateKey("messageId")));
}

#[test]
fn w_6_any_repeated_key_is_malformed_at_any_depth() {
    let mut pairs = admitted_pairs("m-1");
    pairs.push(("schemaVersion", s("cultnet.write_admitted.v0")));
    assert_eq!(
        decode(&map(&pairs)),
        Err(DecodeError::DuplicateKey("schemaVersion"))
    );
    let doc = map(&[
        ("schemaId", s("notes.v1")),
        ("recordKey", s("k")),
        ("recordKey", s("k2")),
        ("storedAt", s("t")),
        ("payload", int(1)),
    ]);
    let put = map(&[
        ("schemaVersion", s("cultnet.document_put.v0")),
        ("messageId", s("a")),
        ("document", doc),
    ]);
    assert_eq!(decode(&put), Err(DecodeError::DuplicateKey("recordKey")));
}

// ---- W-32 --------------------------------------------------------------------------------------

#[test]
fn w_32_a_receipt_carries_no_error_and_an_error_carries_no_admission() {
    // A write_admitted with any of error.v1's own keys, and an error.v1 with any of
    // write_admitted's own keys, is neither frame: it does not decode.
    for (key, value) in [
        ("error", s("refused")),
        ("code", s("message_invalid")),
        ("details", nil()),
    ] {
        let mut pairs = admitted_pairs("m-1");
        pairs.push((key, value));
        assert_eq!(
            decode(&map(&pairs)),
            Err(DecodeError::UnknownKey(key.into())),
            "write_admitted with {key}"
        );
    }
    for (key, value) in [
        ("operation", s("put")),
        ("schemaId", s("notes.v1")),
        ("recordKey", s("note:1")),
    ] {
        let mut pairs = vec![
            ("schemaVersion", s("cultnet.error.v1")),
            ("messageId", s("m-1")),
            ("error", s("message_invalid: document is required")),
            ("code", s("message_invalid")),
            ("details", nil()),
        ];
        pairs.push((key, value));
        assert_eq!(
            decode(&map(&pairs)),
            Err(DecodeError::UnknownKey(key.into())),
            "error.v1 with {key}"
        );
    }
    // The two frames are told apart by schemaVersion alone: the admission's keys under the
    // error's version are not an admission either.
    let mut swapped = admitted_pairs("m-1");
    swapped[0].1 = s("cultnet.error.v1");
    assert!(!matches!(
        decode(&map(&swapped)),
        Ok(Frame::WriteAdmitted(_))
    ));
}

// ---- W-9 ---------------------------------------------------------------------------------------

fn error_v1_pairs(id: Vec<u8>) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("schemaVersion", s("cultnet.error.v1")),
        ("messageId", id),
        ("error", s("message_invalid: document is required")),
        ("code", s("message_invalid")),
        ("details", map(&[("field", s("document"))])),
    ]
}

#[test]
fn w_9_error_v1_requires_a_message_id_string_or_nil() {
    let Frame::ErrorV1(e) = decode(&map(&error_v1_pairs(s("m-1")))).unwrap() else {
        panic!()
    };
    assert_eq!(e.message_id.as_deref(), Some("m-1"));
    assert_eq!(e.code.as_deref(), Some("message_invalid"));
    assert_eq!(e.details.unwrap().field.as_deref(), Some("document"));
    let Frame::ErrorV1(e) = decode(&map(&error_v1_pairs(nil()))).unwrap() else {
        panic!()
    };
    assert_eq!(e.message_id, None);
    let mut missing = error_v1_pairs(nil());
    missing.remove(1);
    assert_eq!(
        decode(&map(&missing)),
        Err(DecodeError::MissingKey("messageId"))
    );
    assert_eq!(
        decode(&map(&error_v1_pairs(int(3)))),
        Err(DecodeError::WrongType("messageId"))
    );
}

#[test]
fn w_9_an_error_v1_message_id_of_the_empty_string_is_refused() {
    assert_eq!(
        decode(&map(&error_v1_pairs(s("")))),
        Err(DecodeError::Empty("messageId"))
    );
    // One character is enough, whatever it is (the write_admitted id rule is not applied).
    assert!(decode(&map(&error_v1_pairs(s("-")))).is_ok());
}

#[test]
fn w_9_limit_reached_is_a_code_of_error_v1_only() {
    let mut v1 = error_v1_pairs(s("m-1"));
    v1[3].1 = s("limit_reached");
    v1[4].1 = map(&[("field", nil())]);
    assert!(decode(&map(&v1)).is_ok());
    let v0 = map(&[
        ("schemaVersion", s("cultnet.error.v0")),
        (
            "error",
            s("limit_reached: the session's remembered-write limit is full"),
        ),
        ("code", s("limit_reached")),
    ]);
    assert_eq!(
        decode(&v0),
        Err(DecodeError::CodeNotInVersion("limit_reached"))
    );
    let e = ErrorV0 {
        error: "x".into(),
        code: Some("limit_reached".into()),
        details: None,
    };
    assert_eq!(
        encode(&Frame::ErrorV0(e)),
        Err(EncodeError::CodeNotInVersion)
    );
}

#[test]
fn w_9_error_v1_is_a_closed_schema() {
    let mut pairs = error_v1_pairs(s("m-1"));
    pairs.push(("routingHint", nil()));
    assert_eq!(
        decode(&map(&pairs)),
        Err(DecodeError::UnknownKey("routingHint".into()))
    );
    let mut pairs = error_v1_pairs(s("m-1"));
    pairs[4].1 = map(&[("field", s("document")), ("reason", s("x"))]);
    assert_eq!(
        decode(&map(&pairs)),
        Err(DecodeError::UnknownKey("reason".into()))
    );
}

#[test]
fn w_9_error_frames_round_trip() {
    round_trip(Frame::ErrorV1(ErrorV1 {
        message_id: None,
        error: "message_invalid: the message could not be read".into(),
        code: Some("message_invalid".into()),
        details: Some(ErrorDetails {
            field: Some("message".into()),
        }),
    }));
    round_trip(Frame::ErrorV1(ErrorV1 {
        message_id: Some("m-9".into()),
        error: "limit_reached: the session's remembered-write limit is full".into(),
        code: Some("limit_reached".into()),
        details: Some(ErrorDetails { field: None }),
    }));
    round_trip(Frame::ErrorV0(ErrorV0 {
        error: "denied".into(),
        code: None,
        details: None,
    }));
    let v0 = map(&[
        ("schemaVersion", s("cultnet.error.v0")),
        ("error", s("denied")),
    ]);
    assert!(matches!(decode(&v0), Ok(Frame::ErrorV0(_))));
}

/// An error.v0 with `code` and no details.
fn error_v0_with_code(code: Vec<u8>) -> Vec<u8> {
    map(&[
        ("schemaVersion", s("cultnet.error.v0")),
        ("error", s("refused")),
        ("code", code),
    ])
}

#[test]
fn w_9_a_named_code_decodes_to_its_variant() {
    let named = [
        ("write_not_authorized", ErrorCode::WriteNotAuthorized),
        ("message_invalid", ErrorCode::MessageInvalid),
        ("unowned_schema", ErrorCode::UnownedSchema),
        (
            "unsupported_schema_version",
            ErrorCode::UnsupportedSchemaVersion,
        ),
        ("limit_reached", ErrorCode::LimitReached),
    ];
    for (text, variant) in named {
        assert_eq!(ErrorCode::from_text(text), variant);
        assert_eq!(variant.as_str(), text);
        assert!(variant.is_named());
        let mut pairs = error_v1_pairs(s("m-1"));
        pairs[3].1 = s(text);
        let bytes = map(&pairs);
        let f = decode(&bytes).unwrap();
        let Frame::ErrorV1(e) = &f else { panic!() };
        assert_eq!(e.code, Some(variant.clone()), "{text}");
        assert_eq!(
            encode(&f).unwrap(),
            bytes,
            "{text} encodes back to its text"
        );
        if variant != ErrorCode::LimitReached {
            let v0 = error_v0_with_code(s(text));
            let f = decode(&v0).unwrap();
            let Frame::ErrorV0(e) = &f else { panic!() };
            assert_eq!(e.code, Some(variant), "{text} in error.v0");
            assert_eq!(encode(&f).unwrap(), v0);
        }
    }
}

#[test]
fn w_9_a_code_the_seed_does_not_name_is_kept_verbatim_as_other() {
    // The seed's list of codes ends in an ellipsis ("shard authority errors, ..."): a code it
    // does not name is a member of the closed set this crate cannot name, kept as it came.
    for text in [
        "shard_not_primary",
        "Message_Invalid",
        "message_invalid ",
        "limit_reached\u{0}",
    ] {
        let mut pairs = error_v1_pairs(s("m-1"));
        pairs[3].1 = s(text);
        let bytes = map(&pairs);
        let f = decode(&bytes).unwrap();
        let Frame::ErrorV1(e) = &f else { panic!() };
        let code = e.code.clone().unwrap();
        assert!(matches!(code, ErrorCode::Other(_)), "{text:?}");
        assert!(!code.is_named());
        assert_eq!(code.as_str(), text, "byte for byte");
        assert_eq!(encode(&f).unwrap(), bytes, "re-encoded unchanged");
        let f = decode(&error_v0_with_code(s(text))).unwrap();
        let Frame::ErrorV0(e) = &f else { panic!() };
        assert_eq!(e.code.as_deref(), Some(text));
    }
}

#[test]
fn w_9_a_code_is_shown_as_its_wire_text() {
    // What a log line or a message built from the code shows is the text that came on the wire,
    // for a named code and for one the seed does not name alike.
    for text in [
        "write_not_authorized",
        "message_invalid",
        "unowned_schema",
        "unsupported_schema_version",
        "limit_reached",
        "shard_not_primary",
    ] {
        let code = ErrorCode::from(text);
        assert_eq!(code.to_string(), text);
        assert_eq!(format!("[{code}]"), format!("[{text}]"));
        assert_eq!(&*code, text);
    }
}

#[test]
fn w_9_what_the_rule_excludes_from_code_is_a_typed_violation() {
    // An empty code names no member of the set; a code of another type is not a code; and
    // limit_reached is not in error.v0's set (see w_9_limit_reached_is_a_code_of_error_v1_only).
    let mut pairs = error_v1_pairs(s("m-1"));
    pairs[3].1 = s("");
    assert_eq!(decode(&map(&pairs)), Err(DecodeError::Empty("code")));
    assert_eq!(
        decode(&error_v0_with_code(s(""))),
        Err(DecodeError::Empty("code"))
    );
    pairs[3].1 = int(7);
    assert_eq!(decode(&map(&pairs)), Err(DecodeError::WrongType("code")));
    // The application cannot write an empty code either.
    let e = ErrorV1 {
        message_id: Some("m-1".into()),
        error: "x".into(),
        code: Some(ErrorCode::from_text("")),
        details: None,
    };
    assert_eq!(encode(&Frame::ErrorV1(e)), Err(EncodeError::EmptyField));
    // A nil code stays allowed (the key is required in error.v1, its value may be nil).
    pairs[3].1 = nil();
    let Frame::ErrorV1(e) = decode(&map(&pairs)).unwrap() else {
        panic!()
    };
    assert_eq!(e.code, None);
}

// ---- W-10 --------------------------------------------------------------------------------------

fn hello_listing(versions: &[&str]) -> Hello {
    Hello {
        runtime_id: "rt-1".into(),
        runtime_kind: "client".into(),
        supported_message_versions: Some(versions.iter().map(|v| v.to_string()).collect()),
        ..Hello::default()
    }
}

#[test]
fn w_10_a_hello_listing_both_new_frames_is_receipt_capable() {
    assert!(hello_listing(&["cultnet.write_admitted.v0", "cultnet.error.v1"]).is_receipt_capable());
    assert!(hello_listing(&[
        "cultnet.error.v1",
        "cultnet.hello.v0",
        "cultnet.write_admitted.v0"
    ])
    .is_receipt_capable());
    for partial in [
        &["cultnet.write_admitted.v0"][..],
        &["cultnet.error.v1"],
        &["cultnet.error.v0", "cultnet.write_admitted.v0"],
        &["cultnet.write_admitted.v1", "cultnet.error.v1"],
        &["Cultnet.write_admitted.v0", "cultnet.error.v1"],
        &[],
    ] {
        assert!(!hello_listing(partial).is_receipt_capable(), "{partial:?}");
    }
    let none = Hello {
        supported_message_versions: None,
        ..hello_listing(&[])
    };
    assert!(!none.is_receipt_capable());
}

#[test]
fn w_10_hello_round_trips_and_keeps_nested_lists_verbatim() {
    let mut h = hello_listing(&["cultnet.write_admitted.v0", "cultnet.error.v1"]);
    h.agent_id = Some("agent".into());
    h.supported_document_types = Some(vec!["notes".into()]);
    h.transport_profiles = Some(RawValue::new(arr(&[map(&[("kind", s("tcp"))])])).unwrap());
    h.supports_schema_catalog = Some(true);
    round_trip(Frame::Hello(h));
}

// ---- W-47 --------------------------------------------------------------------------------------

#[test]
fn w_47_unknown_schema_versions_are_refused() {
    for v in [
        "cultnet.write_admitted.v1",
        "cultnet.error.v2",
        "cultnet.hello.v1",
        "cultnet.document_put_raw.v0",
        "",
    ] {
        let mut pairs = admitted_pairs("m-1");
        pairs[0].1 = s(v);
        assert_eq!(
            decode(&map(&pairs)),
            Err(DecodeError::UnknownSchemaVersion(v.into()))
        );
    }
    assert_eq!(
        decode(&map(&[("messageId", s("m"))])),
        Err(DecodeError::MissingKey("schemaVersion"))
    );
}

#[test]
fn w_47_unknown_keys_are_refused_in_every_frame() {
    let frames = [
        Frame::Hello(hello_listing(&[])),
        Frame::DocumentPut(DocumentPut {
            message_id: "m".into(),
            document: document("k"),
        }),
        Frame::DocumentDelete(DocumentDelete {
            message_id: "m".into(),
            schema_id: "notes.v1".into(),
            record_key: "k".into(),
        }),
        Frame::ErrorV0(ErrorV0 {
            error: "e".into(),
            code: None,
            details: None,
        }),
        Frame::ErrorV1(ErrorV1 {
            message_id: None,
            error: "e".into(),
            code: None,
            details: None,
        }),
        Frame::WriteAdmitted(admitted("m", Operation::Delete)),
    ];
    for f in frames {
        let mut bytes = encode(&f).unwrap();
        assert!(decode(&bytes).is_ok());
        // Add one more pair to the top-level fixmap.
        assert!(bytes[0] & 0xf0 == 0x80 && bytes[0] < 0x8f);
        bytes[0] += 1;
        bytes.extend_from_slice(&s("extra"));
        bytes.push(NIL);
        assert_eq!(
            decode(&bytes),
            Err(DecodeError::UnknownKey("extra".into())),
            "{f:?}"
        );
    }
    let doc = map(&[
        ("schemaId", s("notes.v1")),
        ("recordKey", s("k")),
        ("storedAt", s("t")),
        ("payload", int(1)),
        ("documentType", s("x")),
    ]);
    let put = map(&[
        ("schemaVersion", s("cultnet.document_put.v0")),
        ("messageId", s("a")),
        ("document", doc),
    ]);
    assert_eq!(
        decode(&put),
        Err(DecodeError::UnknownKey("documentType".into()))
    );
}

// ---- Writes and bad input ----------------------------------------------------------------------

#[test]
fn a_put_keeps_its_payload_bytes_and_round_trips() {
    let mut d = document("note:1");
    d.tags = Some(vec!["a".into(), "b".into()]);
    d.source_role = Some("writer".into());
    let f = Frame::DocumentPut(DocumentPut {
        message_id: "m-1".into(),
        document: d,
    });
    round_trip(f.clone());
    let Frame::DocumentPut(p) = decode(&encode(&f).unwrap()).unwrap() else {
        panic!()
    };
    assert_eq!(p.document.payload.as_bytes(), &[0x81, 0xa1, b'a', 0x01]);
    assert_eq!(
        RawValue::new(vec![0x81, 0xa1]),
        Err(EncodeError::NotOneValue)
    );
    assert_eq!(RawValue::new(vec![1, 2]), Err(EncodeError::NotOneValue));
}

#[test]
fn malformed_bytes_are_typed_errors_never_panics() {
    let good = encode(&Frame::WriteAdmitted(admitted("m-1", Operation::Put))).unwrap();
    for cut in 0..good.len() {
        assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(decode(&trailing), Err(DecodeError::TrailingBytes));
    assert_eq!(decode(&[0xc1]), Err(DecodeError::ReservedByte));
    assert_eq!(decode(&[0x91, 0x01]), Err(DecodeError::NotAMap));
    // A huge declared map with no content.
    assert_eq!(
        decode(&[0xdf, 0xff, 0xff, 0xff, 0xff]),
        Err(DecodeError::Truncated)
    );
    // Deep nesting inside a payload.
    let mut deep = vec![0x91; 100];
    deep.push(0x01);
    let doc = map(&[
        ("schemaId", s("a")),
        ("recordKey", s("k")),
        ("storedAt", s("t")),
        ("payload", deep),
    ]);
    let put = map(&[
        ("schemaVersion", s("cultnet.document_put.v0")),
        ("messageId", s("a")),
        ("document", doc),
    ]);
    assert_eq!(decode(&put), Err(DecodeError::TooDeep));
    // Every byte value in every position of a frame: no panic.
    for i in 0..good.len() {
        for b in 0..=255u8 {
            let mut m = good.clone();
            m[i] = b;
            let _ = decode(&m);
        }
    }
}

// ---- Framing -----------------------------------------------------------------------------------

#[test]
fn framing_prefixes_a_big_endian_length() {
    assert_eq!(encode_frame(b"abc", 16).unwrap(), b"\0\0\0\x03abc");
    assert_eq!(encode_frame(&[7; 16], 16).unwrap().len(), 20);
    assert_eq!(
        encode_frame(&[7; 17], 16),
        Err(FramingError::FrameTooLarge { len: 17, max: 16 })
    );
}

#[test]
fn framing_splits_a_stream_fed_in_pieces() {
    let mut stream = encode_frame(b"hello", 64).unwrap();
    stream.extend(encode_frame(b"", 64).unwrap());
    stream.extend(encode_frame(&[9; 64], 64).unwrap());
    for chunk in [1, 2, 3, 7, 100] {
        let mut d = FrameDecoder::new(64);
        let mut frames = Vec::new();
        for piece in stream.chunks(chunk) {
            let mut rest = piece;
            while !rest.is_empty() {
                let (taken, frame) = d.push(rest).unwrap();
                rest = &rest[taken..];
                frames.extend(frame);
            }
            assert!(d.buffered() <= 4 + 64);
        }
        assert_eq!(frames, vec![b"hello".to_vec(), vec![], vec![9; 64]]);
        assert_eq!(d.buffered(), 0);
    }
}

#[test]
fn framing_refuses_a_prefix_above_the_maximum() {
    let mut d = FrameDecoder::new(64);
    assert!(d.push(&[0, 0, 0, 64]).is_ok());
    let mut d = FrameDecoder::new(64);
    assert_eq!(
        d.push(&[0, 0, 0, 65, 1, 2]),
        Err(FramingError::FrameTooLarge { len: 65, max: 64 })
    );
    assert_eq!(d.push(&[1]), Err(FramingError::Failed));
    let mut d = FrameDecoder::new(64);
    assert!(d.push(&[0xff, 0xff]).is_ok());
    assert!(d.push(&[0xff, 0xff]).is_err());
    assert_eq!(d.buffered(), 0);
}
