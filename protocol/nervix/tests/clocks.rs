//! Domain clocks through the client, against a scripted server (K-1 to K-5): attach and detach
//! with every disposition, state before ticks, newest-only ticks, and attaching again after a
//! lost session or a move between sessions.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::domain_clock::ClockState;
use nervix_protocol::schema::*;
use std::time::Duration;
use support::rig::*;
use support::streams::*;
use support::*;

fn drain(r: &mut Rig) -> Vec<ClockEvent> {
    std::iter::from_fn(|| r.c.poll_clock_event()).collect()
}

/// What happened, briefly: `attached#gen`, `tick#gen.id`, ...
fn shape(events: &[ClockEvent]) -> String {
    events
        .iter()
        .map(|e| match e {
            ClockEvent::Attached { domain, clock } => {
                format!("{domain}:attached#{}", clock.generation)
            }
            ClockEvent::AlreadyAttached { domain } => format!("{domain}:already"),
            ClockEvent::Changed { domain, clock } => {
                format!("{domain}:changed#{}", clock.generation)
            }
            ClockEvent::Ticked { domain, tick } => {
                format!("{domain}:tick#{}.{}", tick.generation, tick.tick_id)
            }
            ClockEvent::Interrupted { domain } => format!("{domain}:interrupted"),
            ClockEvent::Refused { domain, .. } => format!("{domain}:refused"),
            ClockEvent::DetachRefused { domain, .. } => format!("{domain}:detach-refused"),
            ClockEvent::Ended { domain, reason } => format!("{domain}:ended:{reason:?}"),
            _ => "other".into(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `d1`'s clock attached, paced, as generation 3.
fn attached_clock() -> (Rig, SessionId) {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (rid, req) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    assert!(matches!(req, ClientRequestT::AttachDomainClockRequest(a) if a.domain == "d1"));
    r.feed(sid, clock_attached(rid, "d1", paced(3)));
    assert_eq!(shape(&drain(&mut r)), "d1:attached#3");
    (r, sid)
}

fn lose(r: &mut Rig, sid: SessionId) -> SessionId {
    r.c.handle_closed(r.now, sid);
    r.pump();
    let at = r.c.poll_timeout().expect("a reconnect is due");
    r.now = at;
    r.c.handle_timeout(at);
    r.open()
}

fn detach_disposition(r: &mut Rig, sid: SessionId, d: DomainClockDetachDispositionT) {
    let (rid, req) = last_of(r, ClientRequest::DetachDomainClockRequest);
    assert!(matches!(req, ClientRequestT::DetachDomainClockRequest(a) if a.domain == "d1"));
    r.feed(sid, clock_detach_reply(rid, d));
}

#[test]
fn k_1_attach_and_detach_name_the_domain_and_their_dispositions_are_acted_on() {
    // Detached.
    let (mut r, sid) = attached_clock();
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Attached);
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    detach_disposition(
        &mut r,
        sid,
        DomainClockDetachDispositionT::DomainClockDetached(Box::new(DomainClockDetachedT {
            domain: "d1".into(),
        })),
    );
    assert_eq!(shape(&drain(&mut r)), "d1:ended:Detached");
    assert!(r.c.clock("d1").is_none());
    // Not attached: followed no more, as after a detach.
    let (mut r, sid) = attached_clock();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    detach_disposition(
        &mut r,
        sid,
        DomainClockDetachDispositionT::DomainClockNotAttached(Box::new(DomainClockNotAttachedT {
            domain: "d1".into(),
        })),
    );
    assert_eq!(shape(&drain(&mut r)), "d1:ended:Detached");
    // A refused detach leaves the clock followed.
    let (mut r, sid) = attached_clock();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    detach_disposition(
        &mut r,
        sid,
        DomainClockDetachDispositionT::RequestFailed(Box::default()),
    );
    assert_eq!(shape(&drain(&mut r)), "d1:detach-refused");
    assert!(r.c.follows_clock("d1"));
    r.feed(sid, clock_ticked("d1", 3, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#3.1");
    // A detach cancelled after admission has detached; before admission it has not.
    let (mut r, sid) = attached_clock();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::DetachDomainClockRequest);
    r.feed(
        sid,
        reply(
            rid,
            ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
                stage: Some(CancellationStage::AfterAdmission),
            })),
        ),
    );
    assert_eq!(shape(&drain(&mut r)), "d1:ended:Detached");
    // Attach: domain not found, and a refused first attach, end it.
    for (frame, want) in [
        (
            DomainClockAttachDispositionT::DomainNotFound(Box::new(DomainNotFoundT {
                domain: "d1".into(),
            })),
            "d1:ended:DomainNotFound",
        ),
        (
            DomainClockAttachDispositionT::RequestFailed(Box::default()),
            "d1:ended:Refused { message: \"as asked\" }",
        ),
    ] {
        let mut r = Rig::new();
        r.c.follow_clock(r.now, "d1").unwrap();
        let sid = r.open();
        let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
        r.feed(sid, clock_attach_reply(rid, frame));
        assert_eq!(shape(&drain(&mut r)), want);
        assert!(!r.c.follows_clock("d1"));
    }
    // An attach answered RequestCancelled attached nothing.
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(
        sid,
        reply(
            rid,
            ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
                stage: Some(CancellationStage::AfterAdmission),
            })),
        ),
    );
    assert!(!r.c.follows_clock("d1"));
    r.feed(sid, clock_observed("d1", paced(4)));
    assert!(
        shape(&drain(&mut r)).ends_with("d1:ended:Refused { message: \"RequestCancelled\" }"),
        "frames about it are not followed"
    );
}

#[test]
fn k_1_each_domain_is_followed_once_and_no_attach_is_decided_while_a_detach_is_out() {
    let (mut r, sid) = attached_clock();
    assert_eq!(
        r.c.follow_clock(r.now, "d1").unwrap_err(),
        ClientError::AlreadyFollowing
    );
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    assert_eq!(
        r.c.follow_clock(r.now, "d1").unwrap_err(),
        ClientError::DetachInProgress
    );
    assert_eq!(
        r.c.detach_clock(r.now, "d1").unwrap_err(),
        ClientError::DetachInProgress
    );
    // The detach's session ends unanswered: no session holds the clock now.
    r.exec("SHOW DOMAINS;");
    let s2 = lose(&mut r, sid);
    assert_eq!(shape(&drain(&mut r)), "d1:ended:Detached");
    assert!(!requests(&r, s2).contains(&ClientRequest::AttachDomainClockRequest));
    assert_eq!(
        r.c.detach_clock(r.now, "d2").unwrap_err(),
        ClientError::NotFollowing
    );
}

#[test]
fn k_1_a_detach_goes_behind_the_attach_decided_before_it() {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    assert_eq!(
        requests(&r, sid),
        vec![
            ClientRequest::AttachDomainClockRequest,
            ClientRequest::DetachDomainClockRequest
        ]
    );
    let (aid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, clock_attached(aid, "d1", paced(1)));
    r.feed(sid, clock_ticked("d1", 1, 1));
    detach_disposition(
        &mut r,
        sid,
        DomainClockDetachDispositionT::DomainClockDetached(Box::new(DomainClockDetachedT {
            domain: "d1".into(),
        })),
    );
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:ended:Detached",
        "nothing of a clock being detached is reported"
    );
    // An attach never sent is simply dropped: nothing holds the clock.
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    r.c.detach_clock(r.now, "d1").unwrap();
    assert_eq!(shape(&drain(&mut r)), "d1:ended:Detached");
    let sid = r.open();
    assert!(
        requests(&r, sid).is_empty(),
        "neither attach nor detach goes"
    );
}

#[test]
fn k_2_state_and_ticks_apply_only_in_order_and_only_for_followed_domains() {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    // Before the attach reply: not applied.
    r.feed(sid, clock_observed("d1", paced(3)));
    r.feed(sid, clock_ticked("d1", 3, 1));
    // About a domain not followed.
    r.feed(sid, clock_ticked("d9", 3, 1));
    r.feed(sid, clock_attached(rid, "d1", unpaced(2)));
    // A tick of a generation whose state has not been applied.
    r.feed(sid, clock_ticked("d1", 3, 2));
    assert_eq!(r.c.ignored_clock_frames(), 4);
    r.feed(sid, clock_observed("d1", paced(3)));
    r.feed(sid, clock_ticked("d1", 3, 3));
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:attached#2 d1:changed#3 d1:tick#3.3"
    );
    let info = r.c.clock("d1").unwrap();
    assert!(matches!(info.clock.unwrap().state, ClockState::Paced(_)));
    assert_eq!(info.tick.unwrap().tick_id.get(), 3);
    // The attachment's end is its last frame.
    r.feed(sid, clock_attachment_ended("d1"));
    r.feed(sid, clock_ticked("d1", 3, 4));
    assert_eq!(shape(&drain(&mut r)), "d1:ended:DomainRemoved");
    assert!(!r.c.follows_clock("d1"));
}

#[test]
fn k_3_only_the_newest_tick_is_kept_and_a_tick_that_does_not_advance_is_ignored() {
    let (mut r, sid) = attached_clock();
    for id in [1, 2, 5] {
        r.feed(sid, clock_ticked("d1", 3, id));
    }
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:tick#3.5",
        "coalesced to the newest"
    );
    r.feed(sid, clock_ticked("d1", 3, 5));
    r.feed(sid, clock_ticked("d1", 3, 4));
    assert!(drain(&mut r).is_empty(), "not advancing");
    r.feed(sid, clock_ticked("d1", 3, 6));
    // A clock that is no longer paced clears the tick, read or not.
    r.feed(sid, clock_observed("d1", unpaced(3)));
    assert_eq!(shape(&drain(&mut r)), "d1:changed#3");
    assert_eq!(r.c.clock("d1").unwrap().tick, None);
    // A new generation: its ticks count from anywhere.
    r.feed(sid, clock_observed("d1", paced(4)));
    r.feed(sid, clock_ticked("d1", 4, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:changed#4 d1:tick#4.1");
    // Unread ticks are discarded on loss.
    r.feed(sid, clock_ticked("d1", 4, 2));
    r.c.handle_closed(r.now, sid);
    r.pump();
    assert_eq!(shape(&drain(&mut r)), "d1:interrupted");
    assert_eq!(r.c.clock("d1").unwrap().tick, None);
}

#[test]
fn k_3_unread_ticks_are_discarded_on_detach() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 1));
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    detach_disposition(
        &mut r,
        sid,
        DomainClockDetachDispositionT::DomainClockDetached(Box::new(DomainClockDetachedT {
            domain: "d1".into(),
        })),
    );
    assert_eq!(shape(&drain(&mut r)), "d1:ended:Detached");
}

#[test]
fn k_4_tick_and_clock_values_keep_their_width_and_sign() {
    let (mut r, sid) = attached_clock();
    let big = u64::MAX;
    r.feed(sid, clock_observed("d1", paced(big)));
    r.feed(
        sid,
        server(ServerBodyT::DomainClockTicked(Box::new(
            DomainClockTickedT {
                domain: "d1".into(),
                generation: big,
                tick_id: big,
                logical_boundary_unix_nanos: i64::MIN,
                authority_utc_unix_nanos: -1,
                serving_logical_unix_nanos: i64::MAX,
            },
        ))),
    );
    let events = drain(&mut r);
    let ClockEvent::Ticked { tick, .. } = &events[1] else {
        panic!("{events:?}")
    };
    assert_eq!(
        (
            tick.generation.get(),
            tick.tick_id.get(),
            tick.logical_boundary_unix_nanos,
            tick.authority_utc_unix_nanos,
            tick.serving_logical_unix_nanos
        ),
        (big, big, i64::MIN, -1, i64::MAX)
    );
    let ClockEvent::Changed { clock, .. } = &events[0] else {
        panic!()
    };
    assert_eq!(clock.generation, big);
}

#[test]
fn k_5_after_a_loss_clocks_are_attached_again_first_and_the_frontier_is_cleared() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 9));
    let _ = drain(&mut r);
    r.c.select_domain(Some("d1")).unwrap();
    r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION s AS SELECT 1")
        .unwrap();
    r.exec("SHOW DOMAINS;");
    // The clock alone is enough to open the next session.
    let s2 = lose(&mut r, sid);
    assert_eq!(requests(&r, s2)[0], ClientRequest::AttachDomainClockRequest);
    assert_eq!(shape(&drain(&mut r)), "d1:interrupted");
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Attaching);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_attached(rid, "d1", paced(3)));
    // The new attachment's progress is accepted though it is behind the old frontier.
    r.feed(s2, clock_ticked("d1", 3, 2));
    assert_eq!(shape(&drain(&mut r)), "d1:attached#3 d1:tick#3.2");
}

#[test]
fn k_5_already_attached_keeps_the_clock_without_a_tick() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 9));
    let s2 = lose(&mut r, sid);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_already_attached(rid, "d1"));
    let info = r.c.clock("d1").unwrap();
    assert_eq!(info.status, ClockStatus::Attached);
    assert_eq!(info.clock.unwrap().generation, 3, "the clock last received");
    assert_eq!(info.tick, None);
    r.feed(s2, clock_ticked("d1", 3, 1));
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:interrupted d1:already d1:tick#3.1"
    );
}

#[test]
fn k_5_domain_not_found_on_a_new_session_ends_the_attachment() {
    let (mut r, sid) = attached_clock();
    let s2 = lose(&mut r, sid);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(
        s2,
        clock_attach_reply(
            rid,
            DomainClockAttachDispositionT::DomainNotFound(Box::new(DomainNotFoundT {
                domain: "d1".into(),
            })),
        ),
    );
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:interrupted d1:ended:DomainNotFound"
    );
    assert_eq!(r.c.poll_timeout(), None);
}

#[test]
fn k_5_a_refused_attach_stays_interrupted_and_goes_again_after_growing_waits() {
    let (mut r, sid) = attached_clock();
    let s2 = lose(&mut r, sid);
    let _ = drain(&mut r);
    let mut at = vec![r.now.as_nanos()];
    for _ in 0..4 {
        let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
        r.feed(
            s2,
            clock_attach_reply(
                rid,
                DomainClockAttachDispositionT::RequestFailed(Box::default()),
            ),
        );
        assert_eq!(shape(&drain(&mut r)), "d1:refused");
        assert!(r.c.follows_clock("d1"), "kept, not dropped");
        let before = requests(&r, s2).len();
        let t = r.c.poll_timeout().unwrap();
        r.now = t;
        r.c.handle_timeout(t);
        r.pump();
        assert_eq!(requests(&r, s2).len(), before + 1, "on that session");
        at.push(t.as_nanos());
    }
    let waits: Vec<u64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    for w in waits.windows(2) {
        assert!(w[1] > w[0], "{waits:?}");
    }
}

#[test]
fn k_5_an_attach_left_unanswered_ends_the_session_and_another_is_opened() {
    let (mut r, sid) = attached_clock();
    let s2 = lose(&mut r, sid);
    r.advance(Duration::from_secs(31));
    assert!(r.closes.iter().any(|(s, _)| *s == s2));
    let at = r.c.poll_timeout().expect("a new session is due");
    r.now = at;
    r.c.handle_timeout(at);
    let s3 = r.open();
    assert_eq!(
        requests(&r, s3),
        vec![ClientRequest::AttachDomainClockRequest]
    );
}

#[test]
fn k_5_a_move_to_another_session_keeps_the_newest_tick_without_a_gap() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 7));
    let _ = drain(&mut r);
    // A command is redirected to the leader: the client leaves this session for another.
    let h = r.exec("CREATE RELAY a;");
    let (cid, cmd) = r.last_command();
    r.feed(
        sid,
        outcome(
            cid,
            &cmd.execution_reference,
            CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
                leader: Some(Box::new(LeaderEndpointsT {
                    node: "node-2".into(),
                    grpc_uri: Some("https://node-2:7443/".into()),
                    web_console_uri: None,
                })),
            })),
        ),
    );
    let s2 = r.open();
    assert_ne!(s2, sid);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_attached(rid, "d1", paced(3)));
    assert_eq!(r.c.clock("d1").unwrap().tick.unwrap().tick_id.get(), 7);
    r.feed(s2, clock_ticked("d1", 3, 6));
    r.feed(s2, clock_ticked("d1", 3, 7));
    r.feed(s2, clock_ticked("d1", 3, 8));
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:interrupted d1:attached#3 d1:tick#3.8"
    );
    let _ = h;
}

#[test]
fn l_3_clock_calls_made_before_begin_go_before_it_and_never_while_it_is_held() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    r.c.follow_clock(r.now, "d1").unwrap();
    r.exec("BEGIN;");
    let sid = r.open();
    assert_eq!(
        requests(&r, sid),
        vec![
            ClientRequest::AttachDomainClockRequest,
            ClientRequest::CommandRequest
        ]
    );
    bind_transaction(&mut r, sid);
    // The attach is refused: its retry waits while the transaction is held.
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, rejected(rid, RequestRejection::ServerBusy));
    r.advance(Duration::from_secs(10));
    assert_eq!(
        requests(&r, sid)
            .iter()
            .filter(|k| **k == ClientRequest::AttachDomainClockRequest)
            .count(),
        1
    );
    assert_eq!(
        r.c.detach_clock(r.now, "d1").unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(
        r.c.follow_clock(r.now, "d2").unwrap_err(),
        ClientError::InTransaction
    );
}

/// `d1`'s attach out on a fresh session with a detach decided behind it.
fn detach_behind_attach() -> (Rig, SessionId, u64) {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    assert_eq!(
        requests(&r, sid),
        vec![
            ClientRequest::AttachDomainClockRequest,
            ClientRequest::DetachDomainClockRequest
        ]
    );
    let (aid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    (r, sid, aid)
}

#[test]
fn k_1_an_attach_answered_with_a_detach_behind_it_is_applied() {
    let (mut r, sid, aid) = detach_behind_attach();
    r.feed(sid, clock_attached(aid, "d1", paced(4)));
    r.feed(sid, clock_ticked("d1", 4, 2));
    // The application asked to stop: nothing is told, but the clock is applied.
    assert!(drain(&mut r).is_empty());
    assert_eq!(
        requests(&r, sid)
            .iter()
            .filter(|k| **k == ClientRequest::DetachDomainClockRequest)
            .count(),
        1,
        "the detach goes once"
    );
    let info = r.c.clock("d1").unwrap();
    assert_eq!(info.status, ClockStatus::Detaching);
    assert_eq!(info.clock.unwrap().generation, 4);
    assert_eq!(info.tick.unwrap().tick_id.get(), 2);
    assert_eq!(r.c.ignored_clock_frames(), 0, "the tick was applied");
    // The detach is refused: the clock stands as the attach left it, and is told so.
    detach_disposition(
        &mut r,
        sid,
        DomainClockDetachDispositionT::RequestFailed(Box::default()),
    );
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:detach-refused d1:attached#4 d1:tick#4.2"
    );
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Attached);
    assert!(r.c.follows_clock("d1"));
    r.feed(sid, clock_ticked("d1", 4, 2));
    r.feed(sid, clock_ticked("d1", 4, 3));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#4.3", "the frontier held");
}

#[test]
fn k_1_an_attach_answered_domain_not_found_ends_it_though_the_detach_behind_is_refused() {
    for (disposition, want) in [
        (
            DomainClockAttachDispositionT::DomainNotFound(Box::new(DomainNotFoundT {
                domain: "d1".into(),
            })),
            "d1:detach-refused d1:ended:DomainNotFound",
        ),
        (
            DomainClockAttachDispositionT::RequestFailed(Box::default()),
            "d1:detach-refused d1:ended:Refused { message: \"as asked\" }",
        ),
    ] {
        let (mut r, sid, aid) = detach_behind_attach();
        r.feed(sid, clock_attach_reply(aid, disposition));
        // Still waiting for the detach: no attach of the domain is decided meanwhile.
        assert_eq!(
            r.c.follow_clock(r.now, "d1").unwrap_err(),
            ClientError::DetachInProgress
        );
        detach_disposition(
            &mut r,
            sid,
            DomainClockDetachDispositionT::RequestFailed(Box::default()),
        );
        assert_eq!(shape(&drain(&mut r)), want);
        assert!(!r.c.follows_clock("d1"), "{want}");
        assert!(r.c.clock("d1").is_none(), "{want}");
        assert_eq!(r.c.poll_timeout(), None, "never attached again: {want}");
        r.feed(sid, clock_ticked("d1", 4, 1));
        assert!(drain(&mut r).is_empty());
    }
}

#[test]
fn k_1_a_detach_cancelled_before_admission_leaves_the_clock_followed() {
    let (mut r, sid) = attached_clock();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::DetachDomainClockRequest);
    r.feed(
        sid,
        reply(
            rid,
            ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
                stage: Some(CancellationStage::BeforeAdmission),
            })),
        ),
    );
    assert_eq!(shape(&drain(&mut r)), "d1:detach-refused");
    assert!(r.c.follows_clock("d1"));
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Attached);
    r.feed(sid, clock_ticked("d1", 3, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#3.1");
}

#[test]
fn k_1_an_attach_reply_naming_another_domain_is_a_violation_and_applies_nothing() {
    for wrong in [
        clock_attached as fn(u64, &str, DomainClockObservationT) -> bytes::Bytes,
        |rid, d, _| clock_already_attached(rid, d),
        |rid, d, _| {
            clock_attach_reply(
                rid,
                DomainClockAttachDispositionT::DomainNotFound(Box::new(DomainNotFoundT {
                    domain: d.into(),
                })),
            )
        },
    ] {
        let mut r = Rig::new();
        r.c.follow_clock(r.now, "d1").unwrap();
        let sid = r.open();
        let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
        r.feed(sid, wrong(rid, "d2", paced(5)));
        assert!(r.closes.contains(&(sid, false)), "F-8: the session ends");
        assert!(r.events.iter().any(|e| matches!(
            e,
            ClientEvent::SessionLost {
                loss: SessionLoss::Violation(v),
                ..
            } if v.rule() == "K-1"
        )));
        assert!(drain(&mut r).is_empty(), "nothing of the reply is told");
        let info = r.c.clock("d1").expect("still followed");
        assert_eq!(info.status, ClockStatus::Waiting);
        assert_eq!(info.clock, None);
        assert!(r.c.clock("d2").is_none());
        // Attached again on the next session.
        let at = r.c.poll_timeout().unwrap();
        r.now = at;
        r.c.handle_timeout(at);
        let s2 = r.open();
        assert_eq!(
            requests(&r, s2),
            vec![ClientRequest::AttachDomainClockRequest]
        );
    }
}

#[test]
fn k_1_a_detach_reply_naming_another_domain_is_a_violation() {
    let (mut r, sid) = attached_clock();
    r.c.detach_clock(r.now, "d1").unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::DetachDomainClockRequest);
    r.feed(
        sid,
        clock_detach_reply(
            rid,
            DomainClockDetachDispositionT::DomainClockDetached(Box::new(DomainClockDetachedT {
                domain: "d2".into(),
            })),
        ),
    );
    assert!(r.closes.contains(&(sid, false)));
    assert!(r.events.iter().any(|e| matches!(
        e,
        ClientEvent::SessionLost {
            loss: SessionLoss::Violation(v),
            ..
        } if v.rule() == "K-1"
    )));
}

#[test]
fn k_3_coalescing_keeps_the_order_and_the_last_event_agrees_with_the_state() {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, clock_attached(rid, "d1", paced(3)));
    // Nothing read yet; the session is lost and the clock attached again.
    let s2 = lose(&mut r, sid);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_attached(rid, "d1", paced(4)));
    r.feed(s2, clock_ticked("d1", 4, 1));
    r.feed(s2, clock_observed("d1", paced(5)));
    r.feed(s2, clock_ticked("d1", 5, 1));
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:interrupted d1:attached#4 d1:changed#5 d1:tick#5.1"
    );
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Attached);
    // Lost again before the application reads: the interruption is the newest news.
    r.feed(s2, clock_ticked("d1", 5, 2));
    let s3 = lose(&mut r, s2);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s3, clock_attached(rid, "d1", paced(6)));
    let _ = s3;
    r.c.handle_closed(r.now, s3);
    r.pump();
    let events = drain(&mut r);
    assert_eq!(shape(&events), "d1:attached#6 d1:interrupted");
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Waiting);
}

#[test]
fn k_5_already_attached_after_a_move_keeps_no_tick() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 7));
    let _ = drain(&mut r);
    r.exec("CREATE RELAY a;");
    let (cid, cmd) = r.last_command();
    r.feed(
        sid,
        outcome(
            cid,
            &cmd.execution_reference,
            CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
                leader: Some(Box::new(LeaderEndpointsT {
                    node: "node-2".into(),
                    grpc_uri: Some("https://node-2:7443/".into()),
                    web_console_uri: None,
                })),
            })),
        ),
    );
    let s2 = r.open();
    assert_ne!(s2, sid);
    assert_eq!(
        r.c.clock("d1").unwrap().tick.unwrap().tick_id.get(),
        7,
        "the move kept the tick"
    );
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_already_attached(rid, "d1"));
    let info = r.c.clock("d1").unwrap();
    assert_eq!(
        info.tick, None,
        "AlreadyAttached keeps the clock without a tick"
    );
    assert_eq!(info.clock.unwrap().generation, 3);
    // Progress behind the old frontier is accepted from the holding session.
    r.feed(s2, clock_ticked("d1", 3, 2));
    assert_eq!(
        shape(&drain(&mut r)),
        "d1:interrupted d1:already d1:tick#3.2"
    );
}

#[test]
fn k_5_an_attach_refused_busy_is_kept_and_sent_again_after_a_wait() {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, rejected(rid, RequestRejection::ServerBusy));
    assert!(r.c.follows_clock("d1"), "a busy server ends nothing");
    assert_eq!(r.c.clock("d1").unwrap().status, ClockStatus::Waiting);
    let at = r.c.poll_timeout().expect("sent again later");
    assert!(at > r.now);
    r.now = at;
    r.c.handle_timeout(at);
    r.pump();
    assert_eq!(
        requests(&r, sid),
        vec![
            ClientRequest::AttachDomainClockRequest,
            ClientRequest::AttachDomainClockRequest
        ]
    );
}

#[test]
fn k_2_an_attachment_end_before_the_attach_reply_is_ignored() {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, clock_attachment_ended("d1"));
    assert_eq!(r.c.ignored_clock_frames(), 1);
    assert!(r.c.follows_clock("d1"));
    r.feed(sid, clock_attached(rid, "d1", paced(2)));
    assert_eq!(shape(&drain(&mut r)), "d1:attached#2");
}

#[test]
fn k_2_no_frame_about_an_unfollowed_domain_or_an_ended_attachment_is_applied() {
    let (mut r, sid) = attached_clock();
    let ignored = r.c.ignored_clock_frames();
    // Every kind of frame about a domain the client does not follow.
    r.feed(sid, clock_observed("d9", paced(5)));
    r.feed(sid, clock_ticked("d9", 5, 1));
    r.feed(sid, clock_attachment_ended("d9"));
    assert_eq!(r.c.ignored_clock_frames(), ignored + 3);
    assert!(drain(&mut r).is_empty());
    assert!(!r.c.follows_clock("d9") && r.c.clock("d9").is_none());
    let d1 = r.c.clock("d1").unwrap();
    assert_eq!(
        (d1.clock.unwrap().generation, d1.tick),
        (3, None),
        "d1 untouched"
    );
    // The attachment's end is its last frame: no state, tick or end after it applies.
    r.feed(sid, clock_ticked("d1", 3, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#3.1");
    r.feed(sid, clock_attachment_ended("d1"));
    assert_eq!(shape(&drain(&mut r)), "d1:ended:DomainRemoved");
    let ignored = r.c.ignored_clock_frames();
    r.feed(sid, clock_observed("d1", paced(4)));
    r.feed(sid, clock_ticked("d1", 4, 1));
    r.feed(sid, clock_ticked("d1", 3, 2));
    r.feed(sid, clock_attachment_ended("d1"));
    assert_eq!(r.c.ignored_clock_frames(), ignored + 4);
    assert!(drain(&mut r).is_empty());
    assert!(!r.c.follows_clock("d1") && r.c.clock("d1").is_none());
    // Following it again is a new attachment: nothing applies before its attach reply, and
    // nothing of the ended one comes back.
    r.c.follow_clock(r.now, "d1").unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, clock_ticked("d1", 3, 3));
    r.feed(sid, clock_observed("d1", paced(6)));
    assert!(drain(&mut r).is_empty());
    r.feed(sid, clock_attached(rid, "d1", paced(6)));
    assert_eq!(shape(&drain(&mut r)), "d1:attached#6");
    assert_eq!(r.c.clock("d1").unwrap().tick, None);
}

#[test]
fn k_5_a_clock_changed_while_the_session_was_lost_is_taken_from_the_new_attach_reply() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 7));
    let _ = drain(&mut r);
    let s2 = lose(&mut r, sid);
    assert_eq!(shape(&drain(&mut r)), "d1:interrupted");
    assert_eq!(r.c.clock("d1").unwrap().tick, None, "no tick is assumed");
    // Frames of the new session before its attach reply are not taken as what happened.
    r.feed(s2, clock_ticked("d1", 3, 8));
    r.feed(s2, clock_observed("d1", paced(4)));
    assert!(drain(&mut r).is_empty());
    // The domain moved on to generation 5 in between: the reply's clock is the clock.
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_attached(rid, "d1", paced(5)));
    assert_eq!(shape(&drain(&mut r)), "d1:attached#5");
    assert_eq!(r.c.clock("d1").unwrap().clock.unwrap().generation, 5);
    // A tick of the generation it had before the loss no longer stands; the new one's do.
    r.feed(s2, clock_ticked("d1", 3, 9));
    assert!(drain(&mut r).is_empty(), "the old generation's tick");
    r.feed(s2, clock_ticked("d1", 5, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#5.1");
}

#[test]
fn k_5_after_already_attached_the_clock_is_read_from_that_sessions_later_frames() {
    let (mut r, sid) = attached_clock();
    let s2 = lose(&mut r, sid);
    let (rid, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(s2, clock_already_attached(rid, "d1"));
    assert_eq!(shape(&drain(&mut r)), "d1:interrupted d1:already");
    // That session's later state is the clock: a new generation, then its ticks.
    r.feed(s2, clock_observed("d1", paced(4)));
    r.feed(s2, clock_ticked("d1", 3, 1));
    r.feed(s2, clock_ticked("d1", 4, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:changed#4 d1:tick#4.1");
    let info = r.c.clock("d1").unwrap();
    assert_eq!(info.status, ClockStatus::Attached);
    assert_eq!(info.clock.unwrap().generation, 4);
    // Frames of the lost session are not that session's.
    r.feed(sid, clock_observed("d1", paced(6)));
    r.feed(sid, clock_ticked("d1", 4, 2));
    assert!(drain(&mut r).is_empty());
    assert_eq!(r.c.clock("d1").unwrap().clock.unwrap().generation, 4);
}

#[test]
fn k_5_an_unanswered_attach_ends_its_session_only_once_the_request_timeout_passed() {
    let (mut r, sid) = attached_clock();
    let s2 = lose(&mut r, sid);
    assert!(requests(&r, s2).contains(&ClientRequest::AttachDomainClockRequest));
    // The request timeout is 30 seconds: not a moment before it.
    r.advance(Duration::from_millis(29_999));
    assert!(
        !r.closes.iter().any(|(s, _)| *s == s2),
        "the session is kept while the attach may still be answered"
    );
    r.advance(Duration::from_millis(1));
    r.advance(Duration::from_millis(1));
    assert!(r.closes.iter().any(|(s, _)| *s == s2), "ended past it");
    // And the client opens the next session itself: the clock attaches there.
    let at = r.c.poll_timeout().expect("a new session is due");
    assert!(at <= r.now + Duration::from_secs(6), "within a back-off");
    r.now = at;
    r.c.handle_timeout(at);
    let s3 = r.open();
    assert_eq!(
        requests(&r, s3),
        vec![ClientRequest::AttachDomainClockRequest]
    );
}

#[test]
fn k_3_a_new_paced_generation_clears_the_older_generations_tick_and_its_own_keeps_it() {
    let (mut r, sid) = attached_clock();
    r.feed(sid, clock_ticked("d1", 3, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#3.1");
    // The same generation observed again (still paced): its tick stands, read or not, and
    // the frontier still holds.
    r.feed(sid, clock_ticked("d1", 3, 2));
    r.feed(sid, clock_observed("d1", paced(3)));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#3.2 d1:changed#3");
    assert_eq!(
        r.c.clock("d1").unwrap().tick.map(|t| t.tick_id.get()),
        Some(2)
    );
    r.feed(sid, clock_ticked("d1", 3, 2));
    assert!(drain(&mut r).is_empty(), "the frontier was kept");
    // A newer paced generation: the older generation's tick goes, read or unread.
    r.feed(sid, clock_ticked("d1", 3, 3));
    r.feed(sid, clock_observed("d1", paced(4)));
    assert_eq!(shape(&drain(&mut r)), "d1:changed#4");
    assert_eq!(r.c.clock("d1").unwrap().tick, None);
    // A late tick of the older generation is not applied against the newer one.
    r.feed(sid, clock_ticked("d1", 3, 9));
    assert!(drain(&mut r).is_empty());
    r.feed(sid, clock_ticked("d1", 4, 1));
    assert_eq!(shape(&drain(&mut r)), "d1:tick#4.1");
}
