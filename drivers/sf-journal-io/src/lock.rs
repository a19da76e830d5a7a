//! The slot lock (SF-29, SF-D7): an exclusive, non-blocking advisory lock on `<slot>/.lock`
//! (`flock` on Unix, `LockFileEx` on Windows, through the standard library), held as long as
//! the [`SlotLock`] lives, with the holder's process id written to `<slot>/.lock.pid`.
//!
//! The operating system drops the lock when its holder's process ends, however it ends, so
//! the slot of a dead sender is taken over by the next one; its stale `.lock.pid` is then
//! overwritten.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sf_journal::slot;

/// Why the slot lock was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another sender holds the slot.
    #[error("slot {slot} is held by another sender (process {})", pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string()))]
    Held {
        /// The slot directory.
        slot: PathBuf,
        /// The holder's process id as `.lock.pid` names it (`None` if unreadable).
        pid: Option<u32>,
    },
    /// The lock file could not be opened, locked or written.
    #[error("slot lock {path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// The held lock of one slot directory; dropping it releases the lock (the files stay).
#[derive(Debug)]
pub struct SlotLock {
    slot: PathBuf,
    file: File,
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LockError + '_ {
    move |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The process id a slot's `.lock.pid` names, if it is readable.
#[must_use]
pub fn holder_pid(slot_dir: &Path) -> Option<u32> {
    fs::read_to_string(slot_dir.join(slot::LOCK_PID))
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl SlotLock {
    /// Takes the lock of the slot directory `slot_dir` (which must exist) without waiting, and
    /// writes this process's id to `.lock.pid`. A slot held by a live process is refused with
    /// [`LockError::Held`] naming that process.
    pub fn acquire(slot_dir: &Path) -> Result<Self, LockError> {
        let path = slot_dir.join(slot::LOCK);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(LockError::Held {
                    slot: slot_dir.to_path_buf(),
                    pid: holder_pid(slot_dir),
                })
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_err(&path)(e)),
        }
        let pid_path = slot_dir.join(slot::LOCK_PID);
        let mut pid = File::create(&pid_path).map_err(io_err(&pid_path))?;
        pid.write_all(std::process::id().to_string().as_bytes())
            .map_err(io_err(&pid_path))?;
        Ok(Self {
            slot: slot_dir.to_path_buf(),
            file,
        })
    }

    /// The slot directory this lock holds.
    #[must_use]
    pub fn slot(&self) -> &Path {
        &self.slot
    }
}

impl Drop for SlotLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the release explicit.
        let _ = self.file.unlock();
    }
}
