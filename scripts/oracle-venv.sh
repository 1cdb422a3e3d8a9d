#!/usr/bin/env bash
# Create (idempotently) the Python venv holding HTCondor's Python package,
# the oracle of the differential ClassAd suite (protocol/tests/conformance/
# oracle.py) and submit suite (protocol/tests/submit/oracle.py).
#
#   scripts/oracle-venv.sh            # prints the venv's python on the last line
#   STARLING_ORACLE_VENV=/some/dir scripts/oracle-venv.sh
#
# Only the python path goes to stdout; all progress output goes to stderr.
set -euo pipefail

HTCONDOR_VERSION="25.14.1"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/.." && pwd)"
VENV="${STARLING_ORACLE_VENV:-$REPO/target/oracle-venv}"
PY="$VENV/bin/python"

log() { printf 'oracle-venv: %s\n' "$*" >&2; }

find_python() {
    local c
    for c in "${PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10 python3.9; do
        [ -n "$c" ] || continue
        if command -v "$c" >/dev/null 2>&1; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

# True if the venv's python imports classad2 from htcondor==$HTCONDOR_VERSION.
venv_ok() {
    [ -x "$PY" ] || return 1
    "$PY" - "$HTCONDOR_VERSION" >/dev/null 2>&1 <<'PYEOF'
import sys
from importlib.metadata import version
if version("htcondor") != sys.argv[1]:
    sys.exit(1)
import classad2
classad2.ExprTree("1 + 1").eval()
PYEOF
}

# The submit suite's oracle compiles a few lines of C++ against the wheel's
# library (protocol/tests/submit/oracle_shim.cpp).
if ! command -v "${CXX:-g++}" >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        log "installing g++ with apt-get (for the submit oracle)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq g++ >&2 || { apt-get update -qq >&2 && apt-get install -y -qq g++ >&2; }
    else
        log "warning: no C++ compiler (${CXX:-g++}); the submit differential suite needs one"
    fi
fi

if venv_ok; then
    log "up to date: $VENV (htcondor==$HTCONDOR_VERSION)"
    echo "$PY"
    exit 0
fi

SYS_PY="$(find_python)" || { log "error: python3 not found"; exit 1; }

# A venv with a working pip needs the ensurepip module (python3-venv on Debian).
if [ ! -x "$PY" ] || ! "$PY" -m pip --version >/dev/null 2>&1; then
    if ! "$SYS_PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
            pyver="$("$SYS_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
            log "installing python3-venv with apt-get"
            export DEBIAN_FRONTEND=noninteractive
            apt-get update -qq >&2 || true
            apt-get install -y -qq "python${pyver}-venv" >&2 \
                || apt-get install -y -qq python3-venv >&2
        else
            log "error: the python 'venv'/'ensurepip' modules are missing;"
            log "       install python3-venv (e.g. apt-get install python3-venv)"
            exit 1
        fi
    fi
    if [ -e "$VENV" ]; then
        log "recreating broken venv at $VENV"
        rm -rf "$VENV"
    fi
    log "creating venv at $VENV with $SYS_PY"
    mkdir -p "$(dirname "$VENV")"
    "$SYS_PY" -m venv "$VENV" >&2
fi

log "installing htcondor==$HTCONDOR_VERSION"
"$PY" -m pip install --quiet --disable-pip-version-check --no-input \
    "htcondor==$HTCONDOR_VERSION" >&2

if ! venv_ok; then
    log "error: htcondor==$HTCONDOR_VERSION installed but classad2 does not work in $VENV"
    exit 1
fi
log "ready: $VENV"
echo "$PY"
