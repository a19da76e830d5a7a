//! A slot directory on disk that carries out the engine's operations.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use sf_journal::recovery::{Recoverer, Recovery, RecoveryError, SlotFiles};
use sf_journal::ring::FramePlace;
use sf_journal::slot::{self, parse_segment_name};
use sf_journal::FileOp;

/// The zeros a [`FileOp::Zero`] writes, 64 KiB at a time: one buffer for every call.
static ZEROS: [u8; 64 << 10] = [0; 64 << 10];

/// A failed file operation, with the file it concerned.
#[derive(Debug, thiserror::Error)]
#[error("{what} {file}: {source}")]
pub struct IoError {
    /// What was being done (`write`, `sync`, `rename`, ...).
    pub what: &'static str,
    /// The file (or directory) concerned.
    pub file: PathBuf,
    /// The operating system's error.
    #[source]
    pub source: io::Error,
}

fn err<'a>(what: &'static str, file: &'a Path) -> impl FnOnce(io::Error) -> IoError + 'a {
    move |source| IoError {
        what,
        file: file.to_path_buf(),
        source,
    }
}

#[cfg(unix)]
fn write_at(f: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, bytes, offset)
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

#[cfg(windows)]
fn write_at(f: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(f, bytes, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(f, buf, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

/// Counts of what a [`FileDir`] did, for tests and statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirStats {
    /// Positioned writes carried out (zeroing included).
    pub writes: u64,
    /// Of those, the ones copied into a mapped segment ([`FileDir`]'s fast path).
    pub mapped_writes: u64,
    /// Segment mappings made (a recycled segment renamed keeps its own).
    pub maps_made: u64,
    /// File syncs carried out.
    pub file_syncs: u64,
    /// Directory syncs carried out.
    pub dir_syncs: u64,
    /// Bytes of segment files read by [`FileDir::recover_slot`].
    pub recovery_segment_bytes: u64,
    /// The most segment bytes [`FileDir::recover_slot`] held at once (the capacity of the one
    /// buffer it reads every segment into): the largest segment file.
    pub recovery_peak_bytes: u64,
}

/// The slot directory `<sf_dir>/<sender_id>/` on disk. Files are opened on first use and kept
/// open until renamed or unlinked. Operations have the meaning the engine gives them, the
/// same as [`MemDir`](sf_journal::MemDir)'s: a write past the end extends the file with zeros,
/// a rename or unlink of a missing file does nothing.
///
/// On Linux, a segment file sized by [`FileOp::SetLen`] has its blocks allocated and is mapped
/// into memory: writes inside it are copies into the page cache (the same pages a positioned
/// write fills, so a crash of the process loses nothing more), syncs write the mapping back
/// first, and the mapping follows the file through renames (a recycled segment keeps it). A
/// segment whose allocation or mapping fails, and every other file, is written through the
/// file. The pages of a mapped segment the journal wrote count in the process's resident size
/// (as file pages, which the system may reclaim once written back), where pages written
/// through the file count only in the page cache.
#[derive(Debug)]
pub struct FileDir {
    path: PathBuf,
    open: BTreeMap<String, File>,
    #[cfg(target_os = "linux")]
    maps: BTreeMap<String, crate::map::Mapped>,
    stats: DirStats,
    /// A frame's length field and payload, put together for its one body write.
    body: Vec<u8>,
}

impl FileDir {
    /// Opens the directory at `path`, creating it (and its parents) if missing.
    pub fn create(path: impl Into<PathBuf>) -> Result<Self, IoError> {
        let path = path.into();
        fs::create_dir_all(&path).map_err(err("create directory", &path))?;
        Ok(Self {
            path,
            open: BTreeMap::new(),
            #[cfg(target_os = "linux")]
            maps: BTreeMap::new(),
            stats: DirStats::default(),
            body: Vec::new(),
        })
    }

    /// The directory's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What this directory has done so far.
    #[must_use]
    pub fn stats(&self) -> DirStats {
        self.stats
    }

    fn file(&mut self, name: &str) -> Result<&File, IoError> {
        if !self.open.contains_key(name) {
            let p = self.path.join(name);
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&p)
                .map_err(err("open", &p))?;
            self.open.insert(name.to_owned(), f);
        }
        Ok(&self.open[name])
    }

    /// The error of `what` failing on `file`: the path is only built when something failed.
    fn error(&self, what: &'static str, file: &str, source: io::Error) -> IoError {
        IoError {
            what,
            file: self.path.join(file),
            source,
        }
    }

    /// Carries out one operation.
    pub fn apply(&mut self, op: &FileOp) -> Result<(), IoError> {
        match op {
            FileOp::SetLen { file, len } => {
                #[cfg(target_os = "linux")]
                if self.maps.get(file).is_some_and(|m| m.len() == *len) {
                    // Mapped at this length already: a recycled segment renamed.
                    return Ok(());
                }
                #[cfg(target_os = "linux")]
                self.maps.remove(file);
                let r = self.file(file)?.set_len(*len);
                r.map_err(|e| self.error("set length", file, e))?;
                #[cfg(target_os = "linux")]
                if parse_segment_name(file).is_some() {
                    self.map(file, *len)?;
                }
                Ok(())
            }
            FileOp::Write {
                file,
                offset,
                bytes,
            } => self.write_bytes(file, bytes, *offset),
            FileOp::WriteParts {
                file,
                offset,
                parts,
            } => self.write_parts(file, parts, *offset),
            FileOp::Zero { file, offset, len } => {
                #[cfg(target_os = "linux")]
                if self.mapped(file, |m| m.zero(*offset, *len)) {
                    return Ok(());
                }
                let (mut at, end) = (*offset, offset.saturating_add(*len));
                while at < end {
                    let n = (end - at).min(ZEROS.len() as u64) as usize;
                    let r = write_at(self.file(file)?, &ZEROS[..n], at);
                    r.map_err(|e| self.error("zero", file, e))?;
                    at += n as u64;
                }
                self.stats.writes += 1;
                Ok(())
            }
            FileOp::Sync { file } => {
                if !self.open.contains_key(file) && !self.path.join(file).exists() {
                    return Ok(());
                }
                #[cfg(target_os = "linux")]
                if let Some(m) = self.maps.get(file) {
                    let r = m.sync();
                    r.map_err(|e| self.error("sync", file, e))?;
                }
                let r = self.file(file)?.sync_data();
                r.map_err(|e| self.error("sync", file, e))?;
                self.stats.file_syncs += 1;
                Ok(())
            }
            FileOp::SyncDir => {
                self.sync_dir()?;
                self.stats.dir_syncs += 1;
                Ok(())
            }
            FileOp::Rename { from, to } => {
                self.open.remove(from);
                self.open.remove(to);
                #[cfg(target_os = "linux")]
                let mapped = {
                    self.maps.remove(to);
                    self.maps.remove(from)
                };
                let (a, b) = (self.path.join(from), self.path.join(to));
                match fs::rename(&a, &b) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(err("rename", &a)(e)),
                    // A mapped file removed behind the journal's back took the writes made
                    // through its mapping with it: an error, not a rename of nothing.
                    #[cfg(target_os = "linux")]
                    Err(e) if mapped.is_some() => Err(err("rename", &a)(e)),
                    Err(_) => Ok(()),
                    Ok(()) => {
                        // The same file under its new name: its mapping goes with it.
                        #[cfg(target_os = "linux")]
                        if let Some(m) = mapped {
                            self.maps.insert(to.clone(), m);
                        }
                        Ok(())
                    }
                }
            }
            FileOp::Unlink { file } => {
                self.open.remove(file);
                #[cfg(target_os = "linux")]
                self.maps.remove(file);
                let p = self.path.join(file);
                match fs::remove_file(&p) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(err("unlink", &p)(e)),
                    _ => Ok(()),
                }
            }
            other => Err(IoError {
                what: "carry out",
                file: self.path.join(other.file().unwrap_or_default()),
                source: io::Error::new(io::ErrorKind::Unsupported, format!("{other:?}")),
            }),
        }
    }

    /// Stores a frame the engine placed ([`Ring::append_placed`](sf_journal::ring::Ring::append_placed))
    /// from the caller's `payload`: the same two writes as
    /// [`FramePlace::writes`] gives, in the same order (the length and payload, then the
    /// checksum), without building them as operations.
    pub fn write_frame(&mut self, place: &FramePlace<'_>, payload: &[u8]) -> Result<(), IoError> {
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        body.extend_from_slice(&place.payload_len.to_le_bytes());
        body.extend_from_slice(payload);
        body.resize(body.len() + place.clear_after, 0);
        let r = self.write_bytes(place.file, &body, place.offset + 4);
        self.body = body;
        r?;
        self.write_bytes(place.file, &place.crc.to_le_bytes(), place.offset)
    }

    /// Maps the segment `file`, just sized to `len`; a segment that cannot be allocated or
    /// mapped is left to positioned writes (an allocation refused for want of room is then
    /// met by the write's own error).
    #[cfg(target_os = "linux")]
    fn map(&mut self, file: &str, len: u64) -> Result<(), IoError> {
        match crate::map::Mapped::new(self.file(file)?, len) {
            Ok(m) => {
                self.maps.insert(file.to_owned(), m);
                self.stats.maps_made += 1;
            }
            Err(e) => {
                tracing::debug!(file = %file, error = %e, "sf segment not mapped: written through the file");
            }
        }
        Ok(())
    }

    /// Carries out `write` on `file`'s mapping, counted as a write when it took place (it
    /// lay inside the mapping); false for a file not mapped or a write outside its mapping.
    #[cfg(target_os = "linux")]
    fn mapped(&mut self, file: &str, write: impl FnOnce(&mut crate::map::Mapped) -> bool) -> bool {
        let done = self.maps.get_mut(file).is_some_and(write);
        if done {
            self.stats.writes += 1;
            self.stats.mapped_writes += 1;
        }
        done
    }

    /// Whether writes to `file` are copies into its mapping.
    #[must_use]
    pub fn is_mapped(&self, file: &str) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.maps.contains_key(file)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = file;
            false
        }
    }

    /// One positioned write of `parts` one after another, counted: copied part by part into a
    /// mapping they lie inside, or joined for one write through the file.
    fn write_parts(
        &mut self,
        file: &str,
        parts: &[bytes::Bytes],
        offset: u64,
    ) -> Result<(), IoError> {
        #[cfg(target_os = "linux")]
        if self.mapped(file, |m| m.write_parts(offset, parts)) {
            return Ok(());
        }
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        for p in parts {
            body.extend_from_slice(p);
        }
        let r = self.write_bytes(file, &body, offset);
        self.body = body;
        r
    }

    /// One positioned write, counted; the path is only built for an error.
    fn write_bytes(&mut self, file: &str, bytes: &[u8], offset: u64) -> Result<(), IoError> {
        #[cfg(target_os = "linux")]
        if self.mapped(file, |m| m.write(offset, bytes)) {
            return Ok(());
        }
        let r = write_at(self.file(file)?, bytes, offset);
        r.map_err(|e| self.error("write", file, e))?;
        self.stats.writes += 1;
        Ok(())
    }

    /// Carries out every operation in order, stopping at the first failure.
    pub fn apply_all<'a>(
        &mut self,
        ops: impl IntoIterator<Item = &'a FileOp>,
    ) -> Result<(), IoError> {
        ops.into_iter().try_for_each(|op| self.apply(op))
    }

    #[cfg(unix)]
    fn sync_dir(&self) -> Result<(), IoError> {
        File::open(&self.path)
            .and_then(|d| d.sync_all())
            .map_err(err("sync directory", &self.path))
    }

    #[cfg(not(unix))]
    fn sync_dir(&self) -> Result<(), IoError> {
        // Directories cannot be opened for syncing here; renames and creations are made
        // durable by the file system itself.
        Ok(())
    }

    /// Reads `len` bytes of `file` at `offset`.
    pub fn read(&mut self, file: &str, offset: u64, len: usize) -> Result<Vec<u8>, IoError> {
        let mut buf = vec![0u8; len];
        let r = read_at(self.file(file)?, &mut buf, offset);
        r.map_err(|e| self.error("read", file, e))?;
        Ok(buf)
    }

    /// The names of the directory's files, in byte order.
    pub fn names(&self) -> Result<Vec<String>, IoError> {
        let mut out = Vec::new();
        for e in fs::read_dir(&self.path).map_err(err("list", &self.path))? {
            let e = e.map_err(err("list", &self.path))?;
            if e.file_type().map_err(err("list", &self.path))?.is_file() {
                out.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        out.sort();
        Ok(out)
    }

    /// Recovers the slot reading one segment file at a time into one buffer, so the memory
    /// it takes is bounded by the largest segment (and the small files), not by the slot:
    /// each segment is scanned by a [`Recoverer`] and only its frames' places are kept. The
    /// outer error is a failed read, the inner one recovery refusing the slot.
    pub fn recover_slot(
        &mut self,
        connection_generation: u64,
    ) -> Result<Result<Recovery, RecoveryError>, IoError> {
        let mut r = Recoverer::new();
        let (mut manifest, mut watermark, mut dict) = (None, None, None);
        let mut buf = Vec::new();
        for name in self.names()? {
            let p = self.path.join(&name);
            if parse_segment_name(&name).is_some() {
                let mut f = File::open(&p).map_err(err("read", &p))?;
                let len = f.metadata().map_err(err("read", &p))?.len();
                buf.clear();
                buf.resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
                io::Read::read_exact(&mut f, &mut buf).map_err(err("read", &p))?;
                self.stats.recovery_segment_bytes += len;
                // What the one buffer holds at most: its capacity, not only this file's length.
                self.stats.recovery_peak_bytes =
                    self.stats.recovery_peak_bytes.max(buf.capacity() as u64);
                if let Err(e) = r.segment(&name, &buf) {
                    return Ok(Err(e));
                }
            } else if name == slot::MANIFEST {
                manifest = Some(fs::read(&p).map_err(err("read", &p))?);
            } else if name == slot::ACK_WATERMARK {
                watermark = Some(fs::read(&p).map_err(err("read", &p))?);
            } else if name == slot::SYMBOL_DICT {
                dict = Some(fs::read(&p).map_err(err("read", &p))?);
            }
        }
        Ok(r.finish(
            manifest.as_deref(),
            watermark.as_deref(),
            dict.as_deref(),
            connection_generation,
        ))
    }

    /// Reads the journal's files for recovery: every segment, the manifest, the watermark and
    /// the dictionary. Lock files, sentinels and set-aside files are left out.
    pub fn read_slot(&self) -> Result<SlotFiles, IoError> {
        let mut files = SlotFiles::default();
        for name in self.names()? {
            let p = self.path.join(&name);
            let read = || fs::read(&p).map_err(err("read", &p));
            if parse_segment_name(&name).is_some() {
                files.segments.push((name, read()?));
            } else if name == slot::MANIFEST {
                files.manifest = Some(read()?);
            } else if name == slot::ACK_WATERMARK {
                files.ack_watermark = Some(read()?);
            } else if name == slot::SYMBOL_DICT {
                files.symbol_dict = Some(read()?);
            }
        }
        Ok(files)
    }
}
