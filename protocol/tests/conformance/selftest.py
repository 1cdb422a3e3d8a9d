#!/usr/bin/env python3
"""Run corpus.txt through oracle.py and print a summary.

Usage:
    selftest.py [--python PY] [--corpus FILE] [--strict] [--show] [--grep TEXT]

--python  interpreter that has classad2 installed (default: this one; see
          scripts/oracle-venv.sh)
--show    print every line with its canonical result
--grep    with --show, only lines containing TEXT

Exits non-zero if any corpus line produced an oracle_error (or the oracle
died / answered out of order).  parse_error answers and error / undefined
values are expected and only counted.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_corpus(path):
    """Yield (lineno, kind, expr, my, target); kind is 'value' or 'type'."""
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            kind = "value"
            if s.startswith("@type "):
                kind = "type"
                s = s[len("@type "):]
            parts = [p.strip() for p in s.split(";;")]
            if len(parts) > 3:
                raise SystemExit("%s:%d: too many ';;' fields" % (path, lineno))
            while len(parts) < 3:
                parts.append("")
            expr, my, target = parts
            yield lineno, kind, expr, (my or None), (target or None)


def short(c):
    t = c.get("t")
    if t == "list":
        return "{" + ", ".join(short(x) for x in c["v"]) + "}"
    if t == "ad":
        return "[" + "; ".join("%s = %s" % (k, short(v)) for k, v in c["v"].items()) + "]"
    if "v" in c:
        return "%s:%s" % (t, json.dumps(c["v"], ensure_ascii=False))
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--grep", default=None)
    ap.add_argument("--strict", action="store_true",
                    help="run the oracle in STRICT_CLASSAD_EVALUATION mode")
    args = ap.parse_args()

    entries = list(parse_corpus(args.corpus))
    proc = subprocess.Popen(
        [args.python, os.path.join(HERE, "oracle.py")] + (["--strict"] if args.strict else []),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
    )
    counts = collections.Counter()
    failures = []
    for i, (lineno, kind, expr, my, target) in enumerate(entries):
        req = {"id": i, "op": "eval", "expr": expr, "my": my, "target": target}
        proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            failures.append((lineno, expr, "oracle died (rc=%s)" % proc.poll()))
            break
        resp = json.loads(line)
        if resp.get("id") != i:
            failures.append((lineno, expr, "out-of-order response %r" % resp))
            break
        if "oracle_error" in resp:
            counts["oracle_error"] += 1
            failures.append((lineno, expr, resp["oracle_error"]))
            shown = "ORACLE_ERROR " + resp["oracle_error"]
        elif "parse_error" in resp:
            counts["parse_error"] += 1
            shown = "PARSE_ERROR " + resp["parse_error"]
        else:
            t = resp["value"]["t"]
            counts[t] += 1
            if kind == "type":
                counts["(type-only lines)"] += 1
            shown = short(resp["value"])
        if args.show and (args.grep is None or args.grep in expr):
            scope = ""
            if my or target:
                scope = "   ;; %s ;; %s" % (my or "", target or "")
            print("%5d  %s%s\n       => %s" % (lineno, expr, scope, shown))
    proc.stdin.close()
    proc.wait()

    print("corpus lines evaluated: %d" % sum(v for k, v in counts.items() if not k.startswith("(")))
    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print("  %-20s %6d" % (k, v))
    if failures:
        print("FAILURES:", file=sys.stderr)
        for lineno, expr, msg in failures:
            print("  line %d: %s\n    %s" % (lineno, expr, msg), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
