//! Progress on a terminal for the commands that wait a while (`testnet up`
//! and `down`, `ckpt get`, `demo`): a bar or a spinner on standard error
//! when it is a terminal, and nothing at all when it is not, so that
//! scripts, logs and tests see only the command's result.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// How often a spinner turns.
const TICK: Duration = Duration::from_millis(120);

/// Whether progress is shown: standard error is a terminal.
pub(crate) fn shown() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar of `len` steps, `{pos}/{len}` and a message, or a hidden one.
pub(crate) fn bar(len: u64) -> ProgressBar {
    if !shown() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(TICK);
    bar
}

/// A spinner saying `message` with the time elapsed, or a hidden one.
pub(crate) fn spinner(message: impl Into<std::borrow::Cow<'static, str>>) -> ProgressBar {
    if !shown() {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    spinner.set_message(message);
    spinner.enable_steady_tick(TICK);
    spinner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_nothing_is_drawn() {
        // Tests run with standard error captured or redirected.
        if shown() {
            return;
        }
        assert!(bar(3).is_hidden());
        assert!(spinner("waiting").is_hidden());
    }
}
