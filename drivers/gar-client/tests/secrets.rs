//! G-11: the token rides the upgrade URL and nowhere else: no log line (captured at trace
//! level from both drivers), no `Debug` output, no error text.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, refused_port_url, serve, Answer};
use serde_json::json;

const TOKEN: &str = "tok+en/Secret9";
const ENCODED: &str = "tok%2Ben%2FSecret9";

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn session(p: &mut common::Peer) {
    p.handshake();
    let e = p.recv_type("EchoRequest");
    p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
    p.send("Error", json!({"message": "nope", "recoverable": false}));
    p.close(Some(4002));
}

#[test]
fn g_11_the_token_is_never_logged_nor_shown() {
    let capture = Capture::default();
    let sink = capture.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .init();
    let with_token = |url: &str| {
        let mut c = config(url);
        c.token = Some(TOKEN.into());
        c
    };
    let mut shown = Vec::new();

    // The blocking driver: a session, a 401, a refused port.
    let server = serve(Answer::Accept, Duration::ZERO, session);
    let c = gar_driver::blocking::Client::connect(with_token(&server.url)).unwrap();
    c.echo_barrier().unwrap();
    shown.push(format!("{c:?}"));
    shown.extend(c.events(Duration::from_secs(5)).map(|e| format!("{e:?}")));
    let up = server.report().upgrade;
    assert!(up.path_and_query.ends_with(&format!("token={ENCODED}")));
    let server = serve(Answer::Unauthorized, Duration::ZERO, |_| {});
    let e = gar_driver::blocking::Client::connect(with_token(&server.url)).unwrap_err();
    shown.push(format!("{e:?} {e}"));
    server.report();
    let e = gar_driver::blocking::Client::connect(with_token(&refused_port_url())).unwrap_err();
    shown.push(format!("{e:?} {e}"));

    // The tokio driver, the same.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = serve(Answer::Accept, Duration::ZERO, session);
        let c = gar_driver::tokio::Client::connect(with_token(&server.url))
            .await
            .unwrap();
        c.echo_barrier().await.unwrap();
        shown.push(format!("{c:?}"));
        while let Some(e) = c.next_event().await {
            shown.push(format!("{e:?}"));
        }
        server.report();
        let server = serve(Answer::Unauthorized, Duration::ZERO, |_| {});
        let e = gar_driver::tokio::Client::connect(with_token(&server.url))
            .await
            .unwrap_err();
        shown.push(format!("{e:?} {e}"));
        server.report();
        let e = gar_driver::tokio::Client::connect(with_token(&refused_port_url()))
            .await
            .unwrap_err();
        shown.push(format!("{e:?} {e}"));
    });
    let cfg = with_token("ws://127.0.0.1:1/gar");
    shown.push(format!("{cfg:?}"));
    shown.push(cfg.redacted_url());

    let log = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    // The capture saw the sessions (so its silence about the token means something).
    assert!(log.contains("gar connecting"), "{log}");
    assert!(log.contains("token=***"), "{log}");
    assert!(
        log.contains("reason=Unauthorized") && log.contains("reason=Error"),
        "{log}"
    );
    for text in shown.iter().chain([&log]) {
        assert!(!text.contains(TOKEN) && !text.contains(ENCODED), "{text}");
        assert!(!text.contains("Secret9"), "{text}");
    }
}

#[test]
fn g_11_a_token_written_into_the_url_itself_is_redacted_too() {
    // The application put the credential in the URL's own query rather than in `token`: it
    // still rides as `token=`, and no log line, `Debug` output or error text shows it.
    const IN_URL: &str = "urlSecret7";
    let capture = Capture::default();
    let sink = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let mut shown = Vec::new();
    tracing::subscriber::with_default(subscriber, || {
        let server = serve(Answer::Unauthorized, Duration::ZERO, |_| {});
        let cfg = config(&format!("{}?a=1&token={IN_URL}#f", server.url));
        shown.push(format!("{cfg:?}"));
        shown.push(cfg.redacted_url());
        assert!(cfg.redacted_url().contains("a=1&token=***"));
        let e = gar_driver::blocking::Client::connect(cfg).unwrap_err();
        shown.push(format!("{e:?} {e}"));
        let up = server.report().upgrade;
        assert!(up.path_and_query.contains(&format!("token={IN_URL}")));
        let cfg = config(&format!("{}?token={IN_URL}", refused_port_url()));
        let e = gar_driver::blocking::Client::connect(cfg).unwrap_err();
        shown.push(format!("{e:?} {e}"));
    });
    let log = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("gar connecting"), "{log}");
    for text in shown.iter().chain([&log]) {
        assert!(!text.contains(IN_URL), "{text}");
    }
}
