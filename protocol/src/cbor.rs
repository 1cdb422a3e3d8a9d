//! Bounded CBOR encoding and decoding, shared by every message and envelope.
//!
//! Decoding checks the size limit before it reads a byte and caps nesting, so
//! a hostile peer can make a decode fail but never panic, allocate without
//! bound, or recurse deeply. Encoding cannot fail for our types except by a
//! bug, which is reported as an error rather than a panic.

use serde::{de::DeserializeOwned, Serialize};

/// Nesting depth any decoded message may reach. Our messages nest a handful of
/// levels; anything deeper is hostile.
pub const MAX_DEPTH: usize = 32;

/// Why bytes could not be decoded as the expected message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input is larger than this message type may be.
    #[error("{what} is {size} bytes, more than the limit of {limit}")]
    TooLarge {
        what: &'static str,
        size: usize,
        limit: usize,
    },
    /// The input is not valid CBOR for the message, or has bytes after it.
    #[error("{what} is malformed: {reason}")]
    Malformed { what: &'static str, reason: String },
}

/// Encodes `value` as CBOR.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    // Writing to a Vec cannot fail, and our types have no serializer that
    // errors; should one appear, the empty vector fails to decode loudly.
    if ciborium::into_writer(value, &mut out).is_err() {
        out.clear();
    }
    out
}

/// Decodes one `T` from exactly `bytes`, which may be at most `limit` long.
/// `what` names the message in errors ("claim request", "certificate").
pub fn decode<T: DeserializeOwned>(
    bytes: &[u8],
    limit: usize,
    what: &'static str,
) -> Result<T, DecodeError> {
    if bytes.len() > limit {
        return Err(DecodeError::TooLarge {
            what,
            size: bytes.len(),
            limit,
        });
    }
    let mut reader = bytes;
    let value = ciborium::de::from_reader_with_recursion_limit(&mut reader, MAX_DEPTH).map_err(
        |e: ciborium::de::Error<std::io::Error>| DecodeError::Malformed {
            what,
            reason: describe(&e),
        },
    )?;
    if !reader.is_empty() {
        return Err(DecodeError::Malformed {
            what,
            reason: format!("{} unexpected bytes after the end", reader.len()),
        });
    }
    Ok(value)
}

fn describe(e: &ciborium::de::Error<std::io::Error>) -> String {
    use ciborium::de::Error;
    match e {
        Error::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "it ends too early".to_owned()
        }
        Error::Io(e) => e.to_string(),
        Error::Syntax(offset) => format!("invalid CBOR at byte {offset}"),
        Error::Semantic(Some(offset), msg) => format!("{msg} (at byte {offset})"),
        Error::Semantic(None, msg) => msg.clone(),
        Error::RecursionLimitExceeded => format!("nested deeper than {MAX_DEPTH} levels"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_oversized_input_before_reading_it() {
        let err = decode::<u8>(&[0; 10], 4, "thing").unwrap_err();
        assert_eq!(
            err.to_string(),
            "thing is 10 bytes, more than the limit of 4"
        );
    }

    #[test]
    fn rejects_trailing_bytes() {
        let mut bytes = encode(&7u8);
        bytes.push(0);
        let err = decode::<u8>(&bytes, 100, "thing").unwrap_err();
        assert!(err.to_string().contains("1 unexpected bytes"), "{err}");
    }

    #[test]
    fn rejects_deep_nesting() {
        // 100 nested one-element arrays around an integer.
        let mut bytes = vec![0x81; 100];
        bytes.push(0x01);
        let err = decode::<ciborium::Value>(&bytes, 1000, "thing").unwrap_err();
        assert!(err.to_string().contains("nested deeper"), "{err}");
    }

    #[test]
    fn huge_length_prefix_fails_without_allocating() {
        // A byte string claiming 2^62 bytes, followed by three.
        let bytes = [0x5b, 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3];
        let err = decode::<serde_bytes::ByteBuf>(&bytes, 1000, "thing").unwrap_err();
        assert!(err.to_string().contains("ends too early"), "{err}");
    }
}
