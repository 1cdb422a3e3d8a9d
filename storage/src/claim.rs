//! Claims we hold, on either side, and their leases.

use starling_protocol::identity::{AgentId, Timestamp};

use crate::{Error, JobId};

/// Longest claim id, in bytes.
pub const MAX_CLAIM_ID_LEN: usize = 64;

/// Which side of a claim this agent is on.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Side {
    /// We submitted the job and claimed the peer's machine.
    Submit,
    /// We execute the peer's job on our machine.
    Execute,
}

/// A claim: a job placed on a machine, kept alive by a lease.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Claim {
    /// The id the execute agent gave the claim, 1 to [`MAX_CLAIM_ID_LEN`]
    /// bytes.
    pub id: Vec<u8>,
    /// The agent on the other side.
    pub peer: AgentId,
    /// The job, as its submit agent numbers it.
    pub job: JobId,
    pub side: Side,
    /// When the lease lapses unless renewed.
    pub lease_expires: Timestamp,
}

pub(crate) fn check_claim_id(id: &[u8]) -> Result<(), Error> {
    if id.is_empty() || id.len() > MAX_CLAIM_ID_LEN {
        return Err(Error::invalid(format!(
            "a claim id is 1 to {MAX_CLAIM_ID_LEN} bytes, not {}",
            id.len()
        )));
    }
    Ok(())
}
