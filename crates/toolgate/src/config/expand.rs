//! `${VAR}` and `${VAR:-default}` in configuration values, as Claude Code expands them in
//! `.mcp.json`.
//!
//! The rules follow Claude Code so that its files mean the same here: `${...}` runs to the first
//! `}`; the name ends at the first `:-`, and everything after it is the default; a variable that
//! is set, even to the empty string, wins over the default; `$VAR` without braces, `${}` and an
//! unclosed `${` stay as written. VS Code's `${env:VAR}` is read as `${VAR}`. Where Claude Code
//! leaves an unset variable without a default in place and warns, this is an error.

/// `text` with its variables replaced from `env`, or the name of the first variable that is
/// unset and has no default.
pub(super) fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let inner = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        if inner.is_empty() {
            out.push_str("${}");
        } else {
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            let lookup = name.strip_prefix("env:").unwrap_or(name);
            match (env(lookup), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => return Err(lookup.to_owned()),
            }
        }
        rest = &rest[start + 2 + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/ada".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn run(text: &str) -> Result<String, String> {
        expand(text, &env)
    }

    #[test]
    fn variables_and_defaults_expand_like_claude_code() {
        assert_eq!(run("${HOME}/data").unwrap(), "/home/ada/data");
        assert_eq!(run("a ${HOME} b ${HOME}").unwrap(), "a /home/ada b /home/ada");
        assert_eq!(run("${UNSET:-fallback}").unwrap(), "fallback");
        assert_eq!(run("${UNSET:-}").unwrap(), "");
        assert_eq!(run("${UNSET:-a:-b}").unwrap(), "a:-b");
        assert_eq!(run("${EMPTY:-fallback}").unwrap(), "", "a set variable wins even when empty");
        assert_eq!(run("${env:HOME}").unwrap(), "/home/ada");
        assert_eq!(run("héllo ${HOME}✓").unwrap(), "héllo /home/ada✓");
    }

    #[test]
    fn text_that_is_not_a_variable_stays() {
        assert_eq!(run("$HOME and $ and ${}").unwrap(), "$HOME and $ and ${}");
        assert_eq!(run("open ${HOME").unwrap(), "open ${HOME");
        assert_eq!(run("").unwrap(), "");
    }

    #[test]
    fn unset_variable_without_default_is_named() {
        assert_eq!(run("Bearer ${API_TOKEN}"), Err("API_TOKEN".to_owned()));
        assert_eq!(run("${env:API_TOKEN}"), Err("API_TOKEN".to_owned()));
        assert_eq!(run("${input:token}"), Err("input:token".to_owned()));
    }
}
