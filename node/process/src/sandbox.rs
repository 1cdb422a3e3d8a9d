//! A job's sandbox: the scratch directory it runs in, private to the agent's
//! user, removed when the job is done. Which files go back follows
//! HTCondor: the files `transfer_output_files` names, or else every file
//! at the top of the sandbox that is new or changed since the input
//! arrived.

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The job's stdout and stderr, as HTCondor names them in the sandbox.
pub const STDOUT_FILE: &str = "_condor_stdout";
pub const STDERR_FILE: &str = "_condor_stderr";

#[derive(Debug)]
pub struct Sandbox {
    path: PathBuf,
    /// Top-level files after the input arrived: size and modification time.
    inputs: HashMap<String, (u64, Option<SystemTime>)>,
}

impl Sandbox {
    /// Makes `root/name` (mode 0700; `root` is made if missing). Fails if
    /// it exists: two jobs never share a sandbox.
    pub fn create(root: &Path, name: &str) -> io::Result<Sandbox> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not a sandbox name"),
            ));
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)?;
        let path = root.join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Sandbox {
            path,
            inputs: HashMap::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The input's files as [`Self::snapshot_inputs`] found them: name,
    /// size and modification time (nanoseconds since the epoch), to be
    /// kept in the run's record.
    pub fn inputs(&self) -> Vec<(String, u64, Option<u128>)> {
        let mut list: Vec<_> = self
            .inputs
            .iter()
            .map(|(name, (size, modified))| {
                let nanos = modified
                    .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos());
                (name.clone(), *size, nanos)
            })
            .collect();
        list.sort();
        list
    }

    /// The sandbox at `path` of a job an earlier run of the agent started,
    /// with its input as [`Self::inputs`] listed it.
    pub fn reopen(path: PathBuf, inputs: &[(String, u64, Option<u128>)]) -> Sandbox {
        let inputs = inputs
            .iter()
            .map(|(name, size, nanos)| {
                let modified = nanos.and_then(|n| {
                    u64::try_from(n / 1_000_000_000).ok().map(|secs| {
                        SystemTime::UNIX_EPOCH
                            + std::time::Duration::new(secs, (n % 1_000_000_000) as u32)
                    })
                });
                (name.clone(), (*size, modified))
            })
            .collect();
        Sandbox { path, inputs }
    }

    pub fn stdout(&self) -> PathBuf {
        self.path.join(STDOUT_FILE)
    }

    pub fn stderr(&self) -> PathBuf {
        self.path.join(STDERR_FILE)
    }

    /// Records the files present now (the input), so that [`Self::outputs`]
    /// can tell what the job made.
    pub fn snapshot_inputs(&mut self) -> io::Result<()> {
        self.inputs = top_level(&self.path)?;
        Ok(())
    }

    /// Counts these files as the job's own rather than input: a restored
    /// checkpoint's files go back in the next checkpoint and the output
    /// even when the job did not change them.
    pub fn forget_inputs(&mut self, names: &[String]) {
        for name in names {
            self.inputs.remove(name);
        }
    }

    /// The files to send back: those in `wanted` (relative to the sandbox;
    /// a missing one is an error naming it), or else each top-level file
    /// new or changed since [`Self::snapshot_inputs`], without the standard
    /// streams.
    pub fn outputs(&self, wanted: Option<&[String]>) -> io::Result<Vec<PathBuf>> {
        if let Some(wanted) = wanted {
            let mut list = Vec::with_capacity(wanted.len());
            for name in wanted {
                let path = self.path.join(name);
                let escapes = Path::new(name)
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)));
                if escapes {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{name:?} is not a path inside the sandbox"),
                    ));
                }
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_file() => list.push(path),
                    Ok(_) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("{name} is not a regular file"),
                        ))
                    }
                    Err(e) => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("{name} was not made by the job: {e}"),
                        ))
                    }
                }
            }
            return Ok(list);
        }
        let now = top_level(&self.path)?;
        let mut list: Vec<PathBuf> = now
            .into_iter()
            .filter(|(name, _)| name != STDOUT_FILE && name != STDERR_FILE)
            .filter(|(name, seen)| self.inputs.get(name) != Some(seen))
            .map(|(name, _)| self.path.join(name))
            .collect();
        list.sort();
        Ok(list)
    }

    /// Removes the sandbox and everything in it, even directories the job
    /// made read-only.
    pub fn remove(self) -> io::Result<()> {
        remove_all(&self.path)
    }

    /// Removes every sandbox under `root` except those named in `keep`
    /// (left by an agent that died), first killing the processes still
    /// running in them (a job outlives an agent killed with SIGKILL).
    /// Returns how many went.
    pub fn sweep(root: &Path, keep: &[&str]) -> io::Result<usize> {
        kill_processes_in(root, keep);
        let entries = match std::fs::read_dir(root) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut n = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if keep.iter().any(|k| name.to_str() == Some(k)) {
                continue;
            }
            let path = entry.path();
            let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            if removed.is_ok() {
                n += 1;
            }
        }
        Ok(n)
    }
}

/// SIGKILLs every process whose working directory is in a sandbox under
/// `root` other than those in `keep`.
fn kill_processes_in(root: &Path, keep: &[&str]) {
    let Ok(root) = root.canonicalize() else {
        return;
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
            .and_then(rustix::process::Pid::from_raw)
        else {
            continue;
        };
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let Ok(inside) = cwd.strip_prefix(&root) else {
            continue;
        };
        let sandbox = inside
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str());
        if sandbox.is_some_and(|s| !keep.contains(&s)) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// The disk a directory tree takes, in KiB (allocated blocks, as `du`),
/// not following symbolic links and not leaving the filesystem; 0 when it
/// cannot be read.
pub fn disk_usage_kib(root: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(top) = std::fs::symlink_metadata(root) else {
        return 0;
    };
    let device = top.dev();
    let mut total = top.blocks() / 2;
    let mut stack = vec![root.to_path_buf()];
    // Bounded: a job making millions of entries is measured in part.
    let mut budget: u32 = 200_000;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                return total;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.dev() != device {
                continue;
            }
            total += meta.blocks() / 2;
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    total
}

fn top_level(dir: &Path) -> io::Result<HashMap<String, (u64, Option<SystemTime>)>> {
    let mut map = HashMap::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if !meta.is_file() {
            continue;
        }
        if let Ok(name) = entry.file_name().into_string() {
            map.insert(name, (meta.len(), meta.modified().ok()));
        }
    }
    Ok(map)
}

/// `remove_dir_all`, after making every directory writable again.
fn remove_all(path: &Path) -> io::Result<()> {
    fn unlock(dir: &Path) {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    unlock(&entry.path());
                }
            }
        }
    }
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            unlock(path);
            std::fs::remove_dir_all(path)
        }
    }
}
