#!/usr/bin/env python3
"""How a pool of real agent processes forms, and what it costs idle.

For each size N (agents dealt round-robin to --domains domains, each
trusting all the others, on loopback): `starling testnet up` is timed from
its start until every agent sees every machine ad it should (the
command's own "joined in X s"), --runs times on a fresh testnet. After the
last run of each size the settled pool is watched for --idle-window
seconds (default 300: the agents' refresh interval, so that every agent's
refresh falls in it once), --settle seconds after it formed (the agents
republish their ads a few times in their first 15 s): CPU per agent (from /proc, the agent and its job watchdog) and
resident memory per agent (the same two processes). Then the testnet is
stopped.

Prints, for each size, the median and range of the formation time, and the
exponent k of the fit t = c * N^k over the medians (least squares on
log-log; N log N is k a little above 1). Writes formation.csv and
idle.csv in --out.

Usage: bench/scale/measure.py [--sizes 25,50,100,200,300] [--domains 10]
       [--runs 3] [--idle-window 300] [--settle 30] [--out DIR]
       [--starling PATH] [--refresh-secs S]
"""
import argparse, csv, math, os, re, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def starling_binary(given):
    if given:
        return given
    path = os.path.join(ROOT, "target", "release", "starling")
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "starling-cli"],
                   cwd=ROOT, check=True)
    return path


def up(starling, directory, agents, domains, timeout, refresh=None):
    """Seconds `testnet up` reports, or None when it gave up."""
    shutil.rmtree(directory, ignore_errors=True)
    started = time.monotonic()
    command = [starling, "testnet", "up", "--dir", directory, "--agents", str(agents),
               "--domains", str(domains), "--timeout", str(timeout)]
    if refresh:
        command += ["--refresh-secs", str(refresh), "--lifetime-secs", str(3 * refresh)]
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    found = re.search(r"joined in ([0-9.]+) s", run.stdout + run.stderr)
    if run.returncode != 0 or not found:
        tail = (run.stdout + run.stderr).strip().splitlines()[-6:]
        print(f"  N={agents}: did not join in {timeout} s ({wall:.0f} s wall):", file=sys.stderr)
        for line in tail:
            print(f"    {line}", file=sys.stderr)
        return None
    return float(found.group(1))


def down(starling, directory):
    subprocess.run([starling, "testnet", "down", "--dir", directory],
                   capture_output=True, text=True)


def agent_pids(directory):
    pids = []
    for entry in sorted(os.listdir(directory)):
        pid_file = os.path.join(directory, entry, "agent.pid")
        if entry.startswith("agent-") and os.path.exists(pid_file):
            try:
                pids.append(int(open(pid_file).read().strip()))
            except ValueError:
                pass
    return pids


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def family(pid):
    """The agent and its watchdog (and anything else it runs idle)."""
    return [pid] + children(pid)


def cpu_ticks(pid):
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


def kib(pid, name, field):
    """A KiB figure of /proc/PID/<name>: VmRSS in `status`, or Pss in
    `smaps_rollup` (proportional set size: pages shared with other
    processes, such as the binary's text every agent maps, count as a
    share)."""
    try:
        for line in open(f"/proc/{pid}/{name}"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def threads(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def idle(directory, window):
    """Per agent: share of one core over `window` s, RSS and PSS MiB,
    threads."""
    pids = agent_pids(directory)
    hz = os.sysconf("SC_CLK_TCK")
    before = {p: sum(cpu_ticks(q) for q in family(p)) for p in pids}
    time.sleep(window)
    after = {p: sum(cpu_ticks(q) for q in family(p)) for p in pids}
    cpu = [(after[p] - before[p]) / hz / window * 100 for p in pids]
    rss = [sum(kib(q, "status", "VmRSS") for q in family(p)) / 1024 for p in pids]
    pss = [sum(kib(q, "smaps_rollup", "Pss") for q in family(p)) / 1024 for p in pids]
    thr = [threads(p) for p in pids]
    return cpu, rss, pss, thr


def formation_cpu(directory):
    """CPU-seconds the agents (and watchdogs) used so far, per agent."""
    pids = agent_pids(directory)
    hz = os.sysconf("SC_CLK_TCK")
    total = sum(cpu_ticks(q) for p in pids for q in family(p)) / hz
    return total / max(len(pids), 1)


def fit_exponent(points):
    """k of t = c * N^k, least squares on log-log."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return float("nan")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="25,50,100,200,300")
    ap.add_argument("--domains", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    # A whole refresh interval (60 s): a shorter window catches a pool's
    # refresh wave or misses it, and read 0.18-0.65% for the same pool.
    ap.add_argument("--idle-window", type=int, default=300)
    ap.add_argument("--refresh-secs", type=int, default=None,
                    help="the agents' ad refresh interval (lifetime three times it); "
                         "default the agents' own (300 s)")
    ap.add_argument("--settle", type=int, default=30)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--dir", default="/tmp/starling-scale")
    ap.add_argument("--starling")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    starling = starling_binary(args.starling)
    os.makedirs(args.out, exist_ok=True)
    formation, idles, medians = [], [], []
    for n in sizes:
        times, cpus = [], []
        for run in range(args.runs):
            directory = os.path.join(args.dir, f"n{n}")
            t = up(starling, directory, n, args.domains, args.timeout, args.refresh_secs)
            spent = formation_cpu(directory) if t is not None else None
            formation.append((n, run, t if t is not None else "",
                              f"{spent:.3f}" if spent is not None else ""))
            if t is not None:
                times.append(t)
                cpus.append(spent)
            last = run == args.runs - 1
            if last and t is not None and args.idle_window > 0:
                time.sleep(args.settle)
                cpu, rss, pss, thr = idle(directory, args.idle_window)
                idles.append((n, statistics.median(cpu), min(cpu), max(cpu),
                              statistics.median(rss), min(rss), max(rss),
                              statistics.median(pss), min(pss), max(pss),
                              statistics.median(thr)))
            down(starling, directory)
        if times:
            med = statistics.median(times)
            medians.append((n, med))
            print(f"N={n:4d} in {args.domains} domains: formation median {med:6.1f} s "
                  f"(range {min(times):.1f}-{max(times):.1f}, {len(times)}/{args.runs} joined); "
                  f"{statistics.median(cpus):.2f} CPU-s per agent to form",
                  flush=True)
        else:
            print(f"N={n:4d}: no run joined within {args.timeout} s", flush=True)
    for (n, cpu, cpu_lo, cpu_hi, rss, rss_lo, rss_hi, pss, pss_lo, pss_hi, thr) in idles:
        print(f"N={n:4d} idle over {args.idle_window} s, per agent (with its watchdog): "
              f"CPU median {cpu:.2f}% of a core ({cpu_lo:.2f}-{cpu_hi:.2f}), "
              f"RSS median {rss:.1f} MiB ({rss_lo:.1f}-{rss_hi:.1f}), "
              f"PSS median {pss:.1f} MiB ({pss_lo:.1f}-{pss_hi:.1f}), {thr:.0f} threads")
    if len(medians) >= 2:
        print(f"fitted exponent of formation time over N: {fit_exponent(medians):.2f} "
              f"(1 is linear; N log N over this range is about 1.2)")
    with open(os.path.join(args.out, "formation.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agents", "domains", "run", "seconds", "cpu_s_per_agent"])
        for n, run, t, spent in formation:
            w.writerow([n, args.domains, run, t, spent])
    with open(os.path.join(args.out, "idle.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agents", "cpu_pct_median", "cpu_pct_min", "cpu_pct_max",
                    "rss_mib_median", "rss_mib_min", "rss_mib_max",
                    "pss_mib_median", "pss_mib_min", "pss_mib_max", "threads_median"])
        for row in idles:
            w.writerow([f"{v:.3f}" if isinstance(v, float) else v for v in row])


if __name__ == "__main__":
    main()
