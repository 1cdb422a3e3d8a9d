//! Pulling a peer's current view of the pool (anti-entropy), on
//! `/starling/view/1`.
//!
//! A newcomer, or an agent back from a partition, asks a peer for the signed
//! ads it holds instead of waiting for the next refresh. The answer comes in
//! pages: each [`Response::Page`] holds signed-ad envelopes exactly as the
//! peer received them (the receiver opens each with [`crate::gossip::open`]
//! and its replay guard, as if gossiped) and a [`Cursor`] to ask for the next
//! page. The responder decides what to share: it may send a stranger less
//! than a member of its domain, which is why the request carries the
//! requester's certificates.

use serde::{Deserialize, Serialize};

use crate::gossip::{MAX_CERTIFICATES, MAX_SIGNED_AD_LEN};
use crate::identity::{Envelope, Kind};
use crate::wire::{self, envelope_list, Error, Message, Protocol};

/// Most ads one page may hold; a request asking for more gets this many.
pub const MAX_PAGE_ADS: u32 = 1024;

/// Largest response (4 MiB).
pub const MAX_RESPONSE_LEN: usize = 4 << 20;

/// Largest request (64 KiB: the kinds, cursor and certificates).
pub const MAX_REQUEST_LEN: usize = 64 << 10;

/// Longest cursor, in bytes.
pub const MAX_CURSOR_LEN: usize = 256;

/// Most kinds one request may name.
pub const MAX_KINDS: usize = 16;

/// Where the next page starts. Opaque to the requester: the responder writes
/// whatever lets it resume (typically the last signer and kind it sent).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Cursor(#[serde(with = "serde_bytes")] Vec<u8>);

impl Cursor {
    /// A cursor of at most [`MAX_CURSOR_LEN`] bytes.
    pub fn new(bytes: Vec<u8>) -> Result<Self, Error> {
        let cursor = Self(bytes);
        cursor.check()?;
        Ok(cursor)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    fn check(&self) -> Result<(), Error> {
        if self.0.len() > MAX_CURSOR_LEN {
            return Err(Error::Invalid {
                field: "cursor",
                reason: format!(
                    "{} bytes, more than the limit of {MAX_CURSOR_LEN}",
                    self.0.len()
                ),
            });
        }
        Ok(())
    }
}

/// A request for part of a peer's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Request {
    /// Send me a page of the signed ads you hold.
    Pull {
        /// Envelope kinds wanted (e.g. [`Kind::MACHINE_AD`]); empty means every
        /// kind of ad the responder shares.
        kinds: Vec<Kind>,
        /// Where to resume; `None` starts from the beginning.
        after: Option<Cursor>,
        /// Most ads wanted in this page; the responder sends at most
        /// `min(max, MAX_PAGE_ADS)` and may send fewer to stay under
        /// [`MAX_RESPONSE_LEN`].
        max: u32,
        /// The requester's domain certificates, so the responder can decide
        /// what to share with it.
        #[serde(default, with = "envelope_list")]
        certificates: Vec<Envelope>,
    },
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Response {
    /// One page of the view.
    Page {
        /// Signed ads as the responder received them, each at most
        /// [`MAX_SIGNED_AD_LEN`] bytes.
        #[serde(with = "envelope_list")]
        ads: Vec<Envelope>,
        /// Where the next page starts; `None` when this was the last.
        next: Option<Cursor>,
    },
    /// The responder will not answer now (rate limit, shutting down).
    Refused {
        /// Why, for logs.
        reason: String,
    },
}

impl Message for Request {
    const PROTOCOL: Protocol = Protocol::View;
    const NAME: &'static str = "view request";
    const MAX_LEN: usize = MAX_REQUEST_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Request::Pull {
                kinds,
                after,
                max: _,
                certificates,
            } => {
                wire::check_count("kind list", kinds, MAX_KINDS)?;
                wire::check_count("certificate list", certificates, MAX_CERTIFICATES)?;
                after.as_ref().map_or(Ok(()), Cursor::check)
            }
        }
    }
}

impl Message for Response {
    const PROTOCOL: Protocol = Protocol::View;
    const NAME: &'static str = "view response";
    const MAX_LEN: usize = MAX_RESPONSE_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Response::Page { ads, next } => {
                wire::check_count("page", ads, MAX_PAGE_ADS as usize)?;
                for ad in ads {
                    let len = ad.to_bytes().len();
                    if len > MAX_SIGNED_AD_LEN {
                        return Err(Error::TooLarge {
                            what: "signed ad",
                            size: len,
                            limit: MAX_SIGNED_AD_LEN,
                        });
                    }
                }
                next.as_ref().map_or(Ok(()), Cursor::check)
            }
            Response::Refused { reason } => {
                wire::check_text("reason", reason, wire::MAX_REASON_LEN)
            }
        }
    }
}

impl Request {
    /// How many ads the responder should send: what was asked, capped.
    pub fn page_size(&self) -> u32 {
        match self {
            Request::Pull { max, .. } => (*max).min(MAX_PAGE_ADS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_bounded() {
        assert!(Cursor::new(vec![7; MAX_CURSOR_LEN]).is_ok());
        let err = Cursor::new(vec![7; MAX_CURSOR_LEN + 1]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid cursor: 257 bytes, more than the limit of 256"
        );
    }

    #[test]
    fn page_size_is_capped() {
        let pull = |max| Request::Pull {
            kinds: vec![],
            after: None,
            max,
            certificates: vec![],
        };
        assert_eq!(pull(10).page_size(), 10);
        assert_eq!(pull(u32::MAX).page_size(), MAX_PAGE_ADS);
    }

    #[test]
    fn a_request_naming_too_many_kinds_is_refused() {
        let request = Request::Pull {
            kinds: vec![Kind::MACHINE_AD; MAX_KINDS + 1],
            after: None,
            max: 1,
            certificates: vec![],
        };
        let err = request.encode().unwrap_err();
        assert_eq!(
            err.to_string(),
            "kind list holds 17 entries, more than the limit of 16"
        );
        let bytes = crate::cbor::encode(&request);
        assert_eq!(Request::decode(&bytes).unwrap_err(), err);
    }
}
