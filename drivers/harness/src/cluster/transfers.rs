//! Writing replies: one frame, or transfer parts (with other frames between them) when the
//! reply is larger than the part size or the `transfer_parts` fault strikes.

use super::*;
use nervix_protocol::limits::{FRAME_LIMIT, TRANSFER_LIMIT};

/// The largest chunk a transfer part carries: the frame limit less room for the part's own
/// fields.
pub(super) const MAX_PART: usize = FRAME_LIMIT - 1024;

impl SimCluster {
    /// Writes a reply, applying the `violation` and `transfer_parts` faults, and queues it.
    pub(super) fn emit_reply(
        &mut self,
        conn: ConnId,
        request_id: u64,
        body: ReplyBodyT,
        stage: Option<CancellationStage>,
        counted: bool,
    ) -> String {
        let msg = ServerMessageT {
            body: ServerBodyT::Reply(Box::new(ReplyT { request_id, body })),
        };
        let whole = self
            .encoder
            .encode_with_limit::<ServerMessageRoot>(&msg, TRANSFER_LIMIT)
            .expect("the simulated cluster writes valid replies");
        let mut notes = String::new();
        let frames = if self.chance(self.config.faults.violation) {
            let (bad, how) = self.malformed(&whole);
            notes.push_str(&format!(" [fault violation: {how}]"));
            vec![bad]
        } else {
            let forced = self.chance(self.config.faults.transfer_parts);
            if forced || whole.len() > self.part_size {
                let size = if forced {
                    let k = 2 + (self.rng.next_u64() % 3) as usize;
                    whole.len().div_ceil(k).min(self.part_size)
                } else {
                    self.part_size
                };
                let parts = self.split(request_id, &whole, size);
                notes.push_str(&format!(
                    " [{} transfer parts{}]",
                    parts.len(),
                    if forced { ", fault transfer_parts" } else { "" }
                ));
                parts
            } else {
                vec![whole]
            }
        };
        let n = frames.len();
        for (i, frame) in frames.into_iter().enumerate() {
            if i > 0 {
                // Other frames may arrive between the parts of one reply (F-7).
                let notice = ServerMessageT {
                    body: ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
                        level: Some(NoticeLevel::Info),
                        message: format!("between parts {i} and {} of request {request_id}", i + 1),
                    })),
                };
                let notice = self
                    .encoder
                    .encode::<ServerMessageRoot>(&notice)
                    .expect("notice frame");
                self.out.push_back(Queued {
                    conn,
                    output: Output::Frame(notice),
                    request: None,
                    counted: false,
                    frames: 1,
                    terminal: true,
                    stage: None,
                });
            }
            self.out.push_back(Queued {
                conn,
                output: Output::Frame(frame),
                request: Some(request_id),
                counted,
                frames: n,
                terminal: i + 1 == n,
                stage,
            });
        }
        if counted {
            if let Some(s) = self.sessions.get_mut(&conn) {
                s.in_flight.insert(request_id);
            }
        }
        notes
    }

    pub(super) fn split(&mut self, request_id: u64, whole: &[u8], size: usize) -> Vec<Bytes> {
        let total = whole.len() as u64;
        let mut frames = Vec::new();
        for (i, chunk) in whole.chunks(size.max(1)).enumerate() {
            let part = ServerMessageT {
                body: ServerBodyT::Reply(Box::new(ReplyT {
                    request_id,
                    body: ReplyBodyT::TransferPart(Box::new(TransferPartT {
                        total_bytes: total,
                        offset: (i * size) as u64,
                        chunk: chunk.to_vec(),
                    })),
                })),
            };
            frames.push(
                self.encoder
                    .encode::<ServerMessageRoot>(&part)
                    .expect("transfer part frame"),
            );
        }
        frames
    }
}
