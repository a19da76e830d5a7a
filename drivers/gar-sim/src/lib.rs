//! A GAR server for tests: a sans-IO model of the server side of the protocol
//! ([`server::Server`]) and that model served over WebSocket on 127.0.0.1
//! ([`loopback::Loopback`]).
//!
//! The model keeps classes, keys and topics with the server's own id spaces per connection,
//! records with their stamps, snapshot and streaming subscriptions with name filters and
//! `NeedsContinue`, echo, compare-exchange with the null rules, writer ownership and failed
//! writes, heartbeats both ways with the first beat's grace, version refusal, Logoff, and faults
//! (silence, undecodable text, a non-recoverable Error, a close with any code). Time is an input;
//! every queue is bounded.

pub mod filter;
pub mod loopback;
pub mod server;
pub mod sim;

pub use loopback::{Loopback, LoopbackOptions};
pub use server::{
    ClassDef, ConnId, Counters, EndCause, Output, PeerClose, Server, ServerConfig, TopicDef,
    TopicType, JSON_VERSION,
};

/// A small schema for examples and tests: class `Underlier` with topics `bid`, `ask` (numbers),
/// `name` (text), `lock` (bool, default false) and `status` (read-only); class `Option` with
/// `strike` and `bid`.
#[must_use]
pub fn sample_config() -> ServerConfig {
    let num = |n: &str| TopicDef {
        ty: TopicType::Number,
        ..TopicDef::any(n)
    };
    ServerConfig {
        topics: vec![
            num("bid"),
            num("ask"),
            num("strike"),
            TopicDef {
                ty: TopicType::Text,
                ..TopicDef::any("name")
            },
            TopicDef {
                ty: TopicType::Bool,
                default: Some(serde_json::Value::Bool(false)),
                ..TopicDef::any("lock")
            },
            TopicDef {
                writable: false,
                ..TopicDef::any("status")
            },
            TopicDef::any("note"),
        ],
        classes: vec![
            ClassDef {
                name: "Underlier".into(),
                topics: ["bid", "ask", "name", "lock", "status", "note"]
                    .map(String::from)
                    .to_vec(),
            },
            ClassDef {
                name: "Option".into(),
                topics: ["strike", "bid"].map(String::from).to_vec(),
            },
        ],
        ..ServerConfig::default()
    }
}
