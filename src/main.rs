//! The chromaflow command line: parse, set up logging, run, map errors to exit codes
//! (0 success, 1 runtime error, 2 usage error).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = chromaflow::cli::Cli::parse();
    chromaflow::cli::init_logging(&cli.global);
    match chromaflow::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", chromaflow::cli::error_message(&e));
            ExitCode::from(chromaflow::cli::exit_code(&e))
        }
    }
}
