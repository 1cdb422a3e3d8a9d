#!/usr/bin/env python3
"""Measures a running process testnet (`starling testnet up --dir DIR ...`).

For every agent: resident memory and CPU over an idle window (from /proc),
and gossip traffic over the same window (bytes_received + bytes_sent from
each agent's control `info`, which are libp2p's stream byte counters). Then
convergence: an agent is stopped with SIGTERM (it publishes a withdrawal,
an ad change) and the time until 99% of the others no longer show it is
taken, by polling their views; then it is restarted with its own command
line and the time until 99% show it again is taken. Prints medians and
ranges.

Usage: bench/testnet/measure.py DIR [--window SECS] [--rounds N]
"""
import argparse, json, os, signal, socket, statistics, subprocess, time

def call(agent_dir, request, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(os.path.join(agent_dir, "agent.sock"))
    s.sendall((json.dumps(request) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        buf += chunk
    s.close()
    return json.loads(buf)

def pid_of(agent_dir):
    return int(open(os.path.join(agent_dir, "agent.pid")).read().strip())

def cpu_ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime

def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

def shows(agent_dir, agent_id):
    """Whether the agent's view holds the machine ad signed by agent_id."""
    r = call(agent_dir, {"op": "ads", "kind": "machine",
                         "constraint": f'StarlingAgentId == "{agent_id}"'})
    return len(r.get("ads", [])) > 0

def spread(dirs, agent_id, present, timeout=60):
    """Seconds until 99% of `dirs` show (present) or no longer show the ad."""
    start = time.monotonic()
    need = max(1, int(len(dirs) * 0.99 + 0.999))
    done = {}
    while time.monotonic() - start < timeout:
        for d in dirs:
            if d in done:
                continue
            try:
                if shows(d, agent_id) == present:
                    done[d] = time.monotonic() - start
            except OSError:
                pass
        if len(done) >= need:
            return sorted(done.values())[need - 1]
        time.sleep(0.02)
    return None

def rng(xs):
    return f"{min(xs):.3g}–{max(xs):.3g}"

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--window", type=int, default=120)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    dirs = sorted(os.path.join(a.dir, d) for d in os.listdir(a.dir) if d.startswith("agent-"))
    pids = {d: pid_of(d) for d in dirs}
    hz = os.sysconf("SC_CLK_TCK")
    t0 = time.monotonic()
    cpu0 = {d: cpu_ticks(p) for d, p in pids.items()}
    tr0 = {d: call(d, {"op": "info"}) for d in dirs}
    time.sleep(a.window)
    elapsed = time.monotonic() - t0
    cpu1 = {d: cpu_ticks(p) for d, p in pids.items()}
    tr1 = {d: call(d, {"op": "info"}) for d in dirs}
    rss = [rss_kib(p) / 1024 for p in pids.values()]
    cpu = [100.0 * (cpu1[d] - cpu0[d]) / hz / elapsed for d in dirs]
    traffic = [((tr1[d]["bytes_received"] - tr0[d]["bytes_received"]) +
                (tr1[d]["bytes_sent"] - tr0[d]["bytes_sent"])) / elapsed for d in dirs]
    print(f"{len(dirs)} agents, idle window {elapsed:.0f} s")
    print(f"resident memory: median {statistics.median(rss):.1f} MiB, range {rng(rss)} MiB (target <= 30)")
    print(f"CPU: median {statistics.median(cpu):.3f}% of one core, range {rng(cpu)} (target < 0.5)")
    print(f"gossip traffic (in + out): median {statistics.median(traffic):.0f} B/s per agent, range {rng(traffic)}")
    gone, back = [], []
    for r in range(a.rounds):
        d = dirs[(r * 7 + 3) % len(dirs)]
        name = tr1[d]["agent_id"]
        cmd = open(f"/proc/{pids[d]}/cmdline").read().split("\0")[:-1]
        others = [o for o in dirs if o != d]
        os.kill(pids[d], signal.SIGTERM)
        g = spread(others, name, present=False)
        while os.path.exists(os.path.join(d, "agent.pid")):
            time.sleep(0.05)
        log = open(os.path.join(d, "agent.log"), "ab")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        b = spread(others, name, present=True)
        for _ in range(200):
            if os.path.exists(os.path.join(d, "agent.pid")):
                break
            time.sleep(0.05)
        pids[d] = p.pid
        print(f"round {r}: {os.path.basename(d)} withdrawn from 99% of views in {g}s, back in {b}s")
        if g is not None: gone.append(g * 1000)
        if b is not None: back.append(b * 1000)
        time.sleep(2)
    if gone:
        print(f"convergence, withdrawal (SIGTERM) to 99% of views: median {statistics.median(gone):.0f} ms, range {rng(gone)} ms")
    if back:
        print(f"convergence, restart to 99% of views (includes process start): median {statistics.median(back):.0f} ms, range {rng(back)} ms")

if __name__ == "__main__":
    main()
