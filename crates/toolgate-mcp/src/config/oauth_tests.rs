//! Reading `[oauth]` and `[servers.NAME.oauth]`: what each key becomes, and the errors that
//! name the key at fault.

use std::path::Path;

use super::*;

fn toml(text: &str) -> Result<Config, ConfigError> {
    let env = |_: &str| None;
    Config::read_toml(&Source::with_env("toolgate.toml", Path::new("/etc/toolgate"), &env), text)
}

#[test]
fn oauth_tables_are_read_and_checked() {
    let text = r#"
[profiles.reader]
tools = ["files__read*"]

[oauth]
resource = "https://gateway.example/mcp"
issuers = ["https://id.example"]
scopes = ["mcp"]
gateway_claims = ["groups=admins"]
default_profile = "reader"
profiles = { reader = ["groups=readers", "realm_access.roles=reader"] }

[servers.linear]
url = "https://mcp.linear.app/mcp"
oauth = { grant = "client_credentials", client_id = "gw", client_secret = "s3cret", scopes = ["read"] }

[servers.github]
url = "https://api.github.example/mcp"
[servers.github.oauth]
redirect_port = 8976
"#;
    let config = toml(text).unwrap();
    let oauth = config.host.oauth.unwrap();
    assert_eq!(oauth.resource, "https://gateway.example/mcp");
    assert_eq!(oauth.profiles["reader"], ["groups=readers", "realm_access.roles=reader"]);
    assert_eq!(oauth.default_profile.as_deref(), Some("reader"));
    let linear = config.servers["linear"].host.oauth.clone().unwrap();
    assert_eq!(linear.grant, OAuthGrant::ClientCredentials);
    assert_eq!(linear.client_secret, Some(Secret("s3cret".into())));
    let github = config.servers["github"].host.oauth.clone().unwrap();
    assert_eq!(
        (github.grant, github.redirect_port, github.client_id),
        (OAuthGrant::AuthorizationCode, 8976, None)
    );

    let refused = |text: &str| toml(text).unwrap_err().to_string();
    let e = refused("[oauth]\nissuers = [\"https://id.example\"]\n");
    assert!(e.contains("oauth.resource") && e.contains("gateway's URL"), "{e}");
    let e = refused("[oauth]\nresource = \"https://g/mcp\"\n");
    assert!(e.contains("oauth.issuers"), "{e}");
    let e = refused(
        "[oauth]\nresource = \"https://g/mcp\"\nissuers = [\"https://i\"]\nprofiles = { nobody = [\"a=b\"] }\n",
    );
    assert!(e.contains("oauth.profiles.nobody") && e.contains("nobody"), "{e}");
    let e = refused(
        "[profiles.r]\n[oauth]\nresource = \"https://g/mcp\"\nissuers = [\"https://i\"]\nprofiles = { r = [\"groups\"] }\n",
    );
    assert!(e.contains("oauth.profiles.r[0]") && e.contains("groups=readers"), "{e}");
    let e = refused("[servers.s]\ncommand = \"x\"\noauth = { grant = \"client_credentials\" }\n");
    assert!(e.contains("servers.s.oauth") && e.contains("url"), "{e}");
    let e = refused(
        "[servers.s]\nurl = \"https://s/mcp\"\noauth = { grant = \"client_credentials\", client_id = \"x\" }\n",
    );
    assert!(e.contains("client_secret"), "{e}");
    let e = refused("[servers.s]\nurl = \"https://s/mcp\"\noauth = { redirect_port = 70000 }\n");
    assert!(e.contains("redirect_port"), "{e}");
}
