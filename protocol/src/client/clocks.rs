//! Domain clocks the client follows across sessions (D-5, K-1, K-5): each one attached is
//! attached again on every later session, first of all the session state, and a clock whose
//! domain no longer exists, or that the application detached, is followed no more.

use super::{ClientError, ReadHandle};
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::time::Timestamp;
use std::collections::BTreeSet;

/// The clocks the client follows.
#[derive(Debug, Default)]
pub(crate) struct Clocks {
    followed: BTreeSet<String>,
}

pub(crate) fn attach_request(domain: &str) -> ClientRequestT {
    ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
        domain: domain.to_string(),
    }))
}

pub(crate) fn detach_request(domain: &str) -> ClientRequestT {
    ClientRequestT::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
        domain: domain.to_string(),
    }))
}

fn attach_disposition(frame: &ServerFrame) -> Option<DomainClockAttachDisposition> {
    Some(
        frame
            .view()
            .body_as_reply()?
            .body_as_domain_clock_attach_outcome()?
            .disposition_type(),
    )
}

impl Clocks {
    /// An attach (the application's or a restoration) was answered (K-1): attached or
    /// already attached means the session follows the clock; the domain being gone ends it;
    /// any other refusal leaves it followed, to be attached again.
    pub(crate) fn on_attach_reply(&mut self, domain: &str, frame: &ServerFrame) {
        match attach_disposition(frame) {
            Some(
                DomainClockAttachDisposition::DomainClockAttached
                | DomainClockAttachDisposition::DomainClockAlreadyAttached,
            ) => {
                self.followed.insert(domain.to_string());
            }
            Some(DomainClockAttachDisposition::DomainNotFound) => {
                self.followed.remove(domain);
            }
            _ => {}
        }
    }

    /// The application detached the clock: it is attached again on no later session, and no
    /// attach is decided while the detach is unanswered (K-1).
    pub(crate) fn forget(&mut self, domain: &str) {
        self.followed.remove(domain);
    }

    /// The clocks to attach again on a new session.
    pub(crate) fn restorations(&self) -> impl Iterator<Item = (&str, ClientRequestT)> + '_ {
        self.followed
            .iter()
            .map(|d| (d.as_str(), attach_request(d)))
    }

    /// Whether the client follows `domain`'s clock.
    pub(crate) fn follows(&self, domain: &str) -> bool {
        self.followed.contains(domain)
    }
}

impl super::Client {
    /// Attaches a domain's clock (K-1); once attached it is attached again on every later
    /// session, before anything else is restored (D-5). Refused while a transaction is held
    /// (L-3).
    pub fn follow_clock(
        &mut self,
        now: Timestamp,
        domain: &str,
    ) -> Result<ReadHandle, ClientError> {
        self.check_name("domain", domain)?;
        self.outside_transaction()?;
        self.add_read(now, attach_request(domain), None)
    }

    /// Detaches a domain's clock (K-1): it is followed no more, on this session or any later
    /// one. Refused while a transaction is held (L-3).
    pub fn detach_clock(
        &mut self,
        now: Timestamp,
        domain: &str,
    ) -> Result<ReadHandle, ClientError> {
        self.check_name("domain", domain)?;
        self.outside_transaction()?;
        let h = self.add_read(now, detach_request(domain), None)?;
        self.clocks.forget(domain);
        Ok(h)
    }
}
