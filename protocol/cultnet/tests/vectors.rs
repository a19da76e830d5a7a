//! Replays `vectors/write-receipt-vectors.json` (written by `gen/vectors.py` with msgpack-python):
//! every wire vector decodes and re-encodes to the same bytes, every schemaInvalid frame is
//! refused, every content hash and messageId case matches, and every scenario settles through
//! the tracker as the vectors say.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use cultnet_receipts::frames::{
    Document, ErrorDetails, ErrorV0, ErrorV1, Hello, Operation, RawValue, WriteAdmitted,
};
use cultnet_receipts::hash::content_hash;
use cultnet_receipts::message_id::{is_blank, is_valid_admitted_message_id, is_white_space};
use cultnet_receipts::tracker::{
    BatchOutcome, LateAnswer, TrackerLimits, UnconfirmedReason, WriteMode, WriteState,
    LEGACY_RESULT_WINDOW_MS, RECEIPT_RESULT_WINDOW_MS,
};
use cultnet_receipts::{decode, encode, Frame, Outcome, WriteHandle, WriteTracker};
use serde_json::{json, Map, Value};

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../../vectors/write-receipt-vectors.json")).unwrap()
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

/// A small MessagePack-to-JSON reader for payloads (maps with string keys, no floats needed).
fn msgpack_json(b: &[u8], pos: &mut usize) -> Value {
    let t = b[*pos];
    *pos += 1;
    let mut be = |n: usize| {
        let v = b[*pos..*pos + n]
            .iter()
            .fold(0u64, |a, x| (a << 8) | u64::from(*x));
        *pos += n;
        v
    };
    let (kind, len) = match t {
        0x00..=0x7f => return json!(t),
        0xe0..=0xff => return json!(i64::from(t as i8)),
        0xc0 => return Value::Null,
        0xc2 => return json!(false),
        0xc3 => return json!(true),
        0xcc => return json!(be(1)),
        0xcd => return json!(be(2)),
        0xce => return json!(be(4)),
        0xd0 => return json!(i64::from(be(1) as u8 as i8)),
        0xd1 => return json!(i64::from(be(2) as u16 as i16)),
        0xa0..=0xbf => ('s', usize::from(t & 0x1f)),
        0xd9 => ('s', be(1) as usize),
        0xda => ('s', be(2) as usize),
        0x90..=0x9f => ('a', usize::from(t & 0x0f)),
        0xdc => ('a', be(2) as usize),
        0x80..=0x8f => ('m', usize::from(t & 0x0f)),
        0xde => ('m', be(2) as usize),
        _ => panic!("the vectors use no byte {t:#x} in payloads"),
    };
    match kind {
        's' => {
            let s = std::str::from_utf8(&b[*pos..*pos + len])
                .unwrap()
                .to_owned();
            *pos += len;
            Value::String(s)
        }
        'a' => Value::Array((0..len).map(|_| msgpack_json(b, pos)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..len {
                let Value::String(k) = msgpack_json(b, pos) else {
                    panic!("string keys")
                };
                m.insert(k, msgpack_json(b, pos));
            }
            Value::Object(m)
        }
    }
}

fn details_json(d: &Option<ErrorDetails>) -> Value {
    d.as_ref()
        .map_or(Value::Null, |d| json!({ "field": d.field }))
}

/// The JSON form of a decoded frame, written independently of the vectors.
fn frame_json(f: &Frame) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_owned(), v);
    };
    match f {
        Frame::WriteAdmitted(a) => {
            put("schemaVersion", json!("cultnet.write_admitted.v0"));
            put("messageId", json!(a.message_id));
            put("operation", json!(a.operation.as_str()));
            put("schemaId", json!(a.schema_id));
            put("recordKey", json!(a.record_key));
        }
        Frame::ErrorV1(e) => {
            put("schemaVersion", json!("cultnet.error.v1"));
            put("messageId", json!(e.message_id));
            put("error", json!(e.error));
            put("code", json!(e.code.as_deref()));
            put("details", details_json(&e.details));
        }
        Frame::ErrorV0(e) => {
            put("schemaVersion", json!("cultnet.error.v0"));
            put("error", json!(e.error));
            if let Some(c) = &e.code {
                put("code", json!(c.as_str()));
            }
            if e.details.is_some() {
                put("details", details_json(&e.details));
            }
        }
        Frame::Hello(h) => {
            put("schemaVersion", json!("cultnet.hello.v0"));
            put("runtimeId", json!(h.runtime_id));
            put("runtimeKind", json!(h.runtime_kind));
            if let Some(v) = &h.supported_message_versions {
                put("supportedMessageVersions", json!(v));
            }
        }
        Frame::DocumentPut(p) => {
            let d = &p.document;
            let mut doc = json!({
                "schemaId": d.schema_id,
                "recordKey": d.record_key,
                "storedAt": d.stored_at,
                "payload": msgpack_json(d.payload.as_bytes(), &mut 0),
            });
            if let Some(t) = &d.tags {
                doc["tags"] = json!(t);
            }
            put("schemaVersion", json!("cultnet.document_put.v0"));
            put("messageId", json!(p.message_id));
            put("document", doc);
        }
        Frame::DocumentDelete(d) => {
            put("schemaVersion", json!("cultnet.document_delete.v0"));
            put("messageId", json!(d.message_id));
            put("schemaId", json!(d.schema_id));
            put("recordKey", json!(d.record_key));
        }
        _ => unreachable!(),
    }
    Value::Object(m)
}

#[test]
fn the_vectors_file_is_what_the_generator_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .args(["protocol/cultnet/gen/vectors.py", "--check"])
        .current_dir(&root)
        .output()
        .expect("python3 must be installed (with the PyPI package msgpack)");
    assert!(
        out.status.success(),
        "vectors/write-receipt-vectors.json differs from gen/vectors.py's output (or msgpack is \
         missing): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_constants_match_the_tracker() {
    let c = &vectors()["constants"];
    assert_eq!(
        c["RECEIPT_RESULT_WINDOW_MS"],
        json!(RECEIPT_RESULT_WINDOW_MS)
    );
    assert_eq!(c["LEGACY_RESULT_WINDOW_MS"], json!(LEGACY_RESULT_WINDOW_MS));
    assert_eq!(
        c["DEDUPE_RETENTION_MS"],
        json!(cultnet_receipts::tracker::DEDUPE_RETENTION_MS)
    );
}

#[test]
fn every_wire_vector_decodes_to_its_message_and_reencodes_byte_for_byte() {
    let v = vectors();
    let wire = v["wire"].as_array().unwrap();
    assert!(wire.len() >= 10);
    for case in wire {
        let bytes = unhex(case["hex"].as_str().unwrap());
        let frame = decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
        assert_eq!(frame_json(&frame), case["message"], "{}", case["name"]);
        assert_eq!(
            hex(&encode(&frame).unwrap()),
            case["hex"].as_str().unwrap(),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn every_schema_invalid_vector_is_refused() {
    let v = vectors();
    let cases = v["schemaInvalid"].as_array().unwrap();
    assert!(cases.len() >= 15);
    for case in cases {
        let bytes = unhex(case["hex"].as_str().unwrap());
        assert!(
            decode(&bytes).is_err(),
            "{} decoded: {:?}",
            case["why"],
            decode(&bytes)
        );
    }
}

#[test]
fn every_content_hash_vector_matches() {
    let v = vectors();
    for case in v["contentHash"].as_array().unwrap() {
        let op = match case["operation"].as_str().unwrap() {
            "put" => Operation::Put,
            _ => Operation::Delete,
        };
        let payload = case["payloadHex"].as_str().map(unhex);
        let h = content_hash(
            op,
            case["schemaId"].as_str().unwrap(),
            case["recordKey"].as_str().unwrap(),
            payload.as_deref(),
        );
        assert_eq!(hex(&h), case["sha256"].as_str().unwrap(), "{case}");
    }
}

fn text_of(points: &Value) -> String {
    points
        .as_array()
        .unwrap()
        .iter()
        .map(|c| char::from_u32(c.as_u64().unwrap() as u32).unwrap())
        .collect()
}

#[test]
fn every_admitted_message_id_vector_matches() {
    let v = vectors();
    let a = &v["admittedMessageId"];
    assert_eq!(
        a["unicodeVersion"],
        json!(cultnet_receipts::message_id::UNICODE_VERSION)
    );
    for case in a["cases"].as_array().unwrap() {
        let id = text_of(&case["codePoints"]);
        let accept = case["expect"] == "accept";
        assert_eq!(is_valid_admitted_message_id(&id), accept, "{case}");
        let mut pairs = support::admitted_pairs("x");
        pairs[1].1 = support::s(&id);
        assert_eq!(decode(&support::map(&pairs)).is_ok(), accept, "{case}");
    }
    let probes = &a["rangeProbes"];
    for (key, accept) in [("accept", true), ("refuse", false)] {
        let list = probes[key].as_array().unwrap();
        assert!(list.len() > 1000);
        for c in list {
            let id = text_of(&json!([c]));
            assert_eq!(is_valid_admitted_message_id(&id), accept, "U+{c}");
        }
    }
    for c in a["whiteSpaceCodePoints"].as_array().unwrap() {
        let s = text_of(&json!([c]));
        assert!(is_white_space(s.chars().next().unwrap()) && is_blank(&s));
    }
    for c in a["notWhiteSpaceCodePoints"].as_array().unwrap() {
        assert!(!is_blank(&text_of(&json!([c]))));
    }
}

// ---- Scenarios ---------------------------------------------------------------------------------

struct Replay {
    tracker: WriteTracker,
    writes: BTreeMap<String, (WriteHandle, Frame)>,
}

impl Replay {
    fn id(&self, label: &str) -> String {
        let (h, _) = &self.writes[label];
        self.tracker.message_id(*h).unwrap().to_owned()
    }

    /// The messageId an answer names: the id minted for `for`, or an explicit one (maybe nil).
    fn named(&self, e: &Value) -> Option<String> {
        match e.get("for") {
            Some(label) => Some(self.id(label.as_str().unwrap())),
            None => e["messageId"].as_str().map(str::to_owned),
        }
    }

    fn event(&mut self, e: &Value) {
        let at = e["at"].as_u64().unwrap();
        if let Some(label) = e.get("send").and_then(Value::as_str) {
            let mode = if e["mode"] == "sendOnly" {
                WriteMode::SendOnly
            } else {
                WriteMode::Receipt
            };
            let key = e["recordKey"].as_str().unwrap();
            let (h, frame) = if e["operation"] == "delete" {
                self.tracker.delete("notes.v1", key, mode).unwrap()
            } else {
                let doc = Document {
                    record_key: key.into(),
                    payload: RawValue::new(vec![0x81, 0xa1, b'a', 0x01]).unwrap(),
                    ..support::document(key)
                };
                self.tracker.put(doc, mode).unwrap()
            };
            self.tracker.on_sent(h, at).unwrap();
            self.writes.insert(label.to_owned(), (h, frame));
        } else if e.get("tick").is_some() {
            self.tracker.on_tick(at);
        } else if e.get("sessionEnded").is_some() {
            self.tracker.on_session_ended(at);
        } else if let Some(label) = e.get("sendFailed").and_then(Value::as_str) {
            self.tracker.on_send_failed(self.writes[label].0, at);
        } else if let Some(label) = e.get("transportAck").and_then(Value::as_str) {
            self.tracker.on_transport_ack(self.writes[label].0, at);
        } else {
            let frame = match e["frame"].as_str().unwrap() {
                "write_admitted" => {
                    let label = e.get("for").and_then(Value::as_str);
                    let target = label.map(|l| self.tracker.target(self.writes[l].0).unwrap());
                    let op = match e.get("operation").and_then(Value::as_str) {
                        Some("delete") => Operation::Delete,
                        Some(_) => Operation::Put,
                        None => target.map_or(Operation::Put, |t| t.0),
                    };
                    let field = |k: &str, i: usize| {
                        e.get(k)
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .or_else(|| target.map(|t| [t.1, t.2][i].to_owned()))
                            .unwrap_or_else(|| "x".into())
                    };
                    Frame::WriteAdmitted(WriteAdmitted {
                        message_id: self.named(e).unwrap(),
                        operation: op,
                        schema_id: field("schemaId", 0),
                        record_key: field("recordKey", 1),
                    })
                }
                "error_v1" => Frame::ErrorV1(ErrorV1 {
                    message_id: self.named(e),
                    error: e["code"].as_str().unwrap().into(),
                    code: e["code"].as_str().map(Into::into),
                    details: None,
                }),
                "error_v0" => Frame::ErrorV0(ErrorV0 {
                    error: "write_not_authorized".into(),
                    code: Some("write_not_authorized".into()),
                    details: None,
                }),
                "echo" => self.writes[e["for"].as_str().unwrap()].1.clone(),
                other => panic!("unknown frame {other}"),
            };
            self.tracker.on_frame(&frame, at);
        }
    }
}

fn reason_word(r: UnconfirmedReason) -> &'static str {
    match r {
        UnconfirmedReason::WindowElapsed => "window_elapsed",
        UnconfirmedReason::SessionEnded => "session_ended",
        UnconfirmedReason::LocalSendFailed => "local_send_failed",
        _ => "other",
    }
}

fn state_json(s: Option<WriteState>) -> Value {
    let Some(WriteState::Settled { outcome, late }) = s else {
        return json!({ "outcome": "in_flight" });
    };
    let late = match late {
        None => Value::Null,
        Some(LateAnswer::AdmittedLate) => json!("admitted_late"),
        Some(LateAnswer::RefusedLate(_)) => json!("refused_late"),
        Some(_) => json!("other"),
    };
    match outcome {
        Outcome::Admitted => json!({ "outcome": "admitted", "late": late }),
        Outcome::Sent => json!({ "outcome": "sent", "late": late }),
        Outcome::Refused(r) => {
            json!({ "outcome": "refused", "code": r.code.as_deref(), "late": late })
        }
        Outcome::Unconfirmed { reason, .. } => {
            json!({ "outcome": "unconfirmed", "reason": reason_word(reason), "late": late })
        }
        _ => json!({ "outcome": "other" }),
    }
}

#[test]
fn every_scenario_settles_as_the_vectors_say() {
    let v = vectors();
    let scenarios = v["scenarios"].as_array().unwrap();
    assert!(scenarios.len() >= 15);
    for sc in scenarios {
        let name = sc["name"].as_str().unwrap();
        let mut r = Replay {
            tracker: WriteTracker::new(TrackerLimits::default(), 7),
            writes: BTreeMap::new(),
        };
        if sc["server"] != "none" {
            let mut versions = vec!["cultnet.hello.v0".to_string()];
            if sc["server"] == "receipts" {
                versions.push("cultnet.write_admitted.v0".into());
                versions.push("cultnet.error.v1".into());
            }
            r.tracker.on_hello(&Hello {
                runtime_id: "server".into(),
                runtime_kind: "server".into(),
                supported_message_versions: Some(versions),
                ..Hello::default()
            });
        }
        let window = v["constants"][sc["window"].as_str().unwrap()].as_u64();
        assert_eq!(Some(r.tracker.result_window_ms()), window, "{name}");
        for e in sc["events"].as_array().unwrap() {
            r.event(e);
        }
        let mut told = BTreeMap::new();
        while let Some(s) = r.tracker.poll_settled() {
            assert!(
                told.insert(s.handle, s.outcome).is_none(),
                "{name}: settled twice"
            );
        }
        for (label, want) in sc["expect"].as_object().unwrap() {
            let h = r.writes[label].0;
            let mut got = state_json(r.tracker.state(h));
            if want.get("code").is_none() {
                if let Some(o) = got.as_object_mut() {
                    o.remove("code");
                }
            }
            if want.get("late").is_none() {
                if let Some(o) = got.as_object_mut() {
                    o.remove("late");
                }
            }
            assert_eq!(&got, want, "{name}: {label}");
        }
        for b in sc
            .get("batches")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let members: Vec<WriteHandle> = b["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| r.writes[m.as_str().unwrap()].0)
                .collect();
            let named: Vec<WriteHandle> = b["named"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| r.writes[m.as_str().unwrap()].0)
                .collect();
            let want = match b["outcome"].as_str().unwrap() {
                "admitted" => BatchOutcome::Admitted,
                "refused" => BatchOutcome::Refused(named),
                _ => BatchOutcome::Unconfirmed(named),
            };
            assert_eq!(r.tracker.batch_outcome(&members), Some(want), "{name}");
        }
    }
}
