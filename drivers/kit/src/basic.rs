//! HTTP Basic credentials as they go on the wire, and percent-encoding for a query.

use base64::Engine as _;

/// `base64(user:password)` of the UTF-8 text. The user name must hold no `:` for the server
/// to read it back: the caller checks that.
pub fn token(user: &str, password: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// The `Authorization` header value: `Basic base64(user:password)`.
pub fn header(user: &str, password: &str) -> String {
    format!("Basic {}", token(user, password))
}

/// Percent-encodes every byte but the RFC 3986 unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_base64_of_user_colon_password_and_a_query_value_is_percent_encoded() {
        assert_eq!(
            token("Aladdin", "open sesame"),
            "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(header("ann", "p:w"), "Basic YW5uOnA6dw==");
        assert_eq!(percent_encode("a+b/c=d~e_f.g-h"), "a%2Bb%2Fc%3Dd~e_f.g-h");
        assert_eq!(percent_encode("é"), "%C3%A9");
    }
}
