//! Whatever the network sends, the engine answers with a typed violation, never a panic.

use gar_client::{Client, Config, Event, StopReason, JSON_VERSION};
use proptest::prelude::*;

const SAMPLES: &[&str] = &[
    r#"{"message_type":"TopicIntroduction","value":{"topic_id":3,"name":"t"}}"#,
    r#"{"message_type":"KeyUpdate","value":{"key_id":5,"name":"k","class_list":["A"]}}"#,
    r#"{"message_type":"JSONRecordUpdate","value":{"record_id":{"key_id":5,"topic_id":3},"value":1e999}}"#,
    r#"{"message_type":"BatchUpdate","value":{"default_class":"A","keys":[{"key_id":5,"topics":{"3":1},"tick_times":{"3":2}}]}}"#,
    r#"{"message_type":"RecordDiagnostic","value":{"record_id":{"key_id":5,"topic_id":3},"diagnostic":{"reason":"X","missing_inputs":[],"text":""}}}"#,
    r#"{"message_type":"SubscriptionStatus","value":{"name":"S","status":"Finished"}}"#,
    r#"{"message_type":"Error","value":{"message":"m","recoverable":true,"failed_writes":[]}}"#,
    r#"{"message_type":"JSONCompareExchangeResult","value":{"msg_ref":1,"success":false}}"#,
    r#"{"message_type":"KeyIdRetired","value":{"key_id":5}}"#,
];

fn ready() -> Client {
    let mut c = Client::new(Config::default());
    c.start(0, (1, 2));
    let intro = format!(
        r#"{{"message_type":"Introduction","value":{{"version":{JSON_VERSION},"heartbeat_timeout_interval":4000,"user":"s"}}}}"#
    );
    c.handle_text(1, &intro);
    c
}

fn check(c: &mut Client) {
    let stops: Vec<StopReason> = std::iter::from_fn(|| c.poll_event())
        .filter_map(|e| match e {
            Event::Stopped { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert!(stops.len() <= 1);
    assert!(stops
        .iter()
        .all(|r| *r == StopReason::Error || *r == StopReason::ServerLogoff));
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(texts in proptest::collection::vec(".{0,200}", 1..8)) {
        let mut c = ready();
        for t in &texts {
            c.handle_text(2, t);
        }
        check(&mut c);
    }

    #[test]
    fn mutated_messages_never_panic(
        picks in proptest::collection::vec((0..SAMPLES.len(), any::<usize>(), ".{0,12}"), 1..10)
    ) {
        let mut c = ready();
        for (i, at, insert) in &picks {
            let base = SAMPLES[*i];
            let mut cut = at % (base.len() + 1);
            while !base.is_char_boundary(cut) {
                cut -= 1;
            }
            let text = format!("{}{}{}", &base[..cut], insert, &base[cut..]);
            c.handle_text(2, &text);
            c.handle_text(2, &base[..cut]);
        }
        check(&mut c);
    }
}
