//! The journal of a Nervix client that survives its own crash (issue 19), sans IO.
//!
//! What a client must not forget when its process dies is kept as records in a
//! store-and-forward ring ([`sf_journal::ring::Ring`]: its own segments, a CRC32C per frame, a
//! torn tail cut on recovery):
//!
//! * a retained command ([`CommandRecord`]): its execution reference, the exact query, the
//!   domain, the expected position and preview, and when it was created (E-2);
//! * an upload or a restore ([`TransferRecord`]): its reference, statement or target, the
//!   archive's path, size and BLAKE3 digest;
//! * a producer batch of the outbox ([`BatchRecord`]).
//!
//! The journal is a log of three records: `Put` (a key and its entry), `Handed` (the entry
//! was handed to the transport) and `End` (its outcome is known and was handed on). The live
//! set is every key put and not ended. The ring is trimmed to just below the lowest FSN a live
//! key still needs; a live record that pins the oldest segment while the ring is past half
//! full is copied forward (put again under its key, the newest copy wins on recovery), a
//! bounded number per call.
//!
//! Nothing here touches a file or a clock: [`ClientJournal`] answers every call with the
//! [`FileOp`](sf_journal::FileOp)s its driver carries out in order, and recovers from the
//! bytes of the slot's files ([`SlotFiles`](sf_journal::recovery::SlotFiles)). After a
//! restart, [`ClientJournal::classify`] sorts what came back: commands and transfers still
//! inside the retry horizon may be repeated, older ones are reported unknown naming their
//! reference (E-4), and batches are either never handed (sent after the restart) or of unknown
//! outcome (P-8: never sent again).

mod classify;
mod codec;
mod commands;
mod journal;
mod outbox;
mod record;
mod report;
mod transfers;

pub use classify::{
    RecoveredBatch, RecoveredCommand, RecoveredTransfer, RecoveryList, DEFAULT_HORIZON,
};
pub use codec::{decode_record, encode_record, DecodeError, Record};
pub use commands::{
    keeps, kept_since, CommandJournal, CommandJournalStats, CommandRecovery, JournaledCommand,
    RecordEnd, RecordStore,
};
pub use journal::{
    ClientJournal, ClientJournalConfig, JournalError, JournalLink, JournalStats, LiveEntry,
    SyncPolicy, Written, DEFAULT_CAPACITY_BYTES, DEFAULT_SEGMENT_BYTES,
};
pub use outbox::{BatchOutbox, HandedStore, JournaledBatch, OutboxStats, UnsentBatch};
pub use record::{BatchRecord, CommandRecord, Entry, JournalKey, TransferKind, TransferRecord};
pub use transfers::{
    created_wall, JournaledTransfer, TransferEnd, TransferJournal, TransferJournalStats,
    TransferRefused, TransferTicket,
};
