//! The separate calls' plan as a driver runs it, and the outlet of a stream: a call makes
//! exactly its attempts, the seeds in turn, each failure owing a longer pause before the next
//! attempt and the last one's pause before giving up (T-3a, T-5); a redirect naming a leader
//! is followed at once (U-4); a call that ran out of attempts says how the last ended, why
//! an attempt could not connect, and what an https client refused to follow (T-2); the ends
//! never repeated end the call (T-5, T-6). An outlet hands its events over in order while
//! the reader takes them.

use nervix_driver_support::call_end::{retry_pause, CallEnd};
use nervix_driver_support::config::ConfigError;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::driver_core::{Given, Outlet, StreamSink};
use nervix_driver_support::transfer::{
    download_end, take_download_step, CallSetup, ProgressReport, TransferFailure, Turn, ATTEMPTS,
};
use nervix_driver_support::ArchiveWriter;
use nervix_protocol::calls::{
    ArchiveDigest, BackupDownload, DownloadEnd, DownloadStep, Interruption, Leader, Progress,
    TransferConfig, UploadStep,
};
use nervix_protocol::client::{ClientConfig, LeaderUri};
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::schema::BackupDownloadFailure;
use nervix_protocol::time::Timestamp;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

nervix_driver_support::transfer_error! {
    /// A driver's error, as the tests make it.
    pub enum Failure {}
    frame_refused = "refused (code {code})";
    gave_up(attempts, last, unreached: String) => {
        Self::GaveUp { attempts, last, unreached }
    }
    fields {
        /// Why an attempt could not connect.
        unreached: Option<String>,
    }
}

fn ep(s: &str) -> Endpoint {
    Endpoint::parse(s).unwrap()
}

fn setup(seeds: &[&str]) -> CallSetup {
    let seeds = seeds.iter().map(|s| ep(s)).collect();
    let client = ClientConfig::new(seeds, 7);
    let credentials = Credentials::new("alice", "secret");
    CallSetup::new(&client, &credentials, Duration::from_secs(10)).unwrap()
}

fn cut() -> UploadStep {
    UploadStep::Interrupted {
        cause: Interruption::Transport,
        uncertain: false,
    }
}

#[test]
fn t_3a_a_plan_makes_exactly_its_attempts_and_pauses_longer_after_each_failure() {
    let mut plan =
        setup(&["https://a:1/", "https://b:2/"]).plan::<Failure>(LeaderUri::Grpc, "download");
    let mut turns = Vec::new();
    let err = loop {
        match plan.next(turns.len() as u32) {
            Ok(turn) => {
                if let Turn::Attempt(_) = turn {
                    *plan.unreached() = Some("no route".into());
                    assert_eq!(plan.ended(cut()), None, "a cut attempt is no answer");
                }
                turns.push(turn);
            }
            Err(e) => break e,
        }
    };
    let mut expected = Vec::new();
    for n in 1..=ATTEMPTS {
        let seed = if n % 2 == 1 {
            "https://a:1/"
        } else {
            "https://b:2/"
        };
        expected.push(Turn::Attempt(ep(seed)));
        expected.push(Turn::Pause(retry_pause(n)));
    }
    assert_eq!(turns, expected, "the seeds in turn, and the last pause too");
    let Failure::GaveUp {
        attempts,
        last,
        unreached,
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(attempts, 2 * ATTEMPTS, "as the machine counts them");
    assert!(last.contains("Interrupted"), "{last}");
    assert!(last.contains("could not connect: no route"), "{last}");
    assert_eq!(unreached.as_deref(), Some("no route"));
}

#[test]
fn u_4_a_redirect_naming_a_leader_is_followed_at_once_and_an_answer_ends_the_plan() {
    let mut plan = setup(&["http://a:1/"]).plan::<Failure>(LeaderUri::Grpc, "download");
    assert_eq!(plan.next(0).unwrap(), Turn::Attempt(ep("http://a:1/")));
    let leader = Leader {
        node: "n2".into(),
        grpc_uri: Some(ep("http://l:7/")),
        web_console_uri: Some(ep("http://l:8/")),
    };
    assert_eq!(plan.ended(UploadStep::Redirect(Some(leader))), None);
    assert_eq!(
        plan.next(1).unwrap(),
        Turn::Attempt(ep("http://l:7/")),
        "no pause before the leader"
    );
    assert_eq!(plan.ended(UploadStep::Redirect(None)), None);
    assert_eq!(plan.next(2).unwrap(), Turn::Pause(retry_pause(1)));
    assert_eq!(plan.next(2).unwrap(), Turn::Attempt(ep("http://l:7/")));
}

#[test]
fn t_2_a_plan_that_gave_up_names_the_http_redirect_it_refused() {
    let mut plan = setup(&["https://a:1/"]).plan::<Failure>(LeaderUri::Grpc, "download");
    let leader = Leader {
        node: "n2".into(),
        grpc_uri: Some(ep("http://l:7/")),
        web_console_uri: None,
    };
    let mut made = 0;
    let err = loop {
        match plan.next(made) {
            Ok(Turn::Attempt(to)) => {
                assert_eq!(to, ep("https://a:1/"), "never the http leader");
                made += 1;
                assert_eq!(plan.ended(UploadStep::Redirect(Some(leader.clone()))), None);
            }
            Ok(Turn::Pause(_)) => {}
            Err(e) => break e,
        }
    };
    assert_eq!(made, ATTEMPTS);
    let Failure::GaveUp {
        last, unreached, ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert!(last.contains("was not followed from https"), "{last}");
    assert_eq!(unreached, None);
}

#[test]
fn t_5_t_6_the_ends_never_repeated_end_the_call() {
    assert!(matches!(
        Failure::ended(CallEnd::Unauthenticated),
        Err(Failure::Unauthenticated)
    ));
    assert!(matches!(
        Failure::ended(CallEnd::FrameRefused(11)),
        Err(Failure::FrameRefused { code: 11 })
    ));
    assert!(Failure::ended(CallEnd::Retry).is_ok());
    assert_eq!(
        Failure::frame_refused(1009).to_string(),
        "refused (code 1009)"
    );
    let config: Failure = ConfigError::NoSeed.into();
    assert!(matches!(config, Failure::Config(ConfigError::NoSeed)));
}

/// A sink that takes `room` events, then none; or none at all once gone.
struct Reader {
    took: Vec<u32>,
    room: Rc<Cell<usize>>,
    gone: bool,
}

impl StreamSink<u32> for Reader {
    fn dropped(&self) -> bool {
        self.gone
    }
    fn give(&mut self, event: u32) -> Given<u32> {
        if self.gone {
            return Given::Gone;
        }
        if self.room.get() == 0 {
            return Given::Full(event);
        }
        self.room.set(self.room.get() - 1);
        self.took.push(event);
        Given::Taken
    }
}

#[test]
fn an_outlet_hands_its_events_over_in_order_while_the_reader_takes_them() {
    let room = Rc::new(Cell::new(2));
    let reader = Reader {
        took: Vec::new(),
        room: room.clone(),
        gone: false,
    };
    let mut out = Outlet::new(reader);
    for e in 1..=5 {
        out.keep(e);
    }
    assert!(!out.flush(), "three wait");
    assert_eq!(out.sink().took, [1, 2]);
    assert!(!out.flush(), "no room: nothing moves");
    assert_eq!(out.sink().took, [1, 2]);
    room.set(10);
    out.keep(6);
    assert!(out.flush(), "all went");
    assert_eq!(
        out.sink().took,
        [1, 2, 3, 4, 5, 6],
        "in the order they were kept"
    );
    let mut gone = Outlet::new(Reader {
        took: Vec::new(),
        room: Rc::new(Cell::new(0)),
        gone: true,
    });
    gone.keep(1);
    assert!(gone.flush(), "a reader that went takes them all, dropped");
    assert!(gone.flush());
    assert!(gone.sink().took.is_empty());
}

/// A download's answer: a verified archive is put in place under its name, one
/// no longer available is the call's error and leaves nothing behind.
#[test]
fn a_4_a_download_end_puts_a_verified_archive_in_place_and_an_unavailable_one_fails() {
    let dir = std::env::temp_dir().join(format!("nervix-plan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("tenant.nxb");
    let mut writer = ArchiveWriter::create(&target).unwrap();
    writer.write(b"archive").unwrap();
    let mut digest = ArchiveDigest::new();
    digest.update(b"archive");
    let end = DownloadEnd::Verified(digest.finish());
    let path = download_end::<Failure>(writer, end).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"archive");

    let other = dir.join("other.nxb");
    let writer = ArchiveWriter::create(&other).unwrap();
    let end = DownloadEnd::Unavailable {
        failure: BackupDownloadFailure::NotRetained,
        message: "gone".into(),
    };
    let err = download_end::<Failure>(writer, end).unwrap_err();
    assert!(
        matches!(&err, Failure::Unavailable { message, .. } if message == "gone"),
        "{err:?}"
    );
    assert!(!other.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a download attempt does with each step, the same in every driver: bytes are written
/// and their progress told, a start or nothing new reads on, and every other step ends the
/// attempt unchanged.
#[test]
fn a_4_a_download_attempt_writes_its_bytes_reads_on_after_a_start_and_ends_on_any_other_step() {
    let dir = std::env::temp_dir().join(format!("nervix-step-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut digest = ArchiveDigest::new();
    digest.update(b"archive");
    let info = digest.finish();
    let mut call = BackupDownload::new(
        ExecutionReference::parse("ref-step").unwrap(),
        info,
        TransferConfig::download(),
    )
    .unwrap();
    call.start(Timestamp::from_nanos(1)).unwrap();
    let mut writer = ArchiveWriter::create(&dir.join("tenant.nxb")).unwrap();
    let mut told = Vec::new();
    let mut report = ProgressReport::new(|p: Progress| told.push((p.attempt, p.done)));
    for step in [DownloadStep::Started, DownloadStep::Continue] {
        let next = take_download_step(&call, step, &mut writer, &mut report).unwrap();
        assert_eq!(next, None);
    }
    assert_eq!(writer.written(), 0);
    let bytes = DownloadStep::Bytes(bytes::Bytes::from_static(b"arch"));
    assert_eq!(
        take_download_step(&call, bytes, &mut writer, &mut report).unwrap(),
        None
    );
    assert_eq!(writer.written(), 4, "the bytes are written");
    let ends = [
        DownloadStep::Ended(DownloadEnd::Verified(info)),
        DownloadStep::Redirect(None),
        DownloadStep::Interrupted {
            cause: Interruption::Transport,
            retained: false,
        },
    ];
    for end in ends {
        let next = take_download_step(&call, end.clone(), &mut writer, &mut report).unwrap();
        assert_eq!(next, Some(end), "the attempt ends with the step itself");
    }
    assert_eq!(writer.written(), 4, "an end writes nothing");
    assert_eq!(
        told,
        [(1, 0)],
        "the attempt's progress is told once it moved"
    );
    drop(writer);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The call machines' clock counts from the setup's making.
#[test]
fn a_call_setup_clock_counts_from_its_making() {
    let setup = setup(&["https://a:1/"]);
    let first = setup.now();
    std::thread::sleep(Duration::from_millis(2));
    let later = setup.now();
    assert!(later > first && later.as_nanos() >= 2_000_000, "{later:?}");
}
