#!/usr/bin/env python3
"""HTCondor's own submit code as an oracle for Starling's submit language.

A JSON Lines filter: each request {"id": N, "dir": DIR, "file": NAME} reads
the submit description DIR/NAME in DIR (so includes, `queue from FILE`,
`matching` and relative paths resolve there) and answers

    {"id": N, "ok": true, "jobs": [{"Attr": "value text", ...}, ...]}
    {"id": N, "ok": false, "error": "why HTCondor refused it"}

with one ad per job, each value as new-syntax ClassAd text (from HTCondor's
JSON form of the ad, so strings are exact).

How: `htcondor2.Submit` parses the description (HTCondor's macro language,
if/elif/else, include, queue arguments and item data), and the job ads
come from `SubmitHash::make_job_ad`, the call `condor_submit` and
`Schedd.submit` make, reached through `oracle_shim.cpp` (compiled on first
use, against the libcondor_utils of the wheel) because the bindings make
ads only while talking to a schedd. Nothing is queued anywhere.

What the oracle does itself, not HTCondor (said here so a difference can
be traced): a file with several `queue` statements is run one statement at
a time, each on the file cut after that statement with the earlier `queue`
lines blanked out (HTCondor keeps one hash for the whole file; macros set
between the statements come out the same, item variables of earlier
statements do not leak); the count before the item list (`queue 3 x in
...`) is read from the queue arguments here, and so is a slice
(`queue in [1:3] (...)`, which the bindings' item data ignores), applied
as Python slices, which HTCondor's are.
"""

import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys

# HTCondor reads no local configuration; the variables are taken back
# once it has started, so that `getenv` sees the caller's environment.
ADDED = [k for k in ("CONDOR_CONFIG",) if k not in os.environ]
os.environ["CONDOR_CONFIG"] = "/dev/null"

import htcondor2  # noqa: E402

htcondor2.param.get("FILESYSTEM_DOMAIN")  # configuration read now, not later
for k in ADDED:
    del os.environ[k]

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_SRC = os.path.join(HERE, "oracle_shim.cpp")
CLUSTER = 1
NOW = 1_700_000_000
OWNER = b"alice"


def shim():
    libs = os.path.join(os.path.dirname(htcondor2.__file__), "..", "htcondor.libs")
    libs = os.path.abspath(libs)
    utils = [f for f in os.listdir(libs) if f.startswith("libcondor_utils")]
    if len(utils) != 1:
        sys.exit(f"oracle.py: no single libcondor_utils in {libs}: {utils}")
    src = open(SHIM_SRC, "rb").read()
    key = hashlib.sha256(src + utils[0].encode()).hexdigest()[:16]
    cache = os.path.join(os.path.dirname(os.path.dirname(sys.executable)), "starling-shim")
    os.makedirs(cache, exist_ok=True)
    so = os.path.join(cache, f"oracle_shim-{key}.so")
    if not os.path.exists(so):
        cxx = os.environ.get("CXX", "g++")
        tmp = so + f".{os.getpid()}"
        subprocess.run(
            [cxx, "-std=c++17", "-shared", "-fPIC", "-O1", "-o", tmp, SHIM_SRC,
             f"-L{libs}", f"-l:{utils[0]}", f"-Wl,-rpath,{libs}"],
            check=True, stdout=sys.stderr)
        os.replace(tmp, so)
    lib = ctypes.CDLL(so)
    lib.starling_init_base_ad.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_char_p]
    lib.starling_set_live.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.starling_make_job_ad.argtypes = [ctypes.c_void_p] + [ctypes.c_int] * 4
    lib.starling_make_job_ad.restype = ctypes.c_void_p
    lib.starling_free.argtypes = [ctypes.c_void_p]
    return lib


SHIM = shim()
QUEUE = re.compile(r"^\s*queue(\s|$)", re.IGNORECASE)


def queue_statements(lines):
    """(first, last) line indexes of each queue statement, inline items included."""
    out = []
    i = 0
    while i < len(lines):
        if QUEUE.match(lines[i]):
            start = i
            # The statement goes on over lines that end in a backslash.
            while lines[i].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
            line = " ".join(lines[start : i + 1])
            if "(" in line and ")" not in line.split("(", 1)[1]:
                while i + 1 < len(lines) and ")" not in lines[i]:
                    i += 1
            out.append((start, i))
        i += 1
    return out


def hash_of(submit):
    # The bindings' handle object: PyObject_HEAD, then the SubmitBlob
    # pointer; the blob's vtable pointer, then its SubmitHash.
    blob = ctypes.c_void_p.from_address(id(submit._handle) + 16).value
    return blob + 8


def count_of(submit, qargs):
    words = qargs.split()
    if not words:
        return 1
    first = words[0]
    if not re.match(r"[0-9$(]", first):
        return 1  # a variable list or the items: no count
    submit["starling_queue_count__"] = first
    text = submit.expand("starling_queue_count__").strip()
    try:
        return int(text)
    except ValueError:
        import classad2
        return int(classad2.ExprTree(text).eval())


EXPR = re.compile(r"^\\?/Expr\((.*)\)\\?/$", re.S)


def classad_text(value):
    """A value of HTCondor's JSON form as new-syntax ClassAd text."""
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        m = EXPR.match(value)
        if m:
            return m.group(1)
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, list):
        return "{ " + ", ".join(classad_text(v) for v in value) + " }"
    return "[ " + "; ".join(f"{k} = {classad_text(v)}" for k, v in value.items()) + " ]"


def parse_ad(text):
    parent, own = text.split("\n", 1)
    ad = {}
    for part in (json.loads(parent), json.loads(own)):
        for k, v in part.items():
            ad[k] = classad_text(v)
    return ad


def jobs_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    statements = queue_statements(lines)
    if not statements:
        statements = [(len(lines), len(lines) - 1)]
    jobs = []
    for k, (first, last) in enumerate(statements):
        cut = list(lines[: last + 1])
        for a, b in statements[:k]:
            for j in range(a, b + 1):
                cut[j] = ""
        s = htcondor2.Submit("\n".join(cut) + "\n")
        qargs = s.getQArgs()
        count = count_of(s, qargs)
        items = s.itemdata()
        has_items = re.search(r"\b(in|from|matching)\b", qargs, re.I)
        if items is None:
            # No item list, or one that came out empty (`matching` found
            # nothing): one job, or none.
            items = [] if has_items else [None]
        else:
            items = list(items)
        # The bindings' item data ignores a slice (`queue in [1:3] (...)`);
        # HTCondor's is Python's, so Python applies it here.
        sliced = re.match(r"^(?:.*?\b(?:in|from|matching)\s*(?:files\s+|dirs\s+)?)\[([^\]]*)\]", qargs, re.I)
        order = list(range(len(items)))
        if sliced:
            parts = [int(p) if p.strip() else None for p in sliced.group(1).split(":")]
            order = order[parts[0]] if len(parts) == 1 else order[slice(*parts)]
            order = order if isinstance(order, list) else [order]
        h = hash_of(s)
        if SHIM.starling_init_base_ad(h, NOW, OWNER) != 0:
            raise ValueError("init_base_ad failed")
        for index in order:
            item = items[index]
            if isinstance(item, dict):
                for name, value in item.items():
                    SHIM.starling_set_live(h, name.encode(), value.encode())
            elif item is not None:
                SHIM.starling_set_live(h, b"Item", item.encode())
            for step in range(count):
                p = SHIM.starling_make_job_ad(h, CLUSTER, len(jobs), index, step)
                if not p:
                    raise ValueError(f"HTCondor made no job ad for proc {len(jobs)}")
                text = ctypes.string_at(p).decode("utf-8", "replace")
                SHIM.starling_free(p)
                jobs.append(parse_ad(text))
    return jobs


def answer(req):
    here = os.getcwd()
    try:
        os.chdir(req["dir"])
        # HTCondor writes its complaints to stderr; keep them out of ours.
        jobs = jobs_of(req["file"])
        return {"id": req["id"], "ok": True, "jobs": jobs}
    except Exception as e:  # HTCondor refused the file
        return {"id": req["id"], "ok": False, "error": f"{type(e).__name__}: {e}"}
    finally:
        os.chdir(here)


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        print(json.dumps(answer(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
