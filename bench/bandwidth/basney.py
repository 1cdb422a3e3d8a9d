#!/usr/bin/env python3
"""Basney's Fig. 21 (thesis, ch. 6; issue 18), scaled to one machine: a
burst of 16 small and 16 large checkpoint restores through one shaped
uplink, with admission control ([links] reservations) and without it
(every transfer at once), and the goodput gained in CPU-minutes.

    flock /tmp/starling-e2e.lock bench/bandwidth/basney.py [--starling PATH]
        [--out DIR] [--uplink-mbps 20] [--host-mbps 1000] [--scale 50]
        [--small 16] [--large 16] [--compute 600] [--reps 1] [--keep]

Needs root (`starling testnet up --netns`). Writes DIR/basney.csv (one row
per job and run), DIR/basney.png (transfers finished over time, both
runs), DIR/summary.txt (what is printed) and the agents' logs.

The testnet: `testnet up --netns --domains 2 --agents 2*E` (agents are
dealt to domains round-robin, so E agents in each); agent-00 (d0) submits
and holds every input; the E agents of d1 run the jobs
(`requirements = StarlingDomain == "d1.testnet"`). A job asks for one cpu
(the least a dynamic slot carves) and an agent offers --cpus of them
(`testnet up --cpus`, 8 by default), so E = ceil(32 / cpus): every job of
the burst runs at once, on few agents (32 agents on a 2-core host slowed
negotiation and keepalives enough to distort both runs).
Every input crosses d0's uplink and d1's uplink (both --uplink-mbps) and
two host links (--host-mbps, much larger).

The jobs: Basney's 92 MB and 278 MB checkpoints divided by --scale (50:
1.84 MB and 5.56 MB, random bytes), submitted in one cluster, small and
large alternating. A job writes the time it started (its input has then
arrived) to a shared directory and "computes" (sleeps) --compute seconds.
Once every job of a run started, the run's jobs are removed: what they
compute after the deadline is not counted.

Runs: (a) admission control, the default of a --netns testnet (`[links]`
managed; every input of at least `min_reserved_kib`, 1 MiB, reserves
every link of its path and is paced); (b) none: `[links] min_reserved_kib
= 1073741824` (1 TiB, the largest taken) in every agent.toml, each agent
restarted (`testnet kill --signal term` / `testnet start`): no transfer
is reserved, all share the uplinks as TCP does. With --reps R, R pairs,
ABBA.

Goodput (Basney's): the deadline D is the latest start of any job in the
pair of runs (both runs' transfers are over by then); a run's goodput is
the sum over its jobs of min(compute, D - start) in CPU-minutes; the gain
is (a) - (b). The thesis: > 70 CPU-minutes gained, ideal 90.6, for 92/278
MB over 100 Mbit/s; both scale with time, i.e. by (1/scale) * (100 /
uplink) (0.1 by default). Also printed: this setup's ideal (one transfer
after the other at the uplink rate, in the submitted order and shortest
first, against all sharing it equally).
"""
import argparse, csv, math, os, re, shutil, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import run, set_keys, wait_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
THESIS_SMALL_MB, THESIS_LARGE_MB, THESIS_MBPS = 92.0, 278.0, 100.0
THESIS_GAIN_MIN, THESIS_IDEAL_MIN = 70.0, 90.6
NO_RESERVATION_KIB = 1 << 30
JOB = """#!/bin/sh
# $1: name, $2: directory of start times, $3: seconds to compute
date +%s.%N > "$2/$1.tmp" && mv "$2/$1.tmp" "$2/$1"
exec sleep "$3"
"""


class Net:
    def __init__(self, starling, tmp, a, agents):
        self.starling, self.agents = starling, agents
        self.dir = os.path.join(tmp, "net")
        t = time.time()
        run(starling, "testnet", "up", "--dir", self.dir, "--agents", str(agents),
            "--domains", "2", "--netns", "--uplink-mbps", str(a.uplink_mbps),
            "--host-mbps", str(a.host_mbps), "--refresh-secs", "1", "--lifetime-secs", "10",
            "--cpus", str(a.cpus),
            "--jobs", "account=nobody", "--jobs", "private_tmp=false", "--jobs", "cgroups=off",
            "--timeout", "300", timeout=400)
        print(f"testnet of {agents} agents up in {time.time() - t:.0f} s", file=sys.stderr,
              flush=True)
        self.mode = "reserved"
        self.wait_all()

    def name(self, i):
        return f"agent-{i:02d}"

    def path(self, i):
        return os.path.join(self.dir, self.name(i))

    def execute_hosts(self):
        return [f"{self.name(i)}.d1.testnet" for i in range(1, self.agents, 2)]

    def sees_all(self):
        out = run(self.starling, "status", "-af", "StarlingHost", "--agent", self.path(0),
                  check=False)
        seen = set(out.stdout.split())
        return out.returncode == 0 and all(h in seen for h in self.execute_hosts())

    def wait_all(self):
        wait_for("agent-00 to see every execute agent", self.sees_all, 180, every=1)

    def configure(self, mode):
        """`reserved` (the --netns default) or `none` (nothing reserved)."""
        t = time.time()
        for i in range(self.agents):
            path = os.path.join(self.path(i), "agent.toml")
            text = open(path).read()
            if mode == "none":
                text = set_keys(text, "links", {"min_reserved_kib": str(NO_RESERVATION_KIB)})
            else:
                text = "\n".join(l for l in text.splitlines()
                                 if not l.startswith(f"min_reserved_kib = {NO_RESERVATION_KIB}")) + "\n"
            run(self.starling, "testnet", "kill", "--dir", self.dir, self.name(i), "--signal",
                "term", check=False)
            open(path, "w").write(text)
            run(self.starling, "testnet", "start", "--dir", self.dir, self.name(i),
                "--timeout", "120", timeout=200)
        self.mode = mode
        self.wait_all()
        print(f"links {mode}: {self.agents} agents restarted in {time.time() - t:.0f} s",
              file=sys.stderr, flush=True)

    def down(self):
        run(self.starling, "testnet", "down", "--dir", self.dir, check=False, timeout=300)


def queue(net):
    out = run(net.starling, "q", "-af", "ProcId", "JobStatus", "HoldReason", "--agent",
              net.path(0), check=False)
    return out.returncode, [l.split(None, 2) for l in out.stdout.splitlines() if l.strip()]


def one_run(a, net, work, sizes, rep, mode):
    tag = f"{rep}-{mode}"
    starts = os.path.join(work, f"starts-{tag}")
    os.makedirs(starts)
    os.chmod(starts, 0o777)
    lines = [f"executable = {os.path.join(work, 'job.sh')}",
             'requirements = StarlingDomain == "d1.testnet"',
             "request_cpus = 1", "request_memory = 1", "request_disk = 16384",
             "should_transfer_files = YES", "when_to_transfer_output = ON_EXIT"]
    for k, (kind, size) in enumerate(sizes):
        lines += [f'arguments = "{k} {starts} {a.compute}"',
                  f"transfer_input_files = {kind}-{k}.dat",
                  f"output = {tag}-{k}.out", f"error = {tag}-{k}.err", "queue"]
    sub = os.path.join(work, f"{tag}.sub")
    open(sub, "w").write("\n".join(lines) + "\n")
    t0 = time.time()
    run(net.starling, "submit", sub, "--agent", net.path(0), cwd=work)

    def all_started():
        rc, q = queue(net)
        held = [r for r in q if r[1:2] == ["5"]]
        if held:
            sys.exit(f"{tag}: jobs held: {held}")
        return len(os.listdir(starts)) >= len(sizes)
    deadline = t0 + a.timeout
    while not all_started() and time.time() < deadline:
        time.sleep(0.5)
    took = time.time() - t0
    if took >= a.timeout:
        print(f"  {tag}: only {len(os.listdir(starts))} of {len(sizes)} jobs started in "
              f"{a.timeout:.0f} s; the others count as never started", file=sys.stderr, flush=True)
    lapsed = sum(open(os.path.join(net.path(i), "agent.log")).read().count("claim lease lapsed")
                 for i in range(net.agents))
    waits = sum(open(os.path.join(net.path(i), "agent.log")).read().count("waiting for the path")
                for i in range(net.agents))
    run(net.starling, "rm", "--constraint", "true", "--agent", net.path(0), check=False)
    wait_for(f"{tag}: the queue to empty", lambda: (lambda q: q[0] == 0 and not q[1])(queue(net)),
             180, every=1)
    rows = []
    for k, (kind, size) in enumerate(sizes):
        try:
            st = round(float(open(os.path.join(starts, str(k))).read()) - t0, 3)
        except OSError:
            st = math.inf
        rows.append({"rep": rep, "mode": mode, "job": k, "kind": kind, "bytes": size,
                     "start_secs": st, "lease_lapses_so_far": lapsed,
                     "admission_waits_so_far": waits})
    print(f"  {tag}: log so far: {lapsed} claim leases lapsed, {waits} 'waiting for the path'",
          file=sys.stderr, flush=True)
    last = max(r["start_secs"] for r in rows)
    print(f"  {tag}: every job started after {last:.1f} s (small: median "
          f"{statistics.median(r['start_secs'] for r in rows if r['kind'] == 'small'):.1f} s, "
          f"large: median "
          f"{statistics.median(r['start_secs'] for r in rows if r['kind'] == 'large'):.1f} s; "
          f"{took:.0f} s to see it)", file=sys.stderr, flush=True)
    return rows


def ideal(sizes_bytes, mbps):
    """(sequential, all-sharing) completion times of transfers at `mbps`."""
    rate = mbps * 1e6 / 8
    seq, t = [], 0.0
    for s in sizes_bytes:
        t += s / rate
        seq.append(t)
    # Processor sharing: all share equally until each is done.
    left = sorted(sizes_bytes)
    ps, t, done = [], 0.0, 0.0
    for i, s in enumerate(left):
        n = len(left) - i
        t += (s - done) * n / rate
        done = s
        ps.append(t)
    return seq, ps


def report(a, rows, sizes, out):
    lines = []
    say = lines.append
    scale_t = (1.0 / a.scale) * (THESIS_MBPS / a.uplink_mbps)
    say(f"Basney Fig. 21, scaled: {a.small} x {sizes[0][1] / 1e6:.2f} MB and {a.large} x "
        f"{sizes[1][1] / 1e6:.2f} MB (92 MB and 278 MB / {a.scale:g}) from d0 to d1 over "
        f"{a.uplink_mbps:g} Mbit/s uplinks (host links {a.host_mbps:g} Mbit/s); each job "
        f"computes {a.compute:g} s. Times scale by {scale_t:.3f} from the thesis' "
        f"(100 Mbit/s).")
    gains = []
    for rep in sorted({r["rep"] for r in rows}):
        rr = [r for r in rows if r["rep"] == rep]
        modes = {m: [r for r in rr if r["mode"] == m] for m in ("reserved", "none")}
        if not all(modes.values()):
            continue
        # Jobs that never started (inf) deliver nothing before it.
        deadline = max(r["start_secs"] for r in rr if math.isfinite(r["start_secs"]))
        good = {m: sum(max(0.0, min(a.compute, deadline - r["start_secs"])) for r in rs) / 60
                for m, rs in modes.items()}
        never = {m: sum(1 for r in rs if not math.isfinite(r["start_secs"]))
                 for m, rs in modes.items()}
        for r in rr:
            r["deadline_secs"] = round(deadline, 3)
        gains.append(good["reserved"] - good["none"])
        say(f"rep {rep}: deadline {deadline:.1f} s")
        for m, rs in modes.items():
            st = [r["start_secs"] for r in rs]
            say(f"  {m:8s}: last transfer done at {max(st):6.1f} s, small median "
                f"{statistics.median(r['start_secs'] for r in rs if r['kind'] == 'small'):6.1f}"
                f" s, large median "
                f"{statistics.median(r['start_secs'] for r in rs if r['kind'] == 'large'):6.1f}"
                f" s, goodput {good[m]:6.2f} CPU-min"
                + (f"; {never[m]} never started" if never[m] else ""))
        say(f"  gain (reserved - none): {gains[-1]:.2f} CPU-minutes")
    order = [s for _, s in sizes]
    seq, ps = ideal(order, a.uplink_mbps)
    sjf, _ = ideal(sorted(order), a.uplink_mbps)
    say("")
    if gains:
        say(f"gain over {len(gains)} pair(s): median {statistics.median(gains):.2f} CPU-min"
            + (f", min-max {min(gains):.2f}-{max(gains):.2f}" if len(gains) > 1 else ""))
    say(f"thesis, scaled by {scale_t:.3f}: more than {THESIS_GAIN_MIN * scale_t:.2f} CPU-min "
        f"gained, ideal {THESIS_IDEAL_MIN * scale_t:.2f} (unscaled: > {THESIS_GAIN_MIN:g}, "
        f"ideal {THESIS_IDEAL_MIN:g})")
    say(f"this setup's ideal at {a.uplink_mbps:g} Mbit/s: one after the other in the submitted "
        f"order {(sum(ps) - sum(seq)) / 60:.2f} CPU-min, shortest first "
        f"{(sum(ps) - sum(sjf)) / 60:.2f}; all at once ends at {ps[-1]:.1f} s")
    text = "\n".join(lines) + "\n"
    print(text)
    open(os.path.join(out, "summary.txt"), "w").write(text)


PLOT = r"""
import csv
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open({csv!r})))
fig, ax = plt.subplots(figsize=(8, 5))
styles = {{"reserved": ("tab:blue", "admission control"), "none": ("tab:red", "none: all at once")}}
for (rep, mode) in sorted({{(r["rep"], r["mode"]) for r in rows}}):
    rs = [r for r in rows if r["rep"] == rep and r["mode"] == mode]
    for kind, marker in (("small", "o"), ("large", "s")):
        t = sorted(float(r["start_secs"]) for r in rs if r["kind"] == kind
                   and float(r["start_secs"]) != float("inf"))
        color, label = styles[mode]
        ax.step([0] + t, range(len(t) + 1), where="post", color=color, alpha=0.8,
                linestyle="-" if kind == "large" else "--",
                label=f"{{label}}, {{kind}}" if rep == "0" else None)
        ax.plot(t, range(1, len(t) + 1), marker, color=color, markersize=3)
for d in sorted({{float(r["deadline_secs"]) for r in rows if r.get("deadline_secs")}}):
    ax.axvline(d, color="grey", linestyle=":")
ax.set_xlabel("seconds since the burst was submitted")
ax.set_ylabel("transfers finished (jobs started)")
ax.set_title({title!r})
ax.legend()
fig.tight_layout()
fig.savefig({png!r}, dpi=120)
"""


def plot(a, out):
    py = os.path.join(HERE, ".venv", "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", os.path.join(HERE, ".venv")], check=True)
        if subprocess.run([py, "-m", "pip", "install", "-q", "matplotlib"]).returncode != 0:
            print("could not install matplotlib: no PNG", file=sys.stderr)
            return
    title = (f"Basney Fig. 21 scaled: 16 x 92/{a.scale:g} MB + 16 x 278/{a.scale:g} MB "
             f"over {a.uplink_mbps:g} Mbit/s")
    subprocess.run([py, "-c", PLOT.format(csv=os.path.join(out, "basney.csv"),
                                          png=os.path.join(out, "basney.png"), title=title)],
                   check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starling", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "release", "starling"))
    p.add_argument("--out", default="bench-out/bandwidth")
    p.add_argument("--uplink-mbps", type=int, default=20)
    p.add_argument("--host-mbps", type=int, default=1000)
    p.add_argument("--scale", type=float, default=50.0, help="the thesis' sizes divided by this")
    p.add_argument("--small", type=int, default=16)
    p.add_argument("--large", type=int, default=16)
    p.add_argument("--compute", type=float, default=600.0, help="seconds a job computes")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--cpus", type=int, default=8,
                   help="processors each agent offers (one per job): fewer agents, less load")
    p.add_argument("--timeout", type=float, default=200.0, help="seconds a run may take")
    p.add_argument("--keep", action="store_true", help="keep the testnet's directory")
    p.add_argument("--from-csv", metavar="CSV",
                   help="no runs: the summary and the plot of a basney.csv written before")
    a = p.parse_args()
    if os.geteuid() != 0 and not a.from_csv:
        sys.exit("--netns needs root")
    starling = os.path.abspath(a.starling)
    if not os.access(starling, os.X_OK) and not a.from_csv:
        sys.exit(f"no starling binary at {starling}: cargo build --release -p starling-cli")
    os.makedirs(a.out, exist_ok=True)
    small = int(THESIS_SMALL_MB * 1e6 / a.scale)
    large = int(THESIS_LARGE_MB * 1e6 / a.scale)
    if a.from_csv:
        rows = [dict(r, rep=int(r["rep"]), job=int(r["job"]), bytes=int(r["bytes"]),
                     start_secs=float(r["start_secs"])) for r in csv.DictReader(open(a.from_csv))]
        sizes = [(r["kind"], r["bytes"]) for r in rows if r["rep"] == rows[0]["rep"]
                 and r["mode"] == rows[0]["mode"]]
        report(a, rows, sizes, a.out)
        with open(os.path.join(a.out, "basney.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        plot(a, a.out)
        return
    jobs = a.small + a.large
    executors = math.ceil(jobs / a.cpus)
    sizes = []
    for k in range(max(a.small, a.large)):
        if k < a.small:
            sizes.append(("small", small))
        if k < a.large:
            sizes.append(("large", large))
    tmp = tempfile.mkdtemp(prefix="basney-")
    os.chmod(tmp, 0o755)
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    os.chmod(work, 0o777)
    open(os.path.join(work, "job.sh"), "w").write(JOB)
    os.chmod(os.path.join(work, "job.sh"), 0o755)
    for k, (kind, size) in enumerate(sizes):
        with open(os.path.join(work, f"{kind}-{k}.dat"), "wb") as f:
            f.write(os.urandom(size))
    began = time.time()
    rows = []
    net = Net(starling, tmp, a, 2 * executors)
    try:
        for rep in range(a.reps):
            order = ("reserved", "none") if rep % 2 == 0 else ("none", "reserved")
            for mode in order:
                if net.mode != mode:
                    net.configure(mode)
                rows += one_run(a, net, work, sizes, rep, mode)
                with open(os.path.join(a.out, "basney.csv"), "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]) + ["deadline_secs"])
                    w.writeheader()
                    w.writerows(rows)
        for i in range(net.agents):
            shutil.copy(os.path.join(net.path(i), "agent.log"),
                        os.path.join(a.out, f"{net.name(i)}.log"))
    finally:
        net.down()
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}", file=sys.stderr)
    report(a, rows, sizes, a.out)
    with open(os.path.join(a.out, "basney.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(a, a.out)
    print(f"wrote {a.out}/basney.csv, {a.out}/basney.png, {a.out}/summary.txt "
          f"in {time.time() - began:.0f} s")


if __name__ == "__main__":
    main()
