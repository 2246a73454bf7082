//! `examples/agent.rs` runs a whole task against `e2e/scripted_provider.py` for Anthropic
//! Messages, OpenAI Responses and Chat Completions. The endpoint checks what it received each
//! turn (deferral flags, the search's answer in the history, tools unchanged or appended) and
//! answers 400 when something is wrong; the loop loads a tool through search, calls it, and a
//! call of a tool it never loaded is refused by the gate.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The example's binary, which `cargo test` builds beside the test binaries.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("examples").join(format!("agent{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built: run the tests with cargo test, which builds examples",
        path.display()
    );
    path
}

struct Endpoint {
    child: Child,
    url: String,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn endpoint() -> Endpoint {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join("e2e/.venv/bin/python");
    let python = if python.exists() { python } else { PathBuf::from("python3") };
    let mut child = Command::new(python)
        .arg(repo.join("e2e/scripted_provider.py"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs the scripted endpoint");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url =
        line.trim().strip_prefix("listening on ").expect("the endpoint says where it listens").to_owned();
    Endpoint { child, url }
}

fn run(api: &str, model: &str) -> String {
    let server = endpoint();
    let out = Command::new(example())
        .args(["--endpoint", &server.url, "--api", api, "--model", model])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{api}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn assert_whole_task(stdout: &str, mode: &str) {
    assert!(stdout.contains(&format!("mode {mode}")), "{stdout}");
    assert!(stdout.contains("turn 1: tool_search"), "{stdout}");
    assert!(stdout.contains("turn 2: weather__forecast allowed: Sunny, 21 °C in Paris"), "{stdout}");
    assert!(stdout.contains("turn 3: git__git_log refused: tool `git__git_log` is not loaded"), "{stdout}");
    assert!(stdout.contains("turn 4: answer: It will be sunny in Paris."), "{stdout}");
}

#[test]
fn anthropic_messages_with_client_side_search() {
    assert_whole_task(&run("anthropic", "claude-sonnet-4-5"), "anthropic");
}

#[test]
fn openai_responses_with_client_executed_tool_search() {
    assert_whole_task(&run("openai-responses", "gpt-5.4"), "openai-responses");
}

#[test]
fn chat_completions_with_client_side_injection() {
    assert_whole_task(&run("chat", "gpt-5.4"), "chat");
}

#[test]
fn the_endpoint_refuses_a_request_that_breaks_its_rules() {
    // A model without tool search on Anthropic's API gets injection: the endpoint, which
    // expects deferred tools there, says so, and the loop fails with its words.
    let server = endpoint();
    let out = Command::new(example())
        .args(["--endpoint", &server.url, "--api", "anthropic", "--model", "claude-3-5-sonnet"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("400") && stderr.contains("is not sent deferred"), "{stderr}");
}
