//! The whole client under a hostile server: the input is a program of application calls
//! (commands, reads, routed statements, cancels, recoveries), time, connects and closes, and
//! server frames, raw or generated from the schema with replies re-addressed to identities the
//! client really sent (and outcomes naming the references it really used).
//!
//! Asserted: nothing panics; every frame the client sends passes its own checked reader; no
//! command or read ends twice; `poll_timeout` is a pure read; and once time runs past every
//! deadline, every command and read the client accepted has ended exactly once.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use nervix_fuzz::Input;
use nervix_protocol::client::*;
use nervix_protocol::encode::Encoder;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::schema::*;
use nervix_protocol::testkit::Gen;
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const QUERIES: &[&str] = &[
    "CREATE RELAY a;",
    "BEGIN;",
    "COMMIT;",
    "REVERT;",
    "SHOW DOMAINS;",
    "CREATE RELAY a; CREATE RELAY b;",
    "DESCRIBE TRANSACTION;",
    "BACKUP DOMAIN d TO 'x';",
];

/// The subscriptions' retention budget the target runs with (S-8).
const TOTAL_SUBSCRIPTION_BYTES: usize = 256 * 1024;

const STATEMENTS: &[&str] = &[
    "USE d1",
    "LIST DOMAINS",
    "ATTACH DOMAIN CLOCK",
    "DETACH DOMAIN CLOCK",
    "CREATE SUBSCRIPTION s AS SELECT 1",
    "DELETE SUBSCRIPTION s",
    "RESTORE FROM 'a'",
    "UPLOAD RESOURCE r FROM 'b'",
];

struct Run {
    client: Client,
    now: Timestamp,
    /// The stream the client asked for last, and whether it was reported open.
    stream: Option<(SessionId, bool)>,
    /// Request identities sent on the current stream, with the reference of a command.
    sent: Vec<(u64, Option<String>)>,
    commands: BTreeMap<CommandHandle, u32>,
    reads: BTreeMap<ReadHandle, u32>,
    uncertain: Vec<RetainedCommand>,
    ended_subscriptions: BTreeSet<SubscriptionId>,
    encoder: Encoder,
}

impl Run {
    fn pump(&mut self) {
        while let Some(a) = self.client.poll_action() {
            match a {
                Action::Connect { session, .. } => {
                    self.stream = Some((session, false));
                    self.sent.clear();
                }
                Action::Send { session, frame } => {
                    let checked = ClientFrame::check(frame)
                        .unwrap_or_else(|v| panic!("the client sent a frame it refuses: {v}"));
                    let view = checked.view();
                    assert_ne!(view.request_id(), 0);
                    if self.stream.is_some_and(|(s, _)| s == session) {
                        let reference = view
                            .request_as_command_request()
                            .map(|c| c.execution_reference().to_string());
                        self.sent.push((view.request_id(), reference));
                    }
                }
                Action::Close { session, .. }
                    if self.stream.is_some_and(|(s, _)| s == session) =>
                {
                    self.stream = None;
                }
                _ => {}
            }
        }
        while let Some(e) = self.client.poll_event() {
            match e {
                ClientEvent::Command { handle, result } => {
                    let n = self.commands.entry(handle).or_default();
                    *n += 1;
                    assert_eq!(*n, 1, "{handle:?} ended twice");
                    if let CommandResult::Uncertain { command, .. } = result {
                        self.uncertain.push(command);
                    }
                }
                ClientEvent::Read { handle, .. } => {
                    let n = self.reads.entry(handle).or_default();
                    *n += 1;
                    assert_eq!(*n, 1, "{handle:?} ended twice");
                }
                _ => {}
            }
        }
        while self.client.poll_unsolicited().is_some() {}
        assert!(
            self.client.subscription_bytes() <= TOTAL_SUBSCRIPTION_BYTES,
            "subscriptions keep more than their budget"
        );
        while let Some((id, event)) = self.client.poll_subscriptions() {
            assert!(
                !self.ended_subscriptions.contains(&id),
                "{id:?} has an event after its end"
            );
            if matches!(event, SubscriptionEvent::Ended(_)) {
                self.ended_subscriptions.insert(id);
            }
        }
        while self.client.poll_clock_event().is_some() {}
        let t = self.client.poll_timeout();
        assert_eq!(t, self.client.poll_timeout(), "poll_timeout is a pure read");
    }

    fn frame(&mut self, bytes: Bytes) {
        if let Some((s, _)) = self.stream {
            self.client.handle_frame(self.now, s, bytes);
        }
    }

    /// A schema-valid server message; a reply names an identity really sent, and a command
    /// outcome, usually, the reference really used.
    fn generated(&mut self, input: &mut Input<'_>) {
        let pick = usize::from(input.byte());
        let faithful = !input.byte().is_multiple_of(4);
        let len = usize::from(input.byte()) * 4;
        let mut message: ServerMessageT = Gen::new(input.take(len)).value();
        if let ServerBodyT::Reply(reply) = &mut message.body {
            if let Some((id, reference)) = self.sent.get(pick % self.sent.len().max(1)).cloned() {
                reply.request_id = id;
                if let (ReplyBodyT::CommandOutcome(o), Some(r), true) =
                    (&mut reply.body, reference, faithful)
                {
                    o.execution_reference = r;
                }
            }
        }
        // Subscription frames, usually, name the subscription the statements open.
        let handle = match &mut message.body {
            ServerBodyT::SubscriptionRows(b) => Some(&mut b.subscription),
            ServerBodyT::SubscriptionDeliveryLost(b) => Some(&mut b.subscription),
            ServerBodyT::SubscriptionRowsSkipped(b) => Some(&mut b.subscription),
            ServerBodyT::SubscriptionEnded(b) => Some(&mut b.subscription),
            _ => None,
        };
        if let (Some(h), true) = (handle, faithful) {
            h.name = "s".into();
            h.generation = 1 + u64::from(pick as u8 % 2);
        }
        if let Ok(bytes) = self.encoder.encode::<ServerMessageRoot>(&message) {
            self.frame(bytes);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut config = ClientConfig::new(
        vec![
            Endpoint::parse("https://seed-1:7443/").unwrap(),
            Endpoint::parse("https://seed-2:7443/").unwrap(),
        ],
        u64::from(input.byte()),
    );
    config.exchange = config
        .exchange
        .with_max_in_flight(usize::from(input.byte() % 8) + 1)
        .with_unsolicited_capacity(16);
    config.subscriptions_total_bytes = TOTAL_SUBSCRIPTION_BYTES;
    let mut run = Run {
        client: Client::new(config),
        now: Timestamp::ZERO,
        stream: None,
        sent: Vec::new(),
        commands: BTreeMap::new(),
        reads: BTreeMap::new(),
        uncertain: Vec::new(),
        ended_subscriptions: BTreeSet::new(),
        encoder: Encoder::new(),
    };
    let wall = UnixMillis(1_767_225_600_000);
    let mut created = (Vec::new(), Vec::new());
    for _ in 0..256 {
        if input.is_empty() {
            break;
        }
        let op = input.byte();
        let arg = input.byte();
        let now = run.now;
        match op % 11 {
            0 => {
                let q = QUERIES[usize::from(arg) % QUERIES.len()];
                if let Ok(h) = run.client.execute(now, wall, q) {
                    created.0.push(h);
                }
            }
            1 => {
                let req = ClientRequestT::ListDomainsRequest(Box::default());
                if let Ok(h) = run.client.read(now, req, None) {
                    created.1.push(h);
                }
            }
            2 => {
                let s = STATEMENTS[usize::from(arg) % STATEMENTS.len()];
                match run.client.run(now, wall, s) {
                    Ok(Routed::Command(h)) => created.0.push(h),
                    Ok(Routed::Request(h)) => created.1.push(h),
                    _ => {}
                }
            }
            3 => {
                if let Some(&h) = created.0.get(usize::from(arg) % created.0.len().max(1)) {
                    let _ = run.client.cancel(now, h);
                }
            }
            4 => {
                run.now = now + Duration::from_millis(u64::from(arg) * 37);
                run.client.handle_timeout(run.now);
            }
            5 => {
                if let Some((s, false)) = run.stream {
                    run.stream = Some((s, true));
                    run.client.handle_connected(now, s);
                }
            }
            6 => {
                if let Some((s, _)) = run.stream {
                    run.client.handle_closed(now, s);
                }
            }
            7 => {
                let raw = Bytes::copy_from_slice(input.take(usize::from(arg) * 4));
                run.frame(raw);
            }
            8 | 9 => run.generated(&mut input),
            _ => {
                if let Some(c) = run.uncertain.pop() {
                    if let Ok(h) = run.client.recover(now, &c, None) {
                        created.0.push(h);
                    }
                }
            }
        }
        run.pump();
    }
    // Time runs past every deadline, with no server: everything accepted ends, once.
    for _ in 0..10_000 {
        if run.client.outstanding_commands() == 0 && run.client.outstanding_reads() == 0 {
            break;
        }
        if let Some((s, _)) = run.stream.take() {
            run.client.handle_closed(run.now, s);
        }
        let next = run.client.poll_timeout().unwrap_or(run.now);
        run.now = next.max(run.now) + Duration::from_millis(1);
        run.client.handle_timeout(run.now);
        run.pump();
    }
    assert_eq!(run.client.outstanding_commands(), 0, "a command never ended");
    assert_eq!(run.client.outstanding_reads(), 0, "a read never ended");
    for h in &created.0 {
        assert_eq!(run.commands.get(h), Some(&1), "{h:?} did not end exactly once");
    }
    for h in &created.1 {
        assert_eq!(run.reads.get(h), Some(&1), "{h:?} did not end exactly once");
    }
});
