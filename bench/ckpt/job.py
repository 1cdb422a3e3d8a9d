#!/usr/bin/env python3
"""The self-checkpointing job of bench/ckpt/ckpt.py (HTCondor's convention:
it writes its checkpoint files and exits with its checkpoint_exit_code, 85).

    job.py bulk LEDGER MIB CKPTS CHANGED_PERCENT [HOLD]
    job.py steps LEDGER STEP_SECS INTERVAL_SECS STEPS

Every start appends `start HOST TIME STATE` to LEDGER (outside the agents).

bulk: the first start writes data.bin, MIB MiB of random bytes, and
checkpoints (a full checkpoint). Each later start, while fewer than CKPTS
checkpoints were taken, rewrites CHANGED_PERCENT of data.bin's 1 MiB-aligned
blocks in place with new random bytes and checkpoints (an incremental one).
Then, with HOLD 1 (the default), it appends `hold HOST TIME` and sleeps
(at most 10 minutes), to be killed with its agent; with HOLD 0 it exits 0;
a start on a machine other than the one that took the last checkpoint
(a restore elsewhere) checks data.bin's size, appends `restored HOST TIME
SIZE` and exits 0.

steps: counts steps of STEP_SECS each, appending `step N HOST TIME` after
each; every INTERVAL_SECS of its run it saves the count and checkpoints; it
exits 0 after STEPS steps. A restart resumes from the saved count.
"""
import os, random, sys, time

CKPT = 85


def host():
    try:
        with open(os.environ["_CONDOR_MACHINE_AD"]) as f:
            for line in f:
                if line.startswith("Name = "):
                    return line.split("=", 1)[1].strip().strip('"').split("@")[-1]
    except (KeyError, OSError):
        pass
    return "?"


def log(ledger, *words):
    with open(ledger, "a") as f:
        f.write(" ".join(str(w) for w in words) + "\n")


def read_state():
    try:
        with open("state") as f:
            return f.read().split()
    except OSError:
        return None


def write_state(*words):
    with open("state.new", "w") as f:
        f.write(" ".join(str(w) for w in words))
        f.flush()
        os.fsync(f.fileno())
    os.rename("state.new", "state")


def bulk(ledger, mib, ckpts, percent, hold):
    me = host()
    state = read_state()
    log(ledger, "start", me, time.time(), *(state or ["-"]))
    block = 1 << 20
    if state is None or not os.path.exists("data.bin"):
        with open("data.bin", "wb") as f:
            for _ in range(mib):
                f.write(os.urandom(block))
            f.flush()
            os.fsync(f.fileno())
        write_state(1, me)
        sys.exit(CKPT)
    taken, where = int(state[0]), state[1]
    if where != me:
        size = os.path.getsize("data.bin")
        log(ledger, "restored", me, time.time(), size)
        sys.exit(0 if size == mib * block else 1)
    if taken < ckpts:
        blocks = max(1, round(mib * percent / 100))
        with open("data.bin", "r+b") as f:
            for i in sorted(random.sample(range(mib), blocks)):
                f.seek(i * block)
                f.write(os.urandom(block))
            f.flush()
            os.fsync(f.fileno())
        write_state(taken + 1, me)
        sys.exit(CKPT)
    if hold:
        log(ledger, "hold", me, time.time())
        time.sleep(600)


def steps(ledger, step_secs, interval, total):
    me = host()
    state = read_state()
    done = int(state[0]) if state else 0
    log(ledger, "start", me, time.time(), done)
    began = time.time()
    while done < total:
        time.sleep(step_secs)
        done += 1
        log(ledger, "step", done, me, time.time())
        if time.time() - began >= interval and done < total:
            write_state(done)
            sys.exit(CKPT)
    write_state(done)
    log(ledger, "done", done, me, time.time())


def main():
    mode, ledger = sys.argv[1], sys.argv[2]
    if mode == "bulk":
        hold = len(sys.argv) < 7 or sys.argv[6] != "0"
        bulk(ledger, int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), hold)
    elif mode == "steps":
        steps(ledger, float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
