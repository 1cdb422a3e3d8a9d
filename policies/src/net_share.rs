//! Network fair share by the users' priorities, as one link's owner keeps
//! it (Basney, seed 001, §6.2.3, the two-phase CPU and network fair share).
//!
//! Each user's share of a link is its weight (the inverse of its priority
//! factor) over the weights of the users asking for the link now, times
//! what the link carries over the usage horizon. Usage is the bytes a user
//! was admitted, decaying with the horizon as its half-life (CPU usage
//! decays the same way), so a share is about recent use, not all time.
//!
//! - **Phase one:** a user who would pass its share waits while another
//!   user still under its share is waiting for the link: heavy network
//!   users cannot keep lighter ones out, and a user within its share is
//!   never passed by one over it.
//! - **Phase two:** when every user waiting is over its share, the limit
//!   is lifted and the link goes to whoever asks (it would otherwise idle).
//!
//! The owner calls [`NetShare::asked`] when a user looks at the link (it
//! is then waiting for it), [`NetShare::check`] before it holds a slot,
//! and [`NetShare::admitted`] once it has: the user is charged and no
//! longer waits. A user that stops asking stops waiting after
//! [`WAITING_SECS`]. Transfers too small to reserve never come here: they
//! use the link's goodput reserve.
//!
//! Pure: times are seconds on any clock the caller keeps, sizes bytes.

use std::collections::BTreeMap;

/// A user that has not asked for this long no longer waits.
pub const WAITING_SECS: f64 = 10.0;

/// Users kept at once; past it, the least used is forgotten first.
pub const MAX_USERS: usize = 1024;

#[derive(Debug, Clone, PartialEq)]
struct User {
    /// Bytes admitted, as of `at`.
    used: f64,
    at: f64,
    /// Since when it waits for the link (asked and not yet admitted),
    /// and when it last asked.
    waiting: Option<(f64, f64)>,
}

/// Why a user must wait for its turn on the link.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareExceeded {
    pub user: String,
    /// Its recent use and its share, in bytes.
    pub used: f64,
    pub share: f64,
    /// Users under their share waiting for the link (at most three named).
    pub waiting: Vec<String>,
}

impl std::fmt::Display for ShareExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |b: f64| b / (1024.0 * 1024.0);
        write!(
            f,
            "network share exceeded: {} recently moved {:.1} MiB of its {:.1} MiB share of \
             this link, and {} under its share waits",
            self.user,
            mib(self.used),
            mib(self.share),
            self.waiting.join(", ")
        )
    }
}

/// One link's fair share of its users.
#[derive(Debug, Clone, PartialEq)]
pub struct NetShare {
    /// The usage horizon: usage halves over it.
    pub half_life: f64,
    users: BTreeMap<String, User>,
}

impl NetShare {
    pub fn new(half_life: f64) -> NetShare {
        NetShare {
            half_life: half_life.max(1.0),
            users: BTreeMap::new(),
        }
    }

    fn decayed(&self, user: &User, now: f64) -> f64 {
        let age = (now - user.at).max(0.0);
        user.used * 0.5f64.powf(age / self.half_life)
    }

    /// `user`'s recent use of the link, in bytes.
    pub fn used(&self, user: &str, now: f64) -> f64 {
        self.users.get(user).map_or(0.0, |u| self.decayed(u, now))
    }

    /// Whether `user` waits for the link now.
    pub fn waits(&self, user: &str, now: f64) -> bool {
        self.users
            .get(user)
            .and_then(|u| u.waiting)
            .is_some_and(|(_, last)| now - last <= WAITING_SECS)
    }

    fn entry(&mut self, user: &str, now: f64) -> &mut User {
        if !self.users.contains_key(user) && self.users.len() >= MAX_USERS {
            self.forget_one(now);
        }
        self.users.entry(user.to_owned()).or_insert(User {
            used: 0.0,
            at: now,
            waiting: None,
        })
    }

    /// Forgets the user with the least recent use that does not wait.
    fn forget_one(&mut self, now: f64) {
        let least = self
            .users
            .iter()
            .filter(|(_, u)| {
                !u.waiting
                    .is_some_and(|(_, last)| now - last <= WAITING_SECS)
            })
            .map(|(name, u)| (name.clone(), self.decayed(u, now)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .or_else(|| self.users.keys().next().map(|k| (k.clone(), 0.0)));
        if let Some((name, _)) = least {
            self.users.remove(&name);
        }
    }

    /// `user` looks at the link to reserve it: it waits for it until it is
    /// admitted (or stops asking).
    pub fn asked(&mut self, user: &str, now: f64) {
        let entry = self.entry(user, now);
        entry.waiting = match entry.waiting {
            Some((since, last)) if now - last <= WAITING_SECS => Some((since, now)),
            _ => Some((now, now)),
        };
    }

    /// Whether `user` may hold `bytes` of the link now. `capacity` is what
    /// the link carries (bytes per second); `weight` gives each user's
    /// weight (the inverse of its priority factor).
    pub fn check(
        &mut self,
        user: &str,
        bytes: f64,
        capacity: f64,
        weight: &dyn Fn(&str) -> f64,
        now: f64,
    ) -> Result<(), ShareExceeded> {
        self.asked(user, now);
        let waiting: Vec<&str> = self
            .users
            .keys()
            .filter(|name| self.waits(name, now))
            .map(String::as_str)
            .collect();
        let weigh = |name: &str| {
            let w = weight(name);
            if w.is_finite() && w > 0.0 {
                w
            } else {
                1.0
            }
        };
        let total: f64 = waiting.iter().map(|name| weigh(name)).sum();
        // What the link carries over the horizon, counted as usage is:
        // at full use, decayed usage tends to capacity × half-life / ln 2.
        let carried = capacity.max(0.0) * self.half_life / std::f64::consts::LN_2;
        let share = |name: &str| carried * weigh(name) / total.max(f64::MIN_POSITIVE);
        let used = self.used(user, now);
        let mine = share(user);
        if used + bytes <= mine {
            return Ok(());
        }
        let under: Vec<String> = waiting
            .iter()
            .filter(|name| **name != user && self.used(name, now) < share(name))
            .map(|name| (*name).to_owned())
            .collect();
        if under.is_empty() {
            // Phase two: everyone waiting is over its share.
            return Ok(());
        }
        Err(ShareExceeded {
            user: user.to_owned(),
            used,
            share: mine,
            waiting: under.into_iter().take(3).collect(),
        })
    }

    /// Every user known, most used first: its recent use (bytes) and
    /// whether it waits for the link.
    pub fn users(&self, now: f64) -> Vec<(String, f64, bool)> {
        let mut users: Vec<(String, f64, bool)> = self
            .users
            .iter()
            .map(|(name, u)| (name.clone(), self.decayed(u, now), self.waits(name, now)))
            .collect();
        users.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        users
    }

    /// `user` holds `bytes` of the link: it is charged and waits no more.
    pub fn admitted(&mut self, user: &str, bytes: f64, now: f64) {
        let decayed = self.used(user, now);
        let entry = self.entry(user, now);
        entry.used = decayed + bytes.max(0.0);
        entry.at = now;
        entry.waiting = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MB: f64 = 1_000_000.0;

    fn equal(_: &str) -> f64 {
        1.0
    }

    /// A 1 MB/s link with a 100 s horizon: it carries about 144 MB over it.
    fn link() -> NetShare {
        NetShare::new(100.0)
    }

    #[test]
    fn a_user_alone_takes_the_whole_link_even_past_its_share() {
        let mut share = link();
        for i in 0..20 {
            let now = f64::from(i);
            assert_eq!(share.check("alice", 50.0 * MB, MB, &equal, now), Ok(()));
            share.admitted("alice", 50.0 * MB, now);
        }
        assert!(share.used("alice", 20.0) > 500.0 * MB);
    }

    #[test]
    fn a_heavy_user_waits_while_a_light_one_under_its_share_waits() {
        let mut share = link();
        share.admitted("alice", 100.0 * MB, 0.0);
        // Bob looks at the link (it is full, say) and waits.
        share.asked("bob", 1.0);
        let refused = share
            .check("alice", 10.0 * MB, MB, &equal, 2.0)
            .unwrap_err();
        assert_eq!(refused.waiting, ["bob"]);
        assert!(refused.used > 98.0 * MB && refused.share < 73.0 * MB);
        assert!(refused.to_string().contains("bob under its share waits"));
        // Bob within his share is admitted; then Alice goes on.
        assert_eq!(share.check("bob", 10.0 * MB, MB, &equal, 3.0), Ok(()));
        share.admitted("bob", 10.0 * MB, 3.0);
        assert_eq!(share.check("alice", 10.0 * MB, MB, &equal, 4.0), Ok(()));
        let users = share.users(4.0);
        assert_eq!(users[0].0, "alice");
        assert!(users[0].2, "alice asked and holds nothing new yet");
        assert_eq!((users[1].0.as_str(), users[1].2), ("bob", false));
    }

    #[test]
    fn when_everyone_waiting_is_over_its_share_the_limit_is_lifted() {
        let mut share = link();
        share.admitted("alice", 200.0 * MB, 0.0);
        share.admitted("bob", 200.0 * MB, 0.0);
        share.asked("bob", 1.0);
        assert_eq!(share.check("alice", 10.0 * MB, MB, &equal, 1.0), Ok(()));
    }

    #[test]
    fn a_user_that_stops_asking_stops_waiting() {
        let mut share = link();
        share.admitted("alice", 100.0 * MB, 0.0);
        share.asked("bob", 1.0);
        assert!(share.check("alice", 10.0 * MB, MB, &equal, 2.0).is_err());
        let later = 1.0 + WAITING_SECS + 1.0;
        assert!(!share.waits("bob", later));
        assert_eq!(share.check("alice", 10.0 * MB, MB, &equal, later), Ok(()));
    }

    #[test]
    fn priority_factors_weigh_the_shares() {
        // Alice's factor is a quarter of Bob's: her share is 4/5 of the
        // link, so 100 MB of use is within it, where equal weights are not.
        let weight = |u: &str| if u == "alice" { 4.0 } else { 1.0 };
        let mut share = link();
        share.admitted("alice", 80.0 * MB, 0.0);
        share.asked("bob", 1.0);
        assert_eq!(share.check("alice", 20.0 * MB, MB, &weight, 2.0), Ok(()));
        assert!(share.check("alice", 20.0 * MB, MB, &equal, 2.0).is_err());
    }

    #[test]
    fn usage_decays_over_the_horizon() {
        let mut share = link();
        share.admitted("alice", 100.0 * MB, 0.0);
        assert!((share.used("alice", 100.0) - 50.0 * MB).abs() < 1.0);
        share.asked("bob", 299.0);
        // Three half-lives later Alice's 12.5 MB is within her share.
        assert_eq!(share.check("alice", 10.0 * MB, MB, &equal, 300.0), Ok(()));
    }

    #[test]
    fn the_table_is_bounded_and_keeps_those_waiting() {
        let mut share = link();
        share.asked("waiting", 0.0);
        for i in 0..(MAX_USERS * 2) {
            share.admitted(&format!("u{i}"), 1.0, 1.0);
        }
        assert!(share.users.len() <= MAX_USERS);
        assert!(share.waits("waiting", 1.0));
    }

    proptest! {
        /// A user within its share is never refused, and a refusal always
        /// names someone under its share who waits.
        #[test]
        fn refusals_are_for_users_past_their_share(
            uses in proptest::collection::vec((0usize..4, 0.0f64..80.0), 1..40),
            asker in 0usize..4,
            bytes in 0.0f64..50.0,
        ) {
            let names = ["a", "b", "c", "d"];
            let mut share = link();
            for (i, (who, mb)) in uses.iter().enumerate() {
                let now = i as f64;
                share.asked(names[*who], now);
                if i % 3 != 0 {
                    share.admitted(names[*who], mb * MB, now);
                }
            }
            let now = uses.len() as f64;
            let before = share.used(names[asker], now);
            match share.check(names[asker], bytes * MB, MB, &equal, now) {
                Ok(()) => {}
                Err(e) => {
                    prop_assert!(before + bytes * MB > e.share);
                    prop_assert!(!e.waiting.is_empty());
                    for other in &e.waiting {
                        prop_assert!(share.waits(other, now));
                    }
                }
            }
        }
    }
}
