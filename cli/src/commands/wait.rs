//! `starling wait` (like `condor_wait`): wait until jobs have left the
//! queue, from their user log or from the agent.
//!
//! `starling wait LOG [JOB]` reads the job event log as it grows: every job
//! submitted into it (or only JOB: `12` for a cluster, `12.3` for one job)
//! must have terminated (event 005) or been aborted (009); `-num N` waits
//! for N of them instead. `starling wait JOB` asks the agent until the job
//! (or every job of the cluster) has left its queue. `-wait SECS` gives up
//! after that long: "Time expired.", exit 1, as condor_wait.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use starling_control::Request;

/// `starling wait` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The job event log (`log = FILE` of the submit file), or a job id
    /// (12.0) or cluster id (12) to ask the agent about.
    target: String,
    /// With a log: only this job (12.0) or cluster (12).
    job: Option<String>,
    /// Give up after this many seconds.
    #[arg(long = "wait", value_name = "SECS")]
    wait: Option<u64>,
    /// Return once this many jobs have ended.
    #[arg(long = "num", value_name = "N")]
    num: Option<usize>,
    /// Print each event of the log as it is read (condor_wait -echo).
    #[arg(long)]
    echo: bool,
}

/// How often the log or the agent is looked at again.
const POLL: Duration = Duration::from_millis(200);

/// A job or a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Which {
    cluster: u64,
    proc: Option<u64>,
}

impl Which {
    fn parse(text: &str) -> Option<Which> {
        let (cluster, proc) = match text.split_once('.') {
            Some((c, p)) => (c.parse().ok()?, Some(p.parse().ok()?)),
            None => (text.parse().ok()?, None),
        };
        Some(Which { cluster, proc })
    }

    fn covers(&self, id: (u64, u64)) -> bool {
        self.cluster == id.0 && self.proc.is_none_or(|p| p == id.1)
    }
}

/// What a log says so far.
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    submitted: BTreeSet<(u64, u64)>,
    ended: BTreeSet<(u64, u64)>,
}

/// The event number and job of an event's first line
/// (`005 (012.003.000) 2026-11-24 02:15:05 Job terminated.`).
fn header(line: &str) -> Option<(u32, (u64, u64))> {
    let (code, rest) = line.split_once(' ')?;
    if code.len() != 3 {
        return None;
    }
    let code: u32 = code.parse().ok()?;
    let ids = rest.strip_prefix('(')?.split_once(')')?.0;
    let mut parts = ids.split('.');
    let cluster = parts.next()?.parse().ok()?;
    let proc = parts.next()?.parse().ok()?;
    Some((code, (cluster, proc)))
}

/// Reads the whole events of `text` into `seen` (a last event still being
/// written, without its `...` line, is read next time).
fn read_events(text: &str, seen: &mut Seen, echo: bool) {
    for line in text.lines() {
        let Some((code, id)) = header(line) else {
            continue;
        };
        if echo {
            println!("{line}");
        }
        match code {
            0 => {
                seen.submitted.insert(id);
            }
            5 | 9 => {
                seen.ended.insert(id);
            }
            _ => {}
        }
    }
}

/// Whether waiting is over.
fn done(seen: &Seen, only: Option<Which>, num: Option<usize>) -> bool {
    let of_interest = |id: &&(u64, u64)| only.is_none_or(|w| w.covers(**id));
    let ended = seen.ended.iter().filter(of_interest).count();
    match num {
        Some(n) => ended >= n,
        None => {
            let submitted: Vec<_> = seen.submitted.iter().filter(of_interest).collect();
            !submitted.is_empty() && submitted.iter().all(|id| seen.ended.contains(id))
        }
    }
}

pub(super) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let deadline = args.wait.map(|s| Instant::now() + Duration::from_secs(s));
    let expired = || deadline.is_some_and(|d| Instant::now() >= d);
    let path = PathBuf::from(&args.target);
    let job_id = Which::parse(&args.target).filter(|_| !path.exists());
    if let Some(which) = job_id {
        anyhow::ensure!(
            args.job.is_none(),
            "give a job either as the log's job or alone"
        );
        let id = match which.proc {
            Some(p) => format!("{}.{p}", which.cluster),
            None => which.cluster.to_string(),
        };
        loop {
            let ads = super::jobs::jobs(
                data_dir,
                Request::Jobs {
                    targets: vec![id.clone()],
                    constraint: None,
                    history: false,
                    limit: None,
                    projection: None,
                },
            )?;
            if ads.is_empty() {
                println!("All jobs done.");
                return Ok(ExitCode::SUCCESS);
            }
            if expired() {
                println!("Time expired.");
                return Ok(ExitCode::from(1));
            }
            std::thread::sleep(POLL);
        }
    }
    let only =
        match &args.job {
            Some(j) => Some(Which::parse(j).ok_or_else(|| {
                anyhow::anyhow!("{j:?} is not a job id (12.0) or cluster id (12)")
            })?),
            None => None,
        };
    let mut seen = Seen::default();
    let mut read = 0usize;
    loop {
        match std::fs::read(&path) {
            Ok(bytes) => {
                // Whole events only: up to the last `...` line.
                let end = bytes
                    .windows(4)
                    .rposition(|w| w == b"...\n")
                    .map_or(0, |i| i + 4);
                if end > read {
                    read_events(
                        &String::from_utf8_lossy(&bytes[read..end]),
                        &mut seen,
                        args.echo,
                    );
                    read = end;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => anyhow::bail!("reading {}: {e}", path.display()),
        }
        if done(&seen, only, args.num) {
            println!("All jobs done.");
            return Ok(ExitCode::SUCCESS);
        }
        if expired() {
            println!("Time expired.");
            return Ok(ExitCode::from(1));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "000 (012.000.000) 2026-11-24 02:15:00 Job submitted from host: <a>\n...\n\
        000 (012.001.000) 2026-11-24 02:15:00 Job submitted from host: <a>\n...\n\
        000 (013.000.000) 2026-11-24 02:15:00 Job submitted from host: <a>\n...\n\
        005 (012.000.000) 2026-11-24 02:15:05 Job terminated.\n\t(1) Normal termination (return value 0)\n...\n\
        009 (013.000.000) 2026-11-24 02:15:06 Job was aborted.\n\tvia starling rm\n...\n";

    #[test]
    fn waiting_ends_when_every_job_of_interest_ended() {
        let mut seen = Seen::default();
        read_events(LOG, &mut seen, false);
        assert_eq!(seen.submitted.len(), 3);
        assert!(!done(&seen, None, None), "12.1 still runs");
        assert!(done(&seen, Which::parse("13"), None));
        assert!(done(&seen, Which::parse("12.0"), None));
        assert!(!done(&seen, Which::parse("12"), None));
        assert!(done(&seen, None, Some(2)));
        assert!(!done(&seen, None, Some(3)));
        // A log with nothing submitted yet is not done.
        assert!(!done(&Seen::default(), None, None));
        assert_eq!(header("\t(1) Normal termination"), None);
        assert_eq!(Which::parse("12.x"), None);
    }
}
