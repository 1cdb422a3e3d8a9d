//! Standard output for `testnet` and `demo`, which keep SIGPIPE ignored
//! (they talk to agents over sockets that may close under them, and a
//! signal must not end them there): a closed output (`demo | head`) ends
//! their printing, quietly, and the command goes on to finish its work
//! (stopping the pool it started), where `println!` would panic.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output is found closed: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints a line as `println!` does, unless the output is closed.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}

/// Writes `args` and a newline to standard output; an error (the reader
/// went away) stops all further output instead of panicking.
pub(crate) fn line(args: std::fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if writeln!(out, "{args}").and_then(|()| out.flush()).is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}
