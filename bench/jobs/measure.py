#!/usr/bin/env python3
"""Jobs on a loopback testnet: submit-to-running latency and the throughput
of short jobs.

    bench/jobs/measure.py [--starling target/release/starling] [--agents 10]
                          [--latency-jobs 50] [--throughput-jobs 2000]
                          [--jobs KEY=VALUE ...]

`--jobs` is passed to `starling testnet up` (`[jobs]` settings of every
agent): run once as is and once with e.g. `--jobs cgroups=off --jobs
private_tmp=false` to see what each protection costs.

Latency: one-job clusters are submitted one at a time to an idle pool; each
job writes the time its process started; latency = that time minus the time
`starling submit` was called (so it includes the submit itself, the
negotiation, the claim, the input transfer and the process start).
Throughput: N `/bin/true` jobs (no executable transfer) are submitted at
once from one agent and from two; jobs/s = N / (time until the queues are
empty). The baseline named in the report is HTCondor's default negotiation
cycle (NEGOTIATOR_INTERVAL = 60 s), which bounds its submit-to-running
latency from below on an idle pool.
"""
import argparse, os, statistics, subprocess, sys, tempfile, time

def run(starling, *args, cwd=None):
    out = subprocess.run([starling, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"starling {' '.join(args)} failed: {out.stderr}")
    return out.stdout

def wait_empty(starling, agent, timeout=900):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not run(starling, "q", "-af", "ProcId", "--agent", agent).strip():
            return
        time.sleep(0.05)
    sys.exit(f"{agent}: queue not empty after {timeout}s")

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--starling", default="target/release/starling")
    p.add_argument("--agents", type=int, default=10)
    p.add_argument("--latency-jobs", type=int, default=50)
    p.add_argument("--throughput-jobs", type=int, default=2000)
    p.add_argument("--jobs", action="append", default=[], metavar="KEY=VALUE")
    a = p.parse_args()
    starling = os.path.abspath(a.starling)
    tmp = tempfile.mkdtemp(prefix="starling-jobs-")
    net = os.path.join(tmp, "net")
    extra = [arg for kv in a.jobs for arg in ("--jobs", kv)]
    run(starling, "testnet", "up", "--dir", net, "--agents", str(a.agents), "--timeout", "300", *extra)
    try:
        agent0 = os.path.join(net, "agent-00")
        agent1 = os.path.join(net, "agent-01")
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        with open(os.path.join(work, "stamp.sub"), "w") as f:
            f.write("executable = /bin/sh\ntransfer_executable = false\n"
                    "arguments = \"-c 'date +%s%N'\"\noutput = stamp.$(Cluster)\nqueue\n")
        lat = []
        for i in range(a.latency_jobs):
            t0 = time.time_ns()
            out = run(starling, "submit", "stamp.sub", "--agent", agent0, cwd=work)
            cluster = out.strip().split()[-1].rstrip(".")
            path = os.path.join(work, f"stamp.{cluster}")
            deadline = time.time() + 60
            while not (os.path.exists(path) and os.path.getsize(path) > 0):
                if time.time() > deadline:
                    sys.exit(f"job {cluster} did not run")
                time.sleep(0.01)
            started = int(open(path).read().strip())
            lat.append((started - t0) / 1e6)
            time.sleep(0.2)
        lat.sort()
        p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
        print(f"submit-to-running latency over {len(lat)} jobs: median {statistics.median(lat):.1f} ms, "
              f"p99 {p99:.1f} ms, min {lat[0]:.1f} ms, max {lat[-1]:.1f} ms")
        print(f"  baseline HTCondor NEGOTIATOR_INTERVAL 60000 ms: median is "
              f"{60000 / statistics.median(lat):.0f}x shorter")

        with open(os.path.join(work, "true.sub"), "w") as f:
            f.write("executable = /bin/true\ntransfer_executable = false\n"
                    f"queue {a.throughput_jobs}\n")
        for submitters in ([agent0], [agent0, agent1]):
            n = a.throughput_jobs * len(submitters)
            t0 = time.time()
            for s in submitters:
                run(starling, "submit", "true.sub", "--agent", s, cwd=work)
            for s in submitters:
                wait_empty(starling, s)
            dt = time.time() - t0
            print(f"throughput, {n} /bin/true jobs from {len(submitters)} submitter(s) over "
                  f"{a.agents} agents: {n / dt:.1f} jobs/s ({dt:.1f} s); target 100 jobs/s: "
                  f"{n / dt / 100:.2f}x")
    finally:
        run(starling, "testnet", "down", "--dir", net)

if __name__ == "__main__":
    main()
