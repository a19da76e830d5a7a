//! The tokio driver end to end over real sockets on 127.0.0.1, against the loopback cluster:
//! one test (at least) per transport rule, redirects across real sockets, a node killed
//! mid-call, credentials that break careless encoders, and an oversized frame from the server.
//! The scenarios are written once in `nervix-driver-tests`, for both drivers; the framing of
//! gRPC messages is checked here. Every test is bounded.

nervix_driver_tests::loopback_tests!(tokio);

#[test]
fn t_1_grpc_messages_are_uncompressed_and_limited_to_the_frame_limit() {
    let m = nervix_tokio::grpc_message(b"NXCM....");
    assert_eq!(
        &m[..5],
        &[0, 0, 0, 0, 8],
        "flag 0 (uncompressed), then the length"
    );
    let mut r = nervix_tokio::MessageReader::default();
    let limit = nervix_protocol::limits::FRAME_LIMIT;
    let mut at = vec![0u8];
    at.extend_from_slice(&(limit as u32).to_be_bytes());
    r.push(&at);
    assert_eq!(r.next_message(), Ok(None), "exactly the limit is read on");
    let mut over = nervix_tokio::MessageReader::default();
    let mut big = vec![0u8];
    big.extend_from_slice(&(limit as u32 + 1).to_be_bytes());
    over.push(&big);
    assert_eq!(
        over.next_message(),
        Err(nervix_tokio::MessageError::TooLarge(limit + 1)),
        "one byte more is refused before it is read"
    );
    let mut z = nervix_tokio::MessageReader::default();
    z.push(&[1, 0, 0, 0, 1, 7]);
    assert_eq!(
        z.next_message(),
        Err(nervix_tokio::MessageError::Compressed)
    );
}
