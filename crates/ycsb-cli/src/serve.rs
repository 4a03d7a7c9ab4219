//! `ycsb serve`: an embedded store on the network.

use std::sync::Arc;

use ycsb_core::StopSignal;
use ycsb_db::{PropertyDecl, StoreContext};

use crate::{args, build_properties_quietly, find_store, print_warnings, warn_unknown, Failure};

/// `ycsb serve`: opens an embedded store once and serves it over RESP
/// and/or HTTP until Ctrl-C or SIGTERM, then stops both servers (bounded
/// in time: see `ycsb_server`'s `ServerHandle::stop`) and closes the
/// store.
pub fn serve_store(serve: args::Serve) -> Result<u8, Failure> {
    use ycsb_server::{auth, http, resp, ServerConfig};
    let (props, warnings) = build_properties_quietly(&serve.sources)?;
    let descriptor = find_store(&serve.db)?;
    if !descriptor.is_embedded() {
        return Err(Failure::usage(format!(
            "ycsb serve embeds a store in its own process; '{}' is a client of a server",
            descriptor.name
        )));
    }
    let mut known: Vec<&PropertyDecl> = descriptor.properties.to_vec();
    known.extend_from_slice(resp::PROPERTIES);
    known.extend_from_slice(http::PROPERTIES);
    known.extend_from_slice(auth::PROPERTIES);
    let password = auth::Password::from_properties(&props).map_err(Failure::usage)?;
    // Refused before the store opens: an address other than loopback
    // without a password is bad input.
    for (flag, protocol, addr) in [
        ("--resp", "RESP", serve.resp),
        ("--http", "HTTP", serve.http),
    ] {
        if let Some(addr) = addr {
            auth::require_password(protocol, addr, password.as_ref())
                .map_err(|e| Failure::usage(format!("{flag}: {e}")))?;
        }
    }
    let resp_config = ServerConfig::from_properties(&props, &resp::RESP)
        .map_err(Failure::usage)?
        .with_password(password.clone());
    let http_config = ServerConfig::from_properties(&props, &http::HTTP)
        .map_err(Failure::usage)?
        .with_password(password.clone());

    let stop = StopSignal::new();
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || stop.stop());
    }
    let context = StoreContext::new(&props);
    let store: Arc<dyn ycsb_db::Store> = Arc::from(
        (descriptor.open)(&context)
            .map_err(|e| Failure::usage(descriptor.name_server_in(e, &props)))?,
    );
    // Warnings only once the input is good: a bad input is one line.
    print_warnings(&warnings);
    warn_unknown(&props, &known);
    let engine = store.engine_info();
    let build = store.engine_build();
    if let Some(line) = crate::engine_line(&engine, &build) {
        eprintln!("ycsb serve: {line}");
    }
    if let Some(warning) = build.warning() {
        eprintln!("ycsb serve: {warning}");
    }
    let describe = |protocol: &str, addr: std::net::SocketAddr| {
        let scope = match (auth::is_loopback(addr), password.is_some()) {
            (true, false) => "loopback only",
            (true, true) => "loopback only, password required",
            (false, _) => "reachable from other hosts, password required",
        };
        eprintln!(
            "ycsb serve: {} store{} over {protocol} at {addr} ({scope})",
            descriptor.name,
            if engine.version.is_empty() {
                String::new()
            } else {
                format!(" ({} {})", engine.name, engine.version)
            },
        );
    };
    let resp_handle = match serve.resp {
        Some(addr) => {
            let handle = ycsb_server::serve(&resp::RESP, store.clone(), addr, resp_config)
                .map_err(Failure::runtime)?;
            describe("RESP", handle.local_addr());
            Some(handle)
        }
        None => None,
    };
    let http_handle = match serve.http {
        Some(addr) => {
            let handle = ycsb_server::serve(&http::HTTP, store.clone(), addr, http_config)
                .map_err(Failure::runtime)?;
            describe("HTTP", handle.local_addr());
            Some(handle)
        }
        None => None,
    };
    eprintln!("ycsb serve: press Ctrl-C to stop");
    while !stop.is_stopped() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!("ycsb serve: stopping");
    // Each stop returns within seconds, even with a client that never
    // reads (its socket is shut down after a grace period); the engine is
    // closed whatever they report, and only then are failures reported.
    let resp_stopped = resp_handle.map_or(Ok(()), |h| h.stop());
    let http_stopped = http_handle.map_or(Ok(()), |h| h.stop());
    let closed = store.close();
    resp_stopped.map_err(Failure::runtime)?;
    http_stopped.map_err(Failure::runtime)?;
    closed.map_err(Failure::runtime)?;
    eprintln!("ycsb serve: stopped, store closed");
    Ok(0)
}
