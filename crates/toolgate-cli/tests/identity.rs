//! Identity against a hostile upstream, a co-tenant and a stranger, on a real `toolgate serve
//! --http` with a real OpenID provider (`oidc-provider`), real MCP servers behind the official
//! SDK's bearer middleware, and an attacker's authorization server that writes down everything
//! it is sent. `e2e/identity.mjs` stages it all and reports what each party received; this
//! test judges it, each promise beside its control:
//!
//! - **Only named parties**: an upstream whose metadata names the attacker's authorization
//!   server fails at start, naming itself and both URLs, for token exchange, client credentials
//!   and a login with a secret; the attacker receives nothing at all, and a refresh after an
//!   honest upstream starts lying still goes where the login got its tokens. The honest servers
//!   beside them work.
//! - **Per-user on every request**: calls, prompts, resources and completions reach the
//!   per-user server as alice and as bob, never as each other or as the gateway (a resource read
//!   is not answered from a cache across callers); a static token's requests are refused before
//!   anything is sent; only listing goes as the gateway.
//! - **No work for strangers**: 120 spellings of the issuer cost the provider nothing; ten
//!   made-up key ids beside a real token signed with a key rotated a moment before cost one key
//!   read, and the real token is not held up; two floods of 1,000 unsigned tokens a second cost
//!   at most one key read a second and leave the gateway's memory where it was; a real token
//!   works after them.

mod support;

use serde_json::Value;
use support::{e2e, node_report};

fn as_u64(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

#[test]
fn named_parties_only_per_user_everywhere_and_no_work_for_strangers() {
    assert!(
        e2e().join("node_modules/oidc-provider").exists(),
        "oidc-provider is not installed: run e2e/setup.sh (the README's test command does)"
    );
    let r = node_report(
        "identity.mjs",
        &["--toolgate", env!("CARGO_BIN_EXE_toolgate"), "--flood-seconds", "3"],
        300,
    );
    let (rogue, liar) = (r["rogue"].as_str().unwrap(), r["liar"].as_str().unwrap());

    // Only named parties: the lying upstream's servers fail at start, naming both URLs…
    let status = r["status"].as_array().unwrap();
    let server =
        |name: &str| status.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{name}: {r:#}"));
    for name in ["each_liar", "cc_liar"] {
        let s = server(name);
        let error = s["error"].as_str().unwrap_or_default();
        assert_eq!(s["state"], "failed", "{name}: {s}");
        assert!(error.contains(&format!("server `{name}`")), "{error}");
        assert!(
            error.contains(&liar.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")),
            "{error}"
        );
        assert!(error.contains(rogue) && error.contains(r["issuer"].as_str().unwrap()), "{error}");
    }
    let login = &r["login"];
    assert_eq!(login["person"]["code"], 0, "the honest login works: {login:#}");
    assert_ne!(login["liar"]["code"], 0, "{login:#}");
    assert_eq!(login["liar"]["printed_url"], false, "nobody was sent to sign in there");
    assert!(login["liar"]["stderr"].as_str().unwrap().contains(rogue), "{login:#}");
    // …the attacker got nothing at all, at start, from the logins, or from a refresh after the
    // honest upstream started naming it too, which still went where the login got its tokens.
    for at in [&login["rogue_saw"], &r["rogue_saw_at_start"], &r["refresh"]["rogue_saw"]] {
        assert_eq!(at, &Value::Array(vec![]), "the attacker's server received requests: {r:#}");
    }
    assert_eq!(r["refresh"]["sub"], "carol", "{:#}", r["refresh"]);
    for name in ["each", "cc", "person"] {
        assert_eq!(server(name)["state"], "ready", "the honest servers start: {status:#?}");
    }

    // Per-user: every kind of request reaches the per-user server as the caller…
    let per_user = &r["per_user"];
    for who in ["alice", "bob"] {
        let u = &per_user[who];
        assert_eq!(u["opened"], 200, "{u:#}");
        for kind in ["call", "prompt", "resource"] {
            assert_eq!(u[kind]["sub"], who, "{who}'s {kind}: {u:#}");
        }
        assert!(u["completion"]["shown"]["completion"]["values"].is_array(), "{u:#}");
        let reached: Vec<(String, String)> = u["reached_each"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["method"].as_str().unwrap().to_owned(), l["sub"].as_str().unwrap_or("").to_owned()))
            .collect();
        for method in ["tools/call", "prompts/get", "resources/read", "completion/complete"] {
            let subs: Vec<&str> =
                reached.iter().filter(|(m, _)| m == method).map(|(_, s)| s.as_str()).collect();
            assert_eq!(subs, [who], "{method} reached the server as {subs:?}: {reached:?}");
        }
        // …and only listing as the gateway.
        for (method, sub) in &reached {
            if sub != who {
                assert!(method.ends_with("/list"), "{method} went as {sub}: {reached:?}");
            }
        }
    }
    // A caller without an OAuth identity is refused before anything is sent.
    let ci = &per_user["ci"];
    for kind in ["prompt", "resource", "completion"] {
        let message = ci[kind]["shown"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("carries no caller's token; it was not sent"), "{kind}: {ci:#}");
    }
    assert!(ci["call"]["shown"]["content"][0]["text"].as_str().unwrap().contains("acts for each user"));
    let reached = ci["reached_each"].as_array().unwrap();
    assert!(
        reached.iter().all(|l| l["method"].as_str().unwrap().ends_with("/list")),
        "only listing reached the server for the static caller: {reached:#?}"
    );

    // No work for strangers: spellings of the issuer cost nothing.
    let spellings = &r["spellings"];
    assert_eq!(spellings["statuses"], serde_json::json!([401]), "{spellings:#}");
    assert_eq!(spellings["provider_got"], serde_json::json!({}), "{spellings:#}");
    // Made-up key ids: one key read, and the real token's rotated key is found at once.
    let kids = &r["made_up_kids"];
    assert_eq!(kids["real"], 200, "{kids:#}");
    assert_eq!(kids["fakes"], serde_json::json!([401]), "{kids:#}");
    assert!(as_u64(&kids["provider_got"]["/jwks"]) <= 2, "{kids:#}");
    assert!(as_u64(&kids["real_ms"]) < 2_500, "the real token waited: {kids:#}");
    // Floods: at most about one key read a second, no discovery, memory back where it was.
    let floods = r["flood"].as_array().unwrap();
    for flood in floods {
        assert_eq!(flood["statuses"]["401"], flood["tokens"], "{flood:#}");
        let seconds = flood["seconds"].as_f64().unwrap().ceil() as u64;
        assert!(as_u64(&flood["provider_got"]["/jwks"]) <= seconds + 2, "{flood:#}");
        let others: Vec<&String> =
            flood["provider_got"].as_object().unwrap().keys().filter(|k| *k != "/jwks").collect();
        assert!(others.is_empty(), "the flood reached {others:?} at the provider: {flood:#}");
    }
    let second = &floods[1];
    let grew = as_u64(&second["rss_kb_after"]).saturating_sub(as_u64(&second["rss_kb_before"]));
    assert!(grew < 12 * 1024, "a second flood grew the gateway by {grew} KB: {floods:#?}");
    assert_eq!(r["after_flood"], 200, "a real token works after the floods");
    assert_eq!(r["log_leaks"], 0, "no secret in the gateway's log");
}
