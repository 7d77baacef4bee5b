//! Finds libhkb and links it as a shared library.
//!
//! 1. `HKB_LIB_DIR`: an absolute directory holding `libhkb.so` (a CMake build's `loader/`, or an
//!    install's `lib/`).
//! 2. Otherwise `pkg-config --libs hkb` (the `pkg-config` program, or `$PKG_CONFIG`), as installed
//!    by hkb's CMake (`hkb.pc`).
//!
//! The directory is also put in the binaries' RUNPATH (`--enable-new-dtags`), so programs run
//! without setup while `LD_LIBRARY_PATH` can still point them at another build of the library.
//! Cargo applies `rustc-link-arg` only to this package's own binaries and tests, so the directories
//! are exported to dependents as `DEP_HKB_LIB_DIRS` (`:`-separated); the `hkb` crate's build script
//! turns them into the same RUNPATH for its tests and examples.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

const HOW_TO: &str = "\
Point the build at libhkb with one of:
  HKB_LIB_DIR=/abs/path/to/dir/with/libhkb.so cargo build
      (for a CMake build tree that is <build dir>/loader, e.g. HKB_LIB_DIR=$PWD/build/amd/loader)
  PKG_CONFIG_PATH=<install prefix>/lib/pkgconfig cargo build
      (after `cmake --install`, which writes hkb.pc)";

fn fail(what: &str) -> ! {
    eprintln!("error: hkb-sys cannot link libhkb: {what}\n\n{HOW_TO}\n");
    exit(1);
}

fn from_lib_dir(dir: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(dir);
    if !dir.is_absolute() {
        fail(&format!(
            "HKB_LIB_DIR={} is relative; build scripts run in the package directory, so give \
             an absolute path",
            dir.display()
        ));
    }
    if !dir.join("libhkb.so").exists() {
        fail(&format!("HKB_LIB_DIR={} holds no libhkb.so", dir.display()));
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=hkb");
    vec![dir]
}

fn from_pkg_config() -> Vec<PathBuf> {
    let program = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let output = match Command::new(&program).args(["--libs", "hkb"]).output() {
        Ok(output) => output,
        Err(e) => fail(&format!(
            "HKB_LIB_DIR is not set and `{program} --libs hkb` could not run: {e}"
        )),
    };
    if !output.status.success() {
        fail(&format!(
            "HKB_LIB_DIR is not set and `{program} --libs hkb` failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let flags = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut dirs = Vec::new();
    let mut linked = false;
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
            dirs.push(PathBuf::from(dir));
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={lib}");
            linked |= lib == "hkb";
        }
    }
    if !linked {
        fail(&format!(
            "`{program} --libs hkb` printed no -lhkb: {}",
            flags.trim()
        ));
    }
    dirs
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "HKB_LIB_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let dirs = match env::var("HKB_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => from_lib_dir(&dir),
        _ => from_pkg_config(),
    };

    // RUNPATH (not RPATH) so that LD_LIBRARY_PATH takes precedence.
    println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags");
    for dir in &dirs {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    let joined: Vec<String> = dirs
        .iter()
        .map(|d| Path::new(d).display().to_string())
        .collect();
    println!("cargo:lib_dirs={}", joined.join(":"));
}
