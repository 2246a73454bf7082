//! Small formatting helpers shared by the commands.

pub(crate) use toolgate::search::score_json;
