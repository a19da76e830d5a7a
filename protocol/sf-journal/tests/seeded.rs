//! The seeded simulation of the journal with a server: the engine (ring and dictionary), an
//! in-memory slot directory standing for the page cache (what a killed process wrote is
//! there, torn writes included), and a server model that reads the wire, keeps the
//! dictionary the catch-up frame gave it, acknowledges on a seeded schedule, sends retriable
//! errors, and loses connections with frames and statuses in flight. The client crashes at any
//! write boundary of any operation (appends, trims, watermark writes, recovery's own repairs),
//! sometimes in the middle of a write, and restarts through recovery.
//!
//! After every step: every frame the producer was told was appended is acknowledged (and then
//! the server holds it) or still in the journal with its bytes; each connection carries the
//! catch-up frame first and then the unacknowledged frames in strict FSN order from the first
//! unacknowledged one; a frame's symbol ids mean on the server what they meant at append.
//! At the end everything is drained and the server holds every promised frame.
//!
//! `SF_SIM_SEEDS` seeds from `SF_SIM_SEED_BASE` (200 from 0 by default; `just sf-soak` runs
//! many more), or the one seed `SF_SIM_SEED`. A failure names its seed.

mod common;
use common::*;

use std::collections::{BTreeMap, VecDeque};

use sf_journal::dict::SymbolDict;
use sf_journal::recovery::recover;
use sf_journal::ring::{Ring, RingConfig};
use sf_journal::status::ErrorStatus;
use sf_journal::{FileOp, MemDir};

/// splitmix64: a small seeded generator, so a seed replays exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

const SYMBOLS: [&str; 7] = ["eu", "us", "ap", "btc", "eth", "sol", "x"];
const CATCH_UP: &[u8] = b"QWP1C";

fn cfg() -> RingConfig {
    RingConfig {
        segment_bytes: 160,
        max_total_bytes: 160 * 10,
        append_deadline_millis: 5,
    }
}

/// A frame: `QWP1F`, its serial, then each symbol as id and name (the name lets the server
/// check the id against its dictionary; the journal never reads either).
fn encode(serial: u64, ids: &[u32], names: &[&str]) -> Vec<u8> {
    let mut f = b"QWP1F".to_vec();
    f.extend_from_slice(&serial.to_le_bytes());
    f.push(ids.len() as u8);
    for (id, n) in ids.iter().zip(names) {
        f.extend_from_slice(&id.to_le_bytes());
        f.push(n.len() as u8);
        f.extend_from_slice(n.as_bytes());
    }
    f
}

fn decode(f: &[u8]) -> (u64, Vec<(u32, String)>) {
    assert_eq!(&f[..5], b"QWP1F");
    let serial = u64::from_le_bytes(f[5..13].try_into().unwrap());
    let n = f[13] as usize;
    let mut at = 14;
    let mut syms = Vec::new();
    for _ in 0..n {
        let id = u32::from_le_bytes(f[at..at + 4].try_into().unwrap());
        let len = f[at + 4] as usize;
        let name = String::from_utf8(f[at + 5..at + 5 + len].to_vec()).unwrap();
        at += 5 + len;
        syms.push((id, name));
    }
    (serial, syms)
}

fn catch_up_frame(symbols: &[String]) -> Vec<u8> {
    let mut f = CATCH_UP.to_vec();
    for s in symbols {
        f.push(s.len() as u8);
        f.extend_from_slice(s.as_bytes());
    }
    f
}

fn catch_up_symbols(f: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = CATCH_UP.len();
    while at < f.len() {
        let len = f[at] as usize;
        out.push(String::from_utf8(f[at + 1..at + 1 + len].to_vec()).unwrap());
        at += 1 + len;
    }
    out
}

/// What the server sends back.
enum Back {
    Ok(u64),
    Error(u64),
}

/// One connection: what is in flight either way, and the server's view of it.
struct Wire {
    to_server: VecDeque<Vec<u8>>,
    to_client: VecDeque<Back>,
    /// The server's wire sequence counter and dictionary on this connection.
    server_seq: u64,
    server_dict: Option<Vec<String>>,
    /// The last FSN the server read on this connection.
    last_fsn: Option<i64>,
    /// The first FSN the client was to send: acked + 1 at connect.
    first_fsn: i64,
    /// Everything published when the connection was made (ids of these frames need the
    /// catch-up frame).
    published_at_connect: i64,
    /// The highest wire sequence the server acknowledged on it.
    acked_seq: Option<u64>,
    /// The server sent an error and reads nothing more.
    refused: bool,
}

/// Symbol ids with the names they stand for.
type Meanings = Vec<(u32, String)>;

struct Sim {
    rng: Rng,
    seed: u64,
    dir: MemDir,
    ring: Ring,
    dict: SymbolDict,
    generation: u64,
    now: u64,
    serial: u64,
    /// FSN to bytes of every frame whose append returned.
    promised: BTreeMap<i64, Vec<u8>>,
    /// The frame of an append cut by a crash, with the ids it gave: it may or may not come
    /// back.
    maybe: Option<(i64, Vec<u8>, Meanings)>,
    /// What the server received, by FSN (the bytes of the first copy).
    received: BTreeMap<i64, Vec<u8>>,
    /// The symbol each id stood for when a frame used it.
    meaning: BTreeMap<u32, String>,
    wire: Option<Wire>,
    crashes: u32,
    connections: u32,
    duplicates: u64,
}

impl Sim {
    fn new(seed: u64) -> Self {
        Self {
            rng: Rng(seed),
            seed,
            dir: MemDir::new(),
            ring: Ring::new(cfg()),
            dict: SymbolDict::new(),
            generation: 0,
            now: 0,
            serial: 0,
            promised: BTreeMap::new(),
            maybe: None,
            received: BTreeMap::new(),
            meaning: BTreeMap::new(),
            wire: None,
            crashes: 0,
            connections: 0,
            duplicates: 0,
        }
    }

    /// Carries out `ops`; sometimes the process dies after some of them (possibly in the middle
    /// of a write). Returns whether it died.
    fn apply(&mut self, ops: &[FileOp], crash_one_in: u64) -> bool {
        if !self.rng.one_in(crash_one_in) {
            self.dir.apply_all(ops);
            return false;
        }
        let keep = self.rng.below(ops.len() as u64 + 1) as usize;
        self.dir.apply_all(&ops[..keep]);
        if let Some(FileOp::Write {
            file,
            offset,
            bytes,
        }) = ops.get(keep)
        {
            // A torn write: a prefix of it reached the page cache. Not of a segment's 24-byte
            // header: recovery refuses a half-written header (only an all-zero one is a
            // spare), and a write that small does not tear when a process dies.
            if *offset == 0 && file.ends_with(".sfa") {
                return true;
            }
            let cut = self.rng.below(bytes.len() as u64) as usize;
            self.dir.apply(&FileOp::Write {
                file: file.clone(),
                offset: *offset,
                bytes: bytes[..cut].to_vec(),
            });
        }
        true
    }

    fn read(&self, fsn: i64) -> Option<Vec<u8>> {
        let loc = self.ring.locate(fsn)?;
        let f = self.dir.get(&loc.file)?;
        Some(
            f.get(loc.offset as usize..)?
                .get(..loc.len as usize)?
                .to_vec(),
        )
    }

    fn append(&mut self) {
        let n = self.rng.below(3) as usize;
        let names: Vec<&str> = (0..n)
            .map(|_| SYMBOLS[self.rng.below(SYMBOLS.len() as u64) as usize])
            .collect();
        self.serial += 1;
        let serial = self.serial;
        let fsn = self.ring.published_fsn() + 1;
        let r = self.ring.append_with_symbols(
            &mut self.dict,
            &names,
            |ids| encode(serial, ids, &names),
            self.now,
        );
        let Ok((ids, a)) = r else { return };
        assert_eq!(a.fsn, fsn, "seed {}: FSNs are assigned in order", self.seed);
        let bytes = encode(serial, &ids, &names);
        let meant: Vec<(u32, String)> = ids
            .iter()
            .zip(&names)
            .map(|(i, n)| (*i, (*n).to_owned()))
            .collect();
        if self.apply(&a.ops, 30) {
            self.maybe = Some((fsn, bytes, meant));
            self.restart();
        } else {
            self.promised.insert(fsn, bytes);
            self.learn(meant);
        }
    }

    /// The ids a journalled frame uses keep their meaning for good.
    fn learn(&mut self, meant: Vec<(u32, String)>) {
        for (id, name) in meant {
            if let Some(was) = self.meaning.insert(id, name.clone()) {
                assert_eq!(was, name, "seed {}: id {id} changed meaning", self.seed);
            }
        }
    }

    fn connect(&mut self) {
        if self.wire.is_some() {
            return;
        }
        let catch = (!self.dict.symbols().is_empty()).then(|| catch_up_frame(self.dict.symbols()));
        let w = self.ring.connect(u64::from(catch.is_some()));
        self.connections += 1;
        let mut wire = Wire {
            to_server: VecDeque::new(),
            to_client: VecDeque::new(),
            server_seq: 0,
            server_dict: None,
            last_fsn: None,
            first_fsn: w.fsn_at_zero,
            published_at_connect: self.ring.published_fsn(),
            acked_seq: None,
            refused: false,
        };
        wire.to_server.extend(catch);
        if std::env::var("SF_SIM_TRACE").is_ok() {
            eprintln!("connect at {} catch-up {}", w.fsn_at_zero, w.catch_up);
        }
        self.wire = Some(wire);
    }

    fn send(&mut self) {
        if self.wire.is_none() {
            return;
        }
        for _ in 0..self.rng.below(6) {
            let Some((fsn, _)) = self.ring.next_to_send() else {
                break;
            };
            let bytes = self.read(fsn).expect("a frame to send is in storage");
            if std::env::var("SF_SIM_TRACE").is_ok() {
                eprintln!("send {fsn} serial {}", decode(&bytes).0);
            }
            self.wire.as_mut().unwrap().to_server.push_back(bytes);
        }
    }

    /// The server reads what arrived and answers on its schedule.
    fn serve(&mut self) {
        let seed = self.seed;
        let Some(w) = self.wire.as_mut() else { return };
        let n = self.rng.below(6);
        for _ in 0..n {
            if w.refused {
                w.to_server.clear();
                break;
            }
            let Some(f) = w.to_server.pop_front() else {
                break;
            };
            let seq = w.server_seq;
            w.server_seq += 1;
            if f.starts_with(CATCH_UP) {
                assert!(
                    seq == 0 && w.server_dict.is_none(),
                    "seed {seed}: the catch-up frame comes first"
                );
                w.server_dict = Some(catch_up_symbols(&f));
                continue;
            }
            let (_, syms) = decode(&f);
            let fsn = if let Some(last) = w.last_fsn {
                last + 1
            } else {
                w.first_fsn
            };
            // Strict FSN order from the first unacknowledged frame: the server can tell the
            // FSN of what it reads by counting.
            let dict = w.server_dict.clone().unwrap_or_default();
            for (id, name) in &syms {
                if (*id as usize) < dict.len() {
                    assert_eq!(
                        &dict[*id as usize], name,
                        "seed {seed}: id {id} on the wire"
                    );
                } else {
                    assert!(
                        fsn > w.published_at_connect,
                        "seed {seed}: frame {fsn} uses id {id} the catch-up frame lacked"
                    );
                }
            }
            w.last_fsn = Some(fsn);
            if std::env::var("SF_SIM_TRACE").is_ok() {
                eprintln!("server reads {fsn} serial {} seq {seq}", decode(&f).0);
            }
            if let Some(first) = self.received.get(&fsn) {
                assert_eq!(
                    first, &f,
                    "seed {seed}: FSN {fsn} came back with other bytes"
                );
                self.duplicates += 1;
            } else {
                self.received.insert(fsn, f);
            }
            if self.rng.one_in(25) {
                w.to_client.push_back(Back::Error(seq));
                w.refused = true;
            } else if self.rng.one_in(2) {
                w.acked_seq = Some(seq);
                w.to_client.push_back(Back::Ok(seq));
            }
        }
    }

    /// The client reads the server's answers.
    fn read_back(&mut self) {
        for _ in 0..self.rng.below(4) {
            let Some(back) = self.wire.as_mut().and_then(|w| w.to_client.pop_front()) else {
                return;
            };
            match back {
                Back::Ok(seq) => {
                    let ops = self
                        .ring
                        .ok(seq)
                        .expect("the server acknowledges what it read");
                    if self.apply(&ops, 20) {
                        self.restart();
                        return;
                    }
                }
                Back::Error(seq) => {
                    let _ = self
                        .ring
                        .reject(seq, ErrorStatus::WriteError)
                        .expect("the server refuses what it read");
                    self.drop_wire();
                    return;
                }
            }
        }
    }

    fn drop_wire(&mut self) {
        self.wire = None;
        self.ring.disconnect();
    }

    /// The process died: everything in flight is gone; the next one recovers the slot (and may
    /// die again while carrying out recovery's repairs).
    fn restart(&mut self) {
        self.crashes += 1;
        self.wire = None;
        loop {
            let r = recover(&slot_files(&self.dir), self.generation)
                .unwrap_or_else(|e| panic!("seed {}: recovery refused: {e}", self.seed));
            if self.apply(&r.ops, 8) {
                continue;
            }
            if std::env::var("SF_SIM_TRACE").is_ok() {
                eprintln!(
                    "restart: acked {} next {} promised up to {:?} ring acked {} published {}",
                    r.acked_fsn,
                    r.next_fsn,
                    self.promised.keys().last(),
                    self.ring.acked_fsn(),
                    self.ring.published_fsn()
                );
            }
            self.generation = r.connection_generation;
            self.ring = Ring::from_recovery(cfg(), &r);
            self.dict = r
                .dict
                .as_ref()
                .map(SymbolDict::from_scan)
                .unwrap_or_default();
            break;
        }
        if let Some((fsn, bytes, meant)) = self.maybe.take() {
            // The cut append may have landed whole; if so, it is an ordinary frame now.
            if self.ring.published_fsn() >= fsn {
                assert_eq!(self.read(fsn).as_ref(), Some(&bytes), "seed {}", self.seed);
                self.promised.insert(fsn, bytes);
                self.learn(meant);
            }
        }
        assert!(
            self.ring.published_fsn() + 1 >= self.promised.keys().last().map_or(0, |f| f + 1),
            "seed {}: FSNs keep counting after a restart",
            self.seed
        );
        // Every id of a journalled frame is in the recovered dictionary, with its meaning.
        for (id, name) in &self.meaning {
            if let Some(s) = self.dict.symbols().get(*id as usize) {
                assert_eq!(s, name, "seed {}: id {id} after recovery", self.seed);
            }
        }
        for fsn in self.ring.acked_fsn() + 1..=self.ring.published_fsn() {
            let (_, syms) = decode(&self.read(fsn).unwrap());
            for (id, _) in syms {
                assert!(
                    (id as usize) < self.dict.symbols().len(),
                    "seed {}: frame {fsn} uses id {id} the dictionary lost",
                    self.seed
                );
            }
        }
    }

    /// Every promised frame is acknowledged, and then the server holds it, or is journalled
    /// with its bytes.
    fn check(&self) {
        let acked = self.ring.acked_fsn();
        for (fsn, bytes) in &self.promised {
            if *fsn <= acked {
                assert_eq!(
                    self.received.get(fsn),
                    Some(bytes),
                    "seed {}: FSN {fsn} acknowledged but never received",
                    self.seed
                );
            } else {
                assert_eq!(
                    self.read(*fsn).as_ref(),
                    Some(bytes),
                    "seed {}: FSN {fsn} unacknowledged and not journalled",
                    self.seed
                );
            }
        }
    }

    fn step(&mut self) {
        self.now += 1;
        match self.rng.below(20) {
            0..=6 => self.append(),
            7 => self.connect(),
            8..=10 => self.send(),
            11..=13 => self.serve(),
            14..=16 => self.read_back(),
            17 => {
                if self.rng.one_in(4) {
                    self.drop_wire();
                }
            }
            18 => {
                if self.rng.one_in(10) {
                    self.restart();
                }
            }
            _ => {
                let ops = self.ring.poll_checkpoint(self.now);
                let _ = self.apply(&ops, 50);
            }
        }
        self.check();
    }

    /// A clean end: connect and drain until everything is acknowledged.
    fn finish(&mut self) {
        self.drop_wire();
        for _ in 0..10_000 {
            if self.ring.acked_fsn() >= self.ring.published_fsn() {
                break;
            }
            self.connect();
            while let Some((fsn, _)) = self.ring.next_to_send() {
                let b = self.read(fsn).unwrap();
                self.wire.as_mut().unwrap().to_server.push_back(b);
            }
            // A server that acknowledges everything it reads.
            let w = self.wire.as_mut().unwrap();
            let pending = w.to_server.len() as u64;
            let last = (w.server_seq + pending).checked_sub(1);
            self.serve_all();
            if let Some(seq) = last {
                if self.wire.as_ref().is_some_and(|w| !w.refused) {
                    let ops = self.ring.ok(seq).unwrap();
                    self.dir.apply_all(&ops);
                }
            }
            self.drop_wire();
        }
        self.check();
        assert_eq!(self.ring.acked_fsn(), self.ring.published_fsn());
        for (fsn, bytes) in &self.promised {
            assert_eq!(self.received.get(fsn), Some(bytes), "seed {}", self.seed);
        }
    }

    fn serve_all(&mut self) {
        while self
            .wire
            .as_ref()
            .is_some_and(|w| !w.to_server.is_empty() && !w.refused)
        {
            self.serve();
        }
    }
}

fn seeds() -> Vec<u64> {
    let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(s) = var("SF_SIM_SEED") {
        return vec![s];
    }
    let base = var("SF_SIM_SEED_BASE").unwrap_or(0);
    (base..base + var("SF_SIM_SEEDS").unwrap_or(200)).collect()
}

#[test]
fn sf_19_seeded_runs_with_a_server_reconnects_and_crashes_lose_nothing_and_replay_in_fsn_order() {
    let (mut crashes, mut connections, mut duplicates, mut frames) = (0u64, 0u64, 0u64, 0usize);
    for seed in seeds() {
        let mut sim = Sim::new(seed);
        for _ in 0..400 {
            sim.step();
        }
        sim.finish();
        crashes += u64::from(sim.crashes);
        connections += u64::from(sim.connections);
        duplicates += sim.duplicates;
        frames += sim.promised.len();
    }
    // The runs did what they are for: crashes, reconnects, and frames sent twice (SF-11).
    if seeds().len() >= 50 {
        assert!(crashes > 0 && connections > 0 && duplicates > 0 && frames > 0);
    }
    eprintln!(
        "{frames} frames, {connections} connections, {crashes} crashes, {duplicates} duplicates"
    );
}
