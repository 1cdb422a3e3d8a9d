//! Fair share without an accountant: what this agent's machine did for which
//! users, the favours its domain exchanged with other domains, and the
//! priority factors set here; kept in the store, summarised into the
//! machine ad (so it travels signed, with the ad), and read back from every
//! ad of the domain so that every agent computes the same user priorities.
//!
//! ```text
//! startd: job starts/ends under a claim ──▶ Accounting (contribution per
//! negotiator: job done on a foreign machine     user, favours per domain)
//! userprio -setfactor ──────────────────▶        │ every change
//!                                                ▼
//!            advertiser ◀── attributes(): StarlingUsage, StarlingFavours,
//!                           StarlingPrioFactors in the machine ad
//! any agent: the view's ads of its own domain ──▶ priorities() ──▶ table
//! ```
//!
//! A user is `principal@domain`: the job's `AccountingGroup` (else its
//! `Owner`) and the domain that certified its submit agent. HTCondor's
//! update rule is linear in the resources in use, so each execute agent
//! keeps its own share of every user's priority and the shares add up to
//! the priority a central accountant would compute
//! ([`starling_policies::priority`]).
//!
//! The store is written at most every [`SAVE_EVERY`]: usage is not a job a
//! user was promised, and a `kill -9` loses at most that much of it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use starling_policies::favours::Ledger;
use starling_policies::priority::{self, Contribution, FactorSetting, Factors, UserPriority};
use starling_protocol::classad::{
    parse_expr, unparse_value, ClassAd, Evaluator, Expr, Name, Side, Value,
};
use starling_protocol::identity::Timestamp;
use starling_storage::{Factor, Favours, Store, Usage};

use crate::pool::Pool;
use crate::view_actor::MachineAd;

/// How often changed figures are written to the store.
pub const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Users listed in one machine ad, at most (the busiest first): the ad
/// stays small however many users a machine has served.
pub const MAX_USERS_IN_AD: usize = 128;

/// Domains listed in one machine ad, at most.
pub const MAX_DOMAINS_IN_AD: usize = 256;

/// Factor settings listed in one machine ad, at most.
pub const MAX_FACTORS_IN_AD: usize = 256;

/// How far in the future a record's time may be (clock skew) before the
/// record is ignored: a record from the future would never age, and a
/// factor set "next year" would win over every later setting.
pub const MAX_SKEW_SECS: i64 = 300;

/// The most slot weight one record may claim to be in use, and the largest
/// priority or usage figure taken; larger values are clamped, so one bad
/// ad cannot push a user out of every comparison.
pub const MAX_IN_USE: f64 = 1.0e6;
pub const MAX_FIGURE: f64 = 1.0e15;

/// The longest user name kept (before `@domain`), in bytes.
pub const MAX_USER_LEN: usize = 96;

/// How far in the past a record may be dated; older ones are ignored.
pub const MAX_AGE_SECS: i64 = 10 * 365 * 86_400;

/// The machine-ad attributes this module writes.
pub const USAGE_ATTR: &str = "StarlingUsage";
pub const FAVOURS_ATTR: &str = "StarlingFavours";
pub const FACTORS_ATTR: &str = "StarlingPrioFactors";

/// This agent's accounting, shared by the startd (usage given), the
/// negotiator (favours received), the control API (factors) and the
/// advertiser (which publishes it).
#[derive(Clone)]
pub struct Accounting {
    inner: Arc<Mutex<Inner>>,
    /// Held while a factor setting is written (store, then memory), so that
    /// `-setfactor` and taking up a setting do not interleave.
    factor_writes: Arc<Mutex<()>>,
    store: Arc<dyn Store>,
    halflife: f64,
    /// This agent's id: the setter of the factors it signs.
    agent: String,
}

#[derive(Default)]
struct Inner {
    users: BTreeMap<String, Contribution>,
    favours: BTreeMap<String, (f64, f64)>,
    factors: BTreeMap<String, FactorSetting>,
    /// Changed since the last save.
    dirty: bool,
}

impl std::fmt::Debug for Accounting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounting")
            .field("halflife", &self.halflife)
            .finish_non_exhaustive()
    }
}

/// A user's accounting principal: `AccountingGroup` (HTCondor's
/// `group.user`), else `Owner`, at the domain that vouches for its agent.
pub fn principal(job: &ClassAd, domain: &str) -> String {
    let text = |name: &str| match Evaluator::with_ads(Some(job), None)
        .eval_attr(Side::My, Name::known(name).folded())
    {
        Value::String(s) if !s.is_empty() => Some(s.to_string()),
        _ => None,
    };
    let mut who = text("AccountingGroup")
        .or_else(|| text("Owner"))
        .unwrap_or_else(|| "nobody".to_owned());
    // The job chooses the name: keep it short enough for the books and
    // the machine ad.
    if who.len() > MAX_USER_LEN {
        let mut end = MAX_USER_LEN;
        while !who.is_char_boundary(end) {
            end -= 1;
        }
        who.truncate(end);
    }
    format!("{who}@{domain}")
}

impl Accounting {
    /// Loads what the store kept. `halflife_secs` is HTCondor's
    /// `PRIORITY_HALFLIFE`.
    pub fn load(
        store: Arc<dyn Store>,
        halflife_secs: u64,
        agent: String,
    ) -> Result<Accounting, starling_storage::Error> {
        let mut inner = Inner::default();
        for (user, usage) in store.usage()? {
            let at = secs(usage.updated_at);
            inner.users.insert(
                user.clone(),
                Contribution {
                    user,
                    at,
                    priority: usage.priority,
                    in_use: 0.0,
                    accumulated: usage.accumulated,
                    first_usage: at,
                    last_usage: at,
                },
            );
        }
        for (domain, f) in store.favours()? {
            inner.favours.insert(domain, (f.given, f.received));
        }
        for (user, f) in store.factors()? {
            inner.factors.insert(
                user.clone(),
                FactorSetting {
                    user,
                    factor: f.factor,
                    set_at: secs(f.set_at),
                    setter: agent.clone(),
                },
            );
        }
        Ok(Accounting {
            inner: Arc::new(Mutex::new(inner)),
            factor_writes: Arc::new(Mutex::new(())),
            store,
            halflife: halflife_secs as f64,
            agent,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain numbers behind:
        // still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// HTCondor's `PRIORITY_HALFLIFE`, in seconds.
    pub fn halflife(&self) -> f64 {
        self.halflife
    }

    /// A job of `user` started here, holding `weight` (its cpus).
    pub fn job_started(&self, user: &str, weight: f64, now: i64) {
        self.change_in_use(user, weight, now);
    }

    /// A job of `user` ended here after `wall_secs`; `foreign` is its
    /// domain when that is not ours, which then owes us the favour.
    pub fn job_ended(
        &self,
        user: &str,
        foreign: Option<&str>,
        weight: f64,
        wall_secs: f64,
        now: i64,
    ) {
        self.change_in_use(user, -weight, now);
        if let Some(domain) = foreign {
            let mut inner = self.lock();
            inner.favours.entry(domain.to_owned()).or_default().0 += weight * wall_secs.max(0.0);
            inner.dirty = true;
        }
    }

    /// Nothing runs here any more (the startd restarted): every user's
    /// slots in use drop to zero now.
    pub fn nothing_in_use(&self, now: i64) {
        let halflife = self.halflife;
        let mut inner = self.lock();
        for c in inner.users.values_mut() {
            if c.in_use > 0.0 {
                c.set_in_use(now, 0.0, halflife);
            }
        }
        inner.dirty = true;
    }

    /// A foreign domain's machine ran one of our jobs (`slot_secs` of it).
    pub fn received(&self, domain: &str, slot_secs: f64) {
        let mut inner = self.lock();
        inner.favours.entry(domain.to_owned()).or_default().1 += slot_secs.max(0.0);
        inner.dirty = true;
    }

    fn change_in_use(&self, user: &str, delta: f64, now: i64) {
        let halflife = self.halflife;
        let mut inner = self.lock();
        let c = inner
            .users
            .entry(user.to_owned())
            .or_insert_with(|| Contribution {
                user: user.to_owned(),
                at: now,
                priority: 0.0,
                in_use: 0.0,
                accumulated: 0.0,
                first_usage: now,
                last_usage: now,
            });
        let in_use = (c.in_use + delta).max(0.0);
        c.set_in_use(now, in_use, halflife);
        inner.dirty = true;
    }

    /// Sets `user`'s priority factor for the domain, signed with this
    /// agent's ad; the newest setting anywhere in the domain wins.
    pub fn set_factor(&self, user: &str, factor: f64, now: i64) -> Result<(), String> {
        let factor = priority::check_factor(factor)?;
        if user.is_empty() || user.len() > starling_storage::MAX_LABEL_LEN {
            return Err(format!(
                "a user name is 1 to {} bytes",
                starling_storage::MAX_LABEL_LEN
            ));
        }
        // `userprio` prints one user a line.
        starling_protocol::submit::values::one_line(user)
            .map_err(|e| format!("the user name {e}"))?;
        let _writing = self.factor_writes.lock().unwrap_or_else(|e| e.into_inner());
        // A second setting within the same second must still be the newer
        // one, or taking up settings could bring the first back.
        let set_at = match self.lock().factors.get(user) {
            Some(old) if old.set_at >= now => old.set_at.saturating_add(1),
            _ => now,
        };
        let record = Factor {
            factor,
            set_at: Timestamp::from_unix_secs(u64::try_from(set_at).unwrap_or(0)),
        };
        self.store
            .set_factor(user, record)
            .map_err(|e| e.to_string())?;
        self.lock().factors.insert(
            user.to_owned(),
            FactorSetting {
                user: user.to_owned(),
                factor,
                set_at,
                setter: self.agent.clone(),
            },
        );
        Ok(())
    }

    /// Takes up the factor settings in force in the domain that this agent
    /// lacks or holds an older one of ([`priority::to_adopt`]), so that they
    /// stay in its ad after their setter has gone; `true` if any was. Blocking
    /// (sled).
    pub fn adopt(&self, in_force: &Factors) -> bool {
        if !self.has_news(in_force) {
            return false;
        }
        let _writing = self.factor_writes.lock().unwrap_or_else(|e| e.into_inner());
        let adopt: Vec<FactorSetting> = {
            let inner = self.lock();
            priority::to_adopt(&inner.factors, in_force)
                .into_iter()
                .cloned()
                .collect()
        };
        for setting in &adopt {
            let record = Factor {
                factor: setting.factor,
                set_at: Timestamp::from_unix_secs(u64::try_from(setting.set_at).unwrap_or(0)),
            };
            if let Err(e) = self.store.set_factor(&setting.user, record) {
                tracing::warn!(user = %setting.user, error = %e, "cannot keep a priority factor");
                return false;
            }
            tracing::debug!(user = %setting.user, factor = setting.factor, "priority factor taken up");
            self.lock()
                .factors
                .insert(setting.user.clone(), setting.clone());
        }
        !adopt.is_empty()
    }

    /// Whether [`Accounting::adopt`] would take up anything.
    pub fn has_news(&self, in_force: &Factors) -> bool {
        !priority::to_adopt(&self.lock().factors, in_force).is_empty()
    }

    /// Takes up the factor settings in force off the caller's thread and
    /// republishes the machine ad if any was new.
    pub fn adopt_in_background(&self, in_force: &Factors, pool: impl Into<Pool>) {
        let pool = pool.into();
        if !self.has_news(in_force) {
            return;
        }
        let (accounting, in_force) = (self.clone(), in_force.clone());
        tokio::spawn(async move {
            if let Ok(true) = tokio::task::spawn_blocking(move || accounting.adopt(&in_force)).await
            {
                pool.republish();
            }
        });
    }

    /// Writes what changed since the last save. Blocking (sled).
    pub fn save(&self, now: i64) {
        let (users, favours) = {
            let mut inner = self.lock();
            if !inner.dirty {
                return;
            }
            inner.dirty = false;
            let halflife = self.halflife;
            let users: Vec<Contribution> = inner
                .users
                .values()
                .map(|c| {
                    let mut c = c.clone();
                    c.advance(now, halflife);
                    c
                })
                .collect();
            let favours: Vec<(String, (f64, f64))> =
                inner.favours.iter().map(|(d, f)| (d.clone(), *f)).collect();
            (users, favours)
        };
        let at = Timestamp::from_unix_secs(u64::try_from(now).unwrap_or(0));
        for c in users {
            let usage = Usage {
                accumulated: c.accumulated,
                priority: c.priority,
                updated_at: at,
            };
            if let Err(e) = self.store.update_usage(&c.user, &|_| usage) {
                tracing::warn!(user = %c.user, error = %e, "cannot save usage");
            }
        }
        for (domain, (given, received)) in favours {
            let f = Favours {
                given,
                received,
                updated_at: at,
            };
            if let Err(e) = self.store.update_favours(&domain, &|_| f) {
                tracing::warn!(%domain, error = %e, "cannot save favours");
            }
        }
    }

    /// The machine-ad attributes: this agent's share of each user's
    /// priority (as of its last change, so an idle agent's ad does not
    /// change), the favours its domain exchanged through it, and the
    /// factors set here.
    pub fn attributes(&self) -> Vec<(&'static str, Expr)> {
        let inner = self.lock();
        let mut users: Vec<&Contribution> = inner.users.values().collect();
        users.sort_by(|a, b| {
            b.in_use
                .total_cmp(&a.in_use)
                .then(b.priority.total_cmp(&a.priority))
                .then(a.user.cmp(&b.user))
        });
        let usage = list(users.iter().take(MAX_USERS_IN_AD).map(|c| {
            format!(
                "[User = {}; Priority = {}; InUse = {}; Accumulated = {}; At = {}; \
                 FirstUsage = {}; LastUsage = {}]",
                quoted(&c.user),
                real(c.priority),
                real(c.in_use),
                real(c.accumulated),
                c.at,
                c.first_usage,
                c.last_usage
            )
        }));
        let favours = list(inner.favours.iter().take(MAX_DOMAINS_IN_AD).map(
            |(domain, (given, received))| {
                format!(
                    "[Domain = {}; Given = {}; Received = {}]",
                    quoted(domain),
                    real(*given),
                    real(*received)
                )
            },
        ));
        let factors = list(inner.factors.values().take(MAX_FACTORS_IN_AD).map(|f| {
            format!(
                "[User = {}; Factor = {}; SetAt = {}]",
                quoted(&f.user),
                real(f.factor),
                f.set_at
            )
        }));
        [
            (USAGE_ATTR, usage),
            (FAVOURS_ATTR, favours),
            (FACTORS_ATTR, factors),
        ]
        .into_iter()
        .filter_map(|(name, text)| Some((name, parse_expr(&text).ok()?)))
        .collect()
    }
}

fn secs(t: Timestamp) -> i64 {
    i64::try_from(t.as_unix_millis() / 1000).unwrap_or(i64::MAX)
}

fn quoted(s: &str) -> String {
    unparse_value(&Value::String(s.into()))
}

fn real(r: f64) -> String {
    unparse_value(&Value::Real(if r.is_finite() { r } else { 0.0 }))
}

fn list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    format!("{{{}}}", items.join(", "))
}

/// The user priorities and the favours ledger of a domain, computed from
/// its machine ads.
#[derive(Debug, Clone, Default)]
pub struct Priorities {
    /// By user.
    pub users: BTreeMap<String, UserPriority>,
    pub ledger: Ledger,
}

impl Priorities {
    /// `user`'s effective priority (smaller is better); a user nobody has
    /// recorded starts at the best priority their factor allows.
    pub fn effective(&self, user: &str, factors: &Factors, foreign_multiplier: f64) -> f64 {
        match self.users.get(user) {
            Some(p) => p.effective,
            None => priority::MIN_PRIORITY * factors.factor_of(user, foreign_multiplier),
        }
    }
}

/// Reads the accounting of the ads of `own_domain` (ads of other domains
/// do not count: each domain keeps its own books) and computes every
/// user's priority at `now`. The same ads give the same table on every
/// agent.
pub fn priorities(
    ads: &[MachineAd],
    own_domain: &str,
    foreign_factors: &BTreeMap<String, f64>,
    now: i64,
    halflife: f64,
) -> (Priorities, Factors) {
    let mut parts: Vec<Contribution> = Vec::new();
    let mut settings: Vec<FactorSetting> = Vec::new();
    let mut ledger = Ledger::default();
    for machine in ads.iter().filter(|m| m.domain == own_domain) {
        let setter = machine.signer.to_string();
        read_ad(
            &machine.ad,
            &setter,
            now,
            &mut parts,
            &mut settings,
            &mut ledger,
        );
    }
    let factors = Factors::from_settings(&settings);
    let table = priority::table(&parts, &factors, now, halflife);
    let users = table
        .into_iter()
        .map(|mut p| {
            let multiplier = priority::foreign_multiplier(&p.user, own_domain, foreign_factors);
            if multiplier != 1.0 {
                p.factor *= multiplier;
                p.effective = p.real * p.factor;
            }
            (p.user.clone(), p)
        })
        .collect();
    (Priorities { users, ledger }, factors)
}

fn read_ad(
    ad: &ClassAd,
    setter: &str,
    now: i64,
    parts: &mut Vec<Contribution>,
    settings: &mut Vec<FactorSetting>,
    ledger: &mut Ledger,
) {
    for record in records(ad, USAGE_ATTR, MAX_USERS_IN_AD) {
        let (Some(user), Some(at)) = (text(&record, "User"), int(&record, "At")) else {
            continue;
        };
        if at > now.saturating_add(MAX_SKEW_SECS) || at < now.saturating_sub(MAX_AGE_SECS) {
            continue;
        }
        let number = |name, max: f64| {
            number(&record, name)
                .filter(|n| *n >= 0.0)
                .map(|n| n.min(max))
        };
        parts.push(Contribution {
            user,
            at,
            priority: number("Priority", MAX_FIGURE).unwrap_or(0.0),
            in_use: number("InUse", MAX_IN_USE).unwrap_or(0.0),
            accumulated: number("Accumulated", MAX_FIGURE).unwrap_or(0.0),
            first_usage: int(&record, "FirstUsage").unwrap_or(at),
            last_usage: int(&record, "LastUsage").unwrap_or(at),
        });
    }
    for record in records(ad, FAVOURS_ATTR, MAX_DOMAINS_IN_AD) {
        let Some(domain) = text(&record, "Domain").filter(|d| d.len() <= MAX_USER_LEN * 2) else {
            continue;
        };
        let amount = |name| {
            number(&record, name)
                .filter(|n| *n >= 0.0)
                .map_or(0.0, |n| n.min(MAX_FIGURE))
        };
        ledger.record_given(&domain, amount("Given"));
        ledger.record_received(&domain, amount("Received"));
    }
    for record in records(ad, FACTORS_ATTR, MAX_FACTORS_IN_AD) {
        let (Some(user), Some(factor), Some(set_at)) = (
            text(&record, "User"),
            number(&record, "Factor"),
            int(&record, "SetAt"),
        ) else {
            continue;
        };
        if priority::check_factor(factor).is_ok() && set_at <= now.saturating_add(MAX_SKEW_SECS) {
            settings.push(FactorSetting {
                user,
                factor,
                set_at,
                setter: setter.to_owned(),
            });
        }
    }
}

/// The nested ads of the list `name`, at most `max` of them.
fn records(ad: &ClassAd, name: &str, max: usize) -> Vec<Arc<ClassAd>> {
    let Ok(name) = Name::new(name) else {
        return Vec::new();
    };
    match Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, name.folded()) {
        Value::List(items) => items
            .iter()
            .take(max)
            .filter_map(|v| match v {
                Value::Ad(a) => Some(a.ad.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn value(ad: &ClassAd, name: &str) -> Value {
    Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded())
}

fn text(ad: &ClassAd, name: &str) -> Option<String> {
    match value(ad, name) {
        Value::String(s) if !s.is_empty() && s.len() <= starling_storage::MAX_LABEL_LEN => {
            Some(s.to_string())
        }
        _ => None,
    }
}

fn int(ad: &ClassAd, name: &str) -> Option<i64> {
    match value(ad, name) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

fn number(ad: &ClassAd, name: &str) -> Option<f64> {
    match value(ad, name) {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) if r.is_finite() => Some(r),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::identity::Keypair;
    use starling_storage::MemoryStore;

    fn accounting(seed: u8) -> Accounting {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        Accounting::load(
            store,
            100,
            Keypair::from_seed(&[seed; 32]).agent_id().to_string(),
        )
        .unwrap()
    }

    fn machine_ad(seed: u8, domain: &str, accounting: &Accounting) -> MachineAd {
        let mut ad = ClassAd::new();
        for (name, expr) in accounting.attributes() {
            ad.insert(Name::known(name), expr);
        }
        MachineAd {
            signer: Keypair::from_seed(&[seed; 32]).agent_id(),
            ad: Arc::new(ad),
            domain: domain.to_owned(),
        }
    }

    #[test]
    fn every_agent_computes_the_same_priorities_from_the_same_ads() {
        let a = accounting(1);
        let b = accounting(2);
        a.job_started("alice@lab", 2.0, 1000);
        b.job_started("alice@lab", 1.0, 1010);
        b.job_started("bob@lab", 1.0, 1020);
        b.job_ended("bob@lab", None, 1.0, 30.0, 1050);
        a.set_factor("bob@lab", 2.0, 1060).unwrap();
        b.set_factor("alice@lab", 1.0, 1061).unwrap();
        let ads = vec![machine_ad(1, "lab", &a), machine_ad(2, "lab", &b)];
        let mut reversed = ads.clone();
        reversed.reverse();
        let none = BTreeMap::new();
        let (one, _) = priorities(&ads, "lab", &none, 2000, 100.0);
        let (other, _) = priorities(&reversed, "lab", &none, 2000, 100.0);
        let bits = |p: &Priorities| -> Vec<(String, u64, u64)> {
            p.users
                .values()
                .map(|u| (u.user.clone(), u.real.to_bits(), u.effective.to_bits()))
                .collect()
        };
        assert_eq!(bits(&one), bits(&other));
        let alice = &one.users["alice@lab"];
        let bob = &one.users["bob@lab"];
        // Alice holds 3 cpus for long: her priority has moved toward 3.
        assert!(alice.real > 2.5, "{alice:?}");
        assert!((bob.factor / alice.factor - 2.0).abs() < 1e-9, "{bob:?}");
        assert!(bob.effective < alice.effective);
    }

    #[test]
    fn bad_factors_and_user_names_are_refused_and_change_nothing() {
        let a = accounting(1);
        for (user, factor, needle) in [
            ("bob@lab", 1e308, "above 1e9"),
            ("bob@lab", f64::INFINITY, "not a finite number"),
            ("bob@lab", f64::NAN, "not a finite number"),
            ("bob@lab", 0.5, "below 1"),
            ("bob\n@lab", 10.0, "a newline"),
            ("bob\t@lab", 10.0, "a tab"),
        ] {
            let e = a.set_factor(user, factor, 1000).unwrap_err();
            assert!(e.contains(needle), "{user:?} {factor}: {e}");
        }
        let none = BTreeMap::new();
        let (_, in_force) = priorities(&[machine_ad(1, "lab", &a)], "lab", &none, 1001, 100.0);
        assert_eq!(
            in_force.factor_of("bob@lab", 1.0),
            starling_policies::priority::DEFAULT_PRIO_FACTOR
        );
    }

    #[test]
    fn a_factor_outlives_the_agent_that_set_it() {
        let (a, b) = (accounting(1), accounting(2));
        let none = BTreeMap::new();
        a.set_factor("bob@lab", 5.0, 1000).unwrap();
        // Set twice within a second: the second setting is the one in force.
        a.set_factor("bob@lab", 3.0, 1000).unwrap();
        let (_, in_force) = priorities(&[machine_ad(1, "lab", &a)], "lab", &none, 1001, 100.0);
        assert_eq!(in_force.factor_of("bob@lab", 1.0), 3.0);
        assert!(!a.adopt(&in_force), "a setter takes up nothing of its own");
        // B takes the setting up; once A's ad has gone, B's carries it.
        assert!(b.adopt(&in_force));
        assert!(!b.adopt(&in_force), "taken up once");
        let (_, later) = priorities(&[machine_ad(2, "lab", &b)], "lab", &none, 1002, 100.0);
        assert_eq!(later.factor_of("bob@lab", 1.0), 3.0);
        // A newer setting made at B wins over the copy A still holds.
        b.set_factor("bob@lab", 7.0, 1003).unwrap();
        let ads = [machine_ad(1, "lab", &a), machine_ad(2, "lab", &b)];
        let (_, newest) = priorities(&ads, "lab", &none, 1004, 100.0);
        assert_eq!(newest.factor_of("bob@lab", 1.0), 7.0);
        assert!(a.adopt(&newest));
    }

    #[test]
    fn ads_of_other_domains_and_malformed_records_do_not_count() {
        let a = accounting(1);
        a.job_started("alice@lab", 4.0, 0);
        let mut bogus = ClassAd::new();
        bogus.insert(
            Name::known(USAGE_ATTR),
            parse_expr(r#"{ [User = "mallory@lab"; Priority = -5; At = "x"], 7, [User = 3] }"#)
                .unwrap(),
        );
        let ads = vec![
            machine_ad(1, "elsewhere", &a),
            MachineAd {
                signer: Keypair::from_seed(&[3; 32]).agent_id(),
                ad: Arc::new(bogus),
                domain: "lab".to_owned(),
            },
        ];
        let (p, _) = priorities(&ads, "lab", &BTreeMap::new(), 100, 100.0);
        assert!(p.users.is_empty(), "{:?}", p.users);
    }

    #[test]
    fn records_from_the_future_and_absurd_figures_do_not_take_over() {
        let mut ad = ClassAd::new();
        ad.insert(
            Name::known(USAGE_ATTR),
            parse_expr(
                r#"{ [User = "mallory@lab"; Priority = 0; InUse = 0; At = 999999999999],
                     [User = "eve@lab"; Priority = 1e300; InUse = 1e300; At = 100] }"#,
            )
            .unwrap(),
        );
        ad.insert(
            Name::known(FACTORS_ATTR),
            parse_expr(r#"{ [User = "bob@lab"; Factor = 1; SetAt = 999999999999] }"#).unwrap(),
        );
        let ads = vec![MachineAd {
            signer: Keypair::from_seed(&[3; 32]).agent_id(),
            ad: Arc::new(ad),
            domain: "lab".to_owned(),
        }];
        let (p, f) = priorities(&ads, "lab", &BTreeMap::new(), 100, 100.0);
        assert!(!p.users.contains_key("mallory@lab"), "{:?}", p.users);
        assert!(p.users["eve@lab"].real.is_finite());
        assert!(f.get("bob@lab").is_none());
    }

    #[test]
    fn favours_given_and_received_reach_the_ledger() {
        let a = accounting(1);
        a.job_started("carol@far", 2.0, 0);
        a.job_ended("carol@far", Some("far"), 2.0, 50.0, 50);
        a.received("near", 30.0);
        let (p, _) = priorities(
            &[machine_ad(1, "lab", &a)],
            "lab",
            &BTreeMap::new(),
            60,
            100.0,
        );
        assert_eq!(p.ledger.balance("far"), 0.0);
        assert_eq!(p.ledger.balance("near"), 30.0);
    }

    #[test]
    fn the_principal_is_the_accounting_group_else_the_owner() {
        let job = starling_protocol::classad::parse_ad(r#"[Owner = "alice"]"#).unwrap();
        assert_eq!(principal(&job, "lab"), "alice@lab");
        let grouped = starling_protocol::classad::parse_ad(
            r#"[Owner = "alice"; AccountingGroup = "physics.bob"]"#,
        )
        .unwrap();
        assert_eq!(principal(&grouped, "lab"), "physics.bob@lab");
    }
}
