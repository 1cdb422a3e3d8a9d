//! The machine owner's policy: HTCondor's startd states and activities, and
//! when a claimed slot's job is suspended, continued, vacated or killed.
//!
//! [`evaluate`] reads the machine ad's policy expressions (`START`,
//! `SUSPEND`, `CONTINUE`, `PREEMPT`, `WANT_SUSPEND`, `WANT_VACATE`, `KILL`,
//! `MaxJobRetirementTime`, `MachineMaxVacateTime`) with MY = the machine and
//! TARGET = the running job, and `CurrentTime` set to `now`. A boolean that
//! is UNDEFINED or ERROR is not true, so a policy naming an attribute the
//! machine does not publish never suspends, preempts or kills by accident.
//! `WANT_VACATE` is the one exception: it only chooses *how* a preempted
//! job goes, and like HTCondor's startd an expression that does not
//! evaluate falls back to its default (true: a gentle vacate, not SIGKILL).
//! Absent expressions take HTCondor's defaults.
//!
//! [`step`] is one polling step of HTCondor's claimed-slot state machine
//! (the startd's `claimed_state` and `preempting_state` evaluation):
//!
//! - Claimed/Busy: with `WANT_SUSPEND`, a true `SUSPEND` suspends the job;
//!   without it, a true `PREEMPT` starts the job's retirement, or preempts
//!   it at once when no retirement time is left. As in HTCondor, when
//!   `WANT_SUSPEND` is true `PREEMPT` is only evaluated while suspended.
//! - Claimed/Suspended: `PREEMPT` is checked first and preempts at once (a
//!   stopped job makes no progress, so it gets no retirement); else a true
//!   `CONTINUE` resumes the job.
//! - Claimed/Retiring: retirement is irreversible once `PREEMPT` was true,
//!   as in HTCondor: the job keeps running until it ends or
//!   `MaxJobRetirementTime` since it started has passed, then it is
//!   preempted. It may be suspended meanwhile under `WANT_SUSPEND`.
//! - Preempting/Vacating: a true `KILL`, or `MachineMaxVacateTime` spent
//!   vacating, escalates to Preempting/Killing.
//!
//! Preempting goes to Vacating (SIGTERM, [`Action::Vacate`]) when
//! `WANT_VACATE`, else straight to Killing ([`Action::Kill`]). A Vacate of a
//! suspended job implies continuing it first: a stopped process cannot act
//! on SIGTERM, so the caller sends SIGCONT before it.
//!
//! [`machine_state`] is the machine-level (partitionable slot) state, which
//! HTCondor keeps Unclaimed while dynamic slots are claimed from it;
//! [`shown_state`] is what the machine ad shows of it and its claims. A
//! drain ([`DrainHow`], `starling drain`) and a preemption for a waiting job
//! make a job leave through the same states ([`must_leave`]).

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{ClassAd, Evaluator, Expr, Name, Side, Value};

/// HTCondor's default `MachineMaxVacateTime`, in seconds.
pub const DEFAULT_MACHINE_MAX_VACATE_TIME: i64 = 600;

/// A slot's state, as HTCondor's startd names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Owner,
    Unclaimed,
    Matched,
    Claimed,
    Preempting,
    Drained,
}

impl State {
    /// HTCondor's spelling, as in the `State` attribute.
    pub fn name(self) -> &'static str {
        match self {
            State::Owner => "Owner",
            State::Unclaimed => "Unclaimed",
            State::Matched => "Matched",
            State::Claimed => "Claimed",
            State::Preempting => "Preempting",
            State::Drained => "Drained",
        }
    }
}

/// A slot's activity within its state, as HTCondor's startd names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activity {
    Idle,
    Busy,
    Suspended,
    Vacating,
    Killing,
    Retiring,
}

impl Activity {
    /// HTCondor's spelling, as in the `Activity` attribute.
    pub fn name(self) -> &'static str {
        match self {
            Activity::Idle => "Idle",
            Activity::Busy => "Busy",
            Activity::Suspended => "Suspended",
            Activity::Vacating => "Vacating",
            Activity::Killing => "Killing",
            Activity::Retiring => "Retiring",
        }
    }
}

/// What the machine's policy expressions say now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdicts {
    /// `START`: the machine accepts this job (default true).
    pub start: bool,
    /// `SUSPEND` (default false).
    pub suspend: bool,
    /// `CONTINUE` (default true).
    pub continue_: bool,
    /// `PREEMPT` (default false).
    pub preempt: bool,
    /// `WANT_SUSPEND`: suspend rather than preempt (default false).
    pub want_suspend: bool,
    /// `WANT_VACATE`: SIGTERM with a grace period rather than SIGKILL
    /// (default true).
    pub want_vacate: bool,
    /// `KILL`: stop vacating and kill (default false).
    pub kill: bool,
    /// `MaxJobRetirementTime` in seconds, never negative (default 0).
    pub max_job_retirement_time: i64,
    /// `MachineMaxVacateTime` in seconds, never negative (default 600).
    pub machine_max_vacate_time: i64,
}

impl Default for Verdicts {
    /// HTCondor's defaults, what a machine ad without policy gets.
    fn default() -> Self {
        Verdicts {
            start: true,
            suspend: false,
            continue_: true,
            preempt: false,
            want_suspend: false,
            want_vacate: true,
            kill: false,
            max_job_retirement_time: 0,
            machine_max_vacate_time: DEFAULT_MACHINE_MAX_VACATE_TIME,
        }
    }
}

/// The machine with `CurrentTime`, which policy expressions use as an
/// attribute (`CurrentTime - EnteredCurrentActivity > 600`). An ad that
/// sets its own `CurrentTime` keeps it.
fn at(machine: &ClassAd, now: i64) -> ClassAd {
    let mut ad = machine.clone();
    if ad.get("CurrentTime").is_none() {
        ad.insert(Name::known("CurrentTime"), Expr::Literal(Value::Int(now)));
    }
    ad
}

/// `attr` of `machine` evaluated against `job`, `None` when absent.
fn value_of(machine: &ClassAd, job: Option<&ClassAd>, attr: &str, now: i64) -> Option<Value> {
    let expr = machine.get(attr)?;
    let mut ev = Evaluator::with_ads(Some(machine), job).now(now);
    Some(ev.eval_on(Side::My, expr))
}

/// A boolean policy expression: its default when absent, true only when it
/// evaluates to true (UNDEFINED and ERROR are not true).
fn flag(machine: &ClassAd, job: Option<&ClassAd>, attr: &str, default: bool, now: i64) -> bool {
    value_of(machine, job, attr, now).map_or(default, |v| requirement_holds(&v))
}

/// A duration in seconds: its default when absent or not a number,
/// negative values as 0.
fn seconds(machine: &ClassAd, job: Option<&ClassAd>, attr: &str, default: i64, now: i64) -> i64 {
    let secs = match value_of(machine, job, attr, now) {
        None => return default,
        Some(v) => match v.as_number() {
            Some(n) if n.is_finite() => n,
            // A number that is not finite is as useless as a string.
            _ => return default,
        },
    };
    // `as` saturates, so a huge value is a very long time, not a wrap.
    (secs.floor() as i64).max(0)
}

/// Evaluates the machine's policy for `job` (None: no job, as when
/// deciding whether the machine is available at all) at `now`.
pub fn evaluate(machine: &ClassAd, job: Option<&ClassAd>, now: i64) -> Verdicts {
    let m = &at(machine, now);
    let d = Verdicts::default();
    Verdicts {
        start: flag(m, job, "START", d.start, now),
        suspend: flag(m, job, "SUSPEND", d.suspend, now),
        continue_: flag(m, job, "CONTINUE", d.continue_, now),
        preempt: flag(m, job, "PREEMPT", d.preempt, now),
        want_suspend: flag(m, job, "WANT_SUSPEND", d.want_suspend, now),
        want_vacate: want_vacate(m, job, now),
        kill: flag(m, job, "KILL", d.kill, now),
        // HTCondor: a retirement time that is not a number means none.
        max_job_retirement_time: seconds(m, job, "MaxJobRetirementTime", 0, now),
        machine_max_vacate_time: seconds(
            m,
            job,
            "MachineMaxVacateTime",
            d.machine_max_vacate_time,
            now,
        ),
    }
}

/// `WANT_VACATE` falls back to true when it does not evaluate to a boolean
/// or number, as HTCondor's startd does: a policy naming a missing
/// attribute should not turn a gentle vacate into SIGKILL.
fn want_vacate(machine: &ClassAd, job: Option<&ClassAd>, now: i64) -> bool {
    match value_of(machine, job, "WANT_VACATE", now) {
        Some(v @ (Value::Bool(_) | Value::Int(_) | Value::Real(_))) => requirement_holds(&v),
        _ => true,
    }
}

/// A claimed slot's place in the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotState {
    pub state: State,
    pub activity: Activity,
    /// When `state` was entered (unix seconds).
    pub entered_state: i64,
    /// When `activity` was entered (unix seconds).
    pub entered_activity: i64,
    /// When the running job started, from which retirement is counted.
    pub job_started: i64,
}

/// What the caller does to the job after a [`step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    None,
    /// Stop the job (SIGSTOP).
    Suspend,
    /// Resume a suspended job (SIGCONT).
    Continue,
    /// Ask the job to leave (SIGTERM), SIGKILL after
    /// `machine_max_vacate_time` unless it has gone. A suspended job is
    /// continued first, so that it can act on the signal.
    Vacate,
    /// SIGKILL now.
    Kill,
}

impl SlotState {
    /// This slot moved to `state`/`activity` at `now`: entered times change
    /// only with what they time.
    fn moved(&self, state: State, activity: Activity, now: i64) -> SlotState {
        let state_changed = state != self.state;
        let activity_changed = state_changed || activity != self.activity;
        SlotState {
            state,
            activity,
            entered_state: if state_changed {
                now
            } else {
                self.entered_state
            },
            entered_activity: if activity_changed {
                now
            } else {
                self.entered_activity
            },
            job_started: self.job_started,
        }
    }
}

/// One polling step of the claimed slot `slot` under `v` at `now`: the
/// slot's next state and what to do to its job.
pub fn step(slot: &SlotState, v: &Verdicts, now: i64) -> (SlotState, Action) {
    match (slot.state, slot.activity) {
        (State::Claimed, Activity::Busy) => busy(slot, v, now),
        (State::Claimed, Activity::Suspended) => suspended(slot, v, now),
        (State::Claimed, Activity::Retiring) => retiring(slot, v, now),
        (State::Preempting, Activity::Vacating) => vacating(slot, v, now),
        // Killing ends when the job is gone, which the caller sees; other
        // states have no job for this policy to act on.
        _ => (*slot, Action::None),
    }
}

fn busy(slot: &SlotState, v: &Verdicts, now: i64) -> (SlotState, Action) {
    if v.want_suspend {
        if v.suspend {
            return suspend(slot, now);
        }
        // HTCondor: with WANT_SUSPEND, PREEMPT is evaluated only while
        // suspended, so a policy preempts through SUSPEND first.
        return (*slot, Action::None);
    }
    if !v.preempt {
        return (*slot, Action::None);
    }
    if retirement_left(slot, v, now) {
        return (
            slot.moved(State::Claimed, Activity::Retiring, now),
            Action::None,
        );
    }
    preempt(slot, v, now)
}

fn suspended(slot: &SlotState, v: &Verdicts, now: i64) -> (SlotState, Action) {
    // PREEMPT first, as HTCondor does: a machine that wants the job gone
    // does not resume it for another round.
    if v.preempt {
        return preempt(slot, v, now);
    }
    if v.continue_ {
        return (
            slot.moved(State::Claimed, Activity::Busy, now),
            Action::Continue,
        );
    }
    (*slot, Action::None)
}

fn retiring(slot: &SlotState, v: &Verdicts, now: i64) -> (SlotState, Action) {
    if !retirement_left(slot, v, now) {
        return preempt(slot, v, now);
    }
    if v.want_suspend && v.suspend {
        return suspend(slot, now);
    }
    (*slot, Action::None)
}

fn vacating(slot: &SlotState, v: &Verdicts, now: i64) -> (SlotState, Action) {
    let grace_over = now.saturating_sub(slot.entered_activity) >= v.machine_max_vacate_time;
    if v.kill || grace_over {
        return (
            slot.moved(State::Preempting, Activity::Killing, now),
            Action::Kill,
        );
    }
    (*slot, Action::None)
}

fn suspend(slot: &SlotState, now: i64) -> (SlotState, Action) {
    (
        slot.moved(State::Claimed, Activity::Suspended, now),
        Action::Suspend,
    )
}

fn preempt(slot: &SlotState, v: &Verdicts, now: i64) -> (SlotState, Action) {
    if v.want_vacate {
        (
            slot.moved(State::Preempting, Activity::Vacating, now),
            Action::Vacate,
        )
    } else {
        (
            slot.moved(State::Preempting, Activity::Killing, now),
            Action::Kill,
        )
    }
}

/// Whether the job may still run out its retirement.
fn retirement_left(slot: &SlotState, v: &Verdicts, now: i64) -> bool {
    v.max_job_retirement_time > now.saturating_sub(slot.job_started)
}

/// The machine-level state: Drained while `draining`; Owner when `START`,
/// evaluated with no job, is false (strictly: `KeyboardIdle > 900` with
/// the keyboard busy is false, while `TARGET.Owner == "x"` is UNDEFINED
/// without a job and leaves the machine available); else Unclaimed.
///
/// `_claims` does not enter into it: like HTCondor's partitionable slot,
/// the machine stays Unclaimed while dynamic slots carved from it are
/// claimed, so that what is left can still be matched.
pub fn machine_state(machine: &ClassAd, _claims: usize, draining: bool, now: i64) -> State {
    if draining {
        return State::Drained;
    }
    let m = &at(machine, now);
    match value_of(m, None, "START", now) {
        Some(v) if is_false(&v) => State::Owner,
        _ => State::Unclaimed,
    }
}

/// How a drain treats the jobs running when it begins, as HTCondor's
/// `condor_drain` options say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DrainHow {
    /// `-graceful`: jobs run out their `MaxJobRetirementTime`, then are
    /// vacated (SIGTERM and `MachineMaxVacateTime`).
    Graceful,
    /// `-quick`: jobs are vacated now, with no retirement.
    Quick,
    /// `-fast`: jobs are killed now.
    Fast,
}

impl DrainHow {
    /// The `condor_drain` option's name.
    pub fn name(self) -> &'static str {
        match self {
            DrainHow::Graceful => "graceful",
            DrainHow::Quick => "quick",
            DrainHow::Fast => "fast",
        }
    }
}

/// The verdicts for a slot whose job has to leave, for a drain or for a
/// waiting job that preempts it: `PREEMPT` is true and suspending would
/// make no room, so `WANT_SUSPEND` is off; a quick drain leaves no
/// retirement and a fast one does not vacate but kills. Otherwise the
/// owner's policy stands (`KILL`, `MachineMaxVacateTime`).
pub fn must_leave(mut v: Verdicts, drain: Option<DrainHow>) -> Verdicts {
    v.preempt = true;
    v.want_suspend = false;
    match drain {
        None | Some(DrainHow::Graceful) => {}
        Some(DrainHow::Quick) => v.max_job_retirement_time = 0,
        Some(DrainHow::Fast) => {
            // Killed now, also a job already being vacated.
            v.max_job_retirement_time = 0;
            v.want_vacate = false;
            v.kill = true;
        }
    }
    v
}

/// A retiring slot whose reason to leave went away (a drain cancelled)
/// goes back to Claimed/Busy; any other slot stays as it is. The owner's
/// own `PREEMPT`, if still true, starts its retirement again at the next
/// [`step`].
pub fn cancel_retirement(slot: &SlotState, now: i64) -> SlotState {
    match (slot.state, slot.activity) {
        (State::Claimed, Activity::Retiring) => slot.moved(State::Claimed, Activity::Busy, now),
        _ => *slot,
    }
}

/// The `State` and `Activity` the machine ad shows, from the machine-level
/// state and each claim's (a claim with no job yet is Claimed/Idle):
///
/// - no claims: the machine's own state, Idle;
/// - drained with claims left: Drained, Retiring while the jobs run out,
///   or Vacating/Killing while one is made to leave;
/// - else the most telling claim (Killing, Vacating, Retiring, Suspended,
///   Busy, Idle), as a user of `status` wants to see what happens to jobs.
///
/// `Matched` never appears: with no negotiator the claim request is the
/// match, and a granted request is Claimed at once.
pub fn shown_state(
    machine: State,
    claims: impl IntoIterator<Item = (State, Activity)>,
) -> (State, Activity) {
    let telling = |a: Activity| match a {
        Activity::Killing => 5,
        Activity::Vacating => 4,
        Activity::Retiring => 3,
        Activity::Suspended => 2,
        Activity::Busy => 1,
        Activity::Idle => 0,
    };
    let top = claims.into_iter().max_by_key(|(_, a)| telling(*a));
    match (machine, top) {
        (_, None) => (machine, Activity::Idle),
        (State::Drained, Some((_, a @ (Activity::Killing | Activity::Vacating)))) => {
            (State::Drained, a)
        }
        (State::Drained, Some(_)) => (State::Drained, Activity::Retiring),
        (_, Some(shown)) => shown,
    }
}

/// False as a ClassAd boolean: `false` or a zero number, not UNDEFINED.
fn is_false(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Real(r) => *r == 0.0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    const T0: i64 = 1_700_000_000;

    fn machine(extra: &str) -> ClassAd {
        parse_ad(&format!("[Cpus = 4; KeyboardIdle = 100; {extra}]")).unwrap()
    }

    fn job() -> ClassAd {
        parse_ad("[Owner = \"alice\"; ImageSize = 1000]").unwrap()
    }

    fn claimed(activity: Activity) -> SlotState {
        SlotState {
            state: State::Claimed,
            activity,
            entered_state: T0,
            entered_activity: T0,
            job_started: T0,
        }
    }

    fn verdicts(extra: &str) -> Verdicts {
        evaluate(&machine(extra), Some(&job()), T0)
    }

    #[test]
    fn names_are_htcondors() {
        assert_eq!(State::Preempting.name(), "Preempting");
        assert_eq!(State::Unclaimed.name(), "Unclaimed");
        assert_eq!(Activity::Busy.name(), "Busy");
        assert_eq!(Activity::Retiring.name(), "Retiring");
    }

    #[test]
    fn absent_policy_takes_htcondors_defaults() {
        assert_eq!(verdicts(""), Verdicts::default());
        let d = Verdicts::default();
        assert!(d.start && d.continue_ && d.want_vacate);
        assert!(!d.suspend && !d.preempt && !d.want_suspend && !d.kill);
        assert_eq!(d.max_job_retirement_time, 0);
        assert_eq!(d.machine_max_vacate_time, 600);
    }

    #[test]
    fn expressions_see_the_job_and_current_time() {
        let v = verdicts(
            "PREEMPT = TARGET.Owner == \"alice\"; \
             SUSPEND = CurrentTime > 1000; \
             MaxJobRetirementTime = TARGET.ImageSize * 2; \
             MachineMaxVacateTime = 30",
        );
        assert!(v.preempt && v.suspend);
        assert_eq!(v.max_job_retirement_time, 2000);
        assert_eq!(v.machine_max_vacate_time, 30);
    }

    #[test]
    fn bad_durations_fall_back() {
        let v = verdicts("MaxJobRetirementTime = -5; MachineMaxVacateTime = \"soon\"");
        assert_eq!(v.max_job_retirement_time, 0);
        assert_eq!(v.machine_max_vacate_time, 600);
        let v = verdicts("MaxJobRetirementTime = NoSuchAttr; MachineMaxVacateTime = -1");
        assert_eq!(v.max_job_retirement_time, 0);
        assert_eq!(v.machine_max_vacate_time, 0);
    }

    #[test]
    fn undefined_booleans_are_not_true_but_vacate_stays_gentle() {
        let v = verdicts(
            "START = NoSuch > 1; SUSPEND = NoSuch; CONTINUE = NoSuch; PREEMPT = 1/0 == 1; \
             WANT_SUSPEND = NoSuch; KILL = NoSuch; WANT_VACATE = NoSuch",
        );
        assert!(!v.start && !v.suspend && !v.continue_ && !v.preempt);
        assert!(!v.want_suspend && !v.kill);
        assert!(v.want_vacate, "undefined WANT_VACATE vacates, not kills");
        assert!(!verdicts("WANT_VACATE = false").want_vacate);
    }

    #[test]
    fn busy_suspends_only_when_wanted() {
        let slot = claimed(Activity::Busy);
        let v = verdicts("WANT_SUSPEND = true; SUSPEND = true");
        let (next, action) = step(&slot, &v, T0 + 10);
        assert_eq!(action, Action::Suspend);
        assert_eq!(next.activity, Activity::Suspended);
        assert_eq!(next.entered_activity, T0 + 10);
        assert_eq!(next.entered_state, T0, "still Claimed");
        let v = verdicts("WANT_SUSPEND = false; SUSPEND = true");
        assert_eq!(step(&slot, &v, T0 + 10), (slot, Action::None));
    }

    #[test]
    fn preempt_vacates_or_kills_without_retirement() {
        let slot = claimed(Activity::Busy);
        let (next, action) = step(&slot, &verdicts("PREEMPT = true"), T0 + 5);
        assert_eq!(action, Action::Vacate);
        assert_eq!(
            (next.state, next.activity),
            (State::Preempting, Activity::Vacating)
        );
        assert_eq!(next.entered_state, T0 + 5);
        let v = verdicts("PREEMPT = true; WANT_VACATE = false");
        let (next, action) = step(&slot, &v, T0 + 5);
        assert_eq!(action, Action::Kill);
        assert_eq!(next.activity, Activity::Killing);
    }

    #[test]
    fn with_want_suspend_preempt_waits_for_suspension() {
        let v = verdicts("WANT_SUSPEND = true; SUSPEND = false; PREEMPT = true");
        let busy = claimed(Activity::Busy);
        assert_eq!(step(&busy, &v, T0 + 1), (busy, Action::None));
        let (next, action) = step(&claimed(Activity::Suspended), &v, T0 + 1);
        assert_eq!(action, Action::Vacate);
        assert_eq!(next.state, State::Preempting);
    }

    #[test]
    fn retirement_lets_the_job_run_then_preempts() {
        let v = verdicts("PREEMPT = true; MaxJobRetirementTime = 3600");
        let (retiring, action) = step(&claimed(Activity::Busy), &v, T0 + 100);
        assert_eq!(action, Action::None);
        assert_eq!(retiring.activity, Activity::Retiring);
        assert_eq!(retiring.entered_activity, T0 + 100);
        // Irreversible, as in HTCondor: PREEMPT turning false does not unretire.
        let calm = verdicts("PREEMPT = false; MaxJobRetirementTime = 3600");
        assert_eq!(step(&retiring, &calm, T0 + 200), (retiring, Action::None));
        let (next, action) = step(&retiring, &calm, T0 + 3600);
        assert_eq!(action, Action::Vacate);
        assert_eq!(next.activity, Activity::Vacating);
        // A job already past its retirement is preempted at once.
        let (next, _) = step(&claimed(Activity::Busy), &v, T0 + 4000);
        assert_eq!(next.state, State::Preempting);
    }

    #[test]
    fn suspended_continues_or_waits() {
        let slot = claimed(Activity::Suspended);
        let (next, action) = step(&slot, &verdicts("CONTINUE = true"), T0 + 9);
        assert_eq!(action, Action::Continue);
        assert_eq!(next.activity, Activity::Busy);
        let v = verdicts("CONTINUE = KeyboardIdle > 300");
        assert_eq!(step(&slot, &v, T0 + 9), (slot, Action::None));
    }

    #[test]
    fn vacating_escalates_on_kill_or_after_the_grace_period() {
        let vacating = SlotState {
            state: State::Preempting,
            activity: Activity::Vacating,
            ..claimed(Activity::Busy)
        };
        let v = verdicts("MachineMaxVacateTime = 60");
        assert_eq!(step(&vacating, &v, T0 + 59), (vacating, Action::None));
        let (next, action) = step(&vacating, &v, T0 + 60);
        assert_eq!(action, Action::Kill);
        assert_eq!(next.activity, Activity::Killing);
        assert_eq!(next.entered_state, T0, "still Preempting");
        let v = verdicts("KILL = true");
        assert_eq!(step(&vacating, &v, T0 + 1).1, Action::Kill);
        let (killing, _) = step(&vacating, &v, T0 + 1);
        assert_eq!(step(&killing, &v, T0 + 2), (killing, Action::None));
    }

    #[test]
    fn machine_state_is_owner_only_when_start_is_false() {
        let busy_keyboard = machine("START = KeyboardIdle > 900");
        assert_eq!(machine_state(&busy_keyboard, 0, false, T0), State::Owner);
        let picky = machine("START = TARGET.Owner == \"x\"");
        assert_eq!(machine_state(&picky, 0, false, T0), State::Unclaimed);
        assert_eq!(machine_state(&machine(""), 3, false, T0), State::Unclaimed);
        assert_eq!(machine_state(&busy_keyboard, 0, true, T0), State::Drained);
    }

    #[test]
    fn drains_retire_vacate_or_kill_as_asked() {
        let v = verdicts("MaxJobRetirementTime = 3600; MachineMaxVacateTime = 30");
        let busy = claimed(Activity::Busy);
        // Graceful: the job runs out its retirement, then is vacated.
        let graceful = must_leave(v, Some(DrainHow::Graceful));
        let (retiring, action) = step(&busy, &graceful, T0 + 10);
        assert_eq!(
            (retiring.activity, action),
            (Activity::Retiring, Action::None)
        );
        let (after, action) = step(&retiring, &graceful, T0 + 3601);
        assert_eq!(
            (after.state, after.activity),
            (State::Preempting, Activity::Vacating)
        );
        assert_eq!(action, Action::Vacate);
        // Quick: vacated now, with the owner's vacate grace.
        let quick = must_leave(v, Some(DrainHow::Quick));
        assert_eq!(quick.machine_max_vacate_time, 30);
        assert_eq!(step(&busy, &quick, T0 + 10).1, Action::Vacate);
        // Fast: killed now, also a job a quick drain is vacating.
        let fast = must_leave(v, Some(DrainHow::Fast));
        assert_eq!(step(&busy, &fast, T0 + 10).1, Action::Kill);
        let vacating = SlotState {
            state: State::Preempting,
            ..claimed(Activity::Vacating)
        };
        let (killing, action) = step(&vacating, &fast, T0 + 1);
        assert_eq!(
            (killing.activity, action),
            (Activity::Killing, Action::Kill)
        );
        // A suspend-minded owner policy does not turn a drain into a pause.
        let suspender = verdicts("WANT_SUSPEND = true; SUSPEND = true");
        assert_eq!(
            step(&busy, &must_leave(suspender, None), T0).1,
            Action::Vacate
        );
    }

    #[test]
    fn a_cancelled_drain_puts_retiring_jobs_back_to_busy() {
        let retiring = claimed(Activity::Retiring);
        let back = cancel_retirement(&retiring, T0 + 5);
        assert_eq!(
            (back.state, back.activity),
            (State::Claimed, Activity::Busy)
        );
        assert_eq!(back.entered_activity, T0 + 5);
        // Vacating is past recall, as in HTCondor.
        let vacating = SlotState {
            state: State::Preempting,
            ..claimed(Activity::Vacating)
        };
        assert_eq!(cancel_retirement(&vacating, T0 + 5), vacating);
    }

    #[test]
    fn the_machine_shows_its_most_telling_state() {
        use Activity::*;
        assert_eq!(shown_state(State::Unclaimed, []), (State::Unclaimed, Idle));
        assert_eq!(shown_state(State::Owner, []), (State::Owner, Idle));
        assert_eq!(shown_state(State::Drained, []), (State::Drained, Idle));
        let claims = [(State::Claimed, Busy), (State::Claimed, Suspended)];
        assert_eq!(
            shown_state(State::Unclaimed, claims),
            (State::Claimed, Suspended)
        );
        // The owner came back while jobs run: the jobs' state shows.
        assert_eq!(
            shown_state(State::Owner, claims),
            (State::Claimed, Suspended)
        );
        assert_eq!(
            shown_state(State::Drained, claims),
            (State::Drained, Retiring)
        );
        let leaving = [(State::Claimed, Busy), (State::Preempting, Vacating)];
        assert_eq!(
            shown_state(State::Drained, leaving),
            (State::Drained, Vacating)
        );
        assert_eq!(
            shown_state(State::Unclaimed, leaving),
            (State::Preempting, Vacating)
        );
        assert_eq!(
            shown_state(State::Unclaimed, [(State::Claimed, Idle)]),
            (State::Claimed, Idle)
        );
    }

    proptest::proptest! {
        /// Policies whose every expression names a missing attribute, in
        /// whatever shape, never act on a running job, and never start one.
        #[test]
        fn undefined_policy_never_acts_on_a_busy_job(
            shapes in proptest::collection::vec(0usize..5, 7),
            retirement in 0i64..10_000,
            elapsed in 0i64..100_000,
        ) {
            const SHAPES: [&str; 5] = [
                "Missing",
                "Missing > 3",
                "TARGET.Missing == \"x\"",
                "Missing && true",
                "MY.Missing =!= UNDEFINED && Missing",
            ];
            let attrs = ["START", "SUSPEND", "PREEMPT", "WANT_SUSPEND", "KILL", "WANT_VACATE", "CONTINUE"];
            let policy: String = attrs
                .iter()
                .zip(&shapes)
                .map(|(a, s)| format!("{a} = {}; ", SHAPES[*s]))
                .collect();
            let m = machine(&format!("{policy} MaxJobRetirementTime = {retirement}"));
            let v = evaluate(&m, Some(&job()), T0 + elapsed);
            proptest::prop_assert!(!v.start);
            let busy = claimed(Activity::Busy);
            let (next, action) = step(&busy, &v, T0 + elapsed);
            proptest::prop_assert_eq!(action, Action::None);
            proptest::prop_assert_eq!(next, busy);
        }
    }
}
