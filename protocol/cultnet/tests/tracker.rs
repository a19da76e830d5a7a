//! The write tracker against the client rules (W-2, W-10, W-33 to W-46) and the White_Space list (W-28).

mod support;

use cultnet_receipts::frames::{
    Document, DocumentPut, ErrorCode, ErrorDetails, ErrorV0, ErrorV1, Hello, Operation,
    WriteAdmitted,
};
use cultnet_receipts::message_id::{is_blank, is_white_space};
use cultnet_receipts::tracker::{
    BatchOutcome, Confirmation, LateAnswer, Outcome, Settled, TrackerLimits, UnconfirmedReason,
    WriteError, WriteMode, WriteState, LEGACY_RESULT_WINDOW_MS, RECEIPT_RESULT_WINDOW_MS,
};
use cultnet_receipts::{Frame, TrackerError, WriteHandle, WriteTracker};
use support::document;

fn server_hello(receipts: bool) -> Hello {
    let mut versions = vec!["cultnet.hello.v0".to_string()];
    if receipts {
        versions.push("cultnet.write_admitted.v0".into());
        versions.push("cultnet.error.v1".into());
    }
    Hello {
        runtime_id: "server".into(),
        runtime_kind: "server".into(),
        supported_message_versions: Some(versions),
        ..Hello::default()
    }
}

fn tracker(receipts: Option<bool>) -> WriteTracker {
    let mut t = WriteTracker::new(TrackerLimits::default(), 0x5eed);
    if let Some(r) = receipts {
        t.on_frame(&Frame::Hello(server_hello(r)), 0);
    }
    t
}

/// Registers and sends a put of `key` at `now`.
fn put(t: &mut WriteTracker, key: &str, now: u64) -> WriteHandle {
    let (h, _) = t.put(document(key), WriteMode::Receipt).unwrap();
    t.on_sent(h, now).unwrap();
    h
}

fn id(t: &WriteTracker, h: WriteHandle) -> String {
    t.message_id(h).unwrap().to_owned()
}

fn admit(t: &WriteTracker, h: WriteHandle) -> Frame {
    let (operation, schema_id, record_key) = t.target(h).expect("a kept write");
    Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(t, h),
        operation,
        schema_id: schema_id.into(),
        record_key: record_key.into(),
    })
}

fn put_k(t: &mut WriteTracker, now: u64) -> WriteHandle {
    put(t, "k", now)
}

fn refuse(t: &WriteTracker, h: WriteHandle, code: &str) -> Frame {
    Frame::ErrorV1(ErrorV1 {
        message_id: Some(id(t, h)),
        error: format!("{code}: refused"),
        code: Some(code.into()),
        details: Some(ErrorDetails {
            field: Some("schemaId".into()),
        }),
    })
}

fn anonymous_v0() -> Frame {
    Frame::ErrorV0(ErrorV0 {
        error: "write_not_authorized".into(),
        code: Some("write_not_authorized".into()),
        details: None,
    })
}

fn anonymous_v1() -> Frame {
    Frame::ErrorV1(ErrorV1 {
        message_id: None,
        error: "message_invalid: the message could not be read".into(),
        code: Some("message_invalid".into()),
        details: Some(ErrorDetails {
            field: Some("message".into()),
        }),
    })
}

fn outcome(t: &WriteTracker, h: WriteHandle) -> Option<Outcome> {
    match t.state(h)? {
        WriteState::Settled { outcome, .. } => Some(outcome),
        _ => None,
    }
}

fn late(t: &WriteTracker, h: WriteHandle) -> Option<LateAnswer> {
    match t.state(h)? {
        WriteState::Settled { late, .. } => late,
        _ => None,
    }
}

fn drain(t: &mut WriteTracker) -> Vec<Settled> {
    std::iter::from_fn(|| t.poll_settled()).collect()
}

fn window_elapsed(missed: bool) -> Outcome {
    Outcome::Unconfirmed {
        reason: UnconfirmedReason::WindowElapsed,
        server_missed_window: missed,
    }
}

// ---- W-2 ---------------------------------------------------------------------------------------

#[test]
fn w_2_an_admission_that_does_not_echo_the_write_settles_nothing() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let Frame::WriteAdmitted(good) = admit(&t, h) else {
        panic!()
    };
    let mut other_op = good.clone();
    other_op.operation = Operation::Delete;
    let mut other_schema = good.clone();
    other_schema.schema_id = "notes.v2".into();
    let mut other_key = good.clone();
    other_key.record_key = "k-other".into();
    for bad in [other_op, other_schema, other_key] {
        t.on_frame(&Frame::WriteAdmitted(bad), 10);
        assert_eq!(t.state(h), Some(WriteState::InFlight));
    }
    assert_eq!(t.counters().mismatched_receipts, 3);
    t.on_frame(&Frame::WriteAdmitted(good), 10);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
}

#[test]
fn w_2_only_a_byte_for_byte_echo_of_a_delete_admits_it() {
    let mut t = tracker(Some(true));
    let (h, _) = t.delete("notes.v1", "k", WriteMode::Receipt).unwrap();
    t.on_sent(h, 0).unwrap();
    let Frame::WriteAdmitted(good) = admit(&t, h) else {
        panic!()
    };
    assert_eq!(good.operation, Operation::Delete);
    let mut as_put = good.clone();
    as_put.operation = Operation::Put;
    // Ids equal to the write's after trimming, case folding or a prefix match are other ids.
    let mut padded = good.clone();
    padded.message_id = format!(" {} ", good.message_id);
    let mut upper = good.clone();
    upper.message_id = good.message_id.to_uppercase();
    let mut cut = good.clone();
    cut.message_id.pop();
    let mut key_padded = good.clone();
    key_padded.record_key = "k ".into();
    for bad in [as_put, padded, upper, cut, key_padded] {
        t.on_frame(&Frame::WriteAdmitted(bad.clone()), 10);
        assert_eq!(t.state(h), Some(WriteState::InFlight), "{bad:?}");
    }
    t.on_frame(&Frame::WriteAdmitted(good), 10);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
}

// ---- W-10, W-13, W-39 --------------------------------------------------------------------------

#[test]
fn w_10_the_window_follows_the_servers_hello() {
    assert_eq!(tracker(None).result_window_ms(), LEGACY_RESULT_WINDOW_MS);
    assert_eq!(
        tracker(Some(false)).result_window_ms(),
        LEGACY_RESULT_WINDOW_MS
    );
    assert_eq!(
        tracker(Some(true)).result_window_ms(),
        RECEIPT_RESULT_WINDOW_MS
    );
    let mut one = server_hello(false);
    one.supported_message_versions = Some(vec!["cultnet.write_admitted.v0".into()]);
    let mut t = tracker(None);
    t.on_hello(&one);
    assert_eq!(t.result_window_ms(), LEGACY_RESULT_WINDOW_MS);
}

#[test]
fn w_10_a_repeated_server_hello_does_not_reselect_the_window() {
    // A legacy hello after a receipt one does not shrink the window of a write in flight.
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_frame(&Frame::Hello(server_hello(false)), 100);
    t.on_tick(600);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    assert_eq!(t.result_window_ms(), RECEIPT_RESULT_WINDOW_MS);
    assert_eq!(t.counters().repeated_hellos, 1);
    // Nor does a receipt hello after a legacy one stretch it.
    let mut t = tracker(Some(false));
    let h = put_k(&mut t, 0);
    t.on_frame(&Frame::Hello(server_hello(true)), 100);
    t.on_tick(500);
    assert_eq!(outcome(&t, h), Some(window_elapsed(false)));
    assert_eq!(t.counters().repeated_hellos, 1);
    // A new session awaits a hello again.
    t.start_session(600);
    t.on_hello(&server_hello(true));
    assert_eq!(t.result_window_ms(), RECEIPT_RESULT_WINDOW_MS);
    assert_eq!(t.counters().repeated_hellos, 1);
}

#[test]
fn w_39_no_hello_from_the_server_means_the_legacy_window() {
    let mut t = tracker(None);
    let h = put_k(&mut t, 1000);
    t.on_tick(1499);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    t.on_tick(1500);
    assert_eq!(outcome(&t, h), Some(window_elapsed(false)));
}

#[test]
fn w_39_the_windows_are_5000_and_500_ms() {
    assert_eq!(RECEIPT_RESULT_WINDOW_MS, 5000);
    assert_eq!(LEGACY_RESULT_WINDOW_MS, 500);
}

#[test]
fn w_39_an_answer_one_ms_before_the_window_is_in_time() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 100);
    let f = admit(&t, h);
    t.on_frame(&f, 100 + 4999);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
    assert_eq!(late(&t, h), None);

    let mut t = tracker(Some(false));
    let h = put_k(&mut t, 100);
    let f = refuse(&t, h, "write_not_authorized");
    t.on_frame(&f, 100 + 499);
    assert!(matches!(outcome(&t, h), Some(Outcome::Refused(_))));
}

#[test]
fn w_39_an_answer_at_exactly_the_window_is_late() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 100);
    let f = admit(&t, h);
    t.on_frame(&f, 100 + 5000);
    assert_eq!(outcome(&t, h), Some(window_elapsed(true)));
    assert_eq!(late(&t, h), Some(LateAnswer::AdmittedLate));

    let mut t = tracker(Some(false));
    let h = put_k(&mut t, 100);
    let f = admit(&t, h);
    t.on_frame(&f, 100 + 500);
    assert_eq!(outcome(&t, h), Some(window_elapsed(false)));
    assert_eq!(late(&t, h), Some(LateAnswer::AdmittedLate));
}

#[test]
fn w_39_a_tick_at_exactly_the_window_settles_and_one_before_does_not() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_tick(4999);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    assert!(t.poll_settled().is_none());
    t.on_tick(5000);
    assert_eq!(outcome(&t, h), Some(window_elapsed(true)));
}

#[test]
fn w_39_the_window_runs_from_the_send_not_the_registration() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k0"), WriteMode::Receipt).unwrap();
    t.on_tick(10_000);
    assert_eq!(t.state(h), Some(WriteState::Registered));
    t.on_sent(h, 10_000).unwrap();
    t.on_tick(14_999);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    let f = Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(&t, h),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "k0".into(),
    });
    t.on_frame(&f, 14_999);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
}

// ---- W-33 --------------------------------------------------------------------------------------

#[test]
fn w_33_each_write_settles_exactly_once() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let a = admit(&t, h);
    let r = refuse(&t, h, "message_invalid");
    t.on_frame(&a, 1);
    t.on_frame(&r, 2);
    t.on_frame(&a, 3);
    t.on_frame(&anonymous_v0(), 4);
    t.on_tick(100_000);
    t.on_session_ended(100_001);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
    let settled = drain(&mut t);
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].outcome, Outcome::Admitted);
    assert_eq!(settled[0].message_id, id(&t, h));
}

#[test]
fn w_33_an_answer_to_a_write_already_answered_changes_nothing_and_is_counted() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let a = admit(&t, h);
    t.on_frame(&a, 1);
    assert_eq!(t.counters().answers_ignored, 0);
    // A second admission, then a refusal, of the admitted write: each ignored and counted.
    t.on_frame(&a, 2);
    t.on_frame(&refuse(&t, h, "message_invalid"), 3);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
    assert_eq!(late(&t, h), None);
    assert_eq!(t.counters().answers_ignored, 2);
    assert_eq!(t.stats().counters.answers_ignored, 2);
    // A refused write answered again is counted the same way.
    let r = put_k(&mut t, 4);
    let refusal = refuse(&t, r, "message_invalid");
    t.on_frame(&refusal, 5);
    t.on_frame(&refusal, 6);
    assert!(matches!(outcome(&t, r), Some(Outcome::Refused(_))));
    assert_eq!(t.counters().answers_ignored, 3);
    // A write that settled unconfirmed takes one late answer; a second one is counted.
    let u = put_k(&mut t, 10);
    t.on_tick(10 + RECEIPT_RESULT_WINDOW_MS);
    t.on_frame(&admit(&t, u), 10 + RECEIPT_RESULT_WINDOW_MS + 1);
    assert_eq!(late(&t, u), Some(LateAnswer::AdmittedLate));
    assert_eq!(t.counters().answers_ignored, 3);
    t.on_frame(
        &refuse(&t, u, "message_invalid"),
        10 + RECEIPT_RESULT_WINDOW_MS + 2,
    );
    assert_eq!(late(&t, u), Some(LateAnswer::AdmittedLate));
    assert_eq!(t.counters().answers_ignored, 4);
    // None of these is an answer to no write.
    assert_eq!(t.counters().unmatched_answers, 0);
}

#[test]
fn w_46_an_admission_of_a_send_only_write_and_a_refusal_after_its_ack_are_counted() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k0"), WriteMode::SendOnly).unwrap();
    t.on_sent(h, 0).unwrap();
    t.on_frame(&admit(&t, h), 1);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    assert_eq!(t.counters().answers_ignored, 1);
    t.on_transport_ack(h, 2);
    assert_eq!(outcome(&t, h), Some(Outcome::Sent));
    t.on_frame(&refuse(&t, h, "message_invalid"), 3);
    assert_eq!(outcome(&t, h), Some(Outcome::Sent));
    assert_eq!(t.counters().answers_ignored, 2);
    // A refusal before the ack still refuses a send-only write: not ignored.
    let (r, _) = t.put(document("k1"), WriteMode::SendOnly).unwrap();
    t.on_sent(r, 4).unwrap();
    t.on_frame(&refuse(&t, r, "message_invalid"), 5);
    assert!(matches!(outcome(&t, r), Some(Outcome::Refused(_))));
    assert_eq!(t.counters().answers_ignored, 2);
}

#[test]
fn w_34_a_put_or_delete_from_the_server_settles_nothing_and_is_counted() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let echoed = Frame::DocumentPut(DocumentPut {
        message_id: id(&t, h),
        document: document("k"),
    });
    t.on_frame(&echoed, 1);
    t.on_frame(
        &Frame::DocumentDelete(cultnet_receipts::frames::DocumentDelete {
            message_id: id(&t, h),
            schema_id: "notes.v1".into(),
            record_key: "k".into(),
        }),
        2,
    );
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    assert_eq!(t.counters().echoed_writes, 2);
    assert_eq!(t.stats().counters.echoed_writes, 2);
    assert_eq!(t.counters().answers_ignored, 0);
}

#[test]
fn w_33_every_write_settles_exactly_once_under_random_events() {
    // A small deterministic generator: no ambient randomness in tests either.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _round in 0..200 {
        let mut t = tracker(if next() % 2 == 0 { Some(true) } else { None });
        let mut now = 0;
        let mut handles = Vec::new();
        let mut settled = Vec::new();
        for _ in 0..40 {
            now += next() % 300;
            match next() % 8 {
                0 | 1 => handles.push(put_k(&mut t, now)),
                2 if !handles.is_empty() => {
                    let h = handles[(next() as usize) % handles.len()];
                    if t.state(h).is_some() {
                        let f = admit(&t, h);
                        t.on_frame(&f, now);
                    }
                }
                3 if !handles.is_empty() => {
                    let h = handles[(next() as usize) % handles.len()];
                    if t.state(h).is_some() {
                        let f = refuse(&t, h, "message_invalid");
                        t.on_frame(&f, now);
                    }
                }
                4 => t.on_frame(&anonymous_v0(), now),
                5 => t.on_tick(now),
                6 if next() % 4 == 0 => t.start_session(now),
                _ => t.on_frame(&anonymous_v1(), now),
            }
            settled.extend(drain(&mut t));
        }
        t.on_session_ended(now);
        settled.extend(drain(&mut t));
        for h in &handles {
            let n = settled.iter().filter(|s| s.handle == *h).count();
            assert_eq!(n, 1, "{h:?} settled {n} times");
            let state = outcome(&t, *h).unwrap();
            let told = &settled.iter().find(|s| s.handle == *h).unwrap().outcome;
            assert_eq!(&state, told, "the state is what the caller was told");
        }
        assert_eq!(t.unsettled(), 0);
    }
}

// ---- W-34, W-44 --------------------------------------------------------------------------------

#[test]
fn w_34_only_a_write_admitted_naming_the_write_admits_it() {
    let mut t = tracker(Some(true));
    let (h, frame) = t.put(document("k0"), WriteMode::Receipt).unwrap();
    t.on_sent(h, 0).unwrap();
    // The put echoed back under the same id, a transport ack, a refusal of another write.
    t.on_frame(&frame, 1);
    t.on_transport_ack(h, 2);
    let other = Frame::ErrorV1(ErrorV1 {
        message_id: Some("someone-else".into()),
        error: "x".into(),
        code: None,
        details: None,
    });
    t.on_frame(&other, 3);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    let f = Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(&t, h),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "k0".into(),
    });
    t.on_frame(&f, 4);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
}

#[test]
fn w_34_id_equality_is_exact() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let real = id(&t, h);
    let Frame::WriteAdmitted(good) = admit(&t, h) else {
        panic!()
    };
    let near = [
        format!("{real} "),
        format!(" {real}"),
        real.to_uppercase(),
        real[..real.len() - 1].to_string(),
        format!("{real}0"),
        format!("{real}\u{200B}"),
    ];
    for n in &near {
        let mut a = good.clone();
        a.message_id = n.clone();
        t.on_frame(&Frame::WriteAdmitted(a), 10);
        let r = Frame::ErrorV1(ErrorV1 {
            message_id: Some(n.clone()),
            error: "x".into(),
            code: None,
            details: None,
        });
        t.on_frame(&r, 10);
        assert_eq!(t.state(h), Some(WriteState::InFlight), "{n:?}");
    }
    assert_eq!(t.counters().unmatched_answers, 2 * near.len() as u64);
    t.on_frame(&Frame::WriteAdmitted(good), 10);
    assert_eq!(outcome(&t, h), Some(Outcome::Admitted));
}

#[test]
fn w_44_a_frame_naming_an_id_not_in_flight_settles_nothing() {
    let mut t = tracker(Some(true));
    let a = put_k(&mut t, 0);
    // Registered but not sent: not in flight.
    let (b, _) = t.put(document("kb"), WriteMode::Receipt).unwrap();
    let unknown = Frame::WriteAdmitted(WriteAdmitted {
        message_id: "never-sent".into(),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "k".into(),
    });
    t.on_frame(&unknown, 1);
    let for_b = Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(&t, b),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "kb".into(),
    });
    t.on_frame(&for_b, 1);
    let refuse_unknown = Frame::ErrorV1(ErrorV1 {
        message_id: Some("never-sent".into()),
        error: "x".into(),
        code: None,
        details: None,
    });
    t.on_frame(&refuse_unknown, 1);
    assert_eq!(t.state(a), Some(WriteState::InFlight));
    assert_eq!(t.state(b), Some(WriteState::Registered));
    assert_eq!(t.counters().unmatched_answers, 3);
    assert!(t.poll_settled().is_none());
}

// ---- W-35, W-37 --------------------------------------------------------------------------------

#[test]
fn w_35_a_refusal_naming_the_write_carries_its_code_and_details() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let f = refuse(&t, h, "unowned_schema");
    t.on_frame(&f, 1);
    let Some(Outcome::Refused(r)) = outcome(&t, h) else {
        panic!()
    };
    assert_eq!(r.code.as_deref(), Some("unowned_schema"));
    assert_eq!(r.error, "unowned_schema: refused");
    assert_eq!(r.details.unwrap().field.as_deref(), Some("schemaId"));
    assert!(!r.attributed_by_count);
}

#[test]
fn w_9_a_code_the_seed_does_not_name_still_refuses_the_write() {
    // By its id, over the bytes: the code is kept verbatim and the write is refused.
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    let f = refuse(&t, h, "shard_not_primary");
    let f = cultnet_receipts::decode(&cultnet_receipts::encode(&f).unwrap()).unwrap();
    t.on_frame(&f, 1);
    let Some(Outcome::Refused(r)) = outcome(&t, h) else {
        panic!("refused expected, got {:?}", t.state(h))
    };
    assert!(matches!(r.code, Some(ErrorCode::Other(_))));
    assert_eq!(r.code.as_deref(), Some("shard_not_primary"));
    assert!(!r.attributed_by_count);
    // Without an id, as the only unanswered write (W-43): refused too, the code kept.
    let mut t = tracker(Some(false));
    let h = put_k(&mut t, 0);
    t.on_frame(
        &Frame::ErrorV0(ErrorV0 {
            error: "shard moved".into(),
            code: Some("shard_moved".into()),
            details: None,
        }),
        1,
    );
    let Some(Outcome::Refused(r)) = outcome(&t, h) else {
        panic!("refused expected, got {:?}", t.state(h))
    };
    assert_eq!(r.code.as_deref(), Some("shard_moved"));
    assert!(r.attributed_by_count);
}

#[test]
fn w_37_the_error_form_has_distinct_refused_and_unconfirmed_errors() {
    let mut t = tracker(Some(true));
    let a = put_k(&mut t, 0);
    let r = put_k(&mut t, 0);
    let u = put_k(&mut t, 0);
    let fa = admit(&t, a);
    let fr = refuse(&t, r, "message_invalid");
    t.on_frame(&fa, 1);
    t.on_frame(&fr, 1);
    t.on_tick(5000);
    assert_eq!(
        outcome(&t, a).unwrap().into_result(),
        Ok(Confirmation::Admitted)
    );
    assert!(matches!(
        outcome(&t, r).unwrap().into_result(),
        Err(WriteError::Refused(_))
    ));
    assert_eq!(
        outcome(&t, u).unwrap().into_result(),
        Err(WriteError::Unconfirmed(UnconfirmedReason::WindowElapsed))
    );
}

// ---- W-36 --------------------------------------------------------------------------------------

#[test]
fn w_36_no_answer_within_the_window_is_window_elapsed() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_tick(5000);
    let s = drain(&mut t);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].handle, h);
    assert_eq!(s[0].outcome, window_elapsed(true));
}

#[test]
fn w_36_an_ended_session_settles_open_writes_session_ended() {
    let mut t = tracker(Some(true));
    let a = put_k(&mut t, 0);
    let b = put_k(&mut t, 10);
    t.on_session_ended(20);
    for h in [a, b] {
        assert_eq!(
            outcome(&t, h),
            Some(Outcome::Unconfirmed {
                reason: UnconfirmedReason::SessionEnded,
                server_missed_window: false
            })
        );
    }
}

#[test]
fn w_36_a_write_registered_after_the_session_ended_settles_when_sent() {
    let mut t = tracker(Some(true));
    t.on_session_ended(0);
    let (h, _) = t.put(document("k"), WriteMode::Receipt).unwrap();
    assert_eq!(t.state(h), Some(WriteState::Registered));
    assert!(t.poll_settled().is_none());
    t.on_sent(h, 5).unwrap();
    assert_eq!(
        outcome(&t, h),
        Some(Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false
        })
    );
    assert_eq!(drain(&mut t).len(), 1);
}

#[test]
fn w_36_a_local_send_failure_is_unconfirmed_never_refused() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k"), WriteMode::Receipt).unwrap();
    t.on_send_failed(h, 0);
    assert_eq!(
        outcome(&t, h),
        Some(Outcome::Unconfirmed {
            reason: UnconfirmedReason::LocalSendFailed,
            server_missed_window: false
        })
    );
    assert_eq!(
        outcome(&t, h).unwrap().into_result(),
        Err(WriteError::Unconfirmed(UnconfirmedReason::LocalSendFailed))
    );
}

// ---- W-38 --------------------------------------------------------------------------------------

#[test]
fn w_38_ids_are_unique_in_a_session_and_new_on_a_new_session() {
    let mut t = tracker(Some(true));
    let mut ids = std::collections::BTreeSet::new();
    let mut first = Vec::new();
    for i in 0..200 {
        let h = put(&mut t, &format!("k{i}"), i);
        assert!(ids.insert(id(&t, h)));
        first.push(h);
    }
    t.start_session(300);
    for i in 0..200 {
        let h = put(&mut t, &format!("k{i}"), 400);
        assert!(ids.insert(id(&t, h)), "an id of the old session came back");
    }
    // A late answer of the old session, arriving on the new one, settles nothing new.
    let old = first[0];
    let f = Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(&t, old),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "k0".into(),
    });
    let before = t.counters().unmatched_answers;
    t.on_frame(&f, 401);
    assert_eq!(t.counters().unmatched_answers, before + 1);
    assert_eq!(late(&t, old), None);
    // Two trackers with different nonces mint different ids.
    let mut other = WriteTracker::new(TrackerLimits::default(), 0x0dd);
    let (h2, _) = other.put(document("k"), WriteMode::Receipt).unwrap();
    let (h1, _) = WriteTracker::new(TrackerLimits::default(), 0x5eed)
        .put(document("k"), WriteMode::Receipt)
        .unwrap();
    let _ = h1;
    assert!(!ids.contains(other.message_id(h2).unwrap()));
}

#[test]
fn w_38_minted_ids_pass_the_write_admitted_id_rule() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k"), WriteMode::Receipt).unwrap();
    assert!(cultnet_receipts::message_id::is_valid_admitted_message_id(
        t.message_id(h).unwrap()
    ));
    assert!(t.message_id(h).unwrap().len() <= 256);
}

// ---- W-40, W-41 --------------------------------------------------------------------------------

#[test]
fn w_40_a_receipt_server_missing_the_window_is_unconfirmed_and_counted() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_tick(5000);
    assert_eq!(outcome(&t, h), Some(window_elapsed(true)));
    assert_eq!(t.counters().windows_missed_by_receipt_server, 1);

    let mut t = tracker(Some(false));
    let h = put_k(&mut t, 0);
    t.on_tick(500);
    assert_eq!(outcome(&t, h), Some(window_elapsed(false)));
    assert_eq!(t.counters().windows_missed_by_receipt_server, 0);
}

#[test]
fn w_41_a_late_admission_is_recorded_as_admitted_late() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_tick(6000);
    let f = admit(&t, h);
    t.on_frame(&f, 7000);
    assert_eq!(
        t.state(h),
        Some(WriteState::Settled {
            outcome: window_elapsed(true),
            late: Some(LateAnswer::AdmittedLate)
        })
    );
    // What the caller was told does not change.
    let s = drain(&mut t);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].outcome, window_elapsed(true));
}

#[test]
fn w_41_a_late_refusal_is_recorded_as_refused_late() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_tick(5000);
    let f = refuse(&t, h, "write_not_authorized");
    t.on_frame(&f, 5001);
    let Some(LateAnswer::RefusedLate(r)) = late(&t, h) else {
        panic!("{:?}", t.state(h))
    };
    assert_eq!(r.code.as_deref(), Some("write_not_authorized"));
    // The first late answer stays.
    let f = admit(&t, h);
    t.on_frame(&f, 5002);
    assert!(matches!(late(&t, h), Some(LateAnswer::RefusedLate(_))));
}

#[test]
fn w_41_a_late_answer_after_a_local_send_failure_is_recorded() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k0"), WriteMode::Receipt).unwrap();
    t.on_sent(h, 0).unwrap();
    t.on_send_failed(h, 1);
    let f = Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(&t, h),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "k0".into(),
    });
    t.on_frame(&f, 2);
    assert_eq!(late(&t, h), Some(LateAnswer::AdmittedLate));
}

#[test]
fn w_41_late_records_are_bounded_and_what_is_dropped_is_counted() {
    let limits = TrackerLimits {
        max_settled_kept: 2,
        ..TrackerLimits::default()
    };
    let mut t = WriteTracker::new(limits, 1);
    t.on_hello(&server_hello(true));
    let hs: Vec<_> = (0..3).map(|i| put(&mut t, &format!("k{i}"), 0)).collect();
    let ids: Vec<_> = hs.iter().map(|h| id(&t, *h)).collect();
    t.on_tick(5000);
    assert_eq!(t.counters().settled_forgotten, 1);
    assert_eq!(
        t.state(hs[0]),
        None,
        "the oldest settled write is forgotten"
    );
    for (i, mid) in ids.iter().enumerate() {
        let f = Frame::WriteAdmitted(WriteAdmitted {
            message_id: mid.clone(),
            operation: Operation::Put,
            schema_id: "notes.v1".into(),
            record_key: format!("k{i}"),
        });
        t.on_frame(&f, 6000);
    }
    assert_eq!(late(&t, hs[1]), Some(LateAnswer::AdmittedLate));
    assert_eq!(late(&t, hs[2]), Some(LateAnswer::AdmittedLate));
    // The answer to the forgotten write is counted as a dropped late answer.
    assert_eq!(t.counters().late_answers_dropped, 1);
    assert_eq!(t.counters().unmatched_answers, 0);
}

#[test]
fn w_41_kept_states_are_bounded_in_bytes_too_and_what_is_dropped_is_counted() {
    // The server writes a refusal's text (up to a frame): a count bound alone would let 4096
    // kept states hold 4096 frames of it.
    let limits = TrackerLimits {
        max_settled_kept_bytes: 2500,
        ..TrackerLimits::default()
    };
    let big_refusal = |t: &WriteTracker, h: WriteHandle| {
        Frame::ErrorV1(ErrorV1 {
            message_id: Some(id(t, h)),
            error: "x".repeat(1000),
            code: Some("write_not_authorized".into()),
            details: None,
        })
    };
    let mut t = WriteTracker::new(limits, 1);
    t.on_hello(&server_hello(true));
    let hs: Vec<_> = (0..3).map(|i| put(&mut t, &format!("k{i}"), 0)).collect();
    for h in &hs[..2] {
        let f = big_refusal(&t, *h);
        t.on_frame(&f, 1);
    }
    assert_eq!(t.counters().settled_forgotten, 0, "two refusals fit");
    let f = big_refusal(&t, hs[2]);
    t.on_frame(&f, 1);
    assert_eq!(t.counters().settled_forgotten, 1);
    assert_eq!(t.state(hs[0]), None, "the oldest is forgotten first");
    assert!(matches!(outcome(&t, hs[2]), Some(Outcome::Refused(_))));
    let kept = t.stats().settled_kept_bytes;
    assert!(kept <= 2500 && kept > 2000, "{kept}");
    // A late refusal recorded on a kept state counts too.
    let mut t = WriteTracker::new(limits, 2);
    t.on_hello(&server_hello(true));
    let hs: Vec<_> = (0..3).map(|i| put(&mut t, &format!("k{i}"), 0)).collect();
    t.on_tick(5000);
    assert_eq!(t.counters().settled_forgotten, 0);
    for h in &hs {
        let f = big_refusal(&t, *h);
        t.on_frame(&f, 5001);
    }
    assert_eq!(t.counters().settled_forgotten, 1);
    assert_eq!(t.state(hs[0]), None);
    assert!(matches!(late(&t, hs[2]), Some(LateAnswer::RefusedLate(_))));
    assert!(t.stats().settled_kept_bytes <= 2500);
    // Forgetting a write gives its bytes back.
    t.forget(hs[1]);
    t.forget(hs[2]);
    assert_eq!(t.stats().settled_kept_bytes, 0);
}

/// What keeping a settled write's state costs: its id, schema id and record key.
fn state_bytes(t: &WriteTracker, h: WriteHandle) -> usize {
    let (_, schema_id, record_key) = t.target(h).expect("a kept write");
    id(t, h).len() + schema_id.len() + record_key.len()
}

/// A refusal naming `h` whose text is `len` bytes, with a 20-byte code and an 8-byte field.
fn refusal_of_len(t: &WriteTracker, h: WriteHandle, len: usize) -> Frame {
    Frame::ErrorV1(ErrorV1 {
        message_id: Some(id(t, h)),
        error: "x".repeat(len),
        code: Some("write_not_authorized".into()),
        details: Some(ErrorDetails {
            field: Some("schemaId".into()),
        }),
    })
}

#[test]
fn w_41_a_kept_state_costs_its_id_schema_key_and_refusal_and_the_byte_bound_is_inclusive() {
    // Each part is counted once, added: an admission costs the id, schema id and record key; a
    // refusal adds its text, its code and its details' field.
    let mut t = tracker(Some(true));
    let a = put(&mut t, "k0", 0);
    let r = put(&mut t, "k1", 0);
    let (a_bytes, r_bytes) = (state_bytes(&t, a), state_bytes(&t, r));
    let f = admit(&t, a);
    t.on_frame(&f, 1);
    assert_eq!(t.stats().settled_kept_bytes, a_bytes as u64);
    let f = refusal_of_len(&t, r, 10);
    t.on_frame(&f, 1);
    assert_eq!(
        t.stats().settled_kept_bytes,
        (a_bytes + r_bytes + 10 + "write_not_authorized".len() + "schemaId".len()) as u64
    );
    // A refusal without details or code costs its text alone.
    let h = put(&mut t, "k2", 0);
    let before = t.stats().settled_kept_bytes;
    let h_bytes = state_bytes(&t, h);
    t.on_frame(
        &Frame::ErrorV1(ErrorV1 {
            message_id: Some(id(&t, h)),
            error: "y".repeat(7),
            code: None,
            details: None,
        }),
        1,
    );
    assert_eq!(t.stats().settled_kept_bytes, before + (h_bytes + 7) as u64);

    // Kept states that reach the byte bound exactly are all kept; one byte more forgets the
    // oldest.
    let bound = 600;
    let mut t = WriteTracker::new(
        TrackerLimits {
            max_settled_kept_bytes: bound,
            ..TrackerLimits::default()
        },
        7,
    );
    t.on_hello(&server_hello(true));
    let hs: Vec<_> = (0..3).map(|i| put(&mut t, &format!("k{i}"), 0)).collect();
    let fixed = 20 + 8;
    let first = 100;
    let h0_cost = state_bytes(&t, hs[0]) + fixed + first;
    let second = bound - state_bytes(&t, hs[0]) - state_bytes(&t, hs[1]) - 2 * fixed - first;
    let f = refusal_of_len(&t, hs[0], first);
    t.on_frame(&f, 1);
    let f = refusal_of_len(&t, hs[1], second);
    t.on_frame(&f, 1);
    assert_eq!(t.stats().settled_kept_bytes, bound as u64);
    assert_eq!(
        t.counters().settled_forgotten,
        0,
        "exactly the bound is kept"
    );
    assert!(matches!(outcome(&t, hs[0]), Some(Outcome::Refused(_))));
    let f = admit(&t, hs[2]);
    t.on_frame(&f, 1);
    assert_eq!(t.counters().settled_forgotten, 1);
    assert_eq!(t.state(hs[0]), None, "the oldest is forgotten first");
    assert!(matches!(outcome(&t, hs[1]), Some(Outcome::Refused(_))));
    assert_eq!(
        t.stats().settled_kept_bytes,
        (bound - h0_cost + state_bytes(&t, hs[2])) as u64
    );
}

#[test]
fn w_35_unread_refusals_count_their_text_code_and_field_and_the_byte_bound_is_inclusive() {
    // What waits in poll_settled costs its refusals' text, code and details' field; an
    // admission costs nothing there.
    let mut t = tracker(Some(true));
    let a = put(&mut t, "k0", 0);
    let r = put(&mut t, "k1", 0);
    let f = admit(&t, a);
    t.on_frame(&f, 1);
    assert_eq!(t.stats().settled_unread_bytes, 0);
    let f = refusal_of_len(&t, r, 10);
    t.on_frame(&f, 1);
    let one = (10 + "write_not_authorized".len() + "schemaId".len()) as u64;
    assert_eq!(t.stats().settled_unread_bytes, one);
    assert_eq!(t.poll_settled().map(|s| s.handle), Some(a));
    assert_eq!(
        t.stats().settled_unread_bytes,
        one,
        "reading an admission frees nothing"
    );
    assert_eq!(t.poll_settled().map(|s| s.handle), Some(r));
    assert_eq!(t.stats().settled_unread_bytes, 0);

    // Unread refusals that reach the byte bound exactly are all kept; one byte more drops the
    // oldest.
    let mut t = WriteTracker::new(
        TrackerLimits {
            max_settled_unread_bytes: 100,
            ..TrackerLimits::default()
        },
        8,
    );
    t.on_hello(&server_hello(true));
    let hs: Vec<_> = (0..3).map(|i| put(&mut t, &format!("k{i}"), 0)).collect();
    // 22 + 20 + 8 = 50 bytes each.
    for h in &hs[..2] {
        let f = refusal_of_len(&t, *h, 22);
        t.on_frame(&f, 1);
    }
    assert_eq!(t.stats().settled_unread_bytes, 100);
    assert_eq!(t.stats().settled_unread, 2);
    assert_eq!(
        t.counters().settled_unread_dropped,
        0,
        "exactly the bound is kept"
    );
    let f = refusal_of_len(&t, hs[2], 1);
    t.on_frame(&f, 1);
    assert_eq!(t.counters().settled_unread_dropped, 1);
    assert_eq!(t.stats().settled_unread_bytes, 50 + 29);
    let read: Vec<_> = drain(&mut t).into_iter().map(|s| s.handle).collect();
    assert_eq!(read, hs[1..].to_vec(), "the oldest is dropped first");
    assert_eq!(t.stats().settled_unread_bytes, 0);
}

#[test]
fn the_unread_settled_queue_is_bounded_in_count_and_bytes_and_drops_are_counted() {
    let refusal = |t: &WriteTracker, h: WriteHandle, len: usize| {
        Frame::ErrorV1(ErrorV1 {
            message_id: Some(id(t, h)),
            error: "x".repeat(len),
            code: Some("write_not_authorized".into()),
            details: None,
        })
    };
    // Bytes: the server writes a refusal's text; unread, three of 1000 bytes do not fit in 2500.
    let limits = TrackerLimits {
        max_settled_unread_bytes: 2500,
        ..TrackerLimits::default()
    };
    let mut t = WriteTracker::new(limits, 1);
    t.on_hello(&server_hello(true));
    let hs: Vec<_> = (0..3).map(|i| put(&mut t, &format!("k{i}"), 0)).collect();
    for h in &hs {
        let f = refusal(&t, *h, 1000);
        t.on_frame(&f, 1);
    }
    assert_eq!(t.counters().settled_unread_dropped, 1);
    assert!(t.stats().settled_unread_bytes <= 2500);
    let read: Vec<_> = std::iter::from_fn(|| t.poll_settled())
        .map(|s| s.handle)
        .collect();
    assert_eq!(read, hs[1..].to_vec(), "the oldest is dropped first");
    assert!(
        matches!(outcome(&t, hs[0]), Some(Outcome::Refused(_))),
        "its state stays readable"
    );
    assert_eq!(t.stats().settled_unread_bytes, 0);
    // The newest is always kept, however large.
    let limits = TrackerLimits {
        max_settled_unread_bytes: 10,
        ..TrackerLimits::default()
    };
    let mut t = WriteTracker::new(limits, 2);
    t.on_hello(&server_hello(true));
    let h = put(&mut t, "k", 0);
    let f = refusal(&t, h, 1000);
    t.on_frame(&f, 1);
    assert_eq!(t.poll_settled().map(|s| s.handle), Some(h));
    // Count: never fewer than max_in_flight + 1 (here 3) are held.
    let limits = TrackerLimits {
        max_in_flight: 2,
        max_settled_unread: 1,
        ..TrackerLimits::default()
    };
    let mut t = WriteTracker::new(limits, 3);
    t.on_hello(&server_hello(true));
    for round in 0..2 {
        let hs: Vec<_> = (0..2)
            .map(|i| put(&mut t, &format!("k{round}{i}"), 0))
            .collect();
        for h in hs {
            let f = admit(&t, h);
            t.on_frame(&f, 1);
        }
    }
    assert_eq!(t.counters().settled_unread_dropped, 1);
    assert_eq!(std::iter::from_fn(|| t.poll_settled()).count(), 3);
}

#[test]
fn w_41_a_late_answer_to_a_forgotten_write_is_counted_dropped_and_a_stranger_is_not() {
    let limits = TrackerLimits {
        max_settled_kept: 0,
        ..TrackerLimits::default()
    };
    let mut t = WriteTracker::new(limits, 7);
    t.on_hello(&server_hello(true));
    let a = put(&mut t, "ka", 0);
    let id_a = id(&t, a);
    t.on_tick(5000);
    assert_eq!(t.state(a), None, "forgotten at once");
    t.on_frame(
        &Frame::ErrorV1(ErrorV1 {
            message_id: Some(id_a.clone()),
            error: "write_not_authorized: no".into(),
            code: Some("write_not_authorized".into()),
            details: None,
        }),
        5001,
    );
    assert_eq!(t.counters().late_answers_dropped, 1);
    // Ids this tracker never minted (another nonce, a later sequence number, a padded one)
    // are unmatched, not late.
    let next = format!("{}1", &id_a[..id_a.len() - 1]);
    let padded = format!("{}00", &id_a[..id_a.len() - 1]);
    for other in [format!("x{id_a}"), next, padded, "w0-0-0".to_owned()] {
        t.on_frame(
            &Frame::WriteAdmitted(WriteAdmitted {
                message_id: other,
                operation: Operation::Put,
                schema_id: "notes.v1".into(),
                record_key: "ka".into(),
            }),
            5002,
        );
    }
    assert_eq!(t.counters().late_answers_dropped, 1);
    assert_eq!(t.counters().unmatched_answers, 4);
}

#[test]
fn w_42_a_resend_is_refused_unless_the_server_keeps_the_receipt_rules() {
    for server in [None, Some(false)] {
        let mut t = tracker(server);
        let h = put_k(&mut t, 0);
        t.on_tick(500);
        assert!(matches!(outcome(&t, h), Some(Outcome::Unconfirmed { .. })));
        assert_eq!(
            t.resend_put(h, document("k")),
            Err(TrackerError::NotReceiptServer)
        );
    }
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_tick(5000);
    assert!(t.resend_put(h, document("k")).is_ok());
}

// ---- W-43 --------------------------------------------------------------------------------------

#[test]
fn w_43_an_id_less_error_refuses_the_only_unanswered_write() {
    for frame in [anonymous_v0(), anonymous_v1()] {
        let mut t = tracker(Some(true));
        let h = put_k(&mut t, 0);
        t.on_frame(&frame, 1);
        let Some(Outcome::Refused(r)) = outcome(&t, h) else {
            panic!()
        };
        assert!(r.attributed_by_count);
    }
}

#[test]
fn w_43_an_id_less_error_with_two_unanswered_writes_settles_none() {
    for frame in [anonymous_v0(), anonymous_v1()] {
        let mut t = tracker(Some(false));
        let a = put_k(&mut t, 0);
        let b = put_k(&mut t, 0);
        t.on_frame(&frame, 1);
        assert_eq!(t.state(a), Some(WriteState::InFlight));
        assert_eq!(t.state(b), Some(WriteState::InFlight));
        assert_eq!(t.counters().unattributed_errors, 1);
        t.on_tick(500);
        assert_eq!(outcome(&t, a), Some(window_elapsed(false)));
        assert_eq!(outcome(&t, b), Some(window_elapsed(false)));
    }
}

#[test]
fn w_43_only_unanswered_writes_count() {
    let mut t = tracker(Some(true));
    let a = put_k(&mut t, 0);
    let b = put_k(&mut t, 0);
    let f = admit(&t, a);
    t.on_frame(&f, 1);
    // A registered, unsent write does not count either.
    let (c, _) = t.put(document("kc"), WriteMode::Receipt).unwrap();
    t.on_frame(&anonymous_v0(), 2);
    assert_eq!(outcome(&t, a), Some(Outcome::Admitted));
    assert!(matches!(outcome(&t, b), Some(Outcome::Refused(_))));
    assert_eq!(t.state(c), Some(WriteState::Registered));
}

#[test]
fn w_43_an_id_less_error_with_nothing_unanswered_settles_nothing() {
    let mut t = tracker(Some(true));
    let a = put_k(&mut t, 0);
    t.on_tick(5000);
    t.on_frame(&anonymous_v0(), 5001);
    assert_eq!(outcome(&t, a), Some(window_elapsed(true)));
    assert_eq!(late(&t, a), None);
    assert_eq!(t.counters().unattributed_errors, 1);
}

#[test]
fn w_43_a_send_only_write_acked_but_unanswered_counts_as_unanswered() {
    for frame in [anonymous_v0(), anonymous_v1()] {
        let mut t = tracker(Some(true));
        let (a, _) = t.put(document("ka"), WriteMode::SendOnly).unwrap();
        t.on_sent(a, 0).unwrap();
        t.on_transport_ack(a, 0);
        assert_eq!(outcome(&t, a), Some(Outcome::Sent));
        let b = put(&mut t, "kb", 1);
        // The refusal may be the send-only write's: it is not pinned on the receipt write.
        t.on_frame(&frame, 2);
        assert_eq!(t.state(b), Some(WriteState::InFlight));
        assert_eq!(outcome(&t, a), Some(Outcome::Sent));
        assert_eq!(t.counters().unattributed_errors, 1);
    }
}

#[test]
fn w_43_an_answered_send_only_write_no_longer_counts() {
    let mut t = tracker(Some(true));
    let (a, _) = t.put(document("ka"), WriteMode::SendOnly).unwrap();
    t.on_sent(a, 0).unwrap();
    t.on_transport_ack(a, 0);
    let f = admit(&t, a);
    t.on_frame(&f, 1);
    let b = put(&mut t, "kb", 1);
    t.on_frame(&anonymous_v0(), 2);
    assert!(matches!(outcome(&t, b), Some(Outcome::Refused(r)) if r.attributed_by_count));
}

#[test]
fn w_43_a_send_only_write_counts_only_within_its_window() {
    let mut t = tracker(Some(false));
    let (a, _) = t.put(document("ka"), WriteMode::SendOnly).unwrap();
    t.on_sent(a, 0).unwrap();
    t.on_transport_ack(a, 0);
    let b = put(&mut t, "kb", 400);
    // At 499 the send-only write may still be what is refused: B is not.
    t.on_frame(&anonymous_v0(), 499);
    assert_eq!(t.state(b), Some(WriteState::InFlight));
    // From 500 (its window from 0) it no longer counts, and B is the one unanswered write.
    t.on_frame(&anonymous_v0(), 500);
    assert!(matches!(outcome(&t, b), Some(Outcome::Refused(r)) if r.attributed_by_count));
}

// ---- W-45 --------------------------------------------------------------------------------------

#[test]
fn w_45_a_batch_is_admitted_only_when_every_member_is() {
    let mut t = tracker(Some(true));
    let hs: Vec<_> = (0..3).map(|_| put_k(&mut t, 0)).collect();
    assert_eq!(t.batch_outcome(&hs), None);
    for h in &hs[..2] {
        let f = admit(&t, *h);
        t.on_frame(&f, 1);
    }
    assert_eq!(t.batch_outcome(&hs), None, "a member is still in flight");
    let f = admit(&t, hs[2]);
    t.on_frame(&f, 1);
    assert_eq!(t.batch_outcome(&hs), Some(BatchOutcome::Admitted));
}

#[test]
fn w_45_a_refused_member_makes_the_batch_refused_naming_it() {
    let mut t = tracker(Some(true));
    let hs: Vec<_> = (0..4).map(|_| put_k(&mut t, 0)).collect();
    let f = admit(&t, hs[0]);
    t.on_frame(&f, 1);
    let f = refuse(&t, hs[1], "message_invalid");
    t.on_frame(&f, 1);
    let f = refuse(&t, hs[3], "limit_reached");
    t.on_frame(&f, 1);
    t.on_tick(5000);
    assert_eq!(
        t.batch_outcome(&hs),
        Some(BatchOutcome::Refused(vec![hs[1], hs[3]]))
    );
}

#[test]
fn w_45_otherwise_the_batch_is_unconfirmed_naming_the_unanswered() {
    let mut t = tracker(Some(true));
    let hs: Vec<_> = (0..3).map(|_| put_k(&mut t, 0)).collect();
    let f = admit(&t, hs[1]);
    t.on_frame(&f, 1);
    t.on_tick(5000);
    assert_eq!(
        t.batch_outcome(&hs),
        Some(BatchOutcome::Unconfirmed(vec![hs[0], hs[2]]))
    );
    // Members keep their original ids for the caller's resend.
    assert!(t.message_id(hs[0]).is_some());
}

// ---- W-46 --------------------------------------------------------------------------------------

#[test]
fn w_46_send_only_is_settled_sent_by_the_transport_ack_never_admitted() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k0"), WriteMode::SendOnly).unwrap();
    t.on_sent(h, 0).unwrap();
    let f = Frame::WriteAdmitted(WriteAdmitted {
        message_id: id(&t, h),
        operation: Operation::Put,
        schema_id: "notes.v1".into(),
        record_key: "k0".into(),
    });
    t.on_frame(&f, 1);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    t.on_transport_ack(h, 2);
    assert_eq!(outcome(&t, h), Some(Outcome::Sent));
    assert_eq!(
        outcome(&t, h).unwrap().into_result(),
        Ok(Confirmation::Sent)
    );
}

/// Whether a type implements `Default`, found at compile time without requiring it (a method on
/// the probe through the `Default` bound wins over the one through one more reference).
struct DefaultProbe<T>(std::marker::PhantomData<T>);
trait HasDefault {
    fn has_default(&self) -> bool {
        true
    }
}
impl<T: Default> HasDefault for DefaultProbe<T> {}
trait LacksDefault {
    fn has_default(&self) -> bool {
        false
    }
}
impl<T> LacksDefault for &DefaultProbe<T> {}

#[test]
fn w_46_neither_receipts_nor_send_only_is_the_default() {
    // The probe itself tells a type with a default from one without.
    let limits = &DefaultProbe::<TrackerLimits>(std::marker::PhantomData);
    assert!(limits.has_default());
    let mode = &DefaultProbe::<WriteMode>(std::marker::PhantomData);
    assert!(!mode.has_default());
    // Every call registering a write takes its mode: these coercions compile only so.
    type Registered = Result<(WriteHandle, Frame), TrackerError>;
    let _put: fn(&mut WriteTracker, Document, WriteMode) -> Registered = WriteTracker::put;
    let _delete: fn(&mut WriteTracker, &str, &str, WriteMode) -> Registered = WriteTracker::delete;
    // And each mode does what it names: the same put settles differently under each.
    for (mode, want) in [
        (WriteMode::Receipt, Some(window_elapsed(true))),
        (WriteMode::SendOnly, Some(Outcome::Sent)),
    ] {
        let mut t = tracker(Some(true));
        let (h, _) = t.put(document("k0"), mode).unwrap();
        t.on_sent(h, 0).unwrap();
        t.on_transport_ack(h, 1);
        t.on_tick(5000);
        assert_eq!(outcome(&t, h), want, "{mode:?}");
    }
}

#[test]
fn w_46_an_ack_is_not_admission_of_a_receipt_write() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    t.on_transport_ack(h, 1);
    assert_eq!(t.state(h), Some(WriteState::InFlight));
    t.on_tick(5000);
    assert_eq!(outcome(&t, h), Some(window_elapsed(true)));
}

// ---- W-28 --------------------------------------------------------------------------------------

#[test]
fn w_28_white_space_is_exactly_the_listed_set() {
    let listed: Vec<u32> = [
        (0x09, 0x0d),
        (0x20, 0x20),
        (0x85, 0x85),
        (0xa0, 0xa0),
        (0x1680, 0x1680),
        (0x2000, 0x200a),
        (0x2028, 0x2029),
        (0x202f, 0x202f),
        (0x205f, 0x205f),
        (0x3000, 0x3000),
    ]
    .iter()
    .flat_map(|&(a, b)| a..=b)
    .collect();
    for c in (0..=0x10ffff).filter_map(char::from_u32) {
        assert_eq!(
            is_white_space(c),
            listed.contains(&u32::from(c)),
            "U+{:04X}",
            u32::from(c)
        );
    }
}

#[test]
fn w_28_blank_is_empty_or_only_white_space() {
    assert!(is_blank(""));
    assert!(is_blank(" \t\n\u{3000}\u{85}\u{a0}"));
    for not_blank in [
        "\u{200B}",
        "\u{200C}",
        "\u{200D}",
        "\u{2060}",
        "\u{FEFF}",
        "\u{180E}",
        "\u{1C}",
        "\u{1D}",
        "\u{1E}",
        "\u{1F}",
        " a ",
        " \u{200B} ",
    ] {
        assert!(!is_blank(not_blank), "{not_blank:?}");
    }
}

// ---- Bounds and misuse -------------------------------------------------------------------------

#[test]
fn writes_in_flight_are_capped_by_count_and_bytes() {
    let limits = TrackerLimits {
        max_in_flight: 2,
        max_in_flight_bytes: 1 << 20,
        max_settled_kept: 16,
        max_settled_kept_bytes: 8 << 20,
        max_settled_unread: 4096,
        max_settled_unread_bytes: 8 << 20,
    };
    let mut t = WriteTracker::new(limits, 1);
    let a = put(&mut t, "k0", 0);
    let _b = put(&mut t, "k1", 0);
    assert_eq!(
        t.put(document("k2"), WriteMode::Receipt).unwrap_err(),
        TrackerError::TooManyInFlight
    );
    t.on_tick(500);
    assert!(outcome(&t, a).is_some());
    assert!(t.put(document("k2"), WriteMode::Receipt).is_ok());

    let limits = TrackerLimits {
        max_in_flight: 100,
        max_in_flight_bytes: 120,
        max_settled_kept: 16,
        max_settled_kept_bytes: 8 << 20,
        max_settled_unread: 4096,
        max_settled_unread_bytes: 8 << 20,
    };
    let mut t = WriteTracker::new(limits, 1);
    assert!(t.put(document("k0"), WriteMode::Receipt).is_ok());
    assert!(t.put(document("k1"), WriteMode::Receipt).is_ok());
    assert_eq!(
        t.put(document("k2"), WriteMode::Receipt).unwrap_err(),
        TrackerError::TooManyBytesInFlight
    );
}

#[test]
fn a_write_is_sent_once() {
    let mut t = tracker(Some(true));
    let h = put_k(&mut t, 0);
    assert_eq!(t.on_sent(h, 1), Err(TrackerError::AlreadySent));
    let Frame::DocumentPut(DocumentPut { message_id, .. }) =
        t.put(document("k"), WriteMode::Receipt).unwrap().1
    else {
        panic!()
    };
    assert!(!message_id.is_empty());
}

// ---- W-42 --------------------------------------------------------------------------------------

#[test]
fn w_42_an_unconfirmed_write_is_resent_under_its_id_on_the_same_session() {
    let mut t = tracker(Some(true));
    let h = put(&mut t, "k0", 0);
    t.on_tick(5000);
    let (again, frame) = t.resend_put(h, document("k0")).unwrap();
    assert_ne!(again, h);
    assert_eq!(id(&t, again), id(&t, h));
    let Frame::DocumentPut(p) = frame else {
        panic!()
    };
    assert_eq!(p.message_id, id(&t, h));
    assert_eq!(t.content_hash(again), t.content_hash(h));
    t.on_sent(again, 6000).unwrap();
    let f = admit(&t, again);
    t.on_frame(&f, 6001);
    assert_eq!(outcome(&t, again), Some(Outcome::Admitted));
    // The first attempt keeps what its caller was told.
    assert_eq!(outcome(&t, h), Some(window_elapsed(true)));

    let (d, _) = t.delete("notes.v1", "k9", WriteMode::Receipt).unwrap();
    t.on_sent(d, 7000).unwrap();
    t.on_tick(12_000);
    let (d2, frame) = t.resend_delete(d).unwrap();
    assert_eq!(id(&t, d2), id(&t, d));
    assert!(matches!(frame, Frame::DocumentDelete(_)));
}

#[test]
fn w_42_a_resend_carries_the_same_content() {
    let mut t = tracker(Some(true));
    let h = put(&mut t, "k0", 0);
    t.on_tick(5000);
    assert_eq!(
        t.resend_put(h, document("k1")).unwrap_err(),
        TrackerError::ContentChanged
    );
    let mut other = document("k0");
    other.payload = cultnet_receipts::frames::RawValue::new(vec![0x02]).unwrap();
    assert_eq!(
        t.resend_put(h, other).unwrap_err(),
        TrackerError::ContentChanged
    );
    assert_eq!(
        t.resend_delete(h).unwrap_err(),
        TrackerError::ContentChanged
    );
    assert!(t.resend_put(h, document("k0")).is_ok());
}

#[test]
fn w_42_an_answered_write_or_one_answered_late_is_not_resent() {
    let mut t = tracker(Some(true));
    let a = put(&mut t, "k0", 0);
    let f = admit(&t, a);
    t.on_frame(&f, 1);
    let r = put(&mut t, "k1", 0);
    let f = refuse(&t, r, "message_invalid");
    t.on_frame(&f, 1);
    let late = put(&mut t, "k2", 0);
    let in_flight = put(&mut t, "k3", 4000);
    t.on_tick(5000);
    let f = admit(&t, late);
    t.on_frame(&f, 5001);
    for (h, key) in [(a, "k0"), (r, "k1"), (late, "k2"), (in_flight, "k3")] {
        assert_eq!(
            t.resend_put(h, document(key)).unwrap_err(),
            TrackerError::NotResendable,
            "{key}"
        );
    }
}

#[test]
fn w_42_across_a_reconnect_a_resend_is_a_new_write() {
    let mut t = tracker(Some(true));
    let h = put(&mut t, "k0", 0);
    t.on_tick(5000);
    t.start_session(6000);
    assert_eq!(
        t.resend_put(h, document("k0")).unwrap_err(),
        TrackerError::OtherSession
    );
    let (n, _) = t.put(document("k0"), WriteMode::Receipt).unwrap();
    assert_ne!(id(&t, n), id(&t, h));
    assert_eq!(t.content_hash(n), t.content_hash(h));
}

#[test]
fn w_8_a_received_id_is_matched_only_against_ids_sent_on_this_session() {
    let mut t = tracker(Some(true));
    let old = put_k(&mut t, 0);
    let old_receipt = admit(&t, old);
    t.start_session(10);
    t.on_frame(&Frame::Hello(server_hello(true)), 10);
    let new = put_k(&mut t, 11);
    // A receipt carrying the earlier session's id is not replayed onto anything: the old write
    // keeps its session_ended outcome with nothing late recorded, the new one stays in flight.
    t.on_frame(&old_receipt, 12);
    assert_eq!(
        t.state(old),
        Some(WriteState::Settled {
            outcome: Outcome::Unconfirmed {
                reason: UnconfirmedReason::SessionEnded,
                server_missed_window: false,
            },
            late: None,
        })
    );
    assert_eq!(t.state(new), Some(WriteState::InFlight));
    assert_eq!(t.counters().unmatched_answers, 1);
    // Only the id this session sent settles the new write.
    t.on_frame(&admit(&t, new), 13);
    assert!(matches!(
        t.state(new),
        Some(WriteState::Settled {
            outcome: Outcome::Admitted,
            ..
        })
    ));
}

#[test]
fn the_in_flight_byte_cap_takes_a_write_that_reaches_it_exactly_and_counts_a_deletes_bytes() {
    // A delete costs its minted id (21 bytes here: "w", 16 hex digits, "-0-N"), its schemaId
    // and its recordKey: 23 bytes for ("s", "k").
    let with_cap = |max_in_flight_bytes| {
        WriteTracker::new(
            TrackerLimits {
                max_in_flight: 100,
                max_in_flight_bytes,
                max_settled_kept: 16,
                max_settled_kept_bytes: 8 << 20,
                max_settled_unread: 4096,
                max_settled_unread_bytes: 8 << 20,
            },
            1,
        )
    };
    let mut t = with_cap(46);
    let (h, Frame::DocumentDelete(d)) = t.delete("s", "k", WriteMode::Receipt).unwrap() else {
        panic!("a delete frame");
    };
    assert_eq!(d.message_id.len(), 21);
    assert!(
        t.delete("s", "k", WriteMode::Receipt).is_ok(),
        "reaching the cap exactly is allowed"
    );
    assert_eq!(
        t.delete("s", "k", WriteMode::Receipt).unwrap_err(),
        TrackerError::TooManyBytesInFlight
    );
    // Settling one frees its bytes.
    t.on_send_failed(h, 0);
    assert!(t.delete("s", "k", WriteMode::Receipt).is_ok());
    let mut t = with_cap(45);
    assert!(t.delete("s", "k", WriteMode::Receipt).is_ok());
    assert_eq!(
        t.delete("s", "k", WriteMode::Receipt).unwrap_err(),
        TrackerError::TooManyBytesInFlight,
        "one byte short of two deletes"
    );
}

#[test]
fn unsettled_counts_registered_writes_until_they_settle() {
    let mut t = tracker(Some(true));
    assert_eq!(t.unsettled(), 0);
    let a = put_k(&mut t, 0);
    let (b, _) = t.put(document("kb"), WriteMode::Receipt).unwrap();
    assert_eq!(t.unsettled(), 2, "sent or only registered, both count");
    t.on_frame(&admit(&t, a), 1);
    assert_eq!(t.unsettled(), 1);
    t.on_send_failed(b, 2);
    assert_eq!(t.unsettled(), 0);
}

#[test]
fn w_36_a_write_registered_before_the_session_ended_but_unsent_settles_when_sent() {
    let mut t = tracker(Some(true));
    let (h, _) = t.put(document("k"), WriteMode::Receipt).unwrap();
    t.on_session_ended(5);
    assert_eq!(
        t.state(h),
        Some(WriteState::Registered),
        "not sent yet, so not settled yet"
    );
    assert!(t.poll_settled().is_none());
    t.on_sent(h, 6).unwrap();
    assert_eq!(
        outcome(&t, h),
        Some(Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false,
        })
    );
}

#[test]
fn the_content_hash_of_a_write_is_its_frames_hash() {
    use cultnet_receipts::hash::{content_hash, delete_hash, put_hash};
    let mut t = tracker(Some(true));
    let (p, Frame::DocumentPut(put_frame)) = t.put(document("k"), WriteMode::Receipt).unwrap()
    else {
        panic!("a put frame");
    };
    let (d, Frame::DocumentDelete(delete_frame)) =
        t.delete("notes.v1", "k", WriteMode::Receipt).unwrap()
    else {
        panic!("a delete frame");
    };
    assert_eq!(t.content_hash(p), Some(put_hash(&put_frame)));
    assert_eq!(t.content_hash(d), Some(delete_hash(&delete_frame)));
    assert_eq!(
        t.content_hash(d),
        Some(content_hash(Operation::Delete, "notes.v1", "k", None))
    );
    assert_ne!(t.content_hash(p), t.content_hash(d));
}

#[test]
fn settling_a_write_frees_exactly_its_bytes() {
    let mut t = WriteTracker::new(
        TrackerLimits {
            max_in_flight: 100,
            max_in_flight_bytes: 100,
            max_settled_kept: 16,
            max_settled_kept_bytes: 8 << 20,
            max_settled_unread: 4096,
            max_settled_unread_bytes: 8 << 20,
        },
        1,
    );
    // Minted ids are 21 bytes here; a delete costs its id, schemaId and recordKey.
    let (a, _) = t.delete("s", "k", WriteMode::Receipt).unwrap(); // 23 bytes
    let _b = t.delete("s", &"b".repeat(18), WriteMode::Receipt).unwrap(); // 40 bytes
    t.on_send_failed(a, 0);
    // 40 bytes remain in flight: 60 more fit, 61 do not.
    assert_eq!(
        t.delete("s", &"c".repeat(39), WriteMode::Receipt)
            .unwrap_err(),
        TrackerError::TooManyBytesInFlight
    );
    assert!(t.delete("s", &"c".repeat(38), WriteMode::Receipt).is_ok());
}

#[test]
fn forget_drops_a_settled_write_only_and_keeps_the_bound_on_the_others() {
    let mut t = WriteTracker::new(
        TrackerLimits {
            max_in_flight: 100,
            max_in_flight_bytes: 1 << 20,
            max_settled_kept: 2,
            max_settled_kept_bytes: 8 << 20,
            max_settled_unread: 4096,
            max_settled_unread_bytes: 8 << 20,
        },
        1,
    );
    t.on_frame(&Frame::Hello(server_hello(true)), 0);
    let a = put(&mut t, "a", 0);
    t.forget(a);
    assert_eq!(
        t.state(a),
        Some(WriteState::InFlight),
        "an open write is not forgotten"
    );
    let b = put(&mut t, "b", 0);
    t.on_send_failed(a, 1);
    t.on_send_failed(b, 1);
    t.forget(a);
    assert_eq!(t.state(a), None);
    assert!(t.state(b).is_some());
    // b is now the oldest kept write: two more settled writes push it out, and only it.
    let c = put(&mut t, "c", 2);
    let d = put(&mut t, "d", 2);
    t.on_send_failed(c, 3);
    t.on_send_failed(d, 3);
    assert_eq!(t.state(b), None);
    assert!(t.state(c).is_some() && t.state(d).is_some());
    assert_eq!(t.counters().settled_forgotten, 1);
}

#[test]
fn w_42_forgetting_the_first_attempt_keeps_its_resend_answerable() {
    let mut t = tracker(Some(true));
    let a = put_k(&mut t, 0);
    t.on_tick(RECEIPT_RESULT_WINDOW_MS);
    let (a2, _) = t.resend_put(a, document("k")).unwrap();
    t.on_sent(a2, RECEIPT_RESULT_WINDOW_MS + 1).unwrap();
    t.forget(a);
    t.on_frame(&admit(&t, a2), RECEIPT_RESULT_WINDOW_MS + 2);
    assert_eq!(outcome(&t, a2), Some(Outcome::Admitted));
}

#[test]
fn a_puts_cost_against_the_byte_cap_is_every_field_it_carries() {
    let mut d = document("key-of-ten");
    d.source_runtime_id = Some("runtime".into());
    d.source_agent_id = Some("agent-id".into());
    d.source_role = Some("writer".into());
    d.tags = Some(vec!["alpha".into(), "beta-tag".into()]);
    // The minted id (21 bytes here) and each field's bytes, counted here without the crate.
    let cost = 21
        + "notes.v1".len()
        + "key-of-ten".len()
        + d.stored_at.len()
        + d.payload.as_bytes().len()
        + "runtime".len()
        + "agent-id".len()
        + "writer".len()
        + "alpha".len()
        + "beta-tag".len();
    let with_cap = |max_in_flight_bytes| {
        WriteTracker::new(
            TrackerLimits {
                max_in_flight: 10,
                max_in_flight_bytes,
                max_settled_kept: 16,
                max_settled_kept_bytes: 8 << 20,
                max_settled_unread: 4096,
                max_settled_unread_bytes: 8 << 20,
            },
            1,
        )
    };
    assert!(with_cap(cost).put(d.clone(), WriteMode::Receipt).is_ok());
    assert_eq!(
        with_cap(cost - 1).put(d, WriteMode::Receipt).unwrap_err(),
        TrackerError::TooManyBytesInFlight
    );
}

#[test]
fn stats_count_writes_by_outcome_late_answers_sessions_and_what_is_held() {
    use cultnet_receipts::tracker::TrackerStats;
    let mut t = tracker(Some(true));
    assert_eq!(t.stats(), TrackerStats::default());
    // One of each outcome, and one write left in flight.
    let admitted = put(&mut t, "a", 0);
    let refused = put(&mut t, "r", 0);
    let (sent, _) = t.put(document("s"), WriteMode::SendOnly).unwrap();
    t.on_sent(sent, 0).unwrap();
    t.on_transport_ack(sent, 0);
    let f = admit(&t, admitted);
    t.on_frame(&f, 10);
    let f = refuse(&t, refused, "write_not_authorized");
    t.on_frame(&f, 10);
    let late_a = put(&mut t, "la", 20);
    let late_r = put(&mut t, "lr", 20);
    let f_a = admit(&t, late_a);
    let f_r = refuse(&t, late_r, "write_not_authorized");
    t.on_tick(20 + RECEIPT_RESULT_WINDOW_MS);
    t.on_frame(&f_a, 30 + RECEIPT_RESULT_WINDOW_MS);
    t.on_frame(&f_r, 30 + RECEIPT_RESULT_WINDOW_MS);
    let held = put(&mut t, "h", 40 + RECEIPT_RESULT_WINDOW_MS);
    let s = t.stats();
    assert_eq!(s.writes_registered, 6);
    assert_eq!((s.admitted, s.refused, s.unconfirmed, s.sent), (1, 1, 2, 1));
    assert_eq!((s.admitted_late, s.refused_late), (1, 1));
    assert_eq!(s.in_flight, 1);
    assert!(s.in_flight_bytes > 0);
    assert_eq!(s.settled_kept, 5);
    assert_eq!(s.settled_unread, 5);
    // Reading settled writes empties the unread count, not the kept one.
    drain(&mut t);
    let s = t.stats();
    assert_eq!((s.settled_unread, s.settled_kept), (0, 5));
    // A second late answer to the same write is not counted again.
    t.on_frame(&f_a, 50 + RECEIPT_RESULT_WINDOW_MS);
    assert_eq!(t.stats().admitted_late, 1);
    // A new session: counted; the write still in flight settles and frees its bytes.
    t.start_session(60 + RECEIPT_RESULT_WINDOW_MS);
    let s = t.stats();
    assert_eq!(s.sessions_started, 1);
    assert_eq!((s.in_flight, s.in_flight_bytes), (0, 0));
    assert_eq!(s.unconfirmed, 3);
    assert_eq!(
        outcome(&t, held).map(|o| matches!(o, Outcome::Unconfirmed { .. })),
        Some(true)
    );
    // The counters ride along.
    t.on_frame(&anonymous_v0(), 70 + RECEIPT_RESULT_WINDOW_MS);
    assert_eq!(t.stats().counters, t.counters());
    assert_eq!(t.stats().counters.unattributed_errors, 1);
}

#[test]
fn w_13_a_client_that_sends_no_hello_keeps_the_legacy_window_whatever_the_server_lists() {
    let mut t = WriteTracker::new(TrackerLimits::default(), 0x5eed).without_receipt_hello();
    t.on_frame(&Frame::Hello(server_hello(true)), 0);
    assert_eq!(t.result_window_ms(), 500);
    let h = put_k(&mut t, 0);
    t.on_tick(499);
    assert_eq!(outcome(&t, h), None);
    t.on_tick(500);
    // The server owed this connection no receipt: unconfirmed, but no window was missed.
    assert_eq!(outcome(&t, h), Some(window_elapsed(false)));
    assert_eq!(t.counters().windows_missed_by_receipt_server, 0);
    // And so on every later session of the tracker.
    t.start_session(600);
    t.on_frame(&Frame::Hello(server_hello(true)), 600);
    assert_eq!(t.result_window_ms(), 500);
}

#[test]
fn w_40_only_a_receipt_connection_reports_a_missed_window() {
    // The same receipt server's hello, with and without the client's own receipt hello.
    for (client_hello, window, missed) in [(true, 5000, true), (false, 500, false)] {
        let t = WriteTracker::new(TrackerLimits::default(), 0x5eed);
        let mut t = if client_hello {
            t
        } else {
            t.without_receipt_hello()
        };
        t.on_frame(&Frame::Hello(server_hello(true)), 0);
        let h = put_k(&mut t, 0);
        t.on_tick(window);
        assert_eq!(outcome(&t, h), Some(window_elapsed(missed)));
        assert_eq!(
            t.counters().windows_missed_by_receipt_server,
            u64::from(missed)
        );
    }
}

#[test]
fn w_45_a_batch_of_no_members_is_never_admitted() {
    let mut t = tracker(Some(true));
    // No member, so no write_admitted can ever name one: there is no outcome to report.
    assert_eq!(t.batch_outcome(&[]), None);
    let h = put_k(&mut t, 0);
    let f = admit(&t, h);
    t.on_frame(&f, 1);
    assert_eq!(t.batch_outcome(&[h]), Some(BatchOutcome::Admitted));
    assert_eq!(t.batch_outcome(&[]), None);
}

#[test]
fn w_42_without_the_clients_receipt_hello_a_resend_is_refused_even_to_a_receipt_server() {
    // The connection is legacy (the server would apply a resend twice), whatever the server's
    // own hello lists.
    let mut t = WriteTracker::new(TrackerLimits::default(), 0x5eed).without_receipt_hello();
    t.on_frame(&Frame::Hello(server_hello(true)), 0);
    let h = put_k(&mut t, 0);
    t.on_tick(500);
    assert!(matches!(outcome(&t, h), Some(Outcome::Unconfirmed { .. })));
    assert_eq!(
        t.resend_put(h, document("k")),
        Err(TrackerError::NotReceiptServer)
    );
}
