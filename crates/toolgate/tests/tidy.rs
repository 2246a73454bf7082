//! Keeps the tree honest: ARCHITECTURE.md names every module of the library, every source file
//! opens with a `//!` doc comment, and no file grows past 800 lines.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn architecture_names_every_library_module() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let src = root().join("crates/toolgate/src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        // `lib.rs` is the crate root; a folder beside `x.rs` holds parts of module `x`.
        if name == "lib" || (path.is_dir() && path.with_extension("rs").exists()) {
            continue;
        }
        let module = path.file_name().unwrap().to_str().unwrap();
        let rel = if path.is_dir() { format!("src/{module}/") } else { format!("src/{module}") };
        if !arch.contains(&format!("**{name}**")) || !arch.contains(&rel) {
            missing.push(format!("{name} ({rel})"));
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md does not describe: {}", missing.join(", "));
}

#[test]
fn every_source_file_has_a_module_doc_and_stays_small() {
    let mut files = Vec::new();
    for dir in [
        "crates/toolgate/src",
        "crates/toolgate/tests",
        "crates/toolgate/benches",
        "crates/toolgate/examples",
        "crates/toolgate-mcp/src",
        "crates/toolgate-cli/src",
        "crates/toolgate-cli/tests",
    ] {
        let d = root().join(dir);
        if d.exists() {
            rust_files(&d, &mut files);
        }
    }
    assert!(files.len() > 10);
    let mut problems = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        if !first.starts_with("//!") {
            problems.push(format!("{}: no //! doc comment on top", f.display()));
        }
        let lines = text.lines().count();
        if lines > 800 {
            problems.push(format!("{}: {lines} lines (split it by concept)", f.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
