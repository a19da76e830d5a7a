//! The transaction the client holds, seen from the client: its binding, the
//! attach that binds it again on a new session (the last step of D-5 restoration, X-6), the
//! application's attach by identity, and its idle expiry.

use crate::frame::ServerFrame;
use crate::schema::*;
use crate::time::Timestamp;
use crate::transaction::{Binding, Ending};

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
    ) -> AttachStep {
        let view = frame.view();
        let Some(outcome) = view
            .body_as_reply()
            .and_then(|r| r.body_as_attach_outcome())
        else {
            // Rejected (busy, or a defect): an application attach ends with the reply; a
            // restoring attach is asked again.
            return if by_application {
                AttachStep::Changed
            } else {
                AttachStep::Again
            };
        };
        if let Some(a) = outcome.disposition_as_transaction_attached() {
            let status = a.transaction().unpack();
            self.binding.attached(&status, now);
            // adopt the attached transaction's domain.
            *adopt = Some(status.domain);
        } else if let Some(f) = outcome.disposition_as_transaction_already_finished() {
            self.binding.already_finished(&f.transaction().unpack());
        } else if let Some(r) = outcome.disposition_as_leader_redirect() {
            let uri = r.leader().and_then(|l| l.grpc_uri()).map(str::to_string);
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
