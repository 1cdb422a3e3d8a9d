//! The agent's part in the pool: the view of the pool it keeps from
//! gossiped, verified ads, the machine ad it advertises, which domains it
//! trusts, and the usage books behind fair share.

pub mod advertiser;
pub mod trust;
pub mod usage;
pub mod view;
pub mod view_actor;
