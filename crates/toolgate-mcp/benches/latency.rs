//! The latency the gateway adds to `tools/call`: the fixture server's `echo` tool called
//! directly over stdio (the baseline), then through the real `toolgate serve` binary with the
//! fixture server as its stdio upstream, the client reaching the gateway over stdio and over
//! streamable HTTP. Each path runs N sequential calls after a warm-up and reports p50, p99 and
//! mean in microseconds, and what the gateway adds to the direct p50 and p99 (target: p50 added
//! at most 1 ms).
//!
//! Run it (release build; `cargo bench` builds this crate's binaries, but not the `toolgate`
//! binary of `toolgate-cli`, hence the first command):
//!
//! ```text
//! cargo build --release -p toolgate-cli -p toolgate-mcp --bins && cargo bench -p toolgate-mcp --bench latency
//! ```
//!
//! Without `--bench` (`cargo test --benches`, `cargo test --all-targets`) it makes a quick run
//! of a few calls per path, so it checks every path without slowing the test suite. Every call's
//! result is checked inside the loop, so a broken path fails the run.
//!
//! The `toolgate` binary is `TOOLGATE_BIN` if set, else `toolgate` in this executable's profile
//! directory (`target/release` or `target/debug`), else in the other one (with a warning: a
//! debug gateway against a release baseline says little). `TOOLGATE_BENCH_CALLS` overrides the
//! number of measured calls.

// A benchmark prints its figures; errors go to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, Command};

/// The fixture server, built by cargo with this benchmark.
const FIXTURE: &str = env!("CARGO_BIN_EXE_toolgate-fixture-server");

/// The upstream's name in the gateway's configuration; its echo tool is `fixture__echo`.
const SERVER: &str = "fixture";

/// How long starting a process, connecting or loading the tool may take.
const WAIT: Duration = Duration::from_secs(30);

/// The command that builds both binaries, for error messages.
const BUILD: &str = "cargo build --release -p toolgate-cli -p toolgate-mcp --bins";

type Client = RunningService<RoleClient, ()>;
type Result<T> = std::result::Result<T, String>;

/// Measured and warm-up calls per path.
#[derive(Debug, Clone, Copy)]
struct Plan {
    calls: usize,
    warmup: usize,
}

/// The figures of one path, in microseconds.
#[derive(Debug, Clone, Copy)]
struct Figures {
    p50: f64,
    p99: f64,
    mean: f64,
}

/// The last lines a child wrote to stderr, kept to explain a failure.
#[derive(Debug, Clone, Default)]
struct Tail(Arc<Mutex<Vec<String>>>);

impl Tail {
    /// Reads `stderr` to its end in a task (so the child never blocks on a full pipe), keeping
    /// the last lines.
    fn follow(&self, stderr: ChildStderr) {
        self.follow_lines(BufReader::new(stderr).lines());
    }

    /// Like [`Tail::follow`], on lines already being read.
    fn follow_lines(&self, mut lines: Lines<BufReader<ChildStderr>>) {
        let tail = self.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tail.push(line);
            }
        });
    }

    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == 20 {
            lines.remove(0);
        }
        lines.push(line);
    }

    /// `error`, followed by the child's last stderr lines if there are any.
    fn explain(&self, error: impl std::fmt::Display) -> String {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            error.to_string()
        } else {
            format!("{error}\n  its last stderr lines:\n    {}", lines.join("\n    "))
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    let full = std::env::args().any(|a| a == "--bench");
    let default = if full { Plan { calls: 2_000, warmup: 200 } } else { Plan { calls: 50, warmup: 10 } };
    let plan = match std::env::var("TOOLGATE_BENCH_CALLS").ok().map(|v| v.parse::<usize>()) {
        Some(Ok(calls)) if calls > 0 => Plan { calls, warmup: default.warmup.min(calls) },
        Some(_) => fail("TOOLGATE_BENCH_CALLS must be a positive whole number".to_owned()),
        None => default,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(format!("cannot start the async runtime: {e}")));
    if let Err(e) = runtime.block_on(run(plan, full)) {
        fail(e);
    }
}

fn fail(message: String) -> ! {
    eprintln!("latency benchmark: {message}");
    std::process::exit(1);
}

async fn run(plan: Plan, full: bool) -> Result<()> {
    let fixture = PathBuf::from(FIXTURE);
    if !fixture.is_file() {
        return Err(format!(
            "the fixture server is missing at {}; build it with `{BUILD}`",
            fixture.display()
        ));
    }
    let toolgate = toolgate_binary()?;
    let config = write_config(&fixture)?;
    let mode = if full { "full run" } else { "quick run (test mode; `cargo bench` measures more)" };
    println!(
        "tools/call latency of `echo`, {} calls per path after {} warm-up, {mode}",
        plan.calls, plan.warmup
    );
    println!("gateway: {}", describe(&toolgate));
    println!("fixture: {}", describe(&fixture));

    let result = measure_all(plan, &fixture, &toolgate, &config).await;
    let _ = std::fs::remove_file(&config);
    let [direct, stdio, http] = result?;

    println!();
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "path", "p50 µs", "p99 µs", "mean µs", "added p50", "added p99"
    );
    let row = |name: &str, f: Figures, added: bool| {
        let (a50, a99) = if added {
            (format!("{:+.1}", f.p50 - direct.p50), format!("{:+.1}", f.p99 - direct.p99))
        } else {
            ("-".to_owned(), "-".to_owned())
        };
        println!("{name:<16} {:>10.1} {:>10.1} {:>10.1} {a50:>12} {a99:>12}", f.p50, f.p99, f.mean);
    };
    row("direct (stdio)", direct, false);
    row("gateway stdio", stdio, true);
    row("gateway HTTP", http, true);
    println!();
    for (name, f) in [("gateway stdio", stdio), ("gateway HTTP", http)] {
        let added = f.p50 - direct.p50;
        let verdict = if added <= 1_000.0 { "meets" } else { "misses" };
        println!("{name}: p50 added {added:.1} µs {verdict} the target of at most 1000 µs");
    }
    Ok(())
}

/// Measures the three paths, one after the other.
async fn measure_all(plan: Plan, fixture: &Path, toolgate: &Path, config: &Path) -> Result<[Figures; 3]> {
    let direct = {
        let mut cmd = Command::new(fixture);
        cmd.kill_on_drop(true);
        let (transport, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the fixture server {}: {e}", fixture.display()))?;
        let tail = follow(stderr);
        let client = connect(transport, "the fixture server", &tail).await?;
        let figures =
            measure(&client, "echo", plan).await.map_err(|e| tail.explain(format!("direct: {e}")))?;
        let _ = client.cancel().await;
        figures
    };

    let stdio = {
        let mut cmd = Command::new(toolgate);
        cmd.args(["serve", "--stdio", "--config"]).arg(config).kill_on_drop(true);
        let (transport, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", toolgate.display()))?;
        let tail = follow(stderr);
        let client = connect(transport, "the gateway over stdio", &tail).await?;
        let figures =
            through_gateway(&client, plan).await.map_err(|e| tail.explain(format!("gateway stdio: {e}")))?;
        // Closing stdin stops the gateway, which stops its upstream.
        let _ = client.cancel().await;
        figures
    };

    let http = {
        let mut child = Command::new(toolgate)
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", toolgate.display()))?;
        let tail = Tail::default();
        let url = listening_url(&mut child, &tail).await?;
        let transport = StreamableHttpClientTransport::from_uri(url.clone());
        let client = connect(transport, &format!("the gateway at {url}"), &tail).await?;
        let figures =
            through_gateway(&client, plan).await.map_err(|e| tail.explain(format!("gateway HTTP: {e}")))?;
        let _ = client.cancel().await;
        let _ = child.start_kill();
        let _ = child.wait().await;
        figures
    };
    Ok([direct, stdio, http])
}

/// The `toolgate` binary: `TOOLGATE_BIN`, or one next to this executable's profile directory.
fn toolgate_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("TOOLGATE_BIN") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("TOOLGATE_BIN is {}, which is not a file", path.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    // This executable is TARGET/PROFILE/deps/latency-HASH.
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("cannot find the target directory from {}", exe.display()))?;
    let name = format!("toolgate{}", std::env::consts::EXE_SUFFIX);
    let ours = profile_dir.join(&name);
    if ours.is_file() {
        return Ok(ours);
    }
    let other = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("release") => "debug",
        _ => "release",
    };
    let theirs = profile_dir.with_file_name(other).join(&name);
    if theirs.is_file() {
        println!(
            "warning: {} is missing, so the {other} build {} is measured; its figures are not comparable",
            ours.display(),
            theirs.display()
        );
        return Ok(theirs);
    }
    Err(format!(
        "the toolgate binary is missing (looked for {} and {}); build it with `{BUILD}`, or set TOOLGATE_BIN",
        ours.display(),
        theirs.display()
    ))
}

/// A path and how long ago it was built, so that a stale binary shows.
fn describe(path: &Path) -> String {
    let age = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .map(|d| format!(" (built {} min ago)", d.as_secs() / 60))
        .unwrap_or_default();
    format!("{}{age}", path.display())
}

/// Writes a gateway configuration with the fixture server as its only upstream, deferral on.
fn write_config(fixture: &Path) -> Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("toolgate-latency-{}.toml", std::process::id()));
    // A JSON string is a valid TOML basic string.
    let command = Value::String(fixture.display().to_string());
    let text = format!("[gateway]\nmode = \"on\"\n\n[servers.{SERVER}]\ncommand = {command}\n");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

fn follow(stderr: Option<ChildStderr>) -> Tail {
    let tail = Tail::default();
    if let Some(stderr) = stderr {
        tail.follow(stderr);
    }
    tail
}

/// Initializes an MCP session over `transport`.
async fn connect<T, E, A>(transport: T, what: &str, tail: &Tail) -> Result<Client>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(WAIT, ().serve(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(tail.explain(format!("cannot initialize a session with {what}: {e}"))),
        Err(_) => Err(tail.explain(format!("{what} did not initialize within {} s", WAIT.as_secs()))),
    }
}

/// Reads the gateway's stderr up to `toolgate: listening on URL`, then follows the rest.
async fn listening_url(child: &mut Child, tail: &Tail) -> Result<String> {
    let stderr = child.stderr.take().ok_or("the gateway's stderr is not piped")?;
    let mut lines = BufReader::new(stderr).lines();
    let found = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.trim().strip_prefix("toolgate: listening on ") {
                return Some(url.to_owned());
            }
            tail.push(line);
        }
        None
    })
    .await;
    match found {
        Ok(Some(url)) => {
            tail.follow_lines(lines);
            Ok(url)
        }
        Ok(None) => Err(tail.explain("the HTTP gateway exited before it listened")),
        Err(_) => Err(tail.explain(format!("the HTTP gateway did not listen within {} s", WAIT.as_secs()))),
    }
}

/// Loads `fixture__echo` with `tool_search` (retrying while the upstream starts), then measures.
async fn through_gateway(client: &Client, plan: Plan) -> Result<Figures> {
    let name = format!("{SERVER}__echo");
    let query = json!({ "query": format!("select:{name}") });
    let deadline = Instant::now() + WAIT;
    loop {
        let result = call(client, "tool_search", &query).await?;
        let matches = result.structured_content.as_ref().map(|s| s["matches"].clone()).unwrap_or_default();
        if matches.as_array().is_some_and(|m| m.iter().any(|n| n == name.as_str())) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "`tool_search` did not load {name} within {} s; its last answer: {}",
                WAIT.as_secs(),
                result.structured_content.unwrap_or_default()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    measure(client, &name, plan).await
}

/// Calls `tool` with `args` (a JSON object).
async fn call(client: &Client, tool: &str, args: &Value) -> Result<CallToolResult> {
    let Value::Object(args) = args.clone() else { unreachable!("arguments are objects") };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args as JsonObject);
    client.call_tool(params).await.map_err(|e| format!("tools/call {tool} failed: {e}"))
}

/// Warms up, then times `plan.calls` sequential calls of the echo tool `tool`, checking each
/// answer.
async fn measure(client: &Client, tool: &str, plan: Plan) -> Result<Figures> {
    let mut samples = Vec::with_capacity(plan.calls);
    for i in 0..plan.warmup + plan.calls {
        let text = format!("ping {i}");
        let mut args = JsonObject::new();
        args.insert("text".into(), Value::String(text.clone()));
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let start = Instant::now();
        let result = client.call_tool(params).await.map_err(|e| format!("call {i} of {tool} failed: {e}"))?;
        let elapsed = start.elapsed();
        let answer = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.as_str());
        if result.is_error == Some(true) || answer != Some(text.as_str()) {
            return Err(format!(
                "call {i} of {tool} answered {answer:?} (is_error: {:?}) instead of {text:?}",
                result.is_error
            ));
        }
        if i >= plan.warmup {
            samples.push(elapsed);
        }
    }
    Ok(figures(&mut samples))
}

/// p50 and p99 (nearest rank) and mean of `samples`, in microseconds.
fn figures(samples: &mut [Duration]) -> Figures {
    samples.sort_unstable();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let rank = |p: f64| {
        let n = samples.len();
        let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        micros(samples[i])
    };
    let mean = samples.iter().map(|d| micros(*d)).sum::<f64>() / samples.len() as f64;
    Figures { p50: rank(0.50), p99: rank(0.99), mean }
}
