//! A forwarder: a server that takes writes from its peers and forwards them to a primary
//! [`Server`], answering each peer only with what the primary answered (W-31).
//!
//! Each peer connection gets its own connection to the primary under the peer's authenticated
//! actor, so the primary authorizes and dedupes as it would for the peer. The forwarder mints
//! its own id for each forwarded write and keeps the peer's id beside it: the peer's id is used
//! only to echo it back and to find a resend, never trusted by a second parser. A primary answer
//! that names no forwarded write (nil id, unreadable, or none at all) relays nothing.
//!
//! A peer is a receipt peer when its hello, before its first write, lists both receipt frames
//! and the primary keeps the receipt rules; only then does the forwarder's connection to the
//! primary send a receipt hello. A legacy peer gets the old behaviour end to end: its writes go
//! to the primary under its own ids on a legacy connection (no remembered-write limit), and the
//! primary's error.v0 refusals are relayed to it as they are.
//!
//! For a receipt peer the forwarder answers some writes itself, without forwarding them, always
//! with a refusal (never an admission), in the order the primary judges them: an id over 256
//! bytes, a write on the sequenced channel, an id no write_admitted could carry, and a write that
//! names nothing (`message_invalid`), and only then a new id past the peer's id map bounds
//! (`limit_reached`), so a write the primary would refuse for itself never takes a slot.
//! A frame from any peer that does not decode is never forwarded; it is refused once, as the
//! primary refuses one (W-15, W-17: a nil id when its messageId key repeats).

use std::collections::{BTreeMap, VecDeque};

use cultnet_receipts::frames::{
    DocumentDelete, DocumentPut, ErrorV0, ErrorV1, Hello, WriteAdmitted, ERROR_V0, ERROR_V1,
    WRITE_ADMITTED_V0,
};
use cultnet_receipts::message_id::is_valid_admitted_message_id;
use cultnet_receipts::{decode, encode, Frame};

use crate::server::{
    delete_names_nothing, put_names_nothing, unreadable, Channel, Commit, ConnId, Outgoing,
    Refusal, Server, MAX_MESSAGE_ID_BYTES,
};

/// What one id pair costs against a peer's id-map byte bound besides the two ids' bytes.
pub const ID_PAIR_OVERHEAD_BYTES: usize = 64;

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
    /// Peer frames that read but were neither a hello nor a write: not forwarded, not
    /// answered (a frame that does not read is refused, and counted in `refused`).
    pub not_forwarded: u64,
    /// Writes not forwarded because the peer's map of forwarded ids was full (in count or in
    /// bytes): each is refused `limit_reached`.
    pub map_full: u64,
    /// Hellos from a peer after its first write: ignored.
    pub late_hellos: u64,
    /// Frames for peers dropped because the outbox was full.
    pub outbox_dropped: u64,
    /// Writes, and frames that did not read, the forwarder refused itself, without
    /// forwarding them.
    pub refused: u64,
}

#[derive(Debug)]
struct Peer {
    primary: ConnId,
    receipts: bool,
    saw_write: bool,
    /// Bytes the id map holds (both ids of each pair and the pair's overhead).
    id_bytes: usize,
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
    max_id_bytes_per_peer: usize,
    lose_primary_answers: bool,
    outbox: VecDeque<Outgoing>,
    max_outbox: usize,
    /// Bytes of the frames in `outbox`, and their bound.
    outbox_bytes: usize,
    max_outbox_bytes: usize,
    counters: ForwarderCounters,
}

impl Forwarder {
    /// A forwarder in front of `primary`, remembering at most `max_ids_per_peer` forwarded ids
    /// per peer connection, and at most that many times the longest id pair in bytes (see
    /// [`Forwarder::set_max_id_bytes_per_peer`]).
    #[must_use]
    pub fn new(primary: Server, max_ids_per_peer: usize) -> Self {
        Forwarder {
            primary,
            peers: BTreeMap::new(),
            by_primary: BTreeMap::new(),
            next_peer: 0,
            next_id: 0,
            max_ids_per_peer,
            max_id_bytes_per_peer: max_ids_per_peer
                .saturating_mul(2 * MAX_MESSAGE_ID_BYTES + ID_PAIR_OVERHEAD_BYTES),
            lose_primary_answers: false,
            outbox: VecDeque::new(),
            max_outbox: 1 << 16,
            outbox_bytes: 0,
            max_outbox_bytes: 64 << 20,
            counters: ForwarderCounters::default(),
        }
    }

    /// Bounds the bytes of the frames waiting for peers (64 MiB by default); past it a frame is
    /// dropped and counted in [`ForwarderCounters::outbox_dropped`].
    pub fn set_max_outbox_bytes(&mut self, bytes: usize) {
        self.max_outbox_bytes = bytes;
    }

    /// Bounds the bytes of each peer's id map: the two ids of each pair plus
    /// [`ID_PAIR_OVERHEAD_BYTES`].
    pub fn set_max_id_bytes_per_peer(&mut self, bytes: usize) {
        self.max_id_bytes_per_peer = bytes;
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

    /// A peer connection from `actor`; the forwarder's own hello is queued for it, listing
    /// both receipt frames only when the primary keeps the receipt rules.
    pub fn connect(&mut self, actor: &str, now: u64) -> ConnId {
        let peer = ConnId(self.next_peer);
        self.next_peer += 1;
        let primary = self.primary.connect(actor, now);
        let bytes = forwarder_hello(self.primary.implements_receipts());
        self.push_out(Outgoing { conn: peer, bytes });
        self.peers.insert(
            peer,
            Peer {
                primary,
                receipts: false,
                saw_write: false,
                id_bytes: 0,
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
        self.outbox_bytes = self.outbox.iter().map(|o| o.bytes.len()).sum();
    }

    /// A frame from a peer.
    pub fn on_frame(&mut self, peer: ConnId, channel: Channel, bytes: &[u8], now: u64) {
        let Some(p) = self.peers.get_mut(&peer) else {
            return;
        };
        match decode(bytes) {
            Ok(Frame::Hello(h)) => {
                if p.saw_write {
                    self.counters.late_hellos += 1;
                    return;
                }
                p.receipts = self.primary.implements_receipts() && h.is_receipt_capable();
                // The connection to the primary says what the peer said.
                let hello = forwarder_hello(p.receipts);
                let primary = p.primary;
                self.primary
                    .on_frame(primary, Channel::ReliableOrdered, &hello, now);
                id_drain(self, now);
            }
            Ok(Frame::DocumentPut(w)) => {
                p.saw_write = true;
                let blank = put_names_nothing(&w);
                self.on_write(peer, channel, &w.message_id.clone(), blank, now, |id| {
                    Frame::DocumentPut(DocumentPut {
                        message_id: id,
                        document: w.document,
                    })
                });
            }
            Ok(Frame::DocumentDelete(w)) => {
                p.saw_write = true;
                let blank = delete_names_nothing(&w);
                self.on_write(peer, channel, &w.message_id.clone(), blank, now, |id| {
                    Frame::DocumentDelete(DocumentDelete {
                        message_id: id,
                        schema_id: w.schema_id,
                        record_key: w.record_key,
                    })
                });
            }
            Ok(_) => self.counters.not_forwarded += 1,
            Err(e) => {
                // Refused here as the primary would refuse it, once (W-15, W-17): a frame that
                // does not decode is never forwarded.
                let u = unreadable(bytes, &e, p.receipts, channel);
                p.saw_write |= u.is_write;
                self.refuse(peer, u.id.as_deref(), u.refusal);
            }
        }
    }

    /// Forwards a peer's write, made by `make` from the id it travels under: a legacy peer's
    /// under its own id; a receipt peer's under a forwarded id, unless the forwarder refuses it.
    /// `blank`: the write names nothing (W-27).
    fn on_write(
        &mut self,
        peer: ConnId,
        channel: Channel,
        id: &str,
        blank: bool,
        now: u64,
        make: impl FnOnce(String) -> Frame,
    ) {
        let (max, max_bytes) = (self.max_ids_per_peer, self.max_id_bytes_per_peer);
        let p = self.peers.get_mut(&peer).expect("checked by the caller");
        if !p.receipts {
            self.forward(peer, channel, &make(id.to_owned()), now);
            return;
        }
        // The peer's own id is judged, as the primary would judge it (W-22, W-7).
        if id.len() > MAX_MESSAGE_ID_BYTES {
            self.refuse(peer, Some(id), Refusal::IdTooLong);
            return;
        }
        // The channel next, as the primary judges it (W-30): a write on the sequenced channel is
        // refused here, before it takes a slot of the id map, so it is never refused
        // limit_reached instead.
        if channel == Channel::Sequenced {
            self.refuse(peer, Some(id), Refusal::Channel);
            return;
        }
        if !is_valid_admitted_message_id(id) {
            self.refuse(peer, Some(id), Refusal::Unreadable);
            return;
        }
        // A write that names nothing is refused as a frame that does not read is, here as at the
        // primary, and takes no slot of the id map either (W-27).
        if blank {
            self.refuse(peer, Some(id), Refusal::Unreadable);
            return;
        }
        let Some(fid) = Self::forwarded_id(p, id, &mut self.next_id, max, max_bytes) else {
            self.counters.map_full += 1;
            self.refuse(peer, Some(id), Refusal::LimitReached);
            return;
        };
        self.forward(peer, channel, &make(fid), now);
    }

    /// Answers a peer's write with a refusal of the forwarder's own, before anything is
    /// forwarded: error.v1 with the write's id to a receipt peer, error.v0 to a legacy one.
    fn refuse(&mut self, peer: ConnId, id: Option<&str>, refusal: Refusal) {
        let receipts = self.peers.get(&peer).is_some_and(|p| p.receipts);
        match encode(&refusal.frame(receipts, id)) {
            Ok(bytes) => {
                self.counters.refused += 1;
                self.push_out(Outgoing { conn: peer, bytes });
            }
            Err(_) => self.counters.unrelayable += 1,
        }
    }

    fn forwarded_id(
        p: &mut Peer,
        peer_id: &str,
        next_id: &mut u64,
        max: usize,
        max_bytes: usize,
    ) -> Option<String> {
        if let Some(f) = p.by_peer.get(peer_id) {
            return Some(f.clone());
        }
        let f = format!("fwd-{:x}", *next_id);
        let cost = peer_id.len() + f.len() + ID_PAIR_OVERHEAD_BYTES;
        if p.by_peer.len() >= max || p.id_bytes + cost > max_bytes {
            return None;
        }
        p.id_bytes += cost;
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
        let o = self.outbox.pop_front()?;
        self.outbox_bytes -= o.bytes.len();
        Some(o)
    }

    /// The next commit of the primary, in terms of the peer: its connection and its own id.
    pub fn poll_commit(&mut self) -> Option<Commit> {
        loop {
            let c = self.primary.poll_commit()?;
            let Some(peer) = self.by_primary.get(&c.conn) else {
                continue;
            };
            let p = &self.peers[peer];
            // A legacy peer's writes travel under its own ids.
            let id = if p.receipts {
                let Some(id) = p.by_forwarded.get(&c.message_id) else {
                    continue;
                };
                id.clone()
            } else {
                c.message_id
            };
            return Some(Commit {
                conn: *peer,
                message_id: id,
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
            // A legacy peer's connection to the primary is legacy too: its refusals come as
            // error.v0 and go to the peer as they are.
            Ok(Frame::ErrorV0(_)) if !p.receipts => {
                self.counters.relayed += 1;
                self.push_out(Outgoing {
                    conn: peer,
                    bytes: out.bytes.clone(),
                });
                return;
            }
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
        if self.outbox.len() >= self.max_outbox
            || self.outbox_bytes + out.bytes.len() > self.max_outbox_bytes
        {
            self.counters.outbox_dropped += 1;
        } else {
            self.outbox_bytes += out.bytes.len();
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

/// The forwarder's hello, to a peer or to the primary: it lists both receipt frames only when
/// `receipts`.
fn forwarder_hello(receipts: bool) -> Vec<u8> {
    let versions = if receipts {
        vec![WRITE_ADMITTED_V0.to_owned(), ERROR_V1.to_owned()]
    } else {
        vec![ERROR_V0.to_owned()]
    };
    let hello = Hello {
        runtime_id: "forwarder".to_owned(),
        runtime_kind: "server".to_owned(),
        supported_message_versions: Some(versions),
        ..Hello::default()
    };
    encode(&Frame::Hello(hello)).expect("the forwarder's hello has its names")
}
