//! What every driver's configuration checks the same way: its seeds, each a T-2 server
//! address, at least one of them; credentials that can be presented as given (T-4); and TLS
//! roots whenever a seed is https (T-2). [`ConfigError`] says which check failed.

use crate::credentials::{Credentials, CredentialsError};
use nervix_protocol::client::ClientConfig;
use nervix_protocol::endpoint::Endpoint;

/// Why a configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A seed is not a server address (T-2).
    #[error("seed `{seed}` is not a server address: {why}")]
    Seed {
        /// The seed as given.
        seed: String,
        /// Why.
        why: String,
    },
    /// No seed at all.
    #[error("no seed endpoint")]
    NoSeed,
    /// An https seed and no TLS roots to verify it with.
    #[error("https seeds need TLS roots")]
    NoRoots,
    /// The credentials cannot be presented as given: a user name holding `:` would be sent
    /// as another identity (T-4).
    #[error("credentials: {0}")]
    Credentials(#[from] CredentialsError),
}

/// The endpoints of `seeds`, in their order: the first that is not a server address is
/// named (T-2), and no seed at all is [`ConfigError::NoSeed`].
pub fn parse_seeds(seeds: &[&str]) -> Result<Vec<Endpoint>, ConfigError> {
    let mut parsed = Vec::with_capacity(seeds.len());
    for s in seeds {
        parsed.push(Endpoint::parse(s).map_err(|e| ConfigError::Seed {
            seed: (*s).to_string(),
            why: e.to_string(),
        })?);
    }
    if parsed.is_empty() {
        return Err(ConfigError::NoSeed);
    }
    Ok(parsed)
}

/// Whether a configuration of `seeds`, `credentials` and TLS roots (`has_roots`) can be
/// used: some seed, credentials that can be presented (T-4), and roots when any seed is
/// https (T-2); checked in that order.
pub fn check(
    seeds: &[Endpoint],
    credentials: &Credentials,
    has_roots: bool,
) -> Result<(), ConfigError> {
    if seeds.is_empty() {
        return Err(ConfigError::NoSeed);
    }
    credentials.check()?;
    if seeds.iter().any(Endpoint::is_https) && !has_roots {
        return Err(ConfigError::NoRoots);
    }
    Ok(())
}

/// The seed of the engine's randomness in a new configuration: the nanoseconds since the
/// Unix epoch on the system clock (0 before it).
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The engine's configuration of a new driver configuration: `seeds` checked as T-2 server
/// addresses, `credentials` checked as presentable (T-4), and the engine's randomness
/// seeded from the clock.
pub fn client(seeds: &[&str], credentials: &Credentials) -> Result<ClientConfig, ConfigError> {
    let parsed = parse_seeds(seeds)?;
    credentials.check()?;
    Ok(ClientConfig::new(parsed, clock_seed()))
}

/// A trusted root certificate, as the drivers' configurations hold them.
#[doc(no_inline)]
pub use rustls_pki_types::CertificateDer;

/// The builder methods and the check every driver's `Config` has alike, written once for a
/// configuration type with the fields `client` (the engine's [`ClientConfig`]),
/// `credentials`, `roots` (of [`CertificateDer`]), `resolver`
/// ([`Resolver`](crate::resolve::Resolver)) and `write_timeout`, and with the driver's own
/// feature `journal` on, `journal` (an `Option` of
/// [`JournalConfig`](crate::journal::JournalConfig)).
#[macro_export]
macro_rules! config_builders {
    ($config:ty) => {
        impl $config {
            /// Looks host names up with `resolver` instead of the system's (T-2).
            pub fn with_resolver(mut self, resolver: impl $crate::resolve::Resolve) -> Self {
                self.resolver = $crate::resolve::Resolver::new(resolver);
                self
            }

            /// Adds a trusted root certificate (DER).
            pub fn with_root(mut self, der: impl Into<Vec<u8>>) -> Self {
                self.roots
                    .push($crate::config::CertificateDer::from(der.into()));
                self
            }

            /// Sets the deadline of a call that names none (D-4) and of opening a session.
            pub fn with_timeouts(
                mut self,
                call: ::std::time::Duration,
                connect: ::std::time::Duration,
            ) -> Self {
                self.client.call_timeout = call;
                self.client.connect_timeout = connect;
                self
            }

            /// Journals every command in the slot `journal` names (feature `journal`) before
            /// any frame of it is sent, so its outcome can be recovered after the process
            /// crashed: the next client started on the slot hands what it found to
            /// `Client::recovery`. One client holds a slot at a time; a second is refused
            /// naming the holder.
            ///
            /// Producers run in outbox mode then: a submission returns once its batch is
            /// journaled (the producer never waits for the wire, SF-2) and the batch goes when
            /// credit allows, its outcome still coming to its handle. Its record is marked
            /// handed just before its frame reaches the transport and ends at its outcome;
            /// after a crash a batch handed without an outcome is reported of unknown outcome
            /// and never sent again (P-8), and one never handed is returned to be submitted
            /// again. A full journal refuses the submission naming whether the wire is
            /// publishing or reconnecting (SF-23, SF-24); nothing is queued then.
            #[cfg(feature = "journal")]
            pub fn with_journal(mut self, journal: $crate::journal::JournalConfig) -> Self {
                self.journal = Some(journal);
                self
            }

            /// Where and how the separate calls of this configuration are made, once it is
            /// checked; `None` when it names no seed.
            #[allow(dead_code)]
            pub(crate) fn call_setup(
                &self,
            ) -> Result<Option<$crate::transfer::CallSetup>, $crate::config::ConfigError> {
                self.check()?;
                Ok($crate::transfer::CallSetup::new(
                    &self.client,
                    &self.credentials,
                    self.write_timeout,
                ))
            }

            /// Whether the configuration can be used (see [`check`]).
            ///
            /// [`check`]: $crate::config::check
            pub(crate) fn check(&self) -> Result<(), $crate::config::ConfigError> {
                $crate::config::check(
                    &self.client.seeds,
                    &self.credentials,
                    !self.roots.is_empty(),
                )
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap()
    }

    fn user() -> Credentials {
        Credentials::new("ann", "pw")
    }

    #[test]
    fn t_2_seeds_are_server_addresses_in_their_order_and_the_first_bad_one_is_named() {
        assert_eq!(
            parse_seeds(&["https://b:2/", "http://a:1"]).unwrap(),
            [ep("https://b:2/"), ep("http://a:1")]
        );
        let Err(ConfigError::Seed { seed, why }) = parse_seeds(&["http://a:1", "a b", "also bad"])
        else {
            panic!("a seed that is no address is refused");
        };
        assert_eq!(seed, "a b");
        assert!(!why.is_empty());
        assert_eq!(parse_seeds(&[]), Err(ConfigError::NoSeed));
    }

    #[test]
    fn t_2_an_https_seed_needs_roots_and_an_http_one_does_not() {
        let https = [ep("http://a:1/"), ep("https://b:2/")];
        assert_eq!(check(&https, &user(), false), Err(ConfigError::NoRoots));
        assert_eq!(check(&https, &user(), true), Ok(()));
        assert_eq!(check(&[ep("http://a:1/")], &user(), false), Ok(()));
        assert_eq!(check(&[], &user(), true), Err(ConfigError::NoSeed));
    }

    #[test]
    fn e_1_the_engine_is_seeded_with_the_nanoseconds_of_the_system_clock() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let seed = clock_seed();
        let after = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        assert!(before <= seed && seed <= after, "{before} {seed} {after}");
    }

    #[test]
    fn t_4_credentials_that_cannot_be_presented_as_given_are_refused_before_roots() {
        let colon = Credentials::new("a:b", "pw");
        assert_eq!(
            check(&[ep("https://b:2/")], &colon, false),
            Err(ConfigError::Credentials(CredentialsError::ColonInUser))
        );
        assert_eq!(check(&[], &colon, false), Err(ConfigError::NoSeed));
    }
}
