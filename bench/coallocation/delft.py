#!/usr/bin/env python3
"""Sinaga's experiments E1-E5 (Delft 2004, seed 002, ch. 6; issue 19) on a
testnet: batches of 40 co-allocated 4-component jobs on emulated DAS-2
clusters of {144, 64, 64, 64} processors, worst-fit placement, FCFS or FPFS,
and the jobs' response time, runtime and overhead next to the thesis'.

    flock /tmp/starling-e2e.lock bench/coallocation/delft.py --out bench-out/coallocation
        [--experiments E1,E2,E3,E4,E5] [--seed 1] [--time-scale 0.2]
        [--scale-processors 4] [--rule worst-fit|best-fit] [--mix alternate|shuffle]
        [--starling PATH] [--timeout SECS] [--keep]
    bench/coallocation/delft.py --dry-run [--out DIR]   # the workload and the model, nothing run
    bench/coallocation/delft.py --simulate --out DIR    # jobs.csv from the model (tests the rest)
    bench/coallocation/delft.py --replot DIR/jobs.csv --out DIR

Writes DIR/jobs.csv (one row per job), DIR/summary.csv (one row per
experiment: ours, the model's and the thesis' figures), DIR/summary.txt
(what is printed), DIR/delft.png and the agents' logs. See README.md in this
folder for the method and what each figure means.

Run as root (the jobs run as nobody, like the other benches); one testnet
per cluster set: E1 on four domains, E2-E5 on two.
"""
import argparse, csv, math, os, random, re, shutil, signal, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import run, set_keys, wait_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# The thesis. J.M.P. Sinaga, "A Dynamic Co-allocation Service in Multicluster
# Systems", M.Sc. thesis, TU Delft, April 2004 (/work/shared/seeds/002_*.txt).
# Page numbers are the table of contents' (the seed's text has no page
# breaks): ch. 3.2 p. 12-15, 4.3.3 p. 22, 4.3.4 p. 23, 6.2 p. 37, 6.3 p. 37-41.
# ---------------------------------------------------------------------------

# §6.2 (p. 37): "fs0 which has 144 processors, and three other clusters (fs1,
# fs2, and fs3), each of which has 64 processors"; only E1 used all four,
# the others fs0 and fs3 ("because of some instability exhibited by the other
# clusters at that time").
THESIS_CLUSTERS = {"fs0": 144, "fs1": 64, "fs2": 64, "fs3": 64}
# §6.2: "we submit a batch of 40 jobs of the Poisson application"; "All of the
# jobs arrive in the Scheduler at nearly the same time, so there is no
# inter-arrival time among them"; "Every job has 4 components (subjobs) of
# equal size which is either of 4x8 cluster configuration or 4x4" (4x8: four
# components of 8 processors, 32 in all: §6.3 "at most 7 jobs" in 224
# processors; ch. 7 "max. 32 processors"; App. B: four RSL subjobs of
# count=8).
JOBS = 40
COMPONENTS = 4
# Agents emulating each cluster (a domain of the testnet): fs0 by 3, each
# 64-processor cluster by 2, so at most 9 agents (E1) on a 2-core host.
AGENTS_PER_CLUSTER = {"fs0": 3, "fs1": 2, "fs2": 2, "fs3": 2}

# §6.3 (p. 37-41), one paragraph and one figure (a load diagram) each. The
# rule: the thesis never names one for ch. 6, so DCS's default, worst-fit
# (App. A.3: "The default option for the scheduling policy is FCFS, and for
# the fitting algorithm it is worst-fit").
EXPERIMENTS = {
    # "4 clusters are employed, all jobs are unordered, each of which has 4x8
    # cluster configuration, and the scheduling policy is FCFS" (Fig. 6.2)
    "E1": dict(clusters=("fs0", "fs1", "fs2", "fs3"), size=8, request="unordered",
               queueing="fcfs", figure="6.2"),
    # "the same conditions as those of the first experiment ... only 2
    # clusters are employed: the one with 144 processors, and the other one
    # with 64 processors" (Fig. 6.3: fs0 + fs3)
    "E2": dict(clusters=("fs0", "fs3"), size=8, request="unordered", queueing="fcfs",
               figure="6.3"),
    # "the same conditions as those of the second experiment ... every job has
    # 4x4 cluster configuration" (Fig. 6.4)
    "E3": dict(clusters=("fs0", "fs3"), size=4, request="unordered", queueing="fcfs",
               figure="6.4"),
    # "the same job size and scheduling policy as those of the second
    # experiment ... ordered jobs ... two components go to the cluster with 144
    # processors and the other two go to the cluster with 64" (Fig. 6.5)
    "E4": dict(clusters=("fs0", "fs3"), size=8, request="ordered", queueing="fcfs",
               figure="6.5"),
    # "FPFS as the scheduling policy. In addition, a half of the jobs are
    # ordered and the rest are unordered. All other conditions are the same as
    # those of the fourth experiment" (Fig. 6.6)
    "E5": dict(clusters=("fs0", "fs3"), size=8, request="mix", queueing="fpfs",
               figure="6.6"),
}

# The only table of figures the seed's text keeps (mean and standard
# deviation over the 40 jobs, seconds). It stands between the caption of
# Fig. 6.5 and that of Fig. 6.6, i.e. inside Fig. 6.6 (captions are below
# their figures): E5. The other four figures' tables did not survive the
# text extraction (they were part of the figure images); for E1-E4 the
# thesis gives only the comparisons in THESIS_CLAIMS and the concurrency in
# THESIS_MAX_CONCURRENT.
THESIS_RESULTS = {
    "E5": {"response": (634.7, 335.3), "runtime": (92.4, 15.6), "overhead": (25.3, 6.5)},
}
# §6.3, E1: "the system load lies at 66.67% level for the flat segments,
# meaning that only 224 processors at most can be allocated at the same time
# for DCS jobs ... at most 7 jobs"; E2: "at most 5 jobs ... at the same time".
# (Fewer than the clusters hold, 10 and 6: other users' jobs ran too.)
THESIS_MAX_CONCURRENT = {"E1": 7, "E2": 5}
# §6.3's comparisons, (a, relation, b, figure, quote): duration is the whole
# experiment's (first submission to last completion).
THESIS_CLAIMS = [
    ("E2", ">", "E1", "duration", "fewer clusters increase the duration of the experiment"),
    ("E2", ">", "E1", "response", "... and also the average response time"),
    ("E2", ">", "E3", "duration", "the total duration of the second experiment is longer"),
    # Not testable here: the generator gives 4x4 and 4x8 jobs the same
    # runtimes (the thesis gives no 4x4 figure), so this one holds by chance.
    ("E2", ">", "E3", "runtime", "... but also to the longer average runtime"),
    ("E4", ">", "E2", "duration", "total duration ... significantly longer"),
    ("E4", ">", "E2", "response", "... and average response time ... significantly longer"),
    ("E5", "<", "E4", "duration", "the total duration ... improved as compared to the fourth"),
    ("E5", "<", "E4", "response", "... and average response time are improved"),
]
# The Poisson application's runtime (Fig. 6.6's table, the only one given):
# runtimes are drawn from this normal distribution, cut at two standard
# deviations, for 4x8 and 4x4 jobs alike (E3's mean is not given; §6.3 says
# only that it was shorter than E2's).
RUNTIME_MEAN, RUNTIME_SD = 92.4, 15.6

METRICS = ("response", "runtime", "overhead")


# ---------------------------------------------------------------------------
# The workload generator
# ---------------------------------------------------------------------------

def scaled_clusters(exp, sp):
    """(cluster, processors) of an experiment, processors divided by sp."""
    return [(c, THESIS_CLUSTERS[c] // sp) for c in EXPERIMENTS[exp]["clusters"]]


def domain_of(exp, cluster):
    """The testnet domain emulating a cluster: the experiment's clusters in
    order are d0, d1, ... (E1: fs0-fs3 = d0-d3; E2-E5: fs0 = d0, fs3 = d1)."""
    return f"d{EXPERIMENTS[exp]['clusters'].index(cluster)}.testnet"


def workload(exp, seed, sp, time_scale, mix="alternate"):
    """The 40 jobs of an experiment, in submission order. Deterministic in
    `seed`: the runtimes are the same sequence in every experiment (common
    random numbers), so experiments differ only in what the thesis varied."""
    e = EXPERIMENTS[exp]
    rng = random.Random(f"delft/{seed}/runtimes")
    runtimes = []
    while len(runtimes) < JOBS:
        r = rng.gauss(RUNTIME_MEAN, RUNTIME_SD)
        if abs(r - RUNTIME_MEAN) <= 2 * RUNTIME_SD:
            runtimes.append(round(r, 1))
    if e["request"] == "mix":
        # An even mix (§6.3); App. A.3's batch file for it is named
        # poisson_4_32_mix-ord-uno.bat: ordered and unordered alternating,
        # ordered first. --mix shuffle: 20 of each in a seeded random order.
        ordered = [j % 2 == 0 for j in range(JOBS)]
        if mix == "shuffle":
            random.Random(f"delft/{seed}/mix").shuffle(ordered)
    else:
        ordered = [e["request"] == "ordered"] * JOBS
    clusters = e["clusters"]
    jobs = []
    for j in range(JOBS):
        comps = []
        for k in range(COMPONENTS):
            # Ordered: the components spread evenly over the clusters in
            # order (§6.3 E4: two on fs0, two on fs3).
            cluster = clusters[k * len(clusters) // COMPONENTS] if ordered[j] else None
            comps.append({"nodes": e["size"] // sp, "cluster": cluster})
        jobs.append({"experiment": exp, "job": j, "ordered": ordered[j], "components": comps,
                     "runtime_thesis": runtimes[j],
                     "runtime": round(runtimes[j] * time_scale, 2)})
    return jobs


def submit_text(job, rule, node_sh, stamps):
    """The submit file of one job: HTCondor's parallel universe, one queue
    statement (one proc of the cluster) per component."""
    e = job["experiment"]
    sizes = "+".join(str(c["nodes"]) for c in job["components"])
    kind = "ordered" if job["ordered"] else "unordered"
    lines = [f"# {e} job {job['job']:02d}: {kind}, components {sizes}, runtime "
             f"{job['runtime_thesis']} s (thesis) = {job['runtime']} s here",
             "universe = parallel",
             f"executable = {node_sh}",
             f"co_allocation = {rule.replace('-', '_')}",
             "request_cpus = 1",
             "request_memory = 1",
             "request_disk = 1024",
             '+ParallelShutdownPolicy = "WAIT_FOR_ALL"',
             "should_transfer_files = YES",
             "when_to_transfer_output = ON_EXIT"]
    for k, c in enumerate(job["components"]):
        lines.append(f'arguments = "{e} {job["job"]} {k} $(Node) {stamps} {job["runtime"]}"')
        lines.append(f"machine_count = {c['nodes']}")
        if c["cluster"]:
            lines.append(f"component_domain = {domain_of(e, c['cluster'])}")
        lines.append("queue")
    return "\n".join(lines) + "\n"


# A node of a job: notes when it started, where, and when it ended, in a
# directory every agent's jobs can write (the testnet is one host).
NODE = r"""#!/bin/sh
# $1 experiment, $2 job, $3 component, $4 node, $5 stamps directory, $6 seconds
f="$5/$1-$2-$3-$4"
ad="${_CONDOR_MACHINE_AD:-/dev/null}"
dom=$(sed -n 's/^StarlingDomain *= *"\(.*\)".*$/\1/p' "$ad" 2>/dev/null | head -n 1)
name=$(sed -n 's/^Name *= *"\(.*\)".*$/\1/p' "$ad" 2>/dev/null | head -n 1)
echo "$(date +%s.%N) ${dom:-?} ${name:-?}" > "$f.start.tmp" && mv "$f.start.tmp" "$f.start"
sleep "$6"
date +%s.%N > "$f.end.tmp" && mv "$f.end.tmp" "$f.end"
"""


# ---------------------------------------------------------------------------
# The model: DCS as the thesis designs it (ch. 4), with no overhead and no
# other users. What Starling would do if co-allocation cost nothing.
# ---------------------------------------------------------------------------

def fit(job, idle, rule):
    """The thesis' job fitting (§4.3.3) of `job` on `idle` (cluster ->
    idle processors): the new idle counts, or None if it does not fit.
    Ordered: each component on its cluster, the idle count decreasing as
    components are placed. Unordered: components largest first; modified
    worst-fit takes the unmarked cluster with the most idle processors if
    the component fits there, otherwise the marked one with the most; marks
    are cleared once every cluster is marked (so components spread over as
    many clusters as possible). Modified best-fit: the same with the fewest
    idle processors among the clusters the component fits."""
    idle = dict(idle)
    if job["ordered"]:
        for c in job["components"]:
            if idle[c["cluster"]] < c["nodes"]:
                return None
            idle[c["cluster"]] -= c["nodes"]
        return idle
    marked = set()
    for c in sorted(job["components"], key=lambda c: -c["nodes"]):
        if len(marked) == len(idle):
            marked = set()
        pick = None
        for pool in ([k for k in idle if k not in marked], [k for k in idle if k in marked]):
            fits = [k for k in pool if idle[k] >= c["nodes"]]
            if fits:
                pick = (max if rule == "worst-fit" else min)(fits, key=lambda k: idle[k])
                break
        if pick is None:
            return None
        marked.add(pick)
        idle[pick] -= c["nodes"]
    return idle


def simulate(jobs, clusters, queueing, rule, overhead=0.0):
    """Event simulation of one batch: every job queued at t=0 in order; at
    each (re)scheduling FCFS starts the head of the queue while it fits, FPFS
    the first job that fits (§3.2.2, §4.3.4); a job holds its processors for
    overhead + runtime. Returns {job: (start, end)} in the jobs' time unit."""
    idle = dict(clusters)
    queue = list(jobs)
    running = []  # (end, job, placement idle delta)
    done, t = {}, 0.0
    while queue or running:
        while queue:
            pick = None
            for cand in (queue[:1] if queueing == "fcfs" else queue):
                after = fit(cand, idle, rule)
                if after is not None:
                    pick = (cand, after)
                    break
            if pick is None:
                break
            cand, after = pick
            used = {k: idle[k] - after[k] for k in idle}
            idle = after
            queue.remove(cand)
            end = t + overhead + cand["runtime"]
            running.append((end, cand["job"], used))
            done[cand["job"]] = (t, end)
        if not running:
            sys.exit(f"a job fits nowhere even in an empty system: {queue[0]}")
        running.sort()
        t, _, used = running.pop(0)
        for k, n in used.items():
            idle[k] += n
        # Jobs ending at the same moment free their processors together.
        while running and running[0][0] <= t:
            _, _, used = running.pop(0)
            for k, n in used.items():
                idle[k] += n
    return done


def max_concurrent(intervals):
    """Most intervals (start, end) open at once."""
    # A job that starts as another ends (to the CSV's millisecond) does not
    # overlap it.
    ev = sorted([(s, 1) for s, _ in intervals] + [(e - 0.01, -1) for _, e in intervals])
    best = cur = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best


def model_rows(exp, jobs, a):
    """jobs.csv rows the model predicts (source = model), times in seconds
    here (the thesis' times times --time-scale)."""
    out = simulate(jobs, scaled_clusters(exp, a.scale_processors), EXPERIMENTS[exp]["queueing"],
                   a.rule)
    rows = []
    for job in jobs:
        s, e = out[job["job"]]
        rows.append(job_row(job, a, source="model", submit=0.0, start=s, end=e,
                            node_start=s, node_end=e, coalloc=0.0, spread=0.0, placed=""))
    return rows


# ---------------------------------------------------------------------------
# Rows, summaries, the plot
# ---------------------------------------------------------------------------

JOB_FIELDS = ["source", "experiment", "job", "cluster_id", "components", "sizes", "ordered",
              "domains", "placed", "runtime_asked", "time_scale", "scale_processors", "rule",
              "submit", "start", "end",
              "response", "runtime", "overhead", "wait", "coalloc_overhead", "start_spread",
              "node_start", "node_end", "runs"]


def job_row(job, a, source, submit, start, end, node_start, node_end, coalloc, spread, placed,
            cluster_id="", runs=1):
    """One jobs.csv row. Times are seconds since the experiment's first
    submission. response = end - submit (§6, "the total time since the job is
    submitted to DCS until the job is completed"); runtime = last node's end -
    first node's start ("the time spent by the actual processes to run in
    their allocated processors"); overhead = end - (start - coalloc) -
    runtime: from the first claim of the co-allocation (the thesis' DUROC
    submission) to the completion the queue records, less the processes'
    time (DUROC's "overhead in submission and completion of the job");
    wait = response - runtime - overhead (queued, not yet being placed)."""
    runtime = node_end - node_start
    overhead = end - (start - coalloc) - runtime
    response = end - submit
    return {"source": source, "experiment": job["experiment"], "job": job["job"],
            "cluster_id": cluster_id, "components": len(job["components"]),
            "sizes": "+".join(str(c["nodes"]) for c in job["components"]),
            "ordered": int(job["ordered"]),
            "domains": "+".join(domain_of(job["experiment"], c["cluster"]) if c["cluster"]
                                else "any" for c in job["components"]),
            "placed": placed, "runtime_asked": job["runtime"], "time_scale": a.time_scale,
            "scale_processors": a.scale_processors, "rule": a.rule,
            "submit": round(submit, 3), "start": round(start, 3), "end": round(end, 3),
            "response": round(response, 3), "runtime": round(runtime, 3),
            "overhead": round(overhead, 3), "wait": round(response - runtime - overhead, 3),
            "coalloc_overhead": round(coalloc, 3), "start_spread": round(spread, 3),
            "node_start": round(node_start, 3), "node_end": round(node_end, 3), "runs": runs}


def mean_sd(xs):
    xs = list(xs)
    if not xs:
        return (math.nan, math.nan)
    return (statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)


def summarise(rows):
    """summary.csv rows: per experiment and source (measured, model), the
    mean and standard deviation of each metric in seconds here and in the
    thesis' time (divided by the time scale), next to the thesis' values."""
    out = []
    for (src, exp) in sorted({(r["source"], r["experiment"]) for r in rows},
                             key=lambda k: (k[1], k[0])):
        rs = [r for r in rows if r["source"] == src and r["experiment"] == exp]
        scale = float(rs[0]["time_scale"])
        row = {"experiment": exp, "source": src, "jobs": len(rs), "time_scale": scale,
               "figure": EXPERIMENTS[exp]["figure"]}
        for m in METRICS:
            mu, sd = mean_sd(float(r[m]) for r in rs)
            row[f"{m}_mean"], row[f"{m}_sd"] = round(mu, 3), round(sd, 3)
            row[f"{m}_mean_thesis_time"] = round(mu / scale, 1)
            row[f"{m}_sd_thesis_time"] = round(sd / scale, 1)
            ref = THESIS_RESULTS.get(exp, {}).get(m)
            row[f"thesis_{m}_mean"] = ref[0] if ref else ""
            row[f"thesis_{m}_sd"] = ref[1] if ref else ""
        duration = max(float(r["end"]) for r in rs) - min(float(r["submit"]) for r in rs)
        row["duration"] = round(duration, 3)
        # The thesis' jobs arrived "at nearly the same time": ours over this.
        row["submit_span"] = round(max(float(r["submit"]) for r in rs)
                                   - min(float(r["submit"]) for r in rs), 3)
        row["duration_thesis_time"] = round(duration / scale, 1)
        row["max_concurrent_jobs"] = max_concurrent(
            [(float(r["start"]) - float(r["coalloc_overhead"]), float(r["end"])) for r in rs])
        row["thesis_max_concurrent_jobs"] = THESIS_MAX_CONCURRENT.get(exp, "")
        row["start_spread_max"] = max(float(r["start_spread"]) for r in rs)
        # Jobs that started more than once (a node lost after the start).
        row["jobs_rerun"] = sum(1 for r in rs if int(r.get("runs") or 1) > 1)
        out.append(row)
    return out


def report(rows, summary, a, out):
    lines = []
    say = lines.append
    scale = float(rows[0]["time_scale"]) if rows else a.time_scale
    sp = int(rows[0].get("scale_processors") or a.scale_processors) if rows else a.scale_processors
    say(f"Sinaga ch. 6, E1-E5 on a testnet: 40 jobs of 4 components each, clusters "
        f"{{144, 64, 64, 64}} / {sp} processors, runtimes x {scale:g} "
        f"(thesis time = ours / {scale:g}); rule {a.rule}.")
    say("")
    say("exp  source         response (s)        runtime (s)        overhead (s)     duration  "
        "conc  | thesis time (÷ scale): response / runtime / duration")
    for s in summary:
        say(f"{s['experiment']:4s} {s['source']:14s} "
            f"{s['response_mean']:8.1f} ± {s['response_sd']:7.1f} "
            f"{s['runtime_mean']:8.1f} ± {s['runtime_sd']:6.1f} "
            f"{s['overhead_mean']:7.1f} ± {s['overhead_sd']:6.1f} "
            f"{s['duration']:9.1f}  {s['max_concurrent_jobs']:4d}  | "
            f"{s['response_mean_thesis_time']:.1f} ± {s['response_sd_thesis_time']:.1f} / "
            f"{s['runtime_mean_thesis_time']:.1f} ± {s['runtime_sd_thesis_time']:.1f} / "
            f"{s['duration_thesis_time']:.1f}")
    for s in summary:
        if s["jobs_rerun"]:
            say(f"{s['experiment']} {s['source']}: {s['jobs_rerun']} jobs ran more than once "
                f"(a node lost after the start): not a replay")
    say("")
    for exp in sorted({s["experiment"] for s in summary}):
        ref = THESIS_RESULTS.get(exp)
        if ref:
            say(f"thesis {exp} (Fig. {EXPERIMENTS[exp]['figure']}): response "
                f"{ref['response'][0]} ± {ref['response'][1]} s, runtime {ref['runtime'][0]} ± "
                f"{ref['runtime'][1]} s, overhead {ref['overhead'][0]} ± {ref['overhead'][1]} s")
        if exp in THESIS_MAX_CONCURRENT:
            say(f"thesis {exp}: at most {THESIS_MAX_CONCURRENT[exp]} jobs at once (other "
                f"users' jobs took processors too)")
    say("")
    say("the thesis' comparisons (§6.3), held by:")
    by = {(s["source"], s["experiment"]): s for s in summary}
    key = {"duration": "duration", "response": "response_mean", "runtime": "runtime_mean"}
    for x, rel, y, what, quote in THESIS_CLAIMS:
        verdicts = []
        for src in ("measured", "synthetic", "model", "model+overhead"):
            if (src, x) in by and (src, y) in by:
                vx, vy = by[(src, x)][key[what]], by[(src, y)][key[what]]
                ok = vx > vy if rel == ">" else vx < vy
                verdicts.append(f"{src} {'yes' if ok else 'NO'} ({vx:.2f} vs {vy:.2f})")
        if verdicts:
            untestable = " [same runtimes by construction: not a test]" if what == "runtime" else ""
            say(f"  {x} {rel} {y} in {what} (\"{quote}\"): " + ", ".join(verdicts) + untestable)
    text = "\n".join(lines) + "\n"
    print(text)
    open(os.path.join(out, "summary.txt"), "w").write(text)


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


PLOT = r"""
import csv, math
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
summary = list(csv.DictReader(open({summary!r})))
jobs = list(csv.DictReader(open({jobs!r})))
clusters = {clusters!r}
figures = {figures!r}
exps = sorted({{s["experiment"] for s in summary}})
fig = plt.figure(figsize=(15, 9))
# Top: the three metrics; bottom: one load diagram per experiment.
cols = math.lcm(3, len(exps))
grid = fig.add_gridspec(2, cols)
top, bottom = cols // 3, cols // len(exps)
colors = {{"measured": "tab:blue", "synthetic": "tab:purple", "model": "tab:green",
          "model+overhead": "tab:olive",
          "thesis": "tab:red"}}
ours = [s for s in ("measured", "synthetic") if any(r["source"] == s for r in summary)]
for i, metric in enumerate(("response", "runtime", "overhead")):
    ax = fig.add_subplot(grid[0, i * top:(i + 1) * top])
    width = 0.2
    for j, src in enumerate(ours[:1] + ["model", "model+overhead", "thesis"]):
        xs, ys, es = [], [], []
        for x, e in enumerate(exps):
            if src == "thesis":
                s = next((s for s in summary if s["experiment"] == e), None)
                if s is None or not s["thesis_" + metric + "_mean"]:
                    continue
                y, err = float(s["thesis_" + metric + "_mean"]), float(s["thesis_" + metric + "_sd"])
            else:
                s = next((s for s in summary if s["experiment"] == e and s["source"] == src), None)
                if s is None:
                    continue
                # Overheads are the middleware's, not the workload's: not scaled.
                unit = "" if metric == "overhead" else "_thesis_time"
                y = float(s[metric + "_mean" + unit])
                err = float(s[metric + "_sd" + unit])
            xs.append(x + (j - 1.5) * width)
            ys.append(y)
            es.append(err)
        if xs:
            label = {{"measured": "Starling",
                      "synthetic": "SYNTHETIC timings",
                      "model": "model: DCS, no overhead",
                      "model+overhead": "model with our mean overhead",
                      "thesis": "thesis (DAS-2, 2004)"}}[src]
            ax.bar(xs, ys, width, yerr=es, capsize=3, color=colors[src], label=label, alpha=0.85)
    ax.set_xlim(-0.6, len(exps) - 0.4)
    ax.set_xticks(range(len(exps)))
    ax.set_xticklabels(exps)
    ax.set_title(metric + (": mean ± sd, s (ours as measured)" if metric == "overhead"
                           else ": mean ± sd, thesis s (ours ÷ time scale)"), fontsize=10)
    if i == 0:
        ax.legend(fontsize=8)
for x, e in enumerate(exps):
    ax = fig.add_subplot(grid[1, x * bottom:(x + 1) * bottom])
    total = sum(clusters[e])
    for src in ours[:1] + ["model"]:
        rs = [r for r in jobs if r["experiment"] == e and r["source"] == src]
        if not rs:
            continue
        scale = float(rs[0]["time_scale"])
        ev = []
        for r in rs:
            procs = sum(int(n) for n in r["sizes"].split("+"))
            ev.append((float(r["node_start"]) / scale, procs))
            ev.append((float(r["node_end"]) / scale, -procs))
        ev.sort()
        t, y, cur = [0.0], [0.0], 0
        for when, d in ev:
            t.append(when); y.append(cur)
            cur += d
            t.append(when); y.append(cur)
        ax.plot(t, [100.0 * v / total for v in y], color=colors[src], lw=1,
                label={{"model": "model"}}.get(src, "Starling" if src == "measured" else src))
    ax.set_ylim(0, 105)
    ax.set_title(f"{{e}}: load of our jobs (thesis Fig. {{figures[e]}})", fontsize=9)
    ax.set_xlabel("thesis seconds since submission")
    if x == 0:
        ax.set_ylabel("% of the clusters' processors")
        ax.legend(fontsize=8)
fig.suptitle({title!r})
fig.tight_layout()
fig.savefig({png!r}, dpi=110)
"""


def plot(a, out, rows):
    py = os.path.join(HERE, ".venv", "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", os.path.join(HERE, ".venv")], check=True)
        if subprocess.run([py, "-m", "pip", "install", "-q", "matplotlib"]).returncode != 0:
            print("could not install matplotlib: no PNG", file=sys.stderr)
            return
    # The load diagrams: processors in use over the clusters' (both scaled).
    sp = int(rows[0].get("scale_processors") or a.scale_processors)
    clusters = {e: [n // sp for _, n in ((c, THESIS_CLUSTERS[c]) for c in EXPERIMENTS[e]["clusters"])]
                for e in EXPERIMENTS}
    title = (f"Sinaga ch. 6 E1-E5 on a Starling testnet: 40 jobs of 4 components, "
             f"{{144,64,64,64}}/{sp} processors, runtimes x {rows[0]['time_scale']}")
    subprocess.run([py, "-c", PLOT.format(
        summary=os.path.join(out, "summary.csv"), jobs=os.path.join(out, "jobs.csv"),
        clusters=clusters, figures={e: v["figure"] for e, v in EXPERIMENTS.items()},
        title=title, png=os.path.join(out, "delft.png"))], check=True)


def jobs_from_rows(rows):
    """The workload of one experiment's jobs.csv rows."""
    jobs = []
    for r in sorted(rows, key=lambda r: int(r["job"])):
        exp = r["experiment"]
        comps = [{"nodes": int(n),
                  "cluster": None if d == "any" else EXPERIMENTS[exp]["clusters"][
                      int(d.split(".")[0][1:])]}
                 for n, d in zip(r["sizes"].split("+"), r["domains"].split("+"))]
        jobs.append({"experiment": exp, "job": int(r["job"]), "ordered": bool(int(r["ordered"])),
                     "components": comps, "runtime": float(r["runtime_asked"]),
                     "runtime_thesis": float(r["runtime_asked"]) / float(r["time_scale"])})
    return jobs


def with_our_overhead(rows):
    """Rows (source model+overhead) of the model run again with each job
    holding its processors for our mean overhead more: what a co-allocator
    as good as DCS's design but as slow as ours to start and end jobs gives.
    Ours above it means time lost between jobs (a stale view, slow
    rescheduling, claims that failed)."""
    out = []
    for (src, exp) in sorted({(r["source"], r["experiment"]) for r in rows}):
        if src not in ("measured", "synthetic"):
            continue
        rs = [r for r in rows if r["source"] == src and r["experiment"] == exp]
        a = argparse.Namespace(time_scale=float(rs[0]["time_scale"]),
                               scale_processors=int(rs[0]["scale_processors"]),
                               rule=rs[0]["rule"])
        over = statistics.fmean(float(r["overhead"]) for r in rs)
        jobs = jobs_from_rows(rs)
        done = simulate(jobs, scaled_clusters(exp, a.scale_processors),
                        EXPERIMENTS[exp]["queueing"], a.rule, overhead=over)
        for job in jobs:
            s, e = done[job["job"]]
            out.append(job_row(job, a, "model+overhead", 0.0, s + over, e, s + over, e, over,
                               0.0, ""))
    return out


def finish(a, rows):
    """summary.csv, summary.txt and the PNG from the jobs' rows."""
    rows = [r for r in rows if r["source"] != "model+overhead"]
    rows += with_our_overhead(rows)
    summary = summarise(rows)
    write_csv(os.path.join(a.out, "jobs.csv"), rows, JOB_FIELDS)
    write_csv(os.path.join(a.out, "summary.csv"), summary, list(summary[0]))
    report(rows, summary, a, a.out)
    plot(a, a.out, rows)
    print(f"wrote {a.out}/jobs.csv, {a.out}/summary.csv, {a.out}/summary.txt, {a.out}/delft.png")


# ---------------------------------------------------------------------------
# The testnet
# ---------------------------------------------------------------------------

class Net:
    """A testnet emulating an experiment's clusters: cluster i is domain
    d<i>.testnet. `testnet up` deals agents to domains round-robin, so with
    2K+1 agents d0 (fs0) gets three and every other domain two; each agent
    then gets its share of its cluster's processors (`[machine] cpus`) and
    the co-allocation settings, and is restarted."""

    def __init__(self, a, root, clusters):
        self.a, self.starling, self.clusters = a, a.starling, clusters
        k = len(clusters)
        assert AGENTS_PER_CLUSTER[clusters[0]] == 3 and all(
            AGENTS_PER_CLUSTER[c] == 2 for c in clusters[1:])
        self.agents = 2 * k + 1
        self.dir = os.path.join(root, f"net-{k}")
        self.cpus = {}
        for i in range(self.agents):
            c = clusters[i % k]
            self.cpus[i] = THESIS_CLUSTERS[c] // a.scale_processors // AGENTS_PER_CLUSTER[c]
        t = time.time()
        run(self.starling, "testnet", "up", "--dir", self.dir, "--agents", str(self.agents),
            "--domains", str(k), "--cpus", str(self.cpus[0]), "--refresh-secs", "1",
            "--lifetime-secs", "10", "--jobs", "account=nobody", "--jobs", "private_tmp=false",
            "--jobs", "cgroups=off", "--timeout", "300", timeout=400)
        log(f"testnet of {self.agents} agents in {k} domains up in {time.time() - t:.0f} s")
        self.queueing = None
        try:
            self.configure(range(self.agents), "fcfs")
        except BaseException:
            # common.run exits (SystemExit) on a failed command: nothing of
            # this testnet may outlive the script.
            self.logs(a.out, f"net{k}")
            self.down()
            raise

    def name(self, i):
        return f"agent-{i:02d}"

    def path(self, i):
        return os.path.join(self.dir, self.name(i))

    def hosts(self):
        return {f"{self.name(i)}.d{i % len(self.clusters)}.testnet": self.cpus[i]
                for i in range(self.agents)}

    def view(self):
        """{StarlingHost: (Cpus, TotalCpus)} in agent-00's view."""
        out = run(self.starling, "status", "-af", "StarlingHost", "Cpus", "TotalCpus",
                  "--agent", self.path(0), check=False)
        seen = {}
        for line in out.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1].isdigit() and f[2].isdigit():
                free, total = seen.get(f[0], (0, 0))
                seen[f[0]] = (free + int(f[1]), max(total, int(f[2])))
        return seen

    def sees_all(self):
        seen = self.view()
        return all(seen.get(h, (0, 0))[1] == n for h, n in self.hosts().items())

    def idle(self):
        seen = self.view()
        return all(seen.get(h, (0, 0)) == (n, n) for h, n in self.hosts().items())

    def configure(self, which, queueing):
        """[machine] cpus and [coallocation] in the agents `which`, each
        restarted."""
        t = time.time()
        for i in which:
            path = os.path.join(self.path(i), "agent.toml")
            text = open(path).read()
            text = set_keys(text, "machine", {"cpus": str(self.cpus[i])})
            text = set_keys(text, "coallocation", {"rule": f'"{self.a.rule}"',
                                                   "queueing": f'"{queueing}"'})
            run(self.starling, "testnet", "kill", "--dir", self.dir, self.name(i), "--signal",
                "term", check=False)
            open(path, "w").write(text)
            run(self.starling, "testnet", "start", "--dir", self.dir, self.name(i),
                "--timeout", "120", timeout=200)
        self.queueing = queueing
        wait_for("agent-00 to see every agent with its processors", self.sees_all, 180, every=1)
        log(f"{len(list(which))} agent(s) configured ({queueing}, {self.a.rule}) and "
            f"restarted in {time.time() - t:.0f} s")

    def logs(self, out, tag):
        for i in range(self.agents):
            src = os.path.join(self.path(i), "agent.log")
            if os.path.exists(src):
                shutil.copy(src, os.path.join(out, f"{tag}-{self.name(i)}.log"))

    def down(self):
        run(self.starling, "testnet", "down", "--dir", self.dir, check=False, timeout=300)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def run_experiment(a, net, exp, jobs, work):
    """Submits the 40 jobs from agent-00 in order, waits for them all to end,
    and returns their jobs.csv rows."""
    if net.queueing != EXPERIMENTS[exp]["queueing"]:
        net.configure([0], EXPERIMENTS[exp]["queueing"])
    wait_for("every processor to be idle", net.idle, 120, every=1)
    stamps = os.path.join(work, f"stamps-{exp}")
    subs = os.path.join(work, f"submit-{exp}")
    os.makedirs(stamps)
    os.chmod(stamps, 0o777)
    os.makedirs(subs)
    os.chmod(subs, 0o777)
    node_sh = os.path.join(work, "node.sh")
    t0 = time.time()
    submitted = {}
    for job in jobs:
        sub = os.path.join(subs, f"job-{job['job']:02d}.sub")
        open(sub, "w").write(submit_text(job, a.rule, node_sh, stamps))
        at = time.time() - t0
        out = run(net.starling, "submit", sub, "--agent", net.path(0), cwd=subs)
        m = re.search(r"submitted to cluster (\d+)", out.stdout)
        if not m:
            sys.exit(f"{exp}: cannot read the cluster id from: {out.stdout}")
        submitted[int(m.group(1))] = (job, at)
    log(f"{exp}: {len(jobs)} jobs submitted in {time.time() - t0:.1f} s "
        f"(clusters {min(submitted)}-{max(submitted)})")
    model = simulate(jobs, scaled_clusters(exp, a.scale_processors), EXPERIMENTS[exp]["queueing"],
                     a.rule)
    limit = a.timeout or 4 * max(e for _, e in model.values()) + 180
    last_note = 0.0
    while True:
        out = run(net.starling, "q", "-allusers", "-af", "ClusterId", "ProcId", "JobStatus",
                  "HoldReason", "--agent", net.path(0), check=False)
        ours = [l.split(None, 3) for l in out.stdout.splitlines()
                if l.split() and l.split()[0].isdigit() and int(l.split()[0]) in submitted]
        if out.returncode == 0 and not ours:
            break
        held = [r for r in ours if len(r) > 2 and r[2] == "5"]
        if held:
            net.logs(a.out, exp)
            sys.exit(f"{exp}: jobs held: {held[:4]}")
        now = time.time() - t0
        if now > limit:
            net.logs(a.out, exp)
            sys.exit(f"{exp}: {len({r[0] for r in ours})} jobs not done after {limit:.0f} s "
                     f"(the model says {max(e for _, e in model.values()):.0f} s)")
        if now - last_note >= 15:
            running = len({r[0] for r in ours if len(r) > 2 and r[2] == "2"})
            log(f"  {exp} at {now:.0f} s: {len(submitted) - len({r[0] for r in ours})} done, "
                f"{running} running, {len({r[0] for r in ours}) - running} waiting")
            last_note = now
        time.sleep(1)
    log(f"{exp}: all done after {time.time() - t0:.0f} s")
    return collect(a, net, exp, submitted, stamps, t0)


def collect(a, net, exp, submitted, stamps, t0):
    """jobs.csv rows from the submit agent's history (QDate, start and
    completion dates, StarlingCoallocationOverhead) and the nodes' stamps."""
    attrs = ["ClusterId", "ProcId", "JobStartDate", "JobCurrentStartDate", "CompletionDate",
             "StarlingCoallocationOverhead", "JobStatus", "NumJobStarts"]
    out = run(net.starling, "history", "-af", *attrs, "--agent", net.path(0))
    ads = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == len(attrs) and f[0].isdigit() and int(f[0]) in submitted:
            ads.setdefault(int(f[0]), []).append(dict(zip(attrs, f)))
    rows, notes = [], set()
    for cid, (job, at) in sorted(submitted.items()):
        procs = ads.get(cid, [])
        if len(procs) != len(job["components"]):
            notes.add(f"cluster {cid}: {len(procs)} procs in history, "
                      f"{len(job['components'])} expected")
        if any(p["JobStatus"] != "4" for p in procs):
            notes.add(f"cluster {cid}: not every proc completed (JobStatus 4)")
        starts, ends, placed = [], [], []
        for k, c in enumerate(job["components"]):
            doms = set()
            # $(Node) may number a cluster's nodes from 0 in each proc or
            # across its procs: every file of this component is taken.
            for fname in os.listdir(stamps):
                if not fname.startswith(f"{exp}-{job['job']}-{k}-") or not fname.endswith(".start"):
                    continue
                f = open(os.path.join(stamps, fname)).read().split()
                starts.append(float(f[0]))
                doms.add(f[1] if len(f) > 1 else "?")
                try:
                    ends.append(float(open(os.path.join(stamps, fname[:-6] + ".end")).read()))
                except OSError:
                    notes.add(f"{fname}: a node without an end")
            placed.append("/".join(sorted(doms)) or "-")
        nodes = sum(c["nodes"] for c in job["components"])
        if len(starts) != nodes:
            notes.add(f"{exp} job {job['job']}: {len(starts)} nodes ran, {nodes} asked")
        if not starts:
            sys.exit(f"{exp} job {job['job']} (cluster {cid}): no node ran")
        ad_end = [x for x in (number(p["CompletionDate"]) for p in procs) if x]
        coalloc = [x for x in (number(p["StarlingCoallocationOverhead"]) for p in procs)
                   if x is not None]
        if not ad_end:
            notes.add("no CompletionDate in the history: the last node's end used")
        if not coalloc:
            notes.add("no StarlingCoallocationOverhead in the history: taken as 0")
        # History dates are whole seconds (floored). The start is taken
        # from the nodes (their processes start as the barrier releases
        # them, to a few ms); the end is CompletionDate's second plus half
        # a second, and never before the last node's end: ±0.5 s.
        start = min(starts) - t0
        last = max(ends or starts)
        end = (max(max(ad_end) + 0.5, last) if ad_end else last) - t0
        runs = max([int(x) for x in (number(p["NumJobStarts"]) for p in procs) if x] or [1])
        if runs > 1:
            # A node lost after the start sends the job back to idle; its
            # next run overwrites the stamps of the nodes that run again.
            notes.add(f"{exp}: jobs that ran more than once (their runtime and start spread "
                      f"mix runs)")
        rows.append(job_row(job, a, "measured", at, start, end, min(starts) - t0,
                            max(ends or starts) - t0, max(coalloc or [0.0]),
                            max(starts) - min(starts), " ".join(placed), cluster_id=cid,
                            runs=runs))
    for n in sorted(notes):
        log(f"  note: {n}")
    return rows


# ---------------------------------------------------------------------------

def read_rows(path):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        for k in ("submit", "start", "end", "response", "runtime", "overhead", "wait",
                  "coalloc_overhead", "start_spread", "node_start", "node_end", "time_scale"):
            r[k] = float(r[k])
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starling", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "release", "starling"))
    p.add_argument("--out", default="bench-out/coallocation")
    p.add_argument("--experiments", default="E1,E2,E3,E4,E5")
    p.add_argument("--seed", type=int, default=1, help="the workload generator's seed")
    p.add_argument("--time-scale", type=float, default=0.2,
                   help="runtimes are the thesis' times this (0.2: 92.4 s -> 18.5 s)")
    p.add_argument("--scale-processors", type=int, default=4, choices=(1, 2, 4),
                   help="every processor count (clusters and components) divided by this")
    p.add_argument("--rule", default="worst-fit", choices=("worst-fit", "best-fit"),
                   help="placement rule (the thesis' DCS default: worst-fit)")
    p.add_argument("--mix", default="alternate", choices=("alternate", "shuffle"),
                   help="E5's order of ordered and unordered jobs")
    p.add_argument("--timeout", type=float, default=0.0,
                   help="seconds an experiment may take (default: 4 x the model's + 180)")
    p.add_argument("--keep", action="store_true", help="keep the testnets' directory")
    p.add_argument("--dry-run", action="store_true",
                   help="print the submit files and the model's figures; run nothing")
    p.add_argument("--simulate", action="store_true",
                   help="no testnet: SYNTHETIC timings (the model with 2 s of overhead and "
                        "noise) through the CSV, summary and plot code")
    p.add_argument("--replot", metavar="CSV", help="the summary and plot of a jobs.csv")
    a = p.parse_args()
    exps = [e.strip().upper() for e in a.experiments.split(",") if e.strip()]
    for e in exps:
        if e not in EXPERIMENTS:
            sys.exit(f"no experiment {e!r}: E1-E5")
    os.makedirs(a.out, exist_ok=True)
    if a.replot:
        finish(a, read_rows(a.replot))
        return
    loads = {e: workload(e, a.seed, a.scale_processors, a.time_scale, a.mix) for e in exps}
    model = [r for e in exps for r in model_rows(e, loads[e], a)]
    if a.dry_run:
        wl = os.path.join(a.out, "workload")
        for e in exps:
            c = EXPERIMENTS[e]
            print(f"##### {e} (thesis Fig. {c['figure']}): clusters "
                  + ", ".join(f"{n}={domain_of(e, n)}:{p}" for n, p in
                              scaled_clusters(e, a.scale_processors))
                  + f"; {c['request']}, {c['queueing'].upper()}, {a.rule}; agent.toml of "
                  f"agent-00: [coallocation] rule = \"{a.rule}\", queueing = "
                  f"\"{c['queueing']}\"")
            os.makedirs(os.path.join(wl, e), exist_ok=True)
            for job in loads[e]:
                text = submit_text(job, a.rule, "WORK/node.sh", f"WORK/stamps-{e}")
                open(os.path.join(wl, e, f"job-{job['job']:02d}.sub"), "w").write(text)
                print(text)
        open(os.path.join(wl, "node.sh"), "w").write(NODE)
        print(f"(written to {wl}/E*/job-NN.sub and {wl}/node.sh)\n")
        report(model, summarise(model), a, a.out)
        return
    if a.simulate:
        rng = random.Random(f"delft/{a.seed}/synthetic")
        rows = list(model)
        for e in exps:
            over = 2.0
            done = simulate(loads[e], scaled_clusters(e, a.scale_processors),
                            EXPERIMENTS[e]["queueing"], a.rule, overhead=over)
            for job in loads[e]:
                s, end = done[job["job"]]
                sub = 0.05 * job["job"]
                coal = over * 0.75 + rng.uniform(-0.3, 0.3)
                ns = s + coal + rng.uniform(0, 0.2)
                rows.append(job_row(job, a, "synthetic", sub, s + coal, end, ns,
                                    ns + job["runtime"] + rng.uniform(0, 0.1), coal,
                                    rng.uniform(0, 0.2), "synthetic"))
        finish(a, rows)
        return
    if os.geteuid() != 0:
        sys.exit("run as root (the jobs run as nobody and write to a shared directory)")
    a.starling = os.path.abspath(a.starling)
    if not os.access(a.starling, os.X_OK):
        sys.exit(f"no starling binary at {a.starling}: cargo build --release -p starling-cli")
    began = time.time()
    # A SIGTERM (timeout, a CI runner) unwinds like ^C: the testnet goes down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    tmp = tempfile.mkdtemp(prefix="delft-", dir=os.environ.get("DELFT_TMP"))
    os.chmod(tmp, 0o755)
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    os.chmod(work, 0o777)
    open(os.path.join(work, "node.sh"), "w").write(NODE)
    os.chmod(os.path.join(work, "node.sh"), 0o755)
    rows = list(model)
    net = None
    try:
        for e in exps:
            clusters = EXPERIMENTS[e]["clusters"]
            if net is None or net.clusters != clusters:
                if net is not None:
                    net.logs(a.out, "net%d" % len(net.clusters))
                    net.down()
                    net = None
                net = Net(a, tmp, clusters)
            t = time.time()
            rows += run_experiment(a, net, e, loads[e], work)
            log(f"{e}: {time.time() - t:.0f} s")
            write_csv(os.path.join(a.out, "jobs.csv"), rows, JOB_FIELDS)
        net.logs(a.out, "net%d" % len(net.clusters))
    finally:
        if net is not None:
            net.down()
        if a.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    finish(a, rows)
    print(f"{len(exps)} experiment(s) in {time.time() - began:.0f} s")


if __name__ == "__main__":
    main()
