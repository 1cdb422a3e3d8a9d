//! Matchmaking over a large view: what one submit agent's negotiation round
//! costs when its view holds 10,000 machine ads (issue 46's figures).
//!
//!     cargo bench -p starling-policies --bench negotiation
//!     cargo bench -p starling-policies --bench negotiation -- --machines 2000 --runs 5
//!
//! Two pools are measured, each of copies with their own names and free
//! cpus and memory:
//!
//! - **starling**: the machine ad a Starling agent publishes
//!   (`benches/data/machine.ad`, from `starling status -l`: 66 attributes,
//!   `Requirements = START`), a third of them with an owner's desktop
//!   `START` policy and a `Rank` for a department's jobs, and the job ad
//!   `starling submit` makes (`benches/data/job.ad`, ranking by `KFlops`);
//! - **htcondor**: the 64 HTCondor partitionable-slot ads of
//!   `protocol/benches/data` (written by `bench/match/generate_ads.py`: ~93
//!   attributes each, per-machine START policies, nested GPU ads) and its
//!   job, a heavier pool than Starling's own.
//!
//! The round does what
//! `node/agent/src/submit/negotiator/round.rs` does with them, without the
//! agent's I/O: the significant attributes of the view, the autoclusters
//! of the idle jobs, and per autocluster the machines asked
//! (`negotiation::plan`) and those waited at (`negotiation::plan_waits`).
//!
//! The baseline, measured in the same run, is the floor no plan can go
//! under: one symmetric match (both `Requirements`, both `Rank`s) of the
//! job against every machine, `Matcher::pair`. Each figure is printed as
//! the median and the spread (min–max) of the runs, its ratio to that
//! floor, and against the goal.

use std::time::{Duration, Instant};

use starling_policies::autocluster::Significant;
use starling_policies::negotiation::{self, Machine, Request};
use starling_protocol::classad::formats::parse_ads_any;
use starling_protocol::classad::matching::Matcher;
use starling_protocol::classad::{parse_expr, ClassAd, Expr, Name, Value};

/// Starling's own machine and job ads.
const STARLING_MACHINE: &str = include_str!("data/machine.ad");
const STARLING_JOB: &str = include_str!("data/job.ad");
/// HTCondor's, as `condor_status -l` and `condor_q -l` print them.
const HTCONDOR_MACHINES: &str = include_str!("../../protocol/benches/data/machines.ads");
const HTCONDOR_JOB: &str = include_str!("../../protocol/benches/data/job.ad");

/// An owner's desktop policy (HTCondor's example `START`) and a machine
/// that prefers one department's jobs.
const DESKTOP_START: &str = "KeyboardIdle > 15 * 60 && LoadAvg < 0.3 + TotalCpus";
const DEPARTMENT_RANK: &str = "ifThenElse(TARGET.Department =?= \"physics\", 10, 0)";

/// Jobs waited for at busy machines per autocluster, at most (the
/// negotiator's `MAX_WAITS_PER_CLUSTER`).
const WAITS_PER_CLUSTER: usize = 16;

struct Options {
    machines: usize,
    jobs: usize,
    clusters: usize,
    runs: usize,
}

fn options() -> Options {
    let mut o = Options {
        machines: 10_000,
        jobs: 1_000,
        clusters: 20,
        runs: 7,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> usize {
            let text = args
                .next()
                .unwrap_or_else(|| panic!("{name} needs a number"));
            text.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {text}"))
        };
        match arg.as_str() {
            "--machines" => o.machines = value("--machines"),
            "--jobs" => o.jobs = value("--jobs"),
            "--clusters" => o.clusters = value("--clusters"),
            "--runs" => o.runs = value("--runs").max(1),
            // What cargo bench passes to every bench target.
            "--bench" => {}
            other => panic!("unknown option {other} (--machines, --jobs, --clusters, --runs)"),
        }
    }
    o
}

fn int(ad: &mut ClassAd, name: &str, n: i64) {
    ad.insert(Name::known(name), Expr::from(Value::Int(n)));
}

fn text(ad: &mut ClassAd, name: &str, s: &str) {
    ad.insert(Name::known(name), Expr::from(Value::string(s)));
}

/// `n` machine ads: the samples in turn, each with its own name and some
/// of its cpus and memory free (a busy pool: about a third full); with
/// `policies`, every third one with an owner's `START` and `Rank`.
fn machines(samples: &str, n: usize, policies: bool) -> Vec<ClassAd> {
    let samples = parse_ads_any(samples).expect("sample machine ads parse");
    let start = parse_expr(DESKTOP_START).expect("START parses");
    let rank = parse_expr(DEPARTMENT_RANK).expect("Rank parses");
    (0..n)
        .map(|i| {
            let mut ad = samples[i % samples.len()].clone();
            let host = format!("host{i:05}.pool.example.org");
            text(&mut ad, "Name", &format!("slot1@{host}"));
            text(&mut ad, "Machine", &host);
            // A cheap deterministic spread of sizes and of what is free.
            let mix = (i as i64).wrapping_mul(2_654_435_761) >> 7;
            let total = [4, 8, 16, 32, 64][(mix % 5) as usize];
            let cpus = [0, 0, 0, 1, 2, 4, 8, 16, 32][(mix / 5 % 9) as usize].min(total);
            int(&mut ad, "TotalCpus", total);
            int(&mut ad, "Cpus", cpus);
            int(&mut ad, "TotalMemory", total * 4096);
            int(&mut ad, "Memory", cpus * 2048 + (mix % 5) * 512);
            int(&mut ad, "KFlops", 500_000 + mix % 400_000);
            if policies && i % 3 == 0 {
                ad.insert(Name::known("Start"), start.clone());
                ad.insert(Name::known("Rank"), rank.clone());
            }
            // As the view holds an ad it parsed.
            ad.shrink_to_fit();
            ad
        })
        .collect()
}

/// `jobs` idle jobs of `clusters` autoclusters: the sample job with the
/// cluster's owner, cpus and memory, and each its own id.
fn jobs(sample: &str, jobs: usize, clusters: usize) -> Vec<(u64, ClassAd)> {
    let sample = parse_ads_any(sample).expect("sample job parses").remove(0);
    let users = ["alice", "bob", "carol", "dave"];
    (0..jobs)
        .map(|i| {
            let c = i % clusters.max(1);
            let mut ad = sample.clone();
            let user = users[c % users.len()];
            text(&mut ad, "Owner", user);
            text(&mut ad, "AccountingGroup", &format!("group_physics.{user}"));
            int(
                &mut ad,
                "RequestCpus",
                [1, 2, 4, 8, 16][c / users.len() % 5],
            );
            int(&mut ad, "RequestMemory", 1024 * (1 + c as i64 % 7));
            int(&mut ad, "ClusterId", c as i64 + 1);
            int(&mut ad, "ProcId", (i / clusters.max(1)) as i64);
            (i as u64, ad)
        })
        .collect()
}

fn view(ads: &[ClassAd]) -> Vec<Machine<'_>> {
    ads.iter()
        .enumerate()
        .map(|(i, ad)| Machine {
            ad,
            rtt_ms: Some(0.2 + (i % 50) as f64 * 0.7),
            pending: Request::default(),
            avoid: false,
        })
        .collect()
}

/// One negotiation round, as the agent's: returns the jobs asked for and
/// the waits planned.
fn round(ads: &[ClassAd], idle: &[(u64, ClassAd)]) -> (usize, usize) {
    let significant = Significant::with_machines(ads.iter());
    let clusters = significant.group(idle.iter().map(|(id, ad)| (*id, ad)));
    let mut asked = 0;
    let mut waits = 0;
    for cluster in clusters {
        let mut candidates = view(ads);
        let asks = negotiation::plan(&cluster.representative, cluster.members.len(), &candidates);
        for ask in &asks {
            std::hint::black_box(Request::of_job(&cluster.representative, &ads[ask.machine]));
            asked += ask.jobs;
            candidates[ask.machine].avoid = true;
        }
        if asked < cluster.members.len() {
            waits +=
                negotiation::plan_waits(&cluster.representative, &candidates, WAITS_PER_CLUSTER)
                    .len();
        }
    }
    (asked, waits)
}

/// Median and range of `runs` timings of `f` (after one untimed run).
fn measure<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration, Duration, T) {
    let mut last = f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            last = std::hint::black_box(f());
            start.elapsed()
        })
        .collect();
    times.sort();
    (
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        last,
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(
    name: &str,
    (median, low, high): (Duration, Duration, Duration),
    floor: Duration,
    goal: Option<Duration>,
) {
    let verdict = match goal {
        Some(goal) if median <= goal => format!("PASS (goal < {} ms)", ms(goal)),
        Some(goal) => format!("FAIL (goal < {} ms)", ms(goal)),
        None => String::new(),
    };
    println!(
        "{name:<44} {:>10.2} ms  ({:.2}–{:.2})  {:>6.2}× floor  {verdict}",
        ms(median),
        ms(low),
        ms(high),
        median.as_secs_f64() / floor.as_secs_f64(),
    );
}

/// The figures for one pool.
fn pool(name: &str, ads: &[ClassAd], idle: &[(u64, ClassAd)], o: &Options) {
    let job = &idle[0].1;
    let matcher = Matcher::default();
    let candidates = view(ads);
    println!(
        "\n{name}: {} machine ads, {} idle jobs in {} autoclusters, {} runs each (median, min–max)",
        ads.len(),
        idle.len(),
        o.clusters,
        o.runs
    );

    let (floor, low, high, matched) = measure(o.runs, || {
        ads.iter()
            .filter(|m| matcher.pair(job, m).is_some())
            .count()
    });
    report(
        "floor: one symmetric match per machine",
        (floor, low, high),
        floor,
        None,
    );
    let (_, _, _, fits) = measure(1, || negotiation::fitting(job, &candidates).len());
    println!(
        "  ({matched} of {} machines match the job, {fits} with room for it)",
        ads.len()
    );

    let (median, low, high, asks) = measure(o.runs, || negotiation::plan(job, 1, &candidates));
    report(
        "one job's ranked candidates (plan)",
        (median, low, high),
        floor,
        Some(Duration::from_millis(10)),
    );
    assert_eq!(asks.len(), usize::from(fits > 0));

    let (median, low, high, waits) = measure(o.runs, || {
        negotiation::plan_waits(job, &candidates, WAITS_PER_CLUSTER)
    });
    report(
        "busy machines to wait at (plan_waits)",
        (median, low, high),
        floor,
        None,
    );
    assert!(waits.len() <= WAITS_PER_CLUSTER);

    let (median, low, high, _) = measure(o.runs, || Significant::with_machines(ads.iter()));
    report(
        "significant attributes of the view",
        (median, low, high),
        floor,
        None,
    );

    let (median, low, high, (asked, waits)) = measure(o.runs, || round(ads, idle));
    let clusters = Significant::with_machines(ads.iter())
        .group(idle.iter().map(|(id, ad)| (*id, ad)))
        .len();
    report(
        &format!("round: {} jobs, {clusters} autoclusters", idle.len()),
        (median, low, high),
        floor * clusters as u32,
        Some(Duration::from_secs(1)),
    );
    println!(
        "  ({asked} jobs asked for, {waits} waits; the round's floor is one match per machine per \
         autocluster)"
    );
}

fn main() {
    let o = options();
    let starling = machines(STARLING_MACHINE, o.machines, true);
    pool(
        "starling",
        &starling,
        &jobs(STARLING_JOB, o.jobs, o.clusters),
        &o,
    );
    drop(starling);
    let htcondor = machines(HTCONDOR_MACHINES, o.machines, false);
    pool(
        "htcondor",
        &htcondor,
        &jobs(HTCONDOR_JOB, o.jobs, o.clusters),
        &o,
    );
}
