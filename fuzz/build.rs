//! With the `ggml` feature (the `differential` target): compiles `ggml/shim.c` and links it and
//! ggml's `libggml-base` from the llama.cpp build in `GGUF_LLAMA_CPP_DIR`, or, when that is not
//! set, from the one `scripts/build-llama.sh` builds (the first time, some minutes). The fuzzer
//! finds the library at run time through an rpath. Without the feature it does nothing.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=ggml/shim.c");
    println!("cargo:rerun-if-changed=../tests/harness/gguf_scalar_size.h");
    println!("cargo:rerun-if-env-changed=GGUF_LLAMA_CPP_DIR");
    if std::env::var_os("CARGO_FEATURE_GGML").is_none() {
        return;
    }
    let llama = match std::env::var_os("GGUF_LLAMA_CPP_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let out = Command::new("../scripts/build-llama.sh")
                .arg("ggml-base")
                .output()
                .expect("run scripts/build-llama.sh (or set GGUF_LLAMA_CPP_DIR)");
            assert!(out.status.success(), "scripts/build-llama.sh failed: {}", String::from_utf8_lossy(&out.stderr));
            let stdout = String::from_utf8(out.stdout).expect("a path");
            PathBuf::from(stdout.lines().last().expect("build-llama.sh prints the build folder last").trim())
        }
    };
    let lib = llama.join("build/bin");
    assert!(
        lib.join("libggml-base.so").exists(),
        "no libggml-base.so in {} (build llama.cpp: scripts/build-llama.sh)",
        lib.display()
    );
    cc::Build::new()
        .file("ggml/shim.c")
        .include(llama.join("src/ggml/include"))
        .std("c11")
        .warnings_into_errors(true)
        .compile("ggml_diff_shim");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=ggml-base");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rerun-if-changed={}", lib.join("libggml-base.so").display());
}
