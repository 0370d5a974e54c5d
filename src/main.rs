//! The `turnbench` binary: parse arguments, run, print the error chain, set the exit code.

use clap::Parser;

#[tokio::main]
async fn main() {
    // A usage error is a setup error (exit 1), as documented: 2 means "finished, with
    // failures" for collect and judge. --help and --version still exit 0.
    let cli = match turnbench::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 1 } else { 0 });
        }
    };
    match turnbench::cli::run(cli).await {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}
