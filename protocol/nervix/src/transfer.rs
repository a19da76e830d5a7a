//! Reassembly of replies sent as transfer parts (F-7).
//!
//! A reply too large for one frame arrives as `TransferPart` replies that share the request's
//! identity and a total size, come in order from offset zero, and join into one `ServerMessage`
//! frame holding the real `Reply`. Other frames may arrive between parts; parts of a second
//! reply may not. The assembler hands out a reply only once all its bytes are in and the joined
//! frame verified, and never anything partial.

use crate::frame::{Frame, ServerMessageRoot};
use crate::limits::TRANSFER_LIMIT;
use crate::schema::{ReplyBody, ServerBody, TransferPart};
use crate::violation::TransferViolation;
use bytes::Bytes;

/// What feeding one part achieved.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransferProgress {
    /// More parts are needed.
    Pending {
        /// Bytes received so far.
        received: u64,
        /// Bytes announced.
        total: u64,
    },
    /// The reply is complete: a checked `ServerMessage` frame whose body is a `Reply` to the
    /// same request, and not itself a transfer part.
    Complete(Frame<ServerMessageRoot>),
}

#[derive(Debug)]
struct Assembly {
    request_id: u64,
    total: u64,
    buf: Vec<u8>,
}

/// Joins the transfer parts of one reply at a time.
#[derive(Debug, Default)]
pub struct TransferAssembler {
    current: Option<Assembly>,
}

impl TransferAssembler {
    /// An assembler with nothing in progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// The request whose reply is being assembled, if any.
    pub fn assembling(&self) -> Option<u64> {
        self.current.as_ref().map(|a| a.request_id)
    }

    /// Drops whatever was being assembled (the session ended).
    pub fn reset(&mut self) {
        self.current = None;
    }

    /// Feeds one `TransferPart` that arrived in a `Reply` to `request_id`.
    pub fn accept(
        &mut self,
        request_id: u64,
        part: &TransferPart<'_>,
    ) -> Result<TransferProgress, TransferViolation> {
        self.accept_raw(
            request_id,
            part.total_bytes(),
            part.offset(),
            part.chunk().bytes(),
        )
    }

    /// Feeds one part given by its members. On any violation the assembly in progress is
    /// dropped: the session that carried it has to end (F-8).
    pub fn accept_raw(
        &mut self,
        request_id: u64,
        total: u64,
        offset: u64,
        chunk: &[u8],
    ) -> Result<TransferProgress, TransferViolation> {
        let result = self.step(request_id, total, offset, chunk);
        if result.is_err() {
            self.current = None;
        }
        result
    }

    fn step(
        &mut self,
        request_id: u64,
        total: u64,
        offset: u64,
        chunk: &[u8],
    ) -> Result<TransferProgress, TransferViolation> {
        if request_id == 0 {
            return Err(TransferViolation::ZeroIdentity);
        }
        if chunk.is_empty() {
            return Err(TransferViolation::EmptyChunk);
        }
        let assembly = match &mut self.current {
            Some(a) => {
                if a.request_id != request_id {
                    return Err(TransferViolation::OtherIdentity {
                        assembling: a.request_id,
                        found: request_id,
                    });
                }
                if a.total != total {
                    return Err(TransferViolation::TotalChanged {
                        expected: a.total,
                        found: total,
                    });
                }
                a
            }
            None => {
                if total > TRANSFER_LIMIT as u64 {
                    return Err(TransferViolation::TotalTooLarge {
                        total,
                        limit: TRANSFER_LIMIT as u64,
                    });
                }
                self.current.insert(Assembly {
                    request_id,
                    total,
                    buf: Vec::new(),
                })
            }
        };
        let received = assembly.buf.len() as u64;
        if offset != received {
            return Err(TransferViolation::OffsetMismatch {
                expected: received,
                found: offset,
            });
        }
        let end = received + chunk.len() as u64;
        if end > total {
            return Err(TransferViolation::Overrun { total, end });
        }
        assembly.buf.extend_from_slice(chunk);
        if end < total {
            return Ok(TransferProgress::Pending {
                received: end,
                total,
            });
        }
        let done = self.current.take().map(|a| a.buf).unwrap_or_default();
        let frame = Frame::<ServerMessageRoot>::check_with_limit(Bytes::from(done), TRANSFER_LIMIT)
            .map_err(|v| TransferViolation::Joined(Box::new(v)))?;
        let message = frame.view();
        let Some(reply) = message.body_as_reply() else {
            let found = message
                .body_type()
                .variant_name()
                .unwrap_or("an undeclared body");
            return Err(TransferViolation::JoinedNotReply { found });
        };
        if reply.request_id() != request_id {
            return Err(TransferViolation::JoinedOtherRequest {
                expected: request_id,
                found: reply.request_id(),
            });
        }
        if reply.body_type() == ReplyBody::TransferPart {
            return Err(TransferViolation::JoinedIsTransferPart);
        }
        debug_assert_eq!(message.body_type(), ServerBody::Reply);
        Ok(TransferProgress::Complete(frame))
    }
}
