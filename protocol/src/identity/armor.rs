//! Text armor for the files administrators handle: domain keys,
//! certificates and policies, as PEM-like blocks that survive mail and
//! copy-paste.
//!
//! ```text
//! # any comment lines
//! -----BEGIN STARLING CERTIFICATE-----
//! base64 of the envelope bytes, 64 columns
//! -----END STARLING CERTIFICATE-----
//! ```

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{Envelope, Keypair, Kind};

/// Largest armored file read: enough for the largest envelope in base64.
pub const MAX_ARMORED_LEN: usize = 2 * super::MAX_ENVELOPE_LEN;

/// The label of a domain key block.
pub const DOMAIN_KEY: &str = "DOMAIN KEY";

/// Why a file is not an armored block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArmorError {
    #[error("no '-----BEGIN STARLING ...-----' line found")]
    NoBegin,
    #[error("the block labelled {0:?} has no matching END line")]
    NoEnd(String),
    #[error("the block labelled {label:?} is not valid base64: {reason}")]
    NotBase64 { label: String, reason: String },
    #[error("expected a {expected} block but found {found:?}")]
    WrongLabel {
        expected: &'static str,
        found: String,
    },
    #[error("the file is {0} bytes, larger than any Starling file")]
    TooLarge(usize),
    #[error("the domain key block is malformed: {0}")]
    BadKey(String),
}

/// The armor label for an envelope of `kind`.
pub fn label_for(kind: Kind) -> &'static str {
    match kind {
        Kind::CERTIFICATE => "CERTIFICATE",
        Kind::POLICY => "DOMAIN POLICY",
        _ => "ENVELOPE",
    }
}

/// Wraps `bytes` in a block labelled `label`, after `comment` lines.
pub fn armor(label: &str, bytes: &[u8], comment: &[String]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 64 + 128);
    for line in comment {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!("-----BEGIN STARLING {label}-----\n"));
    for chunk in encoded.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END STARLING {label}-----\n"));
    out
}

/// Armors an envelope under the label its kind calls for.
pub fn armor_envelope(envelope: &Envelope, comment: &[String]) -> String {
    armor(
        label_for(envelope.header().kind),
        &envelope.to_bytes(),
        comment,
    )
}

/// Finds the first block in `text`; returns its label and bytes.
pub fn dearmor(text: &str) -> Result<(String, Vec<u8>), ArmorError> {
    if text.len() > MAX_ARMORED_LEN {
        return Err(ArmorError::TooLarge(text.len()));
    }
    let mut lines = text.lines().map(str::trim);
    let label = lines
        .by_ref()
        .find_map(|l| {
            l.strip_prefix("-----BEGIN STARLING ")?
                .strip_suffix("-----")
        })
        .ok_or(ArmorError::NoBegin)?
        .to_owned();
    let end = format!("-----END STARLING {label}-----");
    let mut body = String::new();
    let mut ended = false;
    for line in lines {
        if line == end {
            ended = true;
            break;
        }
        body.push_str(line);
    }
    if !ended {
        return Err(ArmorError::NoEnd(label));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .map_err(|e| ArmorError::NotBase64 {
            label: label.clone(),
            reason: e.to_string(),
        })?;
    Ok((label, bytes))
}

#[derive(Serialize, Deserialize)]
struct DomainKeyFile {
    name: String,
    #[serde(with = "serde_bytes")]
    seed: Vec<u8>,
}

/// A domain key file: the domain's name and secret key, armored, with the
/// public key in a comment so an administrator can read it off.
pub fn armor_domain_key(name: &str, key: &Keypair) -> String {
    let file = DomainKeyFile {
        name: name.to_owned(),
        seed: key.seed().to_vec(),
    };
    armor(
        DOMAIN_KEY,
        &crate::cbor::encode(&file),
        &[
            format!("Starling domain key for {name:?}. Keep this file secret."),
            format!("public key: {}", key.public()),
        ],
    )
}

/// Reads a domain key file written by [`armor_domain_key`].
pub fn dearmor_domain_key(text: &str) -> Result<(String, Keypair), ArmorError> {
    let (label, bytes) = dearmor(text)?;
    if label != DOMAIN_KEY {
        return Err(ArmorError::WrongLabel {
            expected: DOMAIN_KEY,
            found: label,
        });
    }
    let file: DomainKeyFile = crate::cbor::decode(&bytes, 4096, "domain key")
        .map_err(|e| ArmorError::BadKey(e.to_string()))?;
    let seed: [u8; 32] = file
        .seed
        .try_into()
        .map_err(|_| ArmorError::BadKey("the secret is not 32 bytes".to_owned()))?;
    Ok((file.name, Keypair::from_seed(&seed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Timestamp;

    #[test]
    fn envelopes_survive_armor_with_comments_and_indentation() {
        let key = Keypair::from_seed(&[1; 32]);
        let t = Timestamp::from_unix_secs(1_795_000_000);
        let env = Envelope::seal(&key, 1, t, t, Kind::CERTIFICATE, vec![7; 300]);
        let text = armor_envelope(&env, &["hello".to_owned()]);
        assert!(text.starts_with("# hello\n-----BEGIN STARLING CERTIFICATE-----\n"));
        assert!(text
            .lines()
            .all(|l| l.len() <= 64 || l.starts_with('-') || l.starts_with('#')));
        let indented: String = text.lines().map(|l| format!("   {l}\n")).collect();
        let (label, bytes) = dearmor(&format!("mail preamble\n{indented}signature\n")).unwrap();
        assert_eq!(label, "CERTIFICATE");
        assert_eq!(Envelope::decode(&bytes).unwrap(), env);
    }

    #[test]
    fn broken_armor_says_what_is_wrong() {
        assert_eq!(dearmor("nothing here").unwrap_err(), ArmorError::NoBegin);
        assert_eq!(
            dearmor("-----BEGIN STARLING CERTIFICATE-----\nAAAA\n").unwrap_err(),
            ArmorError::NoEnd("CERTIFICATE".to_owned())
        );
        assert!(matches!(
            dearmor("-----BEGIN STARLING X-----\n!!!\n-----END STARLING X-----\n").unwrap_err(),
            ArmorError::NotBase64 { .. }
        ));
    }

    #[test]
    fn domain_key_round_trips_and_shows_its_public_key() {
        let key = Keypair::from_seed(&[3; 32]);
        let text = armor_domain_key("physics", &key);
        assert!(text.contains(&key.public().to_string()));
        let (name, back) = dearmor_domain_key(&text).unwrap();
        assert_eq!(name, "physics");
        assert_eq!(back.public(), key.public());
        let cert = armor("CERTIFICATE", b"x", &[]);
        assert!(matches!(
            dearmor_domain_key(&cert),
            Err(ArmorError::WrongLabel { .. })
        ));
    }
}
