//! The execute side's record of each job it runs, kept outside the agent's
//! memory so that a job outlives a crash of its agent and the agent that
//! starts next finds it again (HTCondor's job lease and reconnect).
//!
//! Each run has a directory `<data dir>/runs/<sandbox name>/`, root's and
//! closed to jobs:
//!
//! - `record`: what the run is (its claim, its submitter, its job, its
//!   sandbox, how its processes are found), written before its reaper is
//!   started.
//! - `pids`: the reaper and the job's process, written by the reaper
//!   before it starts the job and again once it has: no job runs that an
//!   agent coming back, or the watchdog, could not find.
//! - `lease`: until when the claim's lease holds, on the machine's
//!   monotonic clock, with the boot it counts from; rewritten at each
//!   renewal. Past it the run is dead: the watchdog kills it, and no
//!   agent reports it, because its submitter may already run the job
//!   elsewhere.
//! - `status`: how the job ended, written by its reaper
//!   ([`super::reaper`]).
//!
//! None of it is fsynced: it matters only while the machine is up (a
//! reboot ends every job, and every lease with the boot it counted from),
//! and a write to the page cache outlives the process that made it. The
//! record and the lease are therefore cheap enough to write on every start
//! and renewal.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The longest record read.
const MAX_RECORD_LEN: u64 = 1 << 20;

/// The name of the `run`th job a claim runs on this agent: its sandbox's,
/// its cgroup's and its run directory's.
pub fn run_name(claim: &impl std::fmt::Display, run: u64) -> String {
    format!("{claim}-{run}")
}

/// Milliseconds on the machine's monotonic clock (it counts from boot and
/// never goes back; every process on the machine reads the same one).
pub fn monotonic_ms() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1000 + u64::try_from(t.tv_nsec).unwrap_or(0) / 1_000_000
}

/// This boot's id: a lease of another boot has lapsed with its jobs.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// A process, named so that a reused pid is not mistaken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// Its start time, in clock ticks since boot (`/proc/PID/stat`).
    pub started: u64,
}

impl ProcessId {
    /// The process `pid` as it is now; `None` when there is none.
    pub fn of(pid: u32) -> Option<ProcessId> {
        let fields = super::family::stat_fields(i32::try_from(pid).ok()?)?;
        let started = fields.get(19)?.parse().ok()?;
        Some(ProcessId { pid, started })
    }

    /// Whether this very process still runs (a zombie counts as gone).
    pub fn alive(&self) -> bool {
        let Some(fields) = i32::try_from(self.pid)
            .ok()
            .and_then(super::family::stat_fields)
        else {
            return false;
        };
        fields.first().map(String::as_str) != Some("Z")
            && fields.get(19).and_then(|s| s.parse().ok()) == Some(self.started)
    }

    /// SIGKILLs it, if it is still this process.
    pub fn kill(&self) {
        if self.alive() {
            if let Some(pid) = i32::try_from(self.pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// How a run's processes are found, as [`super::family::Family`] does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tracking {
    /// In the job cgroup of this name under the agent's cgroups.
    Cgroup { agent: String, job: String },
    /// By marker and account (and process group: the job's pid, in
    /// [`Pids`]).
    Found {
        marker: String,
        uid: u32,
        dedicated: bool,
    },
}

/// What a run is, for the agent that finds it after a crash.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The claim, as 32 hex digits.
    pub claim: String,
    /// The submit agent, as its libp2p peer id.
    pub peer: String,
    /// The run's number on the agent that started it.
    pub run: u64,
    /// The job's ad, in the long form.
    pub job: String,
    pub cpus: u32,
    pub memory_mib: u64,
    pub disk_kib: u64,
    /// The ids of the GPUs the job was given (records of agents before
    /// GPUs were handed out have none).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// The job came from the agent's own domain.
    pub own_domain: bool,
    /// The domain that admitted the job's agent.
    pub domain: String,
    /// The claim's lease, in milliseconds.
    pub lease_ms: u64,
    /// The sandbox's path.
    pub sandbox: PathBuf,
    /// The input's files as they arrived: name, size, modification time in
    /// nanoseconds since the epoch.
    pub inputs: Vec<(String, u64, Option<u128>)>,
    /// The account the job runs as, if not the agent's.
    pub account: Option<(String, u32, u32)>,
    pub tracking: Tracking,
    /// When the job started, in milliseconds since the epoch.
    pub started_ms: u64,
    pub memory_limit_mib: u64,
    pub disk_limit_kib: u64,
}

/// A run's processes, as its reaper wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pids {
    pub reaper: ProcessId,
    /// The job's first process (it leads its process group); 0 until it
    /// was started.
    pub job: u32,
}

impl Pids {
    /// Writes `pids` into the run directory `dir` (the reaper does).
    pub fn write(&self, dir: &Path) -> io::Result<()> {
        let bytes = serde_json::to_vec(self).map_err(io::Error::other)?;
        replace(&dir.join("pids"), &bytes)
    }
}

/// A lease: until `deadline_ms` on the monotonic clock of boot `boot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub boot: String,
    pub deadline_ms: u64,
}

impl Lease {
    /// A lease of `length` from now.
    pub fn from_now(length: Duration) -> Lease {
        Lease {
            boot: boot_id(),
            deadline_ms: monotonic_ms()
                .saturating_add(u64::try_from(length.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    /// Whether it has lapsed (or belongs to another boot).
    pub fn lapsed(&self) -> bool {
        self.boot != boot_id() || monotonic_ms() >= self.deadline_ms
    }

    /// How long it still holds.
    pub fn left(&self) -> Duration {
        if self.boot != boot_id() {
            return Duration::ZERO;
        }
        Duration::from_millis(self.deadline_ms.saturating_sub(monotonic_ms()))
    }

    fn render(&self) -> String {
        format!("{} {}\n", self.boot, self.deadline_ms)
    }

    fn parse(text: &str) -> Option<Lease> {
        let mut words = text.split_whitespace();
        let boot = words.next()?.to_owned();
        let deadline_ms = words.next()?.parse().ok()?;
        Some(Lease { boot, deadline_ms })
    }
}

/// A run found on disk.
#[derive(Debug)]
pub struct Found {
    pub name: String,
    /// `None` when the record is missing or unreadable (the agent died
    /// while starting it).
    pub record: Option<Record>,
    pub lease: Option<Lease>,
    pub pids: Option<Pids>,
    pub status: Option<Status>,
}

impl Found {
    /// Whether an agent may take this run on: its lease holds, and its
    /// job still runs or has ended with a recorded status.
    pub fn adoptable(&self) -> bool {
        let (Some(_), Some(pids)) = (&self.record, &self.pids) else {
            return false;
        };
        let holds = self.lease.as_ref().is_some_and(|l| !l.lapsed());
        holds && (self.status.is_some() || pids.reaper.alive())
    }
}

/// The runs directory of one agent.
#[derive(Debug, Clone)]
pub struct Runs {
    dir: PathBuf,
}

impl Runs {
    /// Opens (making it, mode 0700) the runs directory `dir`.
    pub fn open(dir: &Path) -> io::Result<Runs> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        Ok(Runs {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn run_dir(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Makes the directory of run `name` with its first lease; returns
    /// where its reaper writes the status.
    pub fn begin(&self, name: &str, lease: &Lease) -> io::Result<PathBuf> {
        let dir = self.run_dir(name);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        self.renew(name, lease)?;
        Ok(dir.join("status"))
    }

    /// Where run `name`'s reaper writes its status.
    pub fn status_path(&self, name: &str) -> PathBuf {
        self.run_dir(name).join("status")
    }

    /// The directory of run `name`.
    pub fn dir_of(&self, name: &str) -> PathBuf {
        self.run_dir(name)
    }

    /// Writes run `name`'s lease.
    pub fn renew(&self, name: &str, lease: &Lease) -> io::Result<()> {
        replace(&self.run_dir(name).join("lease"), lease.render().as_bytes())
    }

    /// The lease of run `name`, if it has one.
    pub fn lease(&self, name: &str) -> Option<Lease> {
        let text = std::fs::read_to_string(self.run_dir(name).join("lease")).ok()?;
        Lease::parse(&text)
    }

    /// Forgets run `name`.
    pub fn finish(&self, name: &str) {
        let _ = std::fs::remove_dir_all(self.run_dir(name));
    }

    /// Every run on disk, by name.
    pub fn list(&self) -> BTreeMap<String, Found> {
        let mut found = BTreeMap::new();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return found;
        };
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let dir = entry.path();
            let record = read_bounded(&dir.join("record"))
                .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok());
            let lease = self.lease(&name);
            let pids = read_bounded(&dir.join("pids"))
                .and_then(|bytes| serde_json::from_slice::<Pids>(&bytes).ok());
            let status = Status::read(&dir.join("status")).ok().flatten();
            found.insert(
                name.clone(),
                Found {
                    name,
                    record,
                    lease,
                    pids,
                    status,
                },
            );
        }
        found
    }
}

/// Writes a run's record into its directory `dir`.
pub fn write_record(dir: &Path, record: &Record) -> io::Result<()> {
    let bytes = serde_json::to_vec(record).map_err(io::Error::other)?;
    replace(&dir.join("record"), &bytes)
}

fn read_bounded(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_RECORD_LEN)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Replaces `path`'s content whole: a reader sees the old or the new.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Ends run `found`: its reaper first (so it records nothing), then every
/// process of the job. Blocking.
pub fn kill(found: &Found) {
    if let Some(pids) = &found.pids {
        pids.reaper.kill();
    }
    let Some(record) = &found.record else {
        return;
    };
    match &record.tracking {
        Tracking::Cgroup { agent, job } => {
            for cgroups in super::cgroup::Cgroups::existing(agent) {
                cgroups.kill_job(job);
            }
        }
        Tracking::Found {
            marker,
            uid,
            dedicated,
        } => {
            let family = super::family::Family::Found {
                pgid: found
                    .pids
                    .and_then(|p| i32::try_from(p.job).ok())
                    .unwrap_or(0),
                marker: format!("{}={marker}", super::family::MARKER_ENV).into_bytes(),
                uid: *uid,
                dedicated: *dedicated,
            };
            family.kill_all(Duration::from_secs(2));
        }
    }
}

/// How a job ended, as its reaper recorded it (the run's status file,
/// written by [`super::reaper`], read by whichever agent runs then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub exit: super::Exit,
    pub user_cpu: Duration,
    pub system_cpu: Duration,
    /// The largest resident size of the job's processes, in KiB.
    pub max_rss_kib: u64,
}

/// The status file's name in the run's directory.
pub const STATUS_FILE: &str = "status";

/// The status file's first word: its format.
const FORMAT: &str = "starling-job-status-1";

/// The longest status file read.
const MAX_STATUS_LEN: u64 = 4096;

impl Status {
    fn render(&self) -> String {
        let (code, signal, core) = match self.exit {
            super::Exit::Code(c) => (c.to_string(), "-".to_owned(), false),
            super::Exit::Signal {
                signal,
                core_dumped,
            } => ("-".to_owned(), signal.to_string(), core_dumped),
            super::Exit::Unknown => ("-".to_owned(), "-".to_owned(), false),
        };
        format!(
            "{FORMAT} exit={code} signal={signal} core={} user_us={} system_us={} max_rss_kib={}\n",
            u8::from(core),
            self.user_cpu.as_micros(),
            self.system_cpu.as_micros(),
            self.max_rss_kib
        )
    }

    /// Parses a status file's text; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Status> {
        let mut words = text.split_whitespace();
        if words.next()? != FORMAT {
            return None;
        }
        let mut fields = std::collections::HashMap::new();
        for word in words {
            let (k, v) = word.split_once('=')?;
            fields.insert(k, v);
        }
        let number = |k: &str| fields.get(k).and_then(|v| v.parse::<u64>().ok());
        let exit = match (fields.get("exit"), fields.get("signal")) {
            (Some(code), _) if *code != "-" => super::Exit::Code(code.parse().ok()?),
            (_, Some(signal)) if *signal != "-" => super::Exit::Signal {
                signal: signal.parse().ok()?,
                core_dumped: fields.get("core") == Some(&"1"),
            },
            _ => super::Exit::Unknown,
        };
        Some(Status {
            exit,
            user_cpu: Duration::from_micros(number("user_us")?),
            system_cpu: Duration::from_micros(number("system_us")?),
            max_rss_kib: number("max_rss_kib")?,
        })
    }

    /// Reads the status file at `path`: `Ok(None)` when there is none yet.
    pub fn read(path: &Path) -> io::Result<Option<Status>> {
        use std::io::Read as _;
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut text = String::new();
        file.take(MAX_STATUS_LEN).read_to_string(&mut text)?;
        Status::parse(&text).map(Some).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a job status file", path.display()),
            )
        })
    }

    /// Writes it to `path` so that it is there whole or not at all. Not
    /// fsynced: it must outlive the agent, not the machine (a reboot ends
    /// the run's lease with it, and the job runs again).
    pub(crate) fn write(&self, path: &Path) -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let tmp = path.with_extension("tmp");
        let _ = std::fs::remove_file(&tmp);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&tmp)?;
        std::io::Write::write_all(&mut file, self.render().as_bytes())?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_read_back_and_lapse() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("runs")).unwrap();
        let lease = Lease::from_now(Duration::from_secs(60));
        runs.begin("a", &lease).unwrap();
        assert_eq!(runs.lease("a"), Some(lease.clone()));
        assert!(!lease.lapsed());
        let gone = Lease {
            deadline_ms: monotonic_ms().saturating_sub(1),
            ..lease.clone()
        };
        assert!(gone.lapsed());
        let other_boot = Lease {
            boot: "another".into(),
            ..lease
        };
        assert!(other_boot.lapsed());
        let found = runs.list();
        assert_eq!(found.len(), 1);
        assert!(found["a"].record.is_none());
        assert!(!found["a"].adoptable());
        runs.finish("a");
        assert!(runs.list().is_empty());
    }

    #[test]
    fn damaged_run_files_make_a_run_nobody_takes_on() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("runs")).unwrap();
        runs.begin("b", &Lease::from_now(Duration::from_secs(60)))
            .unwrap();
        let run = runs.dir_of("b");
        for (record, pids, lease) in [
            ("{", "{}", "x"),
            ("null", "[1,2]", ""),
            (
                &"9".repeat(4 << 20) as &str,
                "\u{0}",
                "boot 99999999999999999999999",
            ),
        ] {
            std::fs::write(run.join("record"), record).unwrap();
            std::fs::write(run.join("pids"), pids).unwrap();
            std::fs::write(run.join("lease"), lease).unwrap();
            let found = runs.list();
            let b = &found["b"];
            assert!(b.record.is_none() && b.pids.is_none() && b.lease.is_none());
            assert!(!b.adoptable());
            // Killing what cannot be found kills nothing, and never panics.
            kill(b);
        }
    }
}
