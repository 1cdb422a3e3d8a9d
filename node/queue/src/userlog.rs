//! The job's user log (`log = FILE` in the submit file): HTCondor's event
//! log, one event per state change, written line for line as HTCondor's
//! own writer (`condor_event.cpp`) writes it, so that its readers
//! (`htcondor2.JobEventLog`, `condor_wait`, DAGMan, Pegasus) read every
//! event Starling writes with the attributes HTCondor gives them:
//!
//! ```text
//! 000 (012.003.000) 2026-11-24 02:15:00 Job submitted from host: <127.0.0.1:4001?addrs=127.0.0.1-4001&alias=agent-00>
//! ...
//! 005 (012.003.000) 2026-11-24 02:15:09 Job terminated.
//! →(1) Normal termination (return value 0)
//! →→Usr 0 00:00:01, Sys 0 00:00:00  -  Run Remote Usage
//! ...
//! ```
//!
//! (→ is a tab.) Each event is appended and synced, with the job owner's
//! rights (an agent running as root never writes a log its user could
//! not); a log that cannot be written is reported in the agent's log and never stops
//! the job. The events of one action on many jobs ([`Appends`]: a cluster
//! submitted, held or removed) go to each log in one append and one sync,
//! in the jobs' order, so 100,000 jobs sharing a log cost one sync, not
//! 100,000. `submit` refuses a log its user cannot write. Free text (a
//! hold reason) is kept to one line, as the format needs.
//!
//! It knows nothing of the queue: the queue hands it events and logs, and
//! it writes them.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;

use starling_storage::JobId;

use starling_process::users::Rights;

/// HTCondor's event codes used here.
pub mod codes {
    pub const SUBMIT: u32 = 0;
    pub const EXECUTE: u32 = 1;
    pub const CHECKPOINTED: u32 = 3;
    pub const EVICTED: u32 = 4;
    pub const TERMINATED: u32 = 5;
    pub const ABORTED: u32 = 9;
    pub const HELD: u32 = 12;
    pub const RELEASED: u32 = 13;
    pub const JOB_DISCONNECTED: u32 = 22;
    pub const JOB_RECONNECTED: u32 = 23;
    pub const JOB_RECONNECT_FAILED: u32 = 24;
    pub const FILE_TRANSFER: u32 = 40;
}

/// CPU time a run used, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub user_ms: u64,
    pub sys_ms: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// One row of the resource table HTCondor ends termination and eviction
/// events with: a resource, what the job used (if measured), asked for
/// and was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `Cpus`, `Disk` (KiB), `Memory` (MiB), `Gpus`.
    pub name: &'static str,
    pub usage: Option<i64>,
    pub request: i64,
    pub allocated: i64,
}

/// The steps of a job's file transfer HTCondor logs (event 040).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    InputStarted,
    InputFinished,
    OutputStarted,
    OutputFinished,
}

impl Transfer {
    fn text(self) -> &'static str {
        match self {
            Transfer::InputStarted => "Started transferring input files",
            Transfer::InputFinished => "Finished transferring input files",
            Transfer::OutputStarted => "Started transferring output files",
            Transfer::OutputFinished => "Finished transferring output files",
        }
    }
}

/// An event, with what HTCondor writes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// `host`: the submit agent's address, as HTCondor writes a daemon's
    /// (`<ip:port?addrs=...&alias=...>`).
    Submitted {
        host: &'a str,
    },
    Executing {
        host: &'a str,
        slot: Option<&'a str>,
    },
    Checkpointed {
        cpu: CpuTime,
        sent_bytes: u64,
    },
    Evicted {
        checkpointed: bool,
        cpu: CpuTime,
        reason: &'a str,
        resources: &'a [Resource],
    },
    Terminated {
        exit: Exit,
        cpu: CpuTime,
        total_cpu: CpuTime,
        sent_bytes: u64,
        received_bytes: u64,
        resources: &'a [Resource],
    },
    Aborted {
        reason: &'a str,
    },
    Held {
        reason: &'a str,
        code: u32,
        subcode: i32,
    },
    Released {
        reason: &'a str,
    },
    Disconnected {
        reason: &'a str,
        name: &'a str,
        addr: &'a str,
    },
    Reconnected {
        name: &'a str,
        addr: &'a str,
    },
    ReconnectFailed {
        reason: &'a str,
        name: &'a str,
    },
    FileTransfer {
        step: Transfer,
        host: Option<&'a str>,
    },
}

impl Event<'_> {
    pub fn code(&self) -> u32 {
        match self {
            Event::Submitted { .. } => codes::SUBMIT,
            Event::Executing { .. } => codes::EXECUTE,
            Event::Checkpointed { .. } => codes::CHECKPOINTED,
            Event::Evicted { .. } => codes::EVICTED,
            Event::Terminated { .. } => codes::TERMINATED,
            Event::Aborted { .. } => codes::ABORTED,
            Event::Held { .. } => codes::HELD,
            Event::Released { .. } => codes::RELEASED,
            Event::Disconnected { .. } => codes::JOB_DISCONNECTED,
            Event::Reconnected { .. } => codes::JOB_RECONNECTED,
            Event::ReconnectFailed { .. } => codes::JOB_RECONNECT_FAILED,
            Event::FileTransfer { .. } => codes::FILE_TRANSFER,
        }
    }

    /// The event's text after its header: the rest of the first line,
    /// then its other lines, each ending in a newline.
    fn body(&self) -> String {
        let mut out = String::new();
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        match self {
            Event::Submitted { host } => {
                line(format!("Job submitted from host: {}", one_line(host)))
            }
            Event::Executing { host, slot } => {
                line(format!("Job executing on host: {}", one_line(host)));
                if let Some(slot) = slot {
                    line(format!("\tSlotName: {}", one_line(slot)));
                }
            }
            Event::Checkpointed { cpu, sent_bytes } => {
                line("Job was checkpointed.".to_owned());
                line(format!("\t{}  -  Run Remote Usage", rusage(*cpu)));
                line(format!(
                    "\t{}  -  Run Local Usage",
                    rusage(CpuTime::default())
                ));
                line(format!(
                    "\t{sent_bytes}  -  Run Bytes Sent By Job For Checkpoint"
                ));
            }
            Event::Evicted {
                checkpointed,
                cpu,
                reason,
                resources,
            } => {
                line("Job was evicted.".to_owned());
                line(if *checkpointed {
                    "\t(1) Job was checkpointed.".to_owned()
                } else {
                    "\t(0) CPU times".to_owned()
                });
                line(format!("\t\t{}  -  Run Remote Usage", rusage(*cpu)));
                line(format!(
                    "\t\t{}  -  Run Local Usage",
                    rusage(CpuTime::default())
                ));
                line("\t0  -  Run Bytes Sent By Job".to_owned());
                line("\t0  -  Run Bytes Received By Job".to_owned());
                if !reason.is_empty() {
                    line(format!("\tReason: {}", one_line(reason)));
                }
                resource_table(&mut line, resources);
            }
            Event::Terminated {
                exit,
                cpu,
                total_cpu,
                sent_bytes,
                received_bytes,
                resources,
            } => {
                line("Job terminated.".to_owned());
                match exit {
                    Exit::Code(code) => {
                        line(format!("\t(1) Normal termination (return value {code})"))
                    }
                    Exit::Signal(signal) => {
                        line(format!("\t(0) Abnormal termination (signal {signal})"));
                        line("\t(0) No core file".to_owned());
                    }
                }
                let none = rusage(CpuTime::default());
                line(format!("\t\t{}  -  Run Remote Usage", rusage(*cpu)));
                line(format!("\t\t{none}  -  Run Local Usage"));
                line(format!("\t\t{}  -  Total Remote Usage", rusage(*total_cpu)));
                line(format!("\t\t{none}  -  Total Local Usage"));
                line(format!("\t{sent_bytes}  -  Run Bytes Sent By Job"));
                line(format!("\t{received_bytes}  -  Run Bytes Received By Job"));
                line(format!("\t{sent_bytes}  -  Total Bytes Sent By Job"));
                line(format!(
                    "\t{received_bytes}  -  Total Bytes Received By Job"
                ));
                resource_table(&mut line, resources);
            }
            Event::Aborted { reason } => {
                line("Job was aborted.".to_owned());
                if !reason.is_empty() {
                    line(format!("\t{}", one_line(reason)));
                }
            }
            Event::Held {
                reason,
                code,
                subcode,
            } => {
                line("Job was held.".to_owned());
                line(if reason.is_empty() {
                    "\tReason unspecified".to_owned()
                } else {
                    format!("\t{}", one_line(reason))
                });
                line(format!("\tCode {code} Subcode {subcode}"));
            }
            Event::Released { reason } => {
                line("Job was released.".to_owned());
                if !reason.is_empty() {
                    line(format!("\t{}", one_line(reason)));
                }
            }
            Event::Disconnected { reason, name, addr } => {
                line("Job disconnected, attempting to reconnect".to_owned());
                line(format!("    {}", one_line(reason)));
                line(format!(
                    "    Trying to reconnect to {} {}",
                    word(name),
                    one_line(addr)
                ));
            }
            Event::Reconnected { name, addr } => {
                line(format!("Job reconnected to {}", one_line(name)));
                line(format!("    startd address: {}", one_line(addr)));
                line(format!("    starter address: {}", one_line(addr)));
            }
            Event::ReconnectFailed { reason, name } => {
                line("Job reconnection failed".to_owned());
                line(format!("    {}", one_line(reason)));
                line(format!(
                    "    Can not reconnect to {}, rescheduling job",
                    one_line(name).replace(',', " ")
                ));
            }
            Event::FileTransfer { step, host } => {
                line(step.text().to_owned());
                if let Some(host) = host {
                    line(format!("\tTransferring to host: {}", one_line(host)));
                }
            }
        }
        out
    }
}

/// HTCondor's `Usr D HH:MM:SS, Sys D HH:MM:SS`.
fn rusage(cpu: CpuTime) -> String {
    let part = |ms: u64| {
        let secs = ms / 1000;
        format!(
            "{} {:02}:{:02}:{:02}",
            secs / 86_400,
            secs % 86_400 / 3600,
            secs % 3600 / 60,
            secs % 60
        )
    };
    format!("Usr {}, Sys {}", part(cpu.user_ms), part(cpu.sys_ms))
}

/// The table HTCondor's `formatUsageAd` writes, with its labels, column
/// widths and alignment (its reader finds the columns by the header).
fn resource_table(line: &mut impl FnMut(String), resources: &[Resource]) {
    if resources.is_empty() {
        return;
    }
    let label = |r: &Resource| match r.name {
        "Memory" => "Memory (MB)".to_owned(),
        "Disk" => "Disk (KB)".to_owned(),
        "Gpus" => "Gpus (Average)".to_owned(),
        name => name.to_owned(),
    };
    let mut rows: Vec<&Resource> = resources.iter().collect();
    rows.sort_by_key(|r| r.name.to_ascii_lowercase());
    let shown = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    let res_width = rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(0)
        .max("Memory (MB)".len() + 1);
    let use_width = rows
        .iter()
        .map(|r| shown(r.usage).len())
        .max()
        .unwrap_or(0)
        .max(8);
    let req_width = rows
        .iter()
        .map(|r| r.request.to_string().len())
        .max()
        .unwrap_or(0)
        .max(8);
    let alloc_width = rows
        .iter()
        .map(|r| r.allocated.to_string().len())
        .max()
        .unwrap_or(0)
        .max(9);
    line(format!(
        "\tPartitionable Resources : {:>use_width$} {:>req_width$} {:>alloc_width$} ",
        "Usage", "Request", "Allocated"
    ));
    for r in rows {
        line(format!(
            "\t   {:<w$} : {:>use_width$} {:>req_width$} {:>alloc_width$} ",
            label(r),
            shown(r.usage),
            r.request,
            r.allocated,
            w = res_width + 8
        ));
    }
}

/// Free text on one line: the format ends a field at a newline.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// A name that the reader takes up to the first space.
fn word(text: &str) -> String {
    one_line(text).replace(' ', "_")
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
pub fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `2026-11-24 02:15:00` (UTC) for unix seconds.
pub fn timestamp(secs: i64) -> String {
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The event's text as HTCondor writes it, ending with its `...` line.
pub fn entry(id: JobId, at: i64, event: &Event<'_>) -> String {
    Entries::new(at, event).of(id)
}

/// One event at one time for many jobs: its text made once, each job's
/// [`entry`] from it.
#[derive(Debug, Clone)]
pub struct Entries {
    code: u32,
    stamp: String,
    body: String,
}

impl Entries {
    pub fn new(at: i64, event: &Event<'_>) -> Entries {
        Entries {
            code: event.code(),
            stamp: timestamp(at),
            body: event.body(),
        }
    }

    /// The job's entry.
    pub fn of(&self, id: JobId) -> String {
        format!(
            "{:03} ({:03}.{:03}.000) {} {}...\n",
            self.code, id.cluster, id.proc, self.stamp, self.body
        )
    }
}

/// Appends `text` to the log at `path`, opened (and created if need be)
/// with `rights`.
pub fn append(rights: &Rights, path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = rights.open(path, std::fs::OpenOptions::new().create(true).append(true))?;
    file.write_all(text.as_bytes())?;
    file.sync_data()
}

/// Events on their way to user logs, kept per log (and owner) in the
/// order they were added, to be written with one append and one sync per
/// log ([`Appends::write`]).
#[derive(Debug, Default)]
pub struct Appends {
    logs: Vec<Pending>,
    /// Each `(owner, path)`'s place in `logs`.
    index: HashMap<(String, String), usize>,
}

#[derive(Debug)]
struct Pending {
    owner: String,
    path: String,
    text: String,
    events: usize,
}

/// A log that could not be written: its path, how many events it missed
/// and why.
#[derive(Debug)]
pub struct Unwritten {
    pub path: String,
    pub events: usize,
    pub error: String,
}

impl Appends {
    /// Adds an event ([`entry`]'s text) for the log at `path`, to be
    /// written with `owner`'s rights.
    pub fn add(&mut self, owner: &str, path: &str, entry: &str) {
        let key = (owner.to_owned(), path.to_owned());
        let at = *self.index.entry(key).or_insert_with(|| {
            self.logs.push(Pending {
                owner: owner.to_owned(),
                path: path.to_owned(),
                text: String::new(),
                events: 0,
            });
            self.logs.len() - 1
        });
        let log = &mut self.logs[at];
        log.text.push_str(entry);
        log.events += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.logs.is_empty()
    }

    /// Appends each log's events in one write and syncs it once, with its
    /// owner's rights. Blocking: call it off the async threads. A log that
    /// fails does not stop the others; the failures are returned.
    pub fn write(self) -> Vec<Unwritten> {
        let mut failed = Vec::new();
        for log in self.logs {
            let written = Rights::of_owner(&log.owner)
                .map_err(|e| e.to_string())
                .and_then(|rights| {
                    append(&rights, Path::new(&log.path), &log.text).map_err(|e| e.to_string())
                });
            if let Err(error) = written {
                failed.push(Unwritten {
                    path: log.path,
                    events: log.events,
                    error,
                });
            }
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_written_as_htcondor_writes_them() {
        assert_eq!(timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(timestamp(1_795_000_000), "2026-11-18 11:06:40");
        let resources = [
            Resource {
                name: "Cpus",
                usage: None,
                request: 1,
                allocated: 1,
            },
            Resource {
                name: "Disk",
                usage: Some(14),
                request: 1024,
                allocated: 1024,
            },
            Resource {
                name: "Memory",
                usage: Some(3),
                request: 128,
                allocated: 128,
            },
        ];
        let e = entry(
            JobId::new(12, 3),
            0,
            &Event::Terminated {
                exit: Exit::Code(3),
                cpu: CpuTime {
                    user_ms: 90_061_000,
                    sys_ms: 2_000,
                },
                total_cpu: CpuTime {
                    user_ms: 90_061_000,
                    sys_ms: 2_000,
                },
                sent_bytes: 10,
                received_bytes: 20,
                resources: &resources,
            },
        );
        // As HTCondor 25 wrote a job's termination.
        assert_eq!(
            e,
            "005 (012.003.000) 1970-01-01 00:00:00 Job terminated.\n\
             \t(1) Normal termination (return value 3)\n\
             \t\tUsr 1 01:01:01, Sys 0 00:00:02  -  Run Remote Usage\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
             \t\tUsr 1 01:01:01, Sys 0 00:00:02  -  Total Remote Usage\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n\
             \t10  -  Run Bytes Sent By Job\n\
             \t20  -  Run Bytes Received By Job\n\
             \t10  -  Total Bytes Sent By Job\n\
             \t20  -  Total Bytes Received By Job\n\
             \tPartitionable Resources :    Usage  Request Allocated \n\
             \t   Cpus                 :                 1         1 \n\
             \t   Disk (KB)            :       14     1024      1024 \n\
             \t   Memory (MB)          :        3      128       128 \n\
             ...\n"
        );
        let held = entry(
            JobId::new(1, 0),
            0,
            &Event::Held {
                reason: "two\nlines",
                code: 1,
                subcode: 0,
            },
        );
        assert_eq!(
            held,
            "012 (001.000.000) 1970-01-01 00:00:00 Job was held.\n\ttwo lines\n\tCode 1 Subcode 0\n...\n"
        );
    }
    #[test]
    fn appends_keep_each_logs_events_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.log"), dir.path().join("b.log"));
        let missing = dir.path().join("no/such/dir.log");
        // The agent's own rights (a root agent writes root's logs as root).
        let owner = if rustix::process::geteuid().is_root() {
            "root"
        } else {
            "anyone"
        };
        let mut appends = Appends::default();
        assert!(appends.is_empty());
        let event = Event::Released { reason: "r" };
        for proc in 0..6 {
            let path = match proc % 3 {
                0 => &a,
                1 => &b,
                _ => &missing,
            };
            let entry = entry(JobId::new(1, proc), 0, &event);
            appends.add(owner, &path.to_string_lossy(), &entry);
        }
        let failed = appends.write();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].events, 2);
        assert!(failed[0].path.ends_with("dir.log"));
        let procs = |path: &Path| -> Vec<String> {
            std::fs::read_to_string(path)
                .unwrap()
                .lines()
                .filter_map(|l| l.strip_prefix("013 (001."))
                .map(|rest| rest[..3].to_owned())
                .collect()
        };
        assert_eq!(procs(&a), ["000", "003"]);
        assert_eq!(procs(&b), ["001", "004"]);
    }
}
