//! Examples of ycsb-rs used as a library; run them with
//! `cargo run -p ycsb-examples --example own_store` and
//! `cargo run -p ycsb-examples --example embedded_workload`.
