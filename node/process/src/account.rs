//! Local accounts jobs run as. Which one a job gets is
//! [`starling_policies::run_as`]'s decision; this module finds and makes
//! them.
//!
//! An agent running as root never runs a job as root. By default it runs
//! each job as a dedicated slot account (`starling-slot1`,
//! `starling-slot2`, ..., HTCondor's `SLOT<N>_USER`), one per job running
//! at once on the machine ([`SlotAccounts`]): system accounts with no home
//! and no login shell, made with `useradd` when the agent first starts
//! (as many as the machine has CPUs) and later as more jobs run at once.
//! Agents sharing a machine (a testnet) share the accounts: each running
//! job holds a lock on its account's file in [`SLOT_LOCKS`], which the
//! kernel lets go when the agent dies, so no two jobs anywhere on the
//! machine run as the same slot account. Where none is free or can be
//! made, jobs run as `nobody`, each still in a sandbox of its own. A configured
//! account (`[jobs] account`) or, for the machine's own domain, the job's
//! owner (`[jobs] run_as_owner`) replace them. The job's sandbox is handed
//! to the account, so a job cannot touch the agent's files or another
//! job's.

use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// A local user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Why an account cannot be used or made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("there is no user {0:?} on this machine")]
    NoUser(String),
    #[error("running jobs as {name} needs the agent to run as root (it runs as uid {uid})")]
    NotRoot { name: String, uid: u32 },
    #[error("jobs may not run as root")]
    Root,
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot make {path}: {source}")]
    Locks {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot make slot account {name}: {detail}")]
    Useradd { name: String, detail: String },
}

/// The names of the dedicated slot accounts: `starling-slot1`, ...
pub const SLOT_ACCOUNT_PREFIX: &str = "starling-slot";

/// The most slot accounts an agent makes.
pub const MAX_SLOT_ACCOUNTS: usize = 1024;

/// Where the locks on slot accounts live (a tmpfs: no lock outlives a
/// reboot).
pub const SLOT_LOCKS: &str = "/run/starling/slots";

/// The dedicated slot accounts of this machine.
#[derive(Debug)]
pub struct SlotAccounts {
    locks: PathBuf,
    most: usize,
}

/// A slot account held by one running job; dropping it lets it go.
#[derive(Debug)]
pub struct SlotLease {
    pub account: Account,
    _lock: std::fs::File,
}

impl SlotLease {
    /// The lock's descriptor, for the job's reaper to hold too: the
    /// account stays taken while the job lives, even if its agent dies.
    pub fn lock_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd as _;
        self._lock.as_raw_fd()
    }
}

impl SlotAccounts {
    /// Prepares up to `most` slot accounts, making the first `first` now.
    /// The error says why there can be none (not root, no `useradd`).
    pub fn prepare(most: usize, first: usize) -> Result<SlotAccounts, Error> {
        let most = most.clamp(1, MAX_SLOT_ACCOUNTS);
        let locks = PathBuf::from(SLOT_LOCKS);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&locks)
            .map_err(|source| Error::Locks {
                path: locks.clone(),
                source,
            })?;
        for n in 1..=first.min(most) {
            slot_account(n)?;
        }
        Ok(SlotAccounts { locks, most })
    }

    /// Takes the lowest slot account no running job on this machine holds,
    /// making it if it does not exist yet. `None` when all are taken or
    /// the next cannot be made (the reason is logged).
    pub fn take(&self) -> Option<SlotLease> {
        for n in 1..=self.most {
            let path = self.locks.join(n.to_string());
            let Ok(file) = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&path)
            else {
                continue;
            };
            let locked =
                rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive);
            if locked.is_err() {
                continue;
            }
            match slot_account(n) {
                Ok(account) => {
                    // Whatever still runs as it (a job of an agent that
                    // died) goes first: the account is the next job's alone.
                    if !kill_processes_of(account.uid) {
                        tracing::warn!(
                            account = %account.name,
                            "processes of the slot account outlive SIGKILL; skipping it"
                        );
                        continue;
                    }
                    return Some(SlotLease {
                        account,
                        _lock: file,
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot make a slot account; the job runs as nobody");
                    return None;
                }
            }
        }
        None
    }
}

/// SIGKILLs every process of `uid` until none is left (zombies aside);
/// false when some outlive a second.
fn kill_processes_of(uid: u32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let alive = super::family::processes_of(uid);
        if alive.is_empty() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        for pid in alive.into_iter().filter_map(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Slot account `n`, made if missing.
fn slot_account(n: usize) -> Result<Account, Error> {
    let name = format!("{SLOT_ACCOUNT_PREFIX}{n}");
    if let Some(a) = Account::local(&name) {
        return Ok(a);
    }
    let out = std::process::Command::new("useradd")
        .args([
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            "--comment",
            "Starling job slot",
            &name,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| Error::Useradd {
            name: name.clone(),
            detail: format!("cannot run useradd: {e}"),
        })?;
    // Another agent on the machine may have made it meanwhile.
    match Account::local(&name) {
        Some(a) => {
            if out.status.success() {
                tracing::info!(account = %name, uid = a.uid, "made a slot account for jobs");
            }
            Ok(a)
        }
        None => Err(Error::Useradd {
            name,
            detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        }),
    }
}

impl Account {
    /// A local non-root user named `name`, if there is one (no check of
    /// the agent's own rights).
    pub fn local(name: &str) -> Option<Account> {
        Account::lookup_in(name, Path::new("/etc/passwd")).filter(|a| a.uid != 0)
    }

    fn lookup_in(name: &str, passwd: &Path) -> Option<Account> {
        if name.is_empty() || name.contains([':', '\n']) {
            return None;
        }
        let (uid, gid) = crate::users::passwd_ids(name, passwd)?;
        Some(Account {
            name: name.to_owned(),
            uid,
            gid,
        })
    }

    /// `nobody`, as `/etc/passwd` has it (65534 when it has none).
    pub fn nobody() -> Account {
        Account::local("nobody").unwrap_or(Account {
            name: "nobody".to_owned(),
            uid: 65534,
            gid: 65534,
        })
    }

    /// Looks `name` up in `/etc/passwd`; the error says what is wrong.
    pub fn resolve(name: &str) -> Result<Account, Error> {
        Account::resolve_in(name, Path::new("/etc/passwd"))
    }

    fn resolve_in(name: &str, passwd: &Path) -> Result<Account, Error> {
        std::fs::metadata(passwd).map_err(|source| Error::Read {
            path: passwd.to_owned(),
            source,
        })?;
        let account =
            Account::lookup_in(name, passwd).ok_or_else(|| Error::NoUser(name.to_owned()))?;
        let me = rustix::process::getuid().as_raw();
        if me != 0 && me != account.uid {
            return Err(Error::NotRoot {
                name: name.to_owned(),
                uid: me,
            });
        }
        if account.uid == 0 {
            return Err(Error::Root);
        }
        Ok(account)
    }

    /// Gives `path` (a sandbox and what is in it) to this user, never
    /// following a symbolic link. Depth first, the directory itself last:
    /// while its contents change hands it is still root's and closed, so
    /// no process of the user (another job of a shared account) can swap
    /// a part of it for a link meanwhile.
    pub fn own(&self, path: &Path) -> std::io::Result<()> {
        if std::fs::symlink_metadata(path)?.is_dir() {
            for entry in std::fs::read_dir(path)? {
                self.own(&entry?.path())?;
            }
        }
        let uid = rustix::fs::Uid::from_raw(self.uid);
        let gid = rustix::fs::Gid::from_raw(self.gid);
        rustix::fs::chownat(
            rustix::fs::CWD,
            path,
            Some(uid),
            Some(gid),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )?;
        Ok(())
    }

    /// Whether this is a person's account that a job may run as: a uid at
    /// or above the system's first user id (`UID_MIN` in
    /// `/etc/login.defs`, 1000 by default), and not `nobody` nor a slot
    /// account, which jobs share or hold alone.
    pub fn is_personal(&self) -> bool {
        let uid_min = std::fs::read_to_string("/etc/login.defs")
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let mut words = l.split_whitespace();
                    (words.next() == Some("UID_MIN")).then(|| words.next()?.parse::<u32>().ok())?
                })
            })
            .unwrap_or(1000);
        self.uid >= uid_min
            && self.uid != 65534
            && self.name != "nobody"
            && !self.name.starts_with(SLOT_ACCOUNT_PREFIX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_found_and_root_and_strangers_refused() {
        let dir = tempfile::tempdir().unwrap();
        let passwd = dir.path().join("passwd");
        std::fs::write(
            &passwd,
            "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\n",
        )
        .unwrap();
        let me = rustix::process::getuid().as_raw();
        let nobody = Account::resolve_in("nobody", &passwd);
        if me == 0 {
            assert_eq!(nobody.unwrap().uid, 65534);
        } else {
            assert!(nobody
                .unwrap_err()
                .to_string()
                .contains("needs the agent to run as root"));
        }
        assert!(Account::resolve_in("root", &passwd).is_err());
        let e = Account::resolve_in("mallory", &passwd)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no user \"mallory\""), "{e}");
    }
}
