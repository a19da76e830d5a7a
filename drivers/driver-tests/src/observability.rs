//! What the drivers tell a person debugging them, and what they must never tell: every
//! tracing event at `trace` is captured while sessions run over each transport with
//! credentials, a leader change, refused credentials, a producer's batch and a backup's
//! archive downloaded and restored, and none of the secrets appears in any of them.

use crate::{backed_up, config_of, scratch, seeds_of, spoken, Driver, Error, Via, WsAuth};
use nervix_driver_support::credentials::Credentials;
use nervix_harness::cluster::{ingestor_fields, INGESTOR};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{BatchOutcome, CommandResult, ProducerSpec};
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Everything the capturing subscriber was handed, as text.
static CAPTURED: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct Capture;

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        CAPTURED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs, once per test process, a subscriber that records every event and span at
/// `trace` as formatted text.
pub fn capture() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(|| Capture)
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other subscriber in this test process");
    });
}

/// What was captured so far.
pub fn captured() -> String {
    String::from_utf8_lossy(&CAPTURED.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
}

const USER: &str = "obs-user-Kq7";
const PASSWORD: &str = "obs-pw-Zr8+x%y";
const WRONG: &str = "obs-wrong-Pw41";
/// A cell value a batch carries.
const CELL: &str = "obs-cell-V4lue";

fn base64(s: &str) -> String {
    use base64_lite as b;
    b::encode(s.as_bytes())
}

/// A minimal standard base64 encoder, enough to name the `authorization` header's value.
mod base64_lite {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.len();
            let v = (u32::from(chunk[0]) << 16)
                | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
                | u32::from(*chunk.get(2).unwrap_or(&0));
            for i in 0..4 {
                if i <= n {
                    out.push(ABC[((v >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }
}

/// Item 2 of observability: no credential (user, password, the `authorization` value, the
/// percent-encoded `auth` query), no cell value and no archive byte appears in any event, over
/// every transport the driver speaks, while the events a person needs do appear.
pub fn no_secret_is_ever_logged<D: Driver>() {
    capture();
    let lb = Loopback::start(LoopbackConfig {
        nodes: 3,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap();
    let vias = [
        Via::Grpc,
        Via::Console(WsAuth::Header),
        Via::Console(WsAuth::Query),
    ];
    for via in spoken::<D>(&vias) {
        let d = D::new();
        let config = config_of::<D>(
            &seeds_of(&lb, via),
            Credentials::new(USER, PASSWORD),
            via,
            Duration::from_secs(10),
            Duration::from_secs(3),
        );
        let client = d.connect(config.clone()).unwrap();
        let r = d.execute(&client, "CREATE RELAY obs_a;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        // A leader change: the session is redirected and opened again.
        lb.set_leader((lb.leader() + 1) % 3);
        let r = d.execute(&client, "CREATE RELAY obs_b;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        let producer = d
            .producer(
                &client,
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()),
            )
            .unwrap();
        let mut b = producer.batch_builder();
        b.column("id", &[1u64]).unwrap();
        b.nullable_column("name", &[Some(CELL)]).unwrap();
        let mut pending = d.submit_batch(&producer, b.into()).unwrap();
        assert_eq!(
            d.batch_outcome(&mut pending, Duration::from_secs(10))
                .unwrap(),
            BatchOutcome::Completed
        );
        let _ = d.close_producer(producer, Duration::from_secs(5));
        // The archive of a backup, down and up again.
        let report = backed_up(&d, &config);
        let transfers = d.transfers(&config).unwrap();
        let dir = scratch::<D>(&format!("obs-{via:?}"));
        let archive = d.backup(&transfers, &report, &dir.join("a.nxb")).unwrap();
        let info = crate::info_of(&archive);
        let mut call = crate::transfers::restore_call("obs-restore-1", info);
        d.restore(&transfers, &mut call, &archive).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        // Credentials refused: the client parks and says so.
        d.set_credentials(&client, Credentials::new(USER, WRONG))
            .unwrap();
        lb.set_leader((lb.leader() + 1) % 3);
        let refused = d.execute(&client, "CREATE RELAY obs_c;");
        assert!(
            matches!(
                refused,
                Err(Error::Unauthenticated) | Ok(CommandResult::Uncertain { .. })
            ) || refused.is_ok(),
            "{refused:?}"
        );
        let _ = d.close(client, true);
    }
    let text = captured();
    for needed in [
        "nervix session opened",
        "nervix session lost",
        "nervix frame out",
        "nervix call attempt",
    ] {
        assert!(text.contains(needed), "no {needed:?} was logged");
    }
    let secrets = [
        PASSWORD.to_string(),
        WRONG.to_string(),
        USER.to_string(),
        base64(&format!("{USER}:{PASSWORD}")),
        base64(&format!("{USER}:{WRONG}")),
        nervix_tokio::percent_encode(PASSWORD),
        CELL.to_string(),
        // Every archive of the cluster starts so.
        "NXBACKUP".to_string(),
    ];
    for s in &secrets {
        if let Some(at) = text.find(s.as_str()) {
            let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
            panic!("{s:?} was logged: {}", &text[line..end]);
        }
    }
}

/// Item 3 of observability: `stats()` through the driver's API counts what the session did.
pub fn stats_count_what_the_client_did<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&crate::BOTH) {
        let d = D::new();
        let config = config_of::<D>(
            &seeds_of(&lb, via),
            Credentials::new("nervix", "nervix"),
            via,
            Duration::from_secs(10),
            Duration::from_secs(3),
        );
        let client = d.connect(config).unwrap();
        for i in 0..3 {
            let r = d
                .execute(&client, &format!("CREATE RELAY st_{i};"))
                .unwrap();
            assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        }
        lb.set_leader((lb.leader() + 1) % 3);
        let r = d.execute(&client, "CREATE RELAY st_last;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        let s = d.stats(&client).unwrap();
        assert_eq!(s.engine.commands_completed, 4, "{via:?}: {s:?}");
        assert_eq!(s.engine.commands_failed + s.engine.commands_uncertain, 0);
        assert!(s.engine.sessions_opened >= 2, "{via:?}: {s:?}");
        assert!(s.engine.redirects >= 1, "{via:?}: {s:?}");
        assert!(s.engine.frames_out >= 5 && s.engine.bytes_out > 0, "{s:?}");
        assert!(s.engine.frames_in >= 4 && s.engine.bytes_in > 0, "{s:?}");
        assert_eq!((s.unclaimed_held, s.unclaimed_lost), (0, 0));
        let _ = d.close(client, true);
    }
}

/// Tests of `tests/observability.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! observability_tests {
    (tokio) => {
        #[test]
        fn no_credential_cell_value_or_archive_byte_is_ever_logged() {
            $crate::run!(Tokio, observability::no_secret_is_ever_logged())
        }
        #[test]
        fn stats_through_the_api_count_what_the_client_did() {
            $crate::run!(Tokio, observability::stats_count_what_the_client_did())
        }
    };
    (blocking) => {
        #[test]
        fn no_credential_cell_value_or_archive_byte_is_ever_logged_blocking() {
            $crate::run!(Blocking, observability::no_secret_is_ever_logged())
        }
        #[test]
        fn stats_through_the_api_count_what_the_client_did_blocking() {
            $crate::run!(Blocking, observability::stats_count_what_the_client_did())
        }
    };
}
