//! The `toolgate` command: thin glue over the library, `anyhow` errors and exit codes
//! (0 ok, 1 no result, 2 error).

mod approve;
mod doctor;
mod eval;
mod logging;
mod login;
mod model;
mod output;
mod plot;
mod render;
mod search;
mod serve;
mod subject;
mod tokens;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use toolgate::Catalog;

/// mimalloc, not glibc's allocator: on a 100,000-tool catalog the gateway starts about 15%
/// sooner and holds about 17% less memory (measured, `docs/deploy.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Has mimalloc hand freed pages back to the system as soon as they are free (its `purge_delay`
/// option, 10 ms by default, set to 0), unless `MIMALLOC_PURGE_DELAY` chose otherwise: a
/// gateway's start builds its index on threads that end, and with the delay their freed pages
/// stayed in RSS past the peak (`docs/deploy.md`). Transparent huge pages are off too (the
/// `no_thp` feature): they rounded small heaps up to 2 MB pages.
fn purge_freed_memory_at_once() {
    use std::ffi::{c_int, c_long};
    /// `mi_option_purge_delay` in the `mi_option_t` of mimalloc 2's header, which
    /// `libmimalloc-sys` builds with the `v2` feature.
    const PURGE_DELAY: c_int = 15;
    /// Its default there, in milliseconds: another value means the option was set by the
    /// environment, or that this is not the option (the enum changed), and it is left alone.
    const DEFAULT_DELAY: c_long = 10;
    #[allow(unsafe_code)]
    unsafe extern "C" {
        /// mimalloc's `mi_option_get`.
        fn mi_option_get(option: c_int) -> c_long;
        /// mimalloc's `mi_option_set`.
        fn mi_option_set(option: c_int, value: c_long);
    }
    #[allow(unsafe_code)]
    // SAFETY: both take an option number and an integer, may be called at any time from any
    // thread, and are mimalloc's own symbols, linked in as the global allocator; an option
    // number within mimalloc's enum is only read or written.
    unsafe {
        if mi_option_get(PURGE_DELAY) == DEFAULT_DELAY {
            mi_option_set(PURGE_DELAY, 0);
        }
    }
}

/// Hands the pages this thread's heap freed back to the system, at most once a second: for
/// the gateway's threads when they go idle (`on_thread_park`). mimalloc returns a freed page
/// only when the thread that owns it allocates again, so without this a gateway that went
/// quiet after its sessions hibernated or ended would keep their memory in RSS
/// (`docs/deploy.md`).
fn return_freed_memory() {
    use std::cell::Cell;
    use std::time::{Duration, Instant};
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    LAST.with(|last| {
        if last.get().is_some_and(|at| at.elapsed() < Duration::from_secs(1)) {
            return;
        }
        last.set(Some(Instant::now()));
        #[allow(unsafe_code)]
        unsafe extern "C" {
            /// mimalloc's `mi_collect`: frees what this thread's heap can, and with `force`
            /// returns its free pages to the system.
            fn mi_collect(force: bool);
        }
        #[allow(unsafe_code)]
        // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any
        // time; the symbol is mimalloc's own, linked in as the global allocator.
        unsafe {
            mi_collect(true)
        }
    });
}

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
    /// Run the MCP gateway: streamable HTTP on 127.0.0.1:8765 by default, or stdio.
    Serve(serve::Args),
    /// The next request's tools and announcement for a provider (Anthropic, OpenAI
    /// Responses, Chat Completions, Gemini, bridge), or with --stability how a scripted
    /// session changes the request prefix.
    Render(render::Args),
    /// Start a configuration's servers once and report tools, tokens, name problems, servers
    /// without list_changed and what each client needs.
    Doctor(doctor::Args),
    /// List or approve the tool definitions a pinned server's gateway holds in quarantine.
    Approve(approve::Args),
    /// Sign the gateway in to an upstream's authorization server (OAuth with PKCE) once.
    Login(login::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell) to stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
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
    purge_freed_memory_at_once();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Search(a) => with_stdout(|out| search::run(a, out)),
        Command::Eval(a) => with_stdout(|out| eval::run(a, out)),
        Command::Tokens(a) => with_stdout(|out| tokens::run(a, out)),
        Command::Render(a) => with_stdout(|out| render::run(a, out)),
        Command::Approve(a) => with_stdout(|out| approve::run(a, out)),
        Command::Login(a) => with_stdout(|out| login::run(a, out)),
        Command::Doctor(a) => with_stdout(|out| doctor::run(a, out)),
        // The gateway owns stdout (the MCP channel with --stdio), so it must not be locked here.
        Command::Serve(a) => serve::run(a),
        Command::Completions { shell } => with_stdout(|out| {
            // Written whole, so that a closed pipe is an error here, not a panic inside clap.
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "toolgate",
                &mut script,
            );
            out.write_all(&script)?;
            Ok(Outcome::Found)
        }),
    };
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

/// Runs a command that prints its result, with stdout locked and flushed at the end.
fn with_stdout(command: impl FnOnce(&mut dyn Write) -> anyhow::Result<Outcome>) -> anyhow::Result<Outcome> {
    let mut out = std::io::stdout().lock();
    let outcome = command(&mut out)?;
    out.flush()?;
    Ok(outcome)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The catalog named by `--catalog`, or the embedded default.
/// The served subject's toolbox of `policy` over `catalog` alone in `exposure`, from the decider
/// a gateway uses, with every MCP tool deferred as the gateway defers them.
fn deferring_toolbox(
    catalog: &Catalog,
    policy: toolgate::Policy,
    exposure: toolgate_mcp::config::Exposure,
) -> anyhow::Result<std::sync::Arc<toolgate::Toolbox>> {
    use toolgate::toolbox::{CatalogState, Decider, DeferConfig, DeferMode, HostSettings};
    let defer = DeferConfig { mode: DeferMode::On, ..DeferConfig::default() };
    let settings = HostSettings {
        defer,
        exposure: Some(exposure),
        index: toolgate::Index::builder(),
        index_in_background: false,
    };
    let state = CatalogState { catalog: catalog.clone(), ..CatalogState::default() };
    Ok(Decider::new(policy, settings).publish(state)?.get(None, exposure))
}

fn load_catalog(path: Option<&PathBuf>) -> anyhow::Result<Catalog> {
    match path {
        Some(p) => Ok(Catalog::from_path(p)?),
        None => Ok(Catalog::embedded()),
    }
}
