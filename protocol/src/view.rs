//! Pulling a peer's current view of the pool (anti-entropy), on
//! `/starling/view/1`.
//!
//! A newcomer, or an agent back from a partition, asks a peer for the signed
//! ads it holds instead of waiting for the next refresh. The answer comes in
//! pages: each [`Response::Page`] holds signed-ad envelopes exactly as the
//! peer received them (the receiver opens each with [`crate::gossip::open`]
//! and its replay guard, as if gossiped) and a [`Cursor`] to ask for the next
//! page. A pull may carry a [`Digest`] of what the requester holds, and a
//! responder of its domain then sends only the ads of the buckets that
//! differ (the periodic comparison between colleagues). The responder
//! decides what to share: it may send a stranger less
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

/// Buckets of a [`Digest`]: an ad falls into one by its signer's first
/// byte, so a bucket is a contiguous range of the responder's key order.
pub const DIGEST_BUCKETS: usize = 256;

/// What a requester holds already, so that the responder sends only the
/// buckets that differ (push-pull anti-entropy, as memberlist's and
/// Cassandra's Merkle summaries do): per bucket, the XOR of
/// [`Digest::entry`] over the ads it holds there. A pool in agreement
/// exchanges 2 KiB and an empty page; an ad missed or one refresh behind
/// costs its bucket, about one ad in 256 of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Digest(#[serde(with = "serde_bytes")] Vec<u8>);

impl Default for Digest {
    fn default() -> Self {
        Digest(vec![0; DIGEST_BUCKETS * 8])
    }
}

impl Digest {
    /// The bucket of an ad by `signer`.
    pub fn bucket(signer: &[u8; 32]) -> usize {
        usize::from(signer[0]) % DIGEST_BUCKETS
    }

    /// What one held ad contributes to its bucket: the first eight bytes
    /// of a hash of who signed it, its kind and its sequence number.
    pub fn entry(signer: &[u8; 32], kind: Kind, seq: u64) -> u64 {
        let mut hasher = blake3::Hasher::new();
        hasher.update(signer);
        hasher.update(&kind.as_u16().to_le_bytes());
        hasher.update(&seq.to_le_bytes());
        let hash = hasher.finalize();
        let mut first = [0; 8];
        first.copy_from_slice(&hash.as_bytes()[..8]);
        u64::from_le_bytes(first)
    }

    /// Counts one held ad.
    pub fn add(&mut self, signer: &[u8; 32], kind: Kind, seq: u64) {
        let bucket = Self::bucket(signer);
        let value = self.get(bucket) ^ Self::entry(signer, kind, seq);
        self.0[bucket * 8..bucket * 8 + 8].copy_from_slice(&value.to_le_bytes());
    }

    /// Bucket `bucket`'s value (0 for one out of range or a digest of the
    /// wrong length, which [`Request::check`] refuses on the wire).
    pub fn get(&self, bucket: usize) -> u64 {
        self.0
            .get(bucket * 8..bucket * 8 + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, u64::from_le_bytes)
    }

    fn check(&self) -> Result<(), Error> {
        if self.0.len() != DIGEST_BUCKETS * 8 {
            return Err(Error::Invalid {
                field: "digest",
                reason: format!(
                    "{} bytes, where a digest is {} ({DIGEST_BUCKETS} buckets of 8)",
                    self.0.len(),
                    DIGEST_BUCKETS * 8
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
        /// What the requester holds already: a responder of its domain
        /// leaves out the buckets that agree. `None` asks for everything
        /// (a newcomer, or a pull across domains, whose shares differ).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        holding: Option<Digest>,
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
                holding,
            } => {
                wire::check_count("kind list", kinds, MAX_KINDS)?;
                wire::check_count("certificate list", certificates, MAX_CERTIFICATES)?;
                holding.as_ref().map_or(Ok(()), Digest::check)?;
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
            holding: None,
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
            holding: None,
        };
        let err = request.encode().unwrap_err();
        assert_eq!(
            err.to_string(),
            "kind list holds 17 entries, more than the limit of 16"
        );
        let bytes = crate::cbor::encode(&request);
        assert_eq!(Request::decode(&bytes).unwrap_err(), err);
    }

    #[test]
    fn a_digest_of_the_wrong_length_is_refused() {
        let request = Request::Pull {
            kinds: vec![],
            after: None,
            max: 1,
            certificates: vec![],
            holding: Some(Digest(vec![0; 7])),
        };
        let err = request.encode().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid digest: 7 bytes, where a digest is 2048 (256 buckets of 8)"
        );
        let bytes = crate::cbor::encode(&request);
        assert_eq!(Request::decode(&bytes).unwrap_err(), err);
    }

    #[test]
    fn digests_agree_whatever_the_order_and_differ_by_a_sequence_number() {
        let a = [1u8; 32];
        let mut b = a;
        b[31] = 9;
        let mut one = Digest::default();
        one.add(&a, Kind::MACHINE_AD, 3);
        one.add(&b, Kind::MACHINE_AD, 5);
        let mut two = Digest::default();
        two.add(&b, Kind::MACHINE_AD, 5);
        two.add(&a, Kind::MACHINE_AD, 3);
        assert_eq!(one, two);
        assert_eq!(Digest::bucket(&a), Digest::bucket(&b));
        let mut newer = Digest::default();
        newer.add(&a, Kind::MACHINE_AD, 4);
        newer.add(&b, Kind::MACHINE_AD, 5);
        assert_ne!(one.get(Digest::bucket(&a)), newer.get(Digest::bucket(&a)));
        // Every other bucket still agrees.
        assert!((0..DIGEST_BUCKETS)
            .filter(|&i| i != Digest::bucket(&a))
            .all(|i| one.get(i) == newer.get(i)));
        assert_eq!(
            Request::Pull {
                kinds: vec![],
                after: None,
                max: 1,
                certificates: vec![],
                holding: Some(one),
            }
            .encode()
            .map(|b| b.len() > DIGEST_BUCKETS * 8),
            Ok(true)
        );
    }
}
