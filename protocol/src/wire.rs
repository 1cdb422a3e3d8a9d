//! What every request–response message has in common: the protocol names and
//! versions agents negotiate, the [`Message`] trait that gives each message
//! its bounded `encode`/`decode`, and the [`Error`] they report.
//!
//! Versions live in the libp2p protocol string (`/starling/claim/1`) and in
//! [`ProtocolVersion`]. Within a version, messages change only compatibly:
//! new fields are optional (older peers skip them, newer peers default them),
//! new variants of a `#[non_exhaustive]` enum may be refused by older peers
//! with a decode error, and retired variants stay, marked deprecated. Anything
//! else is a new version with a new protocol string.
//!
//! Messages are CBOR (ciborium, serde's externally tagged layout: a variant is
//! a one-entry map from its name to a map of its fields by name). Decoding goes
//! through [`crate::cbor::decode`], which refuses input over the message's
//! [`Message::MAX_LEN`] before reading it, caps nesting and rejects trailing
//! bytes; then [`Message::check`] applies the message's own rules (counts,
//! lengths, file names). Encoding applies the same rules, so a message that
//! would be refused is never sent.

use std::fmt;

use serde::{de::DeserializeOwned, Serialize};

use crate::cbor;

/// A version of Starling's request–response protocols. Agents offer every
/// version they speak, newest first, and libp2p settles on one per stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    V1,
}

impl ProtocolVersion {
    /// The version this code writes.
    pub const CURRENT: ProtocolVersion = ProtocolVersion::V1;
    /// Every version this code understands, newest first.
    pub const ALL: [ProtocolVersion; 1] = [ProtocolVersion::V1];

    pub const fn number(self) -> u32 {
        match self {
            ProtocolVersion::V1 => 1,
        }
    }

    pub fn from_number(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.number() == n)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// Starling's request–response protocols. Gossip topics are in
/// [`crate::gossip`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Protocol {
    /// Pulling a peer's current view of the pool ([`crate::view`]).
    View,
    /// Claiming a machine and keeping the claim alive ([`crate::claim`]).
    Claim,
    /// Handing a job to its execute agent and moving files ([`crate::transfer`]).
    Transfer,
    /// Keeping checkpoint chunks on store peers ([`crate::checkpoint`]).
    Store,
}

/// `/starling/view/1`
pub const VIEW_V1: &str = "/starling/view/1";
/// `/starling/claim/1`
pub const CLAIM_V1: &str = "/starling/claim/1";
/// `/starling/transfer/1`
pub const TRANSFER_V1: &str = "/starling/transfer/1";
/// `/starling/store/1`
pub const STORE_V1: &str = "/starling/store/1";

impl Protocol {
    pub const ALL: [Protocol; 4] = [
        Protocol::View,
        Protocol::Claim,
        Protocol::Transfer,
        Protocol::Store,
    ];

    /// The libp2p protocol string, e.g. `/starling/claim/1`.
    pub const fn name(self, version: ProtocolVersion) -> &'static str {
        match (self, version) {
            (Protocol::View, ProtocolVersion::V1) => VIEW_V1,
            (Protocol::Claim, ProtocolVersion::V1) => CLAIM_V1,
            (Protocol::Transfer, ProtocolVersion::V1) => TRANSFER_V1,
            (Protocol::Store, ProtocolVersion::V1) => STORE_V1,
        }
    }

    /// Reads a libp2p protocol string this code speaks.
    pub fn parse(name: &str) -> Option<(Protocol, ProtocolVersion)> {
        Self::ALL.into_iter().find_map(|p| {
            ProtocolVersion::ALL
                .into_iter()
                .find(|v| p.name(*v) == name)
                .map(|v| (p, v))
        })
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::View => "view",
            Protocol::Claim => "claim",
            Protocol::Transfer => "transfer",
            Protocol::Store => "store",
        })
    }
}

/// Why a message could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are too large or not valid CBOR for the message.
    #[error(transparent)]
    Decode(#[from] cbor::DecodeError),
    /// The encoded message would be larger than its limit.
    #[error("{what} would be {size} bytes, more than the limit of {limit}")]
    TooLarge {
        what: &'static str,
        size: usize,
        limit: usize,
    },
    /// A list holds more entries than its limit.
    #[error("{what} holds {count} entries, more than the limit of {limit}")]
    TooMany {
        what: &'static str,
        count: usize,
        limit: usize,
    },
    /// A field that decoded but breaks a rule of the protocol.
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    /// A signed envelope inside the message was refused.
    #[error(transparent)]
    Identity(#[from] crate::identity::Error),
}

/// A request or response of one of Starling's protocols.
///
/// `decode` is the only way bytes from a peer become a message: it never
/// panics, refuses input over [`Message::MAX_LEN`] before reading it, and
/// returns a typed error for everything else.
pub trait Message: Serialize + DeserializeOwned {
    /// The protocol this message belongs to.
    const PROTOCOL: Protocol;
    /// Names the message in errors, e.g. "claim request".
    const NAME: &'static str;
    /// The largest encoding accepted, in bytes.
    const MAX_LEN: usize;

    /// The message's own rules beyond its CBOR shape (counts, lengths,
    /// names), checked after decoding and before encoding.
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Encodes the message, refusing one that breaks a rule or its limit.
    fn encode(&self) -> Result<Vec<u8>, Error> {
        self.check()?;
        let bytes = cbor::encode(self);
        if bytes.len() > Self::MAX_LEN {
            return Err(Error::TooLarge {
                what: Self::NAME,
                size: bytes.len(),
                limit: Self::MAX_LEN,
            });
        }
        Ok(bytes)
    }

    /// Decodes a message from exactly `bytes`.
    fn decode(bytes: &[u8]) -> Result<Self, Error> {
        let message: Self = cbor::decode(bytes, Self::MAX_LEN, Self::NAME)?;
        message.check()?;
        Ok(message)
    }
}

/// Checks that a list is within its limit.
pub(crate) fn check_count<T>(what: &'static str, items: &[T], limit: usize) -> Result<(), Error> {
    if items.len() > limit {
        return Err(Error::TooMany {
            what,
            count: items.len(),
            limit,
        });
    }
    Ok(())
}

/// Checks that a human-readable text is within its limit.
pub(crate) fn check_text(field: &'static str, text: &str, limit: usize) -> Result<(), Error> {
    if text.len() > limit {
        return Err(Error::Invalid {
            field,
            reason: format!("{} bytes, more than the limit of {limit}", text.len()),
        });
    }
    Ok(())
}

/// Longest human-readable reason any message carries.
pub const MAX_REASON_LEN: usize = 1024;

/// Writes bytes as lowercase hex.
pub(crate) fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
}

/// Reads exactly `N` bytes of hex.
pub(crate) fn parse_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim().as_bytes();
    if text.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        let hi = char::from(pair[0]).to_digit(16)?;
        let lo = char::from(pair[1]).to_digit(16)?;
        *byte = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(out)
}

/// A signed envelope inside a message (boxed: it is large beside the other
/// fields) travels as a CBOR byte string holding the envelope's bytes, so its signature still covers exactly what was
/// received. Decoding reads the envelope (canonical wrapper, header, signer
/// key) but does not open it: the receiver checks signature and window.
pub(crate) mod envelope_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::identity::{Envelope, MAX_ENVELOPE_LEN};

    pub(crate) fn serialize<S: Serializer>(env: &Envelope, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&env.to_bytes())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Box<Envelope>, D::Error> {
        let bytes = serde_bytes::ByteBuf::deserialize(d)?;
        Envelope::decode_with_limit(&bytes, MAX_ENVELOPE_LEN)
            .map(Box::new)
            .map_err(serde::de::Error::custom)
    }
}

/// A list of envelopes, each as in [`envelope_bytes`].
pub(crate) mod envelope_list {
    use serde::{ser::SerializeSeq, Deserializer, Serializer};

    use crate::identity::{Envelope, MAX_ENVELOPE_LEN};

    pub(crate) fn serialize<S: Serializer>(list: &[Envelope], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(list.len()))?;
        for env in list {
            seq.serialize_element(serde_bytes::Bytes::new(&env.to_bytes()))?;
        }
        seq.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Envelope>, D::Error> {
        d.deserialize_seq(Visitor)
    }

    /// Reads and checks each envelope as it arrives, so a list of tiny bogus
    /// entries fails at the first one instead of being buffered whole. Every
    /// entry kept is a real envelope (over 100 bytes of input), and the whole
    /// message is bounded by its size limit, so the list is too.
    struct Visitor;

    impl<'de> serde::de::Visitor<'de> for Visitor {
        type Value = Vec<Envelope>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of envelopes as byte strings")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut list = Vec::new();
            while let Some(bytes) = seq.next_element::<serde_bytes::ByteBuf>()? {
                let env = Envelope::decode_with_limit(&bytes, MAX_ENVELOPE_LEN)
                    .map_err(serde::de::Error::custom)?;
                list.push(env);
            }
            Ok(list)
        }
    }
}

/// Defines a reason code: a `u16` on the wire, with named codes and an
/// `Other` that keeps codes from newer peers instead of failing to decode.
macro_rules! code_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal => $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A code this version does not know, kept as received. A known
            /// code built as `Other` decodes as its named variant.
            Other(u16),
        }

        impl $name {
            /// Every named code.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            pub const fn code(self) -> u16 {
                match self {
                    $( $name::$variant => $code, )*
                    $name::Other(code) => code,
                }
            }

            pub const fn from_code(code: u16) -> Self {
                match code {
                    $( $code => $name::$variant, )*
                    other => $name::Other(other),
                }
            }

            /// A short lowercase description for logs and `starling why`.
            pub fn description(self) -> std::borrow::Cow<'static, str> {
                match self {
                    $( $name::$variant => std::borrow::Cow::Borrowed($text), )*
                    $name::Other(code) => std::borrow::Cow::Owned(format!("unknown reason {code}")),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.description())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u16(self.code())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <u16 as serde::Deserialize>::deserialize(d).map(Self::from_code)
            }
        }
    };
}
pub(crate) use code_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_strings_parse_back() {
        for p in Protocol::ALL {
            for v in ProtocolVersion::ALL {
                assert_eq!(Protocol::parse(p.name(v)), Some((p, v)));
            }
        }
        assert_eq!(
            Protocol::name(Protocol::Claim, ProtocolVersion::V1),
            "/starling/claim/1"
        );
        assert_eq!(Protocol::parse("/starling/claim/2"), None);
        assert_eq!(Protocol::parse("/ipfs/kad/1.0.0"), None);
    }

    #[test]
    fn hex_round_trips_and_refuses_bad_text() {
        struct Hex<'a>(&'a [u8]);
        impl fmt::Display for Hex<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_hex(f, self.0)
            }
        }
        let bytes = [0x00, 0x0f, 0xa5, 0xff];
        let text = Hex(&bytes).to_string();
        assert_eq!(text, "000fa5ff");
        assert_eq!(parse_hex::<4>(&text), Some(bytes));
        assert_eq!(parse_hex::<4>("000FA5FF"), Some(bytes));
        assert_eq!(parse_hex::<4>("000fa5f"), None);
        assert_eq!(parse_hex::<4>("000fa5fg"), None);
        assert_eq!(parse_hex::<4>("+00fa5ff"), None);
    }
}
