//! The `starling` command.

fn main() -> std::process::ExitCode {
    starling_node::cli::main()
}
