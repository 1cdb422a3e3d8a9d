#!/usr/bin/env python3
"""The long chaos run: many short jobs from two submit agents while agents
are killed with SIGKILL and started again; a ledger outside the agents
counts the runs.

    bench/chaos/chaos.py [--starling target/release/starling] [--jobs 300]
                         [--agents 6] [--kill-every 6] [--restart-after 5-8]
                         [--kill execute|all] [--max-down 2] [--seed 27]
                         [--timeout 900]

A testnet of `--agents` agents starts (`starling testnet up`); agents 0 and 1
each queue half of `--jobs` jobs. Each job is a shell script that appends
`start ID HOST PID` to a ledger file when it starts, sleeps 0.5-2 s, prints a
line made from its input file and arguments (its output), and as its last
action appends `end ID`. Every `--kill-every` seconds (drawn uniformly from
half to one and a half times it) a random running agent is killed with
`starling testnet kill` (SIGKILL: its jobs, sandboxes and pid file are left
as a crash leaves them) and started again with `starling testnet start`
after `--restart-after` seconds (a range LO-HI, drawn uniformly), at most
`--max-down` down at once. `--kill execute` kills only agents that submit
nothing (the failure of issue 27); `--kill all` kills the submit agents too.
Kills go on until every job has ended once (or `--timeout`); then every agent
runs again, the queues empty, and the count is printed:

    jobs, kills, runs started, runs completed, completed twice, lost,
    wrong outputs, not once in history, held, started more than once,
    wall time

A job is lost when no run of it ended or its submitter's history does not show
it completed (a job held, e.g. because its output could not be fetched, is
lost to its user until they act; held jobs are also listed with their
reasons); completed twice when two or more runs ended; its output is wrong
unless it is exactly what the job prints. The target is 0 lost, 0
completed twice, 0 wrong. The schedule depends on --seed only (the times at
which jobs run do not), so a seed replays the same kills.
"""
import argparse, os, random, shutil, signal, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import run  # noqa: E402

JOB = r"""#!/bin/sh
# $1: submitter, $2: process number, $3: the ledger.
id="$1.$2"
host=$(grep '^Name = ' "$_CONDOR_MACHINE_AD" | sed 's/^Name = "\(.*\)"$/\1/')
echo "start $id $host $$" >> "$3"
ms=$(( 500 + ($2 * 7 % 16) * 100 ))
sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
echo "$id $(cat in.txt) $(( $2 * $2 + 7 ))"
echo "end $id" >> "$3"
"""

SUBMITTERS = [(0, "a"), (1, "b")]


def expected(name, proc):
    return f"{name}.{proc} payload-{name} {proc * proc + 7}\n"


def read_ledger(path):
    starts, ends, junk = {}, {}, []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 4 and w[0] == "start":
                starts[w[1]] = starts.get(w[1], 0) + 1
            elif len(w) == 2 and w[0] == "end":
                ends[w[1]] = ends.get(w[1], 0) + 1
            else:
                junk.append(line.rstrip("\n"))
    return starts, ends, junk


def rows(starling, agent, history, attrs):
    out = run(starling, "history" if history else "q", "-af", *attrs, "--agent", agent,
              check=False)
    if out.returncode != 0:
        return None
    return [l.split() for l in out.stdout.splitlines() if l.strip()]


def job_processes(needle):
    """Pids of live processes whose command line holds `needle`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(") ", 1)[1].startswith("Z"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle.encode() in f.read():
                    found.append(int(pid))
        except (OSError, IndexError):
            pass
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--starling", default="target/release/starling")
    p.add_argument("--jobs", type=int, default=300, help="jobs in all, half per submitter")
    p.add_argument("--agents", type=int, default=6)
    p.add_argument("--kill-every", type=float, default=6.0, metavar="SECS")
    p.add_argument("--restart-after", default="5-8", metavar="LO-HI",
                   help="seconds an agent stays down")
    p.add_argument("--kill", choices=["execute", "all"], default="all",
                   help="which agents may be killed")
    p.add_argument("--max-down", type=int, default=2)
    p.add_argument("--seed", type=int, default=27)
    p.add_argument("--timeout", type=float, default=900, metavar="SECS")
    p.add_argument("--keep", action="store_true", help="keep the testnet directory")
    a = p.parse_args()
    # SIGTERM (a `timeout` around the run) still takes the testnet down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    lo, _, hi = a.restart_after.partition("-")
    down_range = (float(lo), float(hi or lo))
    if a.agents < 3 or a.jobs < 2:
        sys.exit("--agents must be at least 3 and --jobs at least 2")
    starling = os.path.abspath(a.starling)
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="starling-chaos-")
    net = os.path.join(tmp, "net")
    # The ledger lies where every account may write: jobs run as nobody
    # when the agents run as root.
    shared = os.path.join(tmp, "shared")
    os.makedirs(shared)
    os.chmod(tmp, 0o755)
    os.chmod(shared, 0o777)
    ledger = os.path.join(shared, "ledger")
    open(ledger, "w").close()
    os.chmod(ledger, 0o666)
    extra = []
    if os.geteuid() == 0:
        extra = ["--jobs", "account=nobody", "--jobs", "private_tmp=false"]
    began = time.time()
    run(starling, "testnet", "up", "--dir", net, "--agents", str(a.agents), "--timeout", "300",
        *extra, timeout=400)
    agent = lambda i: os.path.join(net, f"agent-{i:02d}")
    counts = {}
    try:
        per = {name: a.jobs // 2 + (a.jobs % 2 if i == 0 else 0) for i, name in SUBMITTERS}
        dirs = {}
        for i, name in SUBMITTERS:
            d = os.path.join(tmp, name)
            os.makedirs(os.path.join(d, "out"))
            with open(os.path.join(d, "job.sh"), "w") as f:
                f.write(JOB)
            os.chmod(os.path.join(d, "job.sh"), 0o755)
            with open(os.path.join(d, "in.txt"), "w") as f:
                f.write(f"payload-{name}")
            with open(os.path.join(d, "job.sub"), "w") as f:
                f.write(f"executable = job.sh\narguments = \"{name} $(Process) {ledger}\"\n"
                        "transfer_input_files = in.txt\noutput = out/$(Process).txt\n"
                        "error = out/$(Process).err\nlog = job.log\nrequest_memory = 32\n"
                        f"queue {per[name]}\n")
            run(starling, "submit", "job.sub", "--agent", agent(i), cwd=d)
            dirs[name] = d
        submitted = time.time()

        victims = list(range(a.agents)) if a.kill == "all" else list(range(2, a.agents))
        kills, down = [], []  # down: [(restart at, agent)]
        next_kill = time.time() + rng.uniform(0.5, 1.5) * a.kill_every
        deadline = began + a.timeout
        while True:
            now = time.time()
            down.sort()
            while down and down[0][0] <= now:
                run(starling, "testnet", "start", "--dir", net, f"agent-{down.pop(0)[1]:02d}",
                    "--timeout", "60")
            _, ends, _ = read_ledger(ledger)
            if len(ends) >= a.jobs or now >= deadline:
                for _, v in down:
                    run(starling, "testnet", "start", "--dir", net, f"agent-{v:02d}",
                        "--timeout", "60")
                break
            if now >= next_kill and len(down) < a.max_down:
                up = [v for v in victims if all(v != d for _, d in down)]
                if up:
                    v = rng.choice(up)
                    stay = rng.uniform(*down_range)
                    run(starling, "testnet", "kill", "--dir", net, f"agent-{v:02d}")
                    kills.append((round(time.time() - submitted, 1), v, round(stay, 1)))
                    down.append((time.time() + stay, v))
                next_kill = time.time() + rng.uniform(0.5, 1.5) * a.kill_every
            time.sleep(0.2)
        print(f"kills (s after submit, agent, s down): {kills}", file=sys.stderr)

        # The queues empty (but for held jobs, which wait for their user),
        # and no run is left.
        left, held = {}, []
        for i, name in SUBMITTERS:
            while True:
                r = rows(starling, agent(i), False, ["ProcId", "JobStatus", "HoldReason"])
                if r is not None and all(len(x) > 1 and x[1] == "5" for x in r):
                    held += [(f"{name}.{x[0]}", " ".join(x[2:])) for x in r]
                    break
                if time.time() >= deadline:
                    left[name] = r
                    break
                time.sleep(0.5)
        quiet = time.time() + 30
        while job_processes(ledger) and time.time() < quiet:
            time.sleep(0.5)
        wall = time.time() - submitted

        starts, ends, junk = read_ledger(ledger)
        twice, lost, wrong, history_bad = [], [], [], []
        for i, name in SUBMITTERS:
            done = {}
            for r in rows(starling, agent(i), True, ["ProcId", "JobStatus"]) or []:
                if len(r) >= 2 and r[1] == "4":
                    done[r[0]] = done.get(r[0], 0) + 1
            for proc in range(per[name]):
                jid = f"{name}.{proc}"
                if done.get(str(proc), 0) != 1:
                    history_bad.append(jid)
                if ends.get(jid, 0) == 0 or done.get(str(proc), 0) == 0:
                    lost.append(jid)
                if ends.get(jid, 0) > 1:
                    twice.append(jid)
                try:
                    with open(os.path.join(dirs[name], "out", f"{proc}.txt")) as f:
                        ok = f.read() == expected(name, proc)
                except OSError:
                    ok = False
                if not ok:
                    wrong.append(jid)
        counts = {
            "jobs": a.jobs,
            "kills": len(kills),
            "runs started": sum(starts.values()),
            "runs completed": sum(ends.values()),
            "completed twice": len(twice),
            "lost": len(lost),
            "wrong outputs": len(wrong),
            "not once in history": len(history_bad),
            "held": len(held),
            "started more than once": sum(1 for n in starts.values() if n > 1),
            "wall time (s)": f"{wall:.0f}",
        }
        print(f"chaos run: {a.agents} agents, kill {a.kill} every ~{a.kill_every:g} s, "
              f"down {a.restart_after} s, at most {a.max_down} down, seed {a.seed}, "
              f"{os.path.relpath(starling)}")
        width = max(len(k) for k in counts)
        for k, v in counts.items():
            print(f"  {k:<{width}}  {v}")
        for what, ids in [("completed twice", twice), ("lost", lost), ("wrong outputs", wrong),
                          ("not once in history", history_bad)]:
            if ids:
                print(f"  {what}: {' '.join(ids[:30])}{' ...' if len(ids) > 30 else ''}")
        for jid, reason in held[:10]:
            print(f"  held {jid}: {reason}")
        if left:
            print(f"  still queued at the timeout: {left}")
        if junk:
            print(f"  ledger lines no job wrote whole: {junk[:10]}")
    finally:
        run(starling, "testnet", "down", "--dir", net, check=False)
        if a.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    bad = any(counts.get(k, 1) for k in ["completed twice", "lost", "wrong outputs",
                                         "not once in history"])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
