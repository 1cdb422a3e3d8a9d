//! The `starling` binary.
//!
//! Most of the command line lives in `starling_node::cli`, next to the
//! agent it drives. This crate exists because some commands belong to
//! crates that depend on `node`: `starling testnet` runs in
//! `starling_testnet`, which starts agents and so is built on `node`, and
//! `node` cannot depend on it in turn. The binary sits above both and hands
//! those commands to `node`'s command line as
//! [`starling_node::cli::Extension`]s.
//!
//! Tests that run the binary (`env!("CARGO_BIN_EXE_starling")`) live in
//! this crate's `tests/`, since Cargo builds a binary only for its own
//! package's tests.

mod demo;
mod testnet;

fn main() -> std::process::ExitCode {
    starling_node::cli::main_with(&[&testnet::Testnet, &demo::Demo])
}
