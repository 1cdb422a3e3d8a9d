//! An agent's data directory: its secret key, the domain certificates
//! installed for it, and where its store lives.
//!
//! ```text
//! <data>/agent.key          the agent's ed25519 key, mode 0600, made on first use
//! <data>/certs/<domain>.cert certificates admitting this agent, one per domain
//! <data>/store/             the sled store
//! ```
//!
//! The key and certificates are plain files rather than store records so that
//! `starling id` and `starling domain install` work while an agent holds the
//! store open, and so an administrator can admit a machine before its agent
//! first runs.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use starling_protocol::identity::{armor, AgentId, Certificate, Envelope, Keypair};

/// The environment variable that overrides the default data directory.
pub const DATA_DIR_ENV: &str = "STARLING_DATA_DIR";

const KEY_FILE: &str = "agent.key";
const KEY_LABEL: &str = "AGENT KEY";
const CERTS_DIR: &str = "certs";
const STORE_DIR: &str = "store";
/// Key and certificate files are tiny; refuse to read anything large.
const MAX_SMALL_FILE: u64 = 64 * 1024;

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
    #[error("no randomness from the operating system to make a key: {0}")]
    Random(String),
    #[error(
        "the certificate admits agent {admitted}, but this data directory belongs to agent {ours}"
    )]
    NotOurCertificate { admitted: AgentId, ours: AgentId },
}

/// An installed certificate file and what it holds.
#[derive(Debug)]
pub struct InstalledCertificate {
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

    /// Opens `root`, creating it (mode 0700) if it does not exist.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, Error> {
        let root = root.into();
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
                format!("agent id: {}", key.agent_id()),
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
        Ok(Keypair::from_seed(&seed))
    }

    /// Every file in `certs/`, read and decoded but not verified: the caller
    /// decides what is trusted and valid now.
    pub fn certificates(&self) -> Result<Vec<InstalledCertificate>, Error> {
        let dir = self.certs_path();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&dir, "listing certificates")(e)),
        };
        let mut certs = Vec::new();
        for entry in entries {
            let path = entry.map_err(io(&dir, "listing certificates"))?.path();
            if path.extension().is_none_or(|e| e != "cert") {
                continue;
            }
            let envelope = read_small(&path, "reading a certificate")
                .map_err(|e| error_chain(&e))
                .and_then(|text| armor::dearmor(&text).map_err(|e| e.to_string()))
                .and_then(|(_, bytes)| Envelope::decode(&bytes).map_err(|e| e.to_string()));
            certs.push(InstalledCertificate { path, envelope });
        }
        certs.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(certs)
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
        let dir = self.certs_path();
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(io(&dir, "creating the certificates directory"))?;
        // Domain names are checked to be DNS-like, so they are safe file names.
        let path = dir.join(format!("{}.cert", certificate.domain));
        let temp = temp_name(&dir, &format!("{}.cert", certificate.domain));
        let text = armor::armor_envelope(
            envelope,
            &[format!(
                "domain {} admits {} as {}",
                certificate.domain, certificate.agent, certificate.roles
            )],
        );
        write_private(&temp, text.as_bytes())?;
        fs::rename(&temp, &path).map_err(io(&path, "installing the certificate"))?;
        sync_dir(&dir)?;
        Ok(path)
    }
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
    let meta = fs::metadata(path).map_err(io(path, action))?;
    if meta.len() > MAX_SMALL_FILE {
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
}
