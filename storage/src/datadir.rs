//! An agent's data directory: its secret key, the domain certificates
//! installed for it, its domain's trust policy, and where its store lives.
//!
//! ```text
//! <data>/agent.key               the agent's ed25519 key, mode 0600, made on first use
//! <data>/certs/<domain>.cert     certificates admitting this agent, one per domain
//! <data>/policies/<domain>.policy the trust policy of a domain admitting this agent
//! <data>/store/                  the sled store
//! ```
//!
//! The directory is 0700, and so are its subdirectories. An agent running
//! as root serves every local user on its control socket, which lives in
//! the directory: [`DataDir::open_to_local_users`] makes the directory
//! itself 0711 (others may pass through to the socket, not list or read
//! anything) and keeps the key 0600 and the store, certificates and
//! policies 0700.
//!
//! The key, certificates and policies are plain files rather than store
//! records so that `starling id` and `starling domain install` work while an
//! agent holds the store open, and so an administrator can admit a machine
//! before its agent first runs. Signed files are armored text, written to a
//! temporary file and renamed into place, so a reader sees the old file or
//! the new one, never half of one.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use starling_protocol::identity::{
    armor, AgentId, Certificate, DomainPolicy, Envelope, Freshness, Keypair, PublicKey, Timestamp,
};

/// The environment variable that overrides the default data directory.
pub const DATA_DIR_ENV: &str = "STARLING_DATA_DIR";

const KEY_FILE: &str = "agent.key";
const KEY_LABEL: &str = "AGENT KEY";
/// The comment line of the key file that names the agent id it was made
/// for, checked at every read.
const AGENT_ID_COMMENT: &str = "agent id:";
const CERTS_DIR: &str = "certs";
const POLICIES_DIR: &str = "policies";
const STORE_DIR: &str = "store";
/// Key and certificate files are tiny; refuse to read anything large.
const MAX_SMALL_FILE: u64 = 64 * 1024;
/// A policy may list many domains (up to
/// [`starling_protocol::identity::MAX_POLICY_LEN`] of body), armored.
const MAX_POLICY_FILE: u64 = armor::MAX_ARMORED_LEN as u64;

/// What went wrong with the data directory. Messages name the path.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {action}")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("no data directory: set {DATA_DIR_ENV} or HOME, or pass --data-dir")]
    NoDefault,
    #[error("agent key {path} can be read by other users (mode {mode:o}); run: chmod 600 {path}")]
    KeyExposed { path: PathBuf, mode: u32 },
    #[error("agent key {path} is damaged: {reason}; move it away to make a new identity (certificates for the old one stop working)")]
    KeyDamaged { path: PathBuf, reason: String },
    #[error("agent key {path} is {what}, not a key file; move it away (a new key and identity are then made) or put the agent's key file there")]
    KeyNotAFile { path: PathBuf, what: &'static str },
    #[error(
        "agent key {path} holds the key of agent {holds}, but its `# agent id` line says \
         {says}: the key was replaced or damaged. Restore the key of {says} (its certificates \
         admit that id), or, to make {holds} this agent's identity, correct that line"
    )]
    KeyMismatch {
        path: PathBuf,
        holds: AgentId,
        says: String,
    },
    #[error("no randomness from the operating system to make a key: {0}")]
    Random(String),
    #[error(
        "the certificate admits agent {admitted}, but this data directory belongs to agent {ours}"
    )]
    NotOurCertificate { admitted: AgentId, ours: AgentId },
    #[error(
        "the policy of domain {domain} is signed by key {signer}, but this agent's certificate \
         for {domain} names the domain key {certified}: install the policy signed by \
         {certified}, or first the certificate from the domain that signed this policy"
    )]
    PolicyNotFromOurDomain {
        domain: String,
        signer: PublicKey,
        certified: PublicKey,
    },
    #[error(
        "the policy of domain {domain} (signed by key {signer}) cannot be checked: no valid \
         certificate for {domain} is installed for this agent; install the certificate first \
         (starling domain install CERTFILE)"
    )]
    PolicyWithoutCertificate { domain: String, signer: PublicKey },
    #[error(
        "the policy of domain {domain} has sequence number {offered}, older than the one \
         installed ({installed}, in {path}); a newer policy replaces an older one, never the \
         reverse"
    )]
    OlderPolicy {
        domain: String,
        offered: u64,
        installed: u64,
        path: PathBuf,
    },
}

/// An installed certificate file and what it holds.
#[derive(Debug)]
pub struct InstalledCertificate {
    pub path: PathBuf,
    /// The envelope, or why the file could not be read as one.
    pub envelope: Result<Envelope, String>,
}

/// An installed policy file and what it holds.
#[derive(Debug)]
pub struct InstalledPolicy {
    pub path: PathBuf,
    /// The envelope, or why the file could not be read as one.
    pub envelope: Result<Envelope, String>,
}

/// An agent's data directory.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io {
        path: path.to_owned(),
        action,
        source,
    }
}

impl DataDir {
    /// `$STARLING_DATA_DIR`, else the user's data directory
    /// (`~/.local/share/starling` on Linux).
    pub fn default_path() -> Result<PathBuf, Error> {
        if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
        dirs::data_dir()
            .map(|d| d.join("starling"))
            .ok_or(Error::NoDefault)
    }

    /// Opens `root`, creating it (mode 0700) if it does not exist. A
    /// relative `root` is made absolute against the current directory
    /// first: the agent's jobs run in other directories (their sandboxes)
    /// and their reapers write into the data directory from there.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, Error> {
        let root = root.into();
        let root = std::path::absolute(&root).map_err(io(&root, "resolving the data directory"))?;
        if !root.exists() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&root)
                .map_err(io(&root, "creating the data directory"))?;
        }
        Ok(Self { root })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Lets other local users reach files in the directory whose names they
    /// know (its control socket), for an agent running as root: the
    /// directory becomes 0711, and the store, certificates and policies
    /// directories are made (if missing) or set 0700 so that nothing else
    /// opens with it. The key is checked 0600 whenever it is read.
    pub fn open_to_local_users(&self) -> Result<(), Error> {
        for dir in [self.store_path(), self.certs_path(), self.policies_path()] {
            match fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
                        .map_err(io(&dir, "making it private (0700)"))?;
                }
                Err(e) => return Err(io(&dir, "creating it private (0700)")(e)),
            }
        }
        fs::set_permissions(&self.root, fs::Permissions::from_mode(0o711)).map_err(io(
            &self.root,
            "letting local users reach the socket (0711)",
        ))
    }

    /// Where the sled store lives.
    pub fn store_path(&self) -> PathBuf {
        self.root.join(STORE_DIR)
    }

    pub fn key_path(&self) -> PathBuf {
        self.root.join(KEY_FILE)
    }

    pub fn certs_path(&self) -> PathBuf {
        self.root.join(CERTS_DIR)
    }

    pub fn policies_path(&self) -> PathBuf {
        self.root.join(POLICIES_DIR)
    }

    /// The agent's key, made on first use. Two processes starting at once
    /// agree on one key: the file appears whole or not at all.
    pub fn agent_key(&self) -> Result<Keypair, Error> {
        let path = self.key_path();
        match self.read_key(&path) {
            Ok(key) => return Ok(key),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let key = Keypair::generate().map_err(|e| Error::Random(e.to_string()))?;
        let text = armor::armor(
            KEY_LABEL,
            &key.seed(),
            &[
                "Starling agent key. Keep this file secret.".to_owned(),
                format!("{AGENT_ID_COMMENT} {}", key.agent_id()),
            ],
        );
        let temp = temp_name(&self.root, KEY_FILE);
        write_private(&temp, text.as_bytes())?;
        // hard_link fails if the key appeared meanwhile: then theirs wins.
        let linked = fs::hard_link(&temp, &path);
        let _ = fs::remove_file(&temp);
        match linked {
            Ok(()) => {
                sync_dir(&self.root)?;
                Ok(key)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => self.read_key(&path),
            Err(e) => Err(io(&path, "creating the agent key")(e)),
        }
    }

    fn read_key(&self, path: &Path) -> Result<Keypair, Error> {
        let meta = fs::metadata(path).map_err(io(path, "reading the agent key"))?;
        if !meta.is_file() {
            return Err(Error::KeyNotAFile {
                path: path.to_owned(),
                what: file_kind(&meta),
            });
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(Error::KeyExposed {
                path: path.to_owned(),
                mode,
            });
        }
        let text = read_small(path, "reading the agent key")?;
        let damaged = |reason: String| Error::KeyDamaged {
            path: path.to_owned(),
            reason,
        };
        let (label, bytes) = armor::dearmor(&text).map_err(|e| damaged(e.to_string()))?;
        if label != KEY_LABEL {
            return Err(damaged(format!(
                "it holds a {label:?} block, not an agent key"
            )));
        }
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|_| damaged("the secret is not 32 bytes".to_owned()))?;
        let key = Keypair::from_seed(&seed);
        // The id written beside the key when it was made: a key that no
        // longer matches it is not silently a new identity.
        let said = text
            .lines()
            .map(str::trim)
            .take_while(|l| !l.starts_with("-----BEGIN"))
            .find_map(|l| l.strip_prefix('#')?.trim().strip_prefix(AGENT_ID_COMMENT));
        if let Some(said) = said {
            let said = said.trim();
            let holds = key.agent_id();
            match said.parse::<AgentId>() {
                Ok(id) if id == holds => {}
                Ok(_) => {
                    return Err(Error::KeyMismatch {
                        path: path.to_owned(),
                        holds,
                        says: said.to_owned(),
                    })
                }
                Err(e) => {
                    return Err(damaged(format!(
                        "its `# agent id` line holds {:?}, not an agent id ({e})",
                        said.chars().take(80).collect::<String>()
                    )))
                }
            }
        }
        Ok(key)
    }

    /// Every file in `certs/`, read and decoded but not verified: the caller
    /// decides what is trusted and valid now.
    pub fn certificates(&self) -> Result<Vec<InstalledCertificate>, Error> {
        Ok(read_envelopes(&self.root, &CERTIFICATE_FILES)?
            .into_iter()
            .map(|(path, envelope)| InstalledCertificate { path, envelope })
            .collect())
    }

    /// Every file in `policies/`, read and decoded but not verified: the
    /// caller decides what is trusted and valid now.
    pub fn policies(&self) -> Result<Vec<InstalledPolicy>, Error> {
        Ok(read_envelopes(&self.root, &POLICY_FILES)?
            .into_iter()
            .map(|(path, envelope)| InstalledPolicy { path, envelope })
            .collect())
    }

    /// Installs `certificate` (already opened from `envelope`) as this
    /// agent's certificate for its domain, replacing an earlier one.
    pub fn install_certificate(
        &self,
        envelope: &Envelope,
        certificate: &Certificate,
    ) -> Result<PathBuf, Error> {
        let ours = self.agent_key()?.agent_id();
        if certificate.agent != ours {
            return Err(Error::NotOurCertificate {
                admitted: certificate.agent,
                ours,
            });
        }
        let text = armor::armor_envelope(
            envelope,
            &[format!(
                "domain {} admits {} as {}",
                certificate.domain, certificate.agent, certificate.roles
            )],
        );
        // Domain names are checked to be DNS-like, so they are safe file names.
        install_file(
            &self.certs_path(),
            &format!("{}.cert", certificate.domain),
            &text,
            "installing the certificate",
        )
    }

    /// Installs `policy` (already opened from `envelope`) as the trust policy
    /// of its domain, replacing an earlier one.
    ///
    /// The policy must be signed by the domain key named in this agent's
    /// valid certificate for the same domain: an agent enforces its own
    /// domain's policy, and only that domain's administrator may write it.
    /// A policy with a lower sequence number than the installed one is
    /// refused, as agents refuse it on the wire.
    pub fn install_policy(
        &self,
        envelope: &Envelope,
        policy: &DomainPolicy,
    ) -> Result<PathBuf, Error> {
        let signer = envelope.header().signer;
        let ours = self.agent_key()?.agent_id();
        let now = Timestamp::now();
        let freshness = Freshness::default();
        let certified: Vec<PublicKey> = self
            .certificates()?
            .iter()
            .filter_map(|c| c.envelope.as_ref().ok())
            .filter_map(|e| Certificate::open(e, now, &freshness).ok())
            .filter(|c| c.domain == policy.domain && c.agent == ours)
            .map(|c| c.domain_key)
            .collect();
        if !certified.contains(&signer) {
            return Err(match certified.first() {
                Some(&certified) => Error::PolicyNotFromOurDomain {
                    domain: policy.domain.clone(),
                    signer,
                    certified,
                },
                None => Error::PolicyWithoutCertificate {
                    domain: policy.domain.clone(),
                    signer,
                },
            });
        }
        let name = format!("{}.policy", policy.domain);
        let path = self.policies_path().join(&name);
        let installed = self
            .policies()?
            .into_iter()
            .filter(|p| p.path == path)
            .find_map(|p| p.envelope.ok());
        if let Some(installed) = installed {
            let (offered, installed_seq) = (envelope.header().seq, installed.header().seq);
            if installed.header().signer == signer && offered < installed_seq {
                return Err(Error::OlderPolicy {
                    domain: policy.domain.clone(),
                    offered,
                    installed: installed_seq,
                    path,
                });
            }
        }
        let names: Vec<&str> = policy.trusts.iter().map(|t| t.name.as_str()).collect();
        let summary = if names.is_empty() {
            format!("domain {} trusts no other domain", policy.domain)
        } else {
            format!("domain {} trusts {}", policy.domain, names.join(", "))
        };
        let text = armor::armor_envelope(envelope, &[summary]);
        install_file(&self.policies_path(), &name, &text, "installing the policy")
    }
}

/// One kind of signed file, kept in its own directory.
struct SignedFiles {
    dir: &'static str,
    ext: &'static str,
    max_len: u64,
    listing: &'static str,
    reading: &'static str,
}

const CERTIFICATE_FILES: SignedFiles = SignedFiles {
    dir: CERTS_DIR,
    ext: "cert",
    max_len: MAX_SMALL_FILE,
    listing: "listing certificates",
    reading: "reading a certificate",
};

const POLICY_FILES: SignedFiles = SignedFiles {
    dir: POLICIES_DIR,
    ext: "policy",
    max_len: MAX_POLICY_FILE,
    listing: "listing policies",
    reading: "reading a policy",
};

/// A signed file's path and its envelope, or why it could not be read.
type SignedFile = (PathBuf, Result<Envelope, String>);

/// Reads every file of one kind in the data directory `root` as an armored
/// envelope, sorted by path. A file that cannot be read is reported in its
/// entry, not as an error, so one damaged file does not hide the others.
fn read_envelopes(root: &Path, kind: &SignedFiles) -> Result<Vec<SignedFile>, Error> {
    let dir = root.join(kind.dir);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(&dir, kind.listing)(e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let path = entry.map_err(io(&dir, kind.listing))?.path();
        if path.extension().is_none_or(|e| e != kind.ext) {
            continue;
        }
        let envelope = read_text(&path, kind.max_len, kind.reading)
            .map_err(|e| error_chain(&e))
            .and_then(|text| armor::dearmor(&text).map_err(|e| e.to_string()))
            .and_then(|(_, bytes)| Envelope::decode(&bytes).map_err(|e| e.to_string()));
        found.push((path, envelope));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// Writes `text` to `dir/name` (mode 0600) through a temporary file and a
/// rename, then syncs the directory so the rename survives a crash.
fn install_file(
    dir: &Path,
    name: &str,
    text: &str,
    action: &'static str,
) -> Result<PathBuf, Error> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io(dir, "creating the directory"))?;
    let path = dir.join(name);
    let temp = temp_name(dir, name);
    write_private(&temp, text.as_bytes())?;
    if let Err(e) = fs::rename(&temp, &path) {
        let _ = fs::remove_file(&temp);
        return Err(io(&path, action)(e));
    }
    sync_dir(dir)?;
    Ok(path)
}

/// An error and its sources on one line, for reports that keep going.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A name for a temporary file next to `name`, unique across processes and
/// threads.
fn temp_name(dir: &Path, name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// What a file that should be a regular one is instead, for messages.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Writes a new file readable only by its owner, and syncs it.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io(path, "creating"))?;
    file.write_all(bytes).map_err(io(path, "writing"))?;
    file.sync_all().map_err(io(path, "syncing"))
}

fn sync_dir(dir: &Path) -> Result<(), Error> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir, "syncing the directory"))
}

fn read_small(path: &Path, action: &'static str) -> Result<String, Error> {
    read_text(path, MAX_SMALL_FILE, action)
}

fn read_text(path: &Path, max_len: u64, action: &'static str) -> Result<String, Error> {
    let meta = fs::metadata(path).map_err(io(path, action))?;
    if meta.len() > max_len {
        return Err(Error::Io {
            path: path.to_owned(),
            action,
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} bytes is too large for this file", meta.len()),
            ),
        });
    }
    fs::read_to_string(path).map_err(io(path, action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::identity::{Freshness, Timestamp};

    #[test]
    fn key_is_made_once_private_and_stable() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path().join("data")).unwrap();
        let first = data.agent_key().unwrap();
        let mode = fs::metadata(data.key_path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(data.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert_eq!(data.agent_key().unwrap().agent_id(), first.agent_id());
        let text = fs::read_to_string(data.key_path()).unwrap();
        assert!(text.contains(&first.agent_id().to_string()));
    }

    #[test]
    fn opened_to_local_users_only_the_directory_is_passable() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path().join("d")).unwrap();
        data.agent_key().unwrap();
        fs::create_dir(data.store_path()).unwrap();
        fs::set_permissions(data.store_path(), fs::Permissions::from_mode(0o755)).unwrap();
        data.open_to_local_users().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(data.path()), 0o711);
        assert_eq!(mode(&data.key_path()), 0o600);
        assert_eq!(mode(&data.store_path()), 0o700);
        assert_eq!(mode(&data.certs_path()), 0o700);
        assert_eq!(mode(&data.policies_path()), 0o700);
    }

    #[test]
    fn concurrent_first_starts_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let ids: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        DataDir::open(dir.path())
                            .unwrap()
                            .agent_key()
                            .unwrap()
                            .agent_id()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn exposed_or_damaged_keys_are_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        data.agent_key().unwrap();
        fs::set_permissions(data.key_path(), fs::Permissions::from_mode(0o644)).unwrap();
        let err = data.agent_key().unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
        fs::set_permissions(data.key_path(), fs::Permissions::from_mode(0o600)).unwrap();
        fs::write(data.key_path(), "garbage").unwrap();
        let err = data.agent_key().unwrap_err().to_string();
        assert!(err.contains("is damaged"), "{err}");
        assert_eq!(fs::read_to_string(data.key_path()).unwrap(), "garbage");
    }

    #[test]
    fn a_key_that_no_longer_matches_its_agent_id_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let first = data.agent_key().unwrap().agent_id();
        let text = fs::read_to_string(data.key_path()).unwrap();
        // Another key's block under the first key's comment.
        let other = Keypair::from_seed(&[9; 32]);
        let block = armor::armor(KEY_LABEL, &other.seed(), &[]);
        let comment: String = text
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        fs::write(data.key_path(), format!("{comment}{block}")).unwrap();
        let err = data.agent_key().unwrap_err();
        assert!(matches!(err, Error::KeyMismatch { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&data.key_path().display().to_string()),
            "{msg}"
        );
        assert!(msg.contains(&first.to_string()), "{msg}");
        assert!(msg.contains(&other.agent_id().to_string()), "{msg}");
        assert!(msg.contains("# agent id"), "{msg}");
        // The file is left as it is.
        assert!(fs::read_to_string(data.key_path())
            .unwrap()
            .contains(&block));
        // A mangled id line is damage; no id line at all is accepted.
        fs::write(data.key_path(), format!("# agent id: 12xyz\n{block}")).unwrap();
        let err = data.agent_key().unwrap_err().to_string();
        assert!(err.contains("not an agent id"), "{err}");
        fs::write(data.key_path(), &block).unwrap();
        assert_eq!(data.agent_key().unwrap().agent_id(), other.agent_id());
    }

    #[test]
    fn a_key_path_that_is_a_directory_is_named_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        fs::create_dir(data.key_path()).unwrap();
        let err = data.agent_key().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("is a directory, not a key file"), "{msg}");
        assert!(!msg.contains("mode"), "{msg}");
    }

    #[test]
    fn certificates_install_for_this_agent_only() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let me = data.agent_key().unwrap().agent_id();
        let domain = Keypair::from_seed(&[1; 32]);
        let now = Timestamp::now();
        let cert_for = |agent| Certificate {
            domain: "physics".to_owned(),
            domain_key: domain.public(),
            agent,
            roles: "execute".parse().unwrap(),
            valid_from: now,
            valid_until: now.saturating_add_millis(86_400_000),
        };
        let mine = cert_for(me);
        let envelope = mine.issue(&domain, 1).unwrap();
        let path = data.install_certificate(&envelope, &mine).unwrap();
        assert_eq!(path.file_name().unwrap(), "physics.cert");
        let installed = data.certificates().unwrap();
        assert_eq!(installed.len(), 1);
        let back = installed[0].envelope.as_ref().unwrap();
        assert_eq!(
            Certificate::open(back, now, &Freshness::default()).unwrap(),
            mine
        );

        let other = cert_for(Keypair::from_seed(&[2; 32]).agent_id());
        let err = data
            .install_certificate(&other.issue(&domain, 2).unwrap(), &other)
            .unwrap_err();
        assert!(matches!(err, Error::NotOurCertificate { .. }));

        fs::write(data.certs_path().join("broken.cert"), "junk").unwrap();
        let installed = data.certificates().unwrap();
        assert_eq!(installed.len(), 2);
        assert!(installed[0]
            .envelope
            .as_ref()
            .unwrap_err()
            .contains("BEGIN"));
    }

    /// A data directory admitted into `physics` by `domain`.
    fn admitted(domain: &Keypair) -> (tempfile::TempDir, DataDir) {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::open(dir.path()).unwrap();
        let now = Timestamp::now();
        let cert = Certificate {
            domain: "physics".to_owned(),
            domain_key: domain.public(),
            agent: data.agent_key().unwrap().agent_id(),
            roles: "execute".parse().unwrap(),
            valid_from: now,
            valid_until: now.saturating_add_millis(86_400_000),
        };
        data.install_certificate(&cert.issue(domain, 1).unwrap(), &cert)
            .unwrap();
        (dir, data)
    }

    fn policy_of(name: &str, trusts: &[(&str, &Keypair)]) -> DomainPolicy {
        DomainPolicy {
            domain: name.to_owned(),
            trusts: trusts
                .iter()
                .map(|(name, key)| starling_protocol::identity::TrustedDomain {
                    name: (*name).to_owned(),
                    key: key.public(),
                    accept: None,
                    max_slots: None,
                    max_fraction: None,
                    max_gpus: None,
                    priority_factor: 1.0,
                    export: Default::default(),
                    store_mib: None,
                })
                .collect(),
            bootstrap: Vec::new(),
        }
    }

    fn sign(policy: &DomainPolicy, key: &Keypair, seq: u64) -> Envelope {
        let now = Timestamp::now();
        policy
            .sign(key, seq, now, now.saturating_add_millis(86_400_000))
            .unwrap()
    }

    #[test]
    fn policies_install_from_our_domain_key_and_read_back() {
        let physics = Keypair::from_seed(&[1; 32]);
        let chem = Keypair::from_seed(&[2; 32]);
        let (_dir, data) = admitted(&physics);
        assert!(data.policies().unwrap().is_empty());

        let policy = policy_of("physics", &[("chem", &chem)]);
        let path = data
            .install_policy(&sign(&policy, &physics, 10), &policy)
            .unwrap();
        assert_eq!(path, data.policies_path().join("physics.policy"));
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("BEGIN STARLING"), "{text}");
        assert!(text.contains("domain physics trusts chem"), "{text}");

        let installed = data.policies().unwrap();
        assert_eq!(installed.len(), 1);
        let back = installed[0].envelope.as_ref().unwrap();
        assert_eq!(back.header().signer, physics.public());
        assert_eq!(
            DomainPolicy::open(back, Timestamp::now(), &Freshness::default()).unwrap(),
            policy
        );

        // A newer policy replaces it whole; the same one again is fine.
        let newer = policy_of("physics", &[]);
        data.install_policy(&sign(&newer, &physics, 11), &newer)
            .unwrap();
        data.install_policy(&sign(&newer, &physics, 11), &newer)
            .unwrap();
        let installed = data.policies().unwrap();
        assert_eq!(installed.len(), 1);
        let back = installed[0].envelope.as_ref().unwrap();
        assert_eq!(back.header().seq, 11);
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(data.policies_path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["physics.policy"]);
    }

    #[test]
    fn policies_from_another_key_or_without_a_certificate_or_older_are_refused() {
        let physics = Keypair::from_seed(&[1; 32]);
        let impostor = Keypair::from_seed(&[3; 32]);
        let (_dir, data) = admitted(&physics);

        // Signed by a key that claims the name "physics" but did not admit us.
        let policy = policy_of("physics", &[]);
        let err = data
            .install_policy(&sign(&policy, &impostor, 1), &policy)
            .unwrap_err();
        assert!(matches!(err, Error::PolicyNotFromOurDomain { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains(&impostor.public().to_string()), "{msg}");
        assert!(msg.contains(&physics.public().to_string()), "{msg}");

        // Another domain's policy: this agent holds no certificate for it.
        let chem = policy_of("chem", &[]);
        let err = data
            .install_policy(&sign(&chem, &impostor, 1), &chem)
            .unwrap_err();
        assert!(
            matches!(err, Error::PolicyWithoutCertificate { ref domain, .. } if domain == "chem"),
            "{err}"
        );
        assert!(err.to_string().contains("install the certificate first"));
        assert!(data.policies().unwrap().is_empty());

        // An older policy never replaces a newer one.
        data.install_policy(&sign(&policy, &physics, 5), &policy)
            .unwrap();
        let err = data
            .install_policy(&sign(&policy, &physics, 4), &policy)
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::OlderPolicy {
                    offered: 4,
                    installed: 5,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn damaged_policy_files_are_reported_and_replaceable() {
        let physics = Keypair::from_seed(&[1; 32]);
        let (_dir, data) = admitted(&physics);
        let policy = policy_of("physics", &[]);
        let path = data
            .install_policy(&sign(&policy, &physics, 7), &policy)
            .unwrap();

        // Cut the file short, and add one that is not armor at all.
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, &text[..text.len() / 2]).unwrap();
        fs::write(data.policies_path().join("junk.policy"), "junk").unwrap();
        fs::write(data.policies_path().join("notes.txt"), "ignored").unwrap();
        let installed = data.policies().unwrap();
        assert_eq!(installed.len(), 2, "{installed:?}");
        assert!(
            installed.iter().all(|p| p.envelope.is_err()),
            "{installed:?}"
        );
        assert!(installed[0].path.ends_with("junk.policy"));
        assert!(installed[0]
            .envelope
            .as_ref()
            .unwrap_err()
            .contains("BEGIN"));

        // A damaged file does not block installing a good policy over it,
        // whatever its sequence number.
        data.install_policy(&sign(&policy, &physics, 1), &policy)
            .unwrap();
        let installed = data.policies().unwrap();
        let good = installed.iter().find(|p| p.path == path).unwrap();
        assert_eq!(good.envelope.as_ref().unwrap().header().seq, 1);

        // A huge file is refused by size, not read.
        fs::write(&path, vec![b'A'; MAX_POLICY_FILE as usize + 1]).unwrap();
        let installed = data.policies().unwrap();
        let huge = installed.iter().find(|p| p.path == path).unwrap();
        assert!(
            huge.envelope.as_ref().unwrap_err().contains("too large"),
            "{huge:?}"
        );
    }
}
