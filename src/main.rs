//! The `turnbench` binary: parse arguments, run, print the error chain, set the exit code.

use clap::Parser;
use turnbench::exit::Exit;

#[tokio::main]
async fn main() {
    // A usage error is a setup error (Exit::Error); --help and --version succeed.
    let cli = match turnbench::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            let exit = if e.use_stderr() {
                Exit::Error
            } else {
                Exit::Success
            };
            std::process::exit(exit.code());
        }
    };
    let exit = match turnbench::cli::run(cli).await {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("error: {e:#}");
            Exit::Error
        }
    };
    std::process::exit(exit.code());
}
