//! The chromaflow command line: parse, set up logging, run, map errors to exit codes
//! (0 success, 1 runtime error, 2 usage error).

mod cli;
mod commands;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // Held to the end of main: the directory is removed on exit (after parsing, which may
    // exit the process itself).
    let _runtime_dir = cli::private_runtime_dir();
    cli::init_logging(&cli.global);
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", commands::error_message(&e));
            ExitCode::from(cli::exit_code(&e))
        }
    }
}
