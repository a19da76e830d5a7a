//! Subscriptions the client keeps across sessions (D-5, S-7): each one opened is opened again,
//! as a new generation, on every later session, before the transaction is attached. A
//! subscription deleted by the application is no longer restored.

use super::{ClientError, ReadHandle};
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::statements::{route, Route, StatementError};
use crate::time::Timestamp;
use std::collections::BTreeMap;

/// A subscription kept for later sessions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kept {
    pub domain: String,
    pub statement: String,
    /// The name its opening reply gave it.
    pub name: String,
}

/// The subscriptions the client keeps.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    kept: BTreeMap<u64, Kept>,
    next: u64,
}

/// The request that opens a subscription (S-1): one statement, subscription_type Row set
/// explicitly.
pub(crate) fn subscribe_request(domain: &str, statement: &str) -> ClientRequestT {
    ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: domain.to_string(),
        statement: statement.to_string(),
        subscription_type: Some(SubscriptionType::Row),
    }))
}

fn opened_name(frame: &ServerFrame) -> Option<String> {
    let view = frame.view();
    let opened = view
        .body_as_reply()?
        .body_as_subscribe_outcome()?
        .disposition_as_subscription_opened()?;
    Some(opened.subscription().name().to_string())
}

impl Subscriptions {
    /// The application's subscribe was answered.
    pub(crate) fn on_subscribe_reply(&mut self, request: &SubscribeRequestT, frame: &ServerFrame) {
        if let Some(name) = opened_name(frame) {
            self.kept.retain(|_, k| k.name != name);
            self.next += 1;
            self.kept.insert(
                self.next,
                Kept {
                    domain: request.domain.clone(),
                    statement: request.statement.clone(),
                    name,
                },
            );
        }
    }

    /// The application's unsubscribe was answered, or asked for: either way the subscription
    /// is not opened again on a later session.
    pub(crate) fn forget(&mut self, name: &str) {
        self.kept.retain(|_, k| k.name != name);
    }

    /// The subscriptions to open again on a new session, in the order they were first opened.
    pub(crate) fn restorations(&self) -> impl Iterator<Item = (u64, ClientRequestT)> + '_ {
        self.kept
            .iter()
            .map(|(id, k)| (*id, subscribe_request(&k.domain, &k.statement)))
    }

    /// A reopening was answered. A refusal keeps the subscription for the next session.
    pub(crate) fn on_restore_reply(&mut self, id: u64, frame: &ServerFrame) {
        if let (Some(name), Some(k)) = (opened_name(frame), self.kept.get_mut(&id)) {
            k.name = name;
        }
    }

    /// How many are kept.
    pub(crate) fn len(&self) -> usize {
        self.kept.len()
    }
}

impl super::Client {
    /// Opens a subscription with one `CREATE SUBSCRIPTION` statement (S-1); once open it is
    /// opened again, as a new generation, on every later session (D-5). Refused while a
    /// transaction is held (L-3).
    pub fn keep_subscription(
        &mut self,
        now: Timestamp,
        domain: &str,
        statement: &str,
    ) -> Result<ReadHandle, ClientError> {
        self.check_name("domain", domain)?;
        self.outside_transaction()?;
        match route(statement, false)? {
            Route::Subscribe(_) => {}
            _ => {
                return Err(StatementError::Malformed {
                    statement: statement.chars().take(40).collect(),
                    expected: "CREATE SUBSCRIPTION ...",
                }
                .into())
            }
        }
        self.add_read(now, subscribe_request(domain, statement), None)
    }

    /// Deletes a subscription by name (S-6): it is opened again on no later session. Refused
    /// while a transaction is held (L-3).
    pub fn unsubscribe(&mut self, now: Timestamp, name: &str) -> Result<ReadHandle, ClientError> {
        self.check_name("subscription", name)?;
        self.outside_transaction()?;
        let request = ClientRequestT::UnsubscribeRequest(Box::new(UnsubscribeRequestT {
            subscription: name.to_string(),
        }));
        let h = self.add_read(now, request, None)?;
        self.subscriptions.forget(name);
        Ok(h)
    }
}
