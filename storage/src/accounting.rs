//! What each user has used and what each domain has done for us.
//!
//! The store keeps the figures and when they were last brought up to date;
//! how they decay (HTCondor's half-life, the network of favours' discount)
//! is a policy, passed in as the function that computes the new figure from
//! the old one.

use starling_protocol::identity::Timestamp;

use crate::Error;

/// Longest user (`name@domain`) or domain name the store accepts, in bytes.
pub const MAX_LABEL_LEN: usize = 256;

/// A user's accumulated usage, in resource-seconds (slot weight × seconds),
/// and this agent's share of the user's priority (HTCondor's real user
/// priority, decayed), as of `updated_at`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Usage {
    pub accumulated: f64,
    pub priority: f64,
    pub updated_at: Timestamp,
}

/// A user's priority factor as set by an administrator (HTCondor's
/// `condor_userprio -setfactor`), and when.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Factor {
    pub factor: f64,
    pub set_at: Timestamp,
}

/// The favours exchanged with one domain, in resource-seconds, as of
/// `updated_at`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Favours {
    /// Work our machines did for the domain's users.
    pub given: f64,
    /// Work the domain's machines did for our users.
    pub received: f64,
    pub updated_at: Timestamp,
}

/// A user or domain name: not empty, bounded, no control characters.
pub(crate) fn check_label(what: &str, label: &str) -> Result<(), Error> {
    if label.is_empty() {
        return Err(Error::invalid(format!("the {what} name is empty")));
    }
    if label.len() > MAX_LABEL_LEN {
        return Err(Error::invalid(format!(
            "the {what} name is {} bytes, more than the limit of {MAX_LABEL_LEN}",
            label.len()
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(Error::invalid(format!(
            "the {what} name {label:?} has control characters"
        )));
    }
    Ok(())
}

fn check_amount(what: &str, who: &str, amount: f64) -> Result<(), Error> {
    if !amount.is_finite() || amount < 0.0 {
        return Err(Error::invalid(format!(
            "{what} of {who:?} would be {amount}; it must be a finite number, zero or more"
        )));
    }
    Ok(())
}

impl Usage {
    pub(crate) fn check(&self, user: &str) -> Result<(), Error> {
        check_amount("usage", user, self.accumulated)?;
        check_amount("priority", user, self.priority)
    }
}

impl Factor {
    pub(crate) fn check(&self, user: &str) -> Result<(), Error> {
        if !self.factor.is_finite() || self.factor < 1.0 {
            return Err(Error::invalid(format!(
                "the priority factor of {user:?} would be {}; it must be a finite number, 1 or more",
                self.factor
            )));
        }
        Ok(())
    }
}

impl Favours {
    pub(crate) fn check(&self, domain: &str) -> Result<(), Error> {
        check_amount("favours given", domain, self.given)?;
        check_amount("favours received", domain, self.received)
    }
}
