//! A client under test against a scripted server: what it asks the driver to do is recorded,
//! and frames and time are fed to it by hand.

use super::sent;
use bytes::Bytes;
use nervix_protocol::client::*;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::schema::*;
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::time::Duration;

pub const WALL: UnixMillis = UnixMillis(1_767_225_600_000);

pub struct Rig {
    pub c: Client,
    pub now: Timestamp,
    pub sent: Vec<(SessionId, ClientMessageT)>,
    /// The frames of `sent`, as they were handed over.
    pub raw: Vec<(SessionId, Bytes)>,
    pub connects: Vec<(SessionId, Endpoint)>,
    pub closes: Vec<(SessionId, bool)>,
    pub events: Vec<ClientEvent>,
}

pub fn ep(s: &str) -> Endpoint {
    Endpoint::parse(s).unwrap()
}

impl Rig {
    pub fn new() -> Self {
        Self::with(ClientConfig::new(vec![ep("https://seed-1:7443/")], 7))
    }
    pub fn with(config: ClientConfig) -> Self {
        Rig {
            c: Client::new(config),
            now: Timestamp::ZERO,
            sent: vec![],
            raw: vec![],
            connects: vec![],
            closes: vec![],
            events: vec![],
        }
    }
    pub fn pump(&mut self) {
        while let Some(a) = self.c.poll_action() {
            match a {
                Action::Connect { session, endpoint } => self.connects.push((session, endpoint)),
                Action::Send { session, frame } => {
                    self.sent.push((session, sent(&frame)));
                    self.raw.push((session, frame));
                }
                Action::Close { session, clean } => self.closes.push((session, clean)),
                other => panic!("{other:?}"),
            }
        }
        while let Some(e) = self.c.poll_event() {
            self.events.push(e);
        }
    }
    /// Accepts the newest connection attempt.
    pub fn open(&mut self) -> SessionId {
        self.pump();
        let (sid, _) = self
            .connects
            .last()
            .cloned()
            .expect("a connect was asked for");
        self.c.handle_connected(self.now, sid);
        self.pump();
        sid
    }
    pub fn exec(&mut self, q: &str) -> CommandHandle {
        let h = self.c.execute(self.now, WALL, q).unwrap();
        self.pump();
        h
    }
    pub fn last(&self) -> (SessionId, ClientMessageT) {
        self.sent.last().cloned().expect("something was sent")
    }
    pub fn last_command(&self) -> (u64, CommandRequestT) {
        let (_, m) = self.last();
        match m.request {
            ClientRequestT::CommandRequest(c) => (m.request_id, *c),
            other => panic!("last sent is not a command: {other:?}"),
        }
    }
    pub fn feed(&mut self, sid: SessionId, frame: Bytes) {
        self.c.handle_frame(self.now, sid, frame);
        self.pump();
    }
    pub fn advance(&mut self, d: Duration) {
        self.now = self.now + d;
        self.c.handle_timeout(self.now);
        self.pump();
    }
    pub fn result(&self, h: CommandHandle) -> Option<CommandResult> {
        self.events.iter().find_map(|e| match e {
            ClientEvent::Command { handle, result } if *handle == h => Some(result.clone()),
            _ => None,
        })
    }
    pub fn results(&self, h: CommandHandle) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, ClientEvent::Command { handle, .. } if *handle == h))
            .count()
    }
}

pub fn requests(r: &Rig, sid: SessionId) -> Vec<ClientRequest> {
    r.sent
        .iter()
        .filter(|(s, _)| *s == sid)
        .map(|(_, m)| m.request.client_request_type())
        .collect()
}

pub fn last_of(r: &Rig, kind: ClientRequest) -> (u64, ClientRequestT) {
    r.sent
        .iter()
        .rev()
        .find(|(_, m)| m.request.client_request_type() == kind)
        .map(|(_, m)| (m.request_id, m.request.clone()))
        .unwrap_or_else(|| panic!("no {kind:?} was sent"))
}

pub fn read_result(r: &Rig, h: ReadHandle) -> Option<ReadResult> {
    r.events.iter().find_map(|e| match e {
        ClientEvent::Read { handle, result } if *handle == h => Some(result.clone()),
        _ => None,
    })
}

/// Answers the BEGIN just sent on `sid` with a completed outcome binding transaction `tx-1`
/// in domain `d1`.
pub fn bind_transaction(r: &mut Rig, sid: SessionId) {
    let (cid, cmd) = r.last_command();
    let outcome = CommandOutcomeT {
        execution_reference: cmd.execution_reference.clone(),
        origin: Some(OutcomeOrigin::Executed),
        disposition: CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
            already_existed: false,
        })),
        message: String::new(),
        transaction: Some(Box::new(TransactionStatusT {
            transaction_id: "tx-1".into(),
            domain: "d1".into(),
            state: TransactionStateT::TransactionOpen(Box::default()),
            accepted_operations: 0,
            applied_operations: 0,
        })),
        ..Default::default()
    };
    r.feed(
        sid,
        super::reply(cid, ReplyBodyT::CommandOutcome(Box::new(outcome))),
    );
    assert!(r.c.binding().is_holding(), "BEGIN bound the transaction");
}
