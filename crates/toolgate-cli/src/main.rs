//! The `toolgate` command: thin glue over the library, `anyhow` errors and exit codes
//! (0 ok, 1 no result, 2 error).

mod eval;
mod output;
mod search;
mod tokens;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use toolgate::Catalog;

/// toolgate: show the model only the tools it needs, find the rest on demand.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool_search query over a catalog (the embedded one by default).
    Search(search::Args),
    /// Retrieval metrics of one strategy or all of them on a query set.
    Eval(eval::Args),
    /// Tokens of loading every definition against deferring them, per server.
    Tokens(tokens::Args),
}

/// What a command achieved, mapped to the exit code.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Exit 0.
    Found,
    /// Exit 1: the command ran and found nothing.
    Nothing,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = std::io::stdout().lock();
    let result = match cli.command {
        Command::Search(a) => search::run(a, &mut out),
        Command::Eval(a) => eval::run(a, &mut out),
        Command::Tokens(a) => tokens::run(a, &mut out),
    };
    let result = result.and_then(|o| out.flush().map(|()| o).map_err(Into::into));
    match result {
        Ok(Outcome::Found) => ExitCode::SUCCESS,
        Ok(Outcome::Nothing) => ExitCode::from(1),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("toolgate: error: {e:#}");
            }
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The catalog named by `--catalog`, or the embedded default.
fn load_catalog(path: Option<&PathBuf>) -> anyhow::Result<Catalog> {
    match path {
        Some(p) => Ok(Catalog::from_path(p)?),
        None => Ok(Catalog::embedded()),
    }
}
