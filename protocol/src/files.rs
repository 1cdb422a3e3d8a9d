//! Files on the wire, as every protocol that moves them names them: a
//! [`FileName`] (a checked path inside a sandbox), a blake3
//! [`Hash`](struct@Hash), the permission bits a file may carry
//! ([`MODE_MASK`]) and the limits shared by transfers and checkpoints
//! (chunk length, files per list, name lengths).
//!
//! File names are checked when decoded and when built ([`FileName::new`]):
//! relative, `/`-separated, no `..`, `.` or empty components, no NUL, at
//! most [`MAX_FILE_NAME_LEN`] bytes with components of at most
//! [`MAX_COMPONENT_LEN`]. A peer can therefore never name a file outside the
//! sandbox it is written into.
//!
//! This is vocabulary only: no message and no protocol lives here. The
//! transfer and checkpoint protocols build on it, and the transfer module
//! re-exports it so that `transfer::FileName` and the rest keep their
//! paths; it must not use either of them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::wire::{self, Error};

/// Largest chunk of file data one response carries (1 MiB).
pub const MAX_CHUNK_LEN: u32 = 1 << 20;

/// Most files one transfer, or one checkpoint, may list.
pub const MAX_FILES: usize = 10_000;

/// Longest file name (a relative path), in bytes.
pub const MAX_FILE_NAME_LEN: usize = 4096;

/// Longest component of a file name, in bytes (as Linux's `NAME_MAX`).
pub const MAX_COMPONENT_LEN: usize = 255;

/// Permission bits a file may carry: `rwx` for user, group and others. A
/// peer cannot ask for setuid, setgid or sticky files.
pub const MODE_MASK: u32 = 0o777;

/// A blake3 hash of a whole file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Hash(serde_bytes::ByteArray<32>);

impl Hash {
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(serde_bytes::ByteArray::new(bytes))
    }
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        wire::write_hex(f, self.as_bytes())
    }
}
impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({self})")
    }
}

/// A file's name inside a sandbox: a checked relative path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FileName(String);

impl FileName {
    /// Checks `name` against the rules in the module documentation.
    pub fn new(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        let bad = |why: &str| Error::Invalid {
            field: "file name",
            reason: format!("{:?} {why}", shown(&name)),
        };
        if name.is_empty() {
            return Err(bad("is empty"));
        }
        if name.len() > MAX_FILE_NAME_LEN {
            return Err(bad(&format!(
                "is {} bytes, more than the limit of {MAX_FILE_NAME_LEN}",
                name.len()
            )));
        }
        if name.contains('\0') {
            return Err(bad("contains a NUL byte"));
        }
        if name.starts_with('/') {
            return Err(bad(
                "is absolute; file names must be relative to the sandbox",
            ));
        }
        for component in name.split('/') {
            match component {
                "" => return Err(bad("has an empty component ('//' or a trailing '/')")),
                "." | ".." => {
                    return Err(bad(&format!(
                        "has a {component:?} component; name files without '.' or '..'"
                    )))
                }
                c if c.len() > MAX_COMPONENT_LEN => {
                    return Err(bad(&format!(
                        "has a component of {} bytes, more than the limit of {MAX_COMPONENT_LEN}",
                        c.len()
                    )))
                }
                _ => {}
            }
        }
        Ok(Self(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// At most 100 characters of a name, for error messages.
pub(crate) fn shown(name: &str) -> &str {
    name.char_indices()
        .nth(100)
        .map_or(name, |(i, _)| &name[..i])
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for FileName {
    type Error = Error;
    fn try_from(name: String) -> Result<Self, Error> {
        Self::new(name)
    }
}

impl From<FileName> for String {
    fn from(name: FileName) -> String {
        name.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_error(name: &str) -> String {
        FileName::new(name).unwrap_err().to_string()
    }

    #[test]
    fn ordinary_relative_names_are_accepted() {
        for name in [
            "input.dat",
            "data/run 1/x.csv",
            ".hidden",
            "a..b",
            "..a",
            "é/ü",
        ] {
            assert_eq!(FileName::new(name).unwrap().as_str(), name);
        }
        let longest = vec!["a".repeat(MAX_COMPONENT_LEN); 16].join("/");
        assert!(FileName::new(longest).is_ok());
    }

    #[test]
    fn names_escaping_the_sandbox_are_refused_naming_the_file() {
        assert_eq!(
            name_error("../etc/passwd"),
            "invalid file name: \"../etc/passwd\" has a \"..\" component; name files without '.' or '..'"
        );
        assert!(name_error("a/../../b").contains("\"..\" component"));
        assert!(name_error("/etc/passwd").contains("\"/etc/passwd\" is absolute"));
        assert!(name_error("./a").contains("\".\" component"));
        assert!(name_error("a//b").contains("empty component"));
        assert!(name_error("dir/").contains("empty component"));
        assert!(name_error("").contains("is empty"));
        assert!(name_error("a\0b").contains("NUL"));
    }

    #[test]
    fn long_names_and_components_are_refused() {
        let err = name_error(&"a".repeat(MAX_COMPONENT_LEN + 1));
        assert!(
            err.contains("component of 256 bytes, more than the limit of 255"),
            "{err}"
        );
        let err = name_error(&vec!["a"; 3000].join("/"));
        assert!(
            err.contains("5999 bytes, more than the limit of 4096"),
            "{err}"
        );
    }

    #[test]
    fn names_are_checked_when_decoded() {
        let bytes = crate::cbor::encode("../x");
        let err = crate::cbor::decode::<FileName>(&bytes, 100, "file name").unwrap_err();
        assert!(err.to_string().contains("\"..\" component"), "{err}");
    }
}
