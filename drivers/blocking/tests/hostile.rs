//! The blocking driver against a hostile peer over real sockets on 127.0.0.1: floods of
//! frames nobody asked for, and outcomes nobody waits for. The scenarios are written once in
//! `nervix-driver-tests`, for both drivers. Every test is bounded in time.

nervix_driver_tests::hostile_tests!(blocking);

use nervix_blocking::Config;
use nervix_driver_support::api::DriverEvent;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::session::End;
use nervix_loopback::{bounded, Loopback, LoopbackConfig};
use nervix_protocol::client::CommandResult;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the relay trickles, and how fast.
const TRICKLE: Duration = Duration::from_secs(4);
const PACE: Duration = Duration::from_millis(5);
/// How long a relay reading a trickle does so.
const SLOW_READING: Duration = Duration::from_secs(10);

/// A relay in front of one console endpoint: it passes bytes both ways until told to
/// trickle; then the connections open at that time get, instead of what the server sends, the
/// start of a long message (a WebSocket header of 60 000 bytes, or over TLS a record header of
/// 16 000) and then one byte every [`PACE`] for [`TRICKLE`]: each socket read of the client
/// brings a byte in time, and the message never completes. It notes when the client leaves a
/// trickled connection. With `reading`, it reads what the client sends a chunk at a time, one
/// chunk every pace, for [`SLOW_READING`]: a peer reading a trickle.
struct Relay {
    port: u16,
    conns: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
    left: Arc<Mutex<Option<Instant>>>,
}

impl Relay {
    fn start(upstream: String, tls: bool, reading: Option<(usize, Duration)>) -> Relay {
        Self::start_with(upstream, tls, reading, false)
    }

    /// As [`Relay::start`]; with `first_upgraded`, the first connection trickles on its own
    /// once the server's upgrade answer went through, and what the client sends on it from
    /// then on never reaches the server (plain only).
    fn start_with(
        upstream: String,
        tls: bool,
        reading: Option<(usize, Duration)>,
        first_upgraded: bool,
    ) -> Relay {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let conns: Arc<Mutex<Vec<Arc<AtomicBool>>>> = Arc::default();
        let left: Arc<Mutex<Option<Instant>>> = Arc::default();
        let (c2, l2) = (conns.clone(), left.clone());
        std::thread::spawn(move || {
            for client in l.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let on = Arc::new(AtomicBool::new(false));
                let upgraded_trickles = first_upgraded && c2.lock().unwrap().is_empty();
                c2.lock().unwrap().push(on.clone());
                let (mut cr, mut sw) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (on_up, left) = (on.clone(), l2.clone());
                // The client's bytes go up until the client leaves.
                std::thread::spawn(move || {
                    let (chunk, pace) = reading.unwrap_or((16 * 1024, Duration::ZERO));
                    let slow_until = Instant::now() + SLOW_READING;
                    let mut buf = vec![0u8; chunk];
                    loop {
                        if reading.is_some() && Instant::now() < slow_until {
                            std::thread::sleep(pace);
                        }
                        match cr.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            // A connection trickling since its upgrade keeps what the client
                            // sends from the server.
                            Ok(_) if upgraded_trickles && on_up.load(Ordering::SeqCst) => {}
                            Ok(n) => {
                                if sw.write_all(&buf[..n]).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    if on_up.load(Ordering::SeqCst) {
                        *left.lock().unwrap() = Some(Instant::now());
                    }
                    let _ = sw.shutdown(Shutdown::Both);
                });
                // The server's bytes come down until the trickle starts.
                let (mut sr, mut cw) = (server, client);
                std::thread::spawn(move || {
                    sr.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
                    let mut buf = [0u8; 16 * 1024];
                    let mut head = Vec::new();
                    while !on.load(Ordering::SeqCst) {
                        match sr.read(&mut buf) {
                            Ok(0) => return,
                            Ok(n) if upgraded_trickles => {
                                // The answer's head goes through, then the trickle starts.
                                // The trickle is on before the client can read the head, so
                                // nothing the client sends after it reaches the server.
                                head.extend_from_slice(&buf[..n]);
                                if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                                    on.store(true, Ordering::SeqCst);
                                    if cw.write_all(&head[..end + 4]).is_err() {
                                        return;
                                    }
                                }
                            }
                            // What came once the trickle started is not passed on, however
                            // late this thread looked.
                            Ok(_) if on.load(Ordering::SeqCst) => break,
                            Ok(n) => {
                                if cw.write_all(&buf[..n]).is_err() {
                                    return;
                                }
                            }
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                                ) => {}
                            Err(_) => return,
                        }
                    }
                    let head: &[u8] = if tls {
                        &[0x17, 0x03, 0x03, 0x3e, 0x80]
                    } else {
                        &[0x82, 126, 0xea, 0x60]
                    };
                    if cw.write_all(head).is_err() {
                        return;
                    }
                    let until = Instant::now() + TRICKLE;
                    while Instant::now() < until && cw.write_all(b"x").is_ok() {
                        std::thread::sleep(PACE);
                    }
                });
            }
        });
        Relay { port, conns, left }
    }

    /// Trickles on every connection open now.
    fn trickle(&self) {
        for on in self.conns.lock().unwrap().iter() {
            on.store(true, Ordering::SeqCst);
        }
    }

    /// When the client left a trickled connection, if it did.
    fn left(&self) -> Option<Instant> {
        *self.left.lock().unwrap()
    }
}

/// Where the relay in front of `lb`'s console goes.
fn upstream_of(lb: &Loopback) -> String {
    lb.console_endpoints()[0]
        .split("://")
        .nth(1)
        .unwrap()
        .trim_end_matches('/')
        .to_string()
}

/// T-8: a server trickling a frame a byte at a time (over TLS, a record) cannot hold the
/// session's read: what the driver queued meanwhile is written within the poll interval, and
/// when the call's deadline passes with nothing heard the session is left at once, not when
/// the trickle ends.
fn trickled_frame_holds_no_read(tls: bool) {
    bounded(Duration::from_secs(30), move || {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            tls,
            ..LoopbackConfig::default()
        })
        .unwrap();
        let relay = Relay::start(upstream_of(&lb), tls, None);
        let seed = if tls {
            format!("https://localhost:{}/", relay.port)
        } else {
            format!("http://127.0.0.1:{}/", relay.port)
        };
        let mut cfg = Config::new(&[&seed], Credentials::new("nervix", "nervix"))
            .unwrap()
            .with_timeouts(Duration::from_millis(600), Duration::from_secs(3));
        if let Some(der) = lb.certificate_der() {
            cfg = cfg.with_root(der.to_vec());
        }
        // Longer than the trickle's pace: a read bounded only per system call is held.
        cfg.poll_interval = Duration::from_millis(50);
        cfg.client.backoff_initial = Duration::from_millis(20);
        cfg.client.backoff_max = Duration::from_millis(200);
        let c = nervix_blocking::Client::connect(cfg).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        let r = c.execute("CREATE RELAY before;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        relay.trickle();
        let started = Instant::now();
        let p = c.submit("CREATE RELAY during;").unwrap();
        let reference = p.reference().to_string();
        let mut reached = None;
        while started.elapsed() < TRICKLE + Duration::from_secs(2) {
            if lb.stats().references.contains(&reference) {
                reached = Some(started.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = p.wait().unwrap();
        assert!(matches!(r, CommandResult::Uncertain { .. }), "{r:?}");
        let reached = reached.expect("the command reached the server");
        assert!(
            reached < Duration::from_millis(1000),
            "the command waited {reached:?} behind the trickled read"
        );
        let mut left = None;
        while left.is_none() && started.elapsed() < TRICKLE + Duration::from_secs(2) {
            left = relay.left().map(|t| t - started);
            std::thread::sleep(Duration::from_millis(5));
        }
        let left = left.expect("the client left the trickled connection");
        assert!(
            left < Duration::from_millis(1800),
            "the client left the trickled connection after {left:?}"
        );
        // A new session goes on.
        let r = c.execute("CREATE RELAY after;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        eprintln!("reached the server after {reached:?}, left after {left:?}");
    });
}

#[test]
fn t_8_a_frame_trickled_byte_by_byte_holds_no_read_past_the_poll_interval_blocking() {
    trickled_frame_holds_no_read(false);
}

#[test]
fn t_8_a_tls_record_trickled_byte_by_byte_holds_no_read_past_the_poll_interval_blocking() {
    trickled_frame_holds_no_read(true);
}

/// T-8: a peer reading a trickle (256 KiB every 50 ms) cannot stretch a write past the write
/// deadline: each socket write moves a little before its own timeout, so only a deadline on
/// the whole write of a frame ends the session when a frame of almost 4 MiB takes longer than
/// the deadline to go.
fn trickle_reader_stretches_no_write(tls: bool) {
    bounded(Duration::from_secs(40), move || {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            tls,
            ..LoopbackConfig::default()
        })
        .unwrap();
        let relay = Relay::start(
            upstream_of(&lb),
            tls,
            Some((256 * 1024, Duration::from_millis(50))),
        );
        let seed = if tls {
            format!("https://localhost:{}/", relay.port)
        } else {
            format!("http://127.0.0.1:{}/", relay.port)
        };
        let mut cfg = Config::new(&[&seed], Credentials::new("nervix", "nervix"))
            .unwrap()
            .with_timeouts(Duration::from_secs(20), Duration::from_secs(3));
        if let Some(der) = lb.certificate_der() {
            cfg = cfg.with_root(der.to_vec());
        }
        cfg.write_timeout = Duration::from_millis(300);
        let c = nervix_blocking::Client::connect(cfg).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        let events = c.events().unwrap();
        let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(3_900_000));
        let started = Instant::now();
        let pending: Vec<_> = (0..8).map(|_| c.submit(&big).unwrap()).collect();
        let mut ended = None;
        while ended.is_none() && started.elapsed() < Duration::from_secs(4) {
            if let Some(DriverEvent::TransportEnded { end, .. }) =
                events.next_timeout(Duration::from_millis(50))
            {
                ended = Some((end, started.elapsed()));
            }
        }
        let (end, took) = ended.expect("the write deadline ended the session");
        assert_eq!(end, End::Transport("write deadline passed".into()));
        assert!(took < Duration::from_millis(3000), "{took:?}");
        eprintln!("the write deadline ended the session after {took:?}");
        drop(pending);
    });
}

#[test]
fn t_8_a_peer_reading_a_trickle_cannot_stretch_the_write_deadline_blocking() {
    trickle_reader_stretches_no_write(false);
}

#[test]
fn t_8_a_peer_reading_a_trickle_over_tls_cannot_stretch_the_write_deadline_blocking() {
    trickle_reader_stretches_no_write(true);
}

/// T-8: a console that answers the upgrade with a status line and then one header line every
/// 100 ms for 5 s cannot hold the connect past the connection deadline (500 ms): each socket
/// read of the client brings a line in time, so only a deadline on the whole upgrade leaves
/// it. The server notes when the client closed the connection.
#[test]
fn t_8_an_upgrade_answer_trickled_line_by_line_ends_at_the_connection_deadline_blocking() {
    bounded(Duration::from_secs(30), || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        let server = std::thread::spawn(move || {
            let given_up = Instant::now() + Duration::from_secs(5);
            let mut s = loop {
                match l.accept() {
                    Ok((s, _)) => break s,
                    Err(_) if Instant::now() < given_up => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => return None,
                }
            };
            s.set_nonblocking(false).unwrap();
            let accepted = Instant::now();
            s.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
            let mut buf = [0u8; 4096];
            let until = accepted + Duration::from_secs(5);
            let mut sent_head = false;
            while Instant::now() < until {
                match s.read(&mut buf) {
                    Ok(0) => return Some(accepted.elapsed()),
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => return Some(accepted.elapsed()),
                }
                let line: &[u8] = if sent_head {
                    b"X-Pad: trickled\r\n"
                } else {
                    b"HTTP/1.1 101 Switching Protocols\r\n"
                };
                sent_head = true;
                if s.write_all(line).is_err() {
                    return Some(accepted.elapsed());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            None
        });
        let seed = format!("http://127.0.0.1:{port}/");
        let cfg = Config::new(&[&seed], Credentials::new("nervix", "nervix"))
            .unwrap()
            .with_timeouts(Duration::from_secs(2), Duration::from_millis(500));
        // The first call opens the session; it gives up once the session could not be had.
        let client = std::thread::spawn(move || nervix_blocking::Client::connect(cfg).map(drop));
        let closed = server.join().unwrap();
        assert!(client.join().unwrap().is_err());
        let closed = closed.expect("the client left the upgrade");
        assert!(closed < Duration::from_millis(1500), "{closed:?}");
        eprintln!("the client left the upgrade after {closed:?}");
    });
}

/// T-8: a backup download whose server trickles its first frame a byte at a time cannot hold
/// the attempt past the call's waits (800 ms): the attempt ends then and the next one,
/// on a new connection, downloads the archive.
#[test]
fn t_8_a_download_frame_trickled_byte_by_byte_ends_the_attempt_at_its_wait_blocking() {
    use nervix_blocking::Transfers;
    use nervix_protocol::calls::{BackupDownload, TransferConfig};
    bounded(Duration::from_secs(40), || {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            ..LoopbackConfig::default()
        })
        .unwrap();
        let direct = Config::new(
            &[lb.console_endpoints()[0].as_str()],
            Credentials::new("nervix", "nervix"),
        )
        .unwrap();
        let c = nervix_blocking::Client::connect(direct).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        let CommandResult::Completed(report) = c.execute("BACKUP DOMAIN tenant").unwrap() else {
            panic!("the backup did not complete");
        };
        let relay = Relay::start_with(upstream_of(&lb), false, None, true);
        let seed = format!("http://127.0.0.1:{}/", relay.port);
        let mut cfg = Config::new(&[&seed], Credentials::new("nervix", "nervix")).unwrap();
        cfg.client.backoff_initial = Duration::from_millis(20);
        cfg.client.backoff_max = Duration::from_millis(200);
        let transfers = Transfers::new(&cfg).unwrap();
        let mut call = BackupDownload::from_report(
            &report,
            TransferConfig::download()
                .with_timeouts(Duration::from_millis(800), Duration::from_millis(800)),
        )
        .unwrap();
        let dir =
            std::env::temp_dir().join(format!("nervix-trickled-download-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut starts: Vec<(u32, Instant)> = Vec::new();
        let got = transfers.download_with_progress(&mut call, &dir.join("archive"), |p| {
            if starts.last().is_none_or(|(a, _)| *a != p.attempt) {
                starts.push((p.attempt, Instant::now()));
            }
        });
        let _ = std::fs::remove_dir_all(&dir);
        assert!(got.is_ok(), "{got:?}");
        let first = starts
            .iter()
            .find(|(a, _)| *a == 1)
            .expect("a first attempt")
            .1;
        let second = starts
            .iter()
            .find(|(a, _)| *a == 2)
            .expect("a second attempt")
            .1;
        let took = second - first;
        assert!(
            took < Duration::from_millis(2000),
            "the first attempt took {took:?}"
        );
        eprintln!("the trickled attempt ended after {took:?}");
    });
}
