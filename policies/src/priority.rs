//! User priority, HTCondor's accountant without a central accountant.
//!
//! HTCondor's accountant keeps one real user priority π per user and, every
//! update, ages it toward the resources the user holds now (ρ, in slot
//! weight): π ← β·π + (1−β)·ρ with β = 0.5^(Δt / halflife)
//! (`PRIORITY_HALFLIFE`, a day by default), floored at 0.5. The effective
//! priority is π × the user's priority factor (1000 by default, at least
//! 1); smaller is better. This is the Up-Down idea: heavy users sink,
//! light ones rise, and past usage fades.
//!
//! Here no process sees every claim. Each execute agent keeps a
//! [`Contribution`] per user: the same update over only the slots it lends
//! that user. The update is linear in (π, ρ), so the sum of the agents'
//! contributions, each aged to the same `now`, is the priority one
//! accountant would have computed over all of them. Contributions start at
//! 0; HTCondor's starting priority of 0.5 is added once, aged from the
//! user's first usage, and the 0.5 floor applies to the total
//! ([`real_priority`]), not to each part. So a user who has just begun
//! using slots is already a hair worse than one who has not, as with
//! HTCondor's accountant, instead of both sitting flat on the floor. Sums are taken over sorted values so that every agent holding the
//! same contributions gets bit-identical priorities whatever order they
//! arrived in (on the same floating-point library: `powf` may differ in its
//! last bit between libms).
//!
//! Priority factors are set by administrators as [`FactorSetting`]s that
//! spread like any other record; [`Factors`] keeps the newest per user.

use std::collections::BTreeMap;

/// HTCondor's smallest (best) real user priority.
pub const MIN_PRIORITY: f64 = 0.5;

/// HTCondor's default priority factor (`DEFAULT_PRIO_FACTOR`).
pub const DEFAULT_PRIO_FACTOR: f64 = 1000.0;

/// The largest priority factor accepted: a million times the default,
/// far past any factor in use, and small enough that a real priority times
/// the factor stays a finite number that compares with the others
/// (`-setfactor USER 1e308` would make every product infinite, and all
/// such users equal).
pub const MAX_PRIO_FACTOR: f64 = 1e9;

/// HTCondor's default `PRIORITY_HALFLIFE`: one day.
pub const DEFAULT_HALFLIFE_SECS: i64 = 86_400;

/// One execute agent's share of one user's priority, as of `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    pub user: String,
    /// When `priority` and `accumulated` were last brought up to date.
    pub at: i64,
    /// This agent's part of the user's real priority (starts at 0).
    pub priority: f64,
    /// Slot weight the user holds here now (ρ).
    pub in_use: f64,
    /// Slot-weight seconds used here, ever.
    pub accumulated: f64,
    /// When the user first held a slot here (0: never).
    pub first_usage: i64,
    /// When the user last held a slot here (0: never).
    pub last_usage: i64,
}

impl Contribution {
    /// A user this agent has lent nothing yet, as of `at`.
    pub fn new(user: impl Into<String>, at: i64) -> Contribution {
        Contribution {
            user: user.into(),
            at,
            priority: 0.0,
            in_use: 0.0,
            accumulated: 0.0,
            first_usage: 0,
            last_usage: 0,
        }
    }

    /// Ages this contribution to `now`, with `in_use` held over the
    /// interval. Time never runs backwards: a `now` before `at` changes
    /// nothing, so a late or replayed update cannot undo aging.
    pub fn advance(&mut self, now: i64, halflife_secs: f64) {
        if now <= self.at {
            return;
        }
        let dt = now.saturating_sub(self.at) as f64;
        let beta = aging_factor(dt, halflife_secs);
        self.priority = beta * self.priority + (1.0 - beta) * self.in_use;
        self.accumulated += self.in_use * dt;
        if self.in_use > 0.0 {
            self.last_usage = now;
        }
        self.at = now;
    }

    /// Ages this contribution to `now`, then records that the user holds
    /// `in_use` slot weight here from now on. A negative or NaN weight is
    /// taken as 0: usage cannot improve a priority beyond idleness.
    pub fn set_in_use(&mut self, now: i64, in_use: f64, halflife_secs: f64) {
        self.advance(now, halflife_secs);
        self.in_use = if in_use > 0.0 { in_use } else { 0.0 };
        if self.in_use > 0.0 {
            if self.first_usage == 0 {
                self.first_usage = now;
            }
            self.last_usage = now;
        }
    }
}

/// β = 0.5^(Δt / halflife). A halflife that is not a positive number means
/// no memory at all: the priority is the usage.
fn aging_factor(dt: f64, halflife_secs: f64) -> f64 {
    if halflife_secs > 0.0 && halflife_secs.is_finite() {
        0.5f64.powf(dt / halflife_secs)
    } else {
        0.0
    }
}

/// Sums `values` in a canonical order, so that the result does not depend
/// on the order they came in.
fn canonical_sum(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.into_iter().sum()
}

/// A user's real priority at `now` from `parts`, which are all that user's
/// contributions (one per execute agent): each aged to `now` on a copy,
/// summed in a canonical order, floored at [`MIN_PRIORITY`].
pub fn real_priority<'a>(
    parts: impl IntoIterator<Item = &'a Contribution>,
    now: i64,
    halflife_secs: f64,
) -> f64 {
    let aged: Vec<Contribution> = parts
        .into_iter()
        .map(|p| aged(p, now, halflife_secs))
        .collect();
    total(&aged, now, halflife_secs)
}

/// The real priority of contributions already aged to `now`: their sum,
/// plus the starting [`MIN_PRIORITY`] aged since the first usage, at least
/// [`MIN_PRIORITY`].
fn total(parts: &[Contribution], now: i64, halflife_secs: f64) -> f64 {
    let first = parts
        .iter()
        .map(|p| p.first_usage)
        .filter(|&t| t != 0)
        .min();
    let start = match first {
        Some(first) => {
            MIN_PRIORITY * aging_factor(now.saturating_sub(first).max(0) as f64, halflife_secs)
        }
        // Nobody recorded when it began: no starting value to age.
        None if !parts.is_empty() => 0.0,
        None => MIN_PRIORITY,
    };
    let mut values: Vec<f64> = parts.iter().map(|p| p.priority).collect();
    values.push(start);
    canonical_sum(values).max(MIN_PRIORITY)
}

fn aged(part: &Contribution, now: i64, halflife_secs: f64) -> Contribution {
    let mut part = part.clone();
    part.advance(now, halflife_secs);
    part
}

/// One user's line in the priority table, as `condor_userprio` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct UserPriority {
    pub user: String,
    /// Real priority, at least [`MIN_PRIORITY`].
    pub real: f64,
    pub factor: f64,
    /// `real × factor`: smaller is better.
    pub effective: f64,
    /// Slot weight held now, over all agents.
    pub in_use: f64,
    /// Slot-weight seconds used, over all agents.
    pub accumulated: f64,
    /// Earliest first usage over all agents (0: never).
    pub first_usage: i64,
    /// Latest usage over all agents (0: never).
    pub last_usage: i64,
}

/// Every user's priority at `now` from all known contributions, best
/// (smallest effective priority) first, ties by user name.
///
/// Factors are taken with a multiplier of 1: a caller ranking users of a
/// foreign domain applies that domain's multiplier through
/// [`Factors::factor_of`].
pub fn table(
    parts: &[Contribution],
    factors: &Factors,
    now: i64,
    halflife_secs: f64,
) -> Vec<UserPriority> {
    let mut by_user: BTreeMap<&str, Vec<Contribution>> = BTreeMap::new();
    for part in parts {
        by_user
            .entry(&part.user)
            .or_default()
            .push(aged(part, now, halflife_secs));
    }
    let mut rows: Vec<UserPriority> = by_user
        .into_iter()
        .map(|(user, parts)| {
            let real = total(&parts, now, halflife_secs);
            row(user, &parts, real, factors.factor_of(user, 1.0))
        })
        .collect();
    rows.sort_by(|a, b| {
        a.effective
            .total_cmp(&b.effective)
            .then_with(|| a.user.cmp(&b.user))
    });
    rows
}

/// One user's row from contributions already aged to the same time.
fn row(user: &str, parts: &[Contribution], real: f64, factor: f64) -> UserPriority {
    let sum = |f: fn(&Contribution) -> f64| canonical_sum(parts.iter().map(f).collect());
    UserPriority {
        user: user.to_owned(),
        real,
        factor,
        effective: real * factor,
        in_use: sum(|p| p.in_use),
        accumulated: sum(|p| p.accumulated),
        first_usage: parts
            .iter()
            .map(|p| p.first_usage)
            .filter(|&t| t != 0)
            .min()
            .unwrap_or(0),
        last_usage: parts.iter().map(|p| p.last_usage).max().unwrap_or(0),
    }
}

/// An administrator's priority factor for a user.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorSetting {
    pub user: String,
    pub factor: f64,
    /// When it was set (unix seconds): the newest setting wins.
    pub set_at: i64,
    /// Who set it: breaks ties between settings made the same second.
    pub setter: String,
}

/// The priority factors in force: the newest valid setting per user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Factors {
    by_user: BTreeMap<String, FactorSetting>,
}

impl Factors {
    /// The factors `settings` leave in force. Per user the newest `set_at`
    /// wins, then the greatest setter, then the greatest factor, so every
    /// agent holding the same settings agrees whatever order they came in.
    /// A setting whose factor fails [`check_factor`] is left out: it cannot
    /// have passed the check its writer makes, and a NaN factor would
    /// poison every comparison.
    pub fn from_settings<'a>(settings: impl IntoIterator<Item = &'a FactorSetting>) -> Factors {
        let mut by_user: BTreeMap<String, FactorSetting> = BTreeMap::new();
        for s in settings {
            if check_factor(s.factor).is_err() {
                continue;
            }
            match by_user.get(&s.user) {
                Some(kept) if !newer(s, kept) => {}
                _ => {
                    by_user.insert(s.user.clone(), s.clone());
                }
            }
        }
        Factors { by_user }
    }

    /// The users a factor is set for.
    pub fn users(&self) -> impl Iterator<Item = &str> {
        self.by_user.keys().map(String::as_str)
    }

    /// The setting in force for `user`, if any.
    pub fn get(&self, user: &str) -> Option<&FactorSetting> {
        self.by_user.get(user)
    }

    /// `user`'s factor ([`DEFAULT_PRIO_FACTOR`] unless set) times
    /// `foreign_multiplier`: a foreign domain's `priority_factor` from the
    /// domain policy, 1.0 for the own domain.
    pub fn factor_of(&self, user: &str, foreign_multiplier: f64) -> f64 {
        let base = self.get(user).map_or(DEFAULT_PRIO_FACTOR, |s| s.factor);
        base * foreign_multiplier
    }
}

/// The settings in force that an agent holding `own` should take up and
/// advertise itself: those it lacks, and those newer than its own. Every
/// agent that computes priorities takes them up, so a factor outlives the
/// agent that set it (its ad expires when it goes). A copy that differs
/// from its own only by setter is not taken up: the factor is the same.
pub fn to_adopt<'a>(
    own: &BTreeMap<String, FactorSetting>,
    in_force: &'a Factors,
) -> Vec<&'a FactorSetting> {
    in_force
        .by_user
        .values()
        .filter(|s| match own.get(&s.user) {
            None => true,
            Some(mine) => {
                s.set_at > mine.set_at
                    || (s.set_at == mine.set_at
                        && s.factor.to_bits() != mine.factor.to_bits()
                        && newer(s, mine))
            }
        })
        .collect()
}

/// The multiplier a domain's trust policy puts on `user`'s factor: the
/// `priority_factor` it gives the user's domain (the part after the last
/// `@`), 1 for our own domain and for domains it names no factor for.
pub fn foreign_multiplier(
    user: &str,
    own_domain: &str,
    foreign_factors: &BTreeMap<String, f64>,
) -> f64 {
    match user.rsplit_once('@') {
        Some((_, domain)) if domain != own_domain => foreign_factors
            .get(domain)
            .copied()
            .filter(|f| f.is_finite() && *f > 0.0)
            .unwrap_or(1.0),
        _ => 1.0,
    }
}

/// The full name (`name@domain`) of the user `asked` means, as
/// `condor_userprio -setfactor` takes either: a full name of this domain
/// or one it trusts (`domains`, own first), known yet or not (a factor may
/// be set before the user runs anything); a short one is the `known` user
/// (one with usage recorded or a factor set) of that name in our own
/// domain, else the one known user of any domain with it. A short name
/// no known user has is refused naming it, unless `ahead` (`-force`: a
/// factor set ahead of the user's first job), when it is our own
/// domain's user of that name. A domain that is not ours or trusted, or
/// a short name several other domains have, is refused saying which.
pub fn resolve_user(
    asked: &str,
    domains: &[&str],
    known: &[&str],
    ahead: bool,
) -> Result<String, String> {
    let own = domains.first().copied().unwrap_or_default();
    if let Some((name, domain)) = asked.rsplit_once('@') {
        if name.is_empty() || !domains.contains(&domain) {
            return Err(format!(
                "no such user: users are NAME@DOMAIN of this domain or one it trusts ({})",
                domains.join(", ")
            ));
        }
        return Ok(asked.to_owned());
    }
    let ours = format!("{asked}@{own}");
    if known.contains(&ours.as_str()) {
        return Ok(ours);
    }
    let matches: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| k.rsplit_once('@').is_some_and(|(name, _)| name == asked))
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] if ahead => Ok(ours),
        [] => Err(format!(
            "no such user: {asked} has no usage recorded and no factor set in this domain; \
             name it in full ({ours}) or give -force to set its factor ahead of its first job"
        )),
        many => Err(format!(
            "several users have that name ({}); give the full name",
            many.join(", ")
        )),
    }
}

/// Whether `a` supersedes `b` for the same user.
fn newer(a: &FactorSetting, b: &FactorSetting) -> bool {
    a.set_at
        .cmp(&b.set_at)
        .then_with(|| a.setter.cmp(&b.setter))
        .then_with(|| a.factor.total_cmp(&b.factor))
        .is_gt()
}

/// `f` if it is a usable priority factor: finite, at least 1 (HTCondor's
/// minimum) and at most [`MAX_PRIO_FACTOR`].
pub fn check_factor(f: f64) -> Result<f64, String> {
    if !f.is_finite() {
        return Err(format!("priority factor {f} is not a finite number"));
    }
    if f > MAX_PRIO_FACTOR {
        return Err(format!(
            "priority factor {f:e} is above {MAX_PRIO_FACTOR:e}, the largest allowed"
        ));
    }
    if f < 1.0 {
        return Err(format!(
            "priority factor {f} is below 1, the smallest allowed; \
             use 1 or more (larger factors mean worse priority)"
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DAY: f64 = DEFAULT_HALFLIFE_SECS as f64;

    fn part(user: &str, priority: f64, in_use: f64) -> Contribution {
        Contribution {
            priority,
            in_use,
            ..Contribution::new(user, 0)
        }
    }

    fn setting(user: &str, factor: f64, set_at: i64, setter: &str) -> FactorSetting {
        FactorSetting {
            user: user.into(),
            factor,
            set_at,
            setter: setter.into(),
        }
    }

    #[test]
    fn priority_moves_halfway_to_usage_in_one_halflife() {
        let mut c = part("alice", 0.5, 4.0);
        c.advance(DEFAULT_HALFLIFE_SECS, DAY);
        assert!((c.priority - 2.25).abs() < 1e-12, "{}", c.priority);
        assert_eq!(c.at, DEFAULT_HALFLIFE_SECS);
        assert_eq!(c.accumulated, 4.0 * DAY);
        assert_eq!(c.last_usage, DEFAULT_HALFLIFE_SECS);
        // Time running backwards changes nothing.
        let before = c.clone();
        c.advance(10, DAY);
        assert_eq!(c, before);
    }

    #[test]
    fn set_in_use_ages_at_the_old_usage_first() {
        let mut c = Contribution::new("alice", 0);
        c.set_in_use(100, 2.0, DAY);
        assert_eq!((c.priority, c.first_usage, c.last_usage), (0.0, 100, 100));
        c.set_in_use(100 + DEFAULT_HALFLIFE_SECS, 0.0, DAY);
        assert!((c.priority - 1.0).abs() < 1e-12, "{}", c.priority);
        assert_eq!(c.accumulated, 2.0 * DAY);
        // Idle from now on: the priority fades and usage times stay.
        c.advance(100 + 2 * DEFAULT_HALFLIFE_SECS, DAY);
        assert!((c.priority - 0.5).abs() < 1e-12, "{}", c.priority);
        assert_eq!(
            (c.first_usage, c.last_usage),
            (100, 100 + DEFAULT_HALFLIFE_SECS)
        );
        c.set_in_use(200_000, -3.0, DAY);
        assert_eq!(c.in_use, 0.0);
    }

    #[test]
    fn parts_add_up_to_one_accountant() {
        // Two agents lending 1 slot each age like one agent lending 2.
        let a = part("alice", 0.0, 1.0);
        let b = part("alice", 0.0, 1.0);
        let one = part("alice", 0.0, 2.0);
        let now = DEFAULT_HALFLIFE_SECS / 3;
        let split = real_priority([&a, &b], now, DAY);
        let whole = real_priority([&one], now, DAY);
        assert!((split - whole).abs() < 1e-12, "{split} vs {whole}");
    }

    #[test]
    fn a_user_who_began_is_a_hair_worse_than_one_who_did_not() {
        let mut c = Contribution::new("alice", 1000);
        c.set_in_use(1000, 4.0, DAY);
        let began = real_priority([&c], 1010, DAY);
        assert!(began > MIN_PRIORITY, "{began}");
        assert_eq!(real_priority([], 1010, DAY), MIN_PRIORITY);
        // Over many half-lives the start fades and π follows the usage.
        let settled = real_priority([&c], 1000 + 40 * DEFAULT_HALFLIFE_SECS, DAY);
        assert!((settled - 4.0).abs() < 1e-6, "{settled}");
    }

    #[test]
    fn real_priority_is_floored() {
        assert_eq!(real_priority([], 0, DAY), MIN_PRIORITY);
        let faded = part("alice", 3.0, 0.0);
        assert_eq!(
            real_priority([&faded], 30 * DEFAULT_HALFLIFE_SECS, DAY),
            MIN_PRIORITY
        );
    }

    #[test]
    fn equal_users_rank_equal_and_factors_scale_effective() {
        let parts = [
            part("bob", 0.0, 3.0),
            part("alice", 0.0, 3.0),
            part("carol", 0.0, 3.0),
        ];
        let factors = Factors::from_settings(&[setting("carol", 2000.0, 1, "admin")]);
        let rows = table(&parts, &factors, 5000, DAY);
        let users: Vec<&str> = rows.iter().map(|r| r.user.as_str()).collect();
        assert_eq!(users, ["alice", "bob", "carol"], "ties by name, carol last");
        assert_eq!(rows[0].real, rows[1].real);
        assert_eq!(rows[0].effective, rows[1].effective);
        assert_eq!(rows[0].factor, DEFAULT_PRIO_FACTOR);
        assert_eq!(rows[2].effective, 2.0 * rows[0].effective);
        assert_eq!(rows[0].in_use, 3.0);
        assert_eq!(rows[0].accumulated, 3.0 * 5000.0);
    }

    #[test]
    fn table_rows_sum_a_users_agents() {
        let mut a = Contribution::new("alice", 0);
        a.set_in_use(10, 1.0, DAY);
        let mut b = Contribution::new("alice", 0);
        b.set_in_use(20, 2.0, DAY);
        let rows = table(&[a, b], &Factors::default(), 30, DAY);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].in_use, 3.0);
        assert_eq!(rows[0].accumulated, 20.0 + 20.0);
        assert_eq!((rows[0].first_usage, rows[0].last_usage), (10, 30));
    }

    #[test]
    fn newest_setting_wins_then_setter() {
        let s = [
            setting("alice", 5.0, 10, "root"),
            setting("alice", 7.0, 20, "admin"),
            setting("alice", 9.0, 20, "bob"),
            setting("alice", f64::NAN, 99, "zed"),
            setting("alice", 0.5, 99, "zed"),
        ];
        let forward = Factors::from_settings(&s);
        let backward = Factors::from_settings(s.iter().rev());
        assert_eq!(forward, backward);
        assert_eq!(forward.factor_of("alice", 1.0), 9.0);
        assert_eq!(forward.factor_of("nobody", 1.0), DEFAULT_PRIO_FACTOR);
        assert_eq!(forward.factor_of("alice", 3.0), 27.0);
    }

    #[test]
    fn settings_in_force_are_taken_up_once() {
        let seen = [
            setting("alice", 7.0, 20, "admin"),
            setting("bob", 3.0, 5, "admin"),
            setting("carol", 2.0, 30, "admin"),
        ];
        let in_force = Factors::from_settings(&seen);
        let own: BTreeMap<String, FactorSetting> = [
            // Older than what is in force: taken up.
            setting("alice", 5.0, 10, "me"),
            // The same setting, copied by another agent: not again.
            setting("bob", 3.0, 5, "zzz"),
            // Newer than what is in force (not yet seen): kept.
            setting("carol", 4.0, 40, "me"),
        ]
        .into_iter()
        .map(|s| (s.user.clone(), s))
        .collect();
        let users: Vec<&str> = to_adopt(&own, &in_force)
            .iter()
            .map(|s| s.user.as_str())
            .collect();
        assert_eq!(users, ["alice"]);
        // An agent with no settings takes up all of them.
        assert_eq!(to_adopt(&BTreeMap::new(), &in_force).len(), 3);
    }

    #[test]
    fn foreign_users_get_their_domains_multiplier() {
        let policy: BTreeMap<String, f64> =
            [("physics".to_owned(), 3.0), ("bad".to_owned(), f64::NAN)]
                .into_iter()
                .collect();
        assert_eq!(foreign_multiplier("alice@physics", "home", &policy), 3.0);
        assert_eq!(
            foreign_multiplier("group.alice@physics", "home", &policy),
            3.0
        );
        assert_eq!(foreign_multiplier("bob@home", "home", &policy), 1.0);
        assert_eq!(foreign_multiplier("carol@chemistry", "home", &policy), 1.0);
        assert_eq!(foreign_multiplier("nodomain", "home", &policy), 1.0);
        assert_eq!(foreign_multiplier("eve@bad", "home", &policy), 1.0);
    }

    #[test]
    fn check_factor_names_the_problem() {
        assert_eq!(check_factor(1.0), Ok(1.0));
        let e = check_factor(0.5).unwrap_err();
        assert!(e.contains("below 1"), "{e}");
        let e = check_factor(f64::INFINITY).unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
        let e = check_factor(f64::NAN).unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
        let e = check_factor(1e308).unwrap_err();
        assert!(e.contains("above 1e9, the largest allowed"), "{e}");
        assert_eq!(check_factor(MAX_PRIO_FACTOR), Ok(MAX_PRIO_FACTOR));
        // A setting past the cap (from an older agent) is not in force.
        let settings = [FactorSetting {
            user: "a@d".into(),
            factor: 1e308,
            set_at: 1,
            setter: "x".into(),
        }];
        assert!(Factors::from_settings(&settings).get("a@d").is_none());
    }

    proptest! {
        #[test]
        fn order_of_parts_does_not_change_the_sum(
            parts in proptest::collection::vec((0.0f64..1e6, 0.0f64..64.0, 0i64..1_000_000), 1..20)
                .prop_flat_map(|v| {
                    let n = v.len();
                    (Just(v), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
                }),
        ) {
            let (values, order) = parts;
            let parts: Vec<Contribution> = values
                .iter()
                .map(|&(p, u, at)| Contribution { at, ..part("alice", p, u) })
                .collect();
            let shuffled: Vec<&Contribution> = order.iter().map(|&i| &parts[i]).collect();
            let now = 2_000_000;
            let a = real_priority(&parts, now, DAY);
            let b = real_priority(shuffled, now, DAY);
            prop_assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn setfactor_names_a_known_user_by_its_full_or_short_name() {
        let known = [
            "alice@lab",
            "bob@lab",
            "bob@other",
            "carol@other",
            "erin@third",
        ];
        let domains = ["lab", "other", "third"];
        assert_eq!(
            resolve_user("alice", &domains, &known, false).unwrap(),
            "alice@lab"
        );
        assert_eq!(
            resolve_user("alice@lab", &domains, &known, false).unwrap(),
            "alice@lab"
        );
        // Our own domain's first; else the one user of that name.
        assert_eq!(
            resolve_user("bob", &domains, &known, false).unwrap(),
            "bob@lab"
        );
        assert_eq!(
            resolve_user("carol", &domains, &known, false).unwrap(),
            "carol@other"
        );
        // A user to come: named in full, or short with -force (our own
        // domain's); a short name nobody has is no user.
        assert_eq!(
            resolve_user("dave", &domains, &known, true).unwrap(),
            "dave@lab"
        );
        let err = resolve_user("dave", &domains, &known, false).unwrap_err();
        assert!(
            err.contains("no such user: dave") && err.contains("-force"),
            "{err}"
        );
        assert_eq!(
            resolve_user("dave@other", &domains, &known, false).unwrap(),
            "dave@other"
        );
        let two = ["erin@other", "erin@third"];
        assert!(resolve_user("erin", &domains, &two, false)
            .unwrap_err()
            .contains("erin@other, erin@third"));
        let err = resolve_user("alice@elsewhere", &domains, &known, false).unwrap_err();
        assert!(
            err.contains("no such user") && err.contains("lab, other, third"),
            "{err}"
        );
    }
}
