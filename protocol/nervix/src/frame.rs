//! Checked reading of frames (F-3, F-4, F-5, F-9).
//!
//! A [`Frame`] is a received frame that passed every check: size, file identifier, FlatBuffers
//! verification with the protocol's limits, and the schema's semantic rules. Its views borrow
//! the frame's [`Bytes`], which keep the frame alive and unchanged for as long as any view is in
//! use; values that must outlive the frame are copied out (for example with [`Frame::unpack`]).

use crate::check::{CheckRead, CheckWrite};
use crate::limits::{verifier_options, COMPACT_BELOW, FRAME_LIMIT, MIN_FRAME};
use crate::report::{ReportFields, Reporter};
use crate::schema::*;
use crate::violation::ProtocolViolation;
use bytes::Bytes;
use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;

/// A frame root: one of the eight tables a frame can start at, with its file identifier.
pub trait Root: 'static + Sized {
    /// The borrowed view of a frame of this root.
    type View<'a>: flatbuffers::Follow<'a, Inner = Self::View<'a>>
        + flatbuffers::Verifiable
        + CheckRead
        + ReportFields;
    /// The owned form (flatc's object API), as written by [`crate::encode`].
    type Owned: CheckWrite + Clone + fmt::Debug + PartialEq;
    /// The four-byte file identifier frames of this root carry.
    const IDENTIFIER: [u8; 4];
    /// The root table's name.
    const NAME: &'static str;
    /// The file extension corpus frames of this root use.
    const EXTENSION: &'static str;
    /// Packs `owned` into `fbb` and finishes the buffer with the root's identifier.
    fn finish(owned: &Self::Owned, fbb: &mut flatbuffers::FlatBufferBuilder<'_>);
    /// Copies a view out into its owned form.
    fn unpack(view: &Self::View<'_>) -> Self::Owned;
}

include!("generated/roots.rs");

/// A session frame from the client (NXCM).
pub type ClientFrame = Frame<ClientMessageRoot>;
/// A session frame from the server (NXSM).
pub type ServerFrame = Frame<ServerMessageRoot>;
/// A frame of an upload stream (NXUM).
pub type UploadFrame = Frame<UploadMessageRoot>;
/// The frame that answers an upload stream (NXUR).
pub type UploadReplyFrame = Frame<UploadReplyRoot>;
/// The frame that asks for a backup archive (NXBQ).
pub type BackupDownloadRequestFrame = Frame<BackupDownloadRequestRoot>;
/// A frame of a backup download stream (NXBD).
pub type BackupDownloadFrame = Frame<BackupDownloadMessageRoot>;
/// A frame of a restore stream (NXRM).
pub type RestoreFrame = Frame<RestoreMessageRoot>;
/// The frame that answers a restore stream (NXRR).
pub type RestoreReplyFrame = Frame<RestoreReplyRoot>;

/// Checks `buf` as a frame of root `R` no larger than `limit`, and returns its view.
///
/// Nothing of the frame is read before its size and identifier are checked; then it is verified
/// with nesting 64, at most `len / 4` tables and an apparent size of at most `8 * len`; then the
/// schema's semantic rules are checked. Any failure is a typed [`ProtocolViolation`].
///
/// A `ServerMessage` carrying `SubscriptionRows` is verified and checked in one walk; a frame
/// that walk does not accept is checked the two-pass way, which names the fault, so the result
/// is the same either way.
pub fn check_slice<R: Root>(buf: &[u8], limit: usize) -> Result<R::View<'_>, ProtocolViolation> {
    check_slice_noting::<R>(buf, limit).map(|(view, _)| view)
}

/// [`check_slice`], also telling whether the one pass found the batch's rows alike (see
/// [`Frame::rows_alike`]).
fn check_slice_noting<R: Root>(
    buf: &[u8],
    limit: usize,
) -> Result<(R::View<'_>, bool), ProtocolViolation> {
    let len = buf.len();
    if len > limit {
        return Err(ProtocolViolation::FrameTooLarge {
            root: R::NAME,
            len,
            limit,
        });
    }
    if len < MIN_FRAME {
        return Err(ProtocolViolation::FrameTooShort { root: R::NAME, len });
    }
    let found = [buf[4], buf[5], buf[6], buf[7]];
    if found != R::IDENTIFIER {
        return Err(ProtocolViolation::WrongIdentifier {
            root: R::NAME,
            expected: R::IDENTIFIER,
            found,
        });
    }
    let opts = verifier_options(len);
    if TypeId::of::<R>() != TypeId::of::<ServerMessageRoot>() || !crate::one_pass::carries_rows(buf)
    {
        // Only a ServerMessage can carry rows; any other body is checked in two passes
        // without a start of the one pass first.
    } else if let Some(alike) = crate::one_pass::rows_frame_checks(buf, &opts) {
        // SAFETY: `R` is `ServerMessageRoot`, so `R::View` is `ServerMessage`, and the one pass
        // accepted `buf`: it made every call the generated verifier of `ServerMessage` makes
        // for this frame (see `crate::one_pass`), and all of them succeeded, which is what
        // `root_with_opts` requires before it reads the root the same way.
        let view = unsafe { flatbuffers::root_unchecked::<R::View<'_>>(buf) };
        return Ok((view, alike));
    }
    let view = flatbuffers::root_with_opts::<R::View<'_>>(&opts, buf).map_err(|error| {
        ProtocolViolation::Malformed {
            root: R::NAME,
            error,
        }
    })?;
    view.check()?;
    Ok((view, false))
}

/// A received frame of root `R` that passed every check.
pub struct Frame<R: Root> {
    bytes: Bytes,
    /// What the check found about a batch of rows: see [`Frame::rows_alike`].
    rows_alike: bool,
    _root: PhantomData<fn() -> R>,
}

impl<R: Root> Frame<R> {
    /// Checks `bytes` as one frame under the 4 MiB frame limit. The frame keeps `bytes` as it
    /// is; use [`Frame::check_compact`] for a frame sliced out of a larger receive buffer.
    pub fn check(bytes: Bytes) -> Result<Self, ProtocolViolation> {
        Self::check_with_limit(bytes, FRAME_LIMIT)
    }

    /// Checks `bytes` under the frame limit, first copying a frame smaller than 64 KiB out of
    /// whatever buffer it was sliced from, so that keeping the frame does not keep that buffer
    /// (F-9). Larger frames are kept in place.
    pub fn check_compact(bytes: Bytes) -> Result<Self, ProtocolViolation> {
        let bytes = if bytes.len() < COMPACT_BELOW {
            Bytes::copy_from_slice(&bytes)
        } else {
            bytes
        };
        Self::check(bytes)
    }

    /// Checks `bytes` as one frame under `limit` (the transfer limit for a joined reply).
    pub fn check_with_limit(bytes: Bytes, limit: usize) -> Result<Self, ProtocolViolation> {
        let (_, rows_alike) = check_slice_noting::<R>(&bytes, limit)?;
        Ok(Self {
            bytes,
            rows_alike,
            _root: PhantomData,
        })
    }

    /// The frame's root view. Reading it costs no further checks: the frame was checked once.
    #[inline]
    pub fn view(&self) -> R::View<'_> {
        // SAFETY: `self.bytes` passed `check_slice::<R>` (verification included) when this
        // frame was built, and `Bytes` is immutable, so the buffer still verifies.
        unsafe { flatbuffers::root_unchecked::<R::View<'_>>(&self.bytes) }
    }

    /// The frame's bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The frame's bytes, giving up the frame.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// The frame, copied out of its buffer when that buffer is shared with anything else, so
    /// that keeping the frame keeps exactly its own bytes alive (F-9). The copy is the same
    /// checked frame; nothing is read again.
    pub fn retained(self) -> Self {
        if self.bytes.is_unique() {
            return self;
        }
        Self {
            bytes: Bytes::copy_from_slice(&self.bytes),
            rows_alike: self.rows_alike,
            _root: PhantomData,
        }
    }

    /// True when the check walked this frame's `SubscriptionRows` batch in one pass and found
    /// every row alike: as many cells as the first row, each of the same variant as the first
    /// row's cell at its place, and no list among them. Whether a row conforms to a schema
    /// depends on nothing else of such a row, so the first row's verdict is every row's.
    /// False says nothing (another body, a frame checked in two passes, rows that differ).
    pub(crate) fn rows_alike(&self) -> bool {
        self.rows_alike
    }

    /// The frame's length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always false: a checked frame holds at least 8 bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Copies the whole frame out into its owned form.
    pub fn unpack(&self) -> R::Owned {
        R::unpack(&self.view())
    }

    /// The line-oriented report of everything the frame holds (see [`crate::report`]).
    pub fn report(&self) -> String {
        let mut r = Reporter::new();
        self.view().report(&mut r);
        r.finish()
    }
}

impl<R: Root> Clone for Frame<R> {
    fn clone(&self) -> Self {
        Self {
            bytes: self.bytes.clone(),
            rows_alike: self.rows_alike,
            _root: PhantomData,
        }
    }
}

impl<R: Root> fmt::Debug for Frame<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("root", &R::NAME)
            .field("len", &self.bytes.len())
            .finish()
    }
}
