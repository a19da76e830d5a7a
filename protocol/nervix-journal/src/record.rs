//! What the journal keeps: the entries, and the key each is kept under.

use bytes::Bytes;
use nervix_protocol::client::RetainedCommand;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::TransactionPreviewIdentityT;
use nervix_protocol::time::{Timestamp, UnixMillis};

/// The key an entry is journaled under: given by [`ClientJournal::put`](crate::ClientJournal::put),
/// named again by `handed` and `end`. Keys grow; after a restart they continue past every key
/// the recovered journal still names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JournalKey(pub u64);

/// A retained command: everything needed to repeat it exactly (E-2), and when it was created
/// on the wall clock (the retry horizon is measured from it after a restart, E-4).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRecord {
    /// The reference every repetition carries.
    pub reference: ExecutionReference,
    /// The exact query text.
    pub query: String,
    /// The domain it named.
    pub domain: Option<String>,
    /// The expected transaction position it carried.
    pub position: Option<u64>,
    /// The expected preview it carried.
    pub preview: Option<TransactionPreviewIdentityT>,
    /// When the reference was created, on the wall clock.
    pub created_wall: UnixMillis,
}

impl CommandRecord {
    /// The record of a retained command, created at `created_wall` on the wall clock (the
    /// retained command's own time is monotonic and means nothing after a restart).
    #[must_use]
    pub fn from_retained(c: &RetainedCommand, created_wall: UnixMillis) -> Self {
        Self {
            reference: c.reference.clone(),
            query: c.query.clone(),
            domain: c.domain.clone(),
            position: c.position,
            preview: c.preview.clone(),
            created_wall,
        }
    }

    /// The retained command this record keeps, with `created` as its monotonic creation time
    /// (the restarted process's clock).
    #[must_use]
    pub fn to_retained(&self, created: Timestamp) -> RetainedCommand {
        RetainedCommand {
            reference: self.reference.clone(),
            query: self.query.clone(),
            domain: self.domain.clone(),
            position: self.position,
            preview: self.preview.clone(),
            created,
        }
    }
}

/// Which separate call a transfer is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransferKind {
    /// A resource upload.
    Upload {
        /// The domain it goes to.
        domain: String,
        /// The resource it creates or replaces.
        resource: String,
    },
    /// A restore from a backup archive.
    Restore {
        /// The restore statement.
        statement: String,
    },
}

/// An upload or a restore: its identity and the archive it sends, so the whole archive can be
/// sent again under the same identity (an archive whose bytes changed is refused by its
/// digest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferRecord {
    /// Upload or restore, with what names its target.
    pub kind: TransferKind,
    /// The call's reference.
    pub reference: String,
    /// The archive's path.
    pub archive: String,
    /// The archive's size in bytes.
    pub size: u64,
    /// The archive's BLAKE3 digest.
    pub digest: [u8; 32],
    /// When the call was created, on the wall clock.
    pub created_wall: UnixMillis,
}

/// A producer batch of the outbox: the encoded batch and the producer it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRecord {
    /// The producer's domain.
    pub domain: String,
    /// The producer's ingestor.
    pub ingestor: String,
    /// The batch, as the producer submitted it (its Arrow IPC bytes). Shared, not copied,
    /// between the record, the journal's live set and the batch waiting to be sent.
    pub batch: Bytes,
    /// When it was submitted, on the wall clock.
    pub created_wall: UnixMillis,
}

/// One thing the journal keeps.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Entry {
    /// A retained command.
    Command(CommandRecord),
    /// A command made while a `BEGIN` was unanswered, recorded before the BEGIN's
    /// answer gave the position, preview and domain its frames carry: the record is not the
    /// command that is sent, so it is never repeated from it after a restart (E-2), and is
    /// reported as of unknown outcome, naming its reference (E-3).
    HeldCommand(CommandRecord),
    /// An upload or a restore.
    Transfer(TransferRecord),
    /// A producer batch.
    Batch(BatchRecord),
}
