//! redact: secrets taken out of text the gateway shows or logs: the values of a server's `env`
//! and `headers`, the query values of a URL, and strings shaped like tokens (an upstream that
//! echoes its API key on stderr must not put it on the status page).

/// What replaces a secret.
pub const MASK: &str = "[redacted]";

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "glpat-",
    "AKIA",
    "AIza",
];

/// Whether `word` looks like a credential: a known token prefix, or 32 characters or more of
/// letters, digits, `-` and `_` mixing letters and digits (a key, a hash, a JWT part).
fn token_shaped(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'));
    if TOKEN_PREFIXES.iter().any(|p| w.starts_with(p) && w.len() >= p.len() + 8) {
        return true;
    }
    w.len() >= 32
        && w.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && w.chars().any(|c| c.is_ascii_digit())
        && w.chars().any(|c| c.is_ascii_alphabetic())
}

/// The query values of every URL in `text` masked (`?api_key=[redacted]&page=[redacted]`).
fn mask_queries(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let word = &mask_userinfo(word);
        match word.split_once('?') {
            Some((base, query)) if base.contains("://") => {
                out.push_str(base);
                out.push('?');
                let pairs: Vec<String> = query
                    .split('&')
                    .map(|pair| match pair.split_once('=') {
                        Some((k, _)) => format!("{k}={MASK}"),
                        None => pair.to_owned(),
                    })
                    .collect();
                out.push_str(&pairs.join("&"));
            }
            _ => out.push_str(word),
        }
    }
    out
}

/// `text` with the configured `secrets` alone masked: for what an operator must read as it is
/// (a held definition under review), where a word that only looks like a token stays.
pub fn mask_secrets(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for s in secrets.iter().filter(|s| s.len() >= 6) {
        out = out.replace(s.as_str(), MASK);
    }
    out
}

/// `word` with the password of a URL's userinfo masked (`http://user:[redacted]@host/`).
fn mask_userinfo(word: &str) -> String {
    let Some(at) = word.find("://").map(|i| i + 3) else {
        return word.to_owned();
    };
    let authority_end = word[at..].find(['/', '?', '#']).map_or(word.len(), |i| at + i);
    let Some(user_end) = word[at..authority_end].rfind('@').map(|i| at + i) else {
        return word.to_owned();
    };
    match word[at..user_end].find(':').map(|i| at + i) {
        Some(colon) => format!("{}{MASK}{}", &word[..colon + 1], &word[user_end..]),
        None => word.to_owned(),
    }
}

/// `text` with `secrets` (values of at least 6 characters), URL query values and token-shaped
/// words masked.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let out = mask_secrets(text, secrets);
    let out = mask_queries(&out);
    let mut masked = String::with_capacity(out.len());
    let mut word = String::new();
    let flush = |word: &mut String, masked: &mut String| {
        if token_shaped(word) {
            masked.push_str(MASK);
        } else {
            masked.push_str(word);
        }
        word.clear();
    };
    for c in out.chars() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '=' | ':' | '(' | ')') {
            flush(&mut word, &mut masked);
            masked.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut masked);
    masked
}

/// One log line as it may be written: every character that could end the line, start another
/// or steer a terminal (CR, LF and the other control characters, DEL, the C1 controls, the
/// Unicode line and paragraph separators, the bidirectional overrides) written as an escape
/// (`\n`, `\x1b`, `\u{2028}`), so that no value a client, an upstream or a token put in a
/// line can begin a line of its own or hide what follows. A final newline (the line's own end)
/// stays; with `colours`, the formatter's own colour sequences (`ESC [ digits ; m`) stay too.
pub fn escape_line(text: &str, colours: bool) -> String {
    let (body, end) = match text.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (text, ""),
    };
    let mut out = String::with_capacity(body.len() + end.len());
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if colours && c == '\u{1b}' {
            let rest = &body[at + 1..];
            let len = rest
                .strip_prefix('[')
                .map(|r| r.find(|c: char| !(c.is_ascii_digit() || c == ';')).map(|i| (i, &r[i..])))
                .and_then(|found| found.filter(|(_, tail)| tail.starts_with('m')).map(|(i, _)| i + 2));
            if let Some(len) = len {
                out.push(c);
                out.push_str(&rest[..len]);
                for _ in 0..len {
                    chars.next();
                }
                continue;
            }
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(c),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                let code = c as u32;
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else {
                    out.push_str(&format!("\\u{{{code:x}}}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push_str(end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_value_can_begin_a_line_or_steer_the_terminal() {
        let forged = "refused iss=x\r\n2026-12-06T00:00:00Z  INFO toolgate::audit: approved\u{1b}[2K\u{85}\u{2028}\u{202e}z\n";
        let line = escape_line(forged, false);
        assert_eq!(
            line,
            "refused iss=x\\r\\n2026-12-06T00:00:00Z  INFO toolgate::audit: approved\\x1b[2K\\x85\\u{2028}\\u{202e}z\n"
        );
        assert_eq!(line.matches('\n').count(), 1, "one line, ending where it should");
        // With colours on, the formatter's own sequences stay and any other escape does not.
        let coloured = "\u{1b}[2m2026\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m a\u{1b}]0;title\u{7}\n";
        assert_eq!(
            escape_line(coloured, true),
            "\u{1b}[2m2026\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m a\\x1b]0;title\\x07\n"
        );
        assert_eq!(escape_line("tab\tstays", false), "tab\tstays");
    }

    #[test]
    fn a_urls_password_is_masked() {
        assert_eq!(
            redact("failed: http://bob:hunter2@127.0.0.1:9/mcp?k=v said no", &[]),
            "failed: http://bob:[redacted]@127.0.0.1:9/mcp?k=[redacted] said no"
        );
        assert_eq!(redact("mail bob@example.com", &[]), "mail bob@example.com");
    }

    #[test]
    fn secrets_queries_and_token_shaped_words_are_masked() {
        let secrets = vec!["hunter2-long".to_owned(), "abc".to_owned()];
        let line = "auth with hunter2-long failed at https://api.example/mcp?api_key=k123&team=a (abc)";
        assert_eq!(
            redact(line, &secrets),
            "auth with [redacted] failed at https://api.example/mcp?api_key=[redacted]&team=[redacted] (abc)"
        );
        assert_eq!(redact("token=ghp_0123456789abcdefABCD ok", &[]), "token=[redacted] ok");
        assert_eq!(redact("key: sk-proj-abcdefgh12345678", &[]), "key: [redacted]");
        let jwt_part = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";
        assert_eq!(redact(&format!("Bearer {jwt_part}"), &[]), "Bearer [redacted]");
        // Ordinary words, paths and short hex stay.
        let plain = "listening on /tmp/server.sock, commit 1a2b3c4d, request_id_for_the_tool_search_call";
        assert_eq!(redact(plain, &[]), plain);
    }
}
