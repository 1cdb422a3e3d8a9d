//! End-to-end tests across crates live in `tests/`; this library holds their shared helpers.
