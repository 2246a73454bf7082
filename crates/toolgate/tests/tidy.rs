//! Keeps the tree honest: ARCHITECTURE.md names every module of the library, every source file
//! opens with a `//!` doc comment, cites no document outside the repository and stays under
//! 1,200 lines, no two modules of a crate import each other around a circle, and the gateway
//! reaches into the library only where it did.

use std::collections::{BTreeMap, BTreeSet};
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

/// The library crates, bottom up: the catalog, retrieval, the facade.
const LIBRARY_CRATES: &[&str] = &["crates/toolgate-catalog", "crates/toolgate-search", "crates/toolgate"];

#[test]
fn architecture_names_every_library_module() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    for krate in LIBRARY_CRATES {
        let src = root().join(krate).join("src");
        let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            // `lib.rs` is the crate root; a folder beside `x.rs` holds parts of module `x`.
            if name == "lib" || name == "tests" || (path.is_dir() && path.with_extension("rs").exists()) {
                continue;
            }
            let module = path.file_name().unwrap().to_str().unwrap();
            let rel = if path.is_dir() { format!("src/{module}/") } else { format!("src/{module}") };
            // A private module of a crate may be described as a part of another entry; every
            // other module has an entry of its own.
            let part = lib.lines().any(|l| l.trim() == format!("mod {name};"));
            if !arch.contains(&rel) || (!part && !arch.contains(&format!("**{name}**"))) {
                missing.push(format!("{name} ({krate}/{rel})"));
            }
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md does not describe: {}", missing.join(", "));
}

#[test]
fn every_source_file_has_a_module_doc_and_stays_small() {
    let mut files = Vec::new();
    for dir in [
        "crates/toolgate-catalog/src",
        "crates/toolgate-search/src",
        "crates/toolgate-search/tests",
        "crates/toolgate-search/benches",
        "crates/toolgate-search/examples",
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
        // The project stands alone: a comment may cite its own docs, never a document a user
        // does not have (the patterns are split so that this file does not match itself).
        for outside in [["seed", " 00"], ["DESIGN", ".md"], ["../", "shared/"]] {
            if text.contains(&outside.concat()) {
                problems.push(format!(
                    "{}: cites {:?}, which is not in the repository",
                    f.display(),
                    outside.concat()
                ));
            }
        }
        let lines = text.lines().count();
        // A backstop against a file that holds everything, not the rule of where code goes: a
        // file holds one concept, whatever its length, and is split where its concepts part.
        if lines > 1200 {
            problems.push(format!("{}: {lines} lines (does it hold more than one concept?)", f.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A file's code without its comments, the insides of its strings, and its tests
/// (`#[cfg(test)]` and what follows it).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut in_string, mut prev) = (false, ' ');
    while let Some(c) = chars.next() {
        if in_string {
            if c == '\\' {
                chars.next();
            } else if c == '"' {
                in_string = false;
                out.push(c);
            }
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            while chars.next_if(|&n| n != '\n').is_some() {}
            continue;
        }
        // A `"` between quotes is a character, not the start of a string.
        in_string = c == '"' && prev != '\'';
        out.push(c);
        prev = c;
    }
    out
}

/// The lower-case names that follow `prefix` in `code`: `prefix` `name::…`, and each name of a
/// `prefix` `{a, b::c}` group.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        if code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').map(|item| word(item.trim())).filter(|w| !w.is_empty()));
        } else {
            let name = word(rest);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// The crate in `src` as its top-level modules (a file `x.rs` and its folder `x/` are one
/// module) and, for each, the other modules its code names through `crate::`. Tests are left
/// out; `lib.rs`, `main.rs` and `bin/` are the roots, not modules.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_str().unwrap();
        let module = first.trim_end_matches(".rs").to_owned();
        let is_test = rel.file_name().is_some_and(|n| n == "tests.rs")
            || rel.components().any(|c| c.as_os_str() == "tests");
        if is_test || ["lib", "main", "bin"].contains(&module.as_str()) {
            continue;
        }
        let named = names_after(&code_of(&file), "crate::");
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(named.into_iter().filter(|n| *n != module));
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for named in graph.values_mut() {
        named.retain(|n| modules.contains(n));
    }
    graph
}

/// The import cycles of a module graph: each set of modules that all reach one another.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph[from].iter().collect();
        while let Some(m) = todo.pop() {
            if seen.insert(m.clone()) {
                todo.extend(graph[m].iter());
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (m, from_m) in &reaches {
        if !from_m.contains(*m) || found.iter().any(|c| c.contains(*m)) {
            continue;
        }
        found.push(from_m.iter().filter(|o| reaches[o].contains(*m)).cloned().collect());
    }
    found
}

/// A cycle with the arrows that close it, for a failure message.
fn show_cycle(graph: &BTreeMap<String, BTreeSet<String>>, cycle: &BTreeSet<String>) -> String {
    let arrows: Vec<String> = cycle
        .iter()
        .map(|m| {
            let to: Vec<&str> = graph[m].iter().filter(|o| cycle.contains(*o)).map(String::as_str).collect();
            format!("  {m} -> {}", to.join(", "))
        })
        .collect();
    arrows.join("\n")
}

#[test]
fn no_crate_has_an_import_cycle() {
    for dir in [
        "crates/toolgate-catalog/src",
        "crates/toolgate-search/src",
        "crates/toolgate/src",
        "crates/toolgate-mcp/src",
        "crates/toolgate-cli/src",
    ] {
        let graph = module_graph(&root().join(dir));
        assert!(graph.len() >= 5, "{dir}: {graph:?}");
        let found = cycles(&graph);
        let shown: Vec<String> = found.iter().map(|c| show_cycle(&graph, c)).collect();
        assert!(found.is_empty(), "{dir} has import cycles between its modules:\n{}", shown.join("\n\n"));
    }
}

/// The library's modules the gateway may name (`toolgate::name::…`; the crate root's own names,
/// `toolgate::Toolbox`, always): the facade (`toolbox`, which re-exports the types its
/// signatures use: `Decision`, `PolicyError`, `DeferConfig`), the file formats (`config`,
/// `files`, `catalog`, and `naming`, how a qualified name is written), retrieval's seam
/// (`search`, for the index settings and `explain`), and two utilities (`secret`, `tokens`).
const GATEWAY_LAYER: &[&str] =
    &["catalog", "config", "files", "naming", "search", "secret", "tokens", "toolbox"];

/// The library's modules the CLI names. It renders requests (`render`), so it reaches further
/// than the gateway (it measures rankings with `toolgate-search` itself); a module may leave
/// the list and none may join it.
const CLI_MODULES_USED: &[&str] = &["catalog", "render", "search", "tokens", "toolbox"];

/// The library modules the `.rs` files under `dir` name.
fn library_modules_named(dir: &str) -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&root().join(dir), &mut files);
    files.iter().flat_map(|file| names_after(&code_of(file), "toolgate::")).collect()
}

#[test]
fn the_gateway_names_only_the_facade_and_the_file_formats_of_the_library() {
    let used = library_modules_named("crates/toolgate-mcp/src");
    let outside: Vec<&String> = used.iter().filter(|m| !GATEWAY_LAYER.contains(&m.as_str())).collect();
    assert!(used.contains("toolbox"), "{used:?}");
    assert!(
        outside.is_empty(),
        "the gateway names library modules outside its layer: {outside:?} (ask the facade, `toolgate::toolbox`)"
    );
}

#[test]
fn the_cli_reaches_into_the_library_only_where_it_did() {
    let used = library_modules_named("crates/toolgate-cli/src");
    let allowed: BTreeSet<String> = CLI_MODULES_USED.iter().map(|m| m.to_string()).collect();
    assert_eq!(
        used, allowed,
        "the CLI's library modules changed (a new one is not allowed; drop a gone one from the list)"
    );
}

/// Each crate and the toolgate crates it may depend on: each names only those below it, the
/// gateway only the facade (which re-exports the catalog and retrieval's seam), and the binary
/// the ranking's crate as well, since `toolgate eval` measures it.
const CRATE_LAYERS: &[(&str, &[&str])] = &[
    ("toolgate-catalog", &[]),
    ("toolgate-search", &["toolgate-catalog"]),
    ("toolgate", &["toolgate-catalog", "toolgate-search"]),
    ("toolgate-mcp", &["toolgate"]),
    ("toolgate-cli", &["toolgate", "toolgate-mcp", "toolgate-search"]),
];

/// The toolgate crates a crate's `[dependencies]` table names (not its dev-dependencies).
fn toolgate_dependencies(krate: &str) -> BTreeSet<String> {
    let manifest = std::fs::read_to_string(root().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let mut table = "";
    let mut found = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line;
        } else if table == "[dependencies]" && line.starts_with("toolgate") {
            let name = line.split(['=', '.', ' ']).next().unwrap();
            found.insert(name.to_owned());
        }
    }
    found
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members = manifest.split("members = [").nth(1).unwrap().split(']').next().unwrap();
    for (krate, allowed) in CRATE_LAYERS {
        assert!(members.contains(&format!("\"crates/{krate}\"")), "{krate} is not a workspace member");
        let found = toolgate_dependencies(krate);
        let allowed: BTreeSet<String> = allowed.iter().map(|c| c.to_string()).collect();
        assert_eq!(found, allowed, "{krate} depends on other toolgate crates than its layer allows");
    }
    assert_eq!(
        members.matches("\"crates/").count(),
        CRATE_LAYERS.len(),
        "a crate is missing from CRATE_LAYERS"
    );
}

/// The `.rs` files under `dir` whose code names `crate_path` (`toolgate_search`), relative.
fn files_naming(dir: &str, crate_path: &str) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root().join(dir), &mut files);
    files
        .iter()
        .filter(|f| code_of(f).contains(crate_path))
        .map(|f| f.strip_prefix(root().join(dir)).unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_facade_reaches_the_ranking_through_its_seam_alone() {
    assert_eq!(files_naming("crates/toolgate/src", "toolgate_search"), ["search.rs"]);
    assert!(files_naming("crates/toolgate-mcp/src", "toolgate_search").is_empty());
    assert!(files_naming("crates/toolgate-mcp/src", "toolgate_catalog").is_empty());
}

#[test]
fn every_file_architecture_names_exists() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("fuzz"), &mut files);
    let paths: Vec<String> = files.iter().map(|f| f.to_string_lossy().replace('\\', "/")).collect();
    let mut named = 0;
    let mut missing = Vec::new();
    // A file is named in backquotes, by its path from the repository, its crate or a folder
    // of its crate (`bm25f/cache.rs` in the entry of `search`).
    for quoted in arch.split('`').skip(1).step_by(2) {
        if !quoted.ends_with(".rs") || quoted.contains(char::is_whitespace) {
            continue;
        }
        named += 1;
        if !paths.iter().any(|p| p.ends_with(&format!("/{quoted}"))) {
            missing.push(quoted.to_owned());
        }
    }
    assert!(named > 50, "{named} file names read");
    assert!(missing.is_empty(), "ARCHITECTURE.md names files that do not exist: {missing:?}");
}

#[test]
fn only_the_access_guard_reads_who_is_asking_from_a_request() {
    // The request headers that say who is asking: read once, by the access guard
    // (`downstream/http.rs`), into `access::Caller`, which every later stage reads instead.
    let reads = [
        "get(SESSION_HEADER)",
        "get(PROFILE_HEADER)",
        "contains_key(SESSION_HEADER)",
        "contains_key(PROFILE_HEADER)",
        "get(\"authorization\")",
        "get(header::AUTHORIZATION)",
        "get(\"mcp-session-id\")",
        "get(\"x-toolgate-profile\")",
    ];
    // A response's `Mcp-Session-Id` (the one rmcp gave a new session) is not a request's.
    let readers = gateway_files_containing(&reads, "response.headers().get(SESSION_HEADER)");
    assert_eq!(readers, BTreeSet::from(["downstream/http.rs".to_owned()]));
}

/// The files of the gateway (from its `src`, tests left out) whose code contains any of
/// `patterns`, once every `except` is taken out of it.
fn gateway_files_containing(patterns: &[&str], except: &str) -> BTreeSet<String> {
    let dir = root().join("crates/toolgate-mcp/src");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut found = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        let text = if except.is_empty() { text.to_owned() } else { text.replace(except, "") };
        if patterns.iter().any(|p| text.contains(p)) {
            found.insert(file.strip_prefix(&dir).unwrap().to_string_lossy().into_owned());
        }
    }
    found
}

#[test]
fn a_session_has_one_holder_whose_fields_are_private() {
    // A downstream session's state changes only through the methods of the types that hold it:
    // no field of theirs is visible outside their module.
    let holders = [
        ("crates/toolgate-mcp/src/session.rs", "pub(crate) struct SessionState {"),
        ("crates/toolgate-mcp/src/session/listener.rs", "pub(crate) struct Listener {"),
        ("crates/toolgate-mcp/src/session/reach.rs", "pub(crate) struct Stored {"),
    ];
    for (file, opening) in holders {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let start = text.find(opening).unwrap_or_else(|| panic!("{file}: no `{opening}`"));
        let body = &text[start + opening.len()..];
        let body = &body[..body.find("\n}").expect("the struct ends")];
        let public: Vec<&str> = body.lines().map(str::trim).filter(|l| l.starts_with("pub")).collect();
        assert!(public.is_empty(), "{file}: {opening} has fields others may write: {public:?}");
    }
    // And nothing outside the session module names the old flag of a request with no session.
    let mut files = Vec::new();
    rust_files(&root().join("crates/toolgate-mcp/src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("state.granted") && !text.contains(".granted ="), "{}", file.display());
    }
}

#[test]
fn only_the_refusal_type_writes_what_is_said_of_a_refused_call() {
    // A refused call's audit record, metrics entry and the policy's refusal event are written
    // by `downstream/refusal.rs` alone, wherever the call was refused.
    let writes = ["action = \"refused\"", "metrics.refused(", ".refusal(&"];
    let writers = gateway_files_containing(&writes, "");
    assert_eq!(writers, BTreeSet::from(["downstream/refusal.rs".to_owned()]));
}

#[test]
fn every_type_and_function_architecture_names_exists() {
    // Every `Type`, `Type::function` and `Type::Variant` ARCHITECTURE.md names in backquotes
    // is defined in the code (in the crates or the fuzz targets), so that a rename or a removal
    // that leaves the document behind fails here.
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let code: String =
        files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect::<Vec<_>>().join("\n");
    let defines_type = |name: &str| {
        ["struct", "enum", "trait", "type", "mod"].iter().any(|kind| {
            code.contains(&format!("{kind} {name} "))
                || code.contains(&format!("{kind} {name}<"))
                || code.contains(&format!("{kind} {name}("))
                || code.contains(&format!("{kind} {name};"))
                || code.contains(&format!("{kind} {name}{{"))
                || code.contains(&format!("{kind} {name}:"))
        })
    };
    // HTTP header names, in backquotes as headers are.
    let headers = ["Host", "Origin", "Authorization"];
    let is_type = |word: &str| {
        word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && word.chars().all(|c| c.is_ascii_alphanumeric())
            && word.chars().any(|c| c.is_ascii_lowercase())
    };
    let mut checked = 0;
    let mut missing = Vec::new();
    for quoted in arch.split('`').skip(1).step_by(2) {
        let parts: Vec<&str> = quoted.split("::").collect();
        match parts.as_slice() {
            [word] if is_type(word) && !headers.contains(word) => {
                checked += 1;
                if !defines_type(word) {
                    missing.push(quoted.to_owned());
                }
            }
            [owner, member]
                if is_type(owner) || owner.chars().all(|c| c.is_ascii_lowercase() || c == '_') =>
            {
                let member = member.trim_end_matches("()");
                let ok_owner = !is_type(owner) || defines_type(owner);
                let ok_member = if member.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                    code.contains(&format!("    {member}")) || defines_type(member)
                } else {
                    code.contains(&format!("fn {member}(")) || code.contains(&format!("fn {member}<"))
                };
                checked += 1;
                if !(ok_owner && ok_member) {
                    missing.push(quoted.to_owned());
                }
            }
            _ => {}
        }
    }
    assert!(checked > 40, "{checked} names read");
    assert!(missing.is_empty(), "ARCHITECTURE.md names what the code does not define: {missing:?}");
}
