//! HTCondor's hold reason codes the queue itself uses. Constants only: it
//! uses nothing else of the crate.

pub const USER_REQUEST: u32 = 1;
pub const TRANSFER_OUTPUT_ERROR: u32 = 12;
pub const SUBMITTED_ON_HOLD: u32 = 15;
