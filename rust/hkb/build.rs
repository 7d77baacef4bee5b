//! Gives this crate's tests and examples the RUNPATH that hkb-sys found libhkb in (Cargo applies a
//! build script's `rustc-link-arg` to its own package only). RUNPATH rather than RPATH, so that
//! `LD_LIBRARY_PATH` can point a prebuilt binary at another build of the library.
//!
//! A crate depending on `hkb` gets the link search path from hkb-sys but no RUNPATH: run it with
//! `LD_LIBRARY_PATH`, or add hkb-sys as a direct dependency (which makes Cargo hand its build
//! script `DEP_HKB_LIB_DIRS`) and emit the same `rustc-link-arg` lines as this file.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_HKB_LIB_DIRS");
    let dirs = std::env::var("DEP_HKB_LIB_DIRS").unwrap_or_default();
    println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags");
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
