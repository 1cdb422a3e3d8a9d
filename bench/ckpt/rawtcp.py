#!/usr/bin/env python3
"""Raw TCP throughput over loopback, the baseline of bench/ckpt/ckpt.py.

    bench/ckpt/rawtcp.py [--mib 256] [--streams 1] [--runs 3]

One sender process moves MIB MiB to each of STREAMS receiver processes at
once over 127.0.0.1 (one connection each, 4 MiB socket buffers, 4 MiB
writes of one buffer made once, 4 MiB reads into a reused buffer,
TCP_NODELAY); the time runs from the first byte sent until every receiver
has read its last byte. Prints one line per run: seconds and MiB/s (of
MIB, i.e. per stream, as a checkpoint of MIB MiB sent to STREAMS
replicas is counted). No encryption, no framing, no disk: an upper bound
for what any protocol can do on this machine.
"""
import argparse, json, multiprocessing as mp, os, socket, sys, time

BUF = 4 << 20


def receive(port, total, ready, done):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUF)
    srv.bind(("127.0.0.1", port))
    srv.listen(1)
    ready.set()
    conn, _ = srv.accept()
    buf = bytearray(BUF)
    view = memoryview(buf)
    got = 0
    while got < total:
        n = conn.recv_into(view)
        if n == 0:
            break
        got += n
    conn.sendall(b"k")
    done.put(got)
    conn.close()
    srv.close()


def send(port, total, data, start):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUF)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.connect(("127.0.0.1", port))
    start.wait()
    view = memoryview(data)
    left = total
    while left > 0:
        n = min(left, len(data))
        s.sendall(view[:n])
        left -= n
    s.recv(1)
    s.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def once(mib, streams):
    total = mib << 20
    data = os.urandom(BUF)
    ctx = mp.get_context("fork")
    done = ctx.Queue()
    start = ctx.Event()
    receivers, senders = [], []
    for _ in range(streams):
        port = free_port()
        ready = ctx.Event()
        r = ctx.Process(target=receive, args=(port, total, ready, done))
        r.start()
        ready.wait(10)
        receivers.append(r)
        s = ctx.Process(target=send, args=(port, total, data, start))
        s.start()
        senders.append(s)
    time.sleep(0.2)  # every connection made
    t0 = time.perf_counter()
    start.set()
    got = [done.get(timeout=120) for _ in range(streams)]
    dt = time.perf_counter() - t0
    for p in receivers + senders:
        p.join(10)
    if any(g != total for g in got):
        sys.exit(f"short read: {got}")
    return dt


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--streams", type=int, default=1)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--json", action="store_true", help="print the seconds of each run as JSON")
    a = p.parse_args()
    times = [once(a.mib, a.streams) for _ in range(a.runs)]
    if a.json:
        print(json.dumps(times))
    else:
        for t in times:
            print(f"{a.mib} MiB x {a.streams} stream(s): {t:.3f} s, {a.mib / t:.0f} MiB/s per stream")


if __name__ == "__main__":
    main()
