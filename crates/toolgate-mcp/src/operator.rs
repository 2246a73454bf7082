//! operator: what the gateway's operator sees and does: the status (`status`, its page in
//! `status_page`) and the approval of held tools (`approval`).

pub(crate) mod approval;
pub(crate) mod status;
pub(crate) mod status_page;
