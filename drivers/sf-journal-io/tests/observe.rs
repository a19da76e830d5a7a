//! Observability (issue 22): the journal's counters, and the tracing events a person debugging
//! a journal needs: the recovery result, a torn tail cut, the back-pressure verdicts, a lost
//! connection and its back-off, a terminal error, an orphan adopted, a close that left frames.

mod common;
use common::*;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sf_journal::ring::{Durability, OkQueueLimits};
use sf_journal::slot;
use sf_journal::status::ErrorStatus;
use sf_journal_io::drain::{Drain, DrainConfig, DrainError};
use sf_journal_io::journal::CloseStep;
use sf_journal_io::loopback::{Conn, LoopbackServer, ServerConfig};
use sf_journal_io::orphans::drain_orphans;
use sf_journal_io::{Journal, JournalConfig, JournalError};

/// A credential the drains send and no event may carry.
const SECRET: &str = "sekrit-token-4b1d";

/// Everything every test of this binary logged, at `trace`.
fn captured() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&log);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Sink(Arc::clone(&sink)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        log
    })
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_text() -> String {
    String::from_utf8_lossy(&captured().lock().unwrap()).into_owned()
}

/// A slot holding three frames and a torn tail after them, left without close.
fn torn_slot(name: &str) -> std::path::PathBuf {
    let sf = scratch(name);
    {
        let mut j = Journal::open(&sf, "s", small()).unwrap();
        for i in 0..3 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
    }
    // Three frames of 28 bytes after the 24-byte header end at 108; a stray byte just after
    // them is a torn tail.
    let seg = sf.join("s").join(slot::SEGMENT_INITIAL);
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[110] = 0x5a;
    std::fs::write(&seg, bytes).unwrap();
    sf
}

/// The `name: value` pairs of a stats value's debug form.
fn fields(debug: &str) -> Vec<(String, String)> {
    let inner = debug
        .split_once('{')
        .and_then(|(_, r)| r.rsplit_once('}'))
        .unwrap()
        .0;
    inner
        .split(',')
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let (n, v) = f.split_once(':').unwrap();
            (n.trim().to_owned(), v.trim().to_owned())
        })
        .collect()
}

#[test]
fn every_journal_counter_reads_nonzero_after_a_session_that_exercises_it() {
    let sf = torn_slot("stats");
    let mut jc = small();
    jc.ring.max_total_bytes = 256;
    jc.ring.append_deadline_millis = 10;
    jc.durability = Durability::Periodic { interval_millis: 1 };
    // Room for one OK of one table named "t" (16 + 1 + 8 bytes): the byte bound refuses the
    // second (the count bound also holds frames back, so it would not let six go out).
    jc.durable_ack = Some(OkQueueLimits {
        max_entries: 16,
        max_bytes: 25,
    });
    let mut j = Journal::open(&sf, "s", jc).unwrap();
    let s = j.stats();
    assert_eq!((s.recovered_frames, s.torn_tails_cut), (3, 1));

    for i in 3..6 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    assert!(matches!(
        j.append(&payload(6), 0),
        Err(JournalError::Append(_))
    ));
    assert!(matches!(
        j.append(&payload(6), 10),
        Err(JournalError::Append(_))
    ));
    let s = j.stats();
    assert_eq!((s.frames_appended, s.bytes_appended), (3, 60));
    assert_eq!((s.appends_full, s.appends_timed_out), (1, 1));

    let _ = j.connect(0);
    assert_eq!(drain(&mut j).len(), 6);
    let t = |n: i64| vec![("t".to_owned(), n)];
    j.ok(0, t(1)).unwrap();
    // Another table fits neither beside the first OK nor merged into it.
    assert!(
        j.ok(1, vec![("u".to_owned(), 2)]).is_err(),
        "the OK queue holds one"
    );
    assert!(j.ok(99, t(2)).is_err(), "an OK beyond what was published");
    j.durable_ack(&t(1)).unwrap();
    assert_eq!(j.acked_fsn(), 0);
    j.ok(2, t(3)).unwrap();
    let _ = j.reject(3, ErrorStatus::WriteError).unwrap();
    j.disconnect();
    let _ = j.connect(0);
    assert!(j.next_frame().unwrap().is_some());
    let _ = j.reject(0, ErrorStatus::SchemaMismatch).unwrap();
    // A third connection replays FSN 1 again, and its OK waits for durability.
    let _ = j.connect(0);
    assert!(j.next_frame().unwrap().is_some());
    j.ok(0, t(5)).unwrap();
    let _ = j.checkpoint(1).unwrap();
    let _ = j.checkpoint(100).unwrap();

    let s = j.stats();
    assert_eq!((s.frames_sent, s.bytes_sent), (8, 160));
    assert_eq!((s.connections, s.disconnects), (3, 1));
    assert_eq!(
        (s.oks, s.durable_acks, s.violations, s.oks_dropped),
        (5, 1, 1, 1)
    );
    assert_eq!((s.errors_retriable, s.errors_terminal), (1, 1));
    // The three frames recovery found go out again on the first connection (a restart), and
    // FSN 1 twice more on the next two.
    assert_eq!(s.replayed_frames, 5);
    assert_eq!(s.pending_oks, 1);
    assert_eq!(s.resident_bytes, 256);
    assert!(s.syncs >= 3, "{s:?}");
    // Every counter, read by name from the debug form: none is zero, so no counter is left
    // unwired (a field added later is read here too).
    let all = fields(&format!("{s:?}"));
    assert_eq!(all.len(), 20, "{all:?}");
    for (name, value) in all {
        assert_ne!(value, "0", "{name} reads 0: {s:?}");
    }
}

#[test]
fn the_journal_logs_recovery_torn_tails_back_pressure_reconnects_terminal_errors_orphans_and_close()
{
    let _ = captured();
    // Recovery of a slot with a torn tail.
    let sf = torn_slot("events");
    let mut jc = small();
    jc.ring.max_total_bytes = 256;
    jc.ring.append_deadline_millis = 10;
    let mut j = Journal::open(&sf, "s", jc).unwrap();
    // Back-pressure: full, then past the deadline.
    for i in 3..6 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    let _ = j.append(&payload(6), 0).unwrap_err();
    let _ = j.append(&payload(6), 10).unwrap_err();
    // A lost connection and its back-off, then a terminal error.
    let s = LoopbackServer::start(ServerConfig {
        script: vec![
            Conn::DropAfter(2),
            Conn::ErrorAt {
                wire_seq: 0,
                status: ErrorStatus::ParseError,
            },
        ],
        ..ServerConfig::default()
    })
    .unwrap();
    let j = Mutex::new(j);
    let mut dc = DrainConfig::new(s.addr());
    dc.request.authorization = Some(format!("Bearer {SECRET}"));
    let r = Drain::new(dc).run(&j, Instant::now() + Duration::from_secs(20), |_| true);
    assert!(matches!(r, Err(DrainError::Terminal(_))), "{r:?}");
    // A close that leaves frames unacknowledged.
    let mut j = j.into_inner().unwrap();
    assert!(matches!(j.close(0, 0, 0), Ok(CloseStep::Done(_))));
    // An orphan adopted and drained.
    let sf = scratch("events-orphan");
    {
        let mut dead = Journal::open(&sf, "dead", small()).unwrap();
        let _ = dead.append(&payload(0), 0).unwrap();
    }
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = drain_orphans(
        &sf,
        "me",
        true,
        1,
        JournalConfig::disk(),
        &DrainConfig::new(s.addr()),
        Instant::now() + Duration::from_secs(20),
    )
    .unwrap();
    assert_eq!(out.len(), 1);

    let log = log_text();
    assert!(!log.contains(SECRET), "a credential was logged:\n{log}");
    for (level, what) in [
        ("WARN", "sf recovery cuts a torn tail"),
        ("INFO", "sf recovery done"),
        ("INFO", "sf slot recovered"),
        ("DEBUG", "sf ring full: append waits"),
        ("WARN", "sf append refused: the ring stayed full"),
        ("INFO", "sf connection up"),
        ("INFO", "sf connection lost"),
        ("DEBUG", "sf connection lost, backing off"),
        ("WARN", "sf terminal error status"),
        ("WARN", "sf close ended with frames unacknowledged"),
        ("INFO", "sf orphan adopted"),
        ("INFO", "sf orphan drained"),
    ] {
        assert!(
            log.lines().any(|l| l.contains(level) && l.contains(what)),
            "no {level} event {what:?} in:\n{log}"
        );
    }
    // Stable field names a reader filters on.
    for field in [
        "acked_fsn=",
        "attempts=",
        "backoff_millis=",
        "case=",
        "slot=",
    ] {
        assert!(log.contains(field), "no {field} in:\n{log}");
    }
}

#[test]
fn sf_27_a_close_timed_out_at_its_deadline_logs_a_warn_in_both_modes() {
    let _ = captured();
    // Not skipped: the wait ran to its deadline with frames unacknowledged, in SF mode (left on
    // disk) and in memory mode (lost). Each says so at WARN, with how many and which mode.
    let sf = scratch("close-timed-out-warn");
    for mut j in [
        Journal::open(&sf, "s", small()).unwrap(),
        Journal::memory(small()),
    ] {
        for i in 0..7 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        assert!(matches!(j.close(40, 0, 50), Ok(CloseStep::Wait { .. })));
        match j.close(50, 0, 50) {
            Ok(CloseStep::Done(c)) => assert_eq!((c.unacknowledged, c.skipped), (0..7, false)),
            other => panic!("expected the close to end at its deadline, got {other:?}"),
        }
    }
    let log = log_text();
    for memory in [false, true] {
        assert!(
            log.lines().any(|l| l.contains("WARN")
                && l.contains("sf close ended with frames unacknowledged")
                && l.contains("unacknowledged=7")
                && l.contains("skipped=false")
                && l.contains(&format!("memory={memory}"))),
            "no WARN of the timed-out close (memory={memory}) in:\n{log}"
        );
    }
}
