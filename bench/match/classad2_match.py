#!/usr/bin/env python3
"""The classad2 baseline of ``starling match``: the same work through
HTCondor's own ClassAd library.

Reads one job ad and a file of machine ads in long ("old") format with
``classad2.parseAds(..., ParserType.Old)``, matches each machine two-sidedly
against the job with ``job.symmetricMatch(machine)``, evaluates the job's and
the machine's ``Rank`` for every match and keeps the best ``--top``, ordered
as ``starling match`` orders them (job Rank, then machine Rank, then input
order; a Rank that is not a number counts as 0).

Prints the same report as ``starling match`` on stdout, and with ``--stats``
the same ``stats:`` line on stderr::

    stats: ads=N matched=M total_s=.. parse_s=.. match_s=.. per_pair_ns=..

``total_s`` runs from opening the machine file to the last ad; ``match_s``
is the time spent matching and ranking (measured around each pair);
``parse_s`` is the rest (reading and parsing), as in ``starling match``.

Must run with the Python of scripts/oracle-venv.sh (htcondor 25.14.1).
The evaluation mode is HTCondor's daemons' default (old ClassAd semantics,
like ``starling match``'s default), or the library's strict mode with
``--strict``; no local HTCondor configuration is read.
"""

from __future__ import annotations

import argparse
import heapq
import os
import sys
import time
from typing import Iterator, List, Tuple


def configure_htcondor(strict: bool) -> None:
    """Isolate from any local HTCondor configuration and pick the
    evaluation mode; must run before classad2 is imported."""
    os.environ["CONDOR_CONFIG"] = "/dev/null"
    for key in list(os.environ):
        if key.upper().startswith("_CONDOR_"):
            del os.environ[key]
    os.environ["_CONDOR_STRICT_CLASSAD_EVALUATION"] = "true" if strict else "false"


def rank_number(value) -> float:
    """A Rank value as a number, as ``starling match`` converts it:
    numbers as they are, booleans as 0/1, anything else 0."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return 0.0


def stream_ads(classad2, path: str, block: int = 4 << 20) -> Iterator:
    """Yield the ads of a long-format file one at a time, with flat memory.

    ``parseAds`` given a file object reads it whole, so the file is read in
    blocks instead and each block's complete ads (up to the last blank line)
    go through ``parseAds``.
    """
    old = classad2.ParserType.Old
    rest = ""
    with open(path, encoding="utf-8") as f:
        while True:
            data = f.read(block)
            if not data:
                break
            data = rest + data
            cut = data.rfind("\n\n")
            if cut < 0:
                rest = data
                continue
            rest = data[cut + 2:]
            yield from classad2.parseAds(data[: cut + 2], old)
    if rest.strip():
        yield from classad2.parseAds(rest, old)


def main(argv: List[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--job", required=True, metavar="FILE", help="the job ad (long format)")
    p.add_argument("--machines", required=True, metavar="FILE",
                   help="the machine ads (long format)")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="how many of the best matches to list (default 10)")
    p.add_argument("--strict", action="store_true",
                   help="the ClassAd library's strict mode instead of HTCondor's daemons'")
    p.add_argument("--stats", action="store_true", help="print timings on stderr")
    args = p.parse_args(argv)

    configure_htcondor(args.strict)
    import classad2  # noqa: E402  (after the environment is set)

    with open(args.job, encoding="utf-8") as f:
        jobs = list(classad2.parseAds(f.read(), classad2.ParserType.Old))
    if len(jobs) != 1:
        p.error(f"--job: expected one ad, found {len(jobs)}")
    job = jobs[0]
    my_rank = classad2.ExprTree("MY.Rank")
    symmetric_match = job.symmetricMatch
    top = args.top
    perf = time.perf_counter_ns

    # Min-heap of ((rank, machine_rank, -seq), name): the root is the worst kept.
    best: List[Tuple[Tuple[float, float, int], str]] = []
    seen = matched = 0
    match_ns = 0
    started = perf()
    for machine in stream_ads(classad2, args.machines):
        seen += 1
        t = perf()
        if symmetric_match(machine):
            matched += 1
            if top > 0:
                key = (
                    rank_number(my_rank.eval(scope=job, target=machine)),
                    rank_number(my_rank.eval(scope=machine, target=job)),
                    -seen,
                )
                if len(best) < top:
                    heapq.heappush(best, (key, machine.get("Name", "(no Name)")))
                elif key > best[0][0]:
                    heapq.heapreplace(best, (key, machine.get("Name", "(no Name)")))
        match_ns += perf() - t
    total_ns = perf() - started

    out = [f"{seen} machines, {matched} match"]
    if best:
        out.append(f"{'Rank':>14} {'MachineRank':>14}  Name")
        for (rank, machine_rank, _), name in sorted(best, reverse=True):
            out.append(f"{rank!r:>14} {machine_rank!r:>14}  {name}")
    print("\n".join(out))
    if args.stats:
        total_s = total_ns / 1e9
        match_s = match_ns / 1e9
        print(
            f"stats: ads={seen} matched={matched} total_s={total_s:.6f} "
            f"parse_s={total_s - match_s:.6f} match_s={match_s:.6f} "
            f"per_pair_ns={match_ns / seen if seen else 0.0:.1f}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
