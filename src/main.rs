//! The `turnbench` binary: parse arguments, run, print the error chain, set the exit code.

use clap::Parser;

#[tokio::main]
async fn main() {
    let cli = turnbench::cli::Cli::parse();
    match turnbench::cli::run(cli).await {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}
