//! Serves any embedded store over the network.

pub mod http;
pub mod resp;
