//! Writes a deterministic seed corpus for every fuzz target into `corpus/<target>/` next to
//! this crate's manifest (that directory is git-ignored). Run it once before fuzzing:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example seed_corpus
//! ```
//!
//! Seeds are schema-valid frames drawn by the testkit generators from a fixed pseudo-random
//! sequence, laid out as each target reads its input, so the fuzzer starts past the identifier
//! and verification gates.

use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::*;
use nervix_protocol::limits::TRANSFER_LIMIT;
use nervix_protocol::testkit::{Gen, Generate};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Seeds written per target (per root for `client_roots`).
const PER_TARGET: u64 = 48;

/// A fixed pseudo-random byte source (SplitMix64).
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn fill(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// A frame of root `R` drawn from seed `n`.
fn frame<R: Root>(n: u64) -> Vec<u8>
where
    R::Owned: Generate,
{
    let mut rng = Bytes(n.wrapping_mul(31).wrapping_add(R::IDENTIFIER[3].into()));
    let len = 16 + (rng.next() % 2048) as usize;
    let seed = rng.fill(len);
    let value: R::Owned = Gen::new(&seed).value();
    Encoder::new()
        .encode_with_limit::<R>(&value, TRANSFER_LIMIT)
        .map(|b| b.to_vec())
        .unwrap_or_default()
}

fn write(dir: &Path, name: String, data: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join(name), data)
}

fn roots<R: Root>(dir: &Path, prefix: Option<u8>) -> io::Result<()>
where
    R::Owned: Generate,
{
    for n in 0..PER_TARGET {
        let mut data: Vec<u8> = prefix.into_iter().collect();
        data.extend(frame::<R>(n));
        write(dir, format!("seed-{}-{n}", R::EXTENSION), &data)?;
    }
    Ok(())
}

fn main() -> io::Result<()> {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    roots::<ServerMessageRoot>(&corpus.join("server_message"), None)?;
    roots::<UploadReplyRoot>(&corpus.join("upload_reply"), None)?;
    roots::<BackupDownloadMessageRoot>(&corpus.join("backup_download_message"), None)?;
    roots::<RestoreReplyRoot>(&corpus.join("restore_reply"), None)?;

    let client = corpus.join("client_roots");
    roots::<ClientMessageRoot>(&client, Some(0))?;
    roots::<UploadMessageRoot>(&client, Some(1))?;
    roots::<BackupDownloadRequestRoot>(&client, Some(2))?;
    roots::<RestoreMessageRoot>(&client, Some(3))?;

    let mut rng = Bytes(7);
    let transfer = corpus.join("transfer");
    let round_trip = corpus.join("round_trip");
    for n in 0..PER_TARGET {
        // Mode 1: a generated reply split into parts.
        let mut data = vec![1, 255];
        data.extend(rng.fill(255 + 1 + 3 + 64));
        write(&transfer, format!("seed-reply-{n}"), &data)?;
        // Mode 2: a generated server frame split into equal parts.
        let mut data = vec![2, n as u8, (rng.next() % 256) as u8];
        data.extend(frame::<ServerMessageRoot>(n + 1000));
        write(&transfer, format!("seed-joined-{n}"), &data)?;
        // Mode 0: parts spelled out.
        let mut data = vec![0];
        data.extend(rng.fill(96));
        write(&transfer, format!("seed-parts-{n}"), &data)?;

        let len = 32 + (rng.next() % 1024) as usize;
        write(&round_trip, format!("seed-{n}"), &rng.fill(len))?;
    }
    Ok(())
}
