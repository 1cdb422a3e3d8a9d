//! Local users: their names from the machine's user database, and file
//! access on the submit side with a job owner's rights.
//!
//! The control server names whoever connects with [`name_of`]; an agent
//! running as root opens a job's input, output and log files with
//! [`Rights::of_owner`], so that a user cannot make the agent read or
//! write a file they could not read or write themselves (`/etc/shadow`,
//! another user's home).
//!
//! Switching rights needs no `unsafe`: each operation runs on a
//! short-lived thread of its own that sets only its own credentials
//! (supplementary groups, then gid, then uid, all three of each: real,
//! effective and saved) with the kernel's per-thread calls, which also
//! drops the thread's capabilities. The thread opens or creates what it
//! was asked for and hands the open [`File`] back; reading and writing
//! through the descriptor afterwards needs no rights. The thread ends
//! there, and its credentials with it; the agent's other threads never
//! change.

use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The user database.
pub const PASSWD: &str = "/etc/passwd";

/// The group database.
pub const GROUP: &str = "/etc/group";

/// Largest user or group database read (a machine of many thousand
/// accounts; anything larger is not a user database).
pub const MAX_DATABASE_LEN: u64 = 16 << 20;

/// Most supplementary groups a user is given (the kernel's `NGROUPS_MAX`).
pub const MAX_GROUPS: usize = 65_536;

/// What went wrong looking users up or acting as one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("cannot read the user database {}", path.display())]
    Database {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("there is no user {name:?} on this machine (not in {PASSWD})")]
    NoSuchUser { name: String },
    #[error("could not take the rights of user {name}")]
    Switch {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the thread acting as user {name} failed")]
    Thread { name: String },
}

/// A local user, as the user database has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub uid: u32,
    /// The primary group.
    pub gid: u32,
    /// Supplementary groups (including the primary one).
    pub groups: Vec<u32>,
}

/// The name of `uid` in [`PASSWD`]; `None` when it has no entry or the
/// database cannot be read.
pub fn name_of(uid: u32) -> Option<String> {
    let text = read_database(Path::new(PASSWD)).ok()?;
    let name = passwd_entries(&text)
        .find(|e| e.uid == uid)
        .map(|e| e.name.to_owned());
    name
}

/// The uid and primary gid of `name` in the user database at `passwd`;
/// `None` when it has no entry or the database cannot be read.
pub(crate) fn passwd_ids(name: &str, passwd: &Path) -> Option<(u32, u32)> {
    let text = read_database(passwd).ok()?;
    let ids = passwd_entries(&text)
        .find(|e| e.name == name)
        .map(|e| (e.uid, e.gid));
    ids
}

impl User {
    /// Looks `name` up in [`PASSWD`] and its groups in [`GROUP`].
    pub fn lookup(name: &str) -> Result<User, Error> {
        User::lookup_in(name, Path::new(PASSWD), Path::new(GROUP))
    }

    fn lookup_in(name: &str, passwd: &Path, group: &Path) -> Result<User, Error> {
        let text = read_database(passwd)?;
        let entry = passwd_entries(&text)
            .find(|e| e.name == name)
            .ok_or_else(|| Error::NoSuchUser {
                name: name.to_owned(),
            })?;
        // A missing group file only costs the supplementary groups.
        let groups_text = read_database(group).unwrap_or_default();
        let mut groups = vec![entry.gid];
        for line in groups_text.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if let [_, _, gid, members, ..] = f[..] {
                let Ok(gid) = gid.parse::<u32>() else {
                    continue;
                };
                if members.split(',').any(|m| m.trim() == name) && !groups.contains(&gid) {
                    groups.push(gid);
                }
            }
            if groups.len() >= MAX_GROUPS {
                break;
            }
        }
        Ok(User {
            name: entry.name.to_owned(),
            uid: entry.uid,
            gid: entry.gid,
            groups,
        })
    }
}

struct PasswdEntry<'a> {
    name: &'a str,
    uid: u32,
    gid: u32,
}

fn passwd_entries(text: &str) -> impl Iterator<Item = PasswdEntry<'_>> {
    text.lines().filter_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        match f[..] {
            [name, _, uid, gid, ..] if !name.is_empty() && !name.starts_with(['#', '+', '-']) => {
                Some(PasswdEntry {
                    name,
                    uid: uid.parse().ok()?,
                    gid: gid.parse().ok()?,
                })
            }
            _ => None,
        }
    })
}

fn read_database(path: &Path) -> Result<String, Error> {
    let error = |source| Error::Database {
        path: path.to_owned(),
        source,
    };
    let mut text = String::new();
    File::open(path)
        .map_err(error)?
        .take(MAX_DATABASE_LEN)
        .read_to_string(&mut text)
        .map_err(error)?;
    Ok(text)
}

/// Whose rights the agent uses for a job's files on the submit side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rights {
    /// The agent's own: it runs as the job's owner, or is not root and
    /// could not be anyone else anyway.
    Agent,
    /// The job's owner's, the agent being root.
    User(User),
}

impl Rights {
    /// The rights for a job owned by `owner`: the owner's when the agent
    /// runs as root and the owner is not root, else the agent's own.
    pub fn of_owner(owner: &str) -> Result<Rights, Error> {
        if !rustix::process::geteuid().is_root() || owner == "root" {
            return Ok(Rights::Agent);
        }
        User::lookup(owner).map(Rights::User)
    }

    /// Opens `path` as `options` say, with these rights.
    pub fn open(&self, path: &Path, options: &OpenOptions) -> std::io::Result<File> {
        let path = path.to_owned();
        let options = options.clone();
        self.run(move || options.open(&path))
    }

    /// Opens `path` for reading, with these rights.
    pub fn open_read(&self, path: &Path) -> std::io::Result<File> {
        self.open(path, OpenOptions::new().read(true))
    }

    /// Makes `dir` and its missing parents, with these rights.
    pub fn create_dir_all(&self, dir: &Path) -> std::io::Result<()> {
        let dir = dir.to_owned();
        self.run(move || std::fs::create_dir_all(&dir))
    }

    /// Runs `op` with these rights: here for [`Rights::Agent`], on a
    /// thread of the user's for [`Rights::User`]. Blocking either way.
    pub fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce() -> std::io::Result<T> + Send + 'static,
    ) -> std::io::Result<T> {
        match self {
            Rights::Agent => op(),
            Rights::User(user) => as_user(user, op).map_err(|e| match e {
                ActError::Op(e) => e,
                ActError::Setup(e) => std::io::Error::other(e),
            }),
        }
    }
}

enum ActError {
    Setup(Error),
    Op(std::io::Error),
}

/// Runs `op` on a new thread that has taken `user`'s credentials for good.
fn as_user<T: Send + 'static>(
    user: &User,
    op: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, ActError> {
    use rustix::process::{Gid, Uid};
    let name = user.name.clone();
    let uid = Uid::from_raw(user.uid);
    let gid = Gid::from_raw(user.gid);
    let groups: Vec<Gid> = user.groups.iter().map(|g| Gid::from_raw(*g)).collect();
    let switch_error = {
        let name = name.clone();
        move |source: rustix::io::Errno| {
            ActError::Setup(Error::Switch {
                name: name.clone(),
                source: source.into(),
            })
        }
    };
    let thread = std::thread::Builder::new()
        .name(format!("as-{}", user.uid))
        .spawn(move || -> Result<T, ActError> {
            // Groups and gid first: once the uid is the user's, the thread
            // can no longer change them.
            rustix::thread::set_thread_groups(&groups).map_err(&switch_error)?;
            rustix::thread::set_thread_res_gid(gid, gid, gid).map_err(&switch_error)?;
            rustix::thread::set_thread_res_uid(uid, uid, uid).map_err(&switch_error)?;
            op().map_err(ActError::Op)
        })
        .map_err(|e| {
            ActError::Setup(Error::Switch {
                name: name.clone(),
                source: e,
            })
        })?;
    thread
        .join()
        .map_err(|_| ActError::Setup(Error::Thread { name }))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_and_their_groups_are_read_from_the_databases() {
        let dir = tempfile::tempdir().unwrap();
        let passwd = dir.path().join("passwd");
        let group = dir.path().join("group");
        std::fs::write(
            &passwd,
            "root:x:0:0:root:/root:/bin/bash\n# comment\nalice:x:1001:1001::/home/alice:/bin/sh\nbroken\n",
        )
        .unwrap();
        std::fs::write(
            &group,
            "root:x:0:\nalice:x:1001:\nlab:x:2000:bob,alice\nother:x:2001:bob\n",
        )
        .unwrap();
        let alice = User::lookup_in("alice", &passwd, &group).unwrap();
        assert_eq!(
            alice,
            User {
                name: "alice".into(),
                uid: 1001,
                gid: 1001,
                groups: vec![1001, 2000],
            }
        );
        let e = User::lookup_in("carol", &passwd, &group).unwrap_err();
        assert_eq!(
            e.to_string(),
            "there is no user \"carol\" on this machine (not in /etc/passwd)"
        );
    }

    #[test]
    fn root_is_named_root() {
        assert_eq!(name_of(0).as_deref(), Some("root"));
    }

    /// As root: a thread with another user's rights cannot read what that
    /// user cannot, and what it creates is that user's; the agent's own
    /// rights are untouched afterwards.
    #[test]
    fn files_are_opened_with_the_users_rights() {
        use std::os::unix::fs::MetadataExt as _;
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root to take another user's rights");
            return;
        }
        let nobody = User {
            name: "nobody".into(),
            uid: 65534,
            gid: 65534,
            groups: vec![65534],
        };
        let rights = Rights::User(nobody);
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "x").unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let e = rights.open_read(&secret).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        let made = dir.path().join("made");
        rights
            .open(&made, OpenOptions::new().write(true).create_new(true))
            .unwrap();
        assert_eq!(std::fs::metadata(&made).unwrap().uid(), 65534);
        // This thread is still root.
        assert!(rustix::process::geteuid().is_root());
        assert!(Rights::Agent.open_read(&secret).is_ok());
    }
}
