//! Replays the server sections of `vectors/write-receipt-vectors.json` (dedupe, blankFields)
//! against the receipt server model: every answer must be the vector's bytes exactly.

use std::path::Path;

use cultnet_receipts::frames::{ERROR_V1, WRITE_ADMITTED_V0};
use cultnet_receipts::message_id::is_white_space;
use cultnet_receipts::{encode, frames::Hello, Frame};
use cultnet_sim::server::{Channel, ConnId, Server, ServerConfig};
use serde_json::Value;

fn vectors() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/write-receipt-vectors.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn session(config: ServerConfig) -> (Server, ConnId) {
    let mut s = Server::new(config);
    let c = s.connect("actor", 0);
    let hello = encode(&Frame::Hello(Hello {
        runtime_id: "vectors".to_owned(),
        runtime_kind: "client".to_owned(),
        supported_message_versions: Some(vec![WRITE_ADMITTED_V0.to_owned(), ERROR_V1.to_owned()]),
        ..Hello::default()
    }))
    .unwrap();
    s.on_frame(c, Channel::ReliableOrdered, &hello, 0);
    // The server's own hello.
    assert!(s.poll_output(0).is_some());
    (s, c)
}

/// Feeds one step and returns the hex of every answer it drew.
fn answers(s: &mut Server, c: ConnId, step: &Value) -> Vec<String> {
    s.on_frame(
        c,
        Channel::ReliableOrdered,
        &unhex(step["hex"].as_str().unwrap()),
        1,
    );
    let mut v = Vec::new();
    while let Some(o) = s.poll_output(1) {
        v.push(hex(&o.bytes));
    }
    v
}

#[test]
fn w_21_every_dedupe_vector_is_answered_byte_for_byte() {
    let v = vectors();
    let cases = v["dedupe"].as_array().unwrap();
    assert!(cases.len() >= 7);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mut config = ServerConfig::default();
        if let Some(l) = case.get("limits") {
            config.max_entries_per_session = l["maxEntriesPerSession"].as_u64().unwrap() as usize;
            config.max_refusals_per_session = l["maxRefusalsPerSession"].as_u64().unwrap() as usize;
        }
        let (mut s, c) = session(config);
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let got = answers(&mut s, c, step);
            assert_eq!(
                got,
                [step["answerHex"].as_str().unwrap()],
                "{name} step {i}"
            );
        }
        assert_eq!(
            s.counters().applied,
            case["applied"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            s.remembered(c).unwrap().0 as u64,
            case["remembered"].as_u64().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn w_27_every_blank_field_vector_is_answered_byte_for_byte() {
    let v = vectors();
    let cases = v["blankFields"]["cases"].as_array().unwrap();
    assert!(cases.len() >= 60);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (mut s, c) = session(ServerConfig::default());
        let got = answers(&mut s, c, case);
        assert_eq!(got, [case["answerHex"].as_str().unwrap()], "{name}");
        let applied = s.counters().applied;
        match case["expect"].as_str().unwrap() {
            "refuse" => assert_eq!(applied, 0, "{name} was stored"),
            _ => assert_eq!(applied, 1, "{name} was not stored"),
        }
    }
}

#[test]
fn w_28_the_vectors_white_space_lists_agree_with_the_engine() {
    let v = vectors();
    let m = &v["admittedMessageId"];
    for (key, expect) in [
        ("whiteSpaceCodePoints", true),
        ("notWhiteSpaceCodePoints", false),
    ] {
        for cp in m[key].as_array().unwrap() {
            let c = char::from_u32(cp.as_u64().unwrap() as u32).unwrap();
            assert_eq!(is_white_space(c), expect, "U+{:04X}", c as u32);
        }
    }
}
