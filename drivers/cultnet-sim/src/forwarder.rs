//! A forwarder: a server that takes writes from its peers and forwards them to a primary
//! [`Server`], answering each peer only with what the primary answered (W-31).
//!
//! Each peer connection gets its own connection to the primary under the peer's authenticated
//! actor, so the primary authorizes and dedupes as it would for the peer. The forwarder mints
//! its own id for each forwarded write and keeps the peer's id beside it: the peer's id is used
//! only to echo it back and to find a resend, never trusted by a second parser. A primary answer
//! that names no forwarded write (nil id, unreadable, or none at all) relays nothing.

use std::collections::{BTreeMap, VecDeque};

use cultnet_receipts::frames::ErrorDetails;
use cultnet_receipts::frames::{
    DocumentDelete, DocumentPut, ErrorV0, ErrorV1, Hello, WriteAdmitted, ERROR_V1,
    WRITE_ADMITTED_V0,
};
use cultnet_receipts::message_id::is_valid_admitted_message_id;
use cultnet_receipts::{decode, encode, Frame};

use crate::server::{Channel, Commit, ConnId, Outgoing, Refusal, Server};

/// Counters of a forwarder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ForwarderCounters {
    /// Writes forwarded to the primary.
    pub forwarded: u64,
    /// Answers relayed to a peer.
    pub relayed: u64,
    /// Primary answers that named no forwarded write (or did not read): relayed nothing.
    pub unrelayable: u64,
    /// Primary answers dropped by the lost-answer fault.
    pub lost: u64,
    /// Peer frames that did not read or were not writes: not forwarded, not answered.
    pub not_forwarded: u64,
    /// Writes not forwarded because the peer's map of forwarded ids was full.
    pub map_full: u64,
    /// Frames for peers dropped because the outbox was full.
    pub outbox_dropped: u64,
    /// Writes the forwarder refused itself, without forwarding them.
    pub refused: u64,
}

#[derive(Debug)]
struct Peer {
    primary: ConnId,
    receipts: bool,
    /// Forwarded id -> the peer's id.
    by_forwarded: BTreeMap<String, String>,
    /// The peer's id -> forwarded id.
    by_peer: BTreeMap<String, String>,
}

/// The forwarder model.
#[derive(Debug)]
pub struct Forwarder {
    primary: Server,
    peers: BTreeMap<ConnId, Peer>,
    /// Primary connection -> peer connection.
    by_primary: BTreeMap<ConnId, ConnId>,
    next_peer: u64,
    next_id: u64,
    max_ids_per_peer: usize,
    lose_primary_answers: bool,
    outbox: VecDeque<Outgoing>,
    max_outbox: usize,
    counters: ForwarderCounters,
}

impl Forwarder {
    /// A forwarder in front of `primary`, remembering at most `max_ids_per_peer` forwarded ids
    /// per peer connection.
    #[must_use]
    pub fn new(primary: Server, max_ids_per_peer: usize) -> Self {
        Forwarder {
            primary,
            peers: BTreeMap::new(),
            by_primary: BTreeMap::new(),
            next_peer: 0,
            next_id: 0,
            max_ids_per_peer,
            lose_primary_answers: false,
            outbox: VecDeque::new(),
            max_outbox: 1 << 16,
            counters: ForwarderCounters::default(),
        }
    }

    /// The primary.
    pub fn primary_mut(&mut self) -> &mut Server {
        &mut self.primary
    }

    /// The counters.
    #[must_use]
    pub fn counters(&self) -> ForwarderCounters {
        self.counters
    }

    /// The fault where the primary's answers never reach the forwarder.
    pub fn set_lose_primary_answers(&mut self, lose: bool) {
        self.lose_primary_answers = lose;
    }

    /// A peer connection from `actor`; the forwarder's own hello (listing both receipt frames)
    /// is queued for it.
    pub fn connect(&mut self, actor: &str, now: u64) -> ConnId {
        let peer = ConnId(self.next_peer);
        self.next_peer += 1;
        let primary = self.primary.connect(actor, now);
        let hello = Hello {
            runtime_id: "forwarder".to_owned(),
            runtime_kind: "server".to_owned(),
            supported_message_versions: Some(vec![
                WRITE_ADMITTED_V0.to_owned(),
                ERROR_V1.to_owned(),
            ]),
            ..Hello::default()
        };
        let bytes = encode(&Frame::Hello(hello.clone())).expect("the hello encodes");
        // The forwarder's connection to the primary is receipt-capable.
        self.primary
            .on_frame(primary, Channel::ReliableOrdered, &bytes, now);
        self.push_out(Outgoing { conn: peer, bytes });
        self.peers.insert(
            peer,
            Peer {
                primary,
                receipts: false,
                by_forwarded: BTreeMap::new(),
                by_peer: BTreeMap::new(),
            },
        );
        self.by_primary.insert(primary, peer);
        id_drain(self, now);
        peer
    }

    /// The peer's connection dropped: so does its connection to the primary.
    pub fn drop_connection(&mut self, peer: ConnId) {
        if let Some(p) = self.peers.remove(&peer) {
            self.by_primary.remove(&p.primary);
            self.primary.drop_connection(p.primary);
        }
        self.outbox.retain(|o| o.conn != peer);
    }

    /// A frame from a peer.
    pub fn on_frame(&mut self, peer: ConnId, channel: Channel, bytes: &[u8], now: u64) {
        let Some(p) = self.peers.get_mut(&peer) else {
            return;
        };
        match decode(bytes) {
            Ok(Frame::Hello(h)) => p.receipts = h.is_receipt_capable(),
            Ok(Frame::DocumentPut(w)) => {
                if p.receipts && !is_valid_admitted_message_id(&w.message_id) {
                    self.refuse(peer, &w.message_id, Refusal::Unreadable);
                    return;
                }
                let Some(fid) =
                    Self::forwarded_id(p, &w.message_id, &mut self.next_id, self.max_ids_per_peer)
                else {
                    self.counters.map_full += 1;
                    return;
                };
                let fwd = Frame::DocumentPut(DocumentPut {
                    message_id: fid,
                    document: w.document.clone(),
                });
                self.forward(peer, channel, &fwd, now);
            }
            Ok(Frame::DocumentDelete(w)) => {
                if p.receipts && !is_valid_admitted_message_id(&w.message_id) {
                    self.refuse(peer, &w.message_id, Refusal::Unreadable);
                    return;
                }
                let Some(fid) =
                    Self::forwarded_id(p, &w.message_id, &mut self.next_id, self.max_ids_per_peer)
                else {
                    self.counters.map_full += 1;
                    return;
                };
                let fwd = Frame::DocumentDelete(DocumentDelete {
                    message_id: fid,
                    schema_id: w.schema_id.clone(),
                    record_key: w.record_key.clone(),
                });
                self.forward(peer, channel, &fwd, now);
            }
            _ => self.counters.not_forwarded += 1,
        }
    }

    /// Answers a peer's write with a refusal of the forwarder's own, before anything is
    /// forwarded: error.v1 with the write's id to a receipt peer, error.v0 to a legacy one.
    fn refuse(&mut self, peer: ConnId, id: &str, refusal: Refusal) {
        let receipts = self.peers.get(&peer).is_some_and(|p| p.receipts);
        let (code, text, field) = refusal.parts();
        let details = field.map(|f| ErrorDetails {
            field: Some(f.to_owned()),
        });
        let frame = if receipts {
            Frame::ErrorV1(ErrorV1 {
                message_id: Some(id.to_owned()).filter(|i| !i.is_empty()),
                error: text.to_owned(),
                code: Some(code.to_owned()),
                details,
            })
        } else {
            Frame::ErrorV0(ErrorV0 {
                error: text.to_owned(),
                code: Some(code.to_owned()),
                details,
            })
        };
        match encode(&frame) {
            Ok(bytes) => {
                self.counters.refused += 1;
                self.push_out(Outgoing { conn: peer, bytes });
            }
            Err(_) => self.counters.unrelayable += 1,
        }
    }

    fn forwarded_id(p: &mut Peer, peer_id: &str, next_id: &mut u64, max: usize) -> Option<String> {
        if let Some(f) = p.by_peer.get(peer_id) {
            return Some(f.clone());
        }
        if p.by_peer.len() >= max {
            return None;
        }
        let f = format!("fwd-{:x}", *next_id);
        *next_id += 1;
        p.by_peer.insert(peer_id.to_owned(), f.clone());
        p.by_forwarded.insert(f.clone(), peer_id.to_owned());
        Some(f)
    }

    fn forward(&mut self, peer: ConnId, channel: Channel, frame: &Frame, now: u64) {
        let primary = self.peers[&peer].primary;
        let bytes = encode(frame).expect("a decoded write encodes");
        self.counters.forwarded += 1;
        self.primary.on_frame(primary, channel, &bytes, now);
        id_drain(self, now);
    }

    /// Advances time (the primary commits what is due) and relays what the primary answered.
    pub fn on_tick(&mut self, now: u64) {
        self.primary.on_tick(now);
        id_drain(self, now);
    }

    /// The next frame for a peer.
    pub fn poll_output(&mut self, now: u64) -> Option<Outgoing> {
        self.on_tick(now);
        self.outbox.pop_front()
    }

    /// The next commit of the primary, in terms of the peer: its connection and its own id.
    pub fn poll_commit(&mut self) -> Option<Commit> {
        loop {
            let c = self.primary.poll_commit()?;
            let Some(peer) = self.by_primary.get(&c.conn) else {
                continue;
            };
            let Some(id) = self.peers[peer].by_forwarded.get(&c.message_id) else {
                continue;
            };
            return Some(Commit {
                conn: *peer,
                message_id: id.clone(),
                content_hash: c.content_hash,
            });
        }
    }

    fn relay(&mut self, out: &Outgoing) {
        let Some(peer) = self.by_primary.get(&out.conn).copied() else {
            self.counters.unrelayable += 1;
            return;
        };
        let p = &self.peers[&peer];
        let frame = match decode(&out.bytes) {
            Ok(Frame::Hello(_)) => return,
            Ok(Frame::WriteAdmitted(a)) => match p.by_forwarded.get(&a.message_id) {
                Some(id) if p.receipts => Frame::WriteAdmitted(WriteAdmitted {
                    message_id: id.clone(),
                    ..a
                }),
                // A legacy peer gets no receipt.
                Some(_) => return,
                None => {
                    self.counters.unrelayable += 1;
                    return;
                }
            },
            Ok(Frame::ErrorV1(ErrorV1 {
                message_id: Some(fid),
                error,
                code,
                details,
            })) => match p.by_forwarded.get(&fid) {
                Some(id) if p.receipts => Frame::ErrorV1(ErrorV1 {
                    message_id: Some(id.clone()),
                    error,
                    code,
                    details,
                }),
                Some(_) => Frame::ErrorV0(ErrorV0 {
                    error,
                    code,
                    details,
                }),
                None => {
                    self.counters.unrelayable += 1;
                    return;
                }
            },
            // Nil ids, error.v0 and frames that do not read name no write: nothing is relayed.
            _ => {
                self.counters.unrelayable += 1;
                return;
            }
        };
        // A legacy peer never sees limit_reached in an error.v0 (the code exists only in v1).
        let Ok(bytes) = encode(&frame) else {
            self.counters.unrelayable += 1;
            return;
        };
        self.counters.relayed += 1;
        self.push_out(Outgoing { conn: peer, bytes });
    }

    fn push_out(&mut self, out: Outgoing) {
        if self.outbox.len() >= self.max_outbox {
            self.counters.outbox_dropped += 1;
        } else {
            self.outbox.push_back(out);
        }
    }
}

fn id_drain(f: &mut Forwarder, now: u64) {
    while let Some(out) = f.primary.poll_output(now) {
        if f.lose_primary_answers {
            f.counters.lost += 1;
            continue;
        }
        f.relay(&out);
    }
}
