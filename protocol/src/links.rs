//! Reserving network links for bulk transfers: the words of the
//! `Link*`, `Hold`, `Commit` and `Release` requests of
//! [`crate::transfer`].
//!
//! Every agent owns its host link; an agent with the `netmgr` role owns its
//! domain's uplink. A transfer that would cross managed links first reads
//! each owner's [`LinkState`], chooses one slot that fits under all of them
//! (`starling_policies::bandwidth::find`), holds it on each for a lease,
//! commits it on each, and releases the holds it got if any owner refuses:
//! a transfer never holds half its path. The holder is the peer that asks
//! (the libp2p handshake proves it); an id it already used is refused.
//!
//! Times are unix milliseconds, rates bytes per second.

use serde::{Deserialize, Serialize};

use crate::wire::Error;

/// Slots one [`LinkState`] lists, at most.
pub const MAX_SLOTS: usize = 256;

/// The longest lease a hold may ask for.
pub const MAX_LEASE_MS: u64 = 60_000;

/// The longest a reservation may last.
pub const MAX_SLOT_MS: u64 = 24 * 3_600_000;

/// The longest domain name a [`LinkId::Uplink`] carries.
pub const MAX_DOMAIN_LEN: usize = 253;

/// Which link of the agent asked.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkId {
    /// Its own host link.
    Host,
    /// The uplink of `domain`, which it manages (`netmgr`).
    Uplink { domain: String },
}

impl std::fmt::Display for LinkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkId::Host => f.write_str("host link"),
            LinkId::Uplink { domain } => write!(f, "uplink of {domain}"),
        }
    }
}

impl LinkId {
    pub fn check(&self) -> Result<(), Error> {
        match self {
            LinkId::Host => Ok(()),
            LinkId::Uplink { domain } if domain.is_empty() || domain.len() > MAX_DOMAIN_LEN => {
                Err(Error::Invalid {
                    field: "link",
                    reason: format!("a domain of 1 to {MAX_DOMAIN_LEN} bytes expected"),
                })
            }
            LinkId::Uplink { .. } => Ok(()),
        }
    }
}

/// A constant rate over a span of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub start_ms: u64,
    pub end_ms: u64,
    /// Bytes per second.
    pub rate: u64,
}

impl Slot {
    pub fn check(&self) -> Result<(), Error> {
        let invalid = |reason: String| Error::Invalid {
            field: "slot",
            reason,
        };
        if self.rate == 0 {
            return Err(invalid("a rate of 0".to_owned()));
        }
        if self.end_ms <= self.start_ms {
            return Err(invalid(format!(
                "it ends ({}) before it starts ({})",
                self.end_ms, self.start_ms
            )));
        }
        if self.end_ms - self.start_ms > MAX_SLOT_MS {
            return Err(invalid(format!("longer than {MAX_SLOT_MS} ms")));
        }
        Ok(())
    }
}

/// A link as its owner has it now: what reservations may use of it, how
/// far ahead, and what is held or committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkState {
    /// Bytes per second reservations may use (its capacity less the
    /// reserve kept for small transfers).
    pub capacity: u64,
    pub horizon_ms: u64,
    /// The owner's clock when it answered.
    pub now_ms: u64,
    /// At most [`MAX_SLOTS`] (the soonest).
    pub slots: Vec<Slot>,
}

impl LinkState {
    pub fn check(&self) -> Result<(), Error> {
        crate::wire::check_count("link slots", &self.slots, MAX_SLOTS)?;
        for slot in &self.slots {
            slot.check()?;
        }
        Ok(())
    }
}

/// A link owner's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkAnswer {
    State(LinkState),
    Held { id: u64 },
    Committed { id: u64 },
    Released { id: u64 },
}
