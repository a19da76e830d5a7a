//! Evidence against the real questdb client (questdb 6.0.0 from PyPI, which needs numpy): the
//! Python client, configured with a store-and-forward directory and pointed at the loopback
//! QWP server, is killed with SIGKILL mid-stream while the server acknowledges nothing; our
//! recovery then opens the slot it left and must find every frame the server received and every
//! row the client had flushed, in FSN order, with the dictionary entries those rows use.
//!
//! The reverse: our journal writes those frames (with their symbols) into a fresh slot and
//! stops without closing; the questdb client opens that slot against a server that
//! acknowledges, sends its catch-up frames (the dictionary) and then our frames in FSN order,
//! and on close leaves only the lock files.
//!
//! The killed client's own restart on its slot replays exactly what our recovery found.
//!
//! Orphan adoption both ways: our drainer adopts the slot the killed client left, and the
//! questdb client (`drain_orphans=on`) adopts a slot our journal wrote, each over its own
//! connection, leaving the orphan with only its lock files.
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
use sf_journal_io::drain::DrainConfig;
use sf_journal_io::loopback::{LoopbackServer, ServerConfig};
use sf_journal_io::orphans::{drain_orphans, OrphanOutcome};
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

/// Runs the script to its end against `server` with the slot `<sf_dir>/<sender_id>`, sending
/// `rows` new rows; returns its output lines. Panics when it fails or takes longer than
/// `RUN_LIMIT`.
fn run_to_end(
    server: &LoopbackServer,
    sf_dir: &Path,
    sender_id: &str,
    rows: usize,
    extra_conf: &str,
) -> Vec<String> {
    let mut child = Command::new(python())
        .arg(script())
        .arg(server.addr().port().to_string())
        .arg(sf_dir)
        .arg(sender_id)
        .arg(rows.to_string())
        .arg("0")
        .arg(extra_conf)
        // A second for the client's background drainers before it closes.
        .arg(if extra_conf.is_empty() { "0" } else { "1" })
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the client did not finish in {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out);
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
    assert!(status.success(), "the client failed ({status}): {err}");
    out.lines().map(str::to_owned).collect()
}

/// Writes, with our journal, the frames the killed client left (and the symbols each uses) into
/// the slot `<sf_dir>/<sender_id>`, then drops the journal without closing it, as a crash would.
/// Returns the frames in FSN order.
fn write_our_slot(run: &KilledRun, sf_dir: &Path, sender_id: &str) -> Vec<Vec<u8>> {
    let (_j, captured) = replay(&copy_of_slot(run, &format!("{sender_id}-source")));
    let mut j = Journal::open(sf_dir, sender_id, JournalConfig::disk()).unwrap();
    let mut frames = Vec::new();
    for (fsn, payload) in captured {
        // Row i of the script uses the symbol k{i / 3}, new every third row.
        let symbol = format!("k{}", fsn / 3);
        let (ours, ids) = j
            .append_with_symbols(&[symbol], |_| payload.clone(), 0)
            .unwrap();
        assert_eq!(ours, fsn);
        assert_eq!(
            ids,
            [u32::try_from(fsn / 3).unwrap()],
            "ids as the client gave them"
        );
        frames.push(payload);
    }
    drop(j);
    frames
}

fn slot_names(slot: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(slot)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// What the questdb client sent when it opened a slot our code wrote.
#[derive(Debug)]
struct ReverseRun {
    /// The frames our journal wrote, in FSN order.
    ours: Vec<Vec<u8>>,
    /// The symbols of our slot's dictionary, in id order.
    dict: Vec<String>,
    /// The binary messages the server received, every connection in order.
    received: Vec<Vec<u8>>,
    /// The slot's file names after the client closed.
    left: Vec<String>,
}

/// One reverse run shared by the tests of this file: our journal writes the frames the killed
/// client left into a fresh slot and stops without closing; the questdb client then opens that
/// slot against a server that acknowledges, sends no new row and closes.
fn reverse() -> &'static ReverseRun {
    static RUN: OnceLock<ReverseRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let run = killed();
        let sf_dir = scratch("questdb-reverse");
        let ours = write_our_slot(run, &sf_dir, "ours");
        let dict = {
            let files = FileDir::create(sf_dir.join("ours"))
                .unwrap()
                .read_slot()
                .unwrap();
            let scan = sf_journal::dict::scan_dict(files.symbol_dict.as_deref().unwrap()).unwrap();
            sf_journal::dict::SymbolDict::from_scan(&scan)
                .symbols()
                .to_vec()
        };
        let server = LoopbackServer::start(ServerConfig::default()).unwrap();
        let lines = run_to_end(&server, &sf_dir, "ours", 0, "");
        assert_eq!(lines, ["done"]);
        let conns = server.connections();
        drop(server);
        ReverseRun {
            ours,
            dict,
            received: conns.iter().flat_map(|c| c.messages()).collect(),
            left: slot_names(&sf_dir.join("ours")),
        }
    })
}

/// How many messages came before our frames (the client's catch-up frames).
fn catch_up(r: &ReverseRun) -> usize {
    assert!(
        r.received.len() >= r.ours.len(),
        "{} received, {} written",
        r.received.len(),
        r.ours.len()
    );
    r.received.len() - r.ours.len()
}

/// Every symbol appears in the catch-up frames, length-prefixed, in id order.
fn symbols_in_order(catch_up: &[Vec<u8>], symbols: &[String]) {
    let catch: Vec<u8> = catch_up.concat();
    let mut from = 0;
    for s in symbols {
        let mut needle = vec![u8::try_from(s.len()).unwrap()];
        needle.extend_from_slice(s.as_bytes());
        let at = catch[from..]
            .windows(needle.len())
            .position(|w| w == needle.as_slice())
            .unwrap_or_else(|| panic!("{s} is not in the catch-up frames after byte {from}"));
        from += at + needle.len();
    }
}

#[test]
fn sf_19_a_slot_our_code_wrote_is_replayed_by_the_questdb_client_in_fsn_order() {
    let r = reverse();
    assert!(r.ours.len() >= KILL_AFTER);
    let k = catch_up(r);
    assert_eq!(
        &r.received[k..],
        r.ours.as_slice(),
        "our frames, in FSN order, after {k} catch-up frames"
    );
}

#[test]
fn sf_9_the_questdb_client_sends_its_catch_up_frames_before_replaying_our_slot() {
    let r = reverse();
    let k = catch_up(r);
    assert!(
        k >= 1,
        "the frames use dictionary ids, so a catch-up frame comes first"
    );
    for m in &r.received[..k] {
        assert_eq!(m.get(..4), Some(&b"QWP1"[..]));
        assert!(
            !r.ours.contains(m),
            "a catch-up frame is none of the journal's frames"
        );
    }
}

#[test]
fn sf_39_the_questdb_client_rebuilds_its_symbols_from_the_dictionary_our_code_wrote() {
    let r = reverse();
    let k = catch_up(r);
    assert!(!r.dict.is_empty());
    // Every entry of our dictionary reaches the wire, length-prefixed, in id order, in the
    // catch-up frames (the journal's frames carry ids only).
    symbols_in_order(&r.received[..k], &r.dict);
}

#[test]
fn sf_d8_after_replaying_our_slot_the_questdb_client_leaves_only_the_lock_files() {
    let r = reverse();
    assert_eq!(r.left, [slot::LOCK, slot::LOCK_PID]);
}

#[test]
fn sf_41_our_drainer_adopts_the_orphan_a_killed_questdb_client_left() {
    let run = killed();
    let sf_dir = scratch("questdb-orphan-ours");
    let dead = sf_dir.join("dead");
    std::fs::create_dir_all(&dead).unwrap();
    for (f, _) in &run.listing {
        std::fs::copy(run.slot.join(f), dead.join(f)).unwrap();
    }
    let (_j, frames) = replay(&copy_of_slot(run, "questdb-orphan-ours-expected"));
    let server = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = drain_orphans(
        &sf_dir,
        "me",
        true,
        2,
        JournalConfig::disk(),
        &DrainConfig::new(server.addr()),
        Instant::now() + RUN_LIMIT,
    )
    .unwrap();
    let conns = server.connections();
    drop(server);
    assert_eq!(out.len(), 1, "{out:?}");
    match &out[0] {
        OrphanOutcome::Drained {
            slot, frames: f, ..
        } => {
            assert_eq!(slot, "dead");
            assert_eq!(*f, 0..frames.len() as i64);
        }
        other => panic!("not drained: {other:?}"),
    }
    let got: Vec<Vec<u8>> = conns.iter().flat_map(|c| c.messages()).collect();
    let want: Vec<Vec<u8>> = frames.into_iter().map(|(_, p)| p).collect();
    assert_eq!(got, want, "every frame, once, in FSN order");
    assert_eq!(slot_names(&dead), [slot::LOCK, slot::LOCK_PID]);
}

#[test]
fn sf_41_the_questdb_client_adopts_an_orphan_our_code_wrote_over_its_own_connection() {
    let run = killed();
    let sf_dir = scratch("questdb-orphan-theirs");
    let ours = write_our_slot(run, &sf_dir, "dead");
    let server = LoopbackServer::start(ServerConfig::default()).unwrap();
    let lines = run_to_end(&server, &sf_dir, "live", 0, "drain_orphans=on;");
    assert_eq!(lines, ["done"]);
    let conns = server.connections();
    drop(server);
    // The live sender sends nothing of its own; the orphan's frames come on another
    // connection, after its catch-up frames, in FSN order.
    let carrying: Vec<Vec<Vec<u8>>> = conns
        .iter()
        .map(|c| c.messages())
        .filter(|m| !m.is_empty())
        .collect();
    assert!(conns.len() >= 2, "{} connections", conns.len());
    assert_eq!(carrying.len(), 1, "one connection carries the orphan");
    let got = &carrying[0];
    assert!(got.len() > ours.len());
    assert_eq!(&got[got.len() - ours.len()..], ours.as_slice());
    assert_eq!(
        slot_names(&sf_dir.join("dead")),
        [slot::LOCK, slot::LOCK_PID]
    );
    assert_eq!(
        slot_names(&sf_dir.join("live")),
        [slot::LOCK, slot::LOCK_PID]
    );
}

/// The killed client's slot, restarted by the questdb client against an acknowledging server
/// with no new row: what it sent, and what our recovery had found in the same bytes.
struct Restart {
    /// Our recovery's frames, in FSN order.
    recovered: Vec<Vec<u8>>,
    /// Our recovery's dictionary, in id order.
    dict: Vec<String>,
    /// The binary messages the server received, every connection in order.
    received: Vec<Vec<u8>>,
}

fn restart() -> &'static Restart {
    static RUN: OnceLock<Restart> = OnceLock::new();
    RUN.get_or_init(|| {
        let run = killed();
        let (j, frames) = replay(&copy_of_slot(run, "questdb-restart-ours"));
        let dict = j.dict().symbols().to_vec();
        drop(j);
        let slot = copy_of_slot(run, "questdb-restart");
        let sf_dir = slot.parent().unwrap().to_path_buf();
        let server = LoopbackServer::start(ServerConfig::default()).unwrap();
        let lines = run_to_end(&server, &sf_dir, "killed", 0, "");
        assert_eq!(lines, ["done"]);
        let conns = server.connections();
        drop(server);
        assert_eq!(slot_names(&slot), [slot::LOCK, slot::LOCK_PID]);
        Restart {
            recovered: frames.into_iter().map(|(_, p)| p).collect(),
            dict,
            received: conns.iter().flat_map(|c| c.messages()).collect(),
        }
    })
}

#[test]
fn sf_6_a_restarted_questdb_client_replays_exactly_the_frames_our_recovery_found() {
    let r = restart();
    assert!(r.recovered.len() >= KILL_AFTER);
    assert!(r.received.len() >= r.recovered.len());
    let k = r.received.len() - r.recovered.len();
    assert_eq!(
        &r.received[k..],
        r.recovered.as_slice(),
        "after {k} catch-up frames, the frames our recovery found, in its order"
    );
    for m in &r.received[..k] {
        assert!(
            !r.recovered.contains(m),
            "a catch-up frame is not a journal frame"
        );
    }
}

#[test]
fn sf_39_the_dictionary_our_recovery_read_is_the_one_the_restarted_questdb_client_sends() {
    let r = restart();
    let k = r.received.len() - r.recovered.len();
    assert!(k >= 1 && !r.dict.is_empty());
    symbols_in_order(&r.received[..k], &r.dict);
}
