//! The machine ad: what this machine offers, in HTCondor's attribute names.
//!
//! Two halves. [`Probe::read`] looks at the real machine once (processors,
//! memory, free disk at the data directory, load, keyboard and console idle
//! time, the OS release, and a short Mips/KFlops benchmark); the parsers of
//! `/proc` and `/etc` text take `&str` so tests feed them samples.
//! [`build_ad`] is pure: it turns a [`Probe`], the `[machine]` configuration,
//! the agent's [`Identity`] and its [`Status`] into a [`ClassAd`]. The
//! agent calls it again whenever something changes and at the refresh
//! interval, and gossips the result.
//!
//! Attributes follow HTCondor's startd: `Memory` in MiB, `Disk` in KiB,
//! `LoadAvg` a real, `KeyboardIdle`/`ConsoleIdle` in seconds (left out where
//! the OS does not expose them), `EnteredCurrentState` in unix seconds.
//! Starling's own facts are `StarlingAgentId`, `StarlingDomain`,
//! `StarlingRoles`, `StarlingVersion` and `StarlingAddresses` (where peers
//! dial the agent: what lets an agent that sees the ad connect to it
//! without a lookup, see `crate::network::directory`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use starling_protocol::classad::{parse_expr, ClassAd, Expr, NameError, ParseError, Value};

use starling_policies::slots;

use crate::config;

pub mod attributes;
pub mod gpus;
pub mod java;

pub use attributes::{AGENT_ATTRIBUTES, GPU_ATTRIBUTE_PREFIX};

/// How long the start-up benchmark may run, both halves together.
pub const BENCHMARK_BUDGET: Duration = Duration::from_millis(80);

/// Why a machine ad could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configured expression does not parse (configuration that skipped
    /// [`config::Config::validate`]).
    #[error("`{key}` is not a valid ClassAd expression")]
    Expression {
        key: String,
        #[source]
        source: ParseError,
    },
    /// An attribute name the ClassAd interner refuses.
    #[error("attribute {name:?} cannot be used")]
    Name {
        name: String,
        #[source]
        source: NameError,
    },
}

/// The OS release, from `/etc/os-release`, in HTCondor's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsRelease {
    /// `OpSysName`: `Ubuntu`, `Debian`, `AlmaLinux`, `RedHat`...
    pub name: String,
    /// `OpSysMajorVer`: `22` for Ubuntu 22.04.
    pub major: i64,
    /// `OpSysVer`: major × 100 + minor, `2204` for Ubuntu 22.04.
    pub version: i64,
}

/// What was measured on the machine: plain data, so tests build their own.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The host name (`Machine`).
    pub hostname: String,
    /// HTCondor's spelling of the processor architecture (`Arch`).
    pub arch: String,
    /// HTCondor's `OpSys`: `LINUX`, `OSX`, `WINDOWS`...
    pub op_sys: String,
    /// The OS release, when it could be read.
    pub os_release: Option<OsRelease>,
    /// Processors this process may use (`Cpus`).
    pub cpus: u32,
    /// Physical memory in MiB (`Memory`).
    pub memory_mib: Option<u64>,
    /// Free disk at the data directory in KiB (`Disk`).
    pub disk_kib: Option<u64>,
    /// The one-minute load average (`LoadAvg`).
    pub load_avg: Option<f64>,
    /// Seconds since any terminal or console device was used.
    pub keyboard_idle: Option<u64>,
    /// Seconds since a console device (keyboard, mouse) was used.
    pub console_idle: Option<u64>,
    /// Integer benchmark, millions of instructions per second (`Mips`).
    pub mips: i64,
    /// Floating-point benchmark, thousands of flops (`KFlops`).
    pub kflops: i64,
    /// The GPUs found ([`gpus::discover`]; empty until then).
    pub gpus: Vec<gpus::Gpu>,
    /// The JVM found ([`java::detect`]; `None` until then, or none here).
    pub java: Option<java::Jvm>,
}

/// Who the agent is, as far as the ad says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The agent id (its libp2p peer id, base58).
    pub agent_id: String,
    /// The domain named by its certificate; `None` for an agent alone in
    /// its own domain.
    pub domain: Option<String>,
    /// The roles granted, comma-separated (`execute,submit`).
    pub roles: String,
    /// The Starling version.
    pub version: String,
    /// The addresses peers dial the agent at (`/ip4/…/tcp/…/p2p/<id>`),
    /// at most [`MAX_ADDRESSES`]; empty until it listens.
    pub addresses: Vec<String>,
}

/// Addresses a machine ad names at most (`StarlingAddresses`).
pub const MAX_ADDRESSES: usize = 4;

/// The machine's state, as HTCondor's startd state machine names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// `State`: `Unclaimed`, `Claimed`, `Owner`, `Matched`, `Preempting`...
    pub state: String,
    /// `Activity`: `Idle`, `Busy`, `Suspended`, `Vacating`...
    pub activity: String,
    /// `EnteredCurrentState`, unix seconds.
    pub entered: i64,
    /// `Draining`: the machine takes no new jobs (`starling drain`).
    pub draining: bool,
    /// The agent's data directory is full: why, starting "disk full". The
    /// machine takes no new jobs until space returns (`START` is false, so
    /// the startd shows it in the Owner state).
    pub disk_full: Option<String>,
}

impl Status {
    /// `Unclaimed`/`Idle`, entered at `now`: an agent that just started.
    pub fn unclaimed(now: i64) -> Status {
        Status {
            state: "Unclaimed".to_owned(),
            activity: "Idle".to_owned(),
            entered: now,
            draining: false,
            disk_full: None,
        }
    }
}

/// Builds the machine ad. `now` is unix seconds (`MyCurrentTime`).
pub fn build_ad(
    probe: &Probe,
    machine: &config::Machine,
    identity: &Identity,
    status: &Status,
    now: i64,
) -> Result<ClassAd, Error> {
    let mut ad = ClassAd::with_capacity(AGENT_ATTRIBUTES.len() + machine.attributes.len());
    // Configured extras first: the agent's own attributes come after and so
    // would win, though validation already keeps the names apart.
    for (name, text) in &machine.attributes {
        set(
            &mut ad,
            name,
            expr(&format!("machine.attributes.{name}"), text)?,
        )?;
    }
    let text = |s: &str| Expr::from(Value::string(s));
    let int = |i: i64| Expr::from(Value::Int(i));
    let real = |r: f64| Expr::from(Value::Real(r));
    let name = match &machine.name {
        Some(n) => n.clone(),
        None => format!("slot1@{}", probe.hostname),
    };
    set(&mut ad, "MyType", text("Machine"))?;
    set(&mut ad, "Name", text(&name))?;
    set(&mut ad, "Machine", text(&probe.hostname))?;
    set(&mut ad, "SlotID", int(1))?;
    set(&mut ad, "Arch", text(&probe.arch))?;
    set(&mut ad, "OpSys", text(&probe.op_sys))?;
    if let Some(os) = &probe.os_release {
        set(&mut ad, "OpSysName", text(&os.name))?;
        set(&mut ad, "OpSysMajorVer", int(os.major))?;
        set(&mut ad, "OpSysVer", int(os.version))?;
        set(
            &mut ad,
            "OpSysAndVer",
            text(&format!("{}{}", os.name, os.major)),
        )?;
    }
    let cpus = i64::from(probe.cpus);
    set(&mut ad, "Cpus", int(cpus))?;
    set(&mut ad, "TotalCpus", int(cpus))?;
    if let Some(mib) = probe.memory_mib {
        let mib = saturating_i64(mib);
        set(&mut ad, "Memory", int(mib))?;
        set(&mut ad, "TotalMemory", int(mib))?;
    }
    if let Some(kib) = probe.disk_kib {
        let kib = saturating_i64(kib);
        set(&mut ad, "Disk", int(kib))?;
        set(&mut ad, "TotalDisk", int(kib))?;
    }
    if let Some(load) = probe.load_avg {
        set(&mut ad, "LoadAvg", real(load))?;
        set(&mut ad, "TotalLoadAvg", real(load))?;
    }
    if let Some(idle) = probe.keyboard_idle {
        set(&mut ad, "KeyboardIdle", int(saturating_i64(idle)))?;
    }
    if let Some(idle) = probe.console_idle {
        set(&mut ad, "ConsoleIdle", int(saturating_i64(idle)))?;
    }
    set_gpus(&mut ad, &probe.gpus);
    if let Some(jvm) = &probe.java {
        set(&mut ad, "HasJava", Expr::Literal(Value::Bool(true)))?;
        if let Some(vendor) = &jvm.vendor {
            set(&mut ad, "JavaVendor", text(vendor))?;
        }
        set(&mut ad, "JavaVersion", text(&jvm.version))?;
    }
    set(&mut ad, "Mips", int(probe.mips))?;
    set(&mut ad, "KFlops", int(probe.kflops))?;
    set(&mut ad, "State", text(&status.state))?;
    set(&mut ad, "Activity", text(&status.activity))?;
    set(&mut ad, "EnteredCurrentState", int(status.entered))?;
    // State and activity change together for now (unclaimed/idle).
    set(&mut ad, "EnteredCurrentActivity", int(status.entered))?;
    set(&mut ad, "MyCurrentTime", int(now))?;
    // A full disk makes START false: the startd's owner policy then shows
    // the Owner state, and claims are refused. The newline ends a `//`
    // comment the configured text may close with.
    let start = match &status.disk_full {
        Some(_) => format!("({}\n) && MY.StarlingDiskFull =!= true", machine.start),
        None => machine.start.clone(),
    };
    set(&mut ad, "Start", expr("machine.start", &start)?)?;
    set(
        &mut ad,
        "StarlingDiskFull",
        Expr::Literal(Value::Bool(status.disk_full.is_some())),
    )?;
    if let Some(reason) = &status.disk_full {
        set(&mut ad, "StarlingDiskFullReason", text(reason))?;
    }
    set(
        &mut ad,
        "Draining",
        Expr::Literal(Value::Bool(status.draining)),
    )?;
    let mut requirements = if status.draining {
        // A drained machine matches nothing, and its own clause says why,
        // so that `why` names it. The newline ends a `//` comment the configured text may close with.
        format!("({}\n) && MY.Draining =!= true", machine.requirements)
    } else {
        machine.requirements.clone()
    };
    if status.disk_full.is_some() {
        // As a drain: no submitter matches a machine that cannot take the
        // job, and `why` names the clause.
        requirements = format!("({requirements}\n) && MY.StarlingDiskFull =!= true");
    }
    set(
        &mut ad,
        "Requirements",
        expr("machine.requirements", &requirements)?,
    )?;
    set(&mut ad, "Rank", expr("machine.rank", &machine.rank)?)?;
    // The owner policy, evaluated by the startd against this ad (and shown
    // to submitters, who can see when a machine would suspend their jobs).
    for (name, key, text) in [
        ("SUSPEND", "machine.suspend", &machine.suspend),
        ("CONTINUE", "machine.continue", &machine.continue_),
        ("PREEMPT", "machine.preempt", &machine.preempt),
        ("KILL", "machine.kill", &machine.kill),
        (
            "WANT_SUSPEND",
            "machine.want_suspend",
            &machine.want_suspend,
        ),
        ("WANT_VACATE", "machine.want_vacate", &machine.want_vacate),
        (
            "MaxJobRetirementTime",
            "machine.max_job_retirement_time",
            &machine.max_job_retirement_time,
        ),
        (
            "MachineMaxVacateTime",
            "machine.machine_max_vacate_time",
            &machine.machine_max_vacate_time,
        ),
        (
            "PREEMPTION_REQUIREMENTS",
            "machine.preemption_requirements",
            &machine.preemption_requirements,
        ),
    ] {
        set(&mut ad, name, expr(key, text)?)?;
    }
    let (clock_min, clock_day) = clock(now);
    set(&mut ad, "ClockMin", int(clock_min))?;
    set(&mut ad, "ClockDay", int(clock_day))?;
    set(&mut ad, "StarlingAgentId", text(&identity.agent_id))?;
    if let Some(domain) = &identity.domain {
        set(&mut ad, "StarlingDomain", text(domain))?;
    }
    set(&mut ad, "StarlingRoles", text(&identity.roles))?;
    set(&mut ad, "StarlingVersion", text(&identity.version))?;
    if !identity.addresses.is_empty() {
        let shown = &identity.addresses[..identity.addresses.len().min(MAX_ADDRESSES)];
        set(&mut ad, "StarlingAddresses", text(&shown.join(", ")))?;
    }
    Ok(ad)
}

/// The GPU attributes as HTCondor's startd writes them: `MachineResources`
/// naming GPUs among the machine's resources, `TotalGPUs`, `DetectedGPUs`
/// (`"GPU-a, GPU-b"`, discovery's list), each device's ad
/// (`GPUs_GPU_a = [ Id = "GPU-a"; DeviceName = ...; Capability = ... ]`)
/// with the properties all devices share also as `GPUs_<property>`, and,
/// all devices being free here, `GPUs`, `AssignedGPUs` and `AvailableGPUs`
/// ([`slots::set_gpu_attributes`]; the startd's claims take theirs out
/// where the ad is published). A machine without GPUs says `GPUs = 0`.
fn set_gpus(ad: &mut ClassAd, found: &[gpus::Gpu]) {
    use starling_protocol::classad::Name;
    let devices: Vec<slots::Device> = found
        .iter()
        .map(|g| slots::Device {
            id: g.id.clone(),
            properties: gpus::properties(g),
        })
        .collect();
    let text = |s: &str| Expr::from(Value::string(s));
    ad.insert(
        Name::known("MachineResources"),
        text("Cpus Memory Disk GPUs"),
    );
    ad.insert(
        Name::known("TotalGPUs"),
        Expr::from(Value::Int(devices.len() as i64)),
    );
    if !devices.is_empty() {
        let ids: Vec<&str> = devices.iter().map(|d| d.id.as_str()).collect();
        ad.insert(Name::known("DetectedGPUs"), text(&ids.join(", ")));
    }
    slots::set_gpu_attributes(ad, &devices.iter().collect::<Vec<_>>());
}

/// HTCondor's clock attributes at `now` (unix seconds) in the machine's
/// local time: `ClockMin`, minutes since midnight, and `ClockDay`, the day
/// of the week from 0 for Sunday. Owners write policies such as "only
/// at night" with them.
pub fn clock(now: i64) -> (i64, i64) {
    let local = jiff::Timestamp::from_second(now)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned(jiff::tz::TimeZone::system());
    let minutes = i64::from(local.hour()) * 60 + i64::from(local.minute());
    let day = i64::from(local.weekday().to_sunday_zero_offset());
    (minutes, day)
}

fn set(ad: &mut ClassAd, name: &str, value: Expr) -> Result<(), Error> {
    ad.insert_str(name, value).map_err(|source| Error::Name {
        name: name.to_owned(),
        source,
    })
}

fn expr(key: &str, text: &str) -> Result<Expr, Error> {
    parse_expr(text).map_err(|source| Error::Expression {
        key: key.to_owned(),
        source,
    })
}

fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Probe {
    /// Reads the real machine; `data_dir` is where `Disk` is measured (the
    /// nearest existing ancestor if it does not exist yet). Runs the
    /// benchmark, so it takes about [`BENCHMARK_BUDGET`]; call it once at
    /// start and refresh the cheap parts with [`Probe::refresh`]. It blocks
    /// (file reads and the benchmark): keep it off the async threads.
    pub fn read(data_dir: &Path, keyboard_devices: Option<&[PathBuf]>) -> Probe {
        let (mips, kflops) = benchmark(BENCHMARK_BUDGET);
        let mut probe = Probe {
            hostname: hostname(),
            arch: condor_arch(std::env::consts::ARCH).to_owned(),
            op_sys: condor_op_sys(std::env::consts::OS),
            os_release: read_text("/etc/os-release")
                .as_deref()
                .and_then(parse_os_release),
            cpus: std::thread::available_parallelism()
                .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
            memory_mib: read_text("/proc/meminfo")
                .as_deref()
                .and_then(parse_meminfo_mib),
            disk_kib: None,
            load_avg: None,
            keyboard_idle: None,
            console_idle: None,
            mips,
            kflops,
            gpus: Vec::new(),
            java: None,
        };
        probe.refresh(data_dir, keyboard_devices, SystemTime::now());
        probe
    }

    /// Re-reads what changes while the agent runs: free disk, load and
    /// idle times. `keyboard_devices` replaces the machine's own terminals
    /// and input devices when given (`[machine] keyboard_devices`).
    pub fn refresh(
        &mut self,
        data_dir: &Path,
        keyboard_devices: Option<&[PathBuf]>,
        now: SystemTime,
    ) {
        self.disk_kib = free_disk_kib(data_dir);
        self.load_avg = read_text("/proc/loadavg")
            .as_deref()
            .and_then(parse_loadavg);
        if let Some(devices) = keyboard_devices {
            let last = newest_access(devices);
            self.console_idle = last.map(|t| idle_secs(now, t));
            self.keyboard_idle = self.console_idle;
            return;
        }
        let console = newest_access(&console_devices());
        let ttys = newest_access(&tty_devices());
        let keyboard = match (console, ttys) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.console_idle = console.map(|t| idle_secs(now, t));
        self.keyboard_idle = keyboard.map(|t| idle_secs(now, t));
    }
}

fn read_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

pub use starling_process::hostname;

/// HTCondor's spelling of Rust's `std::env::consts::ARCH`.
pub fn condor_arch(rust_arch: &str) -> &str {
    match rust_arch {
        "x86_64" => "X86_64",
        "x86" => "INTEL",
        "aarch64" => "aarch64",
        "powerpc64" if cfg!(target_endian = "little") => "ppc64le",
        "powerpc64" => "PPC64",
        "arm" => "ARM",
        other => other,
    }
}

/// HTCondor's `OpSys` for Rust's `std::env::consts::OS`.
pub fn condor_op_sys(rust_os: &str) -> String {
    match rust_os {
        "linux" => "LINUX".to_owned(),
        "macos" => "OSX".to_owned(),
        "windows" => "WINDOWS".to_owned(),
        other => other.to_ascii_uppercase(),
    }
}

/// `MemTotal` from `/proc/meminfo`, in MiB.
pub fn parse_meminfo_mib(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let kib = match words.next() {
        None | Some("kB") => n,
        Some(_) => return None,
    };
    Some(kib / 1024)
}

/// The one-minute load average from `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    let load: f64 = text.split_whitespace().next()?.parse().ok()?;
    (load.is_finite() && load >= 0.0).then_some(load)
}

/// `OpSysName`, `OpSysMajorVer` and `OpSysVer` from `/etc/os-release`.
pub fn parse_os_release(text: &str) -> Option<OsRelease> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let value = l.strip_prefix(key)?.strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_owned())
        })
    };
    let name = field("NAME")?;
    let name = if name.starts_with("Red Hat") {
        "RedHat".to_owned()
    } else {
        name.split_whitespace().next()?.to_owned()
    };
    let version = field("VERSION_ID")?;
    let mut parts = version.split('.');
    let major: i64 = parts.next()?.parse().ok()?;
    let minor: i64 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some(OsRelease {
        name,
        major,
        version: major * 100 + minor.min(99),
    })
}

/// Free space for unprivileged users at `path` (or its nearest existing
/// ancestor), in KiB.
fn free_disk_kib(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let st = rustix::fs::statvfs(existing).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize) / 1024)
}

/// Keyboards, mice and the console: HTCondor's console devices.
fn console_devices() -> Vec<PathBuf> {
    let mut devices = list_dir("/dev/input", |_| true);
    devices.push(PathBuf::from("/dev/console"));
    devices
}

/// Terminals people log in on: pseudo-terminals and virtual consoles.
fn tty_devices() -> Vec<PathBuf> {
    let mut devices = list_dir("/dev/pts", |n| n.bytes().all(|b| b.is_ascii_digit()));
    devices.extend(list_dir("/dev", |n| {
        n.strip_prefix("tty")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    }));
    devices
}

/// At most this many entries of one directory are looked at.
const MAX_DEVICES: usize = 1024;

fn list_dir(dir: &str, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .take(MAX_DEVICES)
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(&keep))
        .map(|e| e.path())
        .collect()
}

/// The newest access time among `paths`; `None` when none can be read.
fn newest_access(paths: &[PathBuf]) -> Option<SystemTime> {
    paths
        .iter()
        .filter_map(|p| {
            // Reading a device sets its access time, writing to a file its
            // modification time: either is activity.
            let m = std::fs::metadata(p).ok()?;
            [m.accessed().ok(), m.modified().ok()]
                .into_iter()
                .flatten()
                .max()
        })
        .max()
}

/// Whole seconds from `then` to `now`; zero if `then` is in the future.
pub fn idle_secs(now: SystemTime, then: SystemTime) -> u64 {
    now.duration_since(then).map_or(0, |d| d.as_secs())
}

/// Runs the integer and floating-point benchmarks, each for half of
/// `budget`, and returns (`Mips`, `KFlops`). The work is fixed; only the
/// time it takes varies. Both results are at least 1.
pub fn benchmark(budget: Duration) -> (i64, i64) {
    let half = budget / 2;
    // One round of the integer kernel: a xorshift step (3 shifts, 3 xors),
    // a multiply and an add, over 1024 iterations.
    const INT_ROUND_OPS: u64 = 8 * 1024;
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut acc = 0_u64;
    let int_ops = timed(half, INT_ROUND_OPS, || {
        for _ in 0..1024 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            acc = acc.wrapping_add(state.wrapping_mul(0x2545_F491_4F6C_DD1D));
        }
        std::hint::black_box(acc);
    });
    // One round of the floating-point kernel: daxpy over 256 elements,
    // a multiply and an add each.
    const FLOAT_ROUND_OPS: u64 = 2 * 256;
    let x: Vec<f64> = (0..256).map(|i| f64::from(i) * 0.5 + 1.0).collect();
    let mut y: Vec<f64> = vec![1.0; 256];
    let a = std::hint::black_box(1.000_001_f64);
    let flops = timed(half, FLOAT_ROUND_OPS, || {
        for (yi, xi) in y.iter_mut().zip(&x) {
            *yi = a.mul_add(*xi, *yi) * 0.5;
        }
        std::hint::black_box(&mut y);
    });
    let mips = (int_ops / 1e6).round().max(1.0) as i64;
    let kflops = (flops / 1e3).round().max(1.0) as i64;
    (mips, kflops)
}

/// Runs `round` until `budget` has passed; returns operations per second.
fn timed(budget: Duration, ops_per_round: u64, mut round: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut rounds = 0_u64;
    loop {
        for _ in 0..16 {
            round();
        }
        rounds += 16;
        let elapsed = start.elapsed();
        if elapsed >= budget {
            return (rounds * ops_per_round) as f64 / elapsed.as_secs_f64();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::matching::Matcher;
    use starling_protocol::classad::{parse_ad, unparse, Evaluator, Mode, ValueType};

    const MEMINFO: &str = "MemTotal:       16318024 kB\n\
                           MemFree:         1234567 kB\n\
                           MemAvailable:    9876543 kB\n";

    fn probe() -> Probe {
        Probe {
            hostname: "worker7.example.org".to_owned(),
            arch: "X86_64".to_owned(),
            op_sys: "LINUX".to_owned(),
            os_release: Some(OsRelease {
                name: "Ubuntu".to_owned(),
                major: 22,
                version: 2204,
            }),
            cpus: 8,
            memory_mib: Some(15935),
            disk_kib: Some(50_000_000),
            load_avg: Some(0.25),
            keyboard_idle: Some(600),
            console_idle: Some(900),
            mips: 20_000,
            kflops: 1_500_000,
            gpus: Vec::new(),
            java: Some(java::Jvm {
                program: "java".into(),
                vendor: Some("Eclipse Adoptium".to_owned()),
                version: "17.0.8".to_owned(),
            }),
        }
    }

    fn identity() -> Identity {
        Identity {
            agent_id: "12D3KooWabc".to_owned(),
            domain: Some("physics.example.org".to_owned()),
            roles: "execute,submit".to_owned(),
            version: "0.1.0".to_owned(),
            addresses: vec![
                "/ip4/10.0.0.7/tcp/4001/p2p/12D3KooWabc".to_owned(),
                "/ip4/192.168.1.7/tcp/4001/p2p/12D3KooWabc".to_owned(),
            ],
        }
    }

    fn eval(ad: &ClassAd, name: &str) -> Value {
        let expr = parse_expr(name).unwrap();
        Evaluator::with_ads(Some(ad), None).eval(&expr)
    }

    #[test]
    fn meminfo_is_read_in_mib() {
        assert_eq!(parse_meminfo_mib(MEMINFO), Some(15935));
        assert_eq!(parse_meminfo_mib("MemFree: 1 kB\n"), None);
        assert_eq!(parse_meminfo_mib("MemTotal: lots kB\n"), None);
        assert_eq!(parse_meminfo_mib("MemTotal: 2048 MB\n"), None);
        assert_eq!(parse_meminfo_mib(""), None);
    }

    #[test]
    fn loadavg_is_the_first_field() {
        assert_eq!(parse_loadavg("0.52 0.58 0.59 1/467 12345\n"), Some(0.52));
        assert_eq!(parse_loadavg("12.00 1 1 1/1 1"), Some(12.0));
        assert_eq!(parse_loadavg("nan 1 1"), None);
        assert_eq!(parse_loadavg("-1 1 1"), None);
        assert_eq!(parse_loadavg(""), None);
    }

    #[test]
    fn os_release_in_htcondor_terms() {
        let ubuntu = "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\n\
                      VERSION_ID=\"22.04\"\nID=ubuntu\n";
        assert_eq!(
            parse_os_release(ubuntu),
            Some(OsRelease {
                name: "Ubuntu".to_owned(),
                major: 22,
                version: 2204
            })
        );
        let rhel = "NAME=\"Red Hat Enterprise Linux\"\nVERSION_ID=\"9.3\"\n";
        let r = parse_os_release(rhel).unwrap();
        assert_eq!((r.name.as_str(), r.major, r.version), ("RedHat", 9, 903));
        let debian = "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
        let d = parse_os_release(debian).unwrap();
        assert_eq!((d.name.as_str(), d.major, d.version), ("Debian", 12, 1200));
        // Rolling releases have no VERSION_ID: no OpSysVer then.
        assert_eq!(parse_os_release("NAME=\"Arch Linux\"\nID=arch\n"), None);
    }

    #[test]
    fn arch_and_op_sys_use_htcondor_spelling() {
        assert_eq!(condor_arch("x86_64"), "X86_64");
        assert_eq!(condor_arch("aarch64"), "aarch64");
        assert_eq!(condor_arch("x86"), "INTEL");
        assert_eq!(condor_op_sys("linux"), "LINUX");
        assert_eq!(condor_op_sys("macos"), "OSX");
    }

    #[test]
    fn idle_is_whole_seconds_and_never_negative() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        assert_eq!(idle_secs(t + Duration::from_millis(90_500), t), 90);
        assert_eq!(idle_secs(t, t + Duration::from_secs(5)), 0);
    }

    #[test]
    fn the_ad_has_every_attribute_with_its_type() {
        let now = 1_700_000_000;
        let ad = build_ad(
            &probe(),
            &config::Machine::default(),
            &identity(),
            &Status::unclaimed(now - 30),
            now,
        )
        .unwrap();
        for (name, ty) in [
            ("MyType", ValueType::String),
            ("Name", ValueType::String),
            ("Machine", ValueType::String),
            ("SlotID", ValueType::Int),
            ("Arch", ValueType::String),
            ("OpSys", ValueType::String),
            ("OpSysName", ValueType::String),
            ("OpSysMajorVer", ValueType::Int),
            ("OpSysVer", ValueType::Int),
            ("OpSysAndVer", ValueType::String),
            ("Cpus", ValueType::Int),
            ("TotalCpus", ValueType::Int),
            ("Memory", ValueType::Int),
            ("TotalMemory", ValueType::Int),
            ("Disk", ValueType::Int),
            ("TotalDisk", ValueType::Int),
            ("LoadAvg", ValueType::Real),
            ("TotalLoadAvg", ValueType::Real),
            ("KeyboardIdle", ValueType::Int),
            ("ConsoleIdle", ValueType::Int),
            ("Mips", ValueType::Int),
            ("KFlops", ValueType::Int),
            ("State", ValueType::String),
            ("Activity", ValueType::String),
            ("EnteredCurrentState", ValueType::Int),
            ("MyCurrentTime", ValueType::Int),
            ("Start", ValueType::Bool),
            ("Requirements", ValueType::Bool),
            ("Rank", ValueType::Int),
            ("StarlingAgentId", ValueType::String),
            ("StarlingDomain", ValueType::String),
            ("StarlingRoles", ValueType::String),
            ("StarlingVersion", ValueType::String),
            ("StarlingAddresses", ValueType::String),
            ("StarlingDiskFull", ValueType::Bool),
            ("HasJava", ValueType::Bool),
            ("JavaVendor", ValueType::String),
            ("JavaVersion", ValueType::String),
        ] {
            assert_eq!(eval(&ad, name).value_type(), ty, "{name}");
        }
        // All but StarlingDiskFullReason, there only while the disk is
        // full, and DetectedGPUs and AssignedGPUs, only where GPUs are.
        assert_eq!(
            ad.len() + 3,
            AGENT_ATTRIBUTES.len(),
            "the list names them all"
        );
        let s = |name| eval(&ad, name).as_str().map(str::to_owned);
        assert_eq!(s("MyType").as_deref(), Some("Machine"));
        assert_eq!(
            s("StarlingAddresses").as_deref(),
            Some(
                "/ip4/10.0.0.7/tcp/4001/p2p/12D3KooWabc, /ip4/192.168.1.7/tcp/4001/p2p/12D3KooWabc"
            )
        );
        assert_eq!(s("Name").as_deref(), Some("slot1@worker7.example.org"));
        assert_eq!(s("Machine").as_deref(), Some("worker7.example.org"));
        assert_eq!(s("OpSysAndVer").as_deref(), Some("Ubuntu22"));
        assert_eq!(s("State").as_deref(), Some("Unclaimed"));
        assert_eq!(s("Activity").as_deref(), Some("Idle"));
        assert_eq!(s("StarlingDomain").as_deref(), Some("physics.example.org"));
        assert_eq!(eval(&ad, "Memory").as_int(), Some(15935));
        assert_eq!(eval(&ad, "EnteredCurrentState").as_int(), Some(now - 30));
    }

    #[test]
    fn a_machine_without_a_jvm_says_nothing_of_java() {
        let mut p = probe();
        p.java = None;
        let ad = build_ad(
            &p,
            &config::Machine::default(),
            &identity(),
            &Status::unclaimed(0),
            0,
        )
        .unwrap();
        for name in ["HasJava", "JavaVendor", "JavaVersion"] {
            assert!(ad.get(name).is_none(), "{name}");
        }
        // So a java job's clause matches it to nothing.
        assert_ne!(eval(&ad, "HasJava").as_bool(), Some(true));
    }

    #[test]
    fn what_is_unknown_is_left_out() {
        let mut p = probe();
        p.keyboard_idle = None;
        p.console_idle = None;
        p.os_release = None;
        p.load_avg = None;
        let mut id = identity();
        id.domain = None;
        let ad = build_ad(
            &p,
            &config::Machine::default(),
            &id,
            &Status::unclaimed(0),
            0,
        )
        .unwrap();
        for name in [
            "KeyboardIdle",
            "ConsoleIdle",
            "OpSysAndVer",
            "LoadAvg",
            "StarlingDomain",
        ] {
            assert!(ad.get(name).is_none(), "{name}");
        }
    }

    #[test]
    fn configuration_shapes_the_ad() {
        let mut m = config::Machine {
            name: Some("big-box".to_owned()),
            start: "TARGET.Owner == \"alice\" && KeyboardIdle > 300".to_owned(),
            rank: "TARGET.ImageSize".to_owned(),
            ..config::Machine::default()
        };
        m.attributes.insert("HasGpu".to_owned(), "true".to_owned());
        let ad = build_ad(&probe(), &m, &identity(), &Status::unclaimed(0), 0).unwrap();
        assert_eq!(eval(&ad, "Name").as_str(), Some("big-box"));
        assert_eq!(eval(&ad, "HasGpu").as_bool(), Some(true));

        let matcher = Matcher::new(Mode::Compat);
        let job = |owner: &str, memory: i64| {
            parse_ad(&format!(
                "[ MyType = \"Job\"; Owner = \"{owner}\"; ImageSize = 100; \
                   RequestMemory = {memory}; \
                   Requirements = TARGET.Arch == \"X86_64\" && TARGET.OpSys == \"LINUX\" \
                     && TARGET.Memory >= RequestMemory && TARGET.HasGpu ]"
            ))
            .unwrap()
        };
        // Requirements = START, and START reads the job.
        assert!(matcher.symmetric_match(&job("alice", 1024), &ad));
        assert!(!matcher.symmetric_match(&job("bob", 1024), &ad));
        // The job's side reads the machine's measured attributes.
        assert!(!matcher.symmetric_match(&job("alice", 1_000_000), &ad));
        assert_eq!(matcher.rank(&ad, &job("alice", 1)), 100.0);

        // START reads the machine's own idle time.
        let mut busy = probe();
        busy.keyboard_idle = Some(10);
        let ad = build_ad(&busy, &m, &identity(), &Status::unclaimed(0), 0).unwrap();
        assert!(!matcher.symmetric_match(&job("alice", 1024), &ad));
    }

    #[test]
    fn a_draining_machine_matches_no_job_and_says_why() {
        let m = config::Machine {
            // A configured comment must not swallow the drain's clause.
            requirements: "START // only when idle".to_owned(),
            ..config::Machine::default()
        };
        let draining = Status {
            draining: true,
            ..Status::unclaimed(0)
        };
        let job = parse_ad("[ MyType = \"Job\"; Requirements = true ]").unwrap();
        let matcher = Matcher::new(Mode::Compat);
        let open = build_ad(&probe(), &m, &identity(), &Status::unclaimed(0), 0).unwrap();
        assert!(matcher.symmetric_match(&job, &open));
        assert_eq!(eval(&open, "Draining").as_bool(), Some(false));
        let drained = build_ad(&probe(), &m, &identity(), &draining, 0).unwrap();
        assert_eq!(eval(&drained, "Draining").as_bool(), Some(true));
        assert!(!matcher.symmetric_match(&job, &drained));
        let text = unparse(drained.get("Requirements").unwrap());
        assert!(text.contains("MY.Draining isnt true"), "{text}");
    }

    #[test]
    fn a_full_disk_makes_the_machine_unwilling_and_says_why() {
        let m = config::Machine {
            start: "KeyboardIdle > 0 // the owner's rule".to_owned(),
            ..config::Machine::default()
        };
        let full = Status {
            disk_full: Some("disk full: 0 KiB free".to_owned()),
            ..Status::unclaimed(0)
        };
        let job = parse_ad("[ MyType = \"Job\"; Requirements = true ]").unwrap();
        let matcher = Matcher::new(Mode::Compat);
        let open = build_ad(&probe(), &m, &identity(), &Status::unclaimed(0), 0).unwrap();
        assert!(matcher.symmetric_match(&job, &open));
        assert_eq!(eval(&open, "StarlingDiskFull").as_bool(), Some(false));
        assert!(open.get("StarlingDiskFullReason").is_none());
        let ad = build_ad(&probe(), &m, &identity(), &full, 0).unwrap();
        assert!(!matcher.symmetric_match(&job, &ad));
        assert_eq!(eval(&ad, "StarlingDiskFull").as_bool(), Some(true));
        assert_eq!(eval(&ad, "START").as_bool(), Some(false));
        let text = unparse(ad.get("Requirements").unwrap());
        assert!(text.contains("MY.StarlingDiskFull isnt true"), "{text}");
        assert_eq!(
            starling_policies::owner_policy::machine_state(&ad, 0, false, 0),
            starling_policies::owner_policy::State::Owner
        );
    }

    #[test]
    fn a_bad_expression_is_named() {
        let m = config::Machine {
            rank: "1 +".to_owned(),
            ..config::Machine::default()
        };
        let e = build_ad(&probe(), &m, &identity(), &Status::unclaimed(0), 0).unwrap_err();
        assert!(e.to_string().contains("`machine.rank`"), "{e}");
    }

    #[test]
    fn the_real_machine_is_readable() {
        let dir = tempfile::tempdir().unwrap();
        let p = Probe::read(&dir.path().join("not/yet/created"), None);
        assert!(p.cpus >= 1);
        assert!(p.mips >= 1 && p.kflops >= 1);
        assert!(!p.hostname.is_empty());
        if cfg!(target_os = "linux") {
            assert_eq!(p.op_sys, "LINUX");
            assert!(p.memory_mib.is_some_and(|m| m > 0));
            assert!(p.disk_kib.is_some());
            assert!(p.load_avg.is_some());
        }
        let ad = build_ad(
            &p,
            &config::Machine::default(),
            &identity(),
            &Status::unclaimed(0),
            0,
        )
        .unwrap();
        assert!(eval(&ad, "Requirements").is_true());
    }
}
