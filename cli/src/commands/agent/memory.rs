//! Handing memory the allocator no longer uses back to the system.
//!
//! glibc's malloc keeps freed memory for reuse and returns it to the kernel
//! only from the top of each arena. An agent allocates most in bursts (a
//! newcomer pulling every peer's view, a round of ads), and what those
//! bursts leave behind is spread over the arenas' middles, where it stays
//! resident: in a 50-agent testnet an idle agent held about 35 MB of
//! anonymous memory of which under 10 MB was in use. `malloc_trim(0)` also
//! releases whole free pages inside the arenas (`MADV_DONTNEED`), which took
//! that idle agent to about 14 MB (resident in all: 49 MiB to 30 MiB).
//!
//! So `starling agent` calls it every [`TRIM_INTERVAL`], on a blocking
//! thread since it locks each arena in turn. It does not change what the
//! agent allocates, only what the kernel counts as resident; the idle
//! agent's CPU stayed at about 0.1% of a core. Other allocators and C
//! libraries return memory on their own, so elsewhere this does nothing.

use std::time::Duration;

/// How often the agent returns freed memory to the system.
pub(super) const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Returns the allocator's free pages to the system, where that needs asking
/// (glibc); a no-op elsewhere.
pub(super) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers and may be called from any
    // thread at any time; glibc serialises it with malloc and free through
    // each arena's lock.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Calls [`release_free_memory`] every [`TRIM_INTERVAL`] until dropped or
/// aborted. Dropping the future midway is safe.
pub(super) async fn trim_periodically() {
    let mut ticks = tokio::time::interval(TRIM_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        // A failed trim (the blocking pool shutting down) is no reason to
        // stop the agent.
        let _ = tokio::task::spawn_blocking(release_free_memory).await;
    }
}
