//! The upgrade request and response (SF-W1 to SF-W3, SF-16).

use sf_journal::upgrade::{check_response, Negotiated, UpgradeError, UpgradeRequest, WRITE_PATH};

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn sf_w1_the_request_names_the_path_and_the_qwp_headers() {
    assert_eq!(WRITE_PATH, "/api/v4/write");
    let plain = UpgradeRequest::default().headers();
    assert_eq!(
        plain,
        h(&[("X-QWP-Max-Version", "1")]),
        "no client id unless configured"
    );
    let full = UpgradeRequest {
        client_id: Some("c1".into()),
        durable_ack: true,
        authorization: Some("Bearer t".into()),
    }
    .headers();
    assert_eq!(
        full,
        h(&[
            ("X-QWP-Max-Version", "1"),
            ("X-QWP-Client-Id", "c1"),
            ("X-QWP-Request-Durable-Ack", "true"),
            ("Authorization", "Bearer t"),
        ])
    );
}

#[test]
fn sf_w2_an_absent_version_is_1_and_0_or_above_ours_is_refused() {
    let req = UpgradeRequest::default();
    assert_eq!(
        check_response(101, &[], &req),
        Ok(Negotiated {
            version: 1,
            max_batch_size: 0,
            durable_ack: false
        })
    );
    assert_eq!(
        check_response(101, &h(&[("x-qwp-version", "1")]), &req)
            .unwrap()
            .version,
        1
    );
    for bad in ["0", "2", "x", "-1"] {
        assert_eq!(
            check_response(101, &h(&[("X-QWP-Version", bad)]), &req),
            Err(UpgradeError::Version(bad.into()))
        );
    }
}

#[test]
fn sf_w2_the_batch_size_is_read_and_an_absent_or_bad_one_is_0() {
    let req = UpgradeRequest::default();
    let n = |v: &str| {
        check_response(101, &h(&[("X-QWP-Max-Batch-Size", v)]), &req)
            .unwrap()
            .max_batch_size
    };
    assert_eq!(n("1048576"), 1_048_576);
    assert_eq!(n("lots"), 0);
    assert_eq!(n("-5"), 0);
}

#[test]
fn sf_w3_401_and_403_are_auth_errors_421_with_role_or_zone_a_role_mismatch_others_refused() {
    let req = UpgradeRequest::default();
    assert_eq!(check_response(401, &[], &req), Err(UpgradeError::Auth(401)));
    assert_eq!(check_response(403, &[], &req), Err(UpgradeError::Auth(403)));
    assert_eq!(
        check_response(421, &h(&[("X-QuestDB-Role", "replica")]), &req),
        Err(UpgradeError::RoleMismatch {
            role: Some("replica".into()),
            zone: None
        })
    );
    assert_eq!(
        check_response(421, &h(&[("X-QuestDB-Zone", "eu")]), &req),
        Err(UpgradeError::RoleMismatch {
            role: None,
            zone: Some("eu".into())
        })
    );
    assert_eq!(
        check_response(421, &[], &req),
        Err(UpgradeError::Refused(421))
    );
    assert_eq!(
        check_response(200, &[], &req),
        Err(UpgradeError::Refused(200))
    );
    assert_eq!(
        check_response(500, &[], &req),
        Err(UpgradeError::Refused(500))
    );
}

#[test]
fn sf_16_durable_ack_requested_needs_the_enabled_echo() {
    let req = UpgradeRequest {
        durable_ack: true,
        ..UpgradeRequest::default()
    };
    assert_eq!(
        check_response(101, &[], &req),
        Err(UpgradeError::DurableAckUnavailable)
    );
    assert_eq!(
        check_response(101, &h(&[("X-QWP-Durable-Ack", "disabled")]), &req),
        Err(UpgradeError::DurableAckUnavailable)
    );
    let ok = check_response(101, &h(&[("X-QWP-Durable-Ack", "enabled")]), &req).unwrap();
    assert!(ok.durable_ack);
    // Not requested: the echo is noted, not needed.
    let plain = UpgradeRequest::default();
    assert!(!check_response(101, &[], &plain).unwrap().durable_ack);
}
