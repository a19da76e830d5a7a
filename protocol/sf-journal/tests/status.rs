//! Server status frames (SF-W4 to SF-W7, SF-W9) and error categories (SF-44).

use proptest::prelude::*;
use sf_journal::status::{
    decode_status, encode_status, is_qwp_frame, Category, ErrorStatus, Status, StatusError,
    MAX_INBOUND_FRAME,
};

fn t(name: &str, txn: i64) -> (String, i64) {
    (name.to_owned(), txn)
}

#[test]
fn sf_w4_status_bytes() {
    let cases = [
        (0x03, ErrorStatus::SchemaMismatch),
        (0x05, ErrorStatus::ParseError),
        (0x06, ErrorStatus::InternalError),
        (0x08, ErrorStatus::SecurityError),
        (0x09, ErrorStatus::WriteError),
        (0x0C, ErrorStatus::NotWritable),
    ];
    for (byte, status) in cases {
        assert_eq!(status.byte(), byte);
        let mut f = vec![byte];
        f.extend_from_slice(&7u64.to_le_bytes());
        f.extend_from_slice(&0u16.to_le_bytes());
        assert_eq!(
            decode_status(&f),
            Ok(Status::Error {
                status,
                wire_seq: 7,
                message: String::new()
            })
        );
    }
    for unknown in [0x01, 0x04, 0x07, 0x0A, 0x0B, 0x0D, 0xFF] {
        assert_eq!(
            decode_status(&[unknown, 0, 0]),
            Err(StatusError::UnknownStatus(unknown))
        );
    }
    assert_eq!(decode_status(&[]), Err(StatusError::Empty));
}

#[test]
fn sf_w5_ok_carries_the_wire_seq_and_its_tables() {
    let mut f = vec![0x00];
    f.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    for (name, txn) in [("trades", 5i64), ("é", -1)] {
        f.extend_from_slice(&(name.len() as u16).to_le_bytes());
        f.extend_from_slice(name.as_bytes());
        f.extend_from_slice(&txn.to_le_bytes());
    }
    let want = Status::Ok {
        wire_seq: 0x0102_0304_0506_0708,
        tables: vec![t("trades", 5), t("é", -1)],
    };
    assert_eq!(decode_status(&f), Ok(want.clone()));
    assert_eq!(encode_status(&want), f);
}

#[test]
fn sf_w5_trailing_bytes_truncation_and_empty_names_are_violations() {
    let ok = encode_status(&Status::Ok {
        wire_seq: 1,
        tables: vec![t("a", 1)],
    });
    let mut long = ok.clone();
    long.push(0);
    assert_eq!(decode_status(&long), Err(StatusError::TrailingBytes(1)));
    for cut in 1..ok.len() {
        assert_eq!(
            decode_status(&ok[..cut]),
            Err(StatusError::Truncated),
            "cut {cut}"
        );
    }
    let mut empty = vec![0x00];
    empty.extend_from_slice(&1u64.to_le_bytes());
    empty.extend_from_slice(&1u16.to_le_bytes());
    empty.extend_from_slice(&0u16.to_le_bytes());
    empty.extend_from_slice(&1i64.to_le_bytes());
    assert_eq!(decode_status(&empty), Err(StatusError::EmptyTableName));
    let mut bad = ok.clone();
    bad[13] = 0xff; // the name "a"
    assert_eq!(decode_status(&bad), Err(StatusError::NotUtf8));
}

#[test]
fn sf_w6_durable_ack_is_the_status_then_the_table_entries() {
    let s = Status::DurableAck {
        tables: vec![t("x", 9), t("y", 10)],
    };
    let f = encode_status(&s);
    assert_eq!(f[0], 0x02);
    assert_eq!(u16::from_le_bytes([f[1], f[2]]), 2);
    assert_eq!(decode_status(&f), Ok(s));
    assert_eq!(
        decode_status(&[0x02, 0, 0]),
        Ok(Status::DurableAck { tables: vec![] })
    );
}

#[test]
fn sf_w7_an_error_carries_its_wire_seq_and_a_message_of_at_most_1024_bytes() {
    let s = Status::Error {
        status: ErrorStatus::WriteError,
        wire_seq: 3,
        message: "disk full".into(),
    };
    let f = encode_status(&s);
    assert_eq!(f.len(), 1 + 8 + 2 + 9);
    assert_eq!(decode_status(&f), Ok(s));
    let mut at_cap = vec![0x05];
    at_cap.extend_from_slice(&0u64.to_le_bytes());
    at_cap.extend_from_slice(&1024u16.to_le_bytes());
    at_cap.extend(std::iter::repeat_n(b'm', 1024));
    assert!(decode_status(&at_cap).is_ok());
    let mut over = vec![0x05];
    over.extend_from_slice(&0u64.to_le_bytes());
    over.extend_from_slice(&1025u16.to_le_bytes());
    over.extend(std::iter::repeat_n(b'm', 1025));
    assert_eq!(decode_status(&over), Err(StatusError::MessageTooLong(1025)));
    // The writer keeps to the cap.
    let long = encode_status(&Status::Error {
        status: ErrorStatus::ParseError,
        wire_seq: 0,
        message: "é".repeat(600),
    });
    assert!(
        matches!(decode_status(&long), Ok(Status::Error { message, .. }) if message.len() == 1024)
    );
}

#[test]
fn sf_w8_an_inbound_frame_over_256_mib_is_refused() {
    let big = vec![0u8; MAX_INBOUND_FRAME + 1];
    assert_eq!(
        decode_status(&big),
        Err(StatusError::TooLarge {
            len: MAX_INBOUND_FRAME + 1
        })
    );
}

#[test]
fn sf_w9_client_frames_begin_with_qwp1() {
    assert!(is_qwp_frame(b"QWP1\x01rest"));
    assert!(!is_qwp_frame(b"QWP"));
    assert!(!is_qwp_frame(b"QWP2...."));
}

#[test]
fn sf_44_error_categories() {
    use Category::{Retriable, Terminal};
    assert_eq!(ErrorStatus::SchemaMismatch.category(), Terminal);
    assert_eq!(ErrorStatus::WriteError.category(), Retriable);
    assert_eq!(ErrorStatus::ParseError.category(), Terminal);
    assert_eq!(ErrorStatus::InternalError.category(), Retriable);
    assert_eq!(ErrorStatus::SecurityError.category(), Terminal);
}

proptest! {
    /// Any bytes from the server: a status or a typed violation, never a panic.
    #[test]
    fn sf_w4_arbitrary_server_bytes_never_panic(f in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode_status(&f);
    }

    /// What the writer makes, the reader reads back.
    #[test]
    fn sf_w5_ok_frames_round_trip(
        wire_seq in any::<u64>(),
        tables in prop::collection::vec(("[a-z]{1,8}", any::<i64>()), 0..5),
    ) {
        let s = Status::Ok { wire_seq, tables };
        prop_assert_eq!(decode_status(&encode_status(&s)), Ok(s));
    }
}
