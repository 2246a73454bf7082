//! OAuth 2.1 on both sides of a real `toolgate serve --http`, against a real OpenID provider
//! (`oidc-provider` from npm, `e2e/oidc_provider.mjs`) and a real MCP server protected by the
//! official TypeScript SDK's bearer-token middleware (`e2e/protected_upstream.mjs`), which logs
//! whose token made each call. `e2e/oauth.mjs` stages everything and reports what it saw:
//!
//! - inbound: a client without a token gets 401 and the protected-resource metadata pointer,
//!   which names the provider; the TypeScript SDK's OAuth client goes through the whole flow
//!   (metadata, dynamic registration, PKCE, login, consent, a token for the gateway's URL) and
//!   uses the gateway; two people in two groups see their profiles' tools only; tokens for
//!   another audience, expired, signed by an unknown key or issued by another provider are
//!   401 with the pointer, and valid ones without the scope or a mapped group 403; a key
//!   rotation at the provider is picked up at once; a session survives its owner's token
//!   refresh and refuses anyone else's;
//! - outbound: client credentials, two `toolgate login`s driven headlessly (a pre-registered
//!   client, and one registered on the fly), tokens sealed at rest and refreshed (the access
//!   tokens live 40 s, so every call refreshes and reseals), and per-user token exchange: each
//!   caller's call reaches the upstream as that caller, and a caller without an OAuth identity
//!   is refused without anything being sent.

mod support;

use serde_json::Value;
use support::{e2e, node_report};

fn text_of(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

fn who(result: &Value) -> Value {
    serde_json::from_str(&text_of(result)).unwrap_or(Value::Null)
}

#[test]
fn oauth_in_and_out_with_a_real_provider_and_a_protected_upstream() {
    assert!(
        e2e().join("node_modules/oidc-provider").exists(),
        "oidc-provider is not installed: run e2e/setup.sh (the README's test command does)"
    );
    let r = node_report("oauth.mjs", &["--toolgate", env!("CARGO_BIN_EXE_toolgate")], 300);
    let gateway = r["gateway"].as_str().unwrap();
    let issuer = r["issuer"].as_str().unwrap();

    // toolgate login, headless: the URL was printed, the browser's redirect reached toolgate,
    // and the tokens are sealed (no token text in the file) with a key kept elsewhere.
    for name in ["person", "dyn"] {
        let login = &r["login"][name];
        assert_eq!(login["code"], 0, "toolgate login {name}: {login:#}");
        assert_eq!(login["drove"]["status"], 200, "{login:#}");
        assert!(
            login["stdout"].as_str().unwrap().starts_with(&format!("signed in to `{name}` at {issuer}")),
            "{login:#}"
        );
        assert_eq!(
            (&login["sealed"], &login["plaintext_visible"], &login["key_file"]),
            (&Value::Bool(true), &Value::Bool(false), &Value::Bool(true))
        );
    }
    let status = r["status"].as_array().unwrap();
    assert!(status.iter().all(|s| s["state"] == "ready"), "every OAuth upstream started: {status:#?}");

    // No token: 401 pointing to the metadata, which names the provider and this resource.
    let bare = &r["unauthenticated"];
    assert_eq!(bare["status"], 401);
    let metadata_url =
        format!("{}/.well-known/oauth-protected-resource/mcp", gateway.trim_end_matches("/mcp"));
    assert_eq!(bare["metadata_url"], metadata_url.as_str(), "{bare:#}");
    assert_eq!(r["metadata"]["body"]["resource"], gateway);
    assert_eq!(r["metadata"]["body"]["authorization_servers"][0], issuer);

    // The TypeScript SDK's OAuth client, as alice (group readers) and bob (group writers).
    let sdk = &r["sdk"];
    for (case, user) in [
        ("alice_cc", "alice"),
        ("alice_each", "alice"),
        ("bob_person", "bob"),
        ("bob_dyn", "bob"),
        ("bob_each", "bob"),
    ] {
        assert_eq!(sdk[case]["code"], 0, "{case}: {:#}", sdk[case]);
        assert_eq!(sdk[case]["token_aud"], gateway, "{case}: its token is for the gateway");
        assert_eq!(sdk[case]["sub"], user);
    }
    let tools = |case: &str| -> Vec<String> {
        sdk[case]["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(tools("alice_cc"), ["cc__whoami", "each__whoami"], "alice sees the reader profile");
    let bob = tools("bob_person");
    assert!(bob.contains(&"person__whoami".to_owned()) && bob.contains(&"cc__echo".to_owned()), "{bob:?}");
    assert!(!bob.contains(&"cc__whoami".to_owned()), "bob does not see the reader's tool: {bob:?}");
    // Who the upstream saw: the gateway itself (client credentials), the person who ran
    // `toolgate login`, and, through token exchange, each caller.
    assert_eq!(who(&sdk["alice_cc"]["call"])["sub"], "toolgate-cc");
    assert_eq!(who(&sdk["bob_person"]["call"])["sub"], "carol");
    assert_eq!(who(&sdk["bob_dyn"]["call"])["sub"], "dave");
    assert_eq!(who(&sdk["alice_each"]["call"])["sub"], "alice");
    assert_eq!(who(&sdk["bob_each"]["call"])["sub"], "bob");
    for case in ["alice_cc", "alice_each", "bob_person", "bob_dyn", "bob_each"] {
        assert_eq!(
            who(&sdk[case]["call"])["aud"],
            r["upstream"],
            "{case}: the upstream's token is for the upstream"
        );
    }
    assert_ne!(who(&sdk["alice_cc"]["call"])["aud"], gateway, "a client's token never passes through");

    // Refused tokens, beside a forged one that is valid (so the refusals are the claims').
    let tokens = &r["tokens"];
    assert_eq!(tokens["control_signed_with_the_real_key"]["status"], 200, "{tokens:#}");
    for (name, says) in [
        ("other_audience", "not for this gateway"),
        ("expired", "expired"),
        ("unknown_key", "does not publish"),
        ("other_issuer", "are not accepted here"),
    ] {
        let t = &tokens[name];
        assert_eq!(t["status"], 401, "{name}: {t:#}");
        let challenge = t["challenge"].as_str().unwrap_or_default();
        assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{name}: {challenge}");
        assert!(challenge.contains("error=\"invalid_token\""), "{name}: {challenge}");
        assert!(t["message"].as_str().unwrap_or_default().contains(says), "{name}: {t:#}");
    }
    for (name, says) in [("no_scope", "lacks scope mcp"), ("unmapped", "maps to a profile")] {
        let t = &tokens[name];
        assert_eq!(t["status"], 403, "{name}: {t:#}");
        assert!(t["challenge"].as_str().unwrap_or_default().contains("insufficient_scope"), "{name}: {t:#}");
        assert!(t["message"].as_str().unwrap_or_default().contains(says), "{name}: {t:#}");
    }

    // A rotation: the new key's token works at once.
    let rotation = &r["rotation"];
    assert_ne!(rotation["kid_before"], rotation["kid_after"]);
    assert_eq!(rotation["kid_after"], rotation["rotated_to"]);
    assert_eq!(
        (&rotation["before"], &rotation["after"]),
        (&Value::from(200), &Value::from(200)),
        "{rotation:#}"
    );

    // A session is the identity's: a refreshed token keeps it; bob and a static token cannot.
    let session = &r["session"];
    assert_eq!(session["opened"], 200, "{session:#}");
    assert_eq!(session["tokens_differ"], true);
    assert_eq!(session["refreshed"], 200, "{session:#}");
    assert_eq!(session["refreshed_tools"], serde_json::json!(["cc__whoami", "each__whoami"]));
    assert_eq!(session["bob"], 403, "{session:#}");
    assert_eq!(session["static_token"], 403, "{session:#}");

    // Token exchange refuses a caller without an OAuth identity and sends nothing for it;
    // the same caller's call to a client-credentials server goes through.
    let static_caller = &r["static_caller"];
    assert!(text_of(&static_caller["each"]).contains("acts for each user"), "{static_caller:#}");
    assert_eq!(static_caller["each"]["isError"], true);
    assert_eq!(who(&static_caller["cc"])["sub"], "toolgate-cc");
    let since = static_caller["upstream_calls_since"].as_array().unwrap();
    assert_eq!(since.len(), 1, "only the client-credentials call reached the upstream: {since:#?}");

    // The login's token was refreshed and sealed again, and the call went through.
    assert_eq!(who(&r["refresh"]["call"])["sub"], "carol", "{:#}", r["refresh"]);
    assert_eq!(r["refresh"]["resealed"], true);
    assert_eq!(r["log_leaks"], 0, "no token or secret in the gateway's log");
}
