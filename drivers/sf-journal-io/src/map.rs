//! Segment files mapped into memory (Linux): a write to a mapped segment is a copy into the
//! page cache, with no system call and none of the file system's work per page that a
//! positioned write does. A segment is mapped only once its blocks are allocated
//! ([`Mapped::new`]), so a write through the mapping never needs a block: a full disk is
//! met by the allocation's error, not by a fault in the middle of a copy.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::ptr::NonNull;

/// One file's shared, writable mapping of its first `len` bytes.
#[derive(Debug)]
pub(crate) struct Mapped {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by one `FileDir`, which is used by one thread at a time
// (`&mut self` on every write); nothing else holds the pointer.
unsafe impl Send for Mapped {}

impl Mapped {
    /// Allocates the blocks of `f`'s first `len` bytes (`len` is its length) and maps them.
    /// An error leaves the file as it was, unmapped: its writes go through the file instead.
    pub(crate) fn new(f: &File, len: u64) -> io::Result<Self> {
        let n = usize::try_from(len).map_err(|_| io::ErrorKind::InvalidInput)?;
        let off = libc::off_t::try_from(len).map_err(|_| io::ErrorKind::InvalidInput)?;
        if n == 0 {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        // SAFETY: a valid descriptor; the call only reserves blocks. A file system that cannot
        // reserve them says so (it is not emulated by writing zeros), and the file stays
        // unmapped.
        let r = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, off) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh mapping of `n` bytes of a file at least that long (just allocated),
        // owned by the value returned and unmapped when it drops.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or(io::ErrorKind::Other)?;
        Ok(Self { ptr, len: n })
    }

    /// The mapped length.
    pub(crate) fn len(&self) -> u64 {
        self.len as u64
    }

    /// The range `offset..offset + n` when it lies inside the mapping.
    fn range(&self, offset: u64, n: usize) -> Option<usize> {
        let at = usize::try_from(offset).ok()?;
        (at.checked_add(n)? <= self.len).then_some(at)
    }

    /// Copies `bytes` to `offset`; false (nothing written) when they do not lie inside the
    /// mapping.
    pub(crate) fn write(&mut self, offset: u64, bytes: &[u8]) -> bool {
        let Some(at) = self.range(offset, bytes.len()) else {
            return false;
        };
        // SAFETY: `at + bytes.len()` is inside the mapping, which `self` owns exclusively.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr().add(at), bytes.len());
        }
        true
    }

    /// Copies `parts` one after another from `offset`; false (nothing written) when they do
    /// not all lie inside the mapping.
    pub(crate) fn write_parts(&mut self, offset: u64, parts: &[bytes::Bytes]) -> bool {
        let total = parts.iter().map(bytes::Bytes::len).sum();
        let Some(mut at) = self.range(offset, total) else {
            return false;
        };
        for p in parts {
            // SAFETY: the parts together end inside the mapping, which `self` owns exclusively.
            unsafe {
                std::ptr::copy_nonoverlapping(p.as_ptr(), self.ptr.as_ptr().add(at), p.len());
            }
            at += p.len();
        }
        true
    }

    /// Zeroes `len` bytes at `offset`; false (nothing written) when they do not lie inside
    /// the mapping.
    pub(crate) fn zero(&mut self, offset: u64, len: u64) -> bool {
        let Ok(n) = usize::try_from(len) else {
            return false;
        };
        let Some(at) = self.range(offset, n) else {
            return false;
        };
        // SAFETY: `at + n` is inside the mapping, which `self` owns exclusively.
        unsafe { std::ptr::write_bytes(self.ptr.as_ptr().add(at), 0, n) };
        true
    }

    /// Writes the mapping's changed pages back to the file (before the file's own sync).
    pub(crate) fn sync(&self) -> io::Result<()> {
        // SAFETY: the whole mapping, owned by `self`.
        let r = unsafe { libc::msync(self.ptr.as_ptr().cast(), self.len, libc::MS_SYNC) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}
