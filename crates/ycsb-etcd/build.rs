//! Binds the system's OpenSSL (native-tls's backend) at the first TLS
//! connection, not at program start (ycsb-lazylink): with the libraries'
//! functions defined in the program, the linker drops openssl-sys's links
//! (rustc links with --as-needed), and a run of any other store no longer
//! loads and initialises libssl and libcrypto (about 1.6 ms of CPU per
//! process). A static OpenSSL (`OPENSSL_STATIC`) is linked as usual.

fn main() {
    println!("cargo:rerun-if-env-changed=OPENSSL_LIB_DIR");
    println!("cargo:rerun-if-env-changed=OPENSSL_STATIC");
    let shared = std::env::var_os("OPENSSL_STATIC").is_none();
    let dir = std::env::var_os("OPENSSL_LIB_DIR").map(std::path::PathBuf::from);
    for (tag, name) in [("ssl", "ssl"), ("crypto", "crypto")] {
        let library = shared
            .then(|| ycsb_lazylink::build::SharedLibrary::find(name, dir.as_deref()))
            .flatten();
        ycsb_lazylink::build::generate(tag, library.as_ref(), &[""])
            .expect("write the lazy-binding module into OUT_DIR");
    }
}
