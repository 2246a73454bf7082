//! operator: what the gateway's operator sees and does: the status (`status`, its page in
//! `status_page`, with the last hour's counts of `metrics::timeline` drawn by `charts`) and the
//! approval of held tools (`approval`).

pub(crate) mod approval;
pub(crate) mod charts;
pub(crate) mod status;
pub(crate) mod status_page;
