//! an archive reaches the name the user asked for only verified, owner-only, and a
//! download killed mid-way leaves nothing under that name.

use nervix_driver_support::{ArchiveSource, ArchiveWriter, CommitError};
use nervix_protocol::calls::{
    ArchiveDigest, ArchiveInfo, DownloadEnd, Need, TransferConfig, UploadCall, UploadSpec,
};
use nervix_protocol::schema::BackupDownloadFailure;
use nervix_protocol::time::Timestamp;
use std::io::{BufRead, BufReader, Cursor};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nervix-a4-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn info(bytes: &[u8]) -> ArchiveInfo {
    let mut d = ArchiveDigest::new();
    d.update(bytes);
    d.finish()
}

fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_4_only_a_verified_archive_reaches_its_name_owner_only() {
    let d = dir("verified");
    let target = d.join("tenant.nxb");
    let bytes = b"archive bytes".to_vec();
    let mut w = ArchiveWriter::create(&target).unwrap();
    w.write(&bytes[..5]).unwrap();
    // Mid-download, the name the user asked for does not exist.
    assert!(!target.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.temp_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    w.write(&bytes[5..]).unwrap();
    let path = w.commit(&DownloadEnd::Verified(info(&bytes))).unwrap();
    assert_eq!(path, target);
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(entries(&d), ["tenant.nxb"]);
}

#[test]
fn a_4_an_unverified_failed_or_short_download_leaves_nothing() {
    let d = dir("failed");
    let target = d.join("x.nxb");
    let bytes = b"0123456789".to_vec();
    // Not verified.
    let mut w = ArchiveWriter::create(&target).unwrap();
    w.write(&bytes).unwrap();
    let verdict = DownloadEnd::Unavailable {
        failure: BackupDownloadFailure::NotRetained,
        message: String::new(),
    };
    assert!(matches!(w.commit(&verdict), Err(CommitError::NotVerified)));
    // Verified, but fewer bytes written than the verified size.
    let mut w = ArchiveWriter::create(&target).unwrap();
    w.write(&bytes[..4]).unwrap();
    assert!(matches!(
        w.commit(&DownloadEnd::Verified(info(&bytes))),
        Err(CommitError::SizeMismatch {
            written: 4,
            expected: 10
        })
    ));
    // Dropped mid-way.
    let mut w = ArchiveWriter::create(&target).unwrap();
    w.write(&bytes).unwrap();
    drop(w);
    assert!(entries(&d).is_empty(), "{:?}", entries(&d));
    // An existing file under the name is left as it was by a failed download.
    std::fs::write(&target, b"old").unwrap();
    let mut w = ArchiveWriter::create(&target).unwrap();
    w.write(b"new").unwrap();
    w.discard();
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
}

#[test]
fn a_4_a_restarted_download_keeps_only_the_last_attempts_bytes() {
    let d = dir("restart");
    let target = d.join("r.nxb");
    let bytes = b"the whole archive".to_vec();
    let mut w = ArchiveWriter::create(&target).unwrap();
    w.write(b"the wh").unwrap();
    w.restart().unwrap();
    w.write(&bytes).unwrap();
    w.commit(&DownloadEnd::Verified(info(&bytes))).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
}

/// The child half of the kill test: writes part of an archive, says so, and waits to be killed.
#[test]
fn a_4_child_writer() {
    let Ok(target) = std::env::var("NERVIX_A4_TARGET") else {
        return;
    };
    let mut w = ArchiveWriter::create(Path::new(&target)).unwrap();
    w.write(&[7u8; 100_000]).unwrap();
    println!("WRITING {}", w.temp_path().display());
    loop {
        w.write(&[7u8; 1000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_4_a_download_killed_midway_leaves_nothing_under_the_final_name() {
    let d = dir("killed");
    let target = d.join("killed.nxb");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_4_child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("NERVIX_A4_TARGET", &target)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let temp = loop {
        let line = lines.next().expect("the child writes").unwrap();
        // The harness may print the test's name on the same line first.
        if let Some((_, p)) = line.split_once("WRITING ") {
            break PathBuf::from(p);
        }
    };
    assert!(temp.exists());
    // SIGKILL on unix: no destructor, no cleanup, as when the machine loses power mid-way.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !target.exists(),
        "a partial archive is visible under its name"
    );
    // What is left is only the hidden temporary file, never the final name.
    for name in entries(&d) {
        assert!(name.starts_with(".killed.nxb.partial-"), "{name}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_4_a_source_reads_the_pieces_asked_for_and_its_digest_in_one_pass() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    let mut s = ArchiveSource::new(Cursor::new(bytes.clone()));
    assert_eq!(s.info().unwrap(), info(&bytes));
    assert_eq!(s.piece(0, 10).unwrap(), &bytes[..10]);
    assert_eq!(s.piece(10, 4990).unwrap(), &bytes[10..]);
    // A repeat from the first byte seeks back.
    assert_eq!(s.piece(0, 3).unwrap(), &bytes[..3]);
    // Past the end: a short piece.
    assert_eq!(s.piece(4998, 10).unwrap(), &bytes[4998..]);
}

#[test]
fn u_1_source_pieces_as_bytes_feed_chunk_parts_with_the_frames_of_chunk() {
    let bytes: Vec<u8> = (0..=250u8).cycle().take(10_000).collect();
    let spec = || UploadSpec {
        domain: "tenant".into(),
        resource: "bundle".into(),
        identity: "src-1".into(),
    };
    let cfg = TransferConfig::upload().with_chunk_size(3000);
    let mut s = ArchiveSource::new(Cursor::new(bytes.clone()));
    let mut one = UploadCall::new(spec(), bytes.len() as u64, cfg).unwrap();
    let mut two = UploadCall::new(spec(), bytes.len() as u64, cfg).unwrap();
    let far = Timestamp::from_nanos(u64::MAX);
    one.start(Timestamp::ZERO, far).unwrap();
    two.start(Timestamp::ZERO, far).unwrap();
    let mut kept = Vec::new();
    while let Need::Piece { offset, len } = two.need() {
        let piece = s.piece_bytes(offset, len).unwrap();
        assert_eq!(&piece[..], &bytes[offset as usize..offset as usize + len]);
        let whole = one.chunk(Timestamp::ZERO, &piece).unwrap();
        let parts = two.chunk_parts(Timestamp::ZERO, piece.clone()).unwrap();
        assert_eq!(parts.payload().as_ptr(), piece.as_ptr());
        assert_eq!(parts.to_bytes(), whole);
        // Pieces still held are never overwritten by the next read.
        kept.push(piece);
    }
    assert_eq!(two.need(), Need::Reply);
    assert_eq!(kept.concat(), bytes);
    // A repeat from the first byte seeks back; past the end, a short piece.
    assert_eq!(&s.piece_bytes(0, 5).unwrap()[..], &bytes[..5]);
    assert_eq!(&s.piece_bytes(9_998, 10).unwrap()[..], &bytes[9_998..]);
}
