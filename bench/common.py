"""What the benches share: running the starling binary and waiting with a
deadline. Imported by bench/*/*.py (they put bench/ on sys.path)."""

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
