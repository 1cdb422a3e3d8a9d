//! Control groups for jobs: every process a job starts, daemons included,
//! lands in the job's cgroup, which measures its memory and CPU, enforces
//! its memory limit, weighs its CPU share, freezes it for a suspend and
//! kills all of it at the end, as HTCondor's starter does.
//!
//! Both kernels' interfaces work:
//! - cgroup v1 (the controllers mounted one per hierarchy, as on these
//!   machines): a group in each of `memory`, `cpu`, `cpuacct` and
//!   `freezer` that is mounted;
//! - cgroup v2 (one unified hierarchy): one group, with the `memory`, `cpu`
//!   and `pids` controllers where the agent's own group can hand them down.
//!   Without them (a hybrid mount whose controllers are all bound to v1)
//!   the v2 group still tracks, freezes and kills.
//!
//! Groups are made under the agent's own group in each hierarchy (from
//! `/proc/self/cgroup`), in a parent named for the agent, so agents sharing
//! a machine never touch each other's jobs and a container's agent stays
//! inside its own limits. Making them needs write access there: root, or
//! a delegated subtree; without it [`Cgroups::detect`] says why and the
//! agent falls back to process groups ([`super::family`]).

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a freeze may take to settle before the kill goes ahead anyway.
const FREEZE_SETTLE: Duration = Duration::from_millis(500);

/// How long removing a job's group waits for its processes to die.
const EMPTY_WAIT: Duration = Duration::from_secs(5);

/// Why jobs cannot have cgroups here.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0:?} is not a cgroup name")]
    BadName(String),
    #[error("cannot read /proc/self: {0}")]
    Proc(#[source] io::Error),
    #[error("no cgroup v1 memory or freezer hierarchy is mounted")]
    NoV1,
    #[error("no cgroup2 hierarchy is mounted")]
    NoV2,
    #[error("this process is in no cgroup2 group")]
    NotInV2,
    #[error("no group {0}")]
    NoGroup(String),
    #[error("cannot make job cgroups: {0}")]
    Make(String),
}

/// Which interface the machine offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// The agent's parent groups for its jobs, one per hierarchy used.
#[derive(Debug, Clone)]
pub struct Cgroups {
    /// The agent's parent group's name.
    name: String,
    version: Version,
    /// v1: (controller, the agent's parent group in its hierarchy).
    /// v2: one entry, ("unified", parent group).
    parents: Vec<(String, PathBuf)>,
    /// v2: the controllers enabled for the jobs' groups.
    v2_controllers: Vec<String>,
}

/// The v1 controllers used, when mounted. Each costs a job a move into
/// its hierarchy at start, a few milliseconds under v1's locking, so only
/// those that limit, weigh, count or stop the job: not `pids`.
const V1_CONTROLLERS: [&str; 4] = ["memory", "cpu", "cpuacct", "freezer"];

/// The v2 controllers asked for.
const V2_CONTROLLERS: [&str; 3] = ["memory", "cpu", "pids"];

/// What `/proc/self/mountinfo` and `/proc/self/cgroup` say.
#[derive(Debug, Default)]
struct Mounts {
    /// v1 hierarchies: controllers, mount point.
    v1: Vec<(Vec<String>, PathBuf)>,
    v2: Option<PathBuf>,
    /// Our own group per v1 controller set (`"memory"` -> `/a/b`), and in
    /// v2 (`""`).
    own: Vec<(Vec<String>, String)>,
}

impl Mounts {
    fn read() -> io::Result<Mounts> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
        let own = fs::read_to_string("/proc/self/cgroup")?;
        Ok(Mounts::parse(&mountinfo, &own))
    }

    fn parse(mountinfo: &str, own: &str) -> Mounts {
        let mut mounts = Mounts::default();
        for line in mountinfo.lines() {
            // ID PARENT MAJ:MIN ROOT MOUNT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (Some(mount), Some(fstype)) = (left.get(4), right.first()) else {
                continue;
            };
            // A mount of a subtree (ROOT != "/") would need path rewriting.
            if left.get(3) != Some(&"/") {
                continue;
            }
            let mount = PathBuf::from(unescape(mount));
            match *fstype {
                "cgroup2" => mounts.v2 = mounts.v2.take().or(Some(mount)),
                "cgroup" => {
                    let controllers = right
                        .get(2)
                        .map(|opts| {
                            opts.split(',')
                                .filter(|o| V1_CONTROLLERS.contains(o))
                                .map(str::to_owned)
                                .collect::<Vec<_>>()
                        })
                        .unwrap_or_default();
                    if !controllers.is_empty() {
                        mounts.v1.push((controllers, mount));
                    }
                }
                _ => {}
            }
        }
        for line in own.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            mounts.own.push((controllers, path.to_owned()));
        }
        mounts
    }

    fn own_group(&self, controller: &str) -> Option<&str> {
        self.own
            .iter()
            .find(|(cs, _)| {
                if controller.is_empty() {
                    cs.is_empty()
                } else {
                    cs.iter().any(|c| c == controller)
                }
            })
            .map(|(_, p)| p.as_str())
    }
}

/// Mount points in mountinfo escape spaces and such as `\040`.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            match u8::from_str_radix(&code, 8) {
                Ok(b) => out.push(char::from(b)),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&code);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn join(mount: &Path, group: &str) -> PathBuf {
    mount.join(group.trim_start_matches('/'))
}

impl Cgroups {
    /// The agent's parent group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Finds the cgroup hierarchies and makes the agent's parent group
    /// (`name`) in each. `prefer` forces a version; `None` takes v1 when
    /// its memory controller is mounted (it is where the controllers
    /// are), else v2. The error says why jobs cannot have cgroups here.
    pub fn detect(name: &str, prefer: Option<Version>) -> Result<Cgroups, Error> {
        Cgroups::open(name, prefer, true)
    }

    /// The agent's parent groups `name` where they exist, made by an agent
    /// that is gone for good, to be swept and released.
    pub fn existing(name: &str) -> Vec<Cgroups> {
        [Version::V1, Version::V2]
            .into_iter()
            .filter_map(|v| Cgroups::open(name, Some(v), false).ok())
            .collect()
    }

    fn open(name: &str, prefer: Option<Version>, create: bool) -> Result<Cgroups, Error> {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(Error::BadName(name.to_owned()));
        }
        let mounts = Mounts::read().map_err(Error::Proc)?;
        let has_v1_memory = mounts
            .v1
            .iter()
            .any(|(cs, _)| cs.iter().any(|c| c == "memory"));
        let version = match prefer {
            Some(v) => v,
            None if has_v1_memory => Version::V1,
            None => Version::V2,
        };
        match version {
            Version::V1 => Cgroups::v1(&mounts, name, create),
            Version::V2 => Cgroups::v2(&mounts, name, create),
        }
    }

    fn v1(mounts: &Mounts, name: &str, create: bool) -> Result<Cgroups, Error> {
        let mut parents = Vec::new();
        let mut problems = Vec::new();
        for (controllers, mount) in &mounts.v1 {
            let Some(own) = controllers.iter().find_map(|c| mounts.own_group(c)) else {
                continue;
            };
            let parent = join(mount, own).join(name);
            if !create && !parent.is_dir() {
                continue;
            }
            match fs::create_dir_all(&parent) {
                Ok(()) => {
                    for c in controllers {
                        parents.push((c.clone(), parent.clone()));
                    }
                }
                Err(e) => problems.push(format!("{}: {e}", parent.display())),
            }
        }
        if !create && parents.is_empty() {
            return Err(Error::NoGroup(name.to_owned()));
        }
        if create && !parents.iter().any(|(c, _)| c == "memory" || c == "freezer") {
            return Err(if problems.is_empty() {
                Error::NoV1
            } else {
                Error::Make(problems.join("; "))
            });
        }
        Ok(Cgroups {
            name: name.to_owned(),
            version: Version::V1,
            parents,
            v2_controllers: Vec::new(),
        })
    }

    fn v2(mounts: &Mounts, name: &str, create: bool) -> Result<Cgroups, Error> {
        let mount = mounts.v2.as_ref().ok_or(Error::NoV2)?;
        let own = mounts.own_group("").ok_or(Error::NotInV2)?;
        let own_dir = join(mount, own);
        let parent = own_dir.join(name);
        if !create {
            if !parent.is_dir() {
                return Err(Error::NoGroup(name.to_owned()));
            }
            return Ok(Cgroups {
                name: name.to_owned(),
                version: Version::V2,
                parents: vec![("unified".to_owned(), parent)],
                v2_controllers: Vec::new(),
            });
        }
        fs::create_dir_all(&parent)
            .map_err(|e| Error::Make(format!("{}: {e}", own_dir.display())))?;
        // Controllers go to the jobs only through every group above them;
        // the agent's own group may hold processes, which forbids handing
        // controllers down (cgroup v2's no-internal-process rule): then
        // the jobs are tracked, frozen and killed, not limited.
        let available = fs::read_to_string(own_dir.join("cgroup.controllers")).unwrap_or_default();
        let mut enabled = Vec::new();
        for c in V2_CONTROLLERS {
            if !available.split_whitespace().any(|a| a == c) {
                continue;
            }
            let on = format!("+{c}");
            let ok = fs::write(own_dir.join("cgroup.subtree_control"), &on).is_ok()
                && fs::write(parent.join("cgroup.subtree_control"), &on).is_ok();
            if ok {
                enabled.push(c.to_owned());
            }
        }
        Ok(Cgroups {
            name: name.to_owned(),
            version: Version::V2,
            parents: vec![("unified".to_owned(), parent)],
            v2_controllers: enabled,
        })
    }

    pub fn version(&self) -> &Version {
        &self.version
    }

    /// Whether the memory limit is the kernel's (else it is watched).
    pub fn limits_memory(&self) -> bool {
        self.has("memory")
    }

    fn has(&self, controller: &str) -> bool {
        match self.version {
            Version::V1 => self.parents.iter().any(|(c, _)| c == controller),
            Version::V2 => self.v2_controllers.iter().any(|c| c == controller),
        }
    }

    /// One line for `status -l` and the log.
    pub fn describe(&self) -> String {
        match self.version {
            Version::V1 => {
                let mut cs: Vec<&str> = self.parents.iter().map(|(c, _)| c.as_str()).collect();
                cs.dedup();
                format!("cgroup v1 ({})", cs.join(", "))
            }
            Version::V2 if self.v2_controllers.is_empty() => {
                "cgroup v2 (tracking only: no controllers delegated)".to_owned()
            }
            Version::V2 => format!("cgroup v2 ({})", self.v2_controllers.join(", ")),
        }
    }

    fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.parents.iter().map(|(_, p)| p.clone()).collect();
        dirs.dedup();
        dirs
    }

    /// Makes the group of job `name`, with its limits.
    pub fn create(&self, name: &str, limits: Limits) -> io::Result<JobCgroup> {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name:?} is not a cgroup name"),
            ));
        }
        let mut group = JobCgroup {
            version: self.version.clone(),
            dirs: self
                .parents
                .iter()
                .map(|(c, p)| (c.clone(), p.join(name)))
                .collect(),
            memory: self.has("memory"),
            memory_limited: false,
        };
        let mut left_over = false;
        for dir in group.unique_dirs() {
            match fs::create_dir(&dir) {
                Ok(()) => {}
                // Left by an agent that died: whatever is in it goes.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => left_over = true,
                Err(e) => return Err(e),
            }
        }
        if left_over {
            group.kill_all();
        }
        group.memory_limited = group.set_limits(limits);
        Ok(group)
    }

    /// Removes the agent's parent groups once no job group is left in
    /// them (an agent keeps its own across restarts; tests let go).
    pub fn release(&self) {
        for dir in self.dirs() {
            let _ = fs::remove_dir(dir);
        }
    }

    /// Kills every process in job groups left by an earlier run of this
    /// agent and removes the groups. Returns how many groups went.
    pub fn sweep(&self) -> usize {
        self.sweep_except(&[])
    }

    /// The group of job `name` as it is (made by this agent or one before
    /// it), without changing it.
    pub fn job(&self, name: &str) -> JobCgroup {
        JobCgroup {
            version: self.version.clone(),
            dirs: self
                .parents
                .iter()
                .map(|(c, p)| (c.clone(), p.join(name)))
                .collect(),
            memory: self.has("memory"),
            memory_limited: self.has("memory"),
        }
    }

    /// Kills every process of job `name`'s group and removes it.
    pub fn kill_job(&self, name: &str) {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return;
        }
        let _ = self.job(name).remove();
    }

    /// [`Cgroups::sweep`], leaving the groups named in `keep` (jobs an
    /// agent takes on again after a crash).
    pub fn sweep_except(&self, keep: &[&str]) -> usize {
        let mut names: Vec<String> = Vec::new();
        for dir in self.dirs() {
            for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    if let Ok(name) = entry.file_name().into_string() {
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
            }
        }
        let mut n = 0;
        for name in names.into_iter().filter(|n| !keep.contains(&n.as_str())) {
            let group = JobCgroup {
                version: self.version.clone(),
                dirs: self
                    .parents
                    .iter()
                    .map(|(c, p)| (c.clone(), p.join(&name)))
                    .collect(),
                memory: false,
                memory_limited: false,
            };
            if group.remove().is_ok() {
                n += 1;
            }
        }
        n
    }
}

/// What a job's group enforces.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Hard memory limit (`request_memory`); 0: none.
    pub memory_bytes: u64,
    /// CPU weight, as `request_cpus`.
    pub cpus: u32,
}

/// One job's group.
#[derive(Debug)]
pub struct JobCgroup {
    version: Version,
    dirs: Vec<(String, PathBuf)>,
    /// The memory controller counts the group's memory.
    memory: bool,
    /// Its hard memory limit was set.
    memory_limited: bool,
}

/// Memory and CPU a group used.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub memory_kib: u64,
    pub peak_memory_kib: u64,
    pub user_cpu: Duration,
    pub system_cpu: Duration,
    /// Processes the kernel killed for the memory limit.
    pub oom_kills: u64,
}

impl JobCgroup {
    fn unique_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.dirs.iter().map(|(_, p)| p.clone()).collect();
        dirs.dedup();
        dirs
    }

    fn dir(&self, controller: &str) -> Option<&Path> {
        match self.version {
            Version::V1 => self
                .dirs
                .iter()
                .find(|(c, _)| c == controller)
                .map(|(_, p)| p.as_path()),
            Version::V2 => self.dirs.first().map(|(_, p)| p.as_path()),
        }
    }

    /// Whether the group's memory is counted by the kernel.
    pub fn measures_memory(&self) -> bool {
        self.memory
    }

    /// Whether the kernel holds the group to its memory request.
    pub fn limits_memory(&self) -> bool {
        self.memory_limited
    }

    /// Sets the limits; returns whether the memory limit is in force.
    fn set_limits(&self, limits: Limits) -> bool {
        let write = |controller: &str, file: &str, value: String| -> bool {
            let Some(dir) = self.dir(controller) else {
                return false;
            };
            let path = dir.join(file);
            if !path.exists() {
                return false;
            }
            match fs::write(&path, value) {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot set a cgroup limit");
                    false
                }
            }
        };
        let cpus = u64::from(limits.cpus.max(1));
        let memory = self.memory && limits.memory_bytes > 0;
        match self.version {
            Version::V1 => {
                let limited = memory
                    && write(
                        "memory",
                        "memory.limit_in_bytes",
                        limits.memory_bytes.to_string(),
                    );
                if limited {
                    // Swap does not stretch the limit.
                    write(
                        "memory",
                        "memory.memsw.limit_in_bytes",
                        limits.memory_bytes.to_string(),
                    );
                }
                write("cpu", "cpu.shares", (1024 * cpus).min(262_144).to_string());
                limited
            }
            Version::V2 => {
                let limited =
                    memory && write("memory", "memory.max", limits.memory_bytes.to_string());
                if limited {
                    write("memory", "memory.swap.max", "0".to_owned());
                }
                write("cpu", "cpu.weight", (100 * cpus).min(10_000).to_string());
                limited
            }
        }
    }

    /// `cgroup.procs` of every hierarchy, opened for writing: a child
    /// writes `0` into each, before it execs, to join the job's group.
    /// The `cgroup.procs` files a process writes itself into to join.
    pub fn procs_paths(&self) -> Vec<PathBuf> {
        self.unique_dirs()
            .iter()
            .map(|dir| dir.join("cgroup.procs"))
            .collect()
    }

    pub fn procs_files(&self) -> io::Result<Vec<OwnedFd>> {
        self.unique_dirs()
            .iter()
            .map(|dir| {
                fs::OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
                    .map(OwnedFd::from)
            })
            .collect()
    }

    /// The processes in the group now.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = Vec::new();
        for dir in self.unique_dirs() {
            if let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) {
                for pid in text.lines().filter_map(|l| l.trim().parse().ok()) {
                    if !pids.contains(&pid) {
                        pids.push(pid);
                    }
                }
            }
        }
        pids
    }

    /// Memory and CPU used so far.
    pub fn usage(&self) -> Usage {
        let read = |controller: &str, file: &str| {
            self.dir(controller)
                .and_then(|d| fs::read_to_string(d.join(file)).ok())
        };
        let number = |text: Option<String>| text.and_then(|t| t.trim().parse::<u64>().ok());
        let field = |text: &Option<String>, key: &str| {
            text.as_deref().and_then(|t| {
                t.lines().find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == key).then(|| v.trim().parse::<u64>().ok())?
                })
            })
        };
        let mut usage = Usage::default();
        match self.version {
            Version::V1 => {
                usage.memory_kib =
                    number(read("memory", "memory.usage_in_bytes")).unwrap_or(0) / 1024;
                usage.peak_memory_kib =
                    number(read("memory", "memory.max_usage_in_bytes")).unwrap_or(0) / 1024;
                usage.oom_kills =
                    field(&read("memory", "memory.oom_control"), "oom_kill").unwrap_or(0);
                let stat = read("cpuacct", "cpuacct.stat");
                let ticks = rustix::param::clock_ticks_per_second().max(1);
                let secs = |t: u64| Duration::from_secs_f64(t as f64 / ticks as f64);
                usage.user_cpu = secs(field(&stat, "user").unwrap_or(0));
                usage.system_cpu = secs(field(&stat, "system").unwrap_or(0));
            }
            Version::V2 => {
                usage.memory_kib = number(read("memory", "memory.current")).unwrap_or(0) / 1024;
                usage.peak_memory_kib = number(read("memory", "memory.peak")).unwrap_or(0) / 1024;
                usage.oom_kills = field(&read("memory", "memory.events"), "oom_kill").unwrap_or(0);
                let stat = read("cpu", "cpu.stat");
                usage.user_cpu = Duration::from_micros(field(&stat, "user_usec").unwrap_or(0));
                usage.system_cpu = Duration::from_micros(field(&stat, "system_usec").unwrap_or(0));
            }
        }
        usage.peak_memory_kib = usage.peak_memory_kib.max(usage.memory_kib);
        usage
    }

    /// Freezes (`true`) or thaws the whole group. `Ok(false)`: there is
    /// no freezer here, signal the processes instead.
    pub fn freeze(&self, frozen: bool) -> io::Result<bool> {
        match self.version {
            Version::V1 => match self.dir("freezer") {
                Some(dir) => {
                    let state = if frozen { "FROZEN" } else { "THAWED" };
                    fs::write(dir.join("freezer.state"), state)?;
                    Ok(true)
                }
                None => Ok(false),
            },
            Version::V2 => match self.dir("") {
                Some(dir) if dir.join("cgroup.freeze").exists() => {
                    fs::write(dir.join("cgroup.freeze"), if frozen { "1" } else { "0" })?;
                    Ok(true)
                }
                _ => Ok(false),
            },
        }
    }

    fn frozen(&self) -> bool {
        match self.version {
            Version::V1 => self
                .dir("freezer")
                .and_then(|d| fs::read_to_string(d.join("freezer.state")).ok())
                .is_some_and(|s| s.trim() == "FROZEN"),
            Version::V2 => self
                .dir("")
                .and_then(|d| fs::read_to_string(d.join("cgroup.events")).ok())
                .is_some_and(|s| s.lines().any(|l| l.trim() == "frozen 1")),
        }
    }

    /// SIGKILLs every process in the group, including ones forking as it
    /// goes: the group is frozen first where it can be, so nothing escapes
    /// between the listing and the kill. Returns how many were signalled.
    pub fn kill_all(&self) -> usize {
        // Most jobs leave nothing behind: no freeze, no signal.
        if self.pids().is_empty() {
            return 0;
        }
        if self.version == Version::V2 {
            if let Some(dir) = self.dir("") {
                if fs::write(dir.join("cgroup.kill"), "1").is_ok() {
                    return self.pids().len();
                }
            }
        }
        let froze = self.freeze(true).unwrap_or(false);
        if froze {
            let deadline = Instant::now() + FREEZE_SETTLE;
            while !self.frozen() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let mut signalled = 0;
        for _ in 0..16 {
            let pids = self.pids();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    if rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok() {
                        signalled += 1;
                    }
                }
            }
            if froze {
                break;
            }
        }
        if froze {
            let _ = self.freeze(false);
        }
        signalled
    }

    /// Kills what is left and removes the group. Fails when processes
    /// outlive [`EMPTY_WAIT`] (stuck in the kernel).
    pub fn remove(&self) -> io::Result<()> {
        let deadline = Instant::now() + EMPTY_WAIT;
        loop {
            self.kill_all();
            if self.pids().is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                return Err(io::Error::other(format!(
                    "processes of the job are still in {} after SIGKILL",
                    self.unique_dirs()
                        .first()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for dir in self.unique_dirs() {
            // The last process can take a moment to leave after its death.
            let mut tries = 0;
            loop {
                match fs::remove_dir(&dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                    Err(e) if tries >= 50 => return Err(e),
                    Err(_) => {
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
24 1 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
25 24 0:23 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
26 24 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
27 24 0:25 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
28 24 0:26 /sub /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
";
    const OWN: &str = "\
5:pids:/
4:memory:/process_api/abc
2:cpu,cpuacct:/
0::/user.slice
";

    #[test]
    fn hierarchies_and_our_own_groups_are_read_from_proc() {
        let m = Mounts::parse(MOUNTINFO, OWN);
        assert_eq!(m.v2, Some(PathBuf::from("/sys/fs/cgroup/unified")));
        // The pids mount shows only a subtree: not used.
        assert_eq!(
            m.v1,
            vec![
                (
                    vec!["memory".to_owned()],
                    PathBuf::from("/sys/fs/cgroup/memory")
                ),
                (
                    vec!["cpu".to_owned(), "cpuacct".to_owned()],
                    PathBuf::from("/sys/fs/cgroup/cpu,cpuacct")
                ),
            ]
        );
        assert_eq!(m.own_group("memory"), Some("/process_api/abc"));
        assert_eq!(m.own_group("cpuacct"), Some("/"));
        assert_eq!(m.own_group(""), Some("/user.slice"));
        assert_eq!(
            join(Path::new("/sys/fs/cgroup/memory"), "/process_api/abc"),
            PathBuf::from("/sys/fs/cgroup/memory/process_api/abc")
        );
        assert_eq!(unescape(r"/mnt/a\040b"), "/mnt/a b");
    }
}
