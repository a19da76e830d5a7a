//! File operations the engine asks its driver to perform, and an in-memory directory that
//! performs them (memory mode and tests).

use std::collections::BTreeMap;

/// One operation on a file of the slot directory. The engine never touches a file itself: it
/// returns these, in the order they must be carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileOp {
    /// Create the file if missing and set its length (pre-sizing pads with zeros).
    SetLen {
        /// File name inside the slot directory.
        file: String,
        /// The new length in bytes.
        len: u64,
    },
    /// A positioned write of `bytes` at `offset`.
    Write {
        /// File name inside the slot directory.
        file: String,
        /// Byte offset of the first byte written.
        offset: u64,
        /// The bytes to write.
        bytes: Vec<u8>,
    },
    /// A positioned write of `parts`, one after another from `offset`: the same as one
    /// [`FileOp::Write`] of their concatenation (a record written from bytes it shares with
    /// its owner instead of a copy of them).
    WriteParts {
        /// File name inside the slot directory.
        file: String,
        /// Byte offset of the first byte written.
        offset: u64,
        /// The bytes to write, in order.
        parts: Vec<bytes::Bytes>,
    },
    /// Overwrite `len` bytes at `offset` with zeros (a torn tail being cut).
    Zero {
        /// File name inside the slot directory.
        file: String,
        /// Byte offset of the first zero.
        offset: u64,
        /// How many bytes to zero.
        len: u64,
    },
    /// Flush the file's data to stable storage.
    Sync {
        /// File name inside the slot directory.
        file: String,
    },
    /// Flush the slot directory itself (after creations, renames and unlinks).
    SyncDir,
    /// Rename a file of the slot directory.
    Rename {
        /// The current name.
        from: String,
        /// The new name (replaced if it exists).
        to: String,
    },
    /// Remove a file of the slot directory.
    Unlink {
        /// File name inside the slot directory.
        file: String,
    },
}

impl FileOp {
    /// The bytes a write puts at its offset, its parts joined (`None` for other operations).
    #[must_use]
    pub fn written(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            FileOp::Write { bytes, .. } => Some(std::borrow::Cow::Borrowed(bytes)),
            FileOp::WriteParts { parts, .. } => Some(std::borrow::Cow::Owned(
                parts.iter().flat_map(|p| p.iter().copied()).collect(),
            )),
            _ => None,
        }
    }

    /// The file the operation changes, if it names one (`SyncDir` does not).
    #[must_use]
    pub fn file(&self) -> Option<&str> {
        match self {
            FileOp::SetLen { file, .. }
            | FileOp::Write { file, .. }
            | FileOp::WriteParts { file, .. }
            | FileOp::Zero { file, .. }
            | FileOp::Sync { file }
            | FileOp::Unlink { file } => Some(file),
            FileOp::Rename { from, .. } => Some(from),
            FileOp::SyncDir => None,
        }
    }
}

/// A slot directory held in memory: applies [`FileOp`]s to a map of file names to bytes. It is
/// the storage of memory mode and lets tests stop a sequence of operations anywhere (a crash).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemDir {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemDir {
    /// An empty directory.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Carries out one operation. A write past the end extends the file with zeros; a rename
    /// or unlink of a missing file does nothing.
    pub fn apply(&mut self, op: &FileOp) {
        match op {
            FileOp::SetLen { file, len } => {
                let len = usize::try_from(*len).unwrap_or(usize::MAX);
                let f = self.files.entry(file.clone()).or_default();
                if f.is_empty() {
                    // Zeroed memory from the allocator: a fresh segment is not written twice
                    // (zeros, then frames).
                    *f = vec![0; len];
                } else {
                    f.resize(len, 0);
                }
            }
            FileOp::Write {
                file,
                offset,
                bytes,
            } => self.write(file, *offset, bytes),
            FileOp::WriteParts {
                file,
                offset,
                parts,
            } => {
                let mut at = *offset;
                for p in parts {
                    self.write(file, at, p);
                    at += p.len() as u64;
                }
            }
            FileOp::Zero { file, offset, len } => {
                let f = self.files.entry(file.clone()).or_default();
                let start = usize::try_from(*offset).unwrap_or(usize::MAX);
                let end = start.saturating_add(usize::try_from(*len).unwrap_or(usize::MAX));
                if f.len() < end {
                    f.resize(end, 0);
                }
                f[start..end].fill(0);
            }
            FileOp::Sync { .. } | FileOp::SyncDir => {}
            FileOp::Rename { from, to } => {
                if let Some(bytes) = self.files.remove(from) {
                    self.files.insert(to.clone(), bytes);
                }
            }
            FileOp::Unlink { file } => {
                self.files.remove(file);
            }
        }
    }

    /// A positioned write of `bytes` at `offset`, as [`FileOp::Write`] (a missing file is
    /// created, a write past the end extends it with zeros) from borrowed bytes.
    pub fn write(&mut self, file: &str, offset: u64, bytes: &[u8]) {
        if !self.files.contains_key(file) {
            self.files.insert(file.to_owned(), Vec::new());
        }
        let Some(f) = self.files.get_mut(file) else {
            return;
        };
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(bytes.len());
        if f.len() < end {
            f.resize(end, 0);
        }
        f[start..end].copy_from_slice(bytes);
    }

    /// Carries out every operation in order.
    pub fn apply_all<'a>(&mut self, ops: impl IntoIterator<Item = &'a FileOp>) {
        for op in ops {
            self.apply(op);
        }
    }

    /// The bytes of a file, if it exists.
    #[must_use]
    pub fn get(&self, file: &str) -> Option<&[u8]> {
        self.files.get(file).map(Vec::as_slice)
    }

    /// Mutable bytes of a file (tests flip bytes with it).
    pub fn get_mut(&mut self, file: &str) -> Option<&mut Vec<u8>> {
        self.files.get_mut(file)
    }

    /// Puts a file with the given bytes, replacing any.
    pub fn put(&mut self, file: &str, bytes: Vec<u8>) {
        self.files.insert(file.to_owned(), bytes);
    }

    /// The names of the files, in byte order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }
}
