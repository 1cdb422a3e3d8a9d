//! The account jobs run as (`[jobs] account` in the configuration).
//!
//! Unset, jobs run as the agent's own user. Set, the agent must run as
//! root: each job's process gets that user's uid and gid, and its sandbox
//! is handed to that user, so a job cannot touch the agent's files.

use std::path::Path;

/// A local user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl Account {
    /// Looks `name` up in `/etc/passwd`; the error says what is wrong.
    pub fn resolve(name: &str) -> Result<Account, String> {
        Account::resolve_in(name, Path::new("/etc/passwd"))
    }

    fn resolve_in(name: &str, passwd: &Path) -> Result<Account, String> {
        let text = std::fs::read_to_string(passwd)
            .map_err(|e| format!("cannot read {}: {e}", passwd.display()))?;
        let account = text
            .lines()
            .filter_map(|line| {
                let f: Vec<&str> = line.split(':').collect();
                (f.len() >= 4 && f[0] == name).then(|| {
                    Some(Account {
                        name: name.to_owned(),
                        uid: f[2].parse().ok()?,
                        gid: f[3].parse().ok()?,
                    })
                })?
            })
            .next()
            .ok_or_else(|| format!("there is no user {name:?} on this machine"))?;
        let me = rustix::process::getuid().as_raw();
        if me != 0 && me != account.uid {
            return Err(format!(
                "running jobs as {name} needs the agent to run as root (it runs as uid {me})"
            ));
        }
        if account.uid == 0 {
            return Err("jobs may not run as root".to_owned());
        }
        Ok(account)
    }

    /// Gives `path` (a sandbox and what is in it) to this user.
    pub fn own(&self, path: &Path) -> std::io::Result<()> {
        let uid = rustix::fs::Uid::from_raw(self.uid);
        let gid = rustix::fs::Gid::from_raw(self.gid);
        rustix::fs::chown(path, Some(uid), Some(gid))?;
        if path.is_dir() {
            for entry in std::fs::read_dir(path)? {
                self.own(&entry?.path())?;
            }
        }
        Ok(())
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
                .contains("needs the agent to run as root"));
        }
        assert!(Account::resolve_in("root", &passwd).is_err());
        let e = Account::resolve_in("mallory", &passwd).unwrap_err();
        assert!(e.contains("no user \"mallory\""), "{e}");
    }
}
