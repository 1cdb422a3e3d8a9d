//! What a job's first process does to itself between fork and exec: join
//! the job's cgroups, take a private `/tmp` and `/var/tmp` (a mount
//! namespace of its own, HTCondor's `MOUNT_UNDER_SCRATCH`), and give up
//! root for the job's account. Everything is prepared before the fork;
//! the child only makes system calls.
//!
//! The private directories are `tmp/` and `var/tmp/` in the sandbox. When
//! the sandbox itself lies under `/tmp` (a testnet in a temporary
//! directory), the sandbox is bound again at its own path inside the new
//! `/tmp`, so the paths the job is given still lead to it.

use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rustix::mount::MountPropagationFlags;
use rustix::process::{Gid, Uid};

/// The directories a job gets privately.
pub const PRIVATE_DIRS: [&str; 2] = ["/tmp", "/var/tmp"];

/// One bind mount: source, target, recursive.
#[derive(Debug)]
struct Bind {
    source: CString,
    target: CString,
    recursive: bool,
}

/// What the child does before exec.
#[derive(Debug, Default)]
pub struct Confinement {
    /// `cgroup.procs` files to write `0` into.
    pub cgroup_procs: Vec<OwnedFd>,
    /// Bind mounts in a new mount namespace; empty: none.
    binds: Vec<Bind>,
    /// Device files the job must not open: `/dev/null` is bound over each
    /// in its mount namespace (GPUs the job was not given).
    hidden: Vec<CString>,
    /// The uid and gid to become.
    pub credentials: Option<(u32, u32)>,
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

impl Confinement {
    /// Plans the bind mounts of the sandbox's `tmp/` and `var/tmp/` (made
    /// by [`make_private_dirs`]) over `/tmp` and `/var/tmp`.
    pub fn private_tmp(&mut self, sandbox: &Path) -> io::Result<()> {
        let mut binds = Vec::new();
        for target in PRIVATE_DIRS {
            let target = Path::new(target);
            let source = sandbox.join(target.strip_prefix("/").unwrap_or(target));
            if let Ok(inside) = sandbox.strip_prefix(target) {
                // The sandbox is under this directory: keep it reachable
                // at its own path in the private one.
                binds.push(Bind {
                    source: c_path(sandbox)?,
                    target: c_path(&source.join(inside))?,
                    recursive: false,
                });
                binds.push(Bind {
                    source: c_path(&source)?,
                    target: c_path(target)?,
                    recursive: true,
                });
            } else {
                binds.push(Bind {
                    source: c_path(&source)?,
                    target: c_path(target)?,
                    recursive: false,
                });
            }
        }
        self.binds = binds;
        Ok(())
    }

    /// Plans hiding `devices` from the job: in its mount namespace each
    /// is `/dev/null`, so opening one reaches no device. Paths that do not
    /// exist are left alone.
    pub fn hide_devices(&mut self, devices: &[PathBuf]) -> io::Result<()> {
        self.hidden = devices
            .iter()
            .filter(|d| d.exists())
            .map(|d| c_path(d))
            .collect::<io::Result<_>>()?;
        Ok(())
    }

    /// Runs in the child between fork and exec.
    pub fn apply(&self) -> io::Result<()> {
        for fd in &self.cgroup_procs {
            rustix::io::write(fd, b"0")?;
        }
        if !self.binds.is_empty() || !self.hidden.is_empty() {
            // SAFETY: NEWNS unshares no file descriptor table; this child
            // has one thread.
            #[allow(unsafe_code)]
            unsafe {
                rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS)?
            };
            // Nothing mounted here reaches the machine's namespace.
            rustix::mount::mount_change(
                c"/",
                MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
            )?;
            for bind in &self.binds {
                if bind.recursive {
                    rustix::mount::mount_bind_recursive(
                        bind.source.as_c_str(),
                        bind.target.as_c_str(),
                    )?;
                } else {
                    rustix::mount::mount_bind(bind.source.as_c_str(), bind.target.as_c_str())?;
                }
            }
            for device in &self.hidden {
                rustix::mount::mount_bind(c"/dev/null", device.as_c_str())?;
            }
        }
        // No core files filling the sandbox, for the job and all it starts.
        rustix::process::setrlimit(
            rustix::process::Resource::Core,
            rustix::process::Rlimit {
                current: Some(0),
                maximum: Some(0),
            },
        )?;
        if let Some((uid, gid)) = self.credentials {
            let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
            rustix::thread::set_thread_groups(&[gid])?;
            rustix::thread::set_thread_res_gid(gid, gid, gid)?;
            rustix::thread::set_thread_res_uid(uid, uid, uid)?;
            // Nothing the job runs gains privileges (setuid programs run
            // as the job), whatever it finds in its namespace.
            rustix::thread::set_no_new_privs(true)?;
        }
        Ok(())
    }
}

/// Makes the sandbox's `tmp/` and `var/tmp/` (mode 1777, like the real
/// ones) and, for a sandbox under `/tmp` or `/var/tmp`, the directories
/// that lead to its own path inside them. Called while the sandbox is
/// still root's, before it is handed to the job's account, so no process
/// of that account can have put a link where a directory is made.
pub fn make_private_dirs(sandbox: &Path) -> io::Result<()> {
    for target in PRIVATE_DIRS {
        let target = Path::new(target);
        let source = sandbox.join(target.strip_prefix("/").unwrap_or(target));
        std::fs::DirBuilder::new().recursive(true).create(&source)?;
        std::fs::set_permissions(&source, std::fs::Permissions::from_mode(0o1777))?;
        if let Ok(inside) = sandbox.strip_prefix(target) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(source.join(inside))?;
        }
    }
    Ok(())
}

/// Whether jobs can have a private `/tmp` here: a child takes a mount
/// namespace and binds a directory over `/tmp` (needs root's
/// `CAP_SYS_ADMIN`; containers often refuse it). The error says why not.
pub fn probe_private_tmp(scratch: &Path) -> Result<(), String> {
    let sandbox: PathBuf = scratch.join(format!(".probe-{}", std::process::id()));
    std::fs::create_dir_all(&sandbox).map_err(|e| format!("{}: {e}", sandbox.display()))?;
    let result = (|| {
        make_private_dirs(&sandbox).map_err(|e| e.to_string())?;
        let mut confinement = Confinement::default();
        confinement
            .private_tmp(&sandbox)
            .map_err(|e| e.to_string())?;
        let mut command = std::process::Command::new("/bin/sh");
        command
            .args(["-c", "test -d \"$0\" && touch /tmp/.starling-probe && test -e \"$0/tmp/.starling-probe\""])
            .arg(&sandbox)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        use std::os::unix::process::CommandExt as _;
        // SAFETY: `apply` only makes system calls on prepared data.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || confinement.apply())
        };
        let out = command.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "a private /tmp did not work ({}){}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    })();
    let _ = std::fs::remove_dir_all(&sandbox);
    result
}
