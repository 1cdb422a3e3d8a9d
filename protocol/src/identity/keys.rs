//! ed25519 keys and agent ids.
//!
//! An [`AgentId`] is the libp2p `PeerId` of an agent's ed25519 key. libp2p
//! writes an ed25519 public key as the protobuf `PublicKey { Type = Ed25519,
//! Data = key }` (36 bytes) and, since that is under 42 bytes, the id is the
//! identity multihash of it: `0x00 0x24` then the 36 bytes. Text form is
//! base58btc, which is why every such id starts `12D3KooW`. Because the id
//! contains the key, verifying a message from an agent needs no lookup.

use std::fmt;
use std::str::FromStr;

use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An ed25519 public key: an agent's or a domain's. Shown as base58. Always a
/// valid curve point (checked when made); kept compressed so it is small to
/// copy, hash and carry in errors. [`super::Envelope`] keeps the decompressed
/// form it needs for verifying.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PublicKey([u8; 32]);

/// An ed25519 secret key with its public half. Never serialized by serde;
/// storage writes [`Keypair::seed`] to a file only its owner can read.
pub struct Keypair(SigningKey);

/// The id of an agent: the libp2p `PeerId` of its public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(PublicKey);

/// Why a key or an id given as text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseKeyError {
    #[error("{0:?} is not base58 text")]
    NotBase58(String),
    #[error("{0:?} is not an ed25519 public key (expected 32 bytes in base58)")]
    WrongLength(String),
    #[error("{0:?} is not a valid ed25519 point")]
    NotAPoint(String),
    #[error("{0:?} is not an ed25519 agent id (expected a peer id starting 12D3KooW)")]
    NotAnAgentId(String),
}

/// The prefix libp2p puts before a 32-byte ed25519 key to make a `PeerId`:
/// identity multihash (code 0, length 36), protobuf field 1 = KeyType Ed25519,
/// protobuf field 2 = 32 bytes of data.
const PEER_ID_PREFIX: [u8; 6] = [0x00, 0x24, 0x08, 0x01, 0x12, 0x20];

/// Decodes base58 text of exactly `N` bytes; any other length is
/// `wrong_length(text)`.
fn base58_exact<const N: usize>(
    text: &str,
    wrong_length: fn(String) -> ParseKeyError,
) -> Result<[u8; N], ParseKeyError> {
    let mut bytes = [0u8; N];
    match bs58::decode(text).onto(&mut bytes) {
        Ok(n) if n == N => Ok(bytes),
        Ok(_) | Err(bs58::decode::Error::BufferTooSmall) => Err(wrong_length(text.to_owned())),
        Err(_) => Err(ParseKeyError::NotBase58(text.to_owned())),
    }
}

impl PublicKey {
    /// Length of the raw key.
    pub const LEN: usize = 32;

    /// Accepts 32 bytes if they are a valid ed25519 point.
    pub fn from_bytes(bytes: &[u8; 32]) -> Option<Self> {
        VerifyingKey::from_bytes(bytes)
            .ok()
            .map(|k| Self::from_verifying_key(&k))
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub(crate) fn from_verifying_key(key: &VerifyingKey) -> Self {
        Self(key.to_bytes())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&bs58::encode(self.as_bytes()).into_string())
    }
}
impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({self})")
    }
}

impl FromStr for PublicKey {
    type Err = ParseKeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let bytes: [u8; 32] = base58_exact(s, ParseKeyError::WrongLength)?;
        Self::from_bytes(&bytes).ok_or_else(|| ParseKeyError::NotAPoint(s.to_owned()))
    }
}

impl Serialize for PublicKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.as_bytes())
    }
}

impl<'de> Deserialize<'de> for PublicKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = serde_bytes::ByteArray::<32>::deserialize(deserializer)?;
        Self::from_bytes(&bytes).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Bytes(bytes.as_slice()),
                &"an ed25519 public key",
            )
        })
    }
}

impl Keypair {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)?;
        Ok(Self::from_seed(&seed))
    }

    /// The key with this 32-byte secret seed.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        Self(SigningKey::from_bytes(seed))
    }

    /// The secret seed, for storage to write to a private file.
    pub fn seed(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    pub fn public(&self) -> PublicKey {
        PublicKey::from_verifying_key(&self.0.verifying_key())
    }

    /// This key as an agent's id.
    pub fn agent_id(&self) -> AgentId {
        AgentId(self.public())
    }

    pub(crate) fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }

    pub(crate) fn verifying_key(&self) -> VerifyingKey {
        self.0.verifying_key()
    }
}

impl fmt::Debug for Keypair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Keypair({}, secret hidden)", self.public())
    }
}

impl AgentId {
    /// Length of the `PeerId` bytes.
    pub const PEER_ID_LEN: usize = 38;

    pub fn from_public_key(key: PublicKey) -> Self {
        Self(key)
    }

    pub fn public_key(&self) -> &PublicKey {
        &self.0
    }

    /// The `PeerId` bytes libp2p computes from this key.
    pub fn to_peer_id_bytes(&self) -> [u8; 38] {
        let mut out = [0u8; 38];
        out[..6].copy_from_slice(&PEER_ID_PREFIX);
        out[6..].copy_from_slice(self.0.as_bytes());
        out
    }

    /// Reads `PeerId` bytes; only ed25519 ids (the ones agents have) are accepted.
    pub fn from_peer_id_bytes(bytes: &[u8]) -> Option<Self> {
        let key: &[u8; 32] = bytes.strip_prefix(&PEER_ID_PREFIX[..])?.try_into().ok()?;
        PublicKey::from_bytes(key).map(Self)
    }

    /// A short form for logs and tables: the last 8 characters, as libp2p's
    /// own short ids do (the common `12D3KooW` prefix tells nothing).
    pub fn short(&self) -> String {
        let full = self.to_string();
        full[full.len().saturating_sub(8)..].to_owned()
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&bs58::encode(self.to_peer_id_bytes()).into_string())
    }
}
impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({self})")
    }
}

impl FromStr for AgentId {
    type Err = ParseKeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let bytes: [u8; 38] = base58_exact(s, ParseKeyError::NotAnAgentId)?;
        if !bytes.starts_with(&PEER_ID_PREFIX) {
            return Err(ParseKeyError::NotAnAgentId(s.to_owned()));
        }
        Self::from_peer_id_bytes(&bytes).ok_or_else(|| ParseKeyError::NotAPoint(s.to_owned()))
    }
}

/// On the wire an agent id is its 32-byte key: the `PeerId` prefix is fixed.
impl Serialize for AgentId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}
impl<'de> Deserialize<'de> for AgentId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        PublicKey::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_is_the_libp2p_peer_id_of_the_same_key() {
        for i in 0..32u8 {
            let seed = [i.wrapping_mul(37).wrapping_add(1); 32];
            let ours = Keypair::from_seed(&seed);
            let mut secret = seed;
            let theirs = libp2p_identity::Keypair::ed25519_from_bytes(&mut secret).unwrap();
            let peer_id = theirs.public().to_peer_id();
            assert_eq!(ours.agent_id().to_string(), peer_id.to_string());
            assert_eq!(
                ours.agent_id().to_peer_id_bytes().to_vec(),
                peer_id.to_bytes()
            );
            let back: AgentId = peer_id.to_string().parse().unwrap();
            assert_eq!(back, ours.agent_id());
        }
    }

    #[test]
    fn agent_id_text_round_trips_and_starts_like_a_peer_id() {
        let key = Keypair::generate().unwrap();
        let text = key.agent_id().to_string();
        assert!(text.starts_with("12D3KooW"), "{text}");
        assert_eq!(text.parse::<AgentId>().unwrap(), key.agent_id());
        assert_eq!(key.agent_id().short(), text[text.len() - 8..]);
    }

    #[test]
    fn bad_ids_and_keys_are_named_in_the_error() {
        assert_eq!(
            "0OIl".parse::<AgentId>().unwrap_err().to_string(),
            "\"0OIl\" is not base58 text"
        );
        // An RSA-style peer id (sha256 multihash) is not an agent id.
        let err = "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"
            .parse::<AgentId>()
            .unwrap_err();
        assert!(matches!(err, ParseKeyError::NotAnAgentId(_)), "{err}");
        let key = Keypair::from_seed(&[9; 32]).public();
        assert_eq!(key.to_string().parse::<PublicKey>().unwrap(), key);
        assert!(matches!(
            "abc".parse::<PublicKey>().unwrap_err(),
            ParseKeyError::WrongLength(_)
        ));
    }

    #[test]
    fn keypair_debug_hides_the_secret() {
        let key = Keypair::from_seed(&[7; 32]);
        let shown = format!("{key:?}");
        assert!(shown.contains("secret hidden"));
        assert!(!shown.contains(&bs58::encode(key.seed()).into_string()));
    }
}
