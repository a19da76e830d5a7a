//! Set-up shared by the blocking drain's tests and their tokio twins (included by both with
//! `#[path = "common/drain.rs"] mod drain_common;`): the loopback servers, the journals and
//! the checks on what a server recorded. The scenarios both drains run are in `scenarios.rs`.
#![allow(dead_code)]

use std::sync::Mutex;
use std::time::Duration;

use sf_journal::ring::{Durability, OkQueueLimits};
use sf_journal::status::{decode_status, Status};
use sf_journal_io::loopback::{Conn, LoopbackServer, RecordedConn, ServerConfig};
use sf_journal_io::{Journal, JournalConfig};

use crate::common::{payload, scratch, small};

/// A loopback server with seed 7 following `script`, otherwise in its default set-up.
pub fn server(script: Vec<Conn>) -> LoopbackServer {
    LoopbackServer::start(ServerConfig {
        seed: 7,
        script,
        ..ServerConfig::default()
    })
    .unwrap()
}

/// A server that acknowledges only once a connection idles (`idle` after the last frame).
pub fn acking_when_idle(idle: Duration) -> LoopbackServer {
    LoopbackServer::start(ServerConfig {
        seed: 7,
        ack_one_in: 0,
        idle_ack: idle,
        ..ServerConfig::default()
    })
    .unwrap()
}

/// A server that acknowledges every frame and confirms durability after two pings.
pub fn durable_server() -> LoopbackServer {
    LoopbackServer::start(ServerConfig {
        durable_after_pings: 2,
        ack_one_in: 1,
        ..ServerConfig::default()
    })
    .unwrap()
}

/// A server that acknowledges every frame at once with an OK padded to some 8 KiB (eight
/// table names), so that a long backlog of OKs fills the socket buffers.
pub fn backlog_server() -> LoopbackServer {
    LoopbackServer::start(ServerConfig {
        ack_one_in: 1,
        ok_padding_tables: 8,
        ..ServerConfig::default()
    })
    .unwrap()
}

/// A memory journal holding frames `0..n`.
pub fn filled(n: usize) -> Mutex<Journal> {
    let mut j = Journal::memory(small());
    for i in 0..n {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    Mutex::new(j)
}

/// A memory journal that queues OKs for durable acks within `limits`, holding frames `0..n`.
pub fn durable_filled(limits: OkQueueLimits, n: usize) -> Mutex<Journal> {
    let mut jc = small();
    jc.durable_ack = Some(limits);
    let mut j = Journal::memory(jc);
    for i in 0..n {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    Mutex::new(j)
}

/// A disk journal in `sf` holding frames `0..n`.
pub fn disk_filled(sf: &std::path::Path, n: usize) -> Mutex<Journal> {
    let mut j = Journal::open(sf, "s", small()).unwrap();
    for i in 0..n {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    Mutex::new(j)
}

/// An empty memory journal with room for a long flood of appends.
pub fn roomy() -> Mutex<Journal> {
    let mut jc = JournalConfig::memory();
    jc.ring.max_total_bytes = 1 << 30;
    Mutex::new(Journal::memory(jc))
}

/// A memory journal of `n` QWP frames of 256 KiB each.
pub fn heavy(n: usize) -> Mutex<Journal> {
    padded(n, 256 << 10)
}

/// A memory journal of `n` QWP frames, each `payload(i)` padded with dots to `len` bytes.
pub fn padded(n: usize, len: usize) -> Mutex<Journal> {
    let mut j = Journal::memory(JournalConfig::memory());
    for i in 0..n {
        let mut f = payload(i);
        f.resize(len, b'.');
        let _ = j.append(&f, 0).unwrap();
    }
    Mutex::new(j)
}

/// A disk journal (in a fresh directory named after `name`) under `sf_durability=periodic`
/// (10 ms) holding five frames.
pub fn periodic_journal(name: &str) -> Mutex<Journal> {
    let mut jc = small();
    jc.durability = Durability::Periodic {
        interval_millis: 10,
    };
    let mut journal = Journal::open(&scratch(name), "s", jc).unwrap();
    for i in 0..5 {
        let _ = journal.append(&payload(i), 0).unwrap();
    }
    Mutex::new(journal)
}

/// An address nobody listens on.
pub fn nobody() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// The highest wire sequence the server acknowledged on a connection.
pub fn last_ok(c: &RecordedConn) -> Option<u64> {
    c.sent
        .iter()
        .filter_map(|b| match decode_status(b) {
            Ok(Status::Ok { wire_seq, .. }) => Some(wire_seq),
            _ => None,
        })
        .max()
}

/// The names in a slot directory, sorted.
pub fn slot_names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Frames a server may not send (RFC 6455): reserved bits set, a masked frame, an unknown
/// opcode, a text frame that is not UTF-8, a close of one byte, a fragmented PING, a
/// continuation with nothing to continue.
pub const BAD_WS_FRAMES: [&[u8]; 7] = [
    &[0xC2, 0x01, 0x00],
    &[0x82, 0x81, 0, 0, 0, 0, 0x00],
    &[0x83, 0x00],
    &[0x81, 0x02, 0xff, 0xfe],
    &[0x88, 0x01, 0x03],
    &[0x09, 0x00],
    &[0x80, 0x01, 0x00],
];

/// Closes whose code says the server refuses what the client sends: 1002, 1003, 1007, 1008,
/// 1009, 1010, and 1005, which no endpoint may send (taken as 1002).
pub const REFUSING_CLOSES: [[u8; 4]; 7] = [
    [0x88, 0x02, 0x03, 0xea],
    [0x88, 0x02, 0x03, 0xeb],
    [0x88, 0x02, 0x03, 0xef],
    [0x88, 0x02, 0x03, 0xf0],
    [0x88, 0x02, 0x03, 0xf1],
    [0x88, 0x02, 0x03, 0xf2],
    [0x88, 0x02, 0x03, 0xed],
];
