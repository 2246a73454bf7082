//! models: which model takes which mode, as data. A model that supports its API's tool search
//! gets the native deferred mode; any other model, an unknown one included, gets client-side
//! injection in its API's shape (or bridge, if a rule says so), never deferred tools without a
//! way to load them (the bug of Codex issue #33608).

use std::fmt;

use super::{Dialect, Provider};
use crate::config::glob_match;

/// The API a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses.
    OpenAiResponses,
    /// OpenAI Chat Completions and OpenAI-compatible servers.
    ChatCompletions,
    /// Google Gemini `generateContent`.
    Gemini,
}

impl Api {
    /// Every API by its command-line name.
    pub const NAMES: [(&'static str, Api); 4] = [
        ("anthropic", Api::Anthropic),
        ("openai-responses", Api::OpenAiResponses),
        ("chat", Api::ChatCompletions),
        ("gemini", Api::Gemini),
    ];

    /// The API a command-line name means.
    pub fn from_name(name: &str) -> Option<Api> {
        Api::NAMES.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }

    /// Client-side injection in this API's shape: the mode of a model without tool search.
    pub fn injection(self) -> Provider {
        Provider::Chat(match self {
            Api::Anthropic => Dialect::ANTHROPIC,
            Api::OpenAiResponses => Dialect::RESPONSES,
            Api::ChatCompletions => Dialect::OPENAI,
            Api::Gemini => Dialect::GEMINI,
        })
    }

    /// Whether `provider` speaks this API (bridge mode speaks any).
    fn speaks(self, provider: Provider) -> bool {
        match provider {
            Provider::Bridge => true,
            Provider::Anthropic | Provider::AnthropicServer(_) => self == Api::Anthropic,
            Provider::OpenAiResponses => self == Api::OpenAiResponses,
            Provider::Chat(d) => {
                self.injection() == Provider::Chat(d) || (self == Api::Gemini && d == Dialect::VERTEX)
            }
        }
    }
}

/// The models whose API's tool search works, from the providers' documentation
/// (`docs/providers.md`): Anthropic's `tool_reference` from the 4.5 generation on, OpenAI's
/// `tool_search` from gpt-5.4 on.
const BUILTIN: &[(&str, Provider)] = &[
    ("claude-opus-4-5*", Provider::Anthropic),
    ("claude-opus-4-6*", Provider::Anthropic),
    ("claude-opus-4-7*", Provider::Anthropic),
    ("claude-opus-4-8*", Provider::Anthropic),
    ("claude-sonnet-4-5*", Provider::Anthropic),
    ("claude-sonnet-4-6*", Provider::Anthropic),
    ("claude-haiku-4-5*", Provider::Anthropic),
    ("claude-opus-5*", Provider::Anthropic),
    ("claude-sonnet-5*", Provider::Anthropic),
    ("claude-haiku-5*", Provider::Anthropic),
    ("gpt-5.4*", Provider::OpenAiResponses),
    ("gpt-5.5*", Provider::OpenAiResponses),
    ("gpt-5.6*", Provider::OpenAiResponses),
    ("gpt-5.7*", Provider::OpenAiResponses),
    ("gpt-5.8*", Provider::OpenAiResponses),
    ("gpt-5.9*", Provider::OpenAiResponses),
    ("gpt-6*", Provider::OpenAiResponses),
];

/// A rule of the `[models]` table that names no mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMode {
    /// The model pattern.
    pub pattern: String,
    /// The mode as written.
    pub mode: String,
}

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Provider::NAMES.iter().map(|(n, _)| *n).collect();
        write!(
            f,
            "models.\"{}\": unknown mode `{}` (expected one of: {})",
            self.pattern,
            self.mode,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownMode {}

/// Model patterns (globs over the model's name) and the mode each takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Models {
    /// The user's rules, most specific (longest pattern) first, then the built-in ones.
    rules: Vec<(String, Provider)>,
}

impl Default for Models {
    fn default() -> Models {
        Models::builtin()
    }
}

impl Models {
    /// The built-in table alone.
    pub fn builtin() -> Models {
        Models { rules: BUILTIN.iter().map(|(p, m)| ((*p).to_owned(), *m)).collect() }
    }

    /// The built-in table under `rules` (pattern → mode name, as `[models]` holds them),
    /// which win over it: the longest pattern first.
    pub fn with_rules<'a>(
        rules: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Models, UnknownMode> {
        let mut user = Vec::new();
        for (pattern, mode) in rules {
            let provider = Provider::from_name(mode)
                .ok_or_else(|| UnknownMode { pattern: pattern.to_owned(), mode: mode.to_owned() })?;
            user.push((pattern.to_owned(), provider));
        }
        user.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        user.extend(Models::builtin().rules);
        Ok(Models { rules: user })
    }

    /// The built-in table under a configuration's `[models]` rules.
    pub fn from_config<H: crate::config::Host>(
        config: &crate::config::Config<H>,
    ) -> Result<Models, UnknownMode> {
        Models::with_rules(config.models.iter().map(|(p, m)| (p.as_str(), m.as_str())))
    }

    /// The mode for `model` on `api`: the first rule whose pattern matches and whose mode
    /// speaks the API, or client-side injection in the API's shape. `search_available` false
    /// (an endpoint known not to take tool search's blocks, as proxies often are) means
    /// injection whatever the rules say.
    pub fn provider(&self, api: Api, model: &str, search_available: bool) -> Provider {
        let found = self.rules.iter().find(|(p, m)| glob_match(p, model) && api.speaks(*m)).map(|(_, m)| *m);
        match found {
            Some(m) if search_available || !m.is_native_deferral() => m,
            _ => api.injection(),
        }
    }
}
