//! A live client with one open session and commands in flight, for the transport reader
//! targets: what a reader hands on goes in as the drivers hand it.

use bytes::Bytes;
use nervix_protocol::client::{
    Action, Client, ClientConfig, ClientEvent, CommandHandle, SessionId,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::collections::BTreeSet;
use std::time::Duration;

pub struct Session {
    client: Client,
    now: Timestamp,
    session: Option<SessionId>,
    pending: BTreeSet<CommandHandle>,
}

impl Session {
    /// A client whose session is open, with two commands sent on it.
    pub fn open() -> Self {
        let config = ClientConfig::new(vec![Endpoint::parse("https://seed:7443/").unwrap()], 7);
        let mut s = Self {
            client: Client::new(config),
            now: Timestamp::ZERO,
            session: None,
            pending: BTreeSet::new(),
        };
        s.client.select_domain(Some("d")).unwrap();
        for q in ["CREATE RELAY a;", "SHOW DOMAINS;"] {
            let h = s.client.execute(s.now, UnixMillis(0), q).unwrap();
            s.pending.insert(h);
        }
        s.pump();
        if let Some(id) = s.session {
            s.client.handle_connected(s.now, id);
        }
        s.pump();
        s
    }

    fn pump(&mut self) {
        while let Some(a) = self.client.poll_action() {
            if let Action::Connect { session, .. } = a {
                self.session = Some(session);
            }
        }
        while let Some(e) = self.client.poll_event() {
            if let ClientEvent::Command { handle, .. } = e {
                assert!(self.pending.remove(&handle), "a command ended twice");
            }
        }
        while self.client.poll_unsolicited().is_some() {}
    }

    /// One frame as the reader handed it.
    pub fn frame(&mut self, frame: Bytes) {
        if let Some(id) = self.session {
            self.client.handle_frame(self.now, id, frame);
        }
        self.pump();
    }

    /// The session ended; every command ends by its deadline.
    pub fn close(mut self) {
        if let Some(id) = self.session.take() {
            self.client.handle_closed(self.now, id);
        }
        self.pump();
        for _ in 0..64 {
            if self.pending.is_empty() {
                return;
            }
            self.now = self.now + Duration::from_secs(60);
            self.client.handle_timeout(self.now);
            self.pump();
            // A new session the client asks for never opens.
            if let Some(id) = self.session.take() {
                self.client.handle_closed(self.now, id);
                self.pump();
            }
        }
        assert!(self.pending.is_empty(), "a command never ended");
    }
}
