#!/usr/bin/env python3
"""Hector's migrate-to-idle experiment (seed 004, issue 20) on a loopback
testnet of the release binary: mean completion time with migration off and
on, next to the paper's 359 s -> 177 s, 1316 s -> 760 s and 1182 s -> 724 s.

    bench/migration/hector.py [--starling PATH] [--out DIR] [--reps 4]
                              [--work 30] [--ckpt 10] [--step 0.25]
                              [--idle-mean 60] [--busy-mean 60]
                              [--busy-load 2-8] [--seed 4]
                              [--only random,loaded,freed] [--keep]

Writes DIR/hector.csv (one row per job and run), DIR/hector.png (the
completion times off and on, as the paper's Figure 6, with its means, and
the on/off ratios beside the paper's), DIR/summary.txt (what is printed).

The testnet has 4 agents (`starling testnet up --refresh-secs 1
--lifetime-secs 10`); agent-00 submits. Agents 00-02 are the paper's "3
fairly well-used" workstations; agent-03 is a fourth one, unavailable (its
emulated owner's load is 100) except in the scenarios that need it. Every
agent's `[machine] owner_load_file` is OWNERS/load/HOST, which this script
writes (its `keyboard_devices` is OWNERS/kbd/HOST, touched when an owner
starts to work); START stays true, so an owner slows a job rather than
evicting it. A job is 3 tasks (the paper's 3-process matrix multiply, one
cluster each) submitted at once, task k preferring agent-0k (`rank`); each
is bench/migration/job.py: WORK seconds of work, slowed by its host's
owner as the decider models it, checkpointing every CKPT seconds and on
SIGTERM (checkpoint_exit_code = 85).

Policies: off = `[migration] enabled = false` on every agent (a task stays
where it started, slowed while that owner works); on = `enabled = true,
to_idle = true, interval_secs = 1, min_residence_secs = 5, restart_secs =
2` (the margin, 25 %, and the hourly limit, 4, are the defaults), with
`[machine] policy_interval_secs = 1`. Switching restarts every agent.

Scenarios (each run of one is paired: the same owners for off and on):
- random: each of the 3 workstations' owners alternates idle and busy
  periods, exponentially distributed (means --idle-mean, --busy-mean
  seconds), a busy owner's load drawn uniformly from --busy-load; a
  workstation starts busy with probability busy/(idle+busy). Seeded
  (--seed, and the repetition), so off and on see the same owners.
  --reps repetitions, alternating which policy goes first (ABBA).
- loaded (the paper's 1316 -> 760 s): agent-02's owner is busy (load 3)
  for the whole run, agents 00 and 01 have light owners (load 1: their
  task runs at full speed, and a second task there would gain too little
  to be moved there), agent-03 is idle: the third task can move onto it.
- freed (1182 -> 724 s): as loaded, but agent-03 is unavailable (load 100)
  until 10 % of the off run's expected time (the paper's "two minutes" of
  1182 s), then idle.

Times: completion = CompletionDate - QDate from `history -af` (whole
seconds, the brief's measure); the program's time is the longest of its
3 tasks (the paper's run time). NumJobStarts, StarlingNumMigrations and
StarlingMigrationTime come from the history too; the hosts a task ran on
and its checkpoints come from its ledger.
"""
import argparse, csv, os, random, re, shutil, statistics, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import run, set_keys, wait_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT_EXIT = 85
AGENTS = 4
WORKSTATIONS = 3  # agents 00-02; agent-03 is the fourth machine
UNAVAILABLE = 100.0
PAPER = {  # the paper's means (seconds), policy 1 (off) -> policy 2 (on)
    "random": (359.0, 177.0),
    "loaded": (1316.0, 760.0),
    "freed": (1182.0, 724.0),
}
PAPER_FASTEST = 154.0  # the paper's shortest run (migrate-when-idle): its unloaded time
HISTORY_ATTRS = ["ClusterId", "QDate", "CompletionDate", "NumJobStarts",
                 "StarlingNumMigrations", "StarlingMigrationTime", "NumCkpts",
                 "RemoteWallClockTime", "StarlingBadputTime"]


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Net:
    """A testnet of the release binary, its owners emulated in `owners`."""

    def __init__(self, starling, tmp):
        self.starling = starling
        self.dir = os.path.join(tmp, "net")
        extra = ["--jobs", "account=nobody"] if os.geteuid() == 0 else []
        run(starling, "testnet", "up", "--dir", self.dir, "--agents", str(AGENTS),
            "--refresh-secs", "1", "--lifetime-secs", "10",
            "--jobs", "cgroups=off", "--jobs", "private_tmp=false", *extra,
            "--timeout", "300", timeout=400)
        self.owners = os.path.join(tmp, "owners")
        for sub in ("load", "kbd", "where"):
            os.makedirs(os.path.join(self.owners, sub), exist_ok=True)
        for d in (self.owners, os.path.join(self.owners, "where")):
            os.chmod(d, 0o777)
        self.policy = None

    def name(self, i):
        return f"agent-{i:02d}"

    def path(self, i):
        return os.path.join(self.dir, self.name(i))

    def host(self, i):
        return f"{self.name(i)}.d0.testnet"

    def slot(self, i):
        return f"slot1@{self.host(i)}"

    def set_load(self, i, load):
        path = os.path.join(self.owners, "load", self.host(i))
        tmp = path + ".new"
        with open(tmp, "w") as f:
            f.write(f"{load:.2f} {load:.2f} {load:.2f} 1/1 1\n")
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)

    def touch_keyboard(self, i, ago=0):
        path = os.path.join(self.owners, "kbd", self.host(i))
        open(path, "a").close()
        t = time.time() - ago
        os.utime(path, (t, t))

    def configure(self, policy):
        """Every agent's owner files and `[migration]` for `policy` ("off"
        or "on"), each agent restarted."""
        on = policy == "on"
        for i in range(AGENTS):
            if self.policy is None:
                self.set_load(i, 0.0)
                self.touch_keyboard(i, ago=3600)
            path = os.path.join(self.path(i), "agent.toml")
            text = open(path).read()
            text = set_keys(text, "machine", {
                "owner_load_file": toml_str(os.path.join(self.owners, "load", self.host(i))),
                "keyboard_devices": f"[{toml_str(os.path.join(self.owners, 'kbd', self.host(i)))}]",
                "policy_interval_secs": "1",
            })
            text = set_keys(text, "migration", {
                "enabled": "true" if on else "false",
                "to_idle": "true",
                "interval_secs": "1",
                "min_residence_secs": "5",
                "restart_secs": "2",
            })
            run(self.starling, "testnet", "kill", "--dir", self.dir, self.name(i), "--signal",
                "term", check=False)
            open(path, "w").write(text)
            run(self.starling, "testnet", "start", "--dir", self.dir, self.name(i),
                "--timeout", "120", timeout=200)
        self.policy = policy
        for i in range(AGENTS):
            wait_for(f"{self.name(i)} to see all {AGENTS} machines",
                     lambda: self.sees_all(i), 120, every=1)

    def sees_all(self, i):
        out = run(self.starling, "status", "-af", "Name", "--agent", self.path(i), check=False)
        names = set(out.stdout.split())
        return out.returncode == 0 and all(self.slot(j) in names for j in range(AGENTS))

    def down(self):
        run(self.starling, "testnet", "down", "--dir", self.dir, check=False)


class Owners(threading.Thread):
    """Plays a schedule of owner loads: {agent: [(seconds, load), ...]}."""

    def __init__(self, net, schedule, t0):
        super().__init__(daemon=True)
        self.net, self.schedule, self.t0 = net, schedule, t0
        self.stop = threading.Event()

    def run(self):
        current = {}
        while not self.stop.is_set():
            now = time.time() - self.t0
            for i, segs in self.schedule.items():
                load = [l for t, l in segs if t <= now][-1]
                if current.get(i) != load:
                    self.net.set_load(i, load)
                    if load > current.get(i, 0.0) and load < UNAVAILABLE:
                        self.net.touch_keyboard(i)
                    current[i] = load
            self.stop.wait(0.1)


def random_schedule(a, rep):
    rng = random.Random(f"hector-{a.seed}-{rep}")
    lo, hi = a.busy_load
    horizon = 30 * a.work
    sched = {}
    for i in range(WORKSTATIONS):
        busy = rng.random() < a.busy_mean / (a.busy_mean + a.idle_mean)
        t, segs = 0.0, []
        while t < horizon:
            segs.append((t, float(rng.randint(lo, hi)) if busy else 0.0))
            t += rng.expovariate(1.0 / (a.busy_mean if busy else a.idle_mean))
            busy = not busy
        sched[i] = segs
    sched[3] = [(0.0, UNAVAILABLE)]
    return sched


def scenario_schedule(a, kind):
    busy = 3.0
    sched = {0: [(0.0, 1.0)], 1: [(0.0, 1.0)], 2: [(0.0, busy)]}
    if kind == "loaded":
        sched[3] = [(0.0, 0.0)]
    else:
        # The paper's two minutes of its 1182 s off run.
        free_at = 120.0 / 1182.0 * a.work * (busy + 1.0) / 2.0
        sched[3] = [(0.0, UNAVAILABLE), (free_at, 0.0)]
    return sched


def ledger(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 5:
                    rows.append((w[0], w[1], float(w[2]), float(w[3]), float(w[4])))
    except OSError:
        pass
    return rows


def history(net):
    out = run(net.starling, "history", "-af", *HISTORY_ATTRS, "--agent", net.path(0), check=False)
    rows = {}
    for line in out.stdout.splitlines():
        w = line.split()
        if len(w) == len(HISTORY_ATTRS):
            rows[w[0]] = dict(zip(HISTORY_ATTRS, w))
    return rows


def queue_empty(net):
    out = run(net.starling, "q", "-af", "ClusterId", "JobStatus", "HoldReason", "--agent",
              net.path(0), check=False)
    held = [l for l in out.stdout.splitlines() if l.split()[1:2] == ["5"]]
    if held:
        sys.exit(f"a task was held: {held}")
    return out.returncode == 0 and not out.stdout.strip()


def num(v, default=0.0):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def one_run(a, net, work, scenario, rep, policy, schedule):
    tag = f"{scenario}-{rep}-{policy}"
    for name in os.listdir(os.path.join(net.owners, "where")):
        os.remove(os.path.join(net.owners, "where", name))
    for i, segs in schedule.items():
        net.set_load(i, segs[0][1])
    time.sleep(2.5)  # the loads in every view (ads refresh every second)
    t0 = time.time()
    owners = Owners(net, schedule, t0)
    owners.start()
    clusters = []
    try:
        for k in range(WORKSTATIONS):
            name = f"{tag}-t{k}"
            led = os.path.join(work, f"{name}.ledger")
            sub = os.path.join(work, f"{name}.sub")
            with open(sub, "w") as f:
                f.write("\n".join([
                    f"executable = {os.path.join(HERE, 'job.py')}",
                    f'arguments = "{name} {net.owners} {led} {a.work} {a.ckpt} {a.step}"',
                    f"checkpoint_exit_code = {CKPT_EXIT}",
                    f'rank = (Name == "{net.slot(k)}") * 10',
                    "request_cpus = 1",
                    "request_memory = 64",
                    f"output = {name}.out",
                    f"error = {name}.err",
                    f"log = {name}.log",
                    "queue",
                ]) + "\n")
            out = run(net.starling, "submit", sub, "--agent", net.path(0), cwd=work)
            clusters.append((k, out.stdout.strip().split()[-1].rstrip("."), led))
        wait_for(f"{tag}: every task to complete", lambda: queue_empty(net),
                 a.work * 8 + 300, every=1)
    finally:
        owners.stop.set()
        owners.join()
    hist = history(net)
    rows = []
    for k, cluster, led in clusters:
        cid = cluster.split(".")[0]
        h = hist.get(cid)
        if h is None:
            sys.exit(f"{tag}: cluster {cid} is not in the history: {sorted(hist)}")
        events = ledger(led)
        starts = [e for e in events if e[0] == "start"]
        hosts = []
        for e in starts:
            short = e[1].split(".")[0]
            if not hosts or hosts[-1] != short:
                hosts.append(short)
        done = [e for e in events if e[0] == "done"]
        rows.append({
            "scenario": scenario, "rep": rep, "policy": policy, "task": k, "cluster": cid,
            "completion_secs": int(num(h["CompletionDate"])) - int(num(h["QDate"])),
            "ledger_secs": round(done[-1][2] - t0, 2) if done else "",
            "first_start_secs": round(starts[0][2] - t0, 2) if starts else "",
            "num_job_starts": int(num(h["NumJobStarts"])),
            "num_migrations": int(num(h["StarlingNumMigrations"])),
            "migration_secs": round(num(h["StarlingMigrationTime"]), 2),
            "num_ckpts": int(num(h["NumCkpts"])),
            "vacates": sum(1 for e in events if e[0] == "vacated"),
            "badput_secs": int(num(h["StarlingBadputTime"])),
            "hosts": ">".join(hosts),
            "work_secs": a.work,
        })
    prog = max(r["completion_secs"] for r in rows)
    for r in rows:
        r["program_secs"] = prog
    print(f"  {tag}: tasks {[r['completion_secs'] for r in rows]} s, program {prog} s, "
          f"moves {[r['num_migrations'] for r in rows]}, hosts {[r['hosts'] for r in rows]}",
          file=sys.stderr, flush=True)
    return rows


def stats(values):
    if not values:
        return "no runs"
    return (f"mean {statistics.mean(values):6.1f}  median {statistics.median(values):6.1f}  "
            f"min-max {min(values):.0f}-{max(values):.0f}  n={len(values)}")


def report(a, rows, out):
    lines = []
    say = lines.append
    say(f"Hector's migrate-to-idle, scaled: each task {a.work:g} s of work unloaded "
        f"(the paper's fastest run {PAPER_FASTEST:.0f} s: scale {a.work / PAPER_FASTEST:.3f}), "
        f"checkpoint every {a.ckpt:g} s; owners idle {a.idle_mean:g} s / busy {a.busy_mean:g} s "
        f"on average, busy load {a.busy_load[0]}-{a.busy_load[1]}; seed {a.seed}.")
    ratios = {}
    for scenario in ("random", "loaded", "freed"):
        got = [r for r in rows if r["scenario"] == scenario]
        if not got:
            continue
        say("")
        say(f"{scenario}:")
        means = {}
        for policy in ("off", "on"):
            rs = [r for r in got if r["policy"] == policy]
            tasks = [r["completion_secs"] for r in rs]
            progs = [r["program_secs"] for r in rs if r["task"] == 0]
            moves = [r["num_migrations"] for r in rs]
            mtime = sum(r["migration_secs"] for r in rs)
            say(f"  {policy:3s} per task:    {stats(tasks)}")
            say(f"  {policy:3s} per program: {stats(progs)}")
            say(f"  {policy:3s} moves per task {statistics.mean(moves) if moves else 0:.2f} "
                f"(per program {3 * statistics.mean(moves) if moves else 0:.2f}), "
                f"StarlingMigrationTime per move {mtime / max(1, sum(moves)):.2f} s, "
                f"NumJobStarts mean {statistics.mean([r['num_job_starts'] for r in rs]) if rs else 0:.2f}")
            means[policy] = (statistics.mean(tasks) if tasks else None,
                             statistics.mean(progs) if progs else None)
        po, pn = PAPER[scenario]
        if means.get("off") and means.get("on") and means["off"][0] and means["on"][0]:
            rt = means["on"][0] / means["off"][0]
            rp = means["on"][1] / means["off"][1]
            ratios[scenario] = (rt, rp, pn / po)
            say(f"  on/off, mean per task {rt:.2f}, mean per program {rp:.2f}; "
                f"the paper {pn:.0f}/{po:.0f} = {pn / po:.2f}")
            pairs = []
            for rep in sorted({r["rep"] for r in got}):
                off = [r["program_secs"] for r in got if r["rep"] == rep and r["policy"] == "off"]
                on = [r["program_secs"] for r in got if r["rep"] == rep and r["policy"] == "on"]
                if off and on:
                    pairs.append(on[0] / off[0])
            if pairs:
                say(f"  paired program ratios on/off: {' '.join(f'{p:.2f}' for p in pairs)}")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    return ratios


def plot(a, rows, ratios, out):
    py = os.path.join(HERE, ".venv", "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", os.path.join(HERE, ".venv")], check=True)
        got = subprocess.run([py, "-m", "pip", "install", "-q", "matplotlib"])
        if got.returncode != 0:
            print("could not install matplotlib: no PNG", file=sys.stderr)
            return
    code = PLOT.format(csv=os.path.join(out, "hector.csv"), png=os.path.join(out, "hector.png"),
                       scale=a.work / PAPER_FASTEST, paper=PAPER, ratios=ratios, work=a.work)
    subprocess.run([py, "-c", code], check=True)


PLOT = r"""
import csv, statistics
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open({csv!r})))
scale, paper, ratios = {scale!r}, {paper!r}, {ratios!r}
fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw=dict(width_ratios=[3, 2]))
rand = [r for r in rows if r["scenario"] == "random"]
colour = dict(off="tab:red", on="tab:blue")
label = dict(off="migration off", on="migration on (to_idle)")
allv = [int(r["completion_secs"]) for r in rand] or [0]
lo, hi = min(allv + [int({work!r})]), max(allv)
width = max(2, (hi - lo) // 15 + 1)
bins = list(range(lo - lo % width, hi + 2 * width, width))
for p in ("off", "on"):
    v = [int(r["completion_secs"]) for r in rand if r["policy"] == p]
    if not v:
        continue
    ax.hist(v, bins=bins, histtype="step", linewidth=2, color=colour[p],
            label=f"{{label[p]}}: mean {{statistics.mean(v):.0f}} s, n={{len(v)}}")
    ax.axvline(statistics.mean(v), color=colour[p], linestyle="-", linewidth=1)
po, pn = paper["random"]
ax.axvline(po * scale, color=colour["off"], linestyle=":", linewidth=2,
           label=f"paper, migrate-when-busy: {{po:.0f}} s x {{scale:.3f}}")
ax.axvline(pn * scale, color=colour["on"], linestyle=":", linewidth=2,
           label=f"paper, also-migrate-when-idle: {{pn:.0f}} s x {{scale:.3f}}")
ax.axvline({work!r}, color="grey", linestyle="--", linewidth=1, label="unloaded ({work:g} s of work)")
ax.set_xlabel("task completion time (s), submit to completion")
ax.set_ylabel("tasks")
ax.set_title("random owners on 3 workstations (cf. Hector Figure 6)")
ax.legend(fontsize=8)
names, ours_t, ours_p, theirs = [], [], [], []
for s in ("random", "loaded", "freed"):
    if s in ratios:
        names.append(s)
        ours_t.append(ratios[s][0]); ours_p.append(ratios[s][1]); theirs.append(ratios[s][2])
x = range(len(names))
bx.bar([i - 0.27 for i in x], ours_t, 0.27, label="Starling, mean per task", color="tab:blue")
bx.bar([i for i in x], ours_p, 0.27, label="Starling, mean per program (3 tasks)", color="tab:cyan")
bx.bar([i + 0.27 for i in x], theirs, 0.27, label="Hector (paper)", color="tab:grey")
for i in x:
    for dx, v in ((-0.27, ours_t[i]), (0, ours_p[i]), (0.27, theirs[i])):
        bx.text(i + dx, v + 0.01, f"{{v:.2f}}", ha="center", fontsize=8)
bx.set_xticks(list(x))
bx.set_xticklabels([dict(random="random owners\n359->177", loaded="3rd loaded\n1316->760",
                         freed="machine freed\n1182->724")[n] for n in names])
bx.axhline(1.0, color="black", linewidth=0.5)
bx.set_ylabel("mean completion time, on / off")
bx.set_ylim(0, 1.35)
bx.set_title("migration on / off")
bx.legend(fontsize=8, loc="upper right")
fig.tight_layout()
fig.savefig({png!r}, dpi=110)
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starling", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "release", "starling"))
    p.add_argument("--out", default="bench-out/migration")
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--work", type=float, default=30.0)
    p.add_argument("--ckpt", type=float, default=10.0)
    p.add_argument("--step", type=float, default=0.25)
    p.add_argument("--idle-mean", type=float, default=60.0)
    p.add_argument("--busy-mean", type=float, default=60.0)
    p.add_argument("--busy-load", default="2-8")
    p.add_argument("--seed", type=int, default=4)
    p.add_argument("--only", default="random,loaded,freed")
    p.add_argument("--keep", action="store_true", help="keep the testnet's directory")
    a = p.parse_args()
    lo, _, hi = a.busy_load.partition("-")
    a.busy_load = (int(lo), int(hi or lo))
    starling = os.path.abspath(a.starling)
    if not os.access(starling, os.X_OK):
        sys.exit(f"no starling binary at {starling}: cargo build --release -p starling-cli")
    only = a.only.split(",")
    os.makedirs(a.out, exist_ok=True)
    # Runs: random repetitions ABBA (off on, on off, ...), then the
    # scenarios, grouped to switch policy as seldom as possible.
    plan = []
    for rep in range(a.reps if "random" in only else 0):
        order = ("off", "on") if rep % 2 == 0 else ("on", "off")
        plan += [("random", rep, p_) for p_ in order]
    last = plan[-1][2] if plan else "off"
    other = "on" if last == "off" else "off"
    for policy in (last, other):
        plan += [(s, 0, policy) for s in ("loaded", "freed") if s in only]
    tmp = tempfile.mkdtemp(prefix="hector-")
    os.chmod(tmp, 0o755)
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    os.chmod(work, 0o777)
    began = time.time()
    rows = []
    net = Net(starling, tmp)
    try:
        for scenario, rep, policy in plan:
            if net.policy != policy:
                t = time.time()
                net.configure(policy)
                print(f"migration {policy}: agents restarted in {time.time() - t:.0f} s",
                      file=sys.stderr, flush=True)
            sched = random_schedule(a, rep) if scenario == "random" else \
                scenario_schedule(a, scenario)
            rows += one_run(a, net, work, scenario, rep, policy, sched)
            with open(os.path.join(a.out, "hector.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
        for i in range(AGENTS):
            shutil.copy(os.path.join(net.path(i), "agent.log"),
                        os.path.join(a.out, f"{net.name(i)}.log"))
    finally:
        net.down()
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}", file=sys.stderr)
    ratios = report(a, rows, a.out)
    plot(a, rows, ratios, a.out)
    print(f"wrote {a.out}/hector.csv, {a.out}/hector.png, {a.out}/summary.txt "
          f"in {time.time() - began:.0f} s")


if __name__ == "__main__":
    main()
