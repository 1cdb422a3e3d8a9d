//! Jobs the submit agent runs itself: HTCondor's scheduler universe
//! (`JobUniverse` 7) and local universe (12). As HTCondor's schedd does,
//! such a job is not matched to any machine: it starts on this machine as
//! soon as it is idle, as its owner ([`run_as::in_place`]), in its
//! `initialdir` (`Iwd`), with its standard streams opened there with its
//! owner's rights, and with no file transfer.
//!
//! ```text
//! negotiator: idle job of universe 7 or 12
//!   ──▶ Queue::running_here (Running, RemoteHost this machine)
//!   ──▶ Runs::start: a task opens its streams, starts its process
//!        ──▶ Event::Started (pid recorded, user log: executing)
//!        ──▶ Event::Ended: it exited, could not start, or was stopped
//!   ──▶ the negotiator records the end as for any job (exit, on_exit
//!       policy, max_retries, hold, completion)
//! hold / rm / vacate ──▶ Runs::stop: its KillSig, then SIGKILL after
//!                        [`STOP_GRACE`]
//! ```
//!
//! Nothing runs twice: a job the queue shows running here when the agent
//! starts belonged to an agent that died; [`end_leftovers`] kills what is
//! left of its process (its recorded process group, if that pid still has
//! the start time recorded, and every process carrying its marker) before
//! the job goes back to idle and runs again, as HTCondor restarts
//! scheduler-universe jobs when the schedd restarts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use starling_policies::run_as::{self, RunAs};
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_storage::JobId;
use tokio::sync::mpsc;

use starling_process::account::Account;
use starling_process::users::{Rights, User};
use starling_process::{self as execute, family, HoldCode, Outcome, Spec, Streams};

/// HTCondor's scheduler universe.
pub const SCHEDULER_UNIVERSE: i64 = 7;
/// HTCondor's local universe.
pub const LOCAL_UNIVERSE: i64 = 12;

/// How long a stopped job has between its `KillSig` and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// How long [`end_leftovers`] waits for a dead agent's job to go.
pub const LEFTOVER_WAIT: Duration = Duration::from_secs(5);

/// Stop requests a run may have pending (one is enough: the first wins).
const STOP_CAPACITY: usize = 1;

/// Whether the submit agent runs `job` itself.
pub fn runs_here(job: &ClassAd) -> bool {
    matches!(
        integer(job, "JobUniverse"),
        Some(SCHEDULER_UNIVERSE | LOCAL_UNIVERSE)
    )
}

/// Why a run is stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The job was held.
    Held,
    /// The job was removed.
    Removed,
    /// It was asked to leave (`starling vacate`): it goes back to idle.
    Vacated(String),
}

/// What a run reports to the negotiator.
#[derive(Debug)]
pub enum Event {
    /// Its process started.
    Started {
        job: JobId,
        pid: u32,
        pid_start: u64,
    },
    /// It is over.
    Ended { job: JobId, end: End },
}

/// How a run ended.
#[derive(Debug)]
pub enum End {
    /// Its process ended by itself.
    Exited(Outcome),
    /// It could not be started: the hold's code, subcode and reason.
    Unrunnable {
        code: u32,
        subcode: i32,
        reason: String,
    },
    /// It was stopped.
    Stopped(Stop),
}

/// The jobs this agent runs itself, each a task of its own.
#[derive(Debug)]
pub struct Runs {
    /// Names this agent's job processes (their marker), stable across its
    /// restarts.
    agent: String,
    events: mpsc::Sender<Event>,
    runs: HashMap<JobId, mpsc::Sender<Stop>>,
}

impl Runs {
    /// `agent`: this agent's id; `events`: where runs report.
    pub fn new(agent: String, events: mpsc::Sender<Event>) -> Runs {
        Runs {
            agent,
            events,
            runs: HashMap::new(),
        }
    }

    pub fn is_running(&self, job: JobId) -> bool {
        self.runs.contains_key(&job)
    }

    /// Starts `job` (recorded running here already). Dropping [`Runs`]
    /// kills every run.
    pub fn start(&mut self, job: JobId, ad: ClassAd) {
        let (stop, stops) = mpsc::channel(STOP_CAPACITY);
        self.runs.insert(job, stop);
        let name = marker_name(&self.agent, job);
        tokio::spawn(run(job, ad, name, self.events.clone(), stops));
    }

    /// Asks `job`'s run to stop; `false` when it has none.
    pub fn stop(&mut self, job: JobId, why: Stop) -> bool {
        match self.runs.get(&job) {
            Some(stop) => {
                // A full channel is a stop already on its way.
                let _ = stop.try_send(why);
                true
            }
            None => false,
        }
    }

    /// `job`'s run reported its end.
    pub fn ended(&mut self, job: JobId) {
        self.runs.remove(&job);
    }

    /// The marker prefix of `job`'s processes, for [`end_leftovers`].
    pub fn marker_of(&self, job: JobId) -> String {
        marker_name(&self.agent, job)
    }
}

/// The name a run's processes are marked with ([`family::MARKER_ENV`]
/// holds it, followed by `.<agent pid>.<n>`).
fn marker_name(agent: &str, job: JobId) -> String {
    format!("local-{agent}-{}.{}", job.cluster, job.proc)
}

/// One run: its streams and process, its end.
async fn run(
    job: JobId,
    ad: ClassAd,
    name: String,
    events: mpsc::Sender<Event>,
    mut stops: mpsc::Receiver<Stop>,
) {
    let signal = execute::job::kill_signal(&ad);
    let prepared = {
        let ad = ad.clone();
        tokio::task::spawn_blocking(move || spec_of(&ad, name)).await
    };
    let unrunnable = |code: u32, subcode: i32, reason: String| Event::Ended {
        job,
        end: End::Unrunnable {
            code,
            subcode,
            reason,
        },
    };
    let spec = match prepared {
        Ok(Ok(spec)) => spec,
        Ok(Err((code, subcode, reason))) => {
            let _ = events.send(unrunnable(code, subcode, reason)).await;
            return;
        }
        Err(e) => {
            let _ = events
                .send(unrunnable(
                    HoldCode::FailedToCreateProcess.code(),
                    0,
                    format!("cannot prepare the job: {e}"),
                ))
                .await;
            return;
        }
    };
    let mut running = match execute::start(spec).await {
        Ok(running) => running,
        Err(e) => {
            let _ = events
                .send(unrunnable(
                    e.hold_code().code(),
                    e.hold_subcode(),
                    e.to_string(),
                ))
                .await;
            return;
        }
    };
    let pid = running.pid;
    let pid_start = start_time(pid).unwrap_or(0);
    tracing::info!(%job, pid, "the job runs on this machine");
    let _ = events
        .send(Event::Started {
            job,
            pid,
            pid_start,
        })
        .await;
    let end = tokio::select! {
        outcome = running.wait() => End::Exited(outcome),
        stop = stops.recv() => {
            // No sender left: the agent is stopping; dropping `running`
            // kills the job, and the restarted agent runs it again.
            let Some(why) = stop else { return };
            running.ask_to_leave(signal);
            if tokio::time::timeout(STOP_GRACE, running.wait()).await.is_err() {
                running.kill();
                let _ = running.wait().await;
            }
            End::Stopped(why)
        }
    };
    let _ = events.send(Event::Ended { job, end }).await;
}

/// What to run for `job`, in place, as its owner. Blocking (the streams
/// are opened with the owner's rights). The error: a hold's code, subcode
/// and reason.
fn spec_of(job: &ClassAd, name: String) -> Result<Spec, (u32, i32, String)> {
    let start_failed = |reason: String| (HoldCode::FailedToCreateProcess.code(), 0, reason);
    let owner = text(job, "Owner").unwrap_or_default();
    let is_root = rustix::process::geteuid().is_root();
    let local = Account::local(&owner).filter(Account::is_personal);
    let account = match run_as::in_place(is_root, &owner, local.as_ref().map(|a| a.name.as_str()))
        .map_err(start_failed)?
    {
        RunAs::Owner(_) => local,
        _ => None,
    };
    let rights = match &account {
        Some(account) => Rights::User(
            User::lookup(&account.name).map_err(|e| start_failed(format!("{owner}: {e}")))?,
        ),
        None => Rights::Agent,
    };
    let iwd = PathBuf::from(
        text(job, "Iwd")
            .ok_or_else(|| start_failed("the job has no Iwd (initialdir) to run in".to_owned()))?,
    );
    let cmd = text(job, "Cmd").ok_or_else(|| start_failed("the job has no Cmd".to_owned()))?;
    let executable = iwd.join(cmd);
    let args = execute::job::arguments(job).map_err(start_failed)?;
    let env = execute::job::environment(job).map_err(start_failed)?;
    let stream = |name: &str| text(job, name).filter(|p| !p.is_empty() && p != "/dev/null");
    let open_failed = |code: HoldCode, path: &Path, e: std::io::Error| {
        (
            code.code(),
            e.raw_os_error().unwrap_or(0),
            format!("Error from starter: cannot open {}: {e}", path.display()),
        )
    };
    let stdin = match stream("In") {
        Some(p) => {
            let path = iwd.join(p);
            let file = rights
                .open_read(&path)
                .map_err(|e| open_failed(HoldCode::UnableToOpenInput, &path, e))?;
            Some(Arc::new(file))
        }
        None => None,
    };
    let open_output = |p: Option<String>| -> Result<(PathBuf, Arc<std::fs::File>), _> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let path = p.map_or_else(|| PathBuf::from("/dev/null"), |p| iwd.join(p));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true).mode(0o644);
        let file = if path == Path::new("/dev/null") {
            options.open(&path)
        } else {
            rights.open(&path, &options)
        }
        .map_err(|e| open_failed(HoldCode::UnableToOpenOutput, &path, e))?;
        Ok((path, Arc::new(file)))
    };
    let (stdout_path, stdout) = open_output(stream("Out"))?;
    // One file for both: one description, so neither writes over the other.
    let (stderr_path, stderr) = if stream("Err").is_some() && stream("Err") == stream("Out") {
        (stdout_path.clone(), stdout.clone())
    } else {
        open_output(stream("Err"))?
    };
    Ok(Spec {
        executable,
        args,
        env,
        stdin: None,
        stdout: stdout_path,
        stderr: stderr_path,
        cwd: iwd,
        request_cpus: 1,
        request_memory_mib: 0,
        request_disk_kib: 0,
        account,
        name,
        hidden_devices: Vec::new(),
        isolation: execute::Isolation::default(),
        reaper: None,
        streams: Some(Streams {
            stdin,
            stdout,
            stderr,
        }),
        enforce_requests: false,
    })
}

/// Kills what an earlier run of this agent left of `job` (whose ad the
/// queue still shows running here): the process group of its recorded
/// pid when that pid still started when recorded, and every process
/// marked `marker`. Returns how many processes were found. Blocking, at
/// most [`LEFTOVER_WAIT`].
pub fn end_leftovers(job: &ClassAd, marker: &str) -> usize {
    let prefix = format!("{marker}.");
    let leader = match (
        integer(job, starling_queue::LOCAL_PID),
        integer(job, starling_queue::LOCAL_PID_START),
    ) {
        (Some(pid), Some(start)) => i32::try_from(pid)
            .ok()
            .filter(|pid| u64::try_from(start).ok() == start_time(*pid as u32)),
        _ => None,
    };
    let deadline = Instant::now() + LEFTOVER_WAIT;
    let mut found = 0;
    loop {
        let mut pids = family::processes_marked(|tag| tag.starts_with(prefix.as_bytes()));
        pids.retain(|pid| !is_zombie(*pid));
        let group_alive = leader.is_some_and(|pid| {
            Pid::from_raw(pid)
                .is_some_and(|p| rustix::process::kill_process_group(p, Signal::KILL).is_ok())
        });
        for pid in &pids {
            if let Some(p) = Pid::from_raw(*pid) {
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
        found = found.max(pids.len() + usize::from(group_alive));
        if (pids.is_empty() && !group_alive) || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn is_zombie(pid: i32) -> bool {
    family::stat_fields(pid).is_none_or(|f| f.first().map(String::as_str) == Some("Z"))
}

/// When process `pid` started, in clock ticks since boot (`starttime` of
/// `/proc/PID/stat`): with the pid, it names one process for good.
fn start_time(pid: u32) -> Option<u64> {
    family::stat_fields(i32::try_from(pid).ok()?)?
        .get(19)?
        .parse()
        .ok()
}

fn text(job: &ClassAd, name: &str) -> Option<String> {
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn integer(job: &ClassAd, name: &str) -> Option<i64> {
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, Name::known(name).folded()) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    fn job(text: &str) -> ClassAd {
        parse_ad(text).expect("ad")
    }

    #[test]
    fn only_scheduler_and_local_universe_jobs_run_here() {
        assert!(runs_here(&job("[JobUniverse = 7]")));
        assert!(runs_here(&job("[JobUniverse = 12]")));
        assert!(!runs_here(&job("[JobUniverse = 5]")));
        assert!(!runs_here(&job("[Owner = \"a\"]")));
    }

    #[test]
    fn a_job_runs_in_its_directory_with_its_streams_there() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("in.txt"), "x").expect("input");
        let owner = starling_process::users::name_of(rustix::process::geteuid().as_raw())
            .unwrap_or_default();
        let ad = job(&format!(
            "[JobUniverse = 12; Owner = \"{owner}\"; Iwd = \"{}\"; Cmd = \"run.sh\"; \
             Arguments = \"a 'b c'\"; Environment = \"K=v\"; In = \"in.txt\"; \
             Out = \"out.txt\"; Err = \"out.txt\"]",
            dir.path().display()
        ));
        if rustix::process::geteuid().is_root() && Account::local(&owner).is_none() {
            // Root has no account to run it as: refused, never run as root.
            let (code, _, reason) = spec_of(&ad, "t".into()).unwrap_err();
            assert_eq!(code, HoldCode::FailedToCreateProcess.code());
            assert!(reason.contains("runs no job as root"), "{reason}");
            return;
        }
        let spec = spec_of(&ad, "t".into()).expect("spec");
        assert_eq!(spec.cwd, dir.path());
        assert_eq!(spec.executable, dir.path().join("run.sh"));
        assert_eq!(spec.args, vec!["a", "b c"]);
        assert_eq!(spec.env, vec![("K".to_owned(), "v".to_owned())]);
        assert_eq!(spec.stdout, dir.path().join("out.txt"));
        assert_eq!(spec.stderr, spec.stdout);
        assert!(dir.path().join("out.txt").exists());
        assert!(!spec.enforce_requests);
    }

    #[test]
    fn leftovers_of_a_run_are_killed_and_no_other_job_is() {
        let sleeper = |job: JobId| {
            std::process::Command::new("sleep")
                .arg("30")
                .env(
                    family::MARKER_ENV,
                    format!("{}.1.0", marker_name("agent", job)),
                )
                .spawn()
                .expect("sleep")
        };
        let (mine, theirs) = (
            JobId {
                cluster: 1,
                proc: 0,
            },
            JobId {
                cluster: 11,
                proc: 0,
            },
        );
        let (mut left, mut other) = (sleeper(mine), sleeper(theirs));
        // A child's environment shows in /proc only once its exec has set
        // it up, a moment after spawn returns; a leftover of a dead agent
        // is long past that.
        let marked = |job: JobId| {
            let prefix = format!("{}.", marker_name("agent", job));
            !family::processes_marked(|tag| tag.starts_with(prefix.as_bytes())).is_empty()
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(marked(mine) && marked(theirs)) {
            assert!(
                Instant::now() < deadline,
                "the sleepers never showed their marker"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let ad = job("[JobUniverse = 12]");
        assert_eq!(end_leftovers(&ad, &marker_name("agent", mine)), 1);
        let status = left.wait().expect("wait");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert!(
            other.try_wait().expect("try_wait").is_none(),
            "another job's process runs on"
        );
        let _ = other.kill();
        let _ = other.wait();
    }

    #[test]
    fn a_missing_input_is_a_hold_that_names_the_file() {
        let dir = tempfile::tempdir().expect("dir");
        let owner = starling_process::users::name_of(rustix::process::geteuid().as_raw())
            .unwrap_or_default();
        let ad = job(&format!(
            "[JobUniverse = 7; Owner = \"{owner}\"; Iwd = \"{}\"; Cmd = \"/bin/true\"; \
             In = \"missing\"]",
            dir.path().display()
        ));
        let (code, _, reason) = spec_of(&ad, "t".into()).unwrap_err();
        if code == HoldCode::UnableToOpenInput.code() {
            assert!(reason.contains("missing"), "{reason}");
        } else {
            assert!(reason.contains("runs no job as root"), "{reason}");
        }
    }
}
