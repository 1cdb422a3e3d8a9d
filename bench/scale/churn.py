#!/usr/bin/env python3
"""Churn: how fast a pool of real agents forgets agents that crash, and
sees them again when they come back (issue 46).

One testnet of --agents agents in --domains domains (real processes on
loopback, `starling testnet up`). Each round takes --fraction of the agents
(spread over the domains) out at once and back:

- baseline, a clean stop (SIGTERM): each publishes a withdrawal of its ad
  as it goes, the fastest way a pool can learn of a leave;
- a crash (SIGKILL, as `kill -9`): nothing is said; the agents that lose
  their connections suspect it and say so (SWIM's suspicion), else the ad
  stays until its lifetime ends (180 s by default).

For each, the time from the signal until 99% of the agents still running
see exactly the others (`starling testnet status`, polled), and then, after
`testnet start` of the same agents (one after another, from the first), the
time until 99% of all
agents see every machine again. Prints the median and range over --runs
rounds, and the crash's ratio to the clean stop; writes churn.csv in
--out.

Usage: bench/scale/churn.py [--agents 100] [--domains 10] [--fraction 0.1]
       [--runs 3] [--settle 30] [--starling PATH]
"""
import argparse, csv, os, re, signal, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from measure import starling_binary, up, down  # noqa: E402

# The longest wait for one change to reach the pool: an ad's lifetime and
# then some, so that a pool that only forgets by expiry is still measured.
WAIT = 240
POLL = 0.1
# How long a change may take before the agents that lag are named.
LATE = 15


def status(starling, directory):
    """{agent: (running, seen, expected)} from `testnet status`."""
    run = subprocess.run([starling, "testnet", "status", "--dir", directory],
                         capture_output=True, text=True)
    rows = {}
    for line in run.stdout.splitlines():
        m = re.match(r"(agent-\d+)\s+\S+\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\d+)/(\d+)", line)
        if m:
            rows[m.group(1)] = (m.group(2) == "running", int(m.group(3)), int(m.group(4)))
    return rows


def wait_until(starling, directory, agents, want, started, leavers=()):
    """Seconds from `started` until 99% of `agents` see exactly `want`
    machine ads, or None after WAIT. When it takes longer than LATE, says
    once which agents lag and which of `leavers` they still see."""
    need = max(1, -(-len(agents) * 99 // 100))
    told = False
    while time.monotonic() - started < WAIT:
        rows = status(starling, directory)
        good = [a for a in agents if a in rows and rows[a][0] and rows[a][1] == want]
        if len(good) >= need:
            return time.monotonic() - started
        if not told and time.monotonic() - started > LATE:
            told = True
            for a in sorted(set(agents) - set(good)):
                seen = stale(starling, directory, a, leavers)
                print(f"    after {LATE} s {a} sees {rows.get(a, (0, '?'))[1]} of {want}"
                      + (f", still {', '.join(seen)}" if seen else ""), flush=True)
        time.sleep(POLL)
    return None


def stale(starling, directory, agent, leavers):
    """Which of `leavers` the agent's view still holds."""
    if not leavers:
        return []
    run = subprocess.run([starling, "status", "--agent", os.path.join(directory, agent)],
                         capture_output=True, text=True)
    return [name for name in leavers if f"@{name}." in run.stdout]


def pid_of(directory, name):
    try:
        with open(os.path.join(directory, name, "agent.pid")) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def signal_all(directory, names, sig):
    """Signals the agents at once (`testnet kill` takes the testnet's lock,
    one agent at a time); their pids."""
    pids = [pid_of(directory, name) for name in names]
    for pid in pids:
        if pid:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    return pids


def gone(pids, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(pid and os.path.exists(f"/proc/{pid}") for pid in pids):
            return
        time.sleep(POLL)


def start_all(starling, directory, names):
    """`testnet start` of each agent in turn (it holds the testnet's lock)."""
    for name in names:
        run = subprocess.run([starling, "testnet", "start", "--dir", directory, name],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"  start of {name} failed: {run.stderr.strip()[-300:]}", file=sys.stderr)


def one_round(starling, directory, everyone, leaving, sig):
    """(seconds until the leavers are dropped, seconds until they are seen
    again), either None when it did not happen within WAIT."""
    staying = [a for a in everyone if a not in leaving]
    started = time.monotonic()
    pids = signal_all(directory, leaving, sig)
    dropped = wait_until(starling, directory, staying, len(staying), started, leaving)
    gone(pids)
    started = time.monotonic()
    start_all(starling, directory, leaving)
    back = wait_until(starling, directory, everyone, len(everyone), started)
    return dropped, back


def summary(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "none within %d s" % WAIT
    return f"median {statistics.median(xs):.2f} s (range {min(xs):.2f}-{max(xs):.2f}, {len(xs)} rounds)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--domains", type=int, default=10)
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--settle", type=int, default=30)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--dir", default="/tmp/starling-churn")
    ap.add_argument("--starling")
    args = ap.parse_args()
    starling = starling_binary(args.starling)
    os.makedirs(args.out, exist_ok=True)
    directory = os.path.join(args.dir, f"n{args.agents}")
    formed = up(starling, directory, args.agents, args.domains, args.timeout)
    if formed is None:
        sys.exit(1)
    print(f"{args.agents} agents in {args.domains} domains formed in {formed:.1f} s", flush=True)
    everyone = [f"agent-{i:02d}" for i in range(args.agents)]
    count = max(1, round(args.agents * args.fraction))
    rows = []
    try:
        time.sleep(args.settle)
        results = {"term": ([], []), "kill": ([], [])}
        signals = {"term": signal.SIGTERM, "kill": signal.SIGKILL}
        for run in range(args.runs):
            # A different tenth each round, spread over the domains (agents
            # are dealt to domains round-robin), never agent-00 (the
            # others' first bootstrap peer).
            step = max(1, (args.agents - 1) // count)
            leaving = [everyone[1 + (run + k * step) % (args.agents - 1)] for k in range(count)]
            for how in ("term", "kill"):
                dropped, back = one_round(starling, directory, everyone, leaving, signals[how])
                results[how][0].append(dropped)
                results[how][1].append(back)
                rows.append((args.agents, args.domains, count, run, how,
                             "" if dropped is None else f"{dropped:.3f}",
                             "" if back is None else f"{back:.3f}"))
                print(f"  round {run}, {count} agents, {how}: dropped by 99% in "
                      f"{dropped if dropped is None else round(dropped, 2)} s, "
                      f"seen again in {back if back is None else round(back, 2)} s", flush=True)
                time.sleep(5)
        print(f"{count} of {args.agents} agents ({args.domains} domains) leaving at once; "
              f"time until 99% of the others' views drop them:")
        print(f"  baseline, a clean stop (SIGTERM): {summary(results['term'][0])}")
        print(f"  a crash (SIGKILL):                {summary(results['kill'][0])}")
        term = [x for x in results["term"][0] if x is not None]
        kill = [x for x in results["kill"][0] if x is not None]
        if term and kill:
            print(f"  crash / clean stop: {statistics.median(kill) / statistics.median(term):.1f}x; "
                  f"goal for the crash <= 10 s")
        print(f"and after `testnet start` of the same agents, until 99% of all see every machine:")
        print(f"  after the clean stop: {summary(results['term'][1])}")
        print(f"  after the crash:      {summary(results['kill'][1])}")
    finally:
        down(starling, directory)
        with open(os.path.join(args.out, "churn.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["agents", "domains", "leaving", "round", "signal",
                        "dropped_s", "seen_again_s"])
            w.writerows(rows)


if __name__ == "__main__":
    main()
