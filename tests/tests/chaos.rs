//! Chaos on a real pool: while 120 short jobs from two submit agents run,
//! agents are killed with SIGKILL (execute agents and submit agents alike,
//! as a crash would kill them) and started again on their data
//! directories a few seconds later, on a schedule drawn from a seeded RNG.
//! A ledger outside the agents counts runs: each job appends `start ID
//! HOST PID` to it when it starts and, as its very last action, `end ID`.
//!
//! What a user is promised (issue 27, HTCondor's job lease and reconnect):
//! every job completes exactly once in its submitter's history (none
//! held, none left in the queue), exactly one run of it ends (none lost,
//! none completed twice) and its output is right. A killed run may start
//! again only if it never ended.
//!
//! The schedule is reproducible: the seed is printed, and
//! `STARLING_CHAOS_SEED=N` replays it. `STARLING_CHAOS_KEEP=DIR` keeps the
//! agents' whole logs and the ledger there when the test fails.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod support;

use support::*;

/// Agents in the pool: 0 and 1 submit (and execute), all execute.
const AGENTS: usize = 5;

/// The submit agents and the names of their jobs (`a.17`, `b.3`).
const SUBMITTERS: [(usize, &str); 2] = [(0, "a"), (1, "b")];

/// Jobs each submit agent queues.
const JOBS_PER_SUBMITTER: usize = 60;

/// Seed of the kill schedule unless `STARLING_CHAOS_SEED` says otherwise.
const DEFAULT_SEED: u64 = 27;

/// Time from one kill to the next, in ms (drawn uniformly in this range).
const GAP_MS: (u64, u64) = (2_000, 4_000);

/// Agents down at once, at most.
const MAX_DOWN: usize = 2;

/// How long a killed agent stays down, in ms (drawn uniformly).
const DOWN_MS: (u64, u64) = (3_000, 6_000);

/// Kills stop after this long even if jobs are left.
const CHAOS_FOR: Duration = Duration::from_secs(75);

/// After the chaos: how long the queues have to empty.
const SETTLE: Duration = Duration::from_secs(150);

// A killed agent is back well within the claim lease, so that a run
// survives its execute or submit agent's restart when the agents can
// reconnect to it; a lapsed lease would end it legitimately.
const _: () = assert!(
    (DOWN_MS.1 as u128) * 2 < starling_agent::negotiator::LEASE.as_millis(),
    "agents stay down for less than half the claim lease"
);

/// The job: its id is `$1.$2` (submitter, process); it sleeps 0.5 to 2 s
/// (by its process number) and prints what its input and arguments make.
const JOB: &str = r#"#!/bin/sh
# $1: submitter, $2: process number, $3: the ledger.
id="$1.$2"
host=$(grep '^Name = ' "$_CONDOR_MACHINE_AD" | sed 's/^Name = "\(.*\)"$/\1/')
echo "start $id $host $$" >> "$3"
ms=$(( 500 + ($2 * 7 % 16) * 100 ))
sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
echo "$id $(cat in.txt) $(( $2 * $2 + 7 ))"
echo "end $id" >> "$3"
"#;

/// What job `id` (`a.17`) of `submitter` must print.
fn expected_output(submitter: &str, proc: usize) -> String {
    format!(
        "{submitter}.{proc} payload-{submitter} {}\n",
        proc * proc + 7
    )
}

/// splitmix64: a small, well-mixed, seeded sequence for the schedule.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn ms_in(&mut self, (lo, hi): (u64, u64)) -> Duration {
        Duration::from_millis(lo + self.below(hi - lo + 1))
    }
}

fn write_workload(dir: &Path, submitter: &str, ledger: &Path) {
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let exe = dir.join("job.sh");
    std::fs::write(&exe, JOB).unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("in.txt"), format!("payload-{submitter}")).unwrap();
    std::fs::write(
        dir.join("job.sub"),
        format!(
            "executable = job.sh\narguments = \"{submitter} $(Process) {}\"\n\
             transfer_input_files = in.txt\noutput = out/$(Process).txt\n\
             error = out/$(Process).err\nlog = job.log\nrequest_memory = 32\n\
             queue {JOBS_PER_SUBMITTER}\n",
            ledger.display()
        ),
    )
    .unwrap();
}

/// What the ledger says of one job.
#[derive(Debug, Default)]
struct Runs {
    starts: usize,
    ends: usize,
    lines: Vec<String>,
}

/// The ledger, by job id, and the lines no job wrote whole.
fn read_ledger(path: &Path) -> (BTreeMap<String, Runs>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut jobs: BTreeMap<String, Runs> = BTreeMap::new();
    let mut junk = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["start", id, _host, _pid] => {
                let runs = jobs.entry((*id).to_owned()).or_default();
                runs.starts += 1;
                runs.lines.push(line.to_owned());
            }
            ["end", id] => {
                let runs = jobs.entry((*id).to_owned()).or_default();
                runs.ends += 1;
                runs.lines.push(line.to_owned());
            }
            _ => junk.push(line.to_owned()),
        }
    }
    (jobs, junk)
}

/// Whether a process runs with `needle` in its command line.
fn running_with(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let alive = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'));
        alive
            && std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
    })
}

/// `starling q -af ATTRS` (or `history`) of agent `i`, one row per job;
/// `None` if the agent does not answer.
fn queue_of(pool: &Pool, i: usize, history: bool, attrs: &[&str]) -> Option<Vec<Vec<String>>> {
    let mut args = vec![if history { "history" } else { "q" }, "-af"];
    args.extend(attrs);
    let out = pool.run(i, &std::env::temp_dir(), &args);
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split_whitespace().map(str::to_owned).collect())
            .collect()
    })
}

#[test]
fn killing_agents_while_jobs_run_loses_no_job_and_completes_none_twice() {
    let seed = std::env::var("STARLING_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    eprintln!("chaos seed {seed} (STARLING_CHAOS_SEED={seed} replays the schedule)");
    let mut rng = Rng(seed);
    let began = Instant::now();

    let pool = Pool::up_sharing(AGENTS);
    let shared = shared_dir();
    let ledger = shared.path().join("ledger");
    std::fs::write(&ledger, "").unwrap();
    std::fs::set_permissions(&ledger, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let work = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = SUBMITTERS
        .iter()
        .map(|(_, name)| work.path().join(name))
        .collect();
    for ((i, name), dir) in SUBMITTERS.iter().zip(&dirs) {
        write_workload(dir, name, &ledger);
        let said = pool.ok(*i, dir, &["submit", "job.sub"]);
        assert!(
            said.contains(&format!("{JOBS_PER_SUBMITTER} job(s) submitted")),
            "{said}"
        );
    }
    let total = SUBMITTERS.len() * JOBS_PER_SUBMITTER;

    // The chaos: every few seconds a random agent that runs is killed; each
    // is started again a few seconds after its kill; at most
    // `MAX_DOWN` are down at once. Until every job has ended once or time
    // is up; then every agent still down is started.
    let mut kills: Vec<(f64, usize, Duration)> = Vec::new();
    let mut down: Vec<(Instant, usize)> = Vec::new();
    let chaos_until = Instant::now() + CHAOS_FOR;
    let mut next_kill = Instant::now() + rng.ms_in(GAP_MS);
    loop {
        let now = Instant::now();
        down.sort();
        while down.first().is_some_and(|(at, _)| *at <= now) {
            let (_, agent) = down.remove(0);
            pool.restart(agent);
        }
        let (jobs, _) = read_ledger(&ledger);
        let all_ended = jobs.values().filter(|r| r.ends > 0).count() >= total;
        if all_ended || now >= chaos_until {
            for (_, agent) in down.drain(..) {
                pool.restart(agent);
            }
            break;
        }
        if now >= next_kill && down.len() < MAX_DOWN {
            let up: Vec<usize> = (0..AGENTS)
                .filter(|a| down.iter().all(|(_, d)| d != a))
                .collect();
            let victim = up[rng.below(up.len() as u64) as usize];
            let stay_down = rng.ms_in(DOWN_MS);
            kills.push((began.elapsed().as_secs_f64(), victim, stay_down));
            pool.crash(victim);
            down.push((Instant::now() + stay_down, victim));
            next_kill = Instant::now() + rng.ms_in(GAP_MS);
        }
        std::thread::sleep(POLL);
    }
    let schedule: Vec<String> = kills
        .iter()
        .map(|(at, v, down)| format!("{at:.1}s agent-{v:02} down {:.1}s", down.as_secs_f64()))
        .collect();
    eprintln!("{} kills: {}", kills.len(), schedule.join(", "));
    assert!(
        kills.len() >= 5,
        "the jobs ended before the chaos had begun: {} kills",
        kills.len()
    );

    // Every agent runs again: the queues empty (but for held jobs, which
    // wait for their user), and no run is left.
    let settle_until = Instant::now() + SETTLE;
    let mut stuck = String::new();
    let mut held = Vec::new();
    for (i, name) in SUBMITTERS {
        loop {
            let left = queue_of(&pool, i, false, &["ProcId", "JobStatus", "HoldReason"]);
            if left.as_ref().is_some_and(|rows| {
                rows.iter()
                    .all(|r| r.get(1).map(String::as_str) == Some("5"))
            }) {
                held.extend(
                    left.unwrap_or_default()
                        .iter()
                        .map(|r| format!("{name}.{}: {}", r[0], r[2..].join(" "))),
                );
                break;
            }
            if Instant::now() >= settle_until {
                let _ = writeln!(
                    stuck,
                    "agent-{i:02} still has jobs {SETTLE:?} after the chaos: {left:?}"
                );
                break;
            }
            std::thread::sleep(POLL);
        }
    }
    let needle = ledger.to_str().unwrap().to_owned();
    let quiet_until = Instant::now() + Duration::from_secs(30);
    while running_with(&needle) && Instant::now() < quiet_until {
        std::thread::sleep(POLL);
    }
    if running_with(&needle) {
        let _ = writeln!(
            stuck,
            "runs of jobs still run 30 s after the queues emptied"
        );
    }

    // The count.
    let (runs, junk) = read_ledger(&ledger);
    let mut lost = Vec::new();
    let mut twice = Vec::new();
    let mut wrong = Vec::new();
    let mut restarted = Vec::new();
    let mut not_once_in_history = Vec::new();
    for ((i, name), dir) in SUBMITTERS.iter().zip(&dirs) {
        let history = queue_of(&pool, *i, true, &["ProcId", "JobStatus"]).unwrap_or_default();
        let mut completed: BTreeMap<usize, usize> = BTreeMap::new();
        for row in &history {
            if row.get(1).map(String::as_str) == Some("4") {
                if let Some(proc) = row.first().and_then(|p| p.parse().ok()) {
                    *completed.entry(proc).or_default() += 1;
                }
            }
        }
        for proc in 0..JOBS_PER_SUBMITTER {
            let id = format!("{name}.{proc}");
            let job = runs.get(&id);
            let (starts, ends) = job.map_or((0, 0), |r| (r.starts, r.ends));
            if completed.get(&proc) != Some(&1) {
                not_once_in_history.push(format!(
                    "{id}: completed {} times in agent-{i:02}'s history",
                    completed.get(&proc).unwrap_or(&0)
                ));
            }
            // Held (its output never came back, say) is lost to its user
            // until they act.
            if ends == 0 || !completed.contains_key(&proc) {
                lost.push(id.clone());
            }
            if ends > 1 {
                twice.push(id.clone());
            }
            if starts > 1 {
                restarted.push(id.clone());
            }
            let out = std::fs::read_to_string(dir.join(format!("out/{proc}.txt")));
            if out.as_deref().ok() != Some(expected_output(name, proc).as_str()) {
                wrong.push(format!("{id}: {out:?}"));
            }
        }
    }
    let started: usize = runs.values().map(|r| r.starts).sum();
    let ended: usize = runs.values().map(|r| r.ends).sum();
    let report = format!(
        "chaos (seed {seed}): {total} jobs, {} kills, {started} runs started, {ended} runs \
         completed, {} completed twice or more, {} lost, {} wrong outputs, {} started more \
         than once, {} not completed exactly once in history, {} held, {:.0} s",
        kills.len(),
        twice.len(),
        lost.len(),
        wrong.len(),
        restarted.len(),
        not_once_in_history.len(),
        held.len(),
        began.elapsed().as_secs_f64()
    );
    eprintln!("{report}");
    let failed = !stuck.is_empty()
        || !junk.is_empty()
        || !lost.is_empty()
        || !twice.is_empty()
        || !wrong.is_empty()
        || !not_once_in_history.is_empty();
    if failed {
        let mut text = format!("{report}\n{stuck}");
        let _ = writeln!(text, "kills: {}", schedule.join(", "));
        for (what, ids) in [("completed twice", &twice), ("lost", &lost)] {
            let _ = writeln!(text, "--- {what}: {}", ids.len());
            for id in ids.iter().take(20) {
                let lines = runs
                    .get(id)
                    .map(|r| r.lines.join(" | "))
                    .unwrap_or_default();
                let _ = writeln!(text, "  {id}: {lines}");
            }
        }
        for (what, rows) in [
            ("wrong outputs", &wrong),
            ("not once in history", &not_once_in_history),
            ("held", &held),
            ("ledger lines no job wrote whole", &junk),
        ] {
            let _ = writeln!(text, "--- {what}: {}", rows.len());
            for row in rows.iter().take(20) {
                let _ = writeln!(text, "  {row}");
            }
        }
        for i in 0..AGENTS {
            let _ = writeln!(text, "--- agent-{i:02} log\n{}", pool.log_tail(i));
        }
        if let Ok(keep) = std::env::var("STARLING_CHAOS_KEEP") {
            let _ = std::fs::create_dir_all(&keep);
            for i in 0..AGENTS {
                let to = format!("{keep}/agent-{i:02}.log");
                let _ = std::fs::copy(pool.agent(i).join("agent.log"), to);
            }
            let _ = std::fs::copy(&ledger, format!("{keep}/ledger"));
        }
        panic!("{text}");
    }
}
