//! Draining orphan slots (SF-40 to SF-42): sibling slots under `<sf_dir>` that a dead sender
//! left holding frames. Each is drained by its own journal over its own connection, a few at
//! once, after taking the orphan's lock (a slot another process holds is skipped).

use std::ops::Range;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use sf_journal::orphan::{orphan_candidates, SlotListing};

use crate::drain::{Drain, DrainConfig, DrainReport};
use crate::journal::{is_unreplayable, CloseStep, Journal, JournalConfig, JournalError};
use crate::lock::{LockError, SlotLock};

/// What became of one orphan.
#[derive(Debug)]
#[non_exhaustive]
pub enum OrphanOutcome {
    /// Everything it held was acknowledged; only its lock files are left.
    Drained {
        /// The slot's name.
        slot: String,
        /// The FSNs recovery found unacknowledged, now acknowledged.
        frames: Range<i64>,
        /// What the drain did.
        report: DrainReport,
    },
    /// Another process holds its lock.
    Skipped {
        /// The slot's name.
        slot: String,
        /// The holder's process id, if `.lock.pid` names it.
        pid: Option<u32>,
    },
    /// Recovery or the drain failed; the slot's files are left as they are (an unreplayable
    /// slot is marked `.failed`, SF-38).
    Failed {
        /// The slot's name.
        slot: String,
        /// What went wrong.
        error: String,
    },
}

/// The slot directories under `sf_dir` with the names of their files.
pub fn list_slots(sf_dir: &Path) -> std::io::Result<Vec<SlotListing>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(sf_dir)? {
        let e = e?;
        if !e.file_type()?.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        for f in std::fs::read_dir(e.path())? {
            files.push(f?.file_name().to_string_lossy().into_owned());
        }
        out.push(SlotListing {
            name: e.file_name().to_string_lossy().into_owned(),
            files,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn drain_one(
    sf_dir: &Path,
    slot: &str,
    config: JournalConfig,
    drain: &DrainConfig,
    deadline: Instant,
) -> OrphanOutcome {
    let failed = |error: String| OrphanOutcome::Failed {
        slot: slot.to_owned(),
        error,
    };
    let journal = match Journal::open_slot(&sf_dir.join(slot), config) {
        Ok(j) => j,
        Err(JournalError::Lock(LockError::Held { pid, .. })) => {
            tracing::debug!(slot, ?pid, "sf orphan skipped: its lock is held");
            return OrphanOutcome::Skipped {
                slot: slot.to_owned(),
                pid,
            };
        }
        Err(e) if is_unreplayable(&e) => {
            // Marked under its lock so later scans skip it; its files stay for inspection.
            let dir = sf_dir.join(slot);
            let marked = SlotLock::acquire(&dir)
                .map_err(|l| l.to_string())
                .and_then(|_lock| {
                    std::fs::write(dir.join(sf_journal::slot::FAILED), b"")
                        .map_err(|w| w.to_string())
                });
            tracing::warn!(slot, error = %e, "sf orphan unreplayable, marked failed");
            return failed(match marked {
                Ok(()) => format!("unreplayable, marked failed: {e}"),
                Err(m) => format!("unreplayable ({e}), not marked: {m}"),
            });
        }
        Err(e) => return failed(e.to_string()),
    };
    let frames = journal.recovered();
    tracing::info!(
        slot,
        first_fsn = frames.start,
        frames = frames.end - frames.start,
        "sf orphan adopted"
    );
    let journal = Mutex::new(journal);
    let report = match Drain::new(drain.clone()).run(&journal, deadline, |_| true) {
        Ok(r) => r,
        Err(e) => return failed(e.to_string()),
    };
    let mut j = journal
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = now_millis();
    match j.close(now, now, 0) {
        Ok(CloseStep::Done(c)) if c.unacknowledged.is_empty() => {
            tracing::info!(slot, "sf orphan drained");
            OrphanOutcome::Drained {
                slot: slot.to_owned(),
                frames,
                report,
            }
        }
        Ok(other) => failed(format!("not drained at close: {other:?}")),
        Err(e) => failed(e.to_string()),
    }
}

/// Drains the orphans of `sf_dir` (every sibling slot of `own_slot` holding segments and not
/// marked `.failed`) when `drain_orphans` is on; nothing otherwise (opt-in, SF-42). At most
/// `max_drainers` run at once (at least one), each with its own journal and connection; each
/// ends when its orphan is drained, leaving only the lock files, or at `deadline`.
pub fn drain_orphans(
    sf_dir: &Path,
    own_slot: &str,
    drain_orphans: bool,
    max_drainers: usize,
    config: JournalConfig,
    drain: &DrainConfig,
    deadline: Instant,
) -> std::io::Result<Vec<OrphanOutcome>> {
    let slots = list_slots(sf_dir)?;
    let todo = orphan_candidates(own_slot, &slots, drain_orphans);
    let mut out = Vec::new();
    for batch in todo.chunks(max_drainers.max(1)) {
        std::thread::scope(|s| {
            let handles: Vec<_> = batch
                .iter()
                .map(|slot| s.spawn(move || drain_one(sf_dir, slot, config, drain, deadline)))
                .collect();
            for (h, slot) in handles.into_iter().zip(batch) {
                out.push(h.join().unwrap_or_else(|_| OrphanOutcome::Failed {
                    slot: slot.clone(),
                    error: "the drainer panicked".into(),
                }));
            }
        });
    }
    Ok(out)
}
