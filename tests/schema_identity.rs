//! The schema must stay declaration-identical to the server release the manual describes (F-1):
//! its declarations, with comments dropped and tokens joined by single spaces, hash to the
//! release's SHA-256. A changed member, order, type, default or attribute changes the hash;
//! comments and layout do not.

use nervix_conformance::workspace_root;
use sha2::{Digest, Sha256};

const RELEASE_DECLARATIONS_SHA256: &str =
    "529cac2c19fa45f56881f436d323749643c439fbee357ef15b46f927b4b14ec5";

fn tokens(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let chars: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || "_.".contains(chars[i]))
                {
                    i += 1;
                }
                out.push(chars[start..i].iter().collect());
            } else if c == '"' {
                let start = i;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += 1;
                }
                i += 1;
                out.push(chars[start..i.min(chars.len())].iter().collect());
            } else {
                out.push(c.to_string());
                i += 1;
            }
        }
    }
    out
}

fn declaration_digest(src: &str) -> String {
    let joined = tokens(src).join(" ");
    Sha256::digest(joined.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn f_1_schema_declarations_match_the_release() {
    let src = std::fs::read_to_string(workspace_root().join("schema/session.fbs")).unwrap();
    assert_eq!(declaration_digest(&src), RELEASE_DECLARATIONS_SHA256);
}

#[test]
fn f_1_declaration_digest_sees_member_order_and_ignores_comments() {
    let src = std::fs::read_to_string(workspace_root().join("schema/session.fbs")).unwrap();
    let recommented = src.replace("/// ", "/// Reworded: ");
    assert_eq!(
        declaration_digest(&recommented),
        RELEASE_DECLARATIONS_SHA256
    );
    let reordered = src.replacen("  start: uint;\n", "", 1).replacen(
        "  end: uint;\n",
        "  end: uint;\n  start: uint;\n",
        1,
    );
    assert_ne!(reordered, src);
    assert_ne!(declaration_digest(&reordered), RELEASE_DECLARATIONS_SHA256);
    let retyped = src.replacen("generation: ulong;", "generation: long;", 1);
    assert_ne!(declaration_digest(&retyped), RELEASE_DECLARATIONS_SHA256);
}

#[test]
fn f_2_root_files_name_their_roots_and_identifiers() {
    let expected = [
        ("client_message", "ClientMessage", "NXCM"),
        ("server_message", "ServerMessage", "NXSM"),
        ("upload_message", "UploadMessage", "NXUM"),
        ("upload_reply", "UploadReply", "NXUR"),
        ("backup_download_request", "BackupDownloadRequest", "NXBQ"),
        ("backup_download_message", "BackupDownloadMessage", "NXBD"),
        ("restore_message", "RestoreMessage", "NXRM"),
        ("restore_reply", "RestoreReply", "NXRR"),
    ];
    for (stem, root, id) in expected {
        let src =
            std::fs::read_to_string(workspace_root().join(format!("schema/{stem}.fbs"))).unwrap();
        let toks = tokens(&src);
        let after = |kw: &str| {
            toks.iter()
                .position(|t| t == kw)
                .map(|i| toks[i + 1].clone())
        };
        assert_eq!(after("root_type").as_deref(), Some(root), "{stem}.fbs");
        assert_eq!(
            after("file_identifier").as_deref(),
            Some(format!("\"{id}\"").as_str())
        );
        assert_eq!(
            after("include").as_deref(),
            Some("\"session.fbs\""),
            "{stem}.fbs"
        );
    }
}
