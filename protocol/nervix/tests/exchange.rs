//! The exchange (one session): C-1 to C-7, C-9, C-10, D-4, D-6, E-5 and F-8.

mod support;

use bytes::Bytes;
use nervix_protocol::exchange::*;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use support::*;

const T0: Timestamp = Timestamp::ZERO;

fn drain_ids(x: &mut Exchange) -> Vec<u64> {
    std::iter::from_fn(|| x.poll_transmit())
        .map(|f| sent(&f).request_id)
        .collect()
}

fn events(x: &mut Exchange) -> Vec<ExchangeEvent> {
    std::iter::from_fn(|| x.poll_event()).collect()
}

fn replied(ev: &[ExchangeEvent]) -> Vec<(RequestHandle, ReplyBody)> {
    ev.iter()
        .filter_map(|e| match e {
            ExchangeEvent::Replied { handle, frame } => {
                Some((*handle, frame.view().body_as_reply().unwrap().body_type()))
            }
            _ => None,
        })
        .collect()
}

fn interrupted(ev: &[ExchangeEvent]) -> Vec<(RequestHandle, Interruption)> {
    ev.iter()
        .filter_map(|e| match e {
            ExchangeEvent::Interrupted { handle, cause, .. } => Some((*handle, cause.clone())),
            _ => None,
        })
        .collect()
}

/// Whether each interrupted request may have reached the server.
fn sent_flags(ev: &[ExchangeEvent]) -> Vec<(RequestHandle, bool)> {
    ev.iter()
        .filter_map(|e| match e {
            ExchangeEvent::Interrupted { handle, sent, .. } => Some((*handle, *sent)),
            _ => None,
        })
        .collect()
}

#[test]
fn c_1_identities_start_at_one_and_are_never_reused() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![1, 2]);
    x.handle_frame(T0, domains(1));
    x.handle_frame(T0, domains(2));
    assert_eq!(
        replied(&events(&mut x))
            .iter()
            .map(|r| r.0)
            .collect::<Vec<_>>(),
        vec![a, b]
    );
    x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(
        drain_ids(&mut x),
        vec![3],
        "an answered identity is not used again"
    );
    let mut fresh = Exchange::new(ExchangeConfig::default());
    fresh.request(T0, &list_domains(), None).unwrap();
    assert_eq!(
        drain_ids(&mut fresh),
        vec![1],
        "a new session counts from 1 again"
    );
}

#[test]
fn c_1_exhausted_identities_require_a_new_session() {
    let mut x = Exchange::new(ExchangeConfig::default().with_first_request_id(u64::MAX - 1));
    x.request(T0, &list_domains(), None).unwrap();
    x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![u64::MAX - 1, u64::MAX]);
    assert_eq!(
        x.request(T0, &list_domains(), None),
        Err(RequestError::IdentitiesExhausted)
    );
    assert!(
        x.poll_transmit().is_none(),
        "nothing is sent under a wrapped identity"
    );
}

#[test]
fn c_2_waiter_is_registered_before_the_frame_is_sent() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let h = x.request(T0, &list_domains(), None).unwrap();
    // The frame has not been handed to the transport yet, and the waiter already exists.
    assert_eq!(x.waiting(), 1);
    assert_eq!(x.request_id(h), Some(1));
    let frame = x.poll_transmit().unwrap();
    assert_eq!(sent(&frame).request_id, 1);
    x.handle_frame(T0, domains(1));
    assert_eq!(replied(&events(&mut x)), vec![(h, ReplyBody::DomainList)]);
}

#[test]
fn c_3_reply_routed_by_identity_alone() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    let b = x.request(T0, &command("SHOW X;", "ref-b"), None).unwrap();
    let c = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    // Out of order, with unsolicited frames between them.
    x.handle_frame(T0, notice("hello"));
    x.handle_frame(T0, domains(3));
    x.handle_frame(T0, outcome(2, "ref-b", completed()));
    x.handle_frame(T0, notice("again"));
    x.handle_frame(T0, domains(1));
    assert_eq!(
        replied(&events(&mut x)),
        vec![
            (c, ReplyBody::DomainList),
            (b, ReplyBody::CommandOutcome),
            (a, ReplyBody::DomainList)
        ]
    );
    assert_eq!(
        std::iter::from_fn(|| x.poll_unsolicited()).count(),
        2,
        "unsolicited bodies complete nothing"
    );
}

#[test]
fn c_3_late_reply_of_an_abandoned_request_is_discarded() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    x.abandon(a).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    x.handle_frame(T0, domains(1));
    let ev = events(&mut x);
    assert_eq!(interrupted(&ev), vec![(a, Interruption::Abandoned)]);
    assert!(
        replied(&ev).is_empty(),
        "the late reply completes nothing, not even b"
    );
    assert_eq!(x.discarded_replies(), 1);
    x.handle_frame(T0, domains(2));
    assert_eq!(replied(&events(&mut x)), vec![(b, ReplyBody::DomainList)]);
}

#[test]
fn c_4_exactly_one_terminal_reply_per_request() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    x.handle_frame(T0, domains(1));
    x.handle_frame(T0, domains(1));
    assert_eq!(replied(&events(&mut x)), vec![(a, ReplyBody::DomainList)]);
    assert_eq!(x.discarded_replies(), 1);
}

#[test]
fn c_5_no_identity_in_flight_is_sent_twice() {
    let mut x = Exchange::new(ExchangeConfig::default().with_max_in_flight(4));
    let mut seen = std::collections::BTreeSet::new();
    for round in 0..50u64 {
        for _ in 0..3 {
            x.request(T0, &list_domains(), None).unwrap();
        }
        for id in drain_ids(&mut x) {
            assert!(seen.insert(id), "identity {id} sent twice");
        }
        // Answer some, leave others in flight.
        for id in seen
            .iter()
            .copied()
            .filter(|id| id % 3 == round % 3)
            .collect::<Vec<_>>()
        {
            x.handle_frame(T0, domains(id));
        }
        events(&mut x);
    }
}

#[test]
fn c_6_at_most_max_in_flight_and_the_rest_wait_in_order() {
    let mut x = Exchange::new(ExchangeConfig::default());
    for _ in 0..100 {
        x.request(T0, &list_domains(), None).unwrap();
    }
    assert_eq!(drain_ids(&mut x), (1..=64).collect::<Vec<_>>());
    assert_eq!(x.in_flight(), 64);
    x.handle_frame(T0, domains(10));
    assert_eq!(drain_ids(&mut x), vec![65], "one answer lets one more out");
}

#[test]
fn c_6_refused_as_too_many_is_sent_again_after_an_earlier_reply() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![1, 2]);
    x.handle_frame(T0, rejected(2, RequestRejection::TooManyRequestsInFlight));
    assert!(
        events(&mut x).is_empty(),
        "not an end: the request was not admitted"
    );
    assert!(
        x.poll_transmit().is_none(),
        "held until an earlier request is answered"
    );
    x.handle_frame(T0, domains(1));
    assert_eq!(
        drain_ids(&mut x),
        vec![3],
        "sent again under a fresh identity"
    );
    assert_eq!(x.request_id(b), Some(3));
    x.handle_frame(T0, domains(3));
    assert_eq!(
        replied(&events(&mut x)),
        vec![(a, ReplyBody::DomainList), (b, ReplyBody::DomainList)]
    );
}

#[test]
fn c_7_unsolicited_queue_is_bounded_and_reports_loss_without_stopping_replies() {
    let mut x = Exchange::new(ExchangeConfig::default().with_unsolicited_capacity(2));
    let a = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    for i in 0..5 {
        x.handle_frame(T0, notice(&format!("n{i}")));
    }
    x.handle_frame(T0, domains(1));
    assert_eq!(
        replied(&events(&mut x)),
        vec![(a, ReplyBody::DomainList)],
        "replies still route"
    );
    let q: Vec<Unsolicited> = std::iter::from_fn(|| x.poll_unsolicited()).collect();
    assert_eq!(q.len(), 3);
    assert!(matches!(q[0], Unsolicited::Frame(_)) && matches!(q[1], Unsolicited::Frame(_)));
    assert!(matches!(q[2], Unsolicited::Lost { dropped: 3 }));
    // Room again: frames are kept again.
    x.handle_frame(T0, notice("later"));
    assert!(matches!(x.poll_unsolicited(), Some(Unsolicited::Frame(_))));
}

fn cancel_outcome(id: u64, target: u64, state: CancelState) -> Bytes {
    reply(
        id,
        ReplyBodyT::CancelOutcome(Box::new(CancelOutcomeT {
            target_request_id: target,
            state: Some(state),
        })),
    )
}

fn request_cancelled(id: u64, stage: CancellationStage) -> Bytes {
    reply(
        id,
        ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT { stage: Some(stage) })),
    )
}

#[test]
fn c_9_cancel_has_its_own_identity_and_both_replies_come_in_either_order() {
    for cancel_first in [true, false] {
        let mut x = Exchange::new(ExchangeConfig::default());
        let target = x.request(T0, &command("CREATE X;", "ref-x"), None).unwrap();
        drain_ids(&mut x);
        let cancel = x.cancel(T0, target, None).unwrap().unwrap();
        let sent_cancel = sent(&x.poll_transmit().unwrap());
        assert_eq!(
            sent_cancel.request_id, 2,
            "the cancel has an identity of its own"
        );
        assert!(matches!(&sent_cancel.request,
            ClientRequestT::CancelRequest(c) if c.target_request_id == 1));
        if cancel_first {
            x.handle_frame(T0, cancel_outcome(2, 1, CancelState::Requested));
            x.handle_frame(T0, request_cancelled(1, CancellationStage::AfterAdmission));
        } else {
            x.handle_frame(T0, request_cancelled(1, CancellationStage::AfterAdmission));
            x.handle_frame(T0, cancel_outcome(2, 1, CancelState::Requested));
        }
        let mut r = replied(&events(&mut x));
        r.sort();
        assert_eq!(
            r,
            vec![
                (target, ReplyBody::RequestCancelled),
                (cancel, ReplyBody::CancelOutcome)
            ]
        );
    }
}

#[test]
fn c_9_cancelling_an_unsent_request_sends_nothing_and_ends_it() {
    let mut x = Exchange::new(ExchangeConfig::default().with_max_in_flight(1));
    x.request(T0, &list_domains(), None).unwrap();
    let queued = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![1]);
    assert_eq!(x.cancel(T0, queued, None).unwrap(), None);
    let ev = events(&mut x);
    assert_eq!(
        interrupted(&ev),
        vec![(queued, Interruption::CancelledUnsent)]
    );
    assert_eq!(sent_flags(&ev), vec![(queued, false)], "it had no effect");
    x.handle_frame(T0, domains(1));
    assert!(
        x.poll_transmit().is_none(),
        "the cancelled request never goes out"
    );
}

#[test]
fn c_10_stopping_without_cancel_is_an_abandonment_after_admission() {
    let mut x = Exchange::new(ExchangeConfig::default().with_max_in_flight(1));
    let a = x.request(T0, &command("CREATE X;", "ref-x"), None).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![1]);
    x.abandon(a).unwrap();
    let ev = events(&mut x);
    assert_eq!(interrupted(&ev), vec![(a, Interruption::Abandoned)]);
    assert_eq!(sent_flags(&ev), vec![(a, true)], "it may have run");
    // The server still works on it: its slot stays taken until its reply comes.
    assert!(x.poll_transmit().is_none());
    x.handle_frame(T0, outcome(1, "ref-x", completed()));
    assert_eq!(drain_ids(&mut x), vec![2]);
    x.handle_frame(T0, domains(2));
    assert_eq!(replied(&events(&mut x)), vec![(b, ReplyBody::DomainList)]);
}

#[test]
fn d_4_every_call_is_bounded_by_its_deadline() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let t = |ms: u64| Timestamp::from_nanos(ms * 1_000_000);
    let a = x
        .request(T0, &command("CREATE X;", "ref-x"), Some(t(100)))
        .unwrap();
    let b = x.request(T0, &list_domains(), Some(t(50))).unwrap();
    drain_ids(&mut x);
    assert_eq!(x.poll_timeout(), Some(t(50)));
    x.handle_timeout(t(49));
    assert!(events(&mut x).is_empty(), "an early timeout does nothing");
    x.handle_timeout(t(50));
    assert_eq!(
        interrupted(&events(&mut x)),
        vec![(b, Interruption::DeadlineExceeded)]
    );
    x.handle_timeout(t(50));
    assert!(events(&mut x).is_empty(), "a repeated timeout does nothing");
    assert_eq!(x.poll_timeout(), Some(t(100)));
    x.handle_frame(t(60), outcome(1, "ref-x", completed()));
    assert_eq!(
        replied(&events(&mut x)),
        vec![(a, ReplyBody::CommandOutcome)]
    );
    assert_eq!(x.poll_timeout(), None);
}

fn assert_all_interrupted(x: &mut Exchange, handles: &[RequestHandle], cause: Interruption) {
    let ev = events(x);
    let mut got = interrupted(&ev);
    got.sort_by_key(|g| g.0);
    assert_eq!(
        got,
        handles
            .iter()
            .map(|h| (*h, cause.clone()))
            .collect::<Vec<_>>()
    );
    assert!(matches!(ev.last(), Some(ExchangeEvent::Ended { .. })));
    assert!(!x.is_open());
}

fn three_waiting() -> (Exchange, Vec<RequestHandle>) {
    let mut x = Exchange::new(ExchangeConfig::default().with_max_in_flight(2));
    let hs = vec![
        x.request(T0, &command("CREATE A;", "ref-a"), None).unwrap(),
        x.request(T0, &list_domains(), None).unwrap(),
        x.request(T0, &list_domains(), None).unwrap(),
    ];
    drain_ids(&mut x);
    (x, hs)
}

#[test]
fn d_6_session_ending_transport_end_and_violation_alike_end_every_waiter() {
    let (mut x, hs) = three_waiting();
    x.handle_frame(
        T0,
        server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
            reason: SessionEndReasonT::LeaderRedirect(Box::new(LeaderRedirectT { leader: None })),
        }))),
    );
    assert_all_interrupted(&mut x, &hs, Interruption::SessionEnded);
    x.handle_frame(T0, domains(1));
    assert!(
        events(&mut x).is_empty(),
        "no reply follows a SessionEnding"
    );

    let (mut x, hs) = three_waiting();
    x.handle_transport_closed(T0);
    assert_all_interrupted(&mut x, &hs, Interruption::TransportLost);

    let (mut x, hs) = three_waiting();
    x.handle_frame(T0, Bytes::from_static(b"\x08\0\0\0NXSMgarbage"));
    assert_all_interrupted(&mut x, &hs, Interruption::ProtocolViolation);
}

#[test]
fn f_8_a_violation_stops_the_reader_and_interrupts_every_request() {
    let (mut x, hs) = three_waiting();
    x.handle_frame(
        T0,
        rejected(1, RequestRejection::InvalidRequest).slice(0..10),
    );
    let ev = events(&mut x);
    assert!(matches!(
        ev.last(),
        Some(ExchangeEvent::Ended {
            cause: EndCause::Violation(_)
        })
    ));
    assert_eq!(interrupted(&ev).len(), hs.len());
    // The reader has stopped: a valid reply now completes nothing.
    x.handle_frame(T0, domains(2));
    assert!(events(&mut x).is_empty());
    assert_eq!(
        x.request(T0, &list_domains(), None),
        Err(RequestError::SessionEnded)
    );
}

#[test]
fn c_3_a_reply_of_the_wrong_kind_is_a_violation() {
    let mut x = Exchange::new(ExchangeConfig::default());
    x.request(T0, &command("CREATE A;", "ref-a"), None).unwrap();
    drain_ids(&mut x);
    x.handle_frame(T0, domains(1));
    let ev = events(&mut x);
    assert!(
        matches!(ev.last(), Some(ExchangeEvent::Ended { cause: EndCause::Violation(v) })
        if v.rule() == "C-3")
    );
}

#[test]
fn e_5_outcome_naming_another_reference_is_a_violation() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let h = x.request(T0, &command("CREATE A;", "ref-a"), None).unwrap();
    drain_ids(&mut x);
    x.handle_frame(T0, outcome(1, "ref-b", completed()));
    let ev = events(&mut x);
    assert_eq!(interrupted(&ev), vec![(h, Interruption::ProtocolViolation)]);
    assert!(
        matches!(ev.last(), Some(ExchangeEvent::Ended { cause: EndCause::Violation(v) })
        if v.rule() == "E-5")
    );
}

#[test]
fn f_7_exchange_joins_transfer_parts_between_other_frames() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let h = x
        .request(T0, &command("SHOW BIG;", "ref-big"), None)
        .unwrap();
    let other = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    let whole = reply(
        1,
        ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
            execution_reference: "ref-big".into(),
            origin: Some(OutcomeOrigin::Executed),
            disposition: completed(),
            message: "z".repeat(3000),
            ..Default::default()
        })),
    );
    let total = whole.len() as u64;
    let parts = whole.chunks(1000).count();
    for (i, chunk) in whole.chunks(1000).enumerate() {
        x.handle_frame(
            T0,
            reply(
                1,
                ReplyBodyT::TransferPart(Box::new(TransferPartT {
                    total_bytes: total,
                    offset: (i * 1000) as u64,
                    chunk: chunk.to_vec(),
                })),
            ),
        );
        if i == 0 {
            x.handle_frame(T0, notice("between"));
            x.handle_frame(T0, domains(2));
        }
        let r = replied(&events(&mut x));
        if i == 0 {
            assert_eq!(
                r,
                vec![(other, ReplyBody::DomainList)],
                "other frames pass between parts"
            );
        } else if i + 1 < parts {
            assert!(r.is_empty(), "nothing partial is delivered");
        } else {
            assert_eq!(r, vec![(h, ReplyBody::CommandOutcome)]);
        }
    }
    assert!(matches!(x.poll_unsolicited(), Some(Unsolicited::Frame(_))));
    assert!(x.is_open());
}

fn too_many(id: u64) -> Bytes {
    rejected(id, RequestRejection::TooManyRequestsInFlight)
}

#[test]
fn c_6_refused_requests_go_again_in_the_order_they_were_first_sent() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    let c = x.request(T0, &list_domains(), None).unwrap();
    let d = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![1, 2, 3, 4]);
    // Refused out of order: the last first.
    x.handle_frame(T0, too_many(4));
    x.handle_frame(T0, too_many(2));
    x.handle_frame(T0, too_many(3));
    assert!(x.poll_transmit().is_none(), "held while request 1 is out");
    x.handle_frame(T0, domains(1));
    assert_eq!(drain_ids(&mut x), vec![5, 6, 7]);
    assert_eq!(
        [b, c, d].map(|h| x.request_id(h)),
        [Some(5), Some(6), Some(7)],
        "b, c and d go again in the order they were first sent"
    );
    for id in [5, 6, 7] {
        x.handle_frame(T0, domains(id));
    }
    let order: Vec<RequestHandle> = replied(&events(&mut x)).iter().map(|r| r.0).collect();
    assert_eq!(order, vec![a, b, c, d]);
}

#[test]
fn c_6_a_refusal_with_nothing_else_in_flight_waits_longer_each_time() {
    let config = ExchangeConfig::default();
    let first = config.refusal_backoff_initial;
    let mut x = Exchange::new(config);
    let h = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![1]);
    let mut now = T0;
    let mut id = 1;
    let mut waits = Vec::new();
    for _ in 0..4 {
        x.handle_frame(now, too_many(id));
        assert!(
            x.poll_transmit().is_none(),
            "not resent at once: nothing was answered to make room"
        );
        let at = x.poll_timeout().expect("a wait is scheduled");
        assert!(at > now);
        waits.push(at.saturating_since(now));
        // Early timeouts do nothing.
        x.handle_timeout(now + (at.saturating_since(now) - std::time::Duration::from_nanos(1)));
        assert!(x.poll_transmit().is_none(), "not before the wait ends");
        now = at;
        x.handle_timeout(now);
        let ids = drain_ids(&mut x);
        assert_eq!(ids.len(), 1, "sent again once the wait ended");
        assert!(ids[0] > id, "under a fresh identity");
        id = ids[0];
    }
    assert_eq!(waits[0], first);
    for w in waits.windows(2) {
        assert_eq!(
            w[1],
            w[0] * 2,
            "each refusal in a row doubles the wait: {waits:?}"
        );
    }
    // An answer ends the streak: the next lone refusal waits the first wait again.
    x.handle_frame(now, domains(id));
    assert_eq!(replied(&events(&mut x)), vec![(h, ReplyBody::DomainList)]);
    x.request(now, &list_domains(), None).unwrap();
    let next = drain_ids(&mut x)[0];
    x.handle_frame(now, too_many(next));
    assert_eq!(x.poll_timeout(), Some(now + first));
}

#[test]
fn c_1_a_refused_request_with_no_identity_left_ends_unsent() {
    let mut x = Exchange::new(ExchangeConfig::default().with_first_request_id(u64::MAX - 1));
    let _a = x.request(T0, &list_domains(), None).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    assert_eq!(drain_ids(&mut x), vec![u64::MAX - 1, u64::MAX]);
    x.handle_frame(T0, too_many(u64::MAX));
    x.handle_frame(T0, domains(u64::MAX - 1));
    let ev = events(&mut x);
    assert_eq!(
        interrupted(&ev),
        vec![(b, Interruption::IdentitiesExhausted)],
        "it must go on a new session"
    );
    assert_eq!(sent_flags(&ev), vec![(b, false)], "it was never admitted");
    assert!(
        x.poll_transmit().is_none(),
        "never sent again under its answered identity"
    );
}

#[test]
fn c_7_the_unsolicited_queue_has_a_byte_budget() {
    let big = |n: usize| notice(&"n".repeat(n));
    let frame_len = big(4000).len();
    let mut x = Exchange::new(
        ExchangeConfig::default()
            .with_unsolicited_capacity(100)
            .with_unsolicited_bytes(2 * frame_len),
    );
    for _ in 0..5 {
        x.handle_frame(T0, big(4000));
    }
    assert_eq!(
        x.unsolicited_bytes(),
        2 * frame_len,
        "exactly the budget is kept"
    );
    let q: Vec<Unsolicited> = std::iter::from_fn(|| x.poll_unsolicited()).collect();
    assert_eq!(q.len(), 3);
    assert!(matches!(q[2], Unsolicited::Lost { dropped: 3 }));
    assert_eq!(x.unsolicited_bytes(), 0);
    // One byte short of room for a frame drops it.
    let mut x = Exchange::new(ExchangeConfig::default().with_unsolicited_bytes(frame_len - 1));
    x.handle_frame(T0, big(4000));
    assert!(matches!(
        x.poll_unsolicited(),
        Some(Unsolicited::Lost { dropped: 1 })
    ));
}

#[test]
fn f_9_a_kept_frame_is_copied_out_of_a_shared_receive_buffer() {
    let frame = notice(&"x".repeat(100 * 1024));
    assert!(
        frame.len() >= 64 * 1024,
        "above the copy-out size of check_compact"
    );
    // The frame sits inside a larger receive buffer that something else still holds.
    let mut buffer = bytes::BytesMut::with_capacity(frame.len() + 1024 * 1024);
    buffer.extend_from_slice(&frame);
    buffer.extend_from_slice(&[0u8; 1024 * 1024]);
    let whole = buffer.freeze();
    let slice = whole.slice(..frame.len());
    let mut x = Exchange::new(ExchangeConfig::default());
    x.handle_frame(T0, slice.clone());
    let Some(Unsolicited::Frame(kept)) = x.poll_unsolicited() else {
        panic!("kept")
    };
    assert_eq!(kept.bytes(), &frame);
    assert_ne!(
        kept.bytes().as_ptr(),
        slice.as_ptr(),
        "a frame sharing its buffer is copied out before it is kept"
    );
    drop((whole, slice));
    // A frame that owns its buffer alone is kept as it is.
    let alone = Bytes::from(frame.to_vec());
    let at = alone.as_ptr();
    x.handle_frame(T0, alone);
    let Some(Unsolicited::Frame(kept)) = x.poll_unsolicited() else {
        panic!("kept")
    };
    assert_eq!(
        kept.bytes().as_ptr(),
        at,
        "no copy when nothing else shares it"
    );
}

fn part(id: u64, total: u64, offset: u64, chunk: &[u8]) -> Bytes {
    reply(
        id,
        ReplyBodyT::TransferPart(Box::new(TransferPartT {
            total_bytes: total,
            offset,
            chunk: chunk.to_vec(),
        })),
    )
}

#[test]
fn f_7_parts_for_no_waiting_request_are_not_buffered() {
    let mut x = Exchange::new(ExchangeConfig::default());
    let h = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    // Parts naming an identity nobody waits for: dropped, not assembled.
    x.handle_frame(T0, part(99, 1 << 20, 0, &[7; 1000]));
    x.handle_frame(T0, part(99, 1 << 20, 1000, &[7; 1000]));
    assert!(x.is_open());
    assert_eq!(x.discarded_replies(), 2);
    // The waiting request's parts still join (they would clash with a buffered stranger).
    let whole = domains(1);
    let (a, b) = whole.split_at(whole.len() / 2);
    x.handle_frame(T0, part(1, whole.len() as u64, 0, a));
    x.handle_frame(T0, part(1, whole.len() as u64, a.len() as u64, b));
    assert_eq!(replied(&events(&mut x)), vec![(h, ReplyBody::DomainList)]);
}

fn at(ms: u64) -> Timestamp {
    T0 + std::time::Duration::from_millis(ms)
}

#[test]
fn t_8_a_deadline_passing_with_nothing_heard_since_the_request_went_makes_the_session_silent() {
    let mut x = Exchange::new(ExchangeConfig::default());
    x.request(T0, &list_domains(), Some(at(1000))).unwrap();
    drain_ids(&mut x);
    x.handle_timeout(at(999));
    assert!(!x.is_silent(), "nothing is decided before the deadline");
    x.handle_timeout(at(1000));
    assert_eq!(interrupted(&events(&mut x)).len(), 1);
    assert!(x.is_silent());
}

#[test]
fn t_8_any_frame_heard_after_the_request_went_keeps_the_session_from_silence() {
    // A reply to another request, an unsolicited frame, a reply nobody waits for (C-3): each
    // says the session still carries frames.
    let others: [fn() -> Bytes; 3] = [|| domains(1), || notice("busy"), || domains(99)];
    for other in others {
        let mut x = Exchange::new(ExchangeConfig::default());
        x.request(T0, &list_domains(), Some(at(5000))).unwrap();
        x.request(T0, &list_domains(), Some(at(1000))).unwrap();
        drain_ids(&mut x);
        x.handle_frame(at(10), other());
        x.handle_timeout(at(1000));
        assert!(
            interrupted(&events(&mut x))
                .iter()
                .any(|(_, c)| *c == Interruption::DeadlineExceeded),
            "the request itself still ends at its deadline"
        );
        assert!(!x.is_silent());
    }
}

#[test]
fn t_8_a_deadline_passing_on_a_request_never_sent_is_not_silence() {
    let mut x = Exchange::new(ExchangeConfig::default().with_max_in_flight(1));
    x.request(T0, &list_domains(), None).unwrap();
    x.request(T0, &list_domains(), Some(at(1000))).unwrap();
    assert_eq!(
        drain_ids(&mut x),
        vec![1],
        "the second waits behind the first"
    );
    x.handle_timeout(at(1000));
    assert_eq!(sent_flags(&events(&mut x)), vec![(RequestHandle(2), false)]);
    assert!(
        !x.is_silent(),
        "the session was never asked to answer it; only a request that went out can go unheard"
    );
}

#[test]
fn t_8_a_request_sent_after_the_last_frame_heard_goes_unheard() {
    let mut x = Exchange::new(ExchangeConfig::default().with_max_in_flight(1));
    x.request(T0, &list_domains(), None).unwrap();
    x.request(T0, &list_domains(), Some(at(1000))).unwrap();
    drain_ids(&mut x);
    // The reply that makes room is heard before the second request goes out.
    x.handle_frame(at(500), domains(1));
    assert_eq!(drain_ids(&mut x), vec![2]);
    x.handle_timeout(at(1000));
    assert!(x.is_silent());
}

/// The outcome of one command sent as `send` writes it, answered naming `answer`: whether it
/// was replied (true) or ended the session for E-5 (false). With `refused`, the first attempt
/// is refused as too many in flight and the answer comes to the renumbered one.
fn answered_with(
    send: impl FnOnce(&mut Exchange) -> RequestHandle,
    answer: &str,
    refused: bool,
) -> bool {
    let mut x = Exchange::new(ExchangeConfig::default());
    let first = x.request(T0, &list_domains(), None).unwrap();
    let h = send(&mut x);
    assert_eq!(drain_ids(&mut x), vec![1, 2]);
    let mut id = 2;
    if refused {
        x.handle_frame(T0, rejected(2, RequestRejection::TooManyRequestsInFlight));
        x.handle_frame(T0, domains(1));
        assert_eq!(drain_ids(&mut x), vec![3], "sent again renumbered");
        id = 3;
    } else {
        x.handle_frame(T0, domains(1));
    }
    assert_eq!(
        replied(&events(&mut x)),
        vec![(first, ReplyBody::DomainList)]
    );
    x.handle_frame(T0, outcome(id, answer, completed()));
    let ev = events(&mut x);
    if replied(&ev) == vec![(h, ReplyBody::CommandOutcome)] {
        return true;
    }
    assert_eq!(interrupted(&ev), vec![(h, Interruption::ProtocolViolation)]);
    assert!(
        matches!(ev.last(), Some(ExchangeEvent::Ended { cause: EndCause::Violation(v) })
        if v.rule() == "E-5"),
        "{ev:?}"
    );
    false
}

#[test]
fn e_5_the_reference_is_compared_whole_however_the_command_frame_was_written() {
    let request = command("CREATE A;", "ref-a1");
    let ClientRequestT::CommandRequest(owned) = &request else {
        unreachable!()
    };
    let parts = nervix_protocol::encode::CommandParts::of(owned);
    for refused in [false, true] {
        for (answer, same) in [
            ("ref-a1", true),
            ("ref-a2", false),
            ("ref-a", false),
            ("ref-a12", false),
            ("Ref-a1", false),
        ] {
            // The owned request, its borrowed parts, and a frame the caller writes itself.
            let ways: [&dyn Fn(&mut Exchange) -> RequestHandle; 3] = [
                &|x| x.request(T0, &request, None).unwrap(),
                &|x| x.request_command(T0, &parts, None).unwrap(),
                &|x| {
                    x.request_framed(T0, ClientRequest::CommandRequest, None, |enc, id| {
                        enc.encode_request(id, &request)
                    })
                    .unwrap()
                },
            ];
            for (way, send) in ways.into_iter().enumerate() {
                assert_eq!(
                    answered_with(send, answer, refused),
                    same,
                    "way {way}, answer {answer:?}, refused first: {refused}"
                );
            }
        }
    }
}

#[test]
fn f_7_a_whole_reply_to_a_request_whose_parts_are_being_joined_is_a_violation() {
    // A request whose reply is being assembled is answered only by the joined reply: a whole
    // reply under its identity in the middle is a second terminal reply (C-4), and is
    // neither delivered nor left to leave the unfinished parts behind.
    let mut x = Exchange::new(ExchangeConfig::default());
    let a = x.request(T0, &list_domains(), None).unwrap();
    let b = x.request(T0, &list_domains(), None).unwrap();
    drain_ids(&mut x);
    let whole = domains(1);
    let (first, _) = whole.split_at(whole.len() / 2);
    x.handle_frame(T0, part(1, whole.len() as u64, 0, first));
    x.handle_frame(T0, domains(1));
    let ev = events(&mut x);
    assert_eq!(replied(&ev), vec![], "nothing is delivered to {a:?}");
    assert!(
        matches!(
            ev.last(),
            Some(ExchangeEvent::Ended {
                cause: EndCause::Violation(_)
            })
        ),
        "the session ends with a violation: {ev:?}"
    );
    let mut ended: Vec<RequestHandle> = interrupted(&ev).into_iter().map(|(h, _)| h).collect();
    ended.sort();
    assert_eq!(ended, vec![a, b], "every waiter is interrupted");
    assert!(!x.is_open());
}
