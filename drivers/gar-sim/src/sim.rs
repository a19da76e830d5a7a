//! A seeded simulation of GAR sessions: two `gar_client::Client` engines against the server
//! model over a simulated channel (in order per direction, with a delay; heartbeats may be lost
//! or late), with publishes, subscriptions (some refused), compare-exchange races between the
//! two clients on one record, server logoffs and restarts.
//!
//! Everything random comes from the seed. The invariants checked on every run:
//! - every subscription of a session still running at the end reaches `Finished`, `Streaming`
//!   or a reported refusal;
//! - no message the server sends names a key id it retired (or never introduced) on that
//!   connection, so no record is read under a retired id;
//! - every session reports exactly one stop;
//! - a recoverable Error (a refused subscription, failed writes) never ends a session;
//! - of two compare-exchanges racing with the same test on one record, at most one succeeds,
//!   and exactly one when the test was the record's value at the time.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use gar_client::codec::{self, Inbound, RecordId};
use gar_client::{Client, Config, Event, Limits, StopReason, Subscribe};
use serde_json::Value;

use crate::server::{ConnId, Output, PeerClose, Server};

/// The run's deterministic generator (SplitMix64), shared with the other simulations.
pub use sansio_kit::rng::SplitMix64 as Rng;

/// How a run behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// The seed.
    pub seed: u64,
    /// Steps of simulated time.
    pub steps: u64,
    /// Milliseconds per step at most.
    pub step_ms: u64,
    /// Percent of heartbeats lost (either way).
    pub heartbeat_loss: u64,
    /// Percent of heartbeats delayed by up to two intervals.
    pub heartbeat_late: u64,
    /// Percent chance per step that the server logs a client off.
    pub server_logoff: u64,
    /// The heartbeat timeout of clients and server (ms).
    pub heartbeat_ms: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            steps: 400,
            step_ms: 50,
            heartbeat_loss: 10,
            heartbeat_late: 10,
            server_logoff: 1,
            heartbeat_ms: 1000,
        }
    }
}

/// What a run saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Sessions started.
    pub sessions: u64,
    /// Stops by reason (`{:?}` of the reason).
    pub stops: BTreeMap<String, u64>,
    /// Subscriptions sent.
    pub subscriptions: u64,
    /// Subscriptions refused.
    pub refused: u64,
    /// Compare-exchange races with both results back.
    pub races: u64,
    /// Races in which the test was the current value.
    pub races_contended: u64,
    /// Heartbeats lost.
    pub beats_lost: u64,
    /// Heartbeats delivered late.
    pub beats_late: u64,
    /// Writes sent that the server must refuse (a read-only topic).
    pub bad_writes: u64,
    /// Failed writes reported back in recoverable Errors.
    pub failed_writes_reported: u64,
    /// Invariant breaches (empty on a good run).
    pub violations: Vec<String>,
}

#[derive(Debug)]
enum Wire {
    Text(String),
    Close(Option<u16>),
}

#[derive(Debug, Default)]
struct Session {
    stops: u64,
    subs: BTreeMap<String, bool>,
}

struct Peer {
    client: Client,
    conn: Option<ConnId>,
    up: VecDeque<(u64, Wire)>,
    down: VecDeque<(u64, Wire)>,
    session: usize,
    restart_at: Option<u64>,
    /// Server key ids introduced to this connection and not retired.
    live_keys: BTreeSet<u64>,
    cx: BTreeMap<u64, Option<bool>>,
    next_sub: u64,
}

const TOPICS: [&str; 3] = ["bid", "ask", "note"];
const KEYS: [&str; 3] = ["K1", "K2", "K3"];

fn is_beat(t: &str) -> bool {
    t.contains("\"message_type\":\"Heartbeat\"")
}

/// Runs one seeded simulation.
#[must_use]
pub fn run(cfg: &SimConfig) -> Report {
    let mut rng = Rng::new(cfg.seed);
    let mut server = Server::new(crate::server::ServerConfig {
        heartbeat_timeout_interval: cfg.heartbeat_ms,
        ..crate::sample_config()
    });
    let mut report = Report::default();
    let mut sessions: Vec<Session> = Vec::new();
    let client_config = Config {
        heartbeat_timeout_interval: cfg.heartbeat_ms,
        user: "sim".into(),
        application: "gar-sim".into(),
        limits: Limits::default(),
        ..Config::default()
    };
    let mut peers: Vec<Peer> = (0..2)
        .map(|_| Peer {
            client: Client::new(client_config.clone()),
            conn: None,
            up: VecDeque::new(),
            down: VecDeque::new(),
            session: 0,
            restart_at: Some(0),
            live_keys: BTreeSet::new(),
            cx: BTreeMap::new(),
            next_sub: 0,
        })
        .collect();
    let mut now = 0u64;
    let mut race: Option<bool> = None;
    let quiet_from = cfg.steps;
    for step in 0..cfg.steps + 200 {
        let quiet = step >= quiet_from;
        now += if quiet {
            10
        } else {
            1 + rng.below(cfg.step_ms)
        };
        for p in &mut peers {
            if p.restart_at.is_some_and(|t| t <= now) && !quiet {
                p.restart_at = None;
                p.client.start(now, (rng.next_u64(), rng.next_u64()));
                p.conn = Some(server.connect(now));
                p.up.clear();
                p.down.clear();
                p.live_keys.clear();
                p.cx.clear();
                sessions.push(Session::default());
                p.session = sessions.len() - 1;
                report.sessions += 1;
            }
        }
        if !quiet {
            let started = act(
                &mut rng,
                &mut peers,
                &mut server,
                &mut report,
                &mut sessions,
                cfg,
            );
            race = race.or(started);
        }
        server.handle_timeout(now);
        for p in &mut peers {
            if p.client.poll_timeout().is_some_and(|t| t <= now) {
                p.client.handle_timeout(now);
            }
        }
        for p in &mut peers {
            shuttle(&mut rng, p, &mut server, &mut report, cfg, now, quiet);
            drain_events(p, &mut sessions, &mut report, &mut rng, now);
        }
        if let Some(contended) = race {
            if races_settle(&mut peers, &mut report, contended) {
                race = None;
            }
        }
    }
    // Subscriptions of sessions still running must have an outcome by now.
    for p in &peers {
        if p.client.is_running() {
            for (name, done) in &sessions[p.session].subs {
                if !done {
                    report.violations.push(format!(
                        "subscription {name} never finished, streamed or was refused"
                    ));
                }
            }
        }
    }
    for (i, s) in sessions.iter().enumerate() {
        let running = peers
            .iter()
            .any(|p| p.session == i && p.client.is_running());
        if s.stops > 1 || (s.stops == 0 && !running) {
            report
                .violations
                .push(format!("session {i} reported {} stops", s.stops));
        }
    }
    report
}

fn act(
    rng: &mut Rng,
    peers: &mut [Peer],
    server: &mut Server,
    report: &mut Report,
    sessions: &mut [Session],
    cfg: &SimConfig,
) -> Option<bool> {
    let racing = peers.iter().any(|p| !p.cx.is_empty());
    // A compare-exchange race: both clients test the same record for the same value.
    // It starts only when nothing is in flight, so the value sampled here is the one both
    // compares meet (a compare of a dropped race could otherwise land in between).
    let idle = peers
        .iter()
        .all(|p| p.client.is_running() && p.cx.is_empty() && p.up.is_empty());
    if rng.chance(5) && idle {
        // Each writes a value no test can name, so a winner's write cannot match the loser's test.
        let fresh = 1_000 + rng.below(1 << 40) * 2;
        let key = KEYS[rng.below(3) as usize];
        let test = if rng.chance(50) {
            Value::Null
        } else {
            server
                .record(key, "note")
                .cloned()
                .unwrap_or_else(|| Value::from(rng.below(3)))
        };
        let contended = !server.classes(key).is_empty()
            && server.record(key, "note").cloned().unwrap_or(Value::Null) == test;
        for (i, p) in peers.iter_mut().enumerate() {
            let Ok(kid) = p.client.introduce_key(key, "Underlier") else {
                continue;
            };
            let Ok(tid) = p.client.introduce_topic("note") else {
                continue;
            };
            let rid = RecordId {
                key_id: kid,
                topic_id: tid,
            };
            if let Ok(r) = p
                .client
                .compare_exchange(rid, &test, &Value::from(fresh + i as u64))
            {
                p.cx.insert(r, None);
            }
        }
        return Some(contended);
    }
    let i = rng.below(peers.len() as u64) as usize;
    let p = &mut peers[i];
    if !p.client.is_running() {
        return None;
    }
    match rng.below(100) {
        0..=39 => {
            let key = KEYS[rng.below(3) as usize];
            let topic = TOPICS[rng.below(2) as usize];
            if let (Ok(k), Ok(t)) = (
                p.client.introduce_key(key, "Underlier"),
                p.client.introduce_topic(topic),
            ) {
                let v = if rng.chance(10) {
                    Value::Null
                } else {
                    Value::from(rng.below(100))
                };
                let _ = p.client.publish(
                    RecordId {
                        key_id: k,
                        topic_id: t,
                    },
                    &v,
                    0,
                );
            }
        }
        40..=49 => {
            p.next_sub += 1;
            let name = format!("s{}", p.next_sub);
            let refused = rng.chance(30);
            let s = Subscribe {
                name: name.clone(),
                streaming: rng.chance(50),
                class_list: vec![if refused { "NoSuchClass" } else { "Underlier" }.into()],
                ..Subscribe::default()
            };
            if p.client.subscribe(&s).is_ok() {
                sessions[p.session].subs.insert(name, false);
                report.subscriptions += 1;
            }
        }
        59..=61 => {
            // A write the server refuses, reported because the marker's msg_ref is not 0.
            let key = KEYS[rng.below(3) as usize];
            let marker = codec::write::Ownership {
                msg_ref: 100 + rng.below(100),
                ..codec::write::Ownership::default()
            };
            if let (Ok(()), Ok(k), Ok(t)) = (
                p.client.active_ownership(&marker),
                p.client.introduce_key(key, "Underlier"),
                p.client.introduce_topic("status"),
            ) {
                let rid = RecordId {
                    key_id: k,
                    topic_id: t,
                };
                if p.client.publish(rid, &Value::from(1), 0).is_ok() {
                    report.bad_writes += 1;
                }
            }
        }
        50..=54 => {
            let _ = p.client.echo();
        }
        55..=57 if !racing => {
            // The server removes a key: subscribers see per-class teardown and KeyIdRetired.
            server.remove_key(KEYS[rng.below(3) as usize]);
        }
        58 => {
            p.client.logoff();
        }
        _ => {
            if rng.chance(cfg.server_logoff) {
                if let Some(c) = p.conn {
                    server.logoff(c);
                }
            }
        }
    }
    None
}

fn shuttle(
    rng: &mut Rng,
    p: &mut Peer,
    server: &mut Server,
    report: &mut Report,
    cfg: &SimConfig,
    now: u64,
    quiet: bool,
) {
    let Some(conn) = p.conn else {
        return;
    };
    let delay = |rng: &mut Rng, text: &str, report: &mut Report| -> Option<u64> {
        let base = now + 1 + rng.below(20);
        if quiet || !is_beat(text) {
            return Some(base);
        }
        if rng.chance(cfg.heartbeat_loss) {
            report.beats_lost += 1;
            return None;
        }
        if rng.chance(cfg.heartbeat_late) {
            report.beats_late += 1;
            return Some(base + rng.below(2 * cfg.heartbeat_ms));
        }
        Some(base)
    };
    while let Some(t) = p.client.poll_transmit() {
        if let Some(at) = delay(rng, &t, report) {
            p.up.push_back((at, Wire::Text(t)));
        }
    }
    while let Some(o) = server.poll_transmit(conn) {
        match o {
            Output::Text(t) => {
                if let Some(at) = delay(rng, &t, report) {
                    p.down.push_back((at, Wire::Text(t)));
                }
            }
            Output::Close(c) => p.down.push_back((now + 1, Wire::Close(c))),
        }
    }
    // In order per direction: a late message holds back the ones behind it.
    while p.up.front().is_some_and(|(at, _)| *at <= now) {
        if let Some((_, Wire::Text(t))) = p.up.pop_front() {
            server.handle_text(conn, now, &t);
        }
    }
    while p.down.front().is_some_and(|(at, _)| *at <= now) {
        match p.down.pop_front() {
            Some((_, Wire::Text(t))) => {
                check_ids(p, &t, report);
                p.client.handle_text(now, &t);
            }
            Some((_, Wire::Close(c))) => {
                p.client.handle_close(c);
                p.down.clear();
                p.up.clear();
                p.conn = None;
                return;
            }
            None => {}
        }
    }
    if !p.client.is_running() {
        // The client ended on its own: its socket goes.
        server.handle_close(conn, PeerClose::Dropped);
        p.conn = None;
    }
}

/// The server must never name a key id it retired (or never introduced) on this connection.
fn check_ids(p: &mut Peer, text: &str, report: &mut Report) {
    let Ok(m) = codec::decode(text, &Limits::default()) else {
        return;
    };
    let mut named = Vec::new();
    match m {
        Inbound::KeyUpdate {
            key_id,
            deleted_class,
            ..
        } => {
            if deleted_class.is_none() {
                p.live_keys.insert(key_id);
            } else {
                named.push(key_id);
            }
        }
        Inbound::KeyIdRetired { key_id } => {
            named.push(key_id);
            p.live_keys.remove(&key_id);
        }
        Inbound::BatchUpdate { keys, .. } => {
            for k in keys {
                if k.name.is_some() {
                    p.live_keys.insert(k.key_id);
                } else {
                    named.push(k.key_id);
                }
            }
        }
        Inbound::RecordUpdate { record_id, .. } | Inbound::DeleteRecord { record_id, .. } => {
            named.push(record_id.key_id);
        }
        _ => {}
    }
    for id in named {
        if !p.live_keys.contains(&id) && !text.contains("KeyIdRetired") {
            report.violations.push(format!(
                "server named key id {id} it had not introduced or had retired: {text}"
            ));
        }
    }
}

fn drain_events(
    p: &mut Peer,
    sessions: &mut [Session],
    report: &mut Report,
    rng: &mut Rng,
    now: u64,
) {
    let mut last_error: Option<gar_client::codec::ServerError> = None;
    while let Some(e) = p.client.poll_event() {
        match e {
            Event::Status { name, status } => {
                use codec::Status;
                if matches!(status, Status::Finished | Status::Streaming) {
                    if let Some(d) = sessions[p.session].subs.get_mut(&name) {
                        *d = true;
                    }
                }
            }
            Event::Refused { name } => {
                report.refused += 1;
                if let Some(d) = sessions[p.session].subs.get_mut(&name) {
                    *d = true;
                }
            }
            Event::Error(e) => {
                if e.recoverable {
                    report.failed_writes_reported += e.failed_writes.len() as u64;
                }
                last_error = Some(e);
            }
            Event::Compare(r) => {
                if let Some(slot) = p.cx.get_mut(&r.msg_ref) {
                    *slot = Some(r.success);
                }
            }
            Event::Stopped { reason, violation } => {
                // A stop for an Error must follow a non-recoverable one (or a violation).
                if reason == StopReason::Error && violation.is_none() {
                    if let Some(e) = last_error.as_ref().filter(|e| e.recoverable) {
                        report.violations.push(format!(
                            "a recoverable Error ended a session: {}",
                            e.message
                        ));
                    }
                }
                sessions[p.session].stops += 1;
                *report.stops.entry(format!("{reason:?}")).or_default() += 1;
                p.restart_at = Some(now + 50 + rng.below(500));
                if reason == StopReason::Stop || reason == StopReason::ServerLogoff {
                    p.restart_at = Some(now + 20);
                }
            }
            _ => {}
        }
    }
}

/// Settles a race once both results are back (true), or drops it when a session died.
fn races_settle(peers: &mut [Peer], report: &mut Report, contended: bool) -> bool {
    let any_dead = peers
        .iter()
        .any(|p| !p.client.is_running() || p.cx.is_empty());
    let all_back = peers.iter().all(|p| p.cx.values().all(Option::is_some));
    if !any_dead && !all_back {
        return false;
    }
    if !any_dead {
        let wins = peers
            .iter()
            .flat_map(|p| p.cx.values())
            .filter(|v| **v == Some(true))
            .count();
        report.races += 1;
        if contended {
            report.races_contended += 1;
        }
        if wins > 1 || (contended && wins != 1) {
            report.violations.push(format!(
                "a compare-exchange race (test was current: {contended}) had {wins} winners"
            ));
        }
    }
    for p in peers.iter_mut() {
        p.cx.clear();
    }
    true
}
