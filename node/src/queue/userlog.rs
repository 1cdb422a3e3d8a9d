//! The job's user log (`log = FILE` in the submit file): HTCondor's event
//! log, one event per state change, so that tools that wait on it
//! (`condor_wait`, DAGMan-like scripts) see the job's life as they would
//! under HTCondor:
//!
//! ```text
//! 000 (012.003.000) 2026-11-24 02:15:00 Job submitted from host: <agent 12D3…>
//! ...
//! ```
//!
//! Each event is appended and synced, with the job owner's rights (an
//! agent running as root never writes a log its user could not); a log
//! that cannot be written is reported in the agent's log and never stops
//! the job. `submit` refuses a log its user cannot write.

use std::io::Write as _;
use std::path::Path;

use starling_storage::JobId;

use crate::users::Rights;

/// HTCondor's event codes used here.
pub mod codes {
    pub const SUBMIT: u32 = 0;
    pub const EXECUTE: u32 = 1;
    pub const EVICTED: u32 = 4;
    pub const TERMINATED: u32 = 5;
    pub const ABORTED: u32 = 9;
    pub const HELD: u32 = 12;
    pub const RELEASED: u32 = 13;
    pub const JOB_DISCONNECTED: u32 = 22;
    pub const JOB_RECONNECTED: u32 = 23;
    pub const JOB_RECONNECT_FAILED: u32 = 24;
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
pub fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `2026-11-24 02:15:00` (UTC) for unix seconds.
pub fn timestamp(secs: i64) -> String {
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One event as HTCondor writes it; `body` lines are indented.
pub fn event(code: u32, id: JobId, at: i64, headline: &str, body: &[String]) -> String {
    let mut text = format!(
        "{code:03} ({:03}.{:03}.000) {} {headline}\n",
        id.cluster,
        id.proc,
        timestamp(at)
    );
    for line in body {
        text.push('\t');
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("...\n");
    text
}

/// Appends `text` to the log at `path`, opened (and created if need be)
/// with `rights`.
pub fn append(rights: &Rights, path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = rights.open(path, std::fs::OpenOptions::new().create(true).append(true))?;
    file.write_all(text.as_bytes())?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_look_like_htcondors() {
        assert_eq!(timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(timestamp(1_795_000_000), "2026-11-18 11:06:40");
        let e = event(
            codes::TERMINATED,
            JobId::new(12, 3),
            0,
            "Job terminated.",
            &["(1) Normal termination (return value 3)".to_owned()],
        );
        assert_eq!(
            e,
            "005 (012.003.000) 1970-01-01 00:00:00 Job terminated.\n\t(1) Normal termination (return value 3)\n...\n"
        );
    }
}
