//! End-to-end tests across crates: each file in `tests/` starts real agents
//! (processes on loopback, through the `starling-e2e` binary this package
//! builds) and drives them as a user would, through the command line and
//! the control socket. `tests/support` holds what they share.
