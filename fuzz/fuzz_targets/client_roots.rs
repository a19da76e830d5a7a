//! Arbitrary bytes as one of the four frames a client sends, chosen by the first byte:
//! `ClientMessage` (NXCM), `UploadMessage` (NXUM), `BackupDownloadRequest` (NXBQ) or
//! `RestoreMessage` (NXRM). The rest of the input is the frame. Checked reading refuses or
//! accepts without panicking; an accepted frame is read through every accessor.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_fuzz::read_frame;
use nervix_protocol::frame::{
    BackupDownloadRequestRoot, ClientMessageRoot, RestoreMessageRoot, UploadMessageRoot,
};

fuzz_target!(|data: &[u8]| {
    let Some((&which, frame)) = data.split_first() else {
        return;
    };
    match which % 4 {
        0 => read_frame::<ClientMessageRoot>(frame),
        1 => read_frame::<UploadMessageRoot>(frame),
        2 => read_frame::<BackupDownloadRequestRoot>(frame),
        _ => read_frame::<RestoreMessageRoot>(frame),
    }
});
