#!/usr/bin/env python3
"""The self-checkpointing job of bench/migration/hector.py: one task of the
scaled-down matrix multiply, whose speed follows its host's emulated owner.

    job.py NAME OWNERS LEDGER WORK_SECS CKPT_SECS STEP_SECS

Every agent of the testnet runs on one machine, so an owner's load cannot
slow a job for real: the job slows itself. It does WORK_SECS seconds of
work in steps of STEP_SECS; a step takes STEP_SECS * slowdown of wall time
(it sleeps: the bench must not eat the shared cores), where

    slowdown = max(1, (owner load + tasks running on the host) / cpus)

is the time-sharing model the migration decider itself uses
(policies::migration `share`): the host is the one in `$_CONDOR_MACHINE_AD`
(`Name`, `TotalCpus`), its owner's load is the first word of
OWNERS/load/HOST (the file its agent's `[machine] owner_load_file` names),
and the tasks on the host are the files of OWNERS/where/ that name it
(each task writes its host there while it runs).

HTCondor's checkpoint convention: every CKPT_SECS of wall time the job
saves its progress to `state` and exits with its checkpoint_exit_code (85);
on SIGTERM (a vacate: the owner policy, or a move) it saves at once and
exits 85 too (a second SIGTERM while it saves is ignored). A start resumes from `state`. Every start, checkpoint, vacate
and the end is a line `EVENT HOST UNIX_TIME WORK_DONE SLOWDOWN` in LEDGER,
outside the agents.
"""
import os, signal, sys, time

CKPT = 85


class Vacated(Exception):
    pass


VACATING = False


def on_term(_sig, _frame):
    # Once: the agent may send SIGTERM twice a few ms apart (to the
    # process group, then to every process of the job's family), and a
    # second Vacated raised while saving would kill the checkpoint.
    global VACATING
    if not VACATING:
        VACATING = True
        raise Vacated()


def machine():
    host, cpus = "?", os.cpu_count() or 1
    try:
        with open(os.environ["_CONDOR_MACHINE_AD"]) as f:
            for line in f:
                key, _, value = line.partition("=")
                key, value = key.strip(), value.strip().strip('"')
                if key == "Name":
                    host = value.split("@")[-1]
                elif key == "TotalCpus":
                    cpus = max(1, int(float(value)))
    except (KeyError, OSError, ValueError):
        pass
    return host, cpus


def owner_load(owners, host):
    try:
        with open(os.path.join(owners, "load", host)) as f:
            return max(0.0, float(f.read().split()[0]))
    except (OSError, ValueError, IndexError):
        return 0.0


def tasks_on(owners, host):
    where = os.path.join(owners, "where")
    n = 0
    for name in os.listdir(where):
        try:
            with open(os.path.join(where, name)) as f:
                n += f.read().strip() == host
        except OSError:
            pass
    return max(n, 1)


def put(path, text):
    tmp = f"{path}.{os.getpid()}.new"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def log(ledger, *words):
    with open(ledger, "a") as f:
        f.write(" ".join(str(w) for w in words) + "\n")


def main():
    name, owners, ledger = sys.argv[1], sys.argv[2], sys.argv[3]
    work, ckpt_secs, step = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    host, cpus = machine()
    try:
        done = float(open("state").read().split()[0])
    except (OSError, ValueError, IndexError):
        done = 0.0
    where = os.path.join(owners, "where", name)
    put(where, host)
    slow = 1.0
    log(ledger, "start", host, f"{time.time():.3f}", f"{done:.2f}", f"{slow:.2f}")
    signal.signal(signal.SIGTERM, on_term)
    began = time.time()
    try:
        while done < work - 1e-9:
            slow = max(1.0, (owner_load(owners, host) + tasks_on(owners, host)) / cpus)
            time.sleep(step * slow)
            done += step
            if time.time() - began >= ckpt_secs and done < work - 1e-9:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                put("state", f"{done:.3f}\n")
                log(ledger, "ckpt", host, f"{time.time():.3f}", f"{done:.2f}", f"{slow:.2f}")
                sys.exit(CKPT)
    except Vacated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        put("state", f"{done:.3f}\n")
        log(ledger, "vacated", host, f"{time.time():.3f}", f"{done:.2f}", f"{slow:.2f}")
        sys.exit(CKPT)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    put("state", f"{done:.3f}\n")
    try:
        os.remove(where)
    except OSError:
        pass
    log(ledger, "done", host, f"{time.time():.3f}", f"{done:.2f}", f"{slow:.2f}")


if __name__ == "__main__":
    main()
