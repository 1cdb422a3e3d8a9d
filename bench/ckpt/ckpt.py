#!/usr/bin/env python3
"""Checkpoints replicated to store peers (issue 17): replication against raw
TCP, incremental checkpoints, restore, work lost to a kill -9, and Pruyne's
Table 5, on loopback testnets of the release binary.

    bench/ckpt/ckpt.py [--starling target/release/starling] [--runs 5]
                       [--mib 256] [--changed 5] [--incremental 2]
                       [--interval 10] [--pruyne-mib 32]
                       [--only replicate,worklost,pruyne] [--keep]

Three experiments, each on its own testnet (`starling testnet up --jobs
cgroups=off --jobs private_tmp=false`); every agent of a testnet is a store
peer unless its `[store] lend_mib` is set to 0 here (its agent.toml edited,
the agent killed and started again). Jobs are pinned by `requirements` on
the machine `Name` and preferred by `rank`. The job is bench/ckpt/job.py
(`checkpoint_exit_code = 85`); its ledger, outside the agents, says when it
started, held and was restored. Times come from the agents' logs: `took the
job's checkpoint` (sequence, bytes, sent, replicas, elapsed: from the job's
exit to the submit agent's record of the manifest) and `restored the job's
checkpoint` (bytes, files, elapsed: fetching and verifying every chunk and
writing the files).

replicate (5 agents, one domain): agent-00 submits, agent-01 runs the job,
agents 02 and 03 are the only store peers, agent-04 is where the job goes
after agent-01 is killed. Each of --runs runs: the raw TCP baseline
(bench/ckpt/rawtcp.py: one Python sender process, one receiver process per
stream, --mib MiB per stream over 127.0.0.1, 4 MiB buffers; 1 stream and 2
streams at once), then one job that writes --mib MiB of random data and
checkpoints it (full, 2 replicas), rewrites --changed % of its 1 MiB blocks
in place and checkpoints again, --incremental times, and waits; agent-01 is
killed with `starling testnet kill` (SIGKILL); the job restarts on agent-04
from the nearest replica, checks its data and ends; agent-01 is started
again.

worklost (same testnet): a job counts steps of 0.1 s and checkpoints every
--interval seconds (T); agent-01 is killed at a moment drawn uniformly from
1 T to 3 T after the job first started; the job resumes on agent-04. Work
lost = steps the killed run had made past its last recorded checkpoint
(steps made again), in seconds; the job's StarlingBadputTime is shown too.

pruyne (4 agents, --domains 2: agents 00 and 02 in d0, 01 and 03 in d1):
agent-00 runs a job with `checkpoint_replicas = 1` that rewrites all of a
--pruyne-mib MiB file between checkpoints, so each one sends all of it;
--runs checkpoints with no store peer at all (kept locally), with agent-02
(same domain) the only store peer, then with agent-03 (other domain) the
only one.

Each figure is the median over runs with its spread (min-max); ratios are
against the baseline measured in the same run.
"""
import argparse, os, random, re, shutil, signal, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import run, wait_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT_EXIT = 85
STEP_SECS = 0.1


ANSI = re.compile(r"\x1b\[[0-9;]*m")
FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')
UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def duration(text):
    m = re.fullmatch(r"([0-9.]+)(ns|µs|us|ms|s)", text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


class Log:
    """An agent's log, read from where the last read stopped."""

    def __init__(self, path):
        self.path = path
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0

    def events(self, message):
        """New lines with `message`, as dicts of their fields."""
        found = []
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return found
        end = data.rfind(b"\n") + 1
        self.offset += end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            line = ANSI.sub("", line)
            if message in line:
                found.append({k: v.strip('"') for k, v in FIELD.findall(line)})
        return found


class Net:
    """A testnet of the release binary."""

    def __init__(self, starling, tmp, name, agents, domains=1):
        self.starling = starling
        self.dir = os.path.join(tmp, name)
        # As root, jobs run as nobody (as in bench/chaos) and write their
        # ledgers in folders anyone may write.
        extra = ["--jobs", "account=nobody"] if os.geteuid() == 0 else []
        run(starling, "testnet", "up", "--dir", self.dir, "--agents", str(agents),
            "--domains", str(domains), "--jobs", "cgroups=off", "--jobs", "private_tmp=false",
            *extra, "--timeout", "300", timeout=400)
        self.agents = agents
        self.domains = domains

    def name(self, i):
        return f"agent-{i:02d}"

    def path(self, i):
        return os.path.join(self.dir, self.name(i))

    def host(self, i):
        return f"{self.name(i)}.d{i % self.domains}.testnet"

    def slot(self, i):
        return f"slot1@{self.host(i)}"

    def log(self, i):
        return Log(os.path.join(self.path(i), "agent.log"))

    def kill(self, i):
        run(self.starling, "testnet", "kill", "--dir", self.dir, self.name(i))

    def start(self, i):
        run(self.starling, "testnet", "start", "--dir", self.dir, self.name(i), "--timeout", "120",
            timeout=200)

    def lend(self, lends):
        """Sets `[store] lend_mib` of agents {i: MiB} and restarts them."""
        for i, mib in lends.items():
            path = os.path.join(self.path(i), "agent.toml")
            text = open(path).read()
            text = re.sub(r"(?m)^lend_mib = .*\n", "", text)
            text, n = re.subn(r"(?m)^\[store\]\n", f"[store]\nlend_mib = {mib}\n", text)
            if n != 1:
                sys.exit(f"{path}: no [store] section")
            self.kill(i)
            open(path, "w").write(text)
            self.start(i)

    def store_peers(self, viewer):
        """The agents `viewer` sees as store peers (their ads lend disk)."""
        out = run(self.starling, "status", "--af", "StarlingHost", "StarlingStoreLent",
                  "--agent", self.path(viewer), check=False)
        hosts = {self.host(i): i for i in range(self.agents)}
        seen = set()
        for line in out.stdout.splitlines():
            w = line.split()
            if len(w) == 2 and w[0] in hosts and w[1].isdigit() and int(w[1]) > 0:
                seen.add(hosts[w[0]])
        return seen if out.returncode == 0 and len(out.stdout.splitlines()) == self.agents \
            else None

    def wait_store_peers(self, viewer, want, timeout=120):
        """Until `viewer` sees every agent, and exactly `want` as store peers."""
        wait_for(f"{self.name(viewer)} to see store peers {want}",
                 lambda: self.store_peers(viewer) == set(want), timeout, every=1)

    def down(self):
        run(self.starling, "testnet", "down", "--dir", self.dir, check=False)


def submit(starling, net, submitter, work, name, arguments, requirements, rank, replicas=None):
    lines = [
        f"executable = {os.path.join(HERE, 'job.py')}",
        f"arguments = \"{arguments}\"",
        f"checkpoint_exit_code = {CKPT_EXIT}",
        f"requirements = {requirements}",
        f"rank = {rank}",
        "request_memory = 256",
        "request_disk = 2097152",
        f"output = {name}.out",
        f"error = {name}.err",
        f"log = {name}.log",
    ]
    if replicas is not None:
        lines.append(f"checkpoint_replicas = {replicas}")
    lines.append("queue")
    sub = os.path.join(work, f"{name}.sub")
    with open(sub, "w") as f:
        f.write("\n".join(lines) + "\n")
    out = run(starling, "submit", sub, "--agent", net.path(submitter), cwd=work)
    return out.stdout.strip().split()[-1].rstrip(".")


def workdir(tmp, name):
    path = os.path.join(tmp, name)
    os.makedirs(path)
    os.chmod(path, 0o777)
    return path


def ledger_lines(path, word):
    try:
        with open(path) as f:
            return [l.split() for l in f if l.startswith(word + " ")]
    except OSError:
        return []


def queue_empty(starling, net, submitter):
    out = run(starling, "q", "-af", "ProcId", "--agent", net.path(submitter), check=False)
    return out.returncode == 0 and not out.stdout.strip()


def history(starling, net, submitter, cluster, attrs):
    out = run(starling, "history", "-af", "ClusterId", *attrs, "--agent", net.path(submitter),
              check=False)
    for line in out.stdout.splitlines():
        w = line.split()
        if w and w[0] == cluster:
            return dict(zip(attrs, w[1:]))
    return {}


def rawtcp(mib, streams):
    out = subprocess.run([sys.executable, os.path.join(HERE, "rawtcp.py"), "--mib", str(mib),
                          "--streams", str(streams), "--runs", "1", "--json"],
                         capture_output=True, text=True, timeout=300, check=True)
    return float(out.stdout.strip().strip("[]"))


def summary(values, fmt="{:.2f}"):
    if not values:
        return "no runs"
    return (f"median {fmt.format(statistics.median(values))} "
            f"(min {fmt.format(min(values))}, max {fmt.format(max(values))}, n={len(values)})")


def replicate(a, starling, tmp, results):
    net = Net(starling, tmp, "net-replicate", 5)
    try:
        SUB, EXE, RESTORE = 0, 1, 4
        net.lend({0: 0, EXE: 0, RESTORE: 0})
        net.wait_store_peers(EXE, [2, 3])
        work = workdir(tmp, "replicate")
        pinned = f'(Name == "{net.slot(EXE)}" || Name == "{net.slot(RESTORE)}")'
        rank = f'(Name == "{net.slot(EXE)}") * 10'
        raw1, raw2, full, incr, restore = [], [], [], [], []
        for r in range(a.runs):
            raw1.append(rawtcp(a.mib, 1))
            raw2.append(rawtcp(a.mib, 2))
            ledger = os.path.join(work, f"ledger.{r}")
            exe_log, restore_log = net.log(EXE), net.log(RESTORE)
            cluster = submit(starling, net, SUB, work, f"bulk{r}",
                             f"bulk {ledger} {a.mib} {1 + a.incremental} {a.changed}",
                             pinned, rank, replicas=2)
            wait_for(f"job {cluster} to take its checkpoints", lambda: ledger_lines(ledger, "hold"),
                     600)
            took = sorted(exe_log.events("took the job's checkpoint"),
                          key=lambda e: int(e["sequence"]))
            if len(took) != 1 + a.incremental:
                sys.exit(f"run {r}: {len(took)} checkpoints in {net.name(EXE)}'s log, "
                         f"expected {1 + a.incremental}: {took}")
            for e in took:
                row = {"bytes": int(e["bytes"]), "sent": int(e["sent"]),
                       "replicas": int(e["replicas"]), "secs": duration(e["elapsed"])}
                (full if e["sequence"] == "1" else incr).append(row)
            net.kill(EXE)
            killed = time.time()
            wait_for(f"job {cluster} to be restored", lambda: ledger_lines(ledger, "restored"), 600)
            back = time.time() - killed
            got = restore_log.events("restored the job's checkpoint")
            if len(got) != 1:
                sys.exit(f"run {r}: {len(got)} restores in {net.name(RESTORE)}'s log: {got}")
            restore.append({"bytes": int(got[0]["bytes"]), "secs": duration(got[0]["elapsed"]),
                            "back": back})
            wait_for(f"job {cluster} to leave the queue", lambda: queue_empty(starling, net, SUB),
                     300)
            net.start(EXE)
            print(f"  run {r}: raw {a.mib / raw1[-1]:.0f} MiB/s (1 stream), "
                  f"{a.mib / raw2[-1]:.0f} MiB/s (2 streams); full {full[-1]}; "
                  f"incremental {incr[-a.incremental:]}; restore {restore[-1]}", file=sys.stderr)
        results["replicate"] = (raw1, raw2, full, incr, restore)
    finally:
        net.down()


def worklost(a, starling, tmp, results):
    net = Net(starling, tmp, "net-worklost", 5)
    try:
        SUB, EXE, RESTORE = 0, 1, 4
        net.lend({0: 0, EXE: 0, RESTORE: 0})
        net.wait_store_peers(EXE, [2, 3])
        work = workdir(tmp, "worklost")
        pinned = f'(Name == "{net.slot(EXE)}" || Name == "{net.slot(RESTORE)}")'
        rank = f'(Name == "{net.slot(EXE)}") * 10'
        rng = random.Random(a.seed)
        steps = int(5 * a.interval / STEP_SECS)
        rows = []
        for r in range(a.runs):
            ledger = os.path.join(work, f"ledger.{r}")
            cluster = submit(starling, net, SUB, work, f"steps{r}",
                             f"steps {ledger} {STEP_SECS} {a.interval} {steps}", pinned, rank)
            first = wait_for(f"job {cluster} to start", lambda: ledger_lines(ledger, "start"), 120)
            at = float(first[0][2]) + rng.uniform(1.0, 3.0) * a.interval
            time.sleep(max(0.0, at - time.time()))
            net.kill(EXE)
            killed = time.time()
            wait_for(f"job {cluster} to finish", lambda: ledger_lines(ledger, "done"),
                     600 + 5 * a.interval)
            wait_for(f"job {cluster} to leave the queue", lambda: queue_empty(starling, net, SUB),
                     300)
            net.start(EXE)
            starts = ledger_lines(ledger, "start")
            resumed = [s for s in starts if s[1] == net.host(RESTORE)]
            if not resumed:
                sys.exit(f"run {r}: the job never ran on {net.host(RESTORE)}: {starts}")
            from_step = int(resumed[0][3])
            made = [(int(s[1]), float(s[3])) for s in ledger_lines(ledger, "step")
                    if s[2] == net.host(EXE)]
            before = [n for n, t in made if t <= killed]
            lost_steps = max(before, default=0) - from_step
            saved_at = [t for n, t in made if n == from_step] or [float(first[0][2])]
            lost_time = killed - saved_at[0]
            back = float(resumed[0][2]) - killed
            after = sum(1 for _, t in made if t > killed)
            ckpts = sum(1 for s in starts if s[1] == net.host(EXE)) - 1
            h = history(starling, net, SUB, cluster,
                        ["StarlingBadputTime", "NumCkpts", "CommittedTime"])
            rows.append({"kill_after": round(at - float(first[0][2]), 1),
                         "lost_secs": round(lost_steps * STEP_SECS, 1),
                         "lost_time": round(lost_time, 2), "back": round(back, 1),
                         "steps_after_kill": after,
                         "resumed_from": from_step, "ckpts_before_kill": ckpts,
                         "badput": h.get("StarlingBadputTime"), "numckpts": h.get("NumCkpts"),
                         "committed": h.get("CommittedTime")})
            print(f"  run {r}: {rows[-1]}", file=sys.stderr)
        results["worklost"] = rows
    finally:
        net.down()


def pruyne(a, starling, tmp, results):
    net = Net(starling, tmp, "net-pruyne", 4, domains=2)
    try:
        EXE = 0
        work = workdir(tmp, "pruyne")
        phases = [("no store peer: kept locally", {0: 0, 1: 0, 2: 0, 3: 0}, []),
                  ("store peer in the same domain (agent-02, d0)", {2: 4096}, [2]),
                  ("store peer in the other domain (agent-03, d1)", {2: 0, 3: 4096}, [3])]
        rows = []
        for title, lends, peers in phases:
            net.lend(lends)
            net.wait_store_peers(EXE, peers)
            ledger = os.path.join(work, f"ledger.{len(rows)}")
            log = net.log(EXE)
            cluster = submit(starling, net, EXE, work, f"pruyne{len(rows)}",
                             f"bulk {ledger} {a.pruyne_mib} {a.runs} 100 0",
                             f'Name == "{net.slot(EXE)}"', "0", replicas=1)
            wait_for(f"job {cluster} to finish", lambda: queue_empty(starling, net, EXE), 900)
            took = log.events("took the job's checkpoint")
            if len(took) != a.runs:
                sys.exit(f"{title}: {len(took)} checkpoints in the log, expected {a.runs}")
            rows.append((title, [{"bytes": int(e["bytes"]), "sent": int(e["sent"]),
                                  "replicas": int(e["replicas"]),
                                  "secs": duration(e["elapsed"])} for e in took]))
            print(f"  {title}: {rows[-1][1]}", file=sys.stderr)
        results["pruyne"] = rows
    finally:
        net.down()


def report(a, results):
    mib = 1 << 20
    if "replicate" in results:
        raw1, raw2, full, incr, restore = results["replicate"]
        raw1_rate = [a.mib / t for t in raw1]
        raw2_rate = [a.mib / t for t in raw2]
        full_rate = [r["bytes"] / mib / r["secs"] for r in full]
        print(f"1. replicating a {a.mib} MiB checkpoint to 2 store peers on loopback")
        print(f"   raw TCP, 1 stream of {a.mib} MiB (rawtcp.py, Python): "
              f"{summary(raw1_rate, '{:.0f}')} MiB/s")
        print(f"   raw TCP, 2 streams of {a.mib} MiB at once:           "
              f"{summary(raw2_rate, '{:.0f}')} MiB/s per stream")
        print(f"   checkpoint taken (exit to manifest recorded):  {summary([r['secs'] for r in full])} s"
              f" = {summary(full_rate, '{:.0f}')} MiB/s of checkpoint; replicas "
              f"{sorted(set(r['replicas'] for r in full))}, sent "
              f"{summary([r['sent'] / mib for r in full], '{:.0f}')} MiB")
        print(f"   ratio to raw, same run (checkpoint MiB/s / raw MiB/s): "
              f"vs 1 stream {summary([f / r for f, r in zip(full_rate, raw1_rate)])}; "
              f"vs 2 streams {summary([f / r for f, r in zip(full_rate, raw2_rate)])}; goal >= 0.50")
        print(f"2. incremental checkpoint, {a.changed:g}% of 1 MiB blocks rewritten")
        print(f"   sent: {summary([r['sent'] / mib for r in incr], '{:.1f}')} MiB of "
              f"{summary([r['bytes'] / mib for r in incr], '{:.0f}')} MiB (2 replicas)")
        print(f"   time: {summary([r['secs'] for r in incr])} s")
        fsent = statistics.median(r["sent"] for r in full)
        fsecs = statistics.median(r["secs"] for r in full)
        print(f"   against the full one (medians): bytes sent "
              f"{statistics.median(r['sent'] for r in incr) / fsent:.3f}, time "
              f"{statistics.median(r['secs'] for r in incr) / fsecs:.3f}")
        print(f"3. restore of {a.mib} MiB from the nearest replica (after kill -9 of the execute agent)")
        print(f"   restore: {summary([r['secs'] for r in restore])} s = "
              f"{summary([r['bytes'] / mib / r['secs'] for r in restore], '{:.0f}')} MiB/s")
        print(f"   ratio to the replication time, same run: "
              f"{summary([r['secs'] / f['secs'] for r, f in zip(restore, full)])}")
        print(f"   kill -9 to the job running again with its data: "
              f"{summary([r['back'] for r in restore], '{:.1f}')} s")
    if "worklost" in results:
        rows = results["worklost"]
        print(f"4. work lost to a kill -9 at a random moment, checkpoint interval T = {a.interval:g} s")
        print(f"   work lost (steps made again): {summary([r['lost_secs'] for r in rows], '{:.1f}')} s"
              f" = {summary([r['lost_secs'] / a.interval for r in rows])} T")
        print(f"   wall time from the saved step to the kill: "
              f"{summary([r['lost_time'] for r in rows], '{:.1f}')} s"
              f" = {summary([r['lost_time'] / a.interval for r in rows])} T")
        print(f"   kill -9 to the job running again elsewhere: "
              f"{summary([r['back'] for r in rows], '{:.1f}')} s")
        bp = [float(r["badput"]) for r in rows if r["badput"] not in (None, "undefined")]
        print(f"   StarlingBadputTime: {summary(bp, '{:.0f}')} s"
              f" = {summary([b / a.interval for b in bp])} T")
        print(f"   steps the orphaned run made after the kill: "
              f"{summary([r['steps_after_kill'] for r in rows], '{:.0f}')}; with them, work "
              f"made again: {summary([r['lost_secs'] + r['steps_after_kill'] * STEP_SECS for r in rows], '{:.1f}')} s")
    if "pruyne" in results:
        print(f"5. Pruyne Table 5: storing a {a.pruyne_mib} MiB checkpoint (1 replica), loopback")
        theirs = ["(none: Condor wrote to a server)", "46 s same sub-net / 64 s same router",
                  "79 s other FDDI-connected sub-net"]
        for (title, rows), t in zip(results["pruyne"], theirs):
            secs = [r["secs"] for r in rows]
            print(f"   {title}: {summary(secs, '{:.3f}')} s, "
                  f"{summary([r['bytes'] / mib / r['secs'] for r in rows], '{:.0f}')} MiB/s, "
                  f"sent {summary([r['sent'] / mib for r in rows], '{:.0f}')} MiB; Pruyne: {t}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--starling", default="target/release/starling")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--changed", type=float, default=5.0, help="percent of blocks rewritten")
    p.add_argument("--incremental", type=int, default=2, help="incremental checkpoints per run")
    p.add_argument("--interval", type=float, default=10.0, help="checkpoint interval T, seconds")
    p.add_argument("--pruyne-mib", type=int, default=32)
    p.add_argument("--only", default="replicate,worklost,pruyne")
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--keep", action="store_true", help="keep the testnets and ledgers")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    starling = os.path.abspath(a.starling)
    tmp = tempfile.mkdtemp(prefix="starling-ckpt-")
    os.chmod(tmp, 0o755)
    results = {}
    began = time.time()
    try:
        for name, fn in [("replicate", replicate), ("worklost", worklost), ("pruyne", pruyne)]:
            if name in a.only.split(","):
                fn(a, starling, tmp, results)
    finally:
        print(f"bench/ckpt/ckpt.py --runs {a.runs} --mib {a.mib} --changed {a.changed:g} "
              f"--interval {a.interval:g} ({os.path.relpath(starling)}, "
              f"{time.time() - began:.0f} s)")
        report(a, results)
        if a.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
