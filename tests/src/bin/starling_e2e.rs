//! The `starling` command line, built in this package so that its tests can
//! run it (see `Cargo.toml`).

fn main() -> std::process::ExitCode {
    starling_cli::main()
}
