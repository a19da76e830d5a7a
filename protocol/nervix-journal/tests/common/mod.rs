//! What the journal's tests share: entries, a slot in memory, and the live set a journal
//! describes.

#![allow(dead_code)]

use std::collections::BTreeMap;

use nervix_journal::{
    BatchRecord, ClientJournal, ClientJournalConfig, CommandRecord, Entry, JournalKey,
    TransferKind, TransferRecord,
};
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::{FingerprintT, TransactionPreviewIdentityT};
use nervix_protocol::time::UnixMillis;
use sf_journal::recovery::SlotFiles;
use sf_journal::slot::{self, parse_segment_name};
use sf_journal::{FileOp, MemDir};

/// A command entry whose fields all depend on `n`.
pub fn command(n: u64, created: u64) -> CommandRecord {
    CommandRecord {
        reference: ExecutionReference::parse(&format!("ref-{n}")).expect("a valid reference"),
        query: format!("SELECT {n} FROM t WHERE s = 'é{n}'"),
        domain: n.is_multiple_of(2).then(|| format!("domain{n}")),
        position: (!n.is_multiple_of(3)).then_some(n.wrapping_mul(7).wrapping_add(1)),
        preview: (n % 4 != 1).then(|| TransactionPreviewIdentityT {
            transaction_id: format!("tx-{n}"),
            position: n.wrapping_add(100),
            planning_basis: Box::new(FingerprintT {
                bytes: vec![n as u8; 32],
            }),
        }),
        created_wall: UnixMillis(created),
    }
}

/// A transfer entry whose fields depend on `n`.
pub fn transfer(n: u64, created: u64) -> TransferRecord {
    TransferRecord {
        kind: if n.is_multiple_of(2) {
            TransferKind::Upload {
                domain: format!("d{n}"),
                resource: format!("r{n}"),
            }
        } else {
            TransferKind::Restore {
                statement: format!("RESTORE {n}"),
            }
        },
        reference: format!("up-{n}"),
        archive: format!("/archives/{n}.tar"),
        size: n.wrapping_mul(1000).wrapping_add(3),
        digest: [n as u8 ^ 0x5a; 32],
        created_wall: UnixMillis(created),
    }
}

/// A batch entry of `len` bytes.
pub fn batch(n: u64, len: usize, created: u64) -> BatchRecord {
    BatchRecord {
        domain: format!("dom{n}"),
        ingestor: format!("ing{n}"),
        batch: (0..len).map(|i| (i as u64 ^ n) as u8).collect(),
        created_wall: UnixMillis(created),
    }
}

/// An entry of one of the three kinds, chosen by `n`.
pub fn entry(n: u64, len: usize) -> Entry {
    match n % 3 {
        0 => Entry::Command(command(n, n.wrapping_add(1_000))),
        1 => Entry::Transfer(transfer(n, n.wrapping_add(1_000))),
        _ => Entry::Batch(batch(n, len, n.wrapping_add(1_000))),
    }
}

/// The journal's files as a driver reads them for recovery.
pub fn slot_files(dir: &MemDir) -> SlotFiles {
    let mut files = SlotFiles::default();
    for name in dir.names() {
        let bytes = dir.get(name).expect("listed").to_vec();
        if parse_segment_name(name).is_some() {
            files.segments.push((name.to_owned(), bytes));
        } else if name == slot::MANIFEST {
            files.manifest = Some(bytes);
        } else if name == slot::ACK_WATERMARK {
            files.ack_watermark = Some(bytes);
        } else if name == slot::SYMBOL_DICT {
            files.symbol_dict = Some(bytes);
        }
    }
    files
}

/// The live set: each key with its handed flag and entry.
pub type LiveSet = BTreeMap<JournalKey, (bool, Entry)>;

/// The live set a journal describes.
pub fn live_set(j: &ClientJournal) -> LiveSet {
    j.live_entries()
        .map(|e| (e.key, (e.handed, e.entry.clone())))
        .collect()
}

/// Recovers a journal from the memory slot and carries out the repairs.
pub fn reopen(dir: &mut MemDir, config: ClientJournalConfig) -> ClientJournal {
    let (j, ops) = ClientJournal::recover(config, &slot_files(dir)).expect("the slot recovers");
    dir.apply_all(&ops);
    j
}

/// Segment files present in the memory slot.
pub fn segment_count(dir: &MemDir) -> usize {
    dir.names()
        .filter(|n| parse_segment_name(n).is_some())
        .count()
}

/// Whether `ops` hold a sync of `file`.
pub fn syncs(ops: &[FileOp], file: &str) -> bool {
    ops.iter()
        .any(|op| matches!(op, FileOp::Sync { file: f } if f == file))
}
