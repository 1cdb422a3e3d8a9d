//! The agent's part in the pool: the view of the pool it keeps from
//! gossiped, verified ads, the machine ad it advertises, which domains it
//! trusts, the usage books behind fair share, and the domain-wide caps its
//! terms set on trusted domains (shares).

pub mod advertiser;
pub mod handle;
pub mod shares;
pub mod trust;
pub mod usage;
pub mod view;
pub mod view_actor;

pub use handle::{Pool, PoolRequest};
