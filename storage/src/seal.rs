//! Sealed values: every value the sled store keeps carries a checksum over
//! the tree's name, the record's key and the value's bytes, so a flipped
//! bit, a value written under another key or a value from another tree is
//! caught when it is read, not decoded into something plausible.
//!
//! ```text
//! value = FORMAT (1 byte, 1) ‖ checksum (16 bytes) ‖ payload
//! checksum = blake3 derive_key(CONTEXT,
//!                len(tree) u8 ‖ tree ‖ len(key) u32 BE ‖ key ‖ payload)[..16]
//! ```
//!
//! 128 bits of blake3 are far more than needed to catch damage; they are not
//! a defence against someone who can write the files (nothing is).

/// The first byte of every sealed value: the format of what follows.
const FORMAT: u8 = 1;

/// Bytes of checksum kept.
const CHECKSUM_LEN: usize = 16;

/// What a sealed value adds to its payload.
pub(crate) const SEAL_LEN: usize = 1 + CHECKSUM_LEN;

/// blake3's key derivation context: a checksum made for anything else never
/// matches.
const CONTEXT: &str = "starling-storage sealed record v1";

/// Why a value does not unseal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Broken {
    /// Shorter than a seal.
    Short(usize),
    /// A format byte this Starling does not know.
    Format(u8),
    /// The checksum does not match the tree, key and payload.
    Checksum,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Short(len) => write!(f, "{len} bytes, too short to be a sealed value"),
            Broken::Format(b) => write!(f, "unknown value format {b}"),
            Broken::Checksum => write!(f, "checksum mismatch"),
        }
    }
}

fn checksum(tree: &str, key: &[u8], payload: &[u8]) -> [u8; CHECKSUM_LEN] {
    let mut hasher = blake3::Hasher::new_derive_key(CONTEXT);
    // Tree names are ours and short; keys are bounded by sled.
    hasher.update(&[tree.len().min(255) as u8]);
    hasher.update(tree.as_bytes());
    hasher.update(&(key.len() as u32).to_be_bytes());
    hasher.update(key);
    hasher.update(payload);
    let mut out = [0; CHECKSUM_LEN];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..CHECKSUM_LEN]);
    out
}

/// The value to store for `payload` under `key` in `tree`.
pub(crate) fn seal(tree: &str, key: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(SEAL_LEN + payload.len());
    value.push(FORMAT);
    value.extend_from_slice(&checksum(tree, key, payload));
    value.extend_from_slice(payload);
    value
}

/// The payload of a value read from `key` in `tree`, if its seal holds.
pub(crate) fn unseal<'a>(tree: &str, key: &[u8], value: &'a [u8]) -> Result<&'a [u8], Broken> {
    if value.len() < SEAL_LEN {
        return Err(Broken::Short(value.len()));
    }
    if value[0] != FORMAT {
        return Err(Broken::Format(value[0]));
    }
    let (sum, payload) = value[1..].split_at(CHECKSUM_LEN);
    if sum != checksum(tree, key, payload) {
        return Err(Broken::Checksum);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_sealed_value_unseals_only_where_it_was_put() {
        let value = seal("jobs", b"key", b"payload");
        assert_eq!(value.len(), SEAL_LEN + 7);
        assert_eq!(unseal("jobs", b"key", &value), Ok(&b"payload"[..]));
        assert_eq!(unseal("jobs", b"kez", &value), Err(Broken::Checksum));
        assert_eq!(unseal("history", b"key", &value), Err(Broken::Checksum));
        assert_eq!(unseal("jobs", b"key", &value[..5]), Err(Broken::Short(5)));
        let mut other = value.clone();
        other[0] = 9;
        assert_eq!(unseal("jobs", b"key", &other), Err(Broken::Format(9)));
        // An empty payload is sealed too (the expiry index).
        assert_eq!(unseal("t", b"", &seal("t", b"", b"")), Ok(&b""[..]));
    }

    proptest! {
        #[test]
        fn every_flipped_bit_is_caught(
            key in proptest::collection::vec(any::<u8>(), 0..40),
            payload in proptest::collection::vec(any::<u8>(), 0..200),
            bit in any::<usize>(),
        ) {
            let mut value = seal("jobs", &key, &payload);
            let bit = bit % (value.len() * 8);
            value[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(unseal("jobs", &key, &value).is_err());
        }

        #[test]
        fn cut_values_are_caught(
            payload in proptest::collection::vec(any::<u8>(), 0..200),
            cut in any::<usize>(),
        ) {
            let value = seal("history", b"k", &payload);
            let cut = cut % value.len();
            prop_assert!(unseal("history", b"k", &value[..cut]).is_err());
        }

        #[test]
        fn garbage_never_panics(value in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = unseal("jobs", b"k", &value);
        }
    }
}
