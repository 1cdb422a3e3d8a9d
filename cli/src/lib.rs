//! The `starling` command line, as a library so that the end-to-end tests
//! in `tests/` can build the same binary (`starling-e2e`).
//!
//! Most of the command line lives in `crate::commands`, next to the
//! agent it drives. This crate exists because some commands belong to
//! crates that depend on `node`: `starling testnet` runs in
//! `starling_testnet`, which starts agents and so is built on `node`, and
//! `node` cannot depend on it in turn. The binary sits above both and hands
//! those commands to `node`'s command line as
//! [`crate::commands::Extension`]s.
//!
//! Tests that run the binary live in the workspace's `tests/` crate, which
//! builds this same command line as `starling-e2e` (Cargo hands a test the
//! path of a binary only from its own package).

#[macro_use]
mod output;

mod commands;
mod demo;
mod testnet;

/// Runs the `starling` command line with this process's arguments.
pub fn main() -> std::process::ExitCode {
    crate::commands::main_with(&[&testnet::Testnet, &demo::Demo])
}
