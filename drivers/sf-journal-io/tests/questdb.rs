//! Evidence against the real questdb client (questdb 6.0.0 from PyPI, which needs numpy): the
//! Python client, configured with a store-and-forward directory and pointed at the loopback
//! QWP server, is killed with SIGKILL mid-stream while the server acknowledges nothing; our
//! recovery then opens the slot it left and must find every frame the server received and every
//! row the client had flushed, in FSN order, with the dictionary entries those rows use.
//!
//! These tests fail (they do not skip) when `python3` or the questdb package is missing:
//! `python3 -m pip install questdb==6.0.0 numpy`. `SF_QUESTDB_PYTHON` names another
//! interpreter. Every run stays on 127.0.0.1 and is bounded in time.

#![cfg(unix)] // SIGKILL and its exit status are Unix notions.

mod common;
use common::*;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use sf_journal::recovery::{recover, Recovery};
use sf_journal::slot;
use sf_journal_io::loopback::{LoopbackServer, ServerConfig};
use sf_journal_io::{FileDir, Journal, JournalConfig};

/// The row count the script is asked for: far more than it gets through before the kill.
const ROWS: usize = 100_000;
/// The kill comes once the server has received this many frames and the client has reported
/// as many flushed rows.
const KILL_AFTER: usize = 30;
/// The longest the client may take to get there.
const RUN_LIMIT: Duration = Duration::from_secs(60);

fn python() -> String {
    std::env::var("SF_QUESTDB_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/questdb/send_rows.py")
}

/// Panics (the test fails) unless the interpreter imports questdb 6.0.0 and numpy.
fn require_questdb() {
    let mut child = Command::new(python())
        .args([
            "-c",
            "import numpy, questdb; import sys; sys.exit(0 if questdb.__version__ == '6.0.0' else 3)",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; install python3 and `python3 -m pip install questdb==6.0.0 numpy`",
                python()
            )
        });
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("importing questdb took longer than 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        status.success(),
        "questdb 6.0.0 and numpy are needed ({status}): `python3 -m pip install questdb==6.0.0 numpy`"
    );
}

/// A row the client reported flushed: its index and its symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Flushed {
    index: usize,
    symbol: String,
}

/// What one killed run left behind.
#[derive(Debug)]
struct KilledRun {
    /// The slot directory the client wrote.
    slot: PathBuf,
    /// The binary messages the server received, in order (one connection).
    received: Vec<Vec<u8>>,
    /// Every row the client reported flushed before it died.
    flushed: Vec<Flushed>,
    /// The slot's file names and lengths right after the kill.
    listing: Vec<(String, u64)>,
}

/// Starts a server that never acknowledges, runs the client against it with the slot
/// `<sf_dir>/killed`, SIGKILLs the client once `KILL_AFTER` frames got through, and returns what
/// the server and the client's output say.
fn run_and_kill(name: &str) -> KilledRun {
    require_questdb();
    let sf_dir = scratch(name);
    let server = LoopbackServer::start(ServerConfig {
        ack_one_in: 0,
        idle_ack: Duration::MAX,
        max_connection_life: RUN_LIMIT + Duration::from_secs(10),
        ..ServerConfig::default()
    })
    .unwrap();
    let mut child = Command::new(python())
        .arg(script())
        .arg(server.addr().port().to_string())
        .arg(&sf_dir)
        .arg("killed")
        .arg(ROWS.to_string())
        .arg("0.005")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    let until = Instant::now() + RUN_LIMIT;
    loop {
        while let Ok(l) = rx.try_recv() {
            lines.push(l);
        }
        let got = server
            .connections()
            .first()
            .map_or(0, |c| c.messages().len());
        if got >= KILL_AFTER && lines.len() >= KILL_AFTER {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
            panic!("the client ended before the kill ({status}): {err}");
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the client did not get {KILL_AFTER} frames through in {RUN_LIMIT:?}: {} received, {} flushed",
                got,
                lines.len()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // `Child::kill` sends SIGKILL on Unix: no close, no flush, no cleanup.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL: {status}");
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    // Let the server read what was in flight when the client died.
    std::thread::sleep(Duration::from_millis(300));
    let conns = server.connections();
    drop(server);
    assert_eq!(conns.len(), 1, "one connection, never acknowledged");
    assert!(conns[0].sent.is_empty(), "the server acknowledged nothing");
    let flushed = lines
        .iter()
        .map(|l| {
            let mut w = l.split(' ');
            assert_eq!(w.next(), Some("flushed"), "{l}");
            Flushed {
                index: w.next().unwrap().parse().unwrap(),
                symbol: w.next().unwrap().to_owned(),
            }
        })
        .collect::<Vec<_>>();
    for (i, f) in flushed.iter().enumerate() {
        assert_eq!(f.index, i);
    }
    let slot = sf_dir.join("killed");
    let mut listing: Vec<(String, u64)> = std::fs::read_dir(&slot)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    listing.sort();
    KilledRun {
        slot,
        received: conns[0].messages(),
        flushed,
        listing,
    }
}

/// One killed run shared by the tests of this file (each test reads it, or works on a copy).
fn killed() -> &'static KilledRun {
    static RUN: OnceLock<KilledRun> = OnceLock::new();
    RUN.get_or_init(|| run_and_kill("questdb-killed"))
}

/// A copy of the killed slot for a test that opens it (opening takes the lock and repairs).
fn copy_of_slot(run: &KilledRun, name: &str) -> PathBuf {
    let to = scratch(name).join("killed");
    std::fs::create_dir_all(&to).unwrap();
    for (f, _) in &run.listing {
        std::fs::copy(run.slot.join(f), to.join(f)).unwrap();
    }
    to
}

/// Our recovery over the killed slot's bytes, without changing them.
fn recovery_of(slot: &Path) -> Recovery {
    let files = FileDir::create(slot).unwrap().read_slot().unwrap();
    recover(&files, 0).unwrap()
}

/// Every frame of the slot in FSN order, as our journal hands them to a new connection.
fn replay(slot: &Path) -> (Journal, Vec<(i64, Vec<u8>)>) {
    let mut j = Journal::open_slot(slot, JournalConfig::disk()).unwrap();
    let _ = j.connect(0);
    let frames = drain(&mut j);
    (j, frames)
}

#[test]
fn sf_3_a_questdb_client_killed_mid_stream_leaves_every_frame_for_our_recovery() {
    let run = killed();
    let slot = copy_of_slot(run, "questdb-sf3");
    let (j, frames) = replay(&slot);
    let n = frames.len();
    assert!(
        n >= run.received.len(),
        "{n} frames on disk, {} received",
        run.received.len()
    );
    assert!(
        n >= run.flushed.len(),
        "{n} frames on disk, {} rows flushed (one frame each)",
        run.flushed.len()
    );
    assert_eq!(j.recovered(), 0..n as i64, "nothing was acknowledged");
    assert_eq!(j.acked_fsn(), -1);
    // Every frame the server received is on disk at the FSN of its wire position, byte for byte.
    for (i, m) in run.received.iter().enumerate() {
        assert_eq!(&frames[i].1, m, "frame {i}");
    }
}

#[test]
fn sf_10_a_killed_questdb_slot_replays_in_fsn_order_as_the_client_sent() {
    let run = killed();
    let slot = copy_of_slot(run, "questdb-sf10");
    let (_j, frames) = replay(&slot);
    let fsns: Vec<i64> = frames.iter().map(|(f, _)| *f).collect();
    let expected: Vec<i64> = (0..frames.len() as i64).collect();
    assert_eq!(fsns, expected, "consecutive FSNs from 0");
    let sent: Vec<&Vec<u8>> = run.received.iter().collect();
    let replayed: Vec<&Vec<u8>> = frames.iter().map(|(_, p)| p).take(sent.len()).collect();
    assert_eq!(
        replayed, sent,
        "the replay order is the order the client sent"
    );
    // The frames are distinct rows, so the order comparison cannot pass by repetition.
    let mut distinct = frames.iter().map(|(_, p)| p).collect::<Vec<_>>();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), frames.len());
}

#[test]
fn sf_w9_a_killed_questdb_slot_holds_only_qwp1_frames() {
    let run = killed();
    let slot = copy_of_slot(run, "questdb-w9");
    let (_j, frames) = replay(&slot);
    assert!(!frames.is_empty());
    for (fsn, p) in &frames {
        assert_eq!(p.get(..4), Some(&b"QWP1"[..]), "frame {fsn}");
    }
}

#[test]
fn sf_35_every_symbol_a_flushed_questdb_row_uses_is_in_the_recovered_dictionary() {
    let run = killed();
    let slot = copy_of_slot(run, "questdb-sf35");
    let j = Journal::open_slot(&slot, JournalConfig::disk()).unwrap();
    let mut used: Vec<&str> = Vec::new();
    for f in &run.flushed {
        if !used.contains(&f.symbol.as_str()) {
            used.push(&f.symbol);
        }
    }
    let dict = j.dict().symbols();
    assert!(
        dict.len() >= used.len(),
        "{} entries, {} symbols used",
        dict.len(),
        used.len()
    );
    // Ids are dense from 0 in first-use order: the used symbols are the dictionary's prefix.
    assert_eq!(&dict[..used.len()], used.as_slice());
    // Entries past the flushed rows can only be the next symbols in the script's sequence.
    for (i, s) in dict.iter().enumerate() {
        assert_eq!(s, &format!("k{i}"), "entry {i}");
    }
}

#[test]
fn sf_31_the_questdb_clients_empty_spare_segment_is_left_out_and_the_rest_is_contiguous() {
    let run = killed();
    let r = recovery_of(&run.slot);
    assert!(
        !r.segments.is_empty(),
        "the frames are in at least one segment"
    );
    let mut next = 0i64;
    for s in &r.segments {
        assert_eq!(s.scan.header.base_seq, next, "{}", s.file);
        next += s.scan.frame_count();
    }
    assert_eq!(r.next_fsn, next);
    // The client keeps an empty spare ready; its base sequence (0) overlaps the first segment
    // and must not be taken for an overlap or a gap.
    assert!(!r.spares.is_empty(), "{:?}", run.listing);
    assert_eq!(
        r.segments.len() + r.spares.len(),
        run.listing
            .iter()
            .filter(|(f, _)| slot::parse_segment_name(f).is_some())
            .count(),
        "every segment file is a frame segment or a spare"
    );
}

#[test]
fn sf_d3_the_questdb_clients_segments_are_named_by_generation_and_pre_sized() {
    let run = killed();
    let segments: Vec<&(String, u64)> = run
        .listing
        .iter()
        .filter(|(f, _)| f.ends_with(".sfa"))
        .collect();
    assert!(!segments.is_empty(), "{:?}", run.listing);
    for (f, len) in segments {
        assert!(slot::parse_segment_name(f).is_some(), "{f}");
        assert_eq!(*len, 4 << 20, "{f} is pre-sized to 4 MiB");
    }
}

#[test]
fn sf_d7_the_lock_of_a_killed_questdb_client_is_taken_over_and_names_the_new_holder() {
    let run = killed();
    let names: Vec<&str> = run.listing.iter().map(|(f, _)| f.as_str()).collect();
    assert!(names.contains(&slot::LOCK), "{names:?}");
    assert!(names.contains(&slot::LOCK_PID), "{names:?}");
    let slot_dir = copy_of_slot(run, "questdb-d7");
    let _j = Journal::open_slot(&slot_dir, JournalConfig::disk()).unwrap();
    let pid = std::fs::read_to_string(slot_dir.join(slot::LOCK_PID)).unwrap();
    assert_eq!(pid.trim(), std::process::id().to_string());
}
