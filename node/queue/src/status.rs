//! HTCondor's job status codes (`JobStatus`), and the letter `condor_q`
//! and the words messages show for each. Constants and plain functions:
//! it reads no job and uses nothing else of the crate.

pub const IDLE: i64 = 1;
pub const RUNNING: i64 = 2;
pub const REMOVED: i64 = 3;
pub const COMPLETED: i64 = 4;
pub const HELD: i64 = 5;
pub const TRANSFERRING_OUTPUT: i64 = 6;
pub const SUSPENDED: i64 = 7;

/// The letter `condor_q` shows.
pub fn letter(code: i64) -> char {
    match code {
        IDLE => 'I',
        RUNNING => 'R',
        REMOVED => 'X',
        COMPLETED => 'C',
        HELD => 'H',
        TRANSFERRING_OUTPUT => '>',
        SUSPENDED => 'S',
        _ => '?',
    }
}

/// A job status in words ("idle", "held"), for messages.
pub fn name_of(code: i64) -> &'static str {
    match code {
        IDLE => "idle",
        RUNNING => "running",
        REMOVED => "removed",
        COMPLETED => "completed",
        HELD => "held",
        TRANSFERRING_OUTPUT => "transferring output",
        SUSPENDED => "suspended",
        _ => "in an unknown state",
    }
}
