//! Property tests: every value the generators draw (all obeying the schema) is written by the
//! checked encoder, accepted by the checked reader, and reads back bit for bit, for every root
//! (F-1, F-5, R-5's float bits included).

use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::*;
use nervix_protocol::testkit::{Gen, Generate};
use nervix_protocol::Root;
use proptest::prelude::*;

fn round_trip<R: Root>(seed: &[u8])
where
    R::Owned: Generate,
{
    let value: R::Owned = Gen::new(seed).value();
    let mut enc = Encoder::new();
    let bytes = enc
        .encode::<R>(&value)
        .expect("generated values obey the schema");
    assert_eq!(
        &bytes[4..8],
        &R::IDENTIFIER,
        "finished with the root's identifier"
    );
    let frame = Frame::<R>::check(bytes.clone()).expect("checked reading accepts what we wrote");
    let back = frame.unpack();
    let again = enc
        .encode::<R>(&back)
        .expect("read-back values obey the schema");
    assert_eq!(bytes, again, "reading and writing again changes no bit");
    let report = frame.report();
    assert_eq!(report, Frame::<R>::check(again).unwrap().report());
}

proptest! {
    // 256 cases, or PROPTEST_CASES (`just soak` runs many more).
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn f_1_client_message_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..4096)) {
        round_trip::<ClientMessageRoot>(&seed);
    }

    #[test]
    fn f_1_server_message_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..4096)) {
        round_trip::<ServerMessageRoot>(&seed);
    }

    #[test]
    fn f_1_upload_message_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..1024)) {
        round_trip::<UploadMessageRoot>(&seed);
    }

    #[test]
    fn f_1_upload_reply_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..1024)) {
        round_trip::<UploadReplyRoot>(&seed);
    }

    #[test]
    fn f_1_backup_download_request_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..256)) {
        round_trip::<BackupDownloadRequestRoot>(&seed);
    }

    #[test]
    fn f_1_backup_download_message_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..1024)) {
        round_trip::<BackupDownloadMessageRoot>(&seed);
    }

    #[test]
    fn f_1_restore_message_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..1024)) {
        round_trip::<RestoreMessageRoot>(&seed);
    }

    #[test]
    fn f_1_restore_reply_round_trip(seed in proptest::collection::vec(any::<u8>(), 0..4096)) {
        round_trip::<RestoreReplyRoot>(&seed);
    }
}
