//! The starter: one task per job on the execute agent, as HTCondor's
//! condor_starter.
//!
//! It makes the job's sandbox, pulls the input from the submit agent, runs
//! the process ([`starling_process`]) within the claim's resources, then
//! offers the output back with a [`transfer::Report`] of how the job ended
//! and waits until the submit agent has pulled it. Anything that keeps the
//! job from running to its end becomes a report with a hold reason
//! (HTCondor's codes: 6 could not start, 13 input transfer failed, 34 memory
//! exceeded...), so the user sees why.
//!
//! The startd stops a starter when the claim's lease lapses or the claim is
//! released: the process is terminated, the sandbox removed and nothing is
//! reported (there is nobody left to report to). The offer of the output is
//! retried until the submit agent takes it or the lease lapses, so a submit
//! agent that restarts meanwhile still gets its job's output.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use starling_policies::slots::Resources;
use starling_protocol::claim::ClaimId;
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};
use starling_protocol::transfer::{self, File, FileName, Hold, Report, TransferId};
use tokio::sync::{mpsc, oneshot};

use super::checkpoint;
use crate::network::Command;
use crate::transfers::fetch;
use crate::transfers::{Offer, Router};
use starling_process::{self as execute, Sandbox, Spec};

/// HTCondor's hold reason codes the starter reports.
pub mod hold_codes {
    /// The job's process could not be started.
    pub const FAILED_TO_CREATE_PROCESS: u32 = 6;
    /// The output could not be transferred back.
    pub const TRANSFER_OUTPUT_ERROR: u32 = 12;
    /// The input could not be transferred.
    pub const TRANSFER_INPUT_ERROR: u32 = 13;
    /// The job used more memory than it asked for.
    pub const JOB_OUT_OF_RESOURCES: u32 = 34;
}

/// How long a job asked to stop gets between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// The longest a vacated job is given to leave, whatever the policy says.
pub const MAX_VACATE_GRACE: Duration = Duration::from_secs(3600);

/// Pause between offers of the output the submit agent did not take.
pub const OFFER_RETRY: Duration = Duration::from_millis(500);

/// How often a taken offer is made again while the output is not pulled.
pub const REOFFER: Duration = Duration::from_secs(5);

/// How long the submit agent has to pull the output once it took the offer.
pub const PULL_DEADLINE: Duration = Duration::from_secs(600);

/// Input any job may bring whatever its `request_disk`, in bytes.
pub const INPUT_FLOOR: u64 = 1 << 30;

/// Names the stdout and stderr files get in the sandbox, as HTCondor's.
pub use starling_process::sandbox::{STDERR_FILE, STDOUT_FILE};

/// The files the job finds its slot's and its own ad in.
pub const MACHINE_AD_FILE: &str = ".machine.ad";
pub const JOB_AD_FILE: &str = ".job.ad";

/// What a starter needs.
pub struct StarterArgs {
    pub network: mpsc::Sender<Command>,
    pub router: Router,
    /// The submit agent.
    pub peer: PeerId,
    pub claim: ClaimId,
    pub job: ClassAd,
    /// The input's transfer id and files, offered by the submit agent.
    pub transfer: TransferId,
    pub inputs: Vec<File>,
    pub sandboxes: PathBuf,
    pub resources: Resources,
    /// The GPUs the claim holds, the only ones the job may see.
    pub gpus: Vec<starling_policies::slots::Device>,
    /// The slot's ad, written into the sandbox for the job.
    pub machine: ClassAd,
    /// Which account the job runs as and how it is kept apart.
    pub isolation: Arc<starling_process::isolation::Setup>,
    /// The job comes from this agent's own domain.
    pub own_domain: bool,
    /// The domain that admitted the job's agent.
    pub domain: String,
    pub lease: Duration,
    /// The run's number on this agent: the claim's next job may start
    /// while this one's sandbox is still being removed.
    pub run: u64,
    /// What taking and restoring checkpoints needs.
    pub checkpoints: Arc<checkpoint::Context>,
    /// The job's latest checkpoint, to restore before it starts.
    pub restore: Option<Box<transfer::Restore>>,
    /// Reserving the path for the input's transfer.
    pub links: crate::links::Client,
    /// The JVM a java-universe job (JobUniverse 10) runs on.
    pub java: PathBuf,
    /// The last checkpoint this starter took, for the startd's migration
    /// decider (what a move would cost).
    pub last_checkpoint: Arc<std::sync::Mutex<Option<super::migrate::LastCheckpoint>>>,
    /// A co-allocated job's node waits here, its input staged, until all
    /// its nodes start together ([`super::barrier`]).
    pub barrier: Option<Arc<super::barrier::Barrier>>,
}

/// What the startd tells a starter while its job runs: the owner policy's
/// actions ([`starling_policies::owner_policy::Action`]) and the end of
/// the claim.
#[derive(Debug, Clone)]
pub enum Control {
    /// The claim is gone: terminate the job, remove the sandbox, report
    /// nothing (nobody is left to report to).
    Stop,
    /// Stop the job's processes where they are (SIGSTOP).
    Suspend,
    /// Let them go on (SIGCONT).
    Continue,
    /// Ask the job to leave (its `KillSig`, SIGTERM by default, after
    /// SIGCONT if suspended) and kill it once `grace` has passed; then
    /// report it evicted for `reason`.
    Vacate { grace: Duration, reason: String },
    /// Kill the job now (SIGKILL) and report it evicted for `reason`.
    Kill { reason: String },
}

/// A running starter. Dropping it leaves the job running; [`StarterHandle::stop`]
/// ends it.
#[derive(Debug)]
pub struct StarterHandle {
    control: mpsc::UnboundedSender<Control>,
    /// Set once the job has run and its report was taken (or given up):
    /// the claim may take its next job even before the startd hears of
    /// the end.
    done: Arc<AtomicBool>,
}

impl StarterHandle {
    /// Terminates the job (if it runs), removes its sandbox and reports
    /// nothing.
    pub fn stop(self) {
        let _ = self.control.send(Control::Stop);
    }

    /// Passes an owner-policy action on to the job.
    pub fn send(&self, control: Control) {
        let _ = self.control.send(control);
    }

    /// Whether the job has run and its report is delivered.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }
}

/// Starts a starter; `ended` is called when it is done, whatever the end.
pub fn spawn(args: StarterArgs, ended: impl FnOnce() + Send + 'static) -> StarterHandle {
    let (control, controls) = mpsc::unbounded_channel();
    let done = Arc::new(AtomicBool::new(false));
    let span =
        tracing::info_span!("starter", claim = %short(&args.claim), job = %job_id(&args.job));
    let finished = done.clone();
    tokio::spawn(tracing::Instrument::instrument(
        async move {
            run(args, Stopped(controls, None), &finished).await;
            ended();
        },
        span,
    ));
    StarterHandle { control, done }
}

/// The startd's side of the channel: before the job runs and after it
/// ended, only [`Control::Stop`] (or the startd going away) matters; a
/// vacate or kill that arrives while no process runs (the job is between
/// two runs, taking its checkpoint) is kept for when one would start.
struct Stopped(mpsc::UnboundedReceiver<Control>, Option<Control>);

impl Stopped {
    /// Resolves when the starter must stop.
    async fn stopped(&mut self) {
        loop {
            match self.0.recv().await {
                None | Some(Control::Stop) => return,
                Some(leave @ (Control::Vacate { .. } | Control::Kill { .. })) => {
                    // A kill outranks a vacate.
                    if !matches!(self.1, Some(Control::Kill { .. })) {
                        self.1 = Some(leave);
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// Why the job must leave, if a vacate or kill came while it did not
    /// run.
    fn must_leave(&mut self) -> Option<String> {
        match self.1.take()? {
            Control::Vacate { reason, .. } | Control::Kill { reason } => Some(reason),
            _ => None,
        }
    }
}

/// Looks at what an earlier run of this agent left: the jobs it started
/// whose claims the store still holds (`claims`, as hex), whose leases
/// hold and that still run or have a recorded end are returned, to be
/// taken on again ([`adopt`]); every other job is killed and its sandbox,
/// cgroup and record removed.
pub async fn recover(
    root: &Path,
    isolation: &Arc<starling_process::isolation::Setup>,
    claims: std::collections::HashSet<String>,
) -> Vec<starling_process::runs::Found> {
    let root = root.to_path_buf();
    let isolation = isolation.clone();
    tokio::task::spawn_blocking(move || {
        let mut kept = Vec::new();
        if let Some(runs) = isolation.runs() {
            for (name, found) in runs.list() {
                let ours = found
                    .record
                    .as_ref()
                    .is_some_and(|r| claims.contains(&r.claim));
                if ours && found.adoptable() {
                    kept.push(found);
                } else {
                    starling_process::runs::kill(&found);
                    runs.finish(&name);
                }
            }
        }
        let keep: Vec<&str> = kept.iter().map(|f| f.name.as_str()).collect();
        let groups = isolation.sweep(&keep);
        if groups > 0 {
            tracing::info!(
                groups,
                "killed what jobs of a previous run left in their cgroups"
            );
        }
        let _ = Sandbox::sweep(&root, &keep);
        kept
    })
    .await
    .unwrap_or_default()
}

fn short(claim: &ClaimId) -> String {
    claim.to_string()[..8].to_owned()
}

async fn run(args: StarterArgs, mut stopped: Stopped, done: &AtomicBool) {
    let name = starling_process::runs::run_name(&args.claim, args.run);
    // Held until the sandbox is gone: a slot account is then free again.
    let run_as = {
        let (isolation, job, own) = (args.isolation.clone(), args.job.clone(), args.own_domain);
        tokio::task::spawn_blocking(move || isolation.account_for(&job, own))
            .await
            .unwrap_or(starling_process::isolation::RunAsAccount {
                account: Some(starling_process::account::Account::nobody()),
                lease: None,
            })
    };
    let mut sandbox = match Sandbox::create(&args.sandboxes, &name) {
        Ok(s) => s,
        Err(e) => {
            let report = held(
                hold_codes::FAILED_TO_CREATE_PROCESS,
                0,
                format!("the execute agent could not make a sandbox: {e}"),
            );
            deliver(&args, None, Vec::new(), report, &mut stopped).await;
            done.store(true, Ordering::SeqCst);
            return;
        }
    };
    run_in(&args, &name, &run_as, &mut sandbox, &mut stopped).await;
    if let Some(barrier) = &args.barrier {
        // Ended before its release (its input failed): the submit agent
        // gives the co-allocation up.
        barrier.fail("the node ended before it was started");
    }
    done.store(true, Ordering::SeqCst);
    let runs = args.isolation.runs().cloned();
    let _ = tokio::task::spawn_blocking(move || {
        let _ = sandbox.remove();
        if let Some(runs) = runs {
            runs.finish(&name);
        }
    })
    .await;
    drop(run_as);
}

/// Takes on a job an earlier run of this agent started (see
/// [`starling_process::runs`]): waits for its end, then reports it and
/// offers its output as [`spawn`]'s starter does.
pub fn adopt(
    args: StarterArgs,
    found: starling_process::runs::Found,
    ended: impl FnOnce() + Send + 'static,
) -> StarterHandle {
    let (control, controls) = mpsc::unbounded_channel();
    let done = Arc::new(AtomicBool::new(false));
    let span = tracing::info_span!("starter", claim = %short(&args.claim), adopted = true);
    let finished = done.clone();
    tokio::spawn(tracing::Instrument::instrument(
        async move {
            run_adopted(args, found, Stopped(controls, None), &finished).await;
            ended();
        },
        span,
    ));
    StarterHandle { control, done }
}

async fn run_adopted(
    args: StarterArgs,
    found: starling_process::runs::Found,
    mut stopped: Stopped,
    done: &AtomicBool,
) {
    let name = found.name.clone();
    let Some(record) = found.record.clone() else {
        done.store(true, Ordering::SeqCst);
        return;
    };
    let mut sandbox = Sandbox::reopen(record.sandbox.clone(), &record.inputs);
    let account = record
        .account
        .clone()
        .map(|(name, uid, gid)| starling_process::account::Account { name, uid, gid });
    let isolation = execute::Isolation {
        cgroups: args.isolation.cgroups().cloned(),
        ..execute::Isolation::default()
    };
    let status = args
        .isolation
        .runs()
        .map(|r| r.status_path(&name))
        .unwrap_or_default();
    match execute::adopt(&found, &isolation, status) {
        Some(running) => {
            tracing::info!(run = %name, pid = running.pid, "took on a job started before this agent's restart");
            // A job taken on goes on checkpointing from where the lost
            // agent's run left off; it is not started again here (its
            // account and resources were the lost agent's), but elsewhere,
            // from the checkpoint it just took.
            let mut plan = checkpoint::Plan::of(&args.job, &args.peer, &args.domain);
            if let (Some(plan), Some(runs)) = (plan.as_mut(), args.isolation.runs()) {
                plan.recall(runs.dir_of(&name));
            }
            let executable = text(&args.job, "Cmd")
                .and_then(|cmd| Some(sandbox.path().join(Path::new(&cmd).file_name()?)))
                .unwrap_or_default();
            let checkpointing = plan.as_mut().map(|p| (p, executable.as_path()));
            let ran = finish_run(
                &args,
                account,
                &mut sandbox,
                running,
                &mut stopped,
                checkpointing,
            )
            .await;
            if matches!(ran, Ran::Again) {
                let mut report = Report::default();
                report.evicted = Some(
                    "the job checkpointed after its execute agent restarted; it runs again from its checkpoint"
                        .to_owned(),
                );
                deliver(&args, Some(&sandbox), Vec::new(), report, &mut stopped).await;
            }
        }
        None => tracing::warn!(run = %name, "cannot take on the job; dropping it"),
    }
    done.store(true, Ordering::SeqCst);
    let runs = args.isolation.runs().cloned();
    let _ = tokio::task::spawn_blocking(move || {
        let _ = sandbox.remove();
        if let Some(runs) = runs {
            runs.finish(&name);
        }
    })
    .await;
}

/// Pulls, runs, reports. Returns when the report was taken or given up.
async fn run_in(
    args: &StarterArgs,
    name: &str,
    run_as: &starling_process::isolation::RunAsAccount,
    sandbox: &mut Sandbox,
    stopped: &mut Stopped,
) {
    // The request bounds the input, but never below a size any job may
    // bring (HTCondor's default request_disk is the input's own size).
    let budget = args
        .resources
        .disk_kib
        .saturating_mul(1024)
        .max(INPUT_FLOOR);
    let purpose = crate::links::Purpose::of_job(crate::links::Kind::InputIn, &args.job);
    let pulled = tokio::select! {
        pulled = crate::transfers::fetch::pull_reserved(
            &args.links,
            args.peer,
            args.transfer,
            &args.inputs,
            sandbox.path(),
            budget,
            &purpose,
        ) => pulled,
        () = stopped.stopped() => {
            fetch::close(&args.network, args.peer, args.transfer).await;
            return;
        }
    };
    fetch::close(&args.network, args.peer, args.transfer).await;
    match pulled {
        Ok(_) => tracing::info!(files = args.inputs.len(), "received the job's input"),
        // The submit agent went away (or restarted and forgot the
        // transfer): no fault of the job's, which runs again.
        Err(fetch::PullError::Peer(e)) => {
            let mut report = Report::default();
            report.evicted = Some(format!(
                "the input could not be fetched from the submit agent: {e}"
            ));
            report.never_started = true;
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return;
        }
        Err(fetch::PullError::Here(e)) => {
            let report = held(
                hold_codes::TRANSFER_INPUT_ERROR,
                0,
                format!("transferring the input failed: {e}"),
            );
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return;
        }
    }
    // The job's latest checkpoint goes in beside its input: it resumes
    // from there.
    let mut plan = checkpoint::Plan::of(&args.job, &args.peer, &args.domain);
    if let (Some(plan), Some(runs)) = (plan.as_mut(), args.isolation.runs()) {
        plan.remember_in = Some(runs.dir_of(name));
    }
    let mut restored = Vec::new();
    if let (Some(plan), Some(restore)) = (plan.as_mut(), args.restore.as_deref()) {
        let fetched = tokio::select! {
            r = checkpoint::restore(&args.checkpoints, plan, restore, sandbox.path()) => r,
            () = stopped.stopped() => return,
        };
        match fetched {
            Ok(names) => restored = names,
            Err(e) => {
                // Not the job's fault, and starting over would throw its
                // progress away: it waits for its replicas elsewhere.
                let mut report = Report::default();
                report.evicted = Some(format!("the job's checkpoint could not be restored: {e}"));
                deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
                return;
            }
        }
    }
    // HTCondor's hand-over of the ads: files the job can read, named by
    // `_CONDOR_MACHINE_AD` and `_CONDOR_JOB_AD`.
    let ads = [(MACHINE_AD_FILE, &args.machine), (JOB_AD_FILE, &args.job)];
    for (name, ad) in ads {
        let mut text = Vec::new();
        let written = starling_protocol::classad::formats::write_long(&mut text, ad)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                std::fs::write(sandbox.path().join(name), &text).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!(error = %e, file = name, "cannot write the ad for the job");
        }
    }
    // The private /tmp's directories are made while the sandbox is still
    // root's; then everything is handed to the job's account.
    if args.isolation.isolation(run_as).private_tmp {
        if let Err(e) = starling_process::confine::make_private_dirs(sandbox.path()) {
            let report = held(
                hold_codes::FAILED_TO_CREATE_PROCESS,
                e.raw_os_error().unwrap_or(0),
                format!("the execute agent could not make the job's private /tmp: {e}"),
            );
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return;
        }
    }
    if let Some(account) = &run_as.account {
        if let Err(e) = account.own(sandbox.path()) {
            let report = held(
                hold_codes::FAILED_TO_CREATE_PROCESS,
                e.raw_os_error().unwrap_or(0),
                format!("the sandbox could not be given to {}: {e}", account.name),
            );
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return;
        }
    }
    if let Err(e) = sandbox.snapshot_inputs() {
        let report = held(
            hold_codes::FAILED_TO_CREATE_PROCESS,
            0,
            format!("the execute agent could not list the sandbox: {e}"),
        );
        deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
        return;
    }
    sandbox.forget_inputs(&restored);
    if let Some(barrier) = &args.barrier {
        barrier.arrive();
        tracing::info!("the node's input is staged; waiting for its co-allocation to start");
        let contacts = tokio::select! {
            c = barrier.released() => c,
            () = stopped.stopped() => return,
        };
        if let Err(e) = super::barrier::write_contacts(sandbox.path(), &contacts) {
            let report = held(
                hold_codes::FAILED_TO_CREATE_PROCESS,
                e.raw_os_error().unwrap_or(0),
                format!("the execute agent could not write the nodes' contact file: {e}"),
            );
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return;
        }
        // The contact file is the agent's, not the job's output.
        if sandbox.snapshot_inputs().is_ok() {
            sandbox.forget_inputs(&restored);
        }
        tracing::info!(nodes = contacts.len(), "released: the node starts");
    }
    // A job that checkpoints by exiting is started again in the same
    // sandbox until it exits otherwise.
    loop {
        match start_once(args, name, run_as, sandbox, stopped, plan.as_mut()).await {
            Ran::Again => {
                if let Some(runs) = args.isolation.runs() {
                    runs.finish(name);
                }
            }
            Ran::Done => return,
        }
    }
}

/// Whether the job runs again after its checkpoint.
enum Ran {
    Again,
    Done,
}

/// Starts the job once and watches it to its end.
async fn start_once(
    args: &StarterArgs,
    name: &str,
    run_as: &starling_process::isolation::RunAsAccount,
    sandbox: &mut Sandbox,
    stopped: &mut Stopped,
    plan: Option<&mut checkpoint::Plan>,
) -> Ran {
    let mut spec = match spec_of(args, run_as, sandbox) {
        Ok(spec) => spec,
        Err(reason) => {
            let report = held(hold_codes::FAILED_TO_CREATE_PROCESS, 0, reason);
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return Ran::Done;
        }
    };
    let executable = spec.executable.clone();
    // Through a reaper, with a record of the run outside the agent, so
    // that the job outlives a crash of the agent.
    if let Some(runs) = args.isolation.runs() {
        let lease = starling_process::runs::Lease::from_now(args.lease);
        match (runs.begin(name, &lease), std::env::current_exe()) {
            (Ok(_), Ok(program)) => {
                let record = starling_process::runs::Record {
                    claim: args.claim.to_string(),
                    peer: args.peer.to_string(),
                    run: args.run,
                    job: long_form(&args.job),
                    cpus: args.resources.cpus,
                    memory_mib: args.resources.memory_mib,
                    disk_kib: args.resources.disk_kib,
                    gpus: args.gpus.iter().map(|d| d.id.clone()).collect(),
                    own_domain: args.own_domain,
                    domain: args.domain.clone(),
                    lease_ms: u64::try_from(args.lease.as_millis()).unwrap_or(u64::MAX),
                    sandbox: sandbox.path().to_path_buf(),
                    inputs: sandbox.inputs(),
                    account: run_as
                        .account
                        .as_ref()
                        .map(|a| (a.name.clone(), a.uid, a.gid)),
                    // Filled in as the job starts.
                    tracking: starling_process::runs::Tracking::Cgroup {
                        agent: String::new(),
                        job: String::new(),
                    },
                    started_ms: starling_protocol::identity::Timestamp::now().as_unix_millis(),
                    memory_limit_mib: spec.request_memory_mib,
                    disk_limit_kib: spec.request_disk_kib,
                };
                spec.reaper = Some(execute::Reaping {
                    program,
                    run_dir: runs.dir_of(name),
                    hold_fd: run_as.lease.as_ref().map(|l| l.lock_fd()),
                    record: Box::new(record),
                });
            }
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, "cannot record the run; the job dies with the agent");
            }
        }
    }
    let running = match execute::start(spec).await {
        Ok(r) => {
            tracing::info!(pid = r.pid, "started the job");
            r
        }
        Err(e) => {
            let report = held(e.hold_code().code(), e.hold_subcode(), e.to_string());
            deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
            return Ran::Done;
        }
    };
    let checkpointing = plan.map(|plan| (plan, executable.as_path()));
    finish_run(
        args,
        run_as.account.clone(),
        sandbox,
        running,
        stopped,
        checkpointing,
    )
    .await
}

/// `cluster.proc` of the job's ad, for the log.
fn job_id(ad: &ClassAd) -> String {
    let number =
        |name: &str| crate::ad::integer(ad, name).map_or("?".to_owned(), |n| n.to_string());
    format!("{}.{}", number("ClusterId"), number("ProcId"))
}

/// The job's ad in the long form, as the run's record keeps it.
fn long_form(ad: &ClassAd) -> String {
    let mut text = Vec::new();
    let _ = starling_protocol::classad::formats::write_long(&mut text, ad);
    String::from_utf8_lossy(&text).into_owned()
}

/// Watches the running job to its end, then reports it and offers its
/// output; or, when it exited to checkpoint, takes the checkpoint and
/// says to start it again.
async fn finish_run(
    args: &StarterArgs,
    account: Option<starling_process::account::Account>,
    sandbox: &mut Sandbox,
    mut running: execute::Running,
    stopped: &mut Stopped,
    checkpointing: Option<(&mut checkpoint::Plan, &Path)>,
) -> Ran {
    // The job's own KillSig, also for a job taken on again (its ad is the
    // run record's).
    let kill_signal = starling_process::job::kill_signal(&args.job);
    let Some((outcome, evicted)) = watch(&mut running, stopped, kill_signal).await else {
        running.terminate(STOP_GRACE).await;
        return Ran::Done;
    };
    let mut report = outcome.report();
    tracing::info!(
        exit_code = ?report.exit_code,
        signal = ?report.signal,
        evicted = evicted.is_some(),
        "the job ended"
    );
    if let Some((plan, executable)) = checkpointing {
        let this_start = report.clone();
        report = plan.whole(report);
        // It exited to checkpoint; or it was evicted and wants its files
        // kept however it ended (ON_EXIT_OR_EVICT).
        let checkpointed = (report.exit_code.is_some() && report.exit_code == plan.exit_code)
            || (evicted.is_some() && plan.on_evict);
        if checkpointed && report.hold.is_none() {
            let taken = tokio::select! {
                t = checkpoint::take(
                    &args.checkpoints,
                    plan,
                    args.claim,
                    args.peer,
                    sandbox,
                    account.as_ref(),
                    executable,
                ) => t,
                () = stopped.stopped() => return Ran::Done,
            };
            match taken {
                Err(e) => tracing::warn!(error = %e, "the job's checkpoint was not taken"),
                Ok(t) => {
                    let rate = t.bytes as f64 / t.elapsed.as_secs_f64().max(1e-3);
                    if let Ok(mut last) = args.last_checkpoint.lock() {
                        *last = Some(super::migrate::LastCheckpoint {
                            bytes: t.bytes,
                            rate,
                        });
                    }
                }
            }
            if evicted.is_none() {
                plan.ran(&this_start);
                // Vacated while it took its checkpoint: it leaves with it
                // rather than start again.
                if let Some(reason) = stopped.must_leave() {
                    report.evicted = Some(reason);
                    report.hold = None;
                    deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
                    return Ran::Done;
                }
                return Ran::Again;
            }
        }
    }
    if let Some(reason) = evicted {
        // Evicted jobs leave no output behind (HTCondor's ON_EXIT): they
        // run again elsewhere, from their checkpoint if they took one.
        report.evicted = Some(reason);
        report.hold = None;
        deliver(args, Some(sandbox), Vec::new(), report, stopped).await;
        return Ran::Done;
    }
    let wanted = transfer_output_files(&args.job);
    let listed = sandbox
        .outputs(wanted.as_deref())
        .map_err(|e| e.to_string())
        .and_then(|paths| named(sandbox.path(), with_standard_streams(sandbox, paths)));
    let opened = match listed {
        Ok(listed) => {
            let account = account.clone();
            tokio::task::spawn_blocking(move || open_outputs(account.as_ref(), listed))
                .await
                .unwrap_or_else(|e| Err(e.to_string()))
        }
        Err(e) => Err(e),
    };
    let outputs = match opened {
        Ok(o) => o,
        Err(e) => {
            report.hold.get_or_insert(Hold::new(
                hold_codes::TRANSFER_OUTPUT_ERROR,
                0,
                format!("collecting the output failed: {e}"),
            ));
            Vec::new()
        }
    };
    deliver(args, Some(sandbox), outputs, report, stopped).await;
    Ran::Done
}

/// Waits for the job's end while carrying out the startd's actions; a
/// vacate sends the job `kill_signal`. Returns how it ended and, when the
/// startd vacated or killed it, why; `None` when the starter must stop
/// without a report.
async fn watch(
    running: &mut execute::Running,
    controls: &mut Stopped,
    kill_signal: rustix::process::Signal,
) -> Option<(execute::Outcome, Option<String>)> {
    let mut evicted: Option<String> = None;
    // Set while vacating: when SIGKILL follows the SIGTERM.
    let mut kill_at: Option<tokio::time::Instant> = None;
    // A vacate or kill that came before the job started.
    if let Some(leave) = controls.1.take() {
        leave_now(leave, running, kill_signal, &mut evicted, &mut kill_at);
    }
    loop {
        let deadline = async {
            match kill_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            outcome = running.wait() => return Some((outcome, evicted)),
            () = deadline => {
                tracing::info!("the job outlived its vacate grace; killing it");
                running.kill();
                kill_at = None;
            }
            control = controls.0.recv() => match control {
                None | Some(Control::Stop) => return None,
                Some(Control::Suspend) => {
                    if let Err(e) = running.suspend() {
                        tracing::warn!(error = %e, "cannot suspend the job");
                    }
                }
                Some(Control::Continue) => {
                    if let Err(e) = running.resume() {
                        tracing::warn!(error = %e, "cannot continue the job");
                    }
                }
                Some(leave @ (Control::Vacate { .. } | Control::Kill { .. })) => {
                    leave_now(leave, running, kill_signal, &mut evicted, &mut kill_at);
                }
            },
        }
    }
}

/// Vacates (its kill signal, SIGKILL after the grace) or kills the job.
fn leave_now(
    leave: Control,
    running: &mut execute::Running,
    kill_signal: rustix::process::Signal,
    evicted: &mut Option<String>,
    kill_at: &mut Option<tokio::time::Instant>,
) {
    match leave {
        Control::Vacate { grace, reason } => {
            tracing::info!(%reason, ?grace, signal = kill_signal.as_raw(), "vacating the job");
            running.ask_to_leave(kill_signal);
            evicted.get_or_insert(reason);
            // MachineMaxVacateTime may be any number: at most an hour.
            let grace = grace.min(MAX_VACATE_GRACE);
            kill_at.get_or_insert(tokio::time::Instant::now() + grace);
        }
        Control::Kill { reason } => {
            tracing::info!(%reason, "killing the job");
            running.kill();
            evicted.get_or_insert(reason);
        }
        _ => {}
    }
}

/// Offers `outputs` and `report` to the submit agent until it takes them,
/// then waits until it has pulled them (or gives up at the deadline).
async fn deliver(
    args: &StarterArgs,
    _sandbox: Option<&Sandbox>,
    outputs: Vec<(File, PathBuf, std::fs::File)>,
    report: Report,
    stopped: &mut Stopped,
) {
    let mut listed = Vec::with_capacity(outputs.len());
    let mut descriptors = Vec::with_capacity(outputs.len());
    for (file, path, descriptor) in outputs {
        listed.push((file, path));
        descriptors.push(descriptor);
    }
    let transfer = TransferId::fresh();
    let (closed_tx, closed) = oneshot::channel();
    // Counted as it is pulled: `starling net` lists it, and the startd
    // keeps the claim while it moves.
    let flight = args.links.owner.flights().register(
        crate::links::Kind::OutputOut,
        args.peer,
        crate::links::job_of(&args.job),
        listed.iter().map(|(f, _)| f.size).sum(),
    );
    flight.unreserved();
    args.router
        .offer_opened(
            transfer,
            Offer {
                peer: args.peer,
                files: listed.clone(),
                closed: Some(closed_tx),
                flight: Some(Arc::new(flight)),
            },
            descriptors,
        )
        .await;
    let files: Vec<File> = listed.into_iter().map(|(f, _)| f).collect();
    let request = transfer::Request::Offer {
        claim: args.claim,
        transfer,
        files,
        report: Some(report),
    };
    loop {
        let answer = tokio::select! {
            a = fetch::request(&args.network, args.peer, request.clone()) => a,
            () = stopped.stopped() => {
                args.router.withdraw(transfer).await;
                return;
            }
        };
        match answer {
            Ok(transfer::Response::Accepted { .. }) => break,
            Ok(other) => tracing::debug!(?other, "the submit agent did not take the output yet"),
            Err(e) => tracing::debug!(error = %e, "offering the output failed; offering again"),
        }
        tokio::select! {
            () = tokio::time::sleep(OFFER_RETRY) => {}
            () = stopped.stopped() => {
                args.router.withdraw(transfer).await;
                return;
            }
        }
    }
    // Offered again now and then until closed: a submit agent that
    // restarted before it had recorded the job's end takes it again.
    let deadline = tokio::time::sleep(PULL_DEADLINE);
    tokio::pin!(deadline);
    tokio::pin!(closed);
    loop {
        tokio::select! {
            _ = &mut closed => break,
            () = &mut deadline => {
                tracing::warn!("the submit agent did not pull the output in time");
                break;
            }
            () = stopped.stopped() => break,
            () = tokio::time::sleep(REOFFER) => {
                let _ = fetch::request(&args.network, args.peer, request.clone()).await;
            }
        }
    }
    args.router.withdraw(transfer).await;
}

fn held(code: u32, subcode: i32, reason: String) -> Report {
    let mut report = Report::default();
    report.hold = Some(Hold::new(code, subcode, reason));
    report
}

/// The string value of `name` in the job ad.
fn text(job: &ClassAd, name: &str) -> Option<String> {
    let Ok(name) = Name::new(name) else {
        return None;
    };
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn transfer_output_files(job: &ClassAd) -> Option<Vec<String>> {
    text(job, "TransferOutput").map(|list| {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    })
}

/// The job's stdout and stderr go back as well, whatever it asked for:
/// the submit agent puts them where `output` and `error` said.
fn with_standard_streams(sandbox: &Sandbox, mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    for stream in [sandbox.stdout(), sandbox.stderr()] {
        if stream.is_file() && !paths.contains(&stream) {
            paths.push(stream);
        }
    }
    paths
}

/// Opens the outputs to send back and describes them. The sandbox is the
/// job's: each is opened with its account's rights and without following
/// a link, so a job that leaves a link to a file it may not read (the
/// agent's key) gets nothing; chunks are then read through these open
/// files, never by path again. Blocking.
fn open_outputs(
    account: Option<&starling_process::account::Account>,
    outputs: Vec<(FileName, PathBuf)>,
) -> Result<Vec<(File, PathBuf, std::fs::File)>, String> {
    let (rights, options) = reading_as(account);
    outputs
        .into_iter()
        .map(|(name, path)| {
            let opened = rights
                .open(&path, &options)
                .and_then(|f| starling_process::files::describe(&name, &f).map(|d| (d, f)));
            match opened {
                Ok((described, file)) => Ok((described, path, file)),
                Err(e) => Err(format!("{}: {e}", name.as_str())),
            }
        })
        .collect()
}

/// Opens a checkpoint's files as [`open_outputs`] opens the output: with
/// the job's account's rights, never through a link. Returns each with its
/// permission bits. Blocking.
pub fn open_checkpoint(
    account: Option<&starling_process::account::Account>,
    files: Vec<(FileName, PathBuf)>,
) -> Result<Vec<(FileName, std::fs::File, u32)>, String> {
    use std::os::unix::fs::PermissionsExt as _;
    let (rights, options) = reading_as(account);
    files
        .into_iter()
        .map(|(name, path)| {
            let file = rights
                .open(&path, &options)
                .map_err(|e| format!("{}: {e}", name.as_str()))?;
            let meta = file
                .metadata()
                .map_err(|e| format!("{}: {e}", name.as_str()))?;
            if !meta.is_file() {
                return Err(format!("{}: not a regular file", name.as_str()));
            }
            let mode = meta.permissions().mode() & transfer::MODE_MASK;
            Ok((name, file, mode))
        })
        .collect()
}

/// The rights and open options job files are read with.
fn reading_as(
    account: Option<&starling_process::account::Account>,
) -> (starling_process::users::Rights, std::fs::OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt as _;
    let rights = match account {
        Some(a) if rustix::process::geteuid().is_root() => {
            starling_process::users::Rights::User(starling_process::users::User {
                name: a.name.clone(),
                uid: a.uid,
                gid: a.gid,
                groups: vec![a.gid],
            })
        }
        _ => starling_process::users::Rights::Agent,
    };
    let mut options = std::fs::OpenOptions::new();
    options
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    (rights, options)
}

/// The sandbox files to send back, each under its name relative to the
/// sandbox.
fn named(root: &Path, paths: Vec<PathBuf>) -> Result<Vec<(FileName, PathBuf)>, String> {
    paths
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let name = FileName::new(relative.to_string_lossy().into_owned())
                .map_err(|e| format!("{}: {e}", relative.display()))?;
            Ok((name, path))
        })
        .collect()
}

/// What to run, from the job ad: the executable is in the sandbox when it
/// was transferred, else it is the path the job names on this machine.
fn spec_of(
    args: &StarterArgs,
    run_as: &starling_process::isolation::RunAsAccount,
    sandbox: &Sandbox,
) -> Result<Spec, String> {
    let job = &args.job;
    let cmd = text(job, "Cmd").ok_or("the job has no Cmd (executable)")?;
    let base = Path::new(&cmd)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let executable = if args.inputs.iter().any(|f| f.name.as_str() == base) {
        sandbox.path().join(&base)
    } else {
        PathBuf::from(&cmd)
    };
    let mut spec = if execute::job::is_java(job) {
        // The machine's JVM runs the job's class (HTCondor's java starter).
        let java = crate::machine::java::resolve(&args.java).ok_or_else(|| {
            format!(
                "the java job's JVM {} is not on this machine's PATH",
                args.java.display()
            )
        })?;
        let mut spec = Spec::new(sandbox, java);
        spec.args = execute::job::java_arguments(job, sandbox.path())?;
        spec
    } else {
        let mut spec = Spec::new(sandbox, executable);
        spec.args = execute::job::arguments(job)?;
        spec
    };
    spec.env = execute::job::environment(job)?;
    spec.stdin = text(job, "In").filter(|p| p != "/dev/null").and_then(|p| {
        let base = Path::new(&p).file_name()?.to_string_lossy().into_owned();
        Some(sandbox.path().join(base))
    });
    spec.env.push((
        "_CONDOR_MACHINE_AD".to_owned(),
        sandbox
            .path()
            .join(MACHINE_AD_FILE)
            .to_string_lossy()
            .into_owned(),
    ));
    spec.env.push((
        "_CONDOR_JOB_AD".to_owned(),
        sandbox
            .path()
            .join(JOB_AD_FILE)
            .to_string_lossy()
            .into_owned(),
    ));
    if starling_policies::slots::Resources::totals_of(&args.machine).gpus > 0 {
        spec.env.extend(gpu_environment(&args.gpus));
        spec.hidden_devices = others_devices(&args.machine, &args.gpus);
    }
    if let Some(contacts) = args.barrier.as_ref().and_then(|b| b.contacts()) {
        spec.env
            .extend(super::barrier::environment(job, sandbox.path(), &contacts));
    }
    spec.stdout = sandbox.stdout();
    spec.stderr = sandbox.stderr();
    spec.request_cpus = args.resources.cpus;
    spec.request_memory_mib = args.resources.memory_mib;
    spec.request_disk_kib = args.resources.disk_kib;
    spec.account = run_as.account.clone();
    spec.isolation = args.isolation.isolation(run_as);
    Ok(spec)
}

/// The value HTCondor gives the device variables of a job that holds no
/// GPU on a machine that has some (`ENVIRONMENT_VALUE_FOR_UnAssignedGPUs`):
/// no device has that number, so CUDA shows the job none.
pub const UNASSIGNED_GPUS: &str = "10000";

/// The variables that tell a job which GPUs are its own, as HTCondor's
/// starter sets them by default: `_CONDOR_AssignedGPUs` and
/// `GPU_DEVICE_ORDINAL` with the devices' ids (`GPU-9a8ed216,GPU-6a96bd13`),
/// and `CUDA_VISIBLE_DEVICES` and `NVIDIA_VISIBLE_DEVICES` with their full
/// UUIDs where known (`AUTO_SET_NVIDIA_VISIBLE_DEVICES`); otherwise
/// `NVIDIA_VISIBLE_DEVICES=none` and `CUDA_VISIBLE_DEVICES` the ids. A job
/// with no GPUs gets [`UNASSIGNED_GPUS`], which names no device.
pub fn gpu_environment(gpus: &[starling_policies::slots::Device]) -> Vec<(String, String)> {
    use starling_protocol::classad::{Expr, Value};
    let var = |name: &str, value: String| (name.to_owned(), value);
    if gpus.is_empty() {
        return vec![
            var("_CONDOR_AssignedGPUs", UNASSIGNED_GPUS.to_owned()),
            var("GPU_DEVICE_ORDINAL", UNASSIGNED_GPUS.to_owned()),
            var("CUDA_VISIBLE_DEVICES", UNASSIGNED_GPUS.to_owned()),
            var("NVIDIA_VISIBLE_DEVICES", "none".to_owned()),
        ];
    }
    let ids = gpus
        .iter()
        .map(|d| d.id.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let uuids: Option<Vec<String>> = gpus
        .iter()
        .map(|d| match d.properties.get("DeviceUuid") {
            Some(Expr::Literal(Value::String(u))) if !u.is_empty() => Some(format!("GPU-{u}")),
            _ => None,
        })
        .collect();
    let (cuda, nvidia) = match uuids {
        Some(u) => (u.join(","), u.join(",")),
        None => (ids.clone(), "none".to_owned()),
    };
    vec![
        var("_CONDOR_AssignedGPUs", ids.clone()),
        var("GPU_DEVICE_ORDINAL", ids),
        var("CUDA_VISIBLE_DEVICES", cuda),
        var("NVIDIA_VISIBLE_DEVICES", nvidia),
    ]
}

/// The device files of the machine's GPUs that are not among `own`.
fn others_devices(machine: &ClassAd, own: &[starling_policies::slots::Device]) -> Vec<PathBuf> {
    use starling_protocol::classad::{Expr, Value};
    starling_policies::slots::devices_of(machine)
        .into_iter()
        .filter(|d| !own.iter().any(|o| o.id == d.id))
        .filter_map(|d| match d.properties.get("DevicePath") {
            Some(Expr::Literal(Value::String(p))) if !p.is_empty() => Some(PathBuf::from(&**p)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_sees_its_own_gpus_and_no_others() {
        use starling_policies::slots::Device;
        use starling_protocol::classad::parse_ad;
        let found = Device {
            id: "GPU-9a8ed216".to_owned(),
            properties: parse_ad(r#"[DeviceUuid = "9a8ed216-3854-e861-579d-9a1df0118bfc"]"#)
                .unwrap(),
        };
        let declared = Device {
            id: "GPU-00000002".to_owned(),
            properties: ClassAd::new(),
        };
        let env = |gpus: &[Device]| -> std::collections::BTreeMap<String, String> {
            gpu_environment(gpus).into_iter().collect()
        };
        let one = env(std::slice::from_ref(&found));
        assert_eq!(one["_CONDOR_AssignedGPUs"], "GPU-9a8ed216");
        assert_eq!(
            one["CUDA_VISIBLE_DEVICES"],
            "GPU-9a8ed216-3854-e861-579d-9a1df0118bfc"
        );
        assert_eq!(one["NVIDIA_VISIBLE_DEVICES"], one["CUDA_VISIBLE_DEVICES"]);
        let two = env(&[found, declared.clone()]);
        assert_eq!(two["_CONDOR_AssignedGPUs"], "GPU-9a8ed216,GPU-00000002");
        assert_eq!(two["CUDA_VISIBLE_DEVICES"], "GPU-9a8ed216,GPU-00000002");
        assert_eq!(two["NVIDIA_VISIBLE_DEVICES"], "none");
        let none = env(&[]);
        assert_eq!(none["CUDA_VISIBLE_DEVICES"], UNASSIGNED_GPUS);
        assert_eq!(none["NVIDIA_VISIBLE_DEVICES"], "none");
    }

    #[tokio::test]
    async fn a_vacate_or_kill_while_no_process_runs_is_kept_for_when_one_would_start() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut stopped = Stopped(rx, None);
        tx.send(Control::Suspend).unwrap();
        tx.send(Control::Vacate {
            grace: Duration::from_secs(5),
            reason: "moving to slot1@b".to_owned(),
        })
        .unwrap();
        tx.send(Control::Stop).unwrap();
        stopped.stopped().await;
        assert_eq!(stopped.must_leave().as_deref(), Some("moving to slot1@b"));
        assert_eq!(stopped.must_leave(), None);

        // A kill outranks a vacate, whatever the order.
        tx.send(Control::Kill {
            reason: "KILL became true".to_owned(),
        })
        .unwrap();
        tx.send(Control::Vacate {
            grace: Duration::from_secs(5),
            reason: "later".to_owned(),
        })
        .unwrap();
        drop(tx);
        stopped.stopped().await;
        assert_eq!(stopped.must_leave().as_deref(), Some("KILL became true"));
    }
}
