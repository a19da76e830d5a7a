//! The transaction the client holds, seen from the client: its binding, the
//! attach that binds it again on a new session (the last step of D-5 restoration, X-6), the
//! application's attach by identity, and its idle expiry.

use super::{ClientError, ClientEvent, Phase, Purpose, ReadHandle, Session};
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::time::Timestamp;
use crate::transaction::{Binding, Ending};
use std::time::Duration;

/// What an attach reply asks of the client.
#[derive(Debug, PartialEq)]
pub(crate) enum AttachStep {
    /// The binding changed (attached, finished or refused); the session is restored.
    Changed,
    /// The named leader should be asked (D-1), or, naming none, ask again after a back-off.
    Redirect(Option<String>),
    /// Refused for now (busy): ask again after a back-off.
    Again,
}

/// The held transaction and its re-attachment.
#[derive(Debug, Default)]
pub(crate) struct Transaction {
    pub binding: Binding,
    /// When to send the attach again after a refusal.
    pub retry_at: Option<Timestamp>,
    /// Refusals of the attach in a row: the wait grows with each.
    pub refusals: u32,
}

/// The request that binds transaction `id` to the session.
pub(crate) fn attach_request(id: &str) -> ClientRequestT {
    ClientRequestT::AttachTransactionRequest(Box::new(AttachTransactionRequestT {
        transaction_id: id.to_string(),
    }))
}

impl Transaction {
    /// The attach to send when the held transaction is not bound on the session.
    pub(crate) fn reattach(&self) -> Option<ClientRequestT> {
        match &self.binding {
            Binding::Detached(h) => Some(attach_request(&h.id)),
            _ => None,
        }
    }

    /// Whether the held transaction waits to be attached again: its commands wait too.
    pub(crate) fn attach_pending(&self) -> bool {
        matches!(self.binding, Binding::Detached(_))
    }

    /// An attach was answered. `adopt` receives the domain of an attached transaction.
    /// `by_application` is true for [`super::Client::attach_transaction`], whose refusal
    /// leaves the binding as it was.
    pub(crate) fn on_attach_reply(
        &mut self,
        frame: &ServerFrame,
        now: Timestamp,
        by_application: bool,
        adopt: &mut Option<String>,
        leader_uri: super::LeaderUri,
    ) -> AttachStep {
        let view = frame.view();
        let reply = view.body_as_reply();
        let Some(outcome) = reply.and_then(|r| r.body_as_attach_outcome()) else {
            // Rejected: an application attach ends with the reply. A restoring attach is
            // asked again when the server was busy; refused for a defect of its own it would
            // be refused the same way, so it is never sent again unchanged (C-8): the attach
            // failed, and the outstanding commands go for their recorded outcomes.
            if by_application {
                return AttachStep::Changed;
            }
            let defect = reply
                .and_then(|r| r.body_as_request_rejected())
                .is_some_and(|r| super::rejected_for_a_defect(&r));
            if !defect {
                return AttachStep::Again;
            }
            self.binding.finished(Ending::AttachRefused);
            self.refusals = 0;
            self.retry_at = None;
            return AttachStep::Changed;
        };
        if let Some(a) = outcome.disposition_as_transaction_attached() {
            let status = a.transaction().unpack();
            self.binding.attached(&status, now);
            // adopt the attached transaction's domain.
            *adopt = Some(status.domain);
        } else if let Some(f) = outcome.disposition_as_transaction_already_finished() {
            self.binding.already_finished(&f.transaction().unpack());
        } else if let Some(r) = outcome.disposition_as_leader_redirect() {
            let uri = r
                .leader()
                .and_then(|l| leader_uri.of(l))
                .map(str::to_string);
            return AttachStep::Redirect(uri);
        } else if !by_application {
            self.binding.finished(Ending::AttachRefused);
        }
        self.refusals = 0;
        self.retry_at = None;
        AttachStep::Changed
    }

    /// When the held transaction expires unless renewed.
    pub(crate) fn expires_at(&self, idle: std::time::Duration) -> Option<Timestamp> {
        self.binding.expires_at(idle)
    }
}

impl super::Client {
    /// Attaches the transaction `id` to the session, binding it when the server reports
    /// it attached; the reply also comes as the read's own event. Refused while a transaction
    /// is held.
    pub fn attach_transaction(
        &mut self,
        now: Timestamp,
        id: &str,
    ) -> Result<ReadHandle, ClientError> {
        self.check_name("transaction", id)?;
        self.outside_transaction()?;
        if self.attach_by_id_outstanding() {
            return Err(ClientError::AttachInProgress);
        }
        self.add_read(now, attach_request(id), None)
    }

    pub(super) fn attach_by_id_outstanding(&self) -> bool {
        self.reads.any_marked()
    }

    pub(super) fn outside_transaction(&self) -> Result<(), ClientError> {
        if self.tx.binding.is_holding() {
            return Err(ClientError::InTransaction);
        }
        Ok(())
    }

    /// Sends the transaction attach when a held transaction is detached. Returns whether one
    /// is out.
    pub(super) fn start_attach(&mut self, now: Timestamp) -> bool {
        let timeout = self.config.call_timeout;
        match self.session.as_mut() {
            Some(s) => attach_on(s, &self.tx, now, timeout),
            None => false,
        }
    }

    /// An attach was answered: the restoring one (`read` is `None`) or the application's.
    /// Returns true when the application's read is to be sent again (a redirect).
    pub(super) fn on_attach_reply(
        &mut self,
        now: Timestamp,
        s: &mut Session,
        frame: &ServerFrame,
        read: Option<ReadHandle>,
    ) -> bool {
        let mut adopt = None;
        let step = self.tx.on_attach_reply(
            frame,
            now,
            read.is_some(),
            &mut adopt,
            self.config.leader_uri,
        );
        if let Some(domain) = adopt {
            self.selected_domain = Some(domain);
        }
        match step {
            AttachStep::Changed => {
                if read.is_none() || self.tx.binding.is_holding() {
                    self.events
                        .push_back(ClientEvent::Transaction(self.tx.binding.clone()));
                }
                if read.is_none() {
                    s.phase = Phase::Ready;
                }
                false
            }
            AttachStep::Redirect(uri) => {
                if let Some(mut e) = read.and_then(|h| self.reads.get_mut(h)) {
                    e.call.again(None, false);
                }
                if !self.redirect(s, uri) {
                    let wait = self.backoff(self.tx.refusals);
                    self.tx.refusals = self.tx.refusals.saturating_add(1);
                    match read.and_then(|h| self.reads.get_mut(h)) {
                        Some(mut e) => e.call.again(Some(now + wait), false),
                        None => self.tx.retry_at = Some(now + wait),
                    }
                }
                read.is_some()
            }
            AttachStep::Again => {
                // Refused for now: ask again after a wait that grows with each refusal.
                let wait = self.backoff(self.tx.refusals);
                self.tx.refusals = self.tx.refusals.saturating_add(1);
                self.tx.retry_at = Some(now + wait);
                false
            }
        }
    }
}

/// Sends the attach of the held transaction on `s` unless one is out. Returns whether one is.
pub(super) fn attach_on(
    s: &mut Session,
    tx: &Transaction,
    now: Timestamp,
    timeout: Duration,
) -> bool {
    let Some(req) = tx.reattach() else {
        return false;
    };
    if s.pending.values().any(|p| *p == Purpose::TransactionAttach) {
        return true;
    }
    match s.exchange.request(now, &req, Some(now + timeout)) {
        Ok(r) => {
            s.pending.insert(r, Purpose::TransactionAttach);
            s.phase = Phase::Restoring;
            true
        }
        Err(_) => false,
    }
}
