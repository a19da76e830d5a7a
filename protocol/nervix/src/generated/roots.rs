/// The frame root `ClientMessage`, file identifier `NXCM`, declared in `schema/client_message.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMessageRoot {}
impl Root for ClientMessageRoot {
    type View<'a> = ClientMessage<'a>;
    type Owned = ClientMessageT;
    const IDENTIFIER: [u8; 4] = *b"NXCM";
    const NAME: &'static str = "ClientMessage";
    const EXTENSION: &'static str = "nxcm";
    #[inline]
    fn finish(owned: &ClientMessageT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXCM"));
    }
    fn unpack(view: &ClientMessage<'_>) -> ClientMessageT {
        view.unpack()
    }
}
/// The frame root `ServerMessage`, file identifier `NXSM`, declared in `schema/server_message.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerMessageRoot {}
impl Root for ServerMessageRoot {
    type View<'a> = ServerMessage<'a>;
    type Owned = ServerMessageT;
    const IDENTIFIER: [u8; 4] = *b"NXSM";
    const NAME: &'static str = "ServerMessage";
    const EXTENSION: &'static str = "nxsm";
    #[inline]
    fn finish(owned: &ServerMessageT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXSM"));
    }
    fn unpack(view: &ServerMessage<'_>) -> ServerMessageT {
        view.unpack()
    }
}
/// The frame root `UploadMessage`, file identifier `NXUM`, declared in `schema/upload_message.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadMessageRoot {}
impl Root for UploadMessageRoot {
    type View<'a> = UploadMessage<'a>;
    type Owned = UploadMessageT;
    const IDENTIFIER: [u8; 4] = *b"NXUM";
    const NAME: &'static str = "UploadMessage";
    const EXTENSION: &'static str = "nxum";
    #[inline]
    fn finish(owned: &UploadMessageT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXUM"));
    }
    fn unpack(view: &UploadMessage<'_>) -> UploadMessageT {
        view.unpack()
    }
}
/// The frame root `UploadReply`, file identifier `NXUR`, declared in `schema/upload_reply.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadReplyRoot {}
impl Root for UploadReplyRoot {
    type View<'a> = UploadReply<'a>;
    type Owned = UploadReplyT;
    const IDENTIFIER: [u8; 4] = *b"NXUR";
    const NAME: &'static str = "UploadReply";
    const EXTENSION: &'static str = "nxur";
    #[inline]
    fn finish(owned: &UploadReplyT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXUR"));
    }
    fn unpack(view: &UploadReply<'_>) -> UploadReplyT {
        view.unpack()
    }
}
/// The frame root `BackupDownloadRequest`, file identifier `NXBQ`, declared in `schema/backup_download_request.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackupDownloadRequestRoot {}
impl Root for BackupDownloadRequestRoot {
    type View<'a> = BackupDownloadRequest<'a>;
    type Owned = BackupDownloadRequestT;
    const IDENTIFIER: [u8; 4] = *b"NXBQ";
    const NAME: &'static str = "BackupDownloadRequest";
    const EXTENSION: &'static str = "nxbq";
    #[inline]
    fn finish(owned: &BackupDownloadRequestT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXBQ"));
    }
    fn unpack(view: &BackupDownloadRequest<'_>) -> BackupDownloadRequestT {
        view.unpack()
    }
}
/// The frame root `BackupDownloadMessage`, file identifier `NXBD`, declared in `schema/backup_download_message.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackupDownloadMessageRoot {}
impl Root for BackupDownloadMessageRoot {
    type View<'a> = BackupDownloadMessage<'a>;
    type Owned = BackupDownloadMessageT;
    const IDENTIFIER: [u8; 4] = *b"NXBD";
    const NAME: &'static str = "BackupDownloadMessage";
    const EXTENSION: &'static str = "nxbd";
    #[inline]
    fn finish(owned: &BackupDownloadMessageT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXBD"));
    }
    fn unpack(view: &BackupDownloadMessage<'_>) -> BackupDownloadMessageT {
        view.unpack()
    }
}
/// The frame root `RestoreMessage`, file identifier `NXRM`, declared in `schema/restore_message.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreMessageRoot {}
impl Root for RestoreMessageRoot {
    type View<'a> = RestoreMessage<'a>;
    type Owned = RestoreMessageT;
    const IDENTIFIER: [u8; 4] = *b"NXRM";
    const NAME: &'static str = "RestoreMessage";
    const EXTENSION: &'static str = "nxrm";
    #[inline]
    fn finish(owned: &RestoreMessageT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXRM"));
    }
    fn unpack(view: &RestoreMessage<'_>) -> RestoreMessageT {
        view.unpack()
    }
}
/// The frame root `RestoreReply`, file identifier `NXRR`, declared in `schema/restore_reply.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreReplyRoot {}
impl Root for RestoreReplyRoot {
    type View<'a> = RestoreReply<'a>;
    type Owned = RestoreReplyT;
    const IDENTIFIER: [u8; 4] = *b"NXRR";
    const NAME: &'static str = "RestoreReply";
    const EXTENSION: &'static str = "nxrr";
    #[inline]
    fn finish(owned: &RestoreReplyT, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {
        let root = owned.pack(fbb);
        fbb.finish(root, Some("NXRR"));
    }
    fn unpack(view: &RestoreReply<'_>) -> RestoreReplyT {
        view.unpack()
    }
}
/// Every frame root, for code that walks them all (corpus, fuzzing, reports).
pub const ROOT_EXTENSIONS: &[(&str, &str)] = &[
("nxcm", "ClientMessage"),
("nxsm", "ServerMessage"),
("nxum", "UploadMessage"),
("nxur", "UploadReply"),
("nxbq", "BackupDownloadRequest"),
("nxbd", "BackupDownloadMessage"),
("nxrm", "RestoreMessage"),
("nxrr", "RestoreReply"),
];
