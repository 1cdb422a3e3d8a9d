//! When a running job moves to another machine, and to which.
//!
//! An execute agent asks [`decide`] about each job it runs, from its own
//! load and the machine ads of its view; the submit agent, which owns the
//! job, asks [`may_move`] before it claims the destination. Three rules,
//! from the seeds:
//!
//! - **Owner reclaim** (Hector): the machine's owner policy wants the job
//!   gone. It leaves anyway; moving it now to the best candidate keeps its
//!   progress and spares it a wait in the queue. No gain is asked for.
//! - **Threshold** (Dynamite §4, when a threshold `T` is configured): the
//!   machine is overloaded, `L > T` with `L` its load per processor, and a
//!   candidate has capacity `C > 1 − T` (its free share of its processors).
//! - **Goodput** (Basney; Hector's migrate-to-idle is its common case): the
//!   job's expected remaining time there, plus the cost of moving its
//!   checkpoint (sent to the store peers and fetched back at the measured
//!   rate, and the restart), beats the remaining time here by a margin.
//!
//! # Hysteresis
//!
//! Loads are taken *with the move made*: the candidate's load counts the
//! job's processors, this machine's does not. The threshold rule also asks
//! that the job would see a load lower by [`Settings::margin`] there than
//! here; the goodput rule asks that the time saved is at least that
//! fraction of the time left. Both hold in one direction only, so two
//! machines of equal load never trade a job back and forth. On top of it a
//! job stays at least [`Settings::min_residence_secs`] where it landed and
//! moves at most [`Settings::max_per_hour`] times an hour (neither applies
//! to an owner reclaim, which is not the job's choice).

/// The migration settings of an agent (`[migration]` in its configuration).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Dynamite's threshold `T` in (0, 1]; `None`: the rule is off.
    pub threshold: Option<f64>,
    /// Move to a faster or less loaded machine when the goodput rule says
    /// it pays (Hector's migrate-to-idle).
    pub to_idle: bool,
    /// The gain asked for, as a fraction: of the time left (goodput), or of
    /// the load (threshold).
    pub margin: f64,
    /// Seconds a job stays where it landed before it is moved for speed or
    /// load.
    pub min_residence_secs: i64,
    /// Moves per job in any hour, at most.
    pub max_per_hour: u32,
    /// Compare the machines' benchmarks (`Mips`); off where they say
    /// nothing (agents of a testnet share one host).
    pub compare_speed: bool,
    /// Seconds a restart costs besides moving the checkpoint (the vacate,
    /// the claim, the hand-over).
    pub restart_secs: f64,
    /// Bytes per second assumed for moving a checkpoint when none was
    /// measured.
    pub default_rate: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            threshold: None,
            to_idle: true,
            margin: 0.25,
            min_residence_secs: 300,
            max_per_hour: 4,
            compare_speed: true,
            restart_secs: 10.0,
            default_rate: 10.0 * 1024.0 * 1024.0,
        }
    }
}

/// A machine, as its ad says: this one or a candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// `LoadAvg`: processes running or waiting, this job's included where
    /// it runs.
    pub load: f64,
    /// `TotalCpus`.
    pub cpus: f64,
    /// `Mips`, if known.
    pub speed: Option<f64>,
}

/// A machine the job could move to: free for it (an unclaimed slot that
/// matches it both ways) and not the one it runs on.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate<T> {
    pub machine: Machine,
    /// Round-trip time, where measured: breaks ties.
    pub rtt_ms: Option<f64>,
    pub id: T,
}

/// The job, as its execute agent knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// `RequestCpus`.
    pub cpus: f64,
    /// It checkpoints (`CheckpointExitCode` set), so a move keeps its
    /// progress.
    pub checkpoints: bool,
    /// `WantMigration` (default true).
    pub wanted: bool,
    /// Seconds of work it has done (all runs, at the speed it ran at).
    pub done_secs: f64,
    /// Seconds it is expected to run in all (`ExpectedRuntime`), if said;
    /// else it is expected to run as long again as it has (the usual
    /// heavy-tailed estimate).
    pub expected_secs: Option<f64>,
    /// Bytes of its last checkpoint.
    pub checkpoint_bytes: u64,
    /// Bytes per second its checkpoints were sent at, if measured.
    pub rate: Option<f64>,
    /// Seconds since it started on this machine.
    pub here_secs: i64,
    /// Unix times of its moves, any age.
    pub moves: Vec<i64>,
}

/// Why a job moves.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// The owner policy wants the machine back.
    OwnerReclaim,
    /// Dynamite's rule: load here per processor, capacity there.
    Overloaded { load: f64, capacity: f64 },
    /// The goodput rule: expected seconds left here and there (moving
    /// included).
    Faster { here_secs: f64, there_secs: f64 },
    /// A user or administrator asked (`starling migrate`).
    Asked,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::OwnerReclaim => write!(f, "the machine's owner reclaimed it"),
            Reason::Overloaded { load, capacity } => write!(
                f,
                "its machine is overloaded (load {load:.2} per processor; {capacity:.2} free there)"
            ),
            Reason::Faster {
                here_secs,
                there_secs,
            } => write!(
                f,
                "it is expected to end sooner there ({there_secs:.0} s left, moving included, against {here_secs:.0} s here)"
            ),
            Reason::Asked => write!(f, "it was asked to move"),
        }
    }
}

/// Why a job stays.
#[derive(Clone, Debug, PartialEq)]
pub enum Stay {
    /// `WantMigration = false`.
    OptedOut,
    /// It does not checkpoint: a move would start it over.
    NoCheckpoints,
    /// It arrived less than the residence time ago.
    JustArrived { secs: i64 },
    /// It has moved as often as an hour allows.
    MovedEnough { moves: u32 },
    /// No machine is free for it.
    NoCandidate,
    /// No rule says moving pays.
    NoGain,
}

impl std::fmt::Display for Stay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stay::OptedOut => write!(f, "the job says WantMigration = false"),
            Stay::NoCheckpoints => write!(
                f,
                "the job does not checkpoint (no checkpoint_exit_code): moving it would start it over"
            ),
            Stay::JustArrived { secs } => {
                write!(f, "the job arrived {secs} s ago, less than the residence time")
            }
            Stay::MovedEnough { moves } => {
                write!(f, "the job moved {moves} times in the last hour, the most allowed")
            }
            Stay::NoCandidate => write!(f, "no machine is free for the job"),
            Stay::NoGain => write!(f, "no machine is enough better to pay for the move"),
        }
    }
}

/// A move: to which candidate (an index into the slice given) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    pub to: usize,
    pub reason: Reason,
}

/// Whether the job may move at all, now (`now` in unix seconds): its own
/// wishes and the limits of `settings`. `reclaim`: its machine's owner
/// wants it gone, so the residence and hourly limits do not apply.
pub fn may_move(job: &Job, settings: &Settings, reclaim: bool, now: i64) -> Result<(), Stay> {
    if !job.wanted {
        return Err(Stay::OptedOut);
    }
    if !job.checkpoints {
        return Err(Stay::NoCheckpoints);
    }
    if reclaim {
        return Ok(());
    }
    if job.here_secs < settings.min_residence_secs {
        return Err(Stay::JustArrived {
            secs: job.here_secs.max(0),
        });
    }
    let recent = moves_in_hour(&job.moves, now);
    if recent >= settings.max_per_hour {
        return Err(Stay::MovedEnough { moves: recent });
    }
    Ok(())
}

/// The job's moves in the hour up to `now`.
pub fn moves_in_hour(moves: &[i64], now: i64) -> u32 {
    let recent = moves
        .iter()
        .filter(|&&t| t > now - 3600 && t <= now)
        .count();
    u32::try_from(recent).unwrap_or(u32::MAX)
}

/// The moves worth keeping in a job's record: those of the last hour, the
/// newest [`KEPT_MOVES`] at most.
pub fn recent_moves(moves: &[i64], now: i64) -> Vec<i64> {
    let mut kept: Vec<i64> = moves
        .iter()
        .copied()
        .filter(|&t| t > now - 3600 && t <= now)
        .collect();
    kept.sort_unstable();
    let drop = kept.len().saturating_sub(KEPT_MOVES);
    kept.drain(..drop);
    kept
}

/// Moves kept in a job's record, at most.
pub const KEPT_MOVES: usize = 64;

/// Whether the job running `here` moves, and where: the rules above in
/// order (owner reclaim, threshold, goodput), each taking the best
/// candidate it accepts.
pub fn decide<T>(
    job: &Job,
    here: &Machine,
    reclaim: bool,
    candidates: &[Candidate<T>],
    settings: &Settings,
    now: i64,
) -> Result<Move, Stay> {
    may_move(job, settings, reclaim, now)?;
    let usable: Vec<usize> = (0..candidates.len())
        .filter(|&i| usable(&candidates[i].machine))
        .collect();
    if usable.is_empty() {
        return Err(Stay::NoCandidate);
    }
    let speed_here = speed(here, here, settings);
    let rate_here = share(here.load, here.cpus, 0.0, job.cpus) * speed_here;
    let rate_there =
        |m: &Machine| share(m.load, m.cpus, job.cpus, job.cpus) * speed(m, here, settings);
    // The best candidate: the most work per second there, then nearest.
    let best = *usable
        .iter()
        .max_by(|&&a, &&b| {
            let (ca, cb) = (&candidates[a], &candidates[b]);
            rate_there(&ca.machine)
                .total_cmp(&rate_there(&cb.machine))
                .then_with(|| {
                    let ra = ca.rtt_ms.unwrap_or(f64::INFINITY);
                    let rb = cb.rtt_ms.unwrap_or(f64::INFINITY);
                    rb.total_cmp(&ra)
                })
                .then(b.cmp(&a))
        })
        .expect("usable is not empty");
    if reclaim {
        return Ok(Move {
            to: best,
            reason: Reason::OwnerReclaim,
        });
    }
    if let Some(t) = settings.threshold.filter(|t| *t > 0.0) {
        let load = per_cpu(here.load, here.cpus);
        if load > t {
            let m = &candidates[best].machine;
            let capacity = 1.0 - per_cpu(m.load, m.cpus);
            let load_there = per_cpu(m.load + job.cpus, m.cpus);
            if capacity > 1.0 - t && load_there < load * (1.0 - settings.margin) {
                return Ok(Move {
                    to: best,
                    reason: Reason::Overloaded { load, capacity },
                });
            }
        }
    }
    if settings.to_idle {
        let left = remaining(job);
        if left > 0.0 && rate_here > 0.0 {
            let m = &candidates[best].machine;
            let there = rate_there(m);
            if there > 0.0 {
                let here_secs = left / rate_here;
                let there_secs = left / there + moving_secs(job, settings);
                if there_secs < here_secs * (1.0 - settings.margin) {
                    return Ok(Move {
                        to: best,
                        reason: Reason::Faster {
                            here_secs,
                            there_secs,
                        },
                    });
                }
            }
        }
    }
    Err(Stay::NoGain)
}

/// Seconds of work left, at full speed: what the job said it needs less
/// what it did, else as much as it did.
pub fn remaining(job: &Job) -> f64 {
    let done = job.done_secs.max(0.0);
    match job.expected_secs {
        Some(e) if e.is_finite() && e > 0.0 => (e - done).max(0.0),
        _ => done,
    }
}

/// Seconds a move costs: the checkpoint sent to its store peers and
/// fetched back by the new machine at the measured rate, and the restart.
pub fn moving_secs(job: &Job, settings: &Settings) -> f64 {
    let rate = job
        .rate
        .filter(|r| r.is_finite() && *r > 0.0)
        .unwrap_or(settings.default_rate)
        .max(1.0);
    2.0 * job.checkpoint_bytes as f64 / rate + settings.restart_secs.max(0.0)
}

fn usable(m: &Machine) -> bool {
    m.load.is_finite() && m.load >= 0.0 && m.cpus.is_finite() && m.cpus > 0.0
}

fn per_cpu(load: f64, cpus: f64) -> f64 {
    // A load that is not a number says nothing: no load.
    if cpus > 0.0 && load.is_finite() {
        load.max(0.0) / cpus
    } else {
        0.0
    }
}

/// The share of `want` processors the job gets on a machine of `cpus`
/// with `load` runnable processes, `added` of them the job's own once it
/// is there: 1 when nothing competes.
fn share(load: f64, cpus: f64, added: f64, want: f64) -> f64 {
    if cpus.is_nan() || cpus <= 0.0 || !load.is_finite() {
        return 0.0;
    }
    let want = want.max(1.0).min(cpus);
    let runnable = (load.max(0.0) + added).max(want);
    (cpus / runnable).min(1.0)
}

/// A machine's speed relative to `here`: 1 unless both benchmarks are
/// known and speed is compared.
fn speed(m: &Machine, here: &Machine, settings: &Settings) -> f64 {
    if !settings.compare_speed {
        return 1.0;
    }
    match (m.speed, here.speed) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() => a / b,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(load: f64, cpus: f64) -> Machine {
        Machine {
            load,
            cpus,
            speed: None,
        }
    }

    fn candidate(load: f64, cpus: f64) -> Candidate<&'static str> {
        Candidate {
            machine: machine(load, cpus),
            rtt_ms: None,
            id: "c",
        }
    }

    fn job() -> Job {
        Job {
            cpus: 1.0,
            checkpoints: true,
            wanted: true,
            done_secs: 600.0,
            expected_secs: None,
            checkpoint_bytes: 0,
            rate: None,
            here_secs: 600,
            moves: Vec::new(),
        }
    }

    fn settings() -> Settings {
        Settings {
            compare_speed: false,
            ..Settings::default()
        }
    }

    const NOW: i64 = 1_800_000_000;

    #[test]
    fn an_owner_reclaim_moves_to_the_best_free_machine_whatever_the_gain() {
        let mut j = job();
        j.here_secs = 5;
        j.moves = vec![NOW - 10; 10];
        let c = [candidate(1.5, 2.0), candidate(0.0, 2.0)];
        let m = decide(&j, &machine(1.0, 2.0), true, &c, &settings(), NOW).unwrap();
        assert_eq!(
            m,
            Move {
                to: 1,
                reason: Reason::OwnerReclaim
            }
        );
        assert_eq!(
            decide(
                &j,
                &machine(1.0, 2.0),
                true,
                &[] as &[Candidate<()>],
                &settings(),
                NOW
            ),
            Err(Stay::NoCandidate)
        );
    }

    #[test]
    fn a_job_that_opted_out_or_does_not_checkpoint_never_moves() {
        let c = [candidate(0.0, 2.0)];
        let mut j = job();
        j.wanted = false;
        assert_eq!(
            decide(&j, &machine(8.0, 1.0), true, &c, &settings(), NOW),
            Err(Stay::OptedOut)
        );
        let mut j = job();
        j.checkpoints = false;
        assert_eq!(
            decide(&j, &machine(8.0, 1.0), true, &c, &settings(), NOW),
            Err(Stay::NoCheckpoints)
        );
    }

    #[test]
    fn dynamite_threshold_moves_off_an_overloaded_machine_to_one_with_capacity() {
        let s = Settings {
            threshold: Some(0.7),
            to_idle: false,
            ..settings()
        };
        // Here: 4 runnable on 2 processors (L = 2 > 0.7); there: idle.
        let c = [candidate(0.0, 2.0)];
        let m = decide(&job(), &machine(4.0, 2.0), false, &c, &s, NOW).unwrap();
        assert!(matches!(m.reason, Reason::Overloaded { .. }), "{m:?}");
        // The candidate has too little capacity (C = 0.2 < 1 - T).
        let c = [candidate(1.6, 2.0)];
        assert_eq!(
            decide(&job(), &machine(4.0, 2.0), false, &c, &s, NOW),
            Err(Stay::NoGain)
        );
        // Not overloaded (L = 0.5 <= T).
        let c = [candidate(0.0, 2.0)];
        assert_eq!(
            decide(&job(), &machine(1.0, 2.0), false, &c, &s, NOW),
            Err(Stay::NoGain)
        );
    }

    #[test]
    fn two_equal_machines_never_trade_a_job_back_and_forth() {
        // Whatever the loads, a move from A to B and then the move back
        // (loads following the job) are never both taken.
        for s in [
            Settings {
                threshold: Some(0.3),
                ..settings()
            },
            settings(),
        ] {
            for owner_a in [0.0, 0.2, 0.5, 1.0, 1.5, 3.0] {
                for owner_b in [0.0, 0.2, 0.5, 1.0, 1.5, 3.0] {
                    let cpus = 1.0;
                    let a_with = machine(owner_a + 1.0, cpus);
                    let b_without = candidate(owner_b, cpus);
                    let b_with = machine(owner_b + 1.0, cpus);
                    let a_without = candidate(owner_a, cpus);
                    let there = decide(&job(), &a_with, false, &[b_without], &s, NOW).is_ok();
                    let back = decide(&job(), &b_with, false, &[a_without], &s, NOW).is_ok();
                    assert!(!(there && back), "A {owner_a} B {owner_b} {s:?}");
                }
            }
            // Equal loads: no move at all.
            let here = machine(1.5, 1.0);
            assert_eq!(
                decide(&job(), &here, false, &[candidate(0.5, 1.0)], &s, NOW),
                Err(Stay::NoGain)
            );
        }
    }

    #[test]
    fn migrate_to_idle_moves_a_job_slowed_by_its_owner_when_the_gain_beats_the_cost() {
        // Here the owner's process shares the processor: half speed.
        let here = machine(2.0, 1.0);
        let idle = [candidate(0.0, 1.0)];
        let m = decide(&job(), &here, false, &idle, &settings(), NOW).unwrap();
        match m.reason {
            Reason::Faster {
                here_secs,
                there_secs,
            } => {
                assert!((here_secs - 1200.0).abs() < 1e-6, "{here_secs}");
                assert!((there_secs - 610.0).abs() < 1e-6, "{there_secs}");
            }
            other => panic!("{other:?}"),
        }
        // A huge checkpoint over a slow link costs more than it saves.
        let mut j = job();
        j.checkpoint_bytes = 4 << 30;
        j.rate = Some(1024.0 * 1024.0);
        assert_eq!(
            decide(&j, &here, false, &idle, &settings(), NOW),
            Err(Stay::NoGain)
        );
        // Nearly done: not worth it either.
        let mut j = job();
        j.expected_secs = Some(605.0);
        assert_eq!(
            decide(&j, &here, false, &idle, &settings(), NOW),
            Err(Stay::NoGain)
        );
        // Switched off.
        let s = Settings {
            to_idle: false,
            ..settings()
        };
        assert_eq!(
            decide(&job(), &here, false, &idle, &s, NOW),
            Err(Stay::NoGain)
        );
    }

    #[test]
    fn a_faster_machine_counts_only_where_speeds_are_compared() {
        let mut here = machine(1.0, 1.0);
        here.speed = Some(1000.0);
        let mut fast = candidate(0.0, 1.0);
        fast.machine.speed = Some(3000.0);
        let s = Settings {
            compare_speed: true,
            ..settings()
        };
        assert!(decide(&job(), &here, false, std::slice::from_ref(&fast), &s, NOW).is_ok());
        assert_eq!(
            decide(&job(), &here, false, &[fast], &settings(), NOW),
            Err(Stay::NoGain)
        );
    }

    #[test]
    fn a_job_stays_its_residence_time_and_moves_at_most_so_often_an_hour() {
        let here = machine(3.0, 1.0);
        let idle = [candidate(0.0, 1.0)];
        let mut j = job();
        j.here_secs = 10;
        assert_eq!(
            decide(&j, &here, false, &idle, &settings(), NOW),
            Err(Stay::JustArrived { secs: 10 })
        );
        let mut j = job();
        j.moves = vec![NOW - 100, NOW - 200, NOW - 300, NOW - 3000, NOW - 4000];
        assert_eq!(
            decide(&j, &here, false, &idle, &settings(), NOW),
            Err(Stay::MovedEnough { moves: 4 })
        );
        j.moves.remove(0);
        assert!(decide(&j, &here, false, &idle, &settings(), NOW).is_ok());
    }

    #[test]
    fn the_best_candidate_is_the_least_loaded_then_the_nearest() {
        let here = machine(3.0, 1.0);
        let mut c = vec![
            candidate(0.5, 1.0),
            candidate(0.0, 1.0),
            candidate(0.0, 1.0),
        ];
        c[1].rtt_ms = Some(5.0);
        c[2].rtt_ms = Some(1.0);
        assert_eq!(
            decide(&job(), &here, false, &c, &settings(), NOW)
                .unwrap()
                .to,
            2
        );
    }

    #[test]
    fn machines_with_nonsense_ads_are_not_candidates() {
        let here = machine(3.0, 1.0);
        let c = [
            candidate(f64::NAN, 1.0),
            candidate(0.0, 0.0),
            candidate(-1.0, 4.0),
        ];
        assert_eq!(
            decide(&job(), &here, false, &c, &settings(), NOW),
            Err(Stay::NoCandidate)
        );
        // A nonsense load here never moves a job for gain.
        let c = [candidate(0.0, 1.0)];
        assert_eq!(
            decide(&job(), &machine(f64::NAN, 1.0), false, &c, &settings(), NOW),
            Err(Stay::NoGain)
        );
    }

    #[test]
    fn recent_moves_keeps_the_last_hour() {
        let kept = recent_moves(&[NOW - 4000, NOW - 10, NOW - 3599, NOW + 50], NOW);
        assert_eq!(kept, vec![NOW - 3599, NOW - 10]);
        let many: Vec<i64> = (0..100).map(|i| NOW - i).collect();
        assert_eq!(recent_moves(&many, NOW).len(), KEPT_MOVES);
        assert_eq!(moves_in_hour(&many, NOW), 100);
    }
}
