//! The loopback server's upgrade and serving, with a plain WebSocket client.

use std::net::TcpStream;
use std::time::Duration;

use gar_sim::{sample_config, EndCause, Loopback, LoopbackOptions};
use serde_json::{json, Value};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

fn server(token: Option<&str>) -> Loopback {
    Loopback::start(LoopbackOptions {
        config: sample_config(),
        token: token.map(str::to_owned),
        ..LoopbackOptions::default()
    })
    .expect("binds")
}

fn dial(url: &str, subprotocol: bool) -> Result<WebSocket<TcpStream>, u16> {
    let mut req = url.into_client_request().expect("a request");
    if subprotocol {
        req.headers_mut().insert(
            "sec-websocket-protocol",
            "gar-protocol".parse().expect("a header"),
        );
    }
    let addr = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .expect("an authority")
        .to_owned();
    let stream = TcpStream::connect(addr).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    match tungstenite::client(req, stream) {
        Ok((ws, resp)) => {
            assert_eq!(
                resp.headers()
                    .get("sec-websocket-protocol")
                    .and_then(|v| v.to_str().ok()),
                Some("gar-protocol")
            );
            Ok(ws)
        }
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(r))) => {
            Err(r.status().as_u16())
        }
        Err(e) => panic!("handshake: {e}"),
    }
}

fn read_json(ws: &mut WebSocket<TcpStream>) -> Value {
    loop {
        match ws.read().expect("a message") {
            Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
            Message::Close(_) => panic!("closed"),
            _ => {}
        }
    }
}

fn intro() -> Message {
    Message::text(
        json!({"message_type": "Introduction", "value": {"version": gar_sim::JSON_VERSION,
            "heartbeat_timeout_interval": 60000, "user": "t"}})
        .to_string(),
    )
}

#[test]
fn a_good_upgrade_picks_gar_protocol_and_serves_the_model() {
    let srv = server(Some("s3cret"));
    let mut ws = dial(&format!("{}?token=s3cret", srv.url()), true).expect("upgrades");
    ws.send(intro()).expect("sends");
    let v = read_json(&mut ws);
    assert_eq!(v["message_type"], "Introduction");
    ws.send(Message::text(
        json!({"message_type": "EchoRequest", "value": {"msg_ref": 4}}).to_string(),
    ))
    .expect("sends");
    loop {
        let v = read_json(&mut ws);
        if v["message_type"] == "EchoResponse" {
            assert_eq!(v["value"]["msg_ref"], 4);
            break;
        }
    }
    assert!(srv.refused().is_empty());
}

#[test]
fn a_wrong_or_missing_token_is_401() {
    let srv = server(Some("s3cret"));
    assert_eq!(
        dial(&format!("{}?token=nope", srv.url()), true).err(),
        Some(401)
    );
    assert_eq!(dial(&srv.url(), true).err(), Some(401));
    assert_eq!(srv.refused(), vec![401, 401]);
}

#[test]
fn another_path_is_404_and_no_subprotocol_is_400() {
    let srv = server(None);
    let other = format!("ws://{}/elsewhere", srv.addr());
    assert_eq!(dial(&other, true).err(), Some(404));
    assert_eq!(dial(&srv.url(), false).err(), Some(400));
}

#[test]
fn a_logoff_is_answered_with_a_close() {
    let srv = server(None);
    let mut ws = dial(&srv.url(), true).expect("upgrades");
    ws.send(intro()).expect("sends");
    let _ = read_json(&mut ws);
    ws.send(Message::text(json!({"message_type": "Logoff"}).to_string()))
        .expect("sends");
    let closed = loop {
        match ws.read() {
            Ok(Message::Close(f)) => break f.map(|f| u16::from(f.code)),
            Ok(_) => {}
            Err(e) => panic!("no close: {e}"),
        }
    };
    assert_eq!(closed, Some(1000));
    let conn = srv.connections()[0];
    assert_eq!(
        srv.with_server(|s| s.ended(conn).cloned()),
        Some(EndCause::Logoff)
    );
}

#[test]
fn the_record_of_refused_upgrades_keeps_only_the_latest() {
    let srv = Loopback::start(LoopbackOptions {
        config: sample_config(),
        token: Some("s3cret".into()),
        keep_ended: 2,
        ..LoopbackOptions::default()
    })
    .expect("binds");
    let other = format!("ws://{}/elsewhere", srv.addr());
    assert_eq!(dial(&other, true).err(), Some(404));
    for _ in 0..3 {
        assert_eq!(dial(&srv.url(), true).err(), Some(401));
    }
    // Four refusals, the latest two kept: the 404 went first.
    assert_eq!(srv.refused(), vec![401, 401]);
}

#[test]
fn connections_beyond_the_bound_are_turned_away_and_counted() {
    let srv = Loopback::start(LoopbackOptions {
        config: sample_config(),
        max_connections: 1,
        ..LoopbackOptions::default()
    })
    .expect("binds");
    let mut first = dial(&srv.url(), true).expect("upgrades");
    first.send(intro()).expect("sends");
    let _ = read_json(&mut first);
    // A second connection while the first is served is closed unanswered.
    let stream = TcpStream::connect(srv.addr()).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let req = srv.url().into_client_request().expect("a request");
    assert!(tungstenite::client(req, stream).is_err());
    assert_eq!(srv.turned_away(), 1);
    assert_eq!(srv.connections().len(), 1);
    // Once the first is gone, a new one is served again.
    first
        .send(Message::text(json!({"message_type": "Logoff"}).to_string()))
        .expect("sends");
    while first.read().is_ok() {}
    let until = std::time::Instant::now() + Duration::from_secs(5);
    let mut again = loop {
        let stream = TcpStream::connect(srv.addr()).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut req = srv.url().into_client_request().expect("a request");
        req.headers_mut().insert(
            "sec-websocket-protocol",
            "gar-protocol".parse().expect("a header"),
        );
        match tungstenite::client(req, stream) {
            Ok((ws, _)) => break ws,
            Err(_) if std::time::Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("not served again: {e}"),
        }
    };
    again.send(intro()).expect("sends");
    assert_eq!(read_json(&mut again)["message_type"], "Introduction");
    assert_eq!(srv.connections().len(), 2);
}

/// Introduces a client, closes with `code` (None: no code), and says whether the server
/// answered the close with one of its own before the connection went.
fn close_is_answered(code: Option<u16>) -> bool {
    let srv = server(None);
    let mut ws = dial(&srv.url(), true).expect("upgrades");
    ws.send(intro()).expect("sends");
    let _ = read_json(&mut ws);
    ws.close(code.map(|c| tungstenite::protocol::CloseFrame {
        code: c.into(),
        reason: "".into(),
    }))
    .expect("closes");
    loop {
        match ws.read() {
            Ok(Message::Close(_)) => return true,
            Ok(_) => {}
            Err(tungstenite::Error::ConnectionClosed) => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn g_59_over_the_socket_a_close_with_1000_1001_or_no_code_is_answered() {
    for code in [Some(1000), Some(1001), None] {
        assert!(close_is_answered(code), "{code:?}");
    }
}

#[test]
fn g_59_over_the_socket_another_close_code_is_not_answered() {
    for code in [1011, 4000] {
        assert!(!close_is_answered(Some(code)), "{code}");
    }
}

#[test]
fn g_59_over_the_socket_a_one_byte_close_body_is_malformed_and_not_answered() {
    use std::io::Write;
    let srv = server(None);
    let mut ws = dial(&srv.url(), true).expect("upgrades");
    ws.send(intro()).expect("sends");
    let _ = read_json(&mut ws);
    // A masked close frame whose body is the one byte 0x03 (mask key zero).
    ws.get_mut()
        .write_all(&[0x88, 0x81, 0, 0, 0, 0, 0x03])
        .expect("writes");
    let answered = loop {
        match ws.read() {
            Ok(Message::Close(_)) => break true,
            Ok(_) => {}
            Err(tungstenite::Error::ConnectionClosed) => break true,
            Err(_) => break false,
        }
    };
    assert!(!answered, "a malformed close is not answered");
    let conn = srv.connections()[0];
    assert_eq!(
        srv.with_server(|s| s.ended(conn).cloned()),
        Some(EndCause::MalformedClose)
    );
}
