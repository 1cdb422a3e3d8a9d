//! The `starling` binary; everything it does is in the crate's library.

fn main() -> std::process::ExitCode {
    starling_cli::main()
}
