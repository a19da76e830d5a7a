//! Scripted peers on raw sockets, shared by the blocking and the async client tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cultnet_receipts::frames::{
    Document, ErrorV1, Hello, Operation, RawValue, WriteAdmitted, ERROR_V1, WRITE_ADMITTED_V0,
};
use cultnet_receipts::{decode, encode, Frame};

/// Reads one length-prefixed frame.
pub fn read_frame(s: &mut TcpStream) -> Frame {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("length");
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).expect("body");
    decode(&body).expect("the client's frames decode")
}

/// Writes one length-prefixed frame.
pub fn write_frame(s: &mut TcpStream, f: &Frame) {
    let body = encode(f).expect("encodes");
    s.write_all(&(body.len() as u32).to_be_bytes())
        .expect("write");
    s.write_all(&body).expect("write");
}

/// A receipt server's hello.
pub fn receipt_hello() -> Frame {
    Frame::Hello(Hello {
        runtime_id: "scripted".to_owned(),
        runtime_kind: "server".to_owned(),
        supported_message_versions: Some(vec![WRITE_ADMITTED_V0.to_owned(), ERROR_V1.to_owned()]),
        ..Hello::default()
    })
}

/// A peer that reads 64 KiB every 100 ms (for at most 30 s, or until the client goes).
pub fn trickle_peer() -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let t0 = Instant::now();
        let mut buf = vec![0u8; 64 * 1024];
        while t0.elapsed() < Duration::from_secs(30) {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    });
    (port, t)
}

/// A receipt peer that sends its hello, reads nothing for `stall`, then admits each of `n`
/// writes as soon as it has read it, and holds the connection a little longer.
pub fn stalling_peer(stall: Duration, n: usize) -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        write_frame(&mut s, &receipt_hello());
        std::thread::sleep(stall);
        let mut admitted = 0;
        while admitted < n {
            if let Frame::DocumentPut(p) = read_frame(&mut s) {
                write_frame(
                    &mut s,
                    &Frame::WriteAdmitted(WriteAdmitted {
                        message_id: p.message_id,
                        operation: Operation::Put,
                        schema_id: p.document.schema_id,
                        record_key: p.document.record_key,
                    }),
                );
                admitted += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    });
    (port, t)
}

/// The code of the refusal [`strangers_peer`] sends under the put's own id.
pub const OWN_REFUSAL_CODE: &str = "unowned_schema";

/// A receipt peer for W-44: it reads the client's hello and one put, sends its receipt hello,
/// then answers that name ids the client never sent (an admission under the put's id with one
/// byte more, a refusal of another write), and only then refuses the put under its own id with
/// [`OWN_REFUSAL_CODE`]. A client that let either stranger settle its put would report it
/// admitted or refused with the stranger's code.
pub fn strangers_peer() -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        assert!(matches!(read_frame(&mut s), Frame::Hello(_)));
        let Frame::DocumentPut(p) = read_frame(&mut s) else {
            panic!("a put expected");
        };
        write_frame(&mut s, &receipt_hello());
        write_frame(
            &mut s,
            &Frame::WriteAdmitted(WriteAdmitted {
                message_id: format!("{}x", p.message_id),
                operation: Operation::Put,
                schema_id: p.document.schema_id.clone(),
                record_key: p.document.record_key.clone(),
            }),
        );
        write_frame(
            &mut s,
            &Frame::ErrorV1(ErrorV1 {
                message_id: Some("someone-elses-write".to_owned()),
                error: "write_not_authorized: no".to_owned(),
                code: Some("write_not_authorized".into()),
                details: None,
            }),
        );
        std::thread::sleep(Duration::from_millis(50));
        write_frame(
            &mut s,
            &Frame::ErrorV1(ErrorV1 {
                message_id: Some(p.message_id),
                error: format!("{OWN_REFUSAL_CODE}: no owner"),
                code: Some(OWN_REFUSAL_CODE.into()),
                details: None,
            }),
        );
        std::thread::sleep(Duration::from_millis(500));
    });
    (port, t)
}

/// What a client must report after a put to [`strangers_peer`]: refused under its own id with
/// [`OWN_REFUSAL_CODE`], the two strangers counted as unmatched and settling nothing.
pub fn assert_only_its_own_id_settled(outcome: &cultnet_client::Outcome, unmatched: u64) {
    let cultnet_client::Outcome::Refused(r) = outcome else {
        panic!("only the answer under its own id settles it, got {outcome:?}");
    };
    assert_eq!(r.code.as_deref(), Some(OWN_REFUSAL_CODE));
    assert_eq!(unmatched, 2, "both strangers counted unmatched");
}

/// A peer whose first bytes declare a frame of 4 GiB, above any cap; its thread returns whether
/// the client then closed the connection (the peer read to the end) within two seconds.
pub fn oversized_prefix_peer() -> (u16, JoinHandle<bool>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.write_all(&[0xff, 0xff, 0xff, 0xff]).expect("write");
        let until = Instant::now() + Duration::from_secs(2);
        let mut buf = [0u8; 4096];
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .expect("timeout");
            match s.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
        false
    });
    (port, t)
}

/// Sixteen puts of 900 kB each (more than the socket buffers hold).
pub fn big_documents() -> Vec<Document> {
    let mut big = vec![0xc6];
    big.extend_from_slice(&(900_000u32).to_be_bytes());
    big.resize(5 + 900_000, 0x5a);
    (0..16)
        .map(|i| document("s.big", &format!("k{i}"), &big))
        .collect()
}

/// A batch putting each of [`big_documents`].
pub fn big_batch() -> Vec<cultnet_client::BatchWrite> {
    big_documents()
        .into_iter()
        .map(cultnet_client::BatchWrite::Put)
        .collect()
}

/// Where a scripted peer listens: `port` on 127.0.0.1, without TLS.
pub fn local(port: u16) -> cultnet_client::Target {
    cultnet_client::Target::new("127.0.0.1", port, false)
}

/// A client configuration for a scripted peer: `runtime_id`, `nonce`, and a connect timeout
/// of 2 s.
pub fn scripted_config(runtime_id: &str, nonce: u64) -> cultnet_client::ClientConfig {
    let mut config = cultnet_client::ClientConfig::new(runtime_id, nonce);
    config.connect_timeout = Duration::from_secs(2);
    config
}

/// A put's document with `payload` (one MessagePack value) and no optional fields.
pub fn document(schema: &str, key: &str, payload: &[u8]) -> Document {
    Document {
        schema_id: schema.to_owned(),
        record_key: key.to_owned(),
        stored_at: "2026-12-04T00:00:00Z".to_owned(),
        payload: RawValue::new(payload.to_vec()).expect("one value"),
        source_runtime_id: None,
        source_agent_id: None,
        source_role: None,
        tags: None,
    }
}

/// A peer that sends no hello (so the client keeps the 500 ms legacy window) and, once the
/// client's first bytes came, the length prefix of a frame of 1000 bytes and then one byte of
/// it every 5 ms for at most 4 s (or until the client goes): each socket read of the client
/// brings a byte in time, and the frame never completes.
pub fn trickling_frame_peer() -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut first = [0u8; 1];
        if s.read_exact(&mut first).is_err() {
            return;
        }
        // What the client sends is read and dropped, so its writes never wait.
        let mut r = s.try_clone().expect("clone");
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while matches!(r.read(&mut buf), Ok(n) if n > 0) {}
        });
        if s.write_all(&1000u32.to_be_bytes()).is_err() {
            return;
        }
        let end = Instant::now() + Duration::from_secs(4);
        while Instant::now() < end && s.write_all(&[0x90]).is_ok() {
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    (port, t)
}

/// Writes one length-prefixed frame of raw bytes.
pub fn write_raw(s: &mut TcpStream, body: &[u8]) {
    s.write_all(&(body.len() as u32).to_be_bytes())
        .expect("write");
    s.write_all(body).expect("write");
}

/// A peer that answers the client's first put with two frames a decoder must refuse, each
/// naming the put and otherwise its admission: one with an extra key, one under
/// `cultnet.write_admitted.v1`; then with the put's refusal under its id (code
/// [`OWN_REFUSAL_CODE`]). A client that took either of the first two as an admission reports
/// the put admitted.
pub fn new_frames_peer() -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        assert!(matches!(read_frame(&mut s), Frame::Hello(_)));
        let Frame::DocumentPut(p) = read_frame(&mut s) else {
            panic!("a put expected");
        };
        write_frame(&mut s, &receipt_hello());
        let admission = encode(&Frame::WriteAdmitted(WriteAdmitted {
            message_id: p.message_id.clone(),
            operation: Operation::Put,
            schema_id: p.document.schema_id.clone(),
            record_key: p.document.record_key.clone(),
        }))
        .expect("encodes");
        // One more key in the fixmap.
        let mut extra = admission.clone();
        assert_eq!(extra[0], 0x85);
        extra[0] = 0x86;
        extra.extend([0xa5, b'e', b'x', b't', b'r', b'a', 0xc0]);
        write_raw(&mut s, &extra);
        // The same frame under a version the decoder does not know.
        let (from, to) = (b"write_admitted.v0", b"write_admitted.v1");
        let at = admission
            .windows(from.len())
            .position(|w| w == from)
            .expect("the version is in the frame");
        let mut unknown = admission;
        unknown[at..at + to.len()].copy_from_slice(to);
        write_raw(&mut s, &unknown);
        write_frame(
            &mut s,
            &Frame::ErrorV1(ErrorV1 {
                message_id: Some(p.message_id),
                error: format!("{OWN_REFUSAL_CODE}: no owner"),
                code: Some(OWN_REFUSAL_CODE.into()),
                details: None,
            }),
        );
        std::thread::sleep(Duration::from_millis(500));
    });
    (port, t)
}

/// What a client must report after a put to [`new_frames_peer`]: refused under its own id, both
/// refused frames counted as undecodable, the first one's unknown key kept as the violation,
/// and the session still open.
pub fn assert_new_frames_settled_nothing(
    outcome: &cultnet_client::Outcome,
    undecodable: u64,
    violation: Option<&cultnet_client::Violation>,
    ended: bool,
) {
    let cultnet_client::Outcome::Refused(r) = outcome else {
        panic!("only the well-formed refusal settles it, got {outcome:?}");
    };
    assert_eq!(r.code.as_deref(), Some(OWN_REFUSAL_CODE));
    assert_eq!(undecodable, 2);
    assert_eq!(
        violation,
        Some(&cultnet_client::Violation::Decode(
            cultnet_receipts::DecodeError::UnknownKey("extra".to_owned())
        ))
    );
    assert!(!ended, "a frame that does not decode ends nothing");
}

/// A clock the test sets by hand: it reads what was last stored, and real time does not move it.
/// It counts its readings, each counted once its value was taken.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: std::sync::atomic::AtomicU64,
    reads: std::sync::atomic::AtomicU64,
}

impl ManualClock {
    /// Sets the reading to `ms`.
    pub fn set(&self, ms: u64) {
        self.now.store(ms, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many readings were taken so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl cultnet_client::Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        let v = self.now.load(std::sync::atomic::Ordering::SeqCst);
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        v
    }
}

/// A receipt peer whose hello comes late: it reads the client's hello and one put, waits for
/// the client's clock reading after the put, sets `clock` to `at_ms` (past the legacy window of a put sent at 0), and only then sends its
/// receipt hello and an admission of the put, and closes. A client that lets the hello select
/// the receipt window before judging the put's age would report it admitted.
pub fn late_hello_peer(clock: std::sync::Arc<ManualClock>, at_ms: u64) -> (u16, JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        assert!(matches!(read_frame(&mut s), Frame::Hello(_)));
        let Frame::DocumentPut(p) = read_frame(&mut s) else {
            panic!("a put expected");
        };
        // The client reads its clock once its write is done (the reading the put's window runs
        // from): wait for a reading taken after the put arrived, so that one read 0.
        let seen = clock.reads();
        let t0 = Instant::now();
        while clock.reads() <= seen && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        // The clock moves before the bytes that let the client act.
        clock.set(at_ms);
        write_frame(&mut s, &receipt_hello());
        write_frame(
            &mut s,
            &Frame::WriteAdmitted(WriteAdmitted {
                message_id: p.message_id,
                operation: Operation::Put,
                schema_id: p.document.schema_id,
                record_key: p.document.record_key,
            }),
        );
        let _ = s.shutdown(std::net::Shutdown::Write);
        // Hold the socket until the client is gone (bounded).
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut buf = [0u8; 64];
        while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
    });
    (port, t)
}
