"""What the benches share: running the starling binary and waiting with a
deadline. Imported by bench/*/*.py (they put bench/ on sys.path)."""

import re
import subprocess
import sys
import time


def run(starling, *args, cwd=None, check=True, timeout=300):
    """Runs `starling ARGS`; exits the bench, saying what failed, unless it
    succeeded or `check` is false."""
    out = subprocess.run([starling, *args], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout)
    if check and out.returncode != 0:
        sys.exit(f"starling {' '.join(args)} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return out


def wait_for(what, cond, timeout, every=0.2):
    """Polls `cond` until it returns something true, which is returned;
    exits the bench after `timeout` seconds naming `what`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(every)
    sys.exit(f"timed out after {timeout:.0f} s waiting for {what}")


def set_keys(text, section, keys):
    """`keys` (name: TOML value text) set in `[section]` of a TOML text."""
    lines = text.splitlines()
    header = f"[{section}]"
    try:
        at = lines.index(header)
    except ValueError:
        lines += ["", header]
        at = len(lines) - 1
    end = next((j for j in range(at + 1, len(lines)) if lines[j].startswith("[")), len(lines))
    kept = [l for l in lines[at + 1:end]
            if not any(re.match(rf"\s*{re.escape(k)}\s*=", l) for k in keys)]
    new = [f"{k} = {v}" for k, v in keys.items()]
    return "\n".join(lines[:at + 1] + new + kept + lines[end:]) + "\n"
