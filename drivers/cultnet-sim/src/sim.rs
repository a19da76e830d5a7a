//! The seeded simulation: a client [`WriteTracker`] against a receipt server (or a legacy
//! server, or a forwarder in front of one) over a simulated channel.
//!
//! The channel models only the property the spec relies on: the reliable channel delivers every
//! frame of a connection, in order, with a delay, until the connection drops; a frame the client
//! sends on the sequenced channel is marked so (the server must refuse it). The transport of the
//! spec's runtimes is not public, so no more of it is modelled.
//!
//! Everything random comes from the seed. At the end of a run every write must have settled
//! exactly once, every admission (in time or late) must name a write the server committed with
//! that very content on that connection, and the counts of the outcomes are reported.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use cultnet_receipts::frames::{Document, DocumentPut, RawValue};
use cultnet_receipts::hash::{delete_hash, put_hash};
use cultnet_receipts::tracker::{
    BatchOutcome, LateAnswer, Outcome, TrackerLimits, WriteMode, WriteState,
};
use cultnet_receipts::{decode, encode, Frame, WriteHandle, WriteTracker};

use crate::forwarder::Forwarder;
use crate::server::{Channel, Commit, ConnId, Faults, Outgoing, Server, ServerConfig};

/// The simulation's deterministic generator: the workspace's one SplitMix64.
pub use sansio_kit::rng::SplitMix64 as Rng;

/// What one run saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// Writes registered (resends included).
    pub writes: u64,
    /// Settled admitted.
    pub admitted: u64,
    /// Settled refused.
    pub refused: u64,
    /// Settled unconfirmed.
    pub unconfirmed: u64,
    /// Unconfirmed writes that later got an admission.
    pub admitted_late: u64,
    /// Unconfirmed writes that later got a refusal.
    pub refused_late: u64,
    /// Resends under an original id.
    pub resends: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Batches (of two to five puts) checked.
    pub batches: u64,
    /// Frames of a misbehaving client injected (an id reused for other content, a repeated
    /// messageId key).
    pub injected: u64,
    /// Whether the run went through a forwarder.
    pub forwarded: bool,
    /// Whether the server was a legacy one.
    pub legacy: bool,
}

enum Target {
    Direct(Box<Server>),
    Forwarded(Box<Forwarder>),
}

impl Target {
    fn connect(&mut self, actor: &str, now: u64) -> ConnId {
        match self {
            Target::Direct(s) => s.connect(actor, now),
            Target::Forwarded(f) => f.connect(actor, now),
        }
    }
    fn drop_connection(&mut self, c: ConnId) {
        match self {
            Target::Direct(s) => s.drop_connection(c),
            Target::Forwarded(f) => f.drop_connection(c),
        }
    }
    fn on_frame(&mut self, c: ConnId, ch: Channel, b: &[u8], now: u64) {
        match self {
            Target::Direct(s) => s.on_frame(c, ch, b, now),
            Target::Forwarded(f) => f.on_frame(c, ch, b, now),
        }
    }
    fn poll_output(&mut self, now: u64) -> Option<Outgoing> {
        match self {
            Target::Direct(s) => s.poll_output(now),
            Target::Forwarded(f) => f.poll_output(now),
        }
    }
    fn poll_commit(&mut self) -> Option<Commit> {
        match self {
            Target::Direct(s) => s.poll_commit(),
            Target::Forwarded(f) => f.poll_commit(),
        }
    }
    fn server(&mut self) -> &mut Server {
        match self {
            Target::Direct(s) => s,
            Target::Forwarded(f) => f.primary_mut(),
        }
    }
    fn set_lose(&mut self, lose: bool) {
        if let Target::Forwarded(f) = self {
            f.set_lose_primary_answers(lose);
        }
    }
}

struct Written {
    conn: ConnId,
    document: Option<Document>,
}

/// Runs one simulation. `Err` names the seed and the broken invariant.
pub fn run(seed: u64, steps: usize) -> Result<Report, String> {
    let mut rng = Rng::new(seed);
    let fail = |what: String| Err(format!("seed {seed:#x}: {what}"));
    let legacy = rng.chance(20);
    let forwarded = !legacy && rng.chance(30);
    let client_hello = rng.chance(90);
    let small = rng.chance(30);
    let config = ServerConfig {
        receipts: !legacy,
        max_entries_per_session: if small { 6 } else { 1024 },
        max_refusals_per_session: if small { 3 } else { 1024 },
        server_budget_bytes: if small && rng.chance(50) {
            Some(crate::server::ENTRY_BYTES * 10)
        } else {
            Some(crate::server::DEFAULT_SERVER_BUDGET_BYTES)
        },
        commit_delay_ms: if rng.chance(40) { rng.below(400) } else { 0 },
        ..ServerConfig::default()
    };
    let mut server = Server::new(config);
    server.deny("client", "locked");
    let mut target = if forwarded {
        Target::Forwarded(Box::new(Forwarder::new(server, 4096)))
    } else {
        Target::Direct(Box::new(server))
    };
    let mut tracker = WriteTracker::new(TrackerLimits::default(), rng.next_u64());
    if !client_hello {
        // As the real client does: without its receipt hello every connection is legacy.
        tracker = tracker.without_receipt_hello();
    }
    let mut report = Report {
        forwarded,
        legacy,
        ..Report::default()
    };
    let mut now: u64 = 0;
    let mut conn = target.connect("client", now);
    let mut to_server: VecDeque<(u64, Channel, Vec<u8>)> = VecDeque::new();
    let mut to_client: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let hello = |tracker_hello: bool| -> Option<Vec<u8>> {
        tracker_hello.then(|| {
            encode(&Frame::Hello(cultnet_receipts::frames::Hello {
                runtime_id: "sim-client".to_owned(),
                runtime_kind: "client".to_owned(),
                supported_message_versions: Some(vec![
                    cultnet_receipts::frames::WRITE_ADMITTED_V0.to_owned(),
                    cultnet_receipts::frames::ERROR_V1.to_owned(),
                ]),
                ..Default::default()
            }))
            .expect("the hello encodes")
        })
    };
    let latency = |rng: &mut Rng| 1 + rng.below(60);
    if let Some(h) = hello(client_hello) {
        to_server.push_back((now, Channel::ReliableOrdered, h));
    }
    let mut written: BTreeMap<WriteHandle, Written> = BTreeMap::new();
    let mut ledger = Ledger::default();
    let mut batches: Vec<Vec<WriteHandle>> = Vec::new();
    // Ids the misbehaving client reused for other content: the tracker cannot tell whose
    // content an admission under such an id is for, so only the server-side check covers them.
    let mut reused: BTreeSet<(ConnId, String)> = BTreeSet::new();
    let mut settled_count: BTreeMap<WriteHandle, u32> = BTreeMap::new();
    // (conn, id) -> content hashes the server committed under it.
    let mut commits: BTreeMap<(ConnId, String), Vec<[u8; 32]>> = BTreeMap::new();

    for _ in 0..steps {
        now += rng.below(200);
        // Faults come and go.
        if rng.chance(3) {
            let answer_delay_ms = if rng.chance(50) { 0 } else { rng.below(7000) };
            let faults = Faults {
                silent: rng.chance(15),
                answer_delay_ms,
                duplicate_key_receipts: rng.chance(10),
            };
            target.server().set_faults(faults);
            target.set_lose(rng.chance(10));
        }
        let send = |tracker: &mut WriteTracker,
                    rng: &mut Rng,
                    to_server: &mut VecDeque<(u64, Channel, Vec<u8>)>,
                    h: WriteHandle,
                    frame: &Frame| {
            if rng.chance(2) {
                tracker.on_send_failed(h, now);
                return;
            }
            let channel = if rng.chance(3) {
                Channel::Sequenced
            } else {
                Channel::ReliableOrdered
            };
            let at = now + latency(rng);
            let at = at.max(to_server.back().map_or(0, |x| x.0));
            to_server.push_back((
                at,
                channel,
                encode(frame).expect("the tracker's frames encode"),
            ));
            tracker.on_sent(h, now).expect("a new write is sent once");
        };
        match rng.below(100) {
            0..=44 => {
                let n = if rng.chance(20) { 2 + rng.below(4) } else { 1 };
                let mut members = Vec::new();
                for _ in 0..n {
                    let doc = document(&mut rng);
                    let (h, frame) = tracker
                        .put(doc.clone(), WriteMode::Receipt)
                        .map_err(|e| format!("seed {seed:#x}: put: {e}"))?;
                    report.writes += 1;
                    written.insert(
                        h,
                        Written {
                            conn,
                            document: Some(doc),
                        },
                    );
                    send(&mut tracker, &mut rng, &mut to_server, h, &frame);
                    members.push(h);
                }
                if members.len() > 1 {
                    batches.push(members);
                }
            }
            45..=54 => {
                let key = format!("k{}", rng.below(8));
                let (h, frame) = tracker
                    .delete("notes", &key, WriteMode::Receipt)
                    .map_err(|e| format!("seed {seed:#x}: delete: {e}"))?;
                report.writes += 1;
                written.insert(
                    h,
                    Written {
                        conn,
                        document: None,
                    },
                );
                send(&mut tracker, &mut rng, &mut to_server, h, &frame);
            }
            55..=64 => {
                // Resend an unconfirmed write of this session that got no late answer.
                let candidates: Vec<WriteHandle> = written
                    .iter()
                    .filter(|(h, w)| {
                        w.conn == conn
                            && matches!(
                                tracker.state(**h),
                                Some(WriteState::Settled {
                                    outcome: Outcome::Unconfirmed { .. },
                                    late: None
                                })
                            )
                    })
                    .map(|(h, _)| *h)
                    .collect();
                if !candidates.is_empty() {
                    let old = candidates[rng.below(candidates.len() as u64) as usize];
                    let doc = written[&old].document.clone();
                    let r = match doc.clone() {
                        Some(d) => tracker.resend_put(old, d),
                        None => tracker.resend_delete(old),
                    };
                    if let Ok((h, frame)) = r {
                        report.writes += 1;
                        report.resends += 1;
                        written.insert(
                            h,
                            Written {
                                conn,
                                document: doc,
                            },
                        );
                        send(&mut tracker, &mut rng, &mut to_server, h, &frame);
                    }
                }
            }
            68..=70 => {
                // A misbehaving client: an id of this session reused for other content.
                let mine: Vec<(&WriteHandle, &Written)> = written
                    .iter()
                    .filter(|(_, w)| w.conn == conn && w.document.is_some())
                    .collect();
                if !mine.is_empty() {
                    let (h, w) = mine[rng.below(mine.len() as u64) as usize];
                    let mut d = w.document.clone().expect("filtered above");
                    d.payload = RawValue::new(vec![0xc3]).expect("one value");
                    let id = tracker.message_id(*h).expect("kept").to_owned();
                    reused.insert((conn, id.clone()));
                    let frame = Frame::DocumentPut(DocumentPut {
                        message_id: id,
                        document: d,
                    });
                    let at = (now + latency(&mut rng)).max(to_server.back().map_or(0, |x| x.0));
                    to_server.push_back((
                        at,
                        Channel::ReliableOrdered,
                        encode(&frame).expect("encodes"),
                    ));
                    report.injected += 1;
                }
            }
            71 => {
                // A misbehaving client: a put whose messageId key is repeated.
                let mut bytes = encode(&Frame::DocumentPut(DocumentPut {
                    message_id: "dup-a".to_owned(),
                    document: document(&mut rng),
                }))
                .expect("encodes");
                bytes[0] += 1;
                bytes.extend(crate::server::str_bytes("messageId"));
                bytes.extend(crate::server::str_bytes("dup-b"));
                let at = (now + latency(&mut rng)).max(to_server.back().map_or(0, |x| x.0));
                to_server.push_back((at, Channel::ReliableOrdered, bytes));
                report.injected += 1;
            }
            65..=67 => {
                // Reconnect: the old connection and everything in flight on it are gone.
                target.drop_connection(conn);
                to_server.clear();
                to_client.clear();
                tracker.on_session_ended(now);
                tracker.start_session(now);
                conn = target.connect("client", now);
                report.reconnects += 1;
                if let Some(h) = hello(client_hello) {
                    to_server.push_back((now, Channel::ReliableOrdered, h));
                }
            }
            _ => {}
        }
        // Deliver what is due, both ways.
        while to_server.front().is_some_and(|x| x.0 <= now) {
            let (_, ch, bytes) = to_server.pop_front().expect("checked above");
            ledger.delivered(conn, ch, &bytes);
            target.on_frame(conn, ch, &bytes, now);
        }
        while let Some(out) = target.poll_output(now) {
            ledger.answered(&out);
            if out.conn != conn {
                continue;
            }
            let at = (now + latency(&mut rng)).max(to_client.back().map_or(0, |x| x.0));
            to_client.push_back((at, out.bytes));
        }
        while let Some(c) = target.poll_commit() {
            commits
                .entry((c.conn, c.message_id))
                .or_default()
                .push(c.content_hash);
        }
        while to_client.front().is_some_and(|x| x.0 <= now) {
            let (_, bytes) = to_client.pop_front().expect("checked above");
            // A frame that does not read (a duplicate-key receipt) settles nothing.
            if let Ok(frame) = decode(&bytes) {
                tracker.on_frame(&frame, now);
            }
        }
        tracker.on_tick(now);
        while let Some(s) = tracker.poll_settled() {
            *settled_count.entry(s.handle).or_default() += 1;
        }
    }
    // Drain: time passes far beyond every window, then the session ends.
    now += 60_000;
    while to_server.front().is_some() {
        let (_, ch, bytes) = to_server.pop_front().expect("checked above");
        ledger.delivered(conn, ch, &bytes);
        target.on_frame(conn, ch, &bytes, now);
    }
    while let Some(out) = target.poll_output(now) {
        ledger.answered(&out);
        if out.conn == conn {
            if let Ok(frame) = decode(&out.bytes) {
                tracker.on_frame(&frame, now);
            }
        }
    }
    while let Some(c) = target.poll_commit() {
        commits
            .entry((c.conn, c.message_id))
            .or_default()
            .push(c.content_hash);
    }
    tracker.on_session_ended(now);
    while let Some(s) = tracker.poll_settled() {
        *settled_count.entry(s.handle).or_default() += 1;
    }

    // The server never sends more admissions for an id than it took frames carrying content it
    // committed under that id (each frame gets one answer): an admission for other content under
    // an old id would break this.
    for (key, n) in &ledger.admissions {
        let committed = commits.get(key).cloned().unwrap_or_default();
        let backed = ledger
            .frames
            .get(key)
            .map_or(0, |v| v.iter().filter(|h| committed.contains(h)).count());
        if *n > backed {
            return fail(format!(
                "{n} admissions for {key:?} but only {backed} frames with committed content"
            ));
        }
    }
    for (h, w) in &written {
        let n = settled_count.get(h).copied().unwrap_or(0);
        if n != 1 {
            return fail(format!("write {h:?} settled {n} times"));
        }
        let Some(WriteState::Settled { outcome, late }) = tracker.state(*h) else {
            return fail(format!("write {h:?} has no settled state"));
        };
        let admitted =
            matches!(outcome, Outcome::Admitted) || matches!(late, Some(LateAnswer::AdmittedLate));
        match (&outcome, &late) {
            (Outcome::Admitted, _) => report.admitted += 1,
            (Outcome::Refused(_), _) => report.refused += 1,
            (Outcome::Unconfirmed { .. }, l) => {
                report.unconfirmed += 1;
                match l {
                    Some(LateAnswer::AdmittedLate) => report.admitted_late += 1,
                    Some(LateAnswer::RefusedLate(_)) => report.refused_late += 1,
                    _ => {}
                }
            }
            _ => return fail(format!("write {h:?} settled as {outcome:?}")),
        }
        if admitted {
            if legacy {
                return fail(format!("write {h:?} admitted by a legacy server"));
            }
            let id = tracker.message_id(*h).expect("kept").to_owned();
            if reused.contains(&(w.conn, id.clone())) {
                continue;
            }
            let hash = tracker.content_hash(*h).expect("kept");
            match commits.get(&(w.conn, id.clone())) {
                None => return fail(format!("write {h:?} ({id}) admitted but never committed")),
                Some(hs) if !hs.contains(&hash) => {
                    return fail(format!(
                    "write {h:?} ({id}) admitted for content the server never committed under it"
                ))
                }
                Some(_) => {}
            }
        }
    }
    // A batch's result is only the set of its members' outcomes.
    for members in &batches {
        report.batches += 1;
        let outcome = tracker.batch_outcome(members);
        let refused: Vec<WriteHandle> = members
            .iter()
            .copied()
            .filter(|h| {
                matches!(
                    tracker.state(*h),
                    Some(WriteState::Settled {
                        outcome: Outcome::Refused(_),
                        ..
                    })
                )
            })
            .collect();
        let not_admitted: Vec<WriteHandle> = members
            .iter()
            .copied()
            .filter(|h| {
                !matches!(
                    tracker.state(*h),
                    Some(WriteState::Settled {
                        outcome: Outcome::Admitted,
                        ..
                    })
                )
            })
            .collect();
        let expect = if !refused.is_empty() {
            BatchOutcome::Refused(refused)
        } else if !not_admitted.is_empty() {
            BatchOutcome::Unconfirmed(not_admitted)
        } else {
            BatchOutcome::Admitted
        };
        if outcome.as_ref() != Some(&expect) {
            return fail(format!(
                "batch {members:?} is {outcome:?}, its members say {expect:?}"
            ));
        }
    }
    Ok(report)
}

/// What crossed the wire: write frames the server took on the reliable channel (with their
/// content hashes) and admissions it sent, per connection and id.
#[derive(Default)]
struct Ledger {
    frames: BTreeMap<(ConnId, String), Vec<[u8; 32]>>,
    admissions: BTreeMap<(ConnId, String), usize>,
}

impl Ledger {
    fn delivered(&mut self, conn: ConnId, channel: Channel, bytes: &[u8]) {
        if channel == Channel::Sequenced {
            return;
        }
        let (id, hash) = match decode(bytes) {
            Ok(Frame::DocumentPut(p)) => (p.message_id.clone(), put_hash(&p)),
            Ok(Frame::DocumentDelete(d)) => (d.message_id.clone(), delete_hash(&d)),
            _ => return,
        };
        self.frames.entry((conn, id)).or_default().push(hash);
    }

    fn answered(&mut self, out: &Outgoing) {
        if let Ok(Frame::WriteAdmitted(a)) = decode(&out.bytes) {
            *self.admissions.entry((out.conn, a.message_id)).or_default() += 1;
        }
    }
}

fn document(rng: &mut Rng) -> Document {
    let schema = match rng.below(10) {
        0 => "locked",
        1 => "  ",
        _ => "notes",
    };
    let value = rng.below(1000) as u16;
    Document {
        schema_id: schema.to_owned(),
        record_key: format!("k{}", rng.below(8)),
        stored_at: "2026-12-04T00:00:00Z".to_owned(),
        payload: RawValue::new(vec![0xcd, (value >> 8) as u8, value as u8]).expect("one value"),
        source_runtime_id: None,
        source_agent_id: None,
        source_role: None,
        tags: None,
    }
}
