//! oauth: OAuth 2.1 on both sides of the gateway. Inbound, the gateway is a resource server
//! ([`resource`]): it publishes its protected-resource metadata and accepts JWT access tokens
//! of the configured issuers, whose claims choose the caller's profile. Outbound, it is a
//! client of upstream servers that want OAuth ([`client`]): client credentials, or the tokens
//! `toolgate login` got ([`login`]) kept sealed in the [`vault`].

pub mod client;
pub(crate) mod fetch;
pub(crate) mod jwt;
pub mod login;
pub mod resource;
pub mod vault;
