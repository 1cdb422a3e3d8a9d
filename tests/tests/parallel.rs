//! Parallel-universe jobs co-allocated across machines of two domains, by
//! real agents on loopback: the nodes start together, find each other
//! through the contact file, and end as the shutdown policy says; a job
//! that fits nowhere holds no slot and `why` says which component; a lost
//! node ends the run and releases the other claims; two submitters that
//! each need most of the pool both finish, one after the other.
//!
//! The nodes' program is a Python script: each listens on its host (from
//! the contact file) and connects to every other node, and writes what it
//! heard and when it started into a directory the test watches.

use std::path::Path;
use std::time::Duration;

mod support;

use support::*;

const WAIT: Duration = Duration::from_secs(120);

const NODE: &str = r#"#!/usr/bin/env python3
import os, socket, sys, threading, time
out, base, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
start = time.time()
node = int(os.environ["_CONDOR_PROCNO"])
count = int(os.environ["_CONDOR_NPROCS"])
hosts = {}
for line in open(os.environ["STARLING_PARALLEL_CONTACT_FILE"]):
    n, host, _machine = line.split()
    hosts[int(n)] = host
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((hosts[node], base + node))
srv.listen(count)
heard = set()
def serve():
    while len(heard) < count - 1:
        c, _ = srv.accept()
        heard.add(int(c.recv(16).decode()))
        c.close()
t = threading.Thread(target=serve, daemon=True)
t.start()
for other in sorted(hosts):
    if other == node:
        continue
    for _ in range(600):
        try:
            s = socket.create_connection((hosts[other], base + other), timeout=1)
            s.sendall(str(node).encode())
            s.close()
            break
        except OSError:
            time.sleep(0.05)
t.join(timeout=30)
tag = os.environ.get("TAG", "x")
open(os.path.join(out, "pid.%s.%d.%d" % (tag, node, os.getpid())), "w").close()
until = time.time() + hold
while time.time() < until and not os.path.exists(os.path.join(out, "stop." + tag)):
    time.sleep(0.1)
with open(os.path.join(out, "node.%s.%d" % (os.environ.get("TAG", "x"), node)), "w") as f:
    f.write("%f %f %s\n" % (start, time.time(), ",".join(str(h) for h in sorted(heard))))
"#;

/// A pool of `agents` agents of two CPUs in two domains (even agents in
/// d0.testnet, odd in d1.testnet), with `extra` options, whose jobs can
/// write into the directory the test watches; the nodes' program is
/// there.
fn setup(agents: usize, extra: &[&str]) -> (Pool, tempfile::TempDir) {
    let mut args = vec!["--domains", "2", "--cpus", "2"];
    args.extend(extra);
    if rustix::process::geteuid().is_root() {
        args.extend(["--jobs", "account=nobody", "--jobs", "private_tmp=false"]);
    }
    let pool = Pool::up_as(None, agents, &args);
    let work = shared_dir();
    script(work.path());
    (pool, work)
}

fn script(dir: &Path) {
    let path = dir.join("node.py");
    std::fs::write(&path, NODE).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Tests of this file using node ports, each its own range: they run at
/// once, on the same loopback addresses.
#[derive(Clone, Copy)]
enum Ports {
    FourNodes,
    FitsNowhere,
    LostNode,
    TwoSubmitters,
    KilledAtBarrier,
    SubmitterKilled,
}

/// The first of 16 ports for test `which`, below Linux's ephemeral ports
/// and apart from another run of this file (by its process id).
fn base(which: Ports) -> u32 {
    let run = std::process::id() % 170;
    10_000 + (run * 8 + which as u32) * 16
}

/// A parallel job of components `(machine_count, component_domain)`.
fn submit_file(
    dir: &Path,
    tag: &str,
    base: u32,
    hold: f64,
    parts: &[(u32, Option<&str>)],
    extra: &str,
) -> String {
    let mut text = format!(
        "universe = parallel\nexecutable = node.py\narguments = {} {base} {hold}\n\
         environment = TAG={tag}\nrequest_cpus = 1\nrequest_memory = 32\n\
         output = out.{tag}.$(Node)\nerror = err.{tag}.$(Node)\n{extra}",
        dir.display()
    );
    for (count, domain) in parts {
        text.push_str(&format!("machine_count = {count}\n"));
        // Commands hold until changed: an unordered component after an
        // ordered one says so.
        text.push_str(&format!("component_domain = {}\n", domain.unwrap_or("")));
        text.push_str("queue\n");
    }
    text
}

/// What node `n` of `tag` wrote: start, end, the nodes it heard.
fn node_file(dir: &Path, tag: &str, n: u32) -> Option<(f64, f64, Vec<u32>)> {
    let text = std::fs::read_to_string(dir.join(format!("node.{tag}.{n}"))).ok()?;
    let mut parts = text.split_whitespace();
    let start = parts.next()?.parse().ok()?;
    let end = parts.next()?.parse().ok()?;
    let heard = parts
        .next()
        .unwrap_or("")
        .split(',')
        .filter_map(|h| h.parse().ok())
        .collect();
    Some((start, end, heard))
}

#[test]
fn a_four_node_job_across_two_domains_starts_together_and_its_nodes_reach_each_other() {
    let (pool, work) = setup(2, &[]);
    let dir = work.path();
    let base = base(Ports::FourNodes);
    std::fs::write(
        dir.join("par.sub"),
        submit_file(
            dir,
            "a",
            base,
            0.5,
            &[(2, Some("d1.testnet")), (2, None)],
            "+ParallelShutdownPolicy = \"WAIT_FOR_ALL\"\n",
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "par.sub"]);
    pool.wait_queue_empty(0, WAIT);
    let nodes: Vec<(f64, f64, Vec<u32>)> = (0..4)
        .map(|n| node_file(dir, "a", n).unwrap_or_else(|| panic!("node {n} left no file")))
        .collect();
    for (n, (_, _, heard)) in nodes.iter().enumerate() {
        let others: Vec<u32> = (0..4).filter(|o| *o != n as u32).collect();
        assert_eq!(heard, &others, "node {n} heard every other node");
    }
    let starts: Vec<f64> = nodes.iter().map(|n| n.0).collect();
    let spread = starts.iter().cloned().fold(f64::MIN, f64::max)
        - starts.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread < 3.0, "the nodes started {spread:.2} s apart");
    // Both procs completed with node 0's exit, on both domains' machines.
    let history = pool.af(0, true, &["ProcId", "ExitCode", "StarlingParallelNodes"]);
    assert_eq!(history.len(), 2, "{history:?}");
    assert!(history.iter().all(|row| row[1] == "0"), "{history:?}");
    let machines = history
        .iter()
        .flat_map(|row| row[2..].iter())
        .filter(|w| w.contains('@'))
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        machines.contains("agent-00") && machines.contains("agent-01"),
        "{machines}"
    );
    // Each node's output came back under its own name.
    for n in 0..4 {
        assert!(dir.join(format!("out.a.{n}")).exists(), "out.a.{n}");
    }
}

#[test]
fn a_job_that_fits_nowhere_holds_no_slot_and_why_names_the_component() {
    let (pool, work) = setup(2, &[]);
    let dir = work.path();
    // Three nodes in one domain: each domain has two CPUs.
    std::fs::write(
        dir.join("big.sub"),
        submit_file(dir, "big", base(Ports::FitsNowhere), 0.0, &[(3, None)], ""),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "big.sub"]);
    let why = wait_for(WAIT, "why explains the waiting parallel job", || {
        let why = pool.ok(0, dir, &["why", "1.0"]);
        why.contains("do not fit").then_some(why)
    });
    assert!(
        why.contains("component 0: 3 processors in one domain"),
        "{why}"
    );
    // Nothing is held for it: every machine takes a job of both its CPUs.
    std::fs::write(
        dir.join("wide.sub"),
        "executable = /bin/true\nrequest_cpus = 2\nrequest_memory = 32\nqueue 2\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "wide.sub"]);
    wait_for(WAIT, "both wide jobs ran", || {
        (pool.af(0, true, &["ClusterId"]).len() == 2).then_some(())
    });
    let status = pool.af(0, false, &["ClusterId", "JobStatus"]);
    assert_eq!(
        status,
        vec![vec!["1".to_owned(), "1".to_owned()]],
        "only the parallel job waits"
    );
    pool.ok(0, dir, &["rm", "1"]);
}

#[test]
fn a_lost_node_ends_the_run_and_the_other_claims_are_released() {
    let (pool, work) = setup(3, &[]);
    let dir = work.path();
    // Two nodes in d1 (agent-01 only has two CPUs there) and one in d0:
    // long enough to be killed while it runs.
    std::fs::write(
        dir.join("par.sub"),
        submit_file(
            dir,
            "k",
            base(Ports::LostNode),
            600.0,
            &[(2, Some("d1.testnet")), (1, Some("d0.testnet"))],
            "",
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "par.sub"]);
    wait_for(WAIT, "the parallel job runs", || {
        let rows = pool.af(0, false, &["JobStatus"]);
        (rows.len() == 2 && rows.iter().all(|r| r[0] == "2")).then_some(())
    });
    pool.crash(1);
    // Back to idle within the lease (20 s) and a little.
    wait_for(Duration::from_secs(60), "the job went back to idle", || {
        let rows = pool.af(0, false, &["JobStatus"]);
        rows.iter().all(|r| r[0] == "1").then_some(())
    });
    // Its d0 node's claim is gone: agent-00 and agent-02 take a job of
    // both their CPUs each.
    std::fs::write(
        dir.join("wide.sub"),
        "executable = /bin/true\nrequest_cpus = 2\nrequest_memory = 32\n\
         requirements = TARGET.StarlingDomain == \"d0.testnet\"\nqueue 2\n",
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "wide.sub"]);
    wait_for(WAIT, "both d0 machines ran a two-CPU job", || {
        (pool.af(0, true, &["ClusterId"]).len() == 2).then_some(())
    });
    pool.ok(0, dir, &["rm", "1"]);
}

#[test]
fn two_submitters_needing_most_of_the_pool_both_finish_one_after_the_other() {
    let (pool, work) = setup(2, &[]);
    let dir = work.path();
    let base = base(Ports::TwoSubmitters);
    for (i, tag) in [(0usize, "p"), (1usize, "q")] {
        let file = format!("{tag}.sub");
        std::fs::write(
            dir.join(&file),
            submit_file(
                dir,
                tag,
                base + 10 * i as u32,
                1.0,
                &[(2, None), (1, None)],
                "+ParallelShutdownPolicy = \"WAIT_FOR_ALL\"\n",
            ),
        )
        .unwrap();
    }
    pool.ok(0, dir, &["submit", "p.sub"]);
    pool.ok(1, dir, &["submit", "q.sub"]);
    pool.wait_queue_empty(0, WAIT);
    pool.wait_queue_empty(1, WAIT);
    let span = |tag: &str| {
        let nodes: Vec<_> = (0..3)
            .map(|n| node_file(dir, tag, n).unwrap_or_else(|| panic!("{tag} node {n}")))
            .collect();
        let start = nodes.iter().map(|n| n.0).fold(f64::MAX, f64::min);
        let end = nodes.iter().map(|n| n.1).fold(f64::MIN, f64::max);
        (start, end)
    };
    let (p, q) = (span("p"), span("q"));
    // Three nodes each on four CPUs: never both at once.
    assert!(p.1 <= q.0 || q.1 <= p.0, "the jobs overlapped: {p:?} {q:?}");
}

#[test]
fn a_machine_killed_between_prepare_and_start_releases_the_other_claims_and_nothing_starts() {
    // Host links of 8 Mbit/s: the d0 node's 6 MB input takes seconds to
    // stage, while the d1 node, with none, is prepared at once.
    let links = [
        "--links",
        "host_mbps=8",
        "--links",
        "min_reserved_kib=1073741824",
    ];
    let (pool, work) = setup(3, &links);
    let dir = work.path();
    let input: Vec<u8> = (0..6_000_000u32)
        .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(dir.join("big.dat"), input).unwrap();
    let mut text = submit_file(
        dir,
        "p",
        base(Ports::KilledAtBarrier),
        0.0,
        &[(1, Some("d1.testnet"))],
        "",
    );
    text.push_str(
        "machine_count = 1\ncomponent_domain = d0.testnet\ntransfer_input_files = big.dat\nqueue\n",
    );
    std::fs::write(dir.join("par.sub"), text).unwrap();
    pool.ok(0, dir, &["submit", "par.sub"]);
    // The d1 node waits at its barrier.
    wait_for(WAIT, "the d1 node is prepared", || {
        let log = std::fs::read_to_string(pool.agent(1).join("agent.log")).unwrap_or_default();
        log.contains("waiting for its co-allocation to start")
            .then_some(())
    });
    let d0_states = || -> Vec<String> {
        [0, 2]
            .iter()
            .map(|&i| {
                pool.machine_af(i, &["State"])
                    .first()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    };
    // The d0 node holds its machine while its input comes.
    wait_for(WAIT, "a d0 machine is claimed for the d0 node", || {
        d0_states().iter().any(|s| s == "Claimed").then_some(())
    });
    pool.crash(1);
    let killed = std::time::Instant::now();
    // The d0 node's claim is released well within a lease (20 s).
    let d0_free = || d0_states().iter().all(|s| s == "Unclaimed");
    wait_for(
        Duration::from_secs(60),
        "the d0 machines are unclaimed again",
        || d0_free().then_some(()),
    );
    let released = killed.elapsed();
    assert!(
        released < Duration::from_secs(15),
        "released after {released:?}"
    );
    // Nothing of the job started, and it waits with the reason.
    let rows = pool.af(0, false, &["JobStatus", "NumJobStarts"]);
    assert!(rows.iter().all(|r| r[0] == "1"), "{rows:?}");
    assert!(!dir.join("node.p.0").exists() && !dir.join("node.p.1").exists());
    let why = pool.ok(0, dir, &["why", "1.0"]);
    assert!(why.contains("node 0"), "{why}");
    pool.ok(0, dir, &["rm", "1"]);
}

/// The pids of node processes of `tag` that wrote their pid file.
fn node_pids(dir: &Path, tag: &str) -> Vec<i32> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix(&format!("pid.{tag}."))?
                .rsplit('.')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

fn alive(pid: i32) -> bool {
    rustix::process::Pid::from_raw(pid).is_some_and(support::running)
}

#[test]
fn a_submit_agent_killed_while_its_parallel_job_runs_ends_the_old_nodes_before_the_job_runs_again()
{
    let (pool, work) = setup(3, &[]);
    let dir = work.path();
    // A lease far longer than the test waits: the old nodes must end
    // because the restarted agent releases them, not because it lapsed.
    std::fs::write(
        dir.join("par.sub"),
        submit_file(
            dir,
            "r",
            base(Ports::SubmitterKilled),
            600.0,
            &[(2, Some("d1.testnet"))],
            "+JobLeaseDuration = 120\n",
        ),
    )
    .unwrap();
    pool.ok(0, dir, &["submit", "par.sub"]);
    let first = wait_for(WAIT, "both nodes run", || {
        let pids = node_pids(dir, "r");
        (pids.len() == 2).then_some(pids)
    });
    pool.crash(0);
    let crashed = std::time::Instant::now();
    pool.restart(0);
    wait_for(Duration::from_secs(60), "the old nodes ended", || {
        first.iter().all(|p| !alive(*p)).then_some(())
    });
    let ended = crashed.elapsed();
    eprintln!("the old nodes ended {ended:?} after the crash");
    assert!(
        ended < Duration::from_secs(60),
        "the old nodes ran {ended:?} after the crash"
    );
    // The job runs again, on fresh nodes, and ends when told to.
    wait_for(WAIT, "the job runs again", || {
        (node_pids(dir, "r").len() == 4).then_some(())
    });
    std::fs::write(dir.join("stop.r"), "").unwrap();
    pool.wait_queue_empty(0, WAIT);
    let history = pool.af(0, true, &["NumJobStarts", "ExitCode"]);
    assert_eq!(
        history,
        vec![vec!["2".to_owned(), "0".to_owned()]],
        "{history:?}"
    );
}
