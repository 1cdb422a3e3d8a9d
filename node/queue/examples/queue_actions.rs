//! `qedit`, `hold`, `release` and `rm` of a whole cluster through the
//! queue ([`Queue::edit`], [`Queue::act`]: the code path of the control
//! API), in a real sled store under a temporary directory, with every job
//! writing the same user log.
//!
//!     cargo run --release -p starling-queue --example queue_actions -- [JOBS] [BASELINE] [RUNS] [DIR]
//!
//! Each run queues JOBS idle jobs (default 100,000) in a new store and
//! times each action on the whole cluster, one request each. The baseline,
//! in the same run, is the old per-job path: the same four actions one job
//! per request (a one-job selection each, so one durable store write and
//! one user-log sync per job, as the queue changed a cluster before it
//! made it one batch), on BASELINE jobs (default 5,000) of another store.
//! Prints each run, then per action the median and spread (min–max) over
//! RUNS runs (default 3) of the whole action and of its cost per job, and
//! the baseline's cost per job over the batch's. DIR (default: a new
//! temporary directory) puts the stores on the disk the agent will use.

use std::sync::Arc;
use std::time::{Duration, Instant};

use starling_protocol::classad::{parse_ad, ClassAd};
use starling_queue::{quote, Action, Queue, Selection, Target};
use starling_storage::{JobId, SledStore, Store};

const ACTIONS: [&str; 4] = ["qedit", "hold", "release", "rm"];

/// A job as `starling submit` queues one: about thirty attributes.
fn job(owner: &str, log: &str) -> ClassAd {
    let text = format!(
        r#"[ Owner = "{owner}"; User = "{owner}@lab"; Cmd = "/home/{owner}/sim/run.sh";
             Args = "--seed 7 --steps 100000"; Iwd = "/home/{owner}/sim";
             Out = "out.$(Process)"; Err = "err.$(Process)"; UserLog = {log};
             In = "/dev/null"; JobUniverse = 5; RequestCpus = 1; RequestMemory = 2048;
             RequestDisk = 1048576; RequestGPUs = 0;
             Requirements = TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" &&
                            TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus;
             Rank = TARGET.Mips; ShouldTransferFiles = "YES";
             WhenToTransferOutput = "ON_EXIT"; TransferInput = "input.dat,params.cfg";
             JobPrio = 0; NiceUser = false; MaxHosts = 1; MinHosts = 1;
             NumCkpts = 0; NumJobStarts = 0; NumRestarts = 0; ExitBySignal = false;
             JobBatchName = "sweep-7"; JobLeaseDuration = 2400;
             OnExitRemove = true; PeriodicHold = false; PeriodicRelease = false ]"#,
        log = quote(log),
    );
    parse_ad(&text).expect("the job ad parses")
}

/// The owner whose rights write the log: the agent's own when it is not
/// root (any name), root's when it is.
fn owner() -> &'static str {
    if rustix::process::geteuid().is_root() {
        "root"
    } else {
        "alice"
    }
}

/// A queue of `jobs` idle jobs in cluster 1 of a new store under `dir`.
async fn queue_of(dir: &std::path::Path, jobs: usize) -> anyhow::Result<Queue> {
    let store: Arc<dyn Store> = Arc::new(SledStore::open(dir.join("store"))?);
    let queue = Queue::open(store).await?;
    let ad = job(owner(), &dir.join("jobs.log").to_string_lossy());
    queue.submit_with(move |_| Ok(vec![ad; jobs])).await?;
    Ok(queue)
}

/// The four actions on `selection`, in order (hold needs jobs idle,
/// release held ones), each timed; checks each changed `expect` jobs.
async fn actions(
    queue: &Queue,
    selections: &[Selection],
    expect: usize,
) -> anyhow::Result<[Duration; 4]> {
    let mut times = [Duration::ZERO; 4];
    for (i, name) in ACTIONS.iter().enumerate() {
        let started = Instant::now();
        let mut changed = 0;
        for selection in selections {
            let acted = match *name {
                "qedit" => queue.edit(selection, "JobBatchName", "\"sweep-8\"").await?,
                "hold" => {
                    let reason = "bench".to_owned();
                    queue.act(&Action::Hold { reason }, selection).await?
                }
                "release" => queue.act(&Action::Release, selection).await?,
                _ => {
                    let reason = "bench".to_owned();
                    queue.act(&Action::Remove { reason }, selection).await?
                }
            };
            changed += acted.changed.len();
        }
        times[i] = started.elapsed();
        anyhow::ensure!(
            changed == expect,
            "{name} changed {changed} of {expect} jobs"
        );
    }
    Ok(times)
}

fn median_and_spread(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let jobs: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let baseline: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5_000);
    let runs: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(3)
        .max(1);
    let root = args.next().map(std::path::PathBuf::from);

    let cluster = vec![Selection {
        targets: vec![Target::Cluster(1)],
        constraint: None,
    }];
    let one_by_one: Vec<Selection> = (0..baseline as u32)
        .map(|proc| Selection {
            targets: vec![Target::Job(JobId::new(1, proc))],
            constraint: None,
        })
        .collect();

    // Seconds per action, batch and baseline, over the runs.
    let mut batch = vec![Vec::new(); 4];
    let mut single = vec![Vec::new(); 4];
    for run in 1..=runs {
        let temp = match &root {
            Some(dir) => tempfile::tempdir_in(dir)?,
            None => tempfile::tempdir()?,
        };
        let started = Instant::now();
        let queue = queue_of(&temp.path().join("batch"), jobs).await?;
        let submitted = started.elapsed();
        let times = actions(&queue, &cluster, jobs).await?;
        drop(queue);
        let queue = queue_of(&temp.path().join("baseline"), baseline).await?;
        let old = actions(&queue, &one_by_one, baseline).await?;
        drop(queue);
        print!("run {run}: {jobs} jobs queued in {submitted:.2?};");
        for (i, name) in ACTIONS.iter().enumerate() {
            batch[i].push(times[i].as_secs_f64());
            single[i].push(old[i].as_secs_f64());
            print!(
                " {name} {:.2?} (baseline {:.2?} for {baseline})",
                times[i], old[i]
            );
        }
        println!();
    }
    println!(
        "{:8} {:>24} {:>26} {:>30} {:>12}",
        "action",
        format!("{jobs} jobs, s"),
        "per job, µs",
        format!("baseline per job ({baseline}), µs"),
        "ratio"
    );
    for (i, name) in ACTIONS.iter().enumerate() {
        let (m, lo, hi) = median_and_spread(batch[i].clone());
        let per = |s: f64, n: usize| s * 1e6 / n as f64;
        let (bm, blo, bhi) = median_and_spread(single[i].clone());
        println!(
            "{name:8} {:>10.3} ({:.3}–{:.3}) {:>10.1} ({:.1}–{:.1}) {:>14.1} ({:.1}–{:.1}) {:>11.0}x",
            m,
            lo,
            hi,
            per(m, jobs),
            per(lo, jobs),
            per(hi, jobs),
            per(bm, baseline),
            per(blo, baseline),
            per(bhi, baseline),
            per(bm, baseline) / per(m, jobs),
        );
    }
    Ok(())
}
