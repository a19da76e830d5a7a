//! Helpers shared by the test files (included with `mod common;`).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use sf_journal::ring::{Durability, RingConfig};
use sf_journal_io::{Journal, JournalConfig};

/// A fresh, empty directory under the target directory's scratch space.
pub fn scratch(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sf-journal-io")
        .join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Segments of 128 bytes: 24 of header, so three frames of 20-byte payloads (28 bytes each).
pub fn small() -> JournalConfig {
    JournalConfig {
        ring: RingConfig {
            segment_bytes: 128,
            max_total_bytes: 1 << 20,
            append_deadline_millis: 1_000,
        },
        durability: Durability::None,
        durable_ack: None,
    }
}

/// The payload of frame `i`: 20 bytes, distinct.
pub fn payload(i: usize) -> Vec<u8> {
    format!("QWP1 frame {i:09}").into_bytes()
}

/// Every frame the journal hands out on its open connection, in order.
pub fn drain(j: &mut Journal) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(f) = j.next_frame().unwrap() {
        out.push(f);
    }
    out
}

/// The frames `from..to` as the tests write them.
pub fn frames(from: usize, to: usize) -> Vec<(i64, Vec<u8>)> {
    (from..to).map(|i| (i as i64, payload(i))).collect()
}

/// The environment variable that turns a run of this test binary into a helper process.
pub const CHILD_ENV: &str = "SF_JOURNAL_IO_CHILD_SLOT";
/// How many frames the helper process appends.
pub const CHILD_FRAMES_ENV: &str = "SF_JOURNAL_IO_CHILD_FRAMES";

/// The body of the helper process: opens the slot, appends the frames, says `ready`, then holds
/// the slot until its standard input closes or 30 seconds pass. Does nothing in a normal run.
pub fn child_main() {
    let Ok(slot) = std::env::var(CHILD_ENV) else {
        return;
    };
    let n: usize = std::env::var(CHILD_FRAMES_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut j = Journal::open_slot(Path::new(&slot), small()).unwrap();
    for i in 0..n {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    println!("ready {}", std::process::id());
    std::thread::spawn(|| {
        let mut line = String::new();
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {}
        std::process::exit(0);
    });
    std::thread::sleep(Duration::from_secs(30));
    std::process::exit(0);
}

/// A helper process holding `slot` after appending `frames` frames; returns once it said
/// `ready` (or panics after 20 seconds). `entry` is the name of the test that calls
/// [`child_main`].
pub fn spawn_holder(entry: &str, slot: &Path, frames: usize) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", entry, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, slot)
        .env(CHILD_FRAMES_ENV, frames.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            // The test harness prints the test's name on the same line first.
            if let Some(at) = line.find("ready ") {
                let _ = tx.send(line[at..].to_owned());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(line) => assert_eq!(line, format!("ready {}", child.id())),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the helper process did not get ready: {e}");
        }
    }
    child
}

/// A catch-up frame as a test builds it: `QWP1 dict` and each symbol, length-prefixed.
pub fn catch_up_frame(symbols: &[String]) -> Vec<Vec<u8>> {
    let mut f = b"QWP1 dict".to_vec();
    for s in symbols {
        f.push(s.len() as u8);
        f.extend_from_slice(s.as_bytes());
    }
    vec![f]
}

/// A slot holding frames 0..n that use symbols, left without close, opened again (so its
/// dictionary is the recovered one).
pub fn slot_with_symbols(name: &str, n: usize) -> std::sync::Mutex<Journal> {
    let sf = scratch(name);
    {
        let mut j = Journal::open(&sf, "s", small()).unwrap();
        for i in 0..n {
            let sym = format!("sym{}", i % 3);
            let _ = j.append_with_symbols(&[sym], |_| payload(i), 0).unwrap();
        }
    }
    let j = Journal::open(&sf, "s", small()).unwrap();
    let want: Vec<String> = (0..n.min(3)).map(|i| format!("sym{i}")).collect();
    assert_eq!(j.dict().symbols(), want.as_slice());
    std::sync::Mutex::new(j)
}

/// A drain configuration's catch-up encoder: [`catch_up_frame`].
pub fn with_catch_up(c: &mut sf_journal_io::drain::DrainConfig) {
    c.catch_up = Some(sf_journal_io::drain::CatchUp::new(catch_up_frame));
}

/// The catch-up frame of the dictionary `sym0`, `sym1`, `sym2`.
pub fn dict_frame() -> Vec<u8> {
    catch_up_frame(&["sym0".into(), "sym1".into(), "sym2".into()]).remove(0)
}

/// The payloads of frames `from..to`.
pub fn bytes(from: usize, to: usize) -> Vec<Vec<u8>> {
    frames(from, to).into_iter().map(|f| f.1).collect()
}
