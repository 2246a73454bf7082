//! The program reading a configuration besides the library: which keys it reads, and its
//! readers of them, called in the same pass as the library's.

use std::collections::BTreeMap;
use std::fmt::Debug;

use super::{Config, ConfigError, ConfigErrorKind, Fields, ProfileConfig, Source};

/// What a program built on the library reads of `toolgate.toml` besides the library's keys:
/// the gateway (`toolgate_mcp::config::GatewayKeys`) reads its transports, timeouts, session
/// store, tokens and OAuth through it. The library checks every table against its own keys and
/// the host's together, so a key neither reads is an error that lists both.
pub trait Host: Clone + Debug + PartialEq + Default {
    /// What it reads of one `[servers.NAME]` table ([`ServerConfig::host`](super::ServerConfig::host)).
    type Server: Clone + Debug + PartialEq;

    /// The top-level tables it reads whole (`tokens`, `oauth`).
    const TABLES: &'static [&'static str];
    /// The keys of `[gateway]` it reads.
    const GATEWAY_KEYS: &'static [&'static str];
    /// The keys of `[servers.NAME]` it reads.
    const SERVER_KEYS: &'static [&'static str];
    /// The keys of `[profiles.NAME]` it reads (none by default).
    const PROFILE_KEYS: &'static [&'static str] = &[];

    /// Every key it reads, as dotted paths with `NAME` for a name (`gateway.call_timeout_secs`,
    /// `tokens.NAME.env`): what [`Config::known_keys`] adds to the library's.
    fn known_keys() -> Vec<String>;

    /// Reads its keys of `[gateway]` (called when the file has that table).
    fn gateway(&mut self, gateway: &Fields<'_, '_>) -> Result<(), ConfigError>;

    /// Reads its keys of one `[profiles.NAME]`, after the library read the profile's.
    fn profile(&mut self, profile: &Fields<'_, '_>, name: &str) -> Result<(), ConfigError> {
        let _ = (profile, name);
        Ok(())
    }

    /// Reads its keys of one `[servers.NAME]`, before the library reads the server's rules.
    fn server(server: &Fields<'_, '_>, name: &str) -> Result<Self::Server, ConfigError>;

    /// Reads its own top-level tables from `top`, after the library has read its tables
    /// (`profiles` are those of the file, for a key that names one) and every server
    /// (`servers`, for a rule across tables).
    fn tables(
        &mut self,
        top: &Fields<'_, '_>,
        profiles: &BTreeMap<String, ProfileConfig>,
        servers: &BTreeMap<String, super::ServerConfig<Self::Server>>,
    ) -> Result<(), ConfigError>;

    /// Reads `mcpServers` JSON text, whose every entry is a server to reach: only a host that
    /// reaches servers reads it. By default it is an error saying so.
    fn from_mcp_json(src: &Source<'_>, text: &str) -> Result<Config<Self>, ConfigError> {
        let _ = text;
        let kind = ConfigErrorKind::Unsupported {
            what: "`mcpServers` JSON: its entries say how to reach servers, which the gateway \
                   (toolgate-mcp) reads; give the library a toolgate.toml",
        };
        Err(src.error("", kind))
    }
}

/// The host that reads nothing besides the library's keys: [`Config`]'s default, for an agent
/// loop that takes its servers' tools from elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NoHost;

impl Host for NoHost {
    type Server = ();

    const TABLES: &'static [&'static str] = &[];
    const GATEWAY_KEYS: &'static [&'static str] = &[];
    const SERVER_KEYS: &'static [&'static str] = &[];

    fn known_keys() -> Vec<String> {
        Vec::new()
    }

    fn gateway(&mut self, _: &Fields<'_, '_>) -> Result<(), ConfigError> {
        Ok(())
    }

    fn server(_: &Fields<'_, '_>, _: &str) -> Result<(), ConfigError> {
        Ok(())
    }

    fn tables(
        &mut self,
        _: &Fields<'_, '_>,
        _: &BTreeMap<String, ProfileConfig>,
        _: &BTreeMap<String, super::ServerConfig>,
    ) -> Result<(), ConfigError> {
        Ok(())
    }
}
