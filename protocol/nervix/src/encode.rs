//! Checked writing of frames (F-2, F-5, F-6).
//!
//! [`Encoder::encode`] checks an owned value against the schema's rules and the send limits,
//! then writes exactly one finished frame carrying its root's file identifier and no size
//! prefix. Optional scalars (`= null`) are written exactly as given: `None` is omitted and
//! `Some(0)` is written as a present zero (F-5).

use crate::check::CheckWrite;
use crate::frame::Root;
use crate::limits::MAX_VECTOR_ENTRIES;
use crate::limits::{FRAME_LIMIT, MAX_DEPTH, MAX_STRING_BYTES};
use crate::schema::{
    ClientMessage, ClientMessageArgs, ClientRequest, ClientRequestT, CommandRequest,
    CommandRequestArgs, CommandRequestT, SubmitBatchRequest, SubmitBatchRequestArgs,
    TransactionPreviewIdentityT,
};
use crate::violation::{Fault, Site};
use bytes::Bytes;

/// Why a value could not be written as a frame. Each is a defect in what the application asked
/// to send; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The finished frame (or, found early, its payload alone) is above the frame limit.
    #[error("frame of at least {len} bytes exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The frame's length, or a lower bound found before writing it.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A member breaks a rule of the schema or a send limit.
    #[error("{site}: {fault}")]
    Field {
        /// The member.
        site: Site,
        /// What is wrong with it.
        fault: Fault,
    },
}

impl EncodeError {
    /// A member-level error.
    #[cold]
    pub fn field(site: Site, fault: Fault) -> Self {
        Self::Field { site, fault }
    }
}

/// Running state of the write-side checks: nesting depth and a lower bound of the frame size.
#[doc(hidden)]
#[derive(Debug)]
pub struct WriteCx {
    depth: usize,
    payload: usize,
    limit: usize,
}

impl WriteCx {
    fn new(limit: usize) -> Self {
        Self {
            depth: 1,
            payload: 0,
            limit,
        }
    }

    /// Checks a nested table one level deeper.
    #[inline]
    pub fn nested<T: CheckWrite + ?Sized>(
        &mut self,
        value: &T,
        table: &'static str,
        field: &'static str,
    ) -> Result<(), EncodeError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(EncodeError::field(Site::new(table, field), Fault::TooDeep));
        }
        value.check_write(self)?;
        self.depth -= 1;
        Ok(())
    }

    /// Checks a string against the string limit and counts it toward the frame size.
    #[inline]
    pub fn string(
        &mut self,
        s: &str,
        table: &'static str,
        field: &'static str,
    ) -> Result<(), EncodeError> {
        if s.len() > MAX_STRING_BYTES {
            return Err(EncodeError::field(
                Site::new(table, field),
                Fault::StringTooLong { len: s.len() },
            ));
        }
        self.payload(s.len())
    }

    /// Counts `len` bytes of scalar payload toward the frame size.
    #[inline]
    pub fn payload(&mut self, len: usize) -> Result<(), EncodeError> {
        self.payload = self.payload.saturating_add(len);
        if self.payload > self.limit {
            return Err(EncodeError::FrameTooLarge {
                len: self.payload,
                limit: self.limit,
            });
        }
        Ok(())
    }
}

/// Writes frames, reusing one builder buffer across calls.
///
/// Finished frames are cut from a shared output arena of at least 64 KiB, so writing a frame
/// and cloning it (to keep it for a resend) costs no allocation until the arena is used up; a
/// kept frame keeps its arena chunk alive.
pub struct Encoder {
    fbb: flatbuffers::FlatBufferBuilder<'static>,
    arena: bytes::BytesMut,
    /// The head of the last [`Encoder::submit_frame`].
    head: Vec<u8>,
}

/// The size of a fresh output arena.
const ARENA: usize = 64 * 1024;

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder").finish_non_exhaustive()
    }
}

impl Encoder {
    /// A new encoder.
    pub fn new() -> Self {
        Self {
            fbb: flatbuffers::FlatBufferBuilder::with_capacity(1024),
            arena: bytes::BytesMut::new(),
            head: Vec::new(),
        }
    }

    /// Checks `value` and writes it as one frame of root `R` under the 4 MiB frame limit.
    pub fn encode<R: Root>(&mut self, value: &R::Owned) -> Result<Bytes, EncodeError> {
        self.encode_with_limit::<R>(value, FRAME_LIMIT)
    }

    /// Checks `value` and writes it as one frame of root `R` no larger than `limit` bytes. A
    /// server-side test double uses the transfer limit to build a reply it then splits into
    /// transfer parts; a client never sends above [`FRAME_LIMIT`].
    pub fn encode_with_limit<R: Root>(
        &mut self,
        value: &R::Owned,
        limit: usize,
    ) -> Result<Bytes, EncodeError> {
        let mut cx = WriteCx::new(limit);
        value.check_write(&mut cx)?;
        self.fbb.reset();
        R::finish(value, &mut self.fbb);
        let len = self.fbb.finished_data().len();
        if len > limit {
            return Err(EncodeError::FrameTooLarge { len, limit });
        }
        Ok(self.emit())
    }
}

impl Encoder {
    /// Copies the finished frame out of the builder into the arena.
    fn emit(&mut self) -> Bytes {
        let data = self.fbb.finished_data();
        if self.arena.capacity() - self.arena.len() < data.len() {
            self.arena = bytes::BytesMut::with_capacity(ARENA.max(data.len()));
        }
        self.arena.extend_from_slice(data);
        self.arena.split().freeze()
    }

    /// Checks `request` and writes it as one `ClientMessage` frame under `request_id`, without
    /// building an owned `ClientMessageT` around it.
    pub fn encode_request(
        &mut self,
        request_id: u64,
        request: &ClientRequestT,
    ) -> Result<Bytes, EncodeError> {
        if request_id == 0 {
            return Err(EncodeError::field(
                Site::new("ClientMessage", "request_id"),
                Fault::Zero,
            ));
        }
        let mut cx = WriteCx::new(FRAME_LIMIT);
        request.check_variant(&mut cx, "ClientMessage", "request")?;
        self.fbb.reset();
        let body = request.pack(&mut self.fbb);
        let root = ClientMessage::create(
            &mut self.fbb,
            &ClientMessageArgs {
                request_id,
                request_type: request.client_request_type(),
                request: body,
            },
        );
        self.fbb.finish(root, Some("NXCM"));
        let len = self.fbb.finished_data().len();
        if len > FRAME_LIMIT {
            return Err(EncodeError::FrameTooLarge {
                len,
                limit: FRAME_LIMIT,
            });
        }
        Ok(self.emit())
    }

    /// Checks `request` as [`Encoder::encode_request`] does, under any request identity, and
    /// writes no frame. A request of a kind whose frame adds a bounded number of bytes to its
    /// strings (`ListDomains`, `SelectDomain`, `Suggest`) is not built when its strings leave
    /// room for more than all of them: only a request that could come near the frame limit is
    /// built to measure it.
    pub fn check_request(&mut self, request: &ClientRequestT) -> Result<(), EncodeError> {
        let mut cx = WriteCx::new(FRAME_LIMIT);
        request.check_variant(&mut cx, "ClientMessage", "request")?;
        if fixed_overhead(request) && cx.payload.saturating_add(REQUEST_OVERHEAD) <= FRAME_LIMIT {
            return Ok(());
        }
        self.encode_request(u64::MAX, request).map(|_| ())
    }
}

/// Whether a request's frame adds at most [`REQUEST_OVERHEAD`] bytes to its strings: a kind
/// made of scalars and strings only (no vector or nested table whose count the application
/// sets), so its tables, offsets and padding are a fixed set.
fn fixed_overhead(request: &ClientRequestT) -> bool {
    matches!(
        request,
        ClientRequestT::ListDomainsRequest(_)
            | ClientRequestT::SelectDomainRequest(_)
            | ClientRequestT::SuggestRequest(_)
    )
}

/// The most bytes the frame of a request of [`fixed_overhead`] kind adds to its strings'
/// bytes: the root offset and identifier, two tables and their vtables, scalars, string
/// lengths and terminators, and alignment. A test pins the real most below a quarter of this.
const REQUEST_OVERHEAD: usize = 1024;

/// A `CommandRequest` as borrowed parts, written by [`Encoder::encode_command`] exactly as
/// [`Encoder::encode_request`] writes the owned `CommandRequestT` of the same members, without
/// building one: a client that keeps a command's members for its repetitions (E-2) writes each
/// attempt from them directly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommandParts<'a> {
    /// The query text.
    pub query: &'a str,
    /// The domain it names.
    pub domain: Option<&'a str>,
    /// The execution reference.
    pub execution_reference: &'a str,
    /// The expected transaction position.
    pub expected_transaction_position: Option<u64>,
    /// The expected preview.
    pub expected_preview: Option<&'a TransactionPreviewIdentityT>,
}

impl<'a> CommandParts<'a> {
    /// The parts of an owned request.
    pub fn of(request: &'a CommandRequestT) -> Self {
        Self {
            query: &request.query,
            domain: request.domain.as_deref(),
            execution_reference: &request.execution_reference,
            expected_transaction_position: request.expected_transaction_position,
            expected_preview: request.expected_preview.as_deref(),
        }
    }
}

/// The same checks as the owned `CommandRequestT`'s, member by member.
impl CheckWrite for CommandParts<'_> {
    fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
        cx.string(self.query, "CommandRequest", "query")?;
        if let Some(v) = self.domain {
            cx.string(v, "CommandRequest", "domain")?;
        }
        cx.string(
            self.execution_reference,
            "CommandRequest",
            "execution_reference",
        )?;
        if let Some(v) = self.expected_preview {
            cx.nested(v, "CommandRequest", "expected_preview")?;
        }
        Ok(())
    }
}

/// More than a `CommandRequest` frame ever holds beyond its payload (its strings' and the
/// preview's fingerprint's bytes): the root offset and identifier, four tables and their
/// vtables, string lengths and terminators, and alignment. A test pins the real most below a
/// quarter of this.
const COMMAND_OVERHEAD: usize = 1024;

/// A command's frame, with where its execution reference's bytes sit in it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandFrame {
    /// The frame.
    pub frame: Bytes,
    /// The range of `frame` holding the execution reference's bytes.
    pub reference: std::ops::Range<usize>,
}

impl Encoder {
    /// Checks `parts` and writes them as one `ClientMessage` frame of a `CommandRequest` under
    /// `request_id`: the bytes [`Encoder::encode_request`] writes for the same request.
    pub fn encode_command(
        &mut self,
        request_id: u64,
        parts: &CommandParts<'_>,
    ) -> Result<CommandFrame, EncodeError> {
        let reference = self.build_command(request_id, parts)?;
        let len = self.fbb.finished_data().len();
        // The reference was written as a length then its bytes, `reference` bytes before the
        // end of the finished frame.
        let start = len - reference + 4;
        let reference = start..start + parts.execution_reference.len();
        Ok(CommandFrame {
            frame: self.emit(),
            reference,
        })
    }

    /// Checks `parts` as [`Encoder::encode_command`] does, frame limit included, without
    /// keeping a frame: for a request that is checked when it is made and written when it
    /// goes.
    pub fn check_command(&mut self, parts: &CommandParts<'_>) -> Result<(), EncodeError> {
        let mut cx = WriteCx::new(FRAME_LIMIT);
        cx.nested(parts, "ClientMessage", "request")?;
        // Every member of variable length is in the payload; what the frame adds to it is a
        // fixed set of tables, offsets and padding. A payload that leaves room for more than
        // all of it fits without building the frame to measure it.
        if cx.payload.saturating_add(COMMAND_OVERHEAD) <= FRAME_LIMIT {
            return Ok(());
        }
        self.build_command(u64::MAX, parts).map(|_| ())
    }

    /// Writes the frame of `parts` into the builder; returns how far before the finished
    /// frame's end the execution reference's string starts.
    fn build_command(
        &mut self,
        request_id: u64,
        parts: &CommandParts<'_>,
    ) -> Result<usize, EncodeError> {
        if request_id == 0 {
            return Err(EncodeError::field(
                Site::new("ClientMessage", "request_id"),
                Fault::Zero,
            ));
        }
        let mut cx = WriteCx::new(FRAME_LIMIT);
        cx.nested(parts, "ClientMessage", "request")?;
        let fbb = &mut self.fbb;
        fbb.reset();
        // The members in the order the owned request's `pack` writes them.
        let query = fbb.create_string(parts.query);
        let domain = parts.domain.map(|d| fbb.create_string(d));
        let reference = fbb.create_string(parts.execution_reference);
        let expected_preview = parts.expected_preview.map(|p| p.pack(fbb));
        let body = CommandRequest::create(
            fbb,
            &CommandRequestArgs {
                query: Some(query),
                domain,
                execution_reference: Some(reference),
                expected_transaction_position: parts.expected_transaction_position,
                expected_preview,
            },
        );
        let root = ClientMessage::create(
            fbb,
            &ClientMessageArgs {
                request_id,
                request_type: ClientRequest::CommandRequest,
                request: Some(body.as_union_value()),
            },
        );
        fbb.finish(root, Some("NXCM"));
        let len = fbb.finished_data().len();
        if len > FRAME_LIMIT {
            return Err(EncodeError::FrameTooLarge {
                len,
                limit: FRAME_LIMIT,
            });
        }
        Ok(reference.value() as usize)
    }
}

/// The frame of a `SubmitBatchRequest` around a batch of a given length, without the batch:
/// what [`Encoder::encode_request`] would write before the batch's bytes, and how many bytes of
/// padding it writes after them. The frame is `head`, the batch, then `tail` zero bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmitFrame<'a> {
    /// The bytes before the batch (its length prefix last).
    pub head: &'a [u8],
    /// The zero bytes after the batch.
    pub tail: usize,
}

impl SubmitFrame<'_> {
    /// The whole frame's length for a batch of `batch` bytes.
    pub fn len(&self, batch: usize) -> usize {
        self.head.len() + batch + self.tail
    }
}

/// Zeros standing in for a batch's last `len % 8` bytes, and for padding.
const ZEROS: [u8; 8] = [0; 8];

impl Encoder {
    /// The frame of a `SubmitBatchRequest` of `producer` under `request_id` around a batch of
    /// `batch_len` bytes, checked by the rules [`Encoder::encode_request`] applies to it
    /// (nonzero identities, a nonempty batch within the vector limit, the frame limit), for a
    /// caller that writes the batch's bytes itself between the head and the tail. The bytes
    /// are exactly those `encode_request` writes for the same request.
    ///
    /// FlatBuffers writes a frame from its end, and the batch is the first thing written, so
    /// everything before it depends only on its length modulo 8 (every alignment in the frame
    /// divides 8): the head is built once around a stand-in of that many zero bytes.
    pub fn submit_frame(
        &mut self,
        request_id: u64,
        producer: u64,
        batch_len: usize,
    ) -> Result<SubmitFrame<'_>, EncodeError> {
        let site = |field| Site::new("SubmitBatchRequest", field);
        if request_id == 0 {
            return Err(EncodeError::field(
                Site::new("ClientMessage", "request_id"),
                Fault::Zero,
            ));
        }
        if producer == 0 {
            return Err(EncodeError::field(site("producer"), Fault::Zero));
        }
        if batch_len > MAX_VECTOR_ENTRIES {
            return Err(EncodeError::field(
                site("batch"),
                Fault::TooManyEntries { len: batch_len },
            ));
        }
        if batch_len == 0 {
            return Err(EncodeError::field(site("batch"), Fault::Empty));
        }
        if batch_len > FRAME_LIMIT {
            return Err(EncodeError::FrameTooLarge {
                len: batch_len,
                limit: FRAME_LIMIT,
            });
        }
        let stand_in = batch_len % ZEROS.len();
        self.fbb.reset();
        let batch = self.fbb.create_vector(&ZEROS[..stand_in]);
        let body = SubmitBatchRequest::create(
            &mut self.fbb,
            &SubmitBatchRequestArgs {
                producer,
                batch: Some(batch),
            },
        );
        let root = ClientMessage::create(
            &mut self.fbb,
            &ClientMessageArgs {
                request_id,
                request_type: ClientRequest::SubmitBatchRequest,
                request: Some(body.as_union_value()),
            },
        );
        self.fbb.finish(root, Some("NXCM"));
        let data = self.fbb.finished_data();
        // Where the stand-in's bytes start, read back through the frame's own offsets.
        let Some(start) = flatbuffers::root::<ClientMessage>(data)
            .ok()
            .and_then(|m| m.request_as_submit_batch_request())
            .map(|r| r.batch().bytes().as_ptr() as usize - data.as_ptr() as usize)
        else {
            unreachable!("a frame just built reads back")
        };
        // The stand-in was written first, so only its own padding follows it.
        let tail = data.len() - start - stand_in;
        let start = start - 4;
        let total = start + 4 + batch_len + tail;
        if total > FRAME_LIMIT {
            return Err(EncodeError::FrameTooLarge {
                len: total,
                limit: FRAME_LIMIT,
            });
        }
        let head_len = start + 4;
        let len = u32::try_from(batch_len).unwrap_or(u32::MAX).to_le_bytes();
        self.head.clear();
        self.head.extend_from_slice(&data[..start]);
        self.head.extend_from_slice(&len);
        debug_assert_eq!(self.head.len(), head_len);
        Ok(SubmitFrame {
            head: &self.head,
            tail,
        })
    }
}

/// Checks `value` and writes it as one frame of root `R` with a fresh [`Encoder`].
pub fn encode<R: Root>(value: &R::Owned) -> Result<Bytes, EncodeError> {
    Encoder::new().encode::<R>(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::FingerprintT;

    #[test]
    fn a_command_frame_adds_less_than_a_quarter_of_the_overhead_bound_to_its_payload() {
        let mut enc = Encoder::new();
        let mut most = 0;
        // Every member present, at every alignment of every string.
        for q in 0..8 {
            for d in 0..8 {
                for r in 1..9 {
                    for t in 0..8 {
                        let preview = TransactionPreviewIdentityT {
                            transaction_id: "t".repeat(t),
                            position: u64::MAX,
                            planning_basis: Box::new(FingerprintT { bytes: vec![9; 32] }),
                        };
                        let (query, domain, reference) =
                            ("q".repeat(q), "d".repeat(d), "r".repeat(r));
                        let parts = CommandParts {
                            query: &query,
                            domain: Some(&domain),
                            execution_reference: &reference,
                            expected_transaction_position: Some(u64::MAX),
                            expected_preview: Some(&preview),
                        };
                        let mut cx = WriteCx::new(FRAME_LIMIT);
                        cx.nested(&parts, "ClientMessage", "request").unwrap();
                        let len = enc.encode_command(u64::MAX, &parts).unwrap().frame.len();
                        most = most.max(len - cx.payload);
                    }
                }
            }
        }
        assert!(
            most * 4 <= COMMAND_OVERHEAD,
            "{most} bytes beyond the payload"
        );
    }

    /// Every request of a kind [`Encoder::check_request`] does not build, with every member
    /// present or absent, at every alignment of every string.
    fn fixed_overhead_requests() -> Vec<ClientRequestT> {
        let mut all = vec![ClientRequestT::ListDomainsRequest(Box::default())];
        for a in 0..9 {
            all.push(ClientRequestT::SelectDomainRequest(Box::new(
                crate::schema::SelectDomainRequestT {
                    domain: "d".repeat(a),
                },
            )));
            for b in 0..9 {
                for c in 0..9 {
                    for present in [false, true] {
                        all.push(ClientRequestT::SuggestRequest(Box::new(
                            crate::schema::SuggestRequestT {
                                input: "i".repeat(a),
                                cursor: u32::MAX,
                                domain: present.then(|| "d".repeat(b)),
                                page_size: 100,
                                continuation: present.then(|| "c".repeat(c)),
                            },
                        )));
                    }
                }
            }
        }
        all
    }

    #[test]
    fn a_request_of_fixed_overhead_adds_less_than_a_quarter_of_the_bound_to_its_strings() {
        let mut enc = Encoder::new();
        let mut most = 0;
        for request in fixed_overhead_requests() {
            assert!(fixed_overhead(&request));
            let mut cx = WriteCx::new(FRAME_LIMIT);
            request
                .check_variant(&mut cx, "ClientMessage", "request")
                .unwrap();
            let len = enc.encode_request(u64::MAX, &request).unwrap().len();
            most = most.max(len - cx.payload);
        }
        assert!(
            most * 4 <= REQUEST_OVERHEAD,
            "{most} bytes beyond the strings"
        );
    }

    #[test]
    fn a_request_checked_without_its_frame_is_refused_exactly_when_its_frame_would_be() {
        let mut enc = Encoder::new();
        let suggest = |input: usize, page_size: u16| {
            ClientRequestT::SuggestRequest(Box::new(crate::schema::SuggestRequestT {
                input: "i".repeat(input),
                cursor: 0,
                domain: Some("d".into()),
                page_size,
                continuation: None,
            }))
        };
        // The schema's checks are made whether or not the frame is built.
        let bad = suggest(3, 0);
        assert!(enc.encode_request(u64::MAX, &bad).is_err());
        assert_eq!(
            enc.check_request(&bad).map_err(|e| e.to_string()),
            enc.encode_request(u64::MAX, &bad)
                .map(|_| ())
                .map_err(|e| e.to_string())
        );
        // Strings near the frame limit: the frame is built, and the answer is the encoder's,
        // on both sides of the limit (strings are split so none passes the string limit).
        let near = |total: usize| {
            let part = total / 3;
            ClientRequestT::SuggestRequest(Box::new(crate::schema::SuggestRequestT {
                input: "i".repeat(part),
                cursor: 0,
                domain: Some("d".repeat(part)),
                page_size: 1,
                continuation: Some("c".repeat(total - 2 * part)),
            }))
        };
        let mut refused = 0;
        for total in (FRAME_LIMIT - 2 * REQUEST_OVERHEAD..=FRAME_LIMIT).step_by(64) {
            let r = near(total);
            let built = enc.encode_request(u64::MAX, &r).map(|_| ());
            refused += usize::from(built.is_err());
            assert_eq!(
                enc.check_request(&r).map_err(|e| e.to_string()),
                built.map_err(|e| e.to_string()),
                "{total} bytes of strings"
            );
        }
        assert!(refused > 0, "some near the limit are refused");
        // Far below the limit: accepted, as the encoder does, and no frame is built for it
        // (the builder still holds the last frame it finished).
        let last = enc
            .encode_request(7, &ClientRequestT::ListDomainsRequest(Box::default()))
            .unwrap();
        assert!(enc.check_request(&suggest(10, 10)).is_ok());
        assert_eq!(
            enc.fbb.finished_data(),
            &last[..],
            "no frame built to check it"
        );
        assert!(enc
            .check_request(&ClientRequestT::ListDomainsRequest(Box::default()))
            .is_ok());
    }
}
