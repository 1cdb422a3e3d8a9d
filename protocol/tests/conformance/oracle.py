#!/usr/bin/env python3
"""Differential-conformance oracle for Starling's ClassAd implementation.

A long-running JSON Lines filter around HTCondor's own ClassAd library
(the ``classad2`` module shipped in the ``htcondor`` PyPI package, pinned to
25.14.1 by scripts/oracle-venv.sh).

Protocol: one JSON request per input line; exactly one JSON response line per
request, written and flushed in order.  The process never exits on a bad
request; it answers ``{"id": N, "oracle_error": "..."}`` instead.  EOF on
stdin ends the process.

Requests
--------
``{"id": N, "op": "eval", "expr": TEXT, "my": AD-TEXT|null, "target": AD-TEXT|null}``
    -> ``{"id": N, "value": CANON}`` or ``{"id": N, "parse_error": MSG}``

    The expression is inserted into a copy of the MY ad (or an empty ad when
    ``my`` is null) under the reserved attribute name ``starling_r__`` and that
    attribute is evaluated with TARGET = the target ad (no match context at all
    when ``target`` is null).  With a target, classad2 evaluates in a
    MatchClassAd context (so e.g. ``PARENT`` of the MY ad is the match ad).

``{"id": N, "op": "match", "left": AD-TEXT, "right": AD-TEXT}``
    -> ``{"id": N, "match": bool, "left_matches_right": CANON,
          "right_matches_left": CANON, "left_rank": CANON, "right_rank": CANON}``

    ``match`` is ``left.symmetricMatch(right)``, i.e. both Requirements must
    evaluate to true (ints / reals are converted: non-zero is true; anything
    else, including undefined / error / a missing Requirements, is false).
    ``left_matches_right`` is ``MY.Requirements`` evaluated with MY = left,
    TARGET = right (``right_matches_left`` symmetrically); ``left_rank`` is
    ``MY.Rank`` with MY = left, TARGET = right, and vice versa.  A missing
    attribute therefore canonicalises to undefined.

``{"id": N, "op": "unparse", "expr": TEXT}``
    -> ``{"id": N, "text": str(ExprTree), "compact": repr(ExprTree)}``
       or ``{"id": N, "parse_error": MSG}``

    ``text`` is what ``str()`` gives in classad2: for list / record literals
    this is HTCondor's multi-line *pretty* printer.  ``compact`` is the
    one-line ClassAdUnParser form (the form used in printOld / on the wire).

``{"id": N, "op": "info"}``
    -> library version, evaluation mode (``old_classad_semantics``), limits.

``{"id": N, "op": "parse_ads", "text": TEXT, "format": "old"|"new"|"json"|"auto"}``
    -> ``{"id": N, "ads": [{ATTR: UNPARSED, ...}, ...], "ads_compact": [...]}``
       or ``{"id": N, "parse_error": MSG, "ads": [...parsed so far...]}``

    Attribute names keep the case classad2 reports.  ``ads`` uses
    ``str(ad.lookup(name))``; ``ads_compact`` uses ``repr(...)``.  A
    parse_error is reported when non-blank input is left over after the last
    ad HTCondor's parser could read (note the old-format parser silently
    skips lines it cannot parse; that is *not* reported as an error).

CANON values
------------
``{"t":"undefined"}``, ``{"t":"error"}``, ``{"t":"bool","v":true}``,
``{"t":"int","v":5}``, ``{"t":"real","v":1.5}`` (non-finite reals as the
strings "inf", "-inf", "nan"; integral reals stay reals, e.g. 2.0),
``{"t":"string","v":"..."}``, ``{"t":"abstime","v":EPOCH_SECONDS_UTC}``,
``{"t":"reltime","v":SECONDS}``, ``{"t":"list","v":[CANON,...]}``,
``{"t":"ad","v":{lowercased-name: CANON}}``, ``{"t":"truncated"}``.

Nested values are obtained by evaluating probe expressions in the same
scope (``starling_r__[0]``, ``starling_r__.'name'`` ...), never by trusting
the Python conversion of nested parts, so types and scoping are exactly
HTCondor's.  Limits: a list or record at nesting depth >= 4 (the top-level
value is depth 0) is replaced by ``{"t":"truncated"}``; a list longer than 64
elements keeps its first 64 elements followed by one ``{"t":"truncated"}``.
When enumerating the attributes of a record, the reserved name
``starling_r__`` is skipped (it only exists because of the probing
technique; e.g. ``MY`` evaluates to the MY ad without it).

The oracle runs with TZ=UTC, never reads a local HTCondor configuration, and
by default uses HTCondor's default evaluation mode ("old ClassAd semantics",
STRICT_CLASSAD_EVALUATION = false: MY works without a target, unqualified
names fall back from MY to TARGET, leading-zero integer literals are parse
errors, ...).  ``--strict`` / STARLING_ORACLE_STRICT=1 selects strict mode.
See NOTES.md.

Usage: ``python oracle.py [--strict] < requests.jsonl > responses.jsonl``
with a python that has ``htcondor==25.14.1`` (scripts/oracle-venv.sh).

If HTCondor's evaluator itself reports a hard evaluation failure (classad2
raises "failed to evaluate expression"; the C++ Evaluate() returned false)
the value is ``{"t":"eval_failed"}``.
"""

import datetime
import json
import math
import os
import sys
import time
import traceback

# formatTime(), splitTime(), absTime("...") without an offset etc. use the
# local time zone: pin it so results are reproducible.  The Rust side must
# assume UTC as the local zone when comparing.
os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()

# Evaluation mode.  HTCondor daemons and tools run the ClassAd library with
# "old ClassAd semantics" enabled unless the config knob
# STRICT_CLASSAD_EVALUATION is true (default false).  That is the default
# here too; pass --strict (or STARLING_ORACLE_STRICT=1) for the pure
# ClassAd-language semantics.  A local HTCondor configuration is never read.
STRICT = "--strict" in sys.argv[1:] or os.environ.get("STARLING_ORACLE_STRICT") == "1"
os.environ["CONDOR_CONFIG"] = "/dev/null"
for _k in list(os.environ):
    if _k.upper().startswith("_CONDOR_"):
        del os.environ[_k]
os.environ["_CONDOR_STRICT_CLASSAD_EVALUATION"] = "true" if STRICT else "false"

import classad2  # noqa: E402

try:  # private, but lets us see how much input the parser consumed
    from classad2._class_ad import _classad_parse_next as _parse_next
except Exception:  # pragma: no cover
    _parse_next = None

RESERVED = "starling_r__"
OLD_SEMANTICS = None
MAX_DEPTH = 4
MAX_LIST = 64
_PROBE_NAME = "starling_p_" + os.urandom(6).hex() + "__"


def _init_mode():
    """Make HTCondor's compat layer apply STRICT_CLASSAD_EVALUATION now.

    classad2 only runs HTCondor's ClassAd reconfiguration (which sets the
    library-global "old ClassAd semantics" flag) the first time the file
    parser is used; until then the library is in strict mode.  Trigger it
    once up front so every request sees the same mode, then verify it.
    """
    if _parse_next is not None:
        _parse_next("[starling_warmup = 1]", int(classad2.ParserType.New), 0)
    try:
        classad2.ClassAd("[x = 010]")
        old_semantics = False  # leading-zero integers are rejected in old mode
    except Exception:
        old_semantics = True
    return old_semantics


_PARSERS = {
    "old": classad2.ParserType.Old,
    "new": classad2.ParserType.New,
    "json": classad2.ParserType.JSON,
    "auto": classad2.ParserType.Auto,
}


class ParseError(Exception):
    pass


class EvalFailed(Exception):
    pass


# --------------------------------------------------------------------------
# Parsing helpers


_SENTINEL = "starling_s_" + os.urandom(6).hex() + "__"


def _ctor(text):
    try:
        return classad2.ClassAd(text)
    except Exception as e:
        raise ParseError(str(e))


def _parse_wrapped(text):
    """Parse TEXT as the value of a randomly named attribute, with a second
    (sentinel) attribute after it, and return the ExprTree.

    classad2.ExprTree(text) just parses "[expression = TEXT]" and silently
    ignores trailing junk, so "1; b = 2" or "1] [x" would be accepted.  The
    sentinel must survive (so nothing closed the record early), the record
    must hold exactly the two attributes, and the parenthesised form must
    parse too (which rejects "1;" and the like).

    Note: the file parser (_classad_parse_next) is deliberately not used
    here: its first use flips library-global evaluation settings (see
    _init_mode), and it is only needed for the multi-ad formats.
    """
    if not isinstance(text, str):
        raise ParseError("text must be a string")
    if "\0" in text:
        raise ParseError("NUL in text")
    names = {_PROBE_NAME.lower(), _SENTINEL.lower()}
    ad = _ctor("[%s = %s\n; %s = 0]" % (_PROBE_NAME, text, _SENTINEL))
    if {k.lower() for k in ad.keys()} != names or len(ad) != 2:
        raise ParseError("text is not a single expression")
    wrapped = _ctor("[%s = (%s\n); %s = 0]" % (_PROBE_NAME, text, _SENTINEL))
    if {k.lower() for k in wrapped.keys()} != names or len(wrapped) != 2:
        raise ParseError("text is not a single expression")
    return ad.lookup(_PROBE_NAME)


def parse_expr(text):
    """Parse ``text`` as exactly one ClassAd expression, returning an ExprTree."""
    return _parse_wrapped(text)


def _parse_one_ad(text):
    """Parse exactly one new-syntax record ``[ ... ]`` occupying all of ``text``."""
    tree = _parse_wrapped(text)
    ad = _ctor(text)
    if repr(ad) != repr(tree):
        raise ParseError("not a single ClassAd record: %r" % text[:80])
    return ad


def parse_ad(text, what):
    if text is None:
        return None
    if not isinstance(text, str):
        raise ParseError("%s: ad must be a string or null" % what)
    try:
        return _parse_one_ad(text)
    except ParseError as e:
        raise ParseError("%s: %s" % (what, e))


# --------------------------------------------------------------------------
# Canonicalisation


def quote_name(name):
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _real(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def _abstime_seconds(dt):
    if dt.tzinfo is not None and dt.tzinfo.utcoffset(dt) is not None:
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        delta = dt - epoch
    else:  # naive datetime: classad2 would have meant local time
        secs = classad2._convert_local_datetime_to_utc_ts(dt)
        return secs
    secs = delta.days * 86400 + delta.seconds
    if delta.microseconds:
        return secs + delta.microseconds / 1e6
    return secs


class Evaluator:
    def __init__(self, scope, target):
        self.scope = scope
        self.target = target
        self._trees = {}

    def ev(self, text):
        tree = self._trees.get(text)
        if tree is None:
            tree = classad2.ExprTree(text)
            self._trees[text] = tree
        try:
            return tree.eval(scope=self.scope, target=self.target)
        except UnicodeDecodeError as e:
            raise RuntimeError("value contains a string that is not valid UTF-8 "
                               "and cannot be represented (%s)" % e)
        except classad2.ClassAdException as e:
            if "failed to evaluate" in str(e):
                raise EvalFailed(str(e))
            raise

    def canon(self, path, depth=0):
        try:
            v = self.ev(path)
        except EvalFailed:
            return {"t": "eval_failed"}
        if isinstance(v, classad2.Value):
            if v == classad2.Value.Undefined:
                return {"t": "undefined"}
            if v == classad2.Value.Error:
                return {"t": "error"}
            raise RuntimeError("unknown classad2.Value %r" % (v,))
        if isinstance(v, bool):
            return {"t": "bool", "v": v}
        if isinstance(v, int):
            return {"t": "int", "v": v}
        if isinstance(v, float):
            # reltime is also handed to Python as a float: ask the library.
            if self.ev("isRelTime(%s)" % path) is True:
                return {"t": "reltime", "v": _real(v)}
            return {"t": "real", "v": _real(v)}
        if isinstance(v, str):
            return {"t": "string", "v": v}
        if isinstance(v, datetime.datetime):
            return {"t": "abstime", "v": _abstime_seconds(v)}
        if isinstance(v, list):
            if depth >= MAX_DEPTH:
                return {"t": "truncated"}
            n = len(v)
            out = [self.canon("%s[%d]" % (path, i), depth + 1) for i in range(min(n, MAX_LIST))]
            if n > MAX_LIST:
                out.append({"t": "truncated"})
            return {"t": "list", "v": out}
        if isinstance(v, classad2.ClassAd):
            if depth >= MAX_DEPTH:
                return {"t": "truncated"}
            out = {}
            for k in list(v.keys()):
                if k.lower() == RESERVED:
                    continue
                out[k.lower()] = self.canon("%s.%s" % (path, quote_name(k)), depth + 1)
            return {"t": "ad", "v": out}
        if isinstance(v, classad2.ExprTree):  # should not happen for eval()
            raise RuntimeError("unevaluated ExprTree %s" % v)
        raise RuntimeError("unexpected Python type %s" % type(v).__name__)


def canon_in(scope_text, target_ad, tree):
    """Canonical value of ``tree`` placed at RESERVED inside a fresh parse of
    ``scope_text`` (an empty ad when it is None)."""
    scope = classad2.ClassAd() if scope_text is None else _parse_one_ad(scope_text)
    scope[RESERVED] = tree
    return Evaluator(scope, target_ad).canon(RESERVED)


# --------------------------------------------------------------------------
# Operations


def op_eval(req):
    try:
        tree = parse_expr(req.get("expr"))
        parse_ad(req.get("my"), "my")  # validate
        target = parse_ad(req.get("target"), "target")
    except ParseError as e:
        return {"parse_error": str(e)}
    return {"value": canon_in(req.get("my"), target, tree)}


def op_match(req):
    try:
        left = parse_ad(req.get("left"), "left")
        right = parse_ad(req.get("right"), "right")
    except ParseError as e:
        return {"parse_error": str(e)}
    if left is None or right is None:
        return {"parse_error": "left and right ads are required"}
    req_tree = parse_expr("MY.Requirements")
    rank_tree = parse_expr("MY.Rank")
    return {
        "match": bool(left.symmetricMatch(right)),
        "left_matches_right": canon_in(req["left"], right, req_tree),
        "right_matches_left": canon_in(req["right"], left, req_tree),
        "left_rank": canon_in(req["left"], right, rank_tree),
        "right_rank": canon_in(req["right"], left, rank_tree),
    }


def op_unparse(req):
    try:
        tree = parse_expr(req.get("expr"))
    except ParseError as e:
        return {"parse_error": str(e)}
    return {"text": str(tree), "compact": repr(tree)}


def _ad_dict(ad, fmt):
    return {k: fmt(ad.lookup(k)) for k in ad.keys()}


def _parse_ads_work(text, parser):
    ads = []
    err = None
    if _parse_next is None:
        try:
            ads = list(classad2.parseAds(text, parser))
        except Exception as e:
            err = str(e)
        rest = ""
    else:
        raw = text.encode("utf-8")
        off = 0
        while True:
            try:
                ad, n = _parse_next(text, int(parser), off)
            except Exception as e:
                err = str(e)
                break
            if ad is None or n == 0:
                break
            ads.append(ad)
            off += n
        rest = raw[off:].decode("utf-8", "replace")
    out = {
        "ads": [_ad_dict(a, str) for a in ads],
        "ads_compact": [_ad_dict(a, repr) for a in ads],
    }
    if err is not None:
        out["parse_error"] = err
    elif rest.strip():
        consumed = len(text.encode("utf-8")) - len(rest.encode("utf-8"))
        out["parse_error"] = "unparsed input at byte %d: %r" % (consumed, rest[:80])
    return out


def _isolated(fn, *args):
    """Run fn(*args) in a forked child and return its (JSON-able) result.

    HTCondor's file parser touches library-global state (configuration,
    evaluation mode); running parse_ads requests in a throw-away child keeps
    the long-lived process's state identical for every eval request.
    """
    if not hasattr(os, "fork"):
        return fn(*args)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(rfd)
            try:
                res = fn(*args)
            except Exception as e:
                res = {"oracle_error": "%s: %s" % (type(e).__name__, e)}
            data = json.dumps(res, ensure_ascii=False).encode("utf-8")
            view = memoryview(data)
            while view:
                n = os.write(wfd, view)
                view = view[n:]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    chunks = []
    while True:
        b = os.read(rfd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"oracle_error": "parse_ads child died (status %d)" % status}
    return json.loads(b"".join(chunks).decode("utf-8"))


def op_parse_ads(req):
    text = req.get("text")
    fmt = req.get("format", "auto")
    if not isinstance(text, str):
        return {"oracle_error": "text must be a string"}
    if fmt not in _PARSERS:
        return {"oracle_error": "unknown format %r" % (fmt,)}
    if "\0" in text:
        return {"parse_error": "NUL in input", "ads": [], "ads_compact": []}
    return _isolated(_parse_ads_work, text, _PARSERS[fmt])


def op_info(req):
    return {
        "htcondor_classad_version": classad2.version(),
        "old_classad_semantics": OLD_SEMANTICS,
        "strict": STRICT,
        "tz": "UTC",
        "reserved_name": RESERVED,
        "max_depth": MAX_DEPTH,
        "max_list": MAX_LIST,
    }


OPS = {
    "info": op_info,
    "eval": op_eval,
    "match": op_match,
    "unparse": op_unparse,
    "parse_ads": op_parse_ads,
}


def handle_line(line):
    rid = None
    try:
        req = json.loads(line)
        if not isinstance(req, dict):
            raise ValueError("request must be a JSON object")
        rid = req.get("id")
        op = OPS.get(req.get("op"))
        if op is None:
            resp = {"oracle_error": "unknown op %r" % (req.get("op"),)}
        else:
            resp = op(req)
    except BaseException as e:  # never die on a request
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        tb = traceback.format_exc(limit=3)
        resp = {"oracle_error": "%s: %s" % (type(e).__name__, e), "traceback": tb}
    out = {"id": rid}
    out.update(resp)
    return json.dumps(out, ensure_ascii=False, allow_nan=False)


def main():
    global OLD_SEMANTICS
    OLD_SEMANTICS = _init_mode()
    if OLD_SEMANTICS == STRICT:
        sys.stderr.write("oracle.py: warning: could not put HTCondor's ClassAd library in %s mode\n"
                         % ("strict" if STRICT else "old-semantics"))
    # Line-oriented and unbuffered-ish regardless of how we were started.
    stdin = open(sys.stdin.fileno(), "r", encoding="utf-8", errors="replace", newline="\n", closefd=False)
    stdout = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)
    for line in stdin:
        if not line.strip():
            continue
        try:
            text = handle_line(line)
        except Exception as e:  # e.g. serialisation problems
            text = json.dumps({"id": None, "oracle_error": "internal: %s" % e})
        stdout.write(text + "\n")
        stdout.flush()


if __name__ == "__main__":
    main()
