//! Build script: ODS → C++ (mlir-tblgen), the pass names for Rust (from Passes.td), the cxx
//! bridges and the C++ glue (cxx-build), the MLIR C API link shim, rpath.
//!
//! Debian ships MLIR 22 as one `libMLIR.so` plus the C API as static `libMLIRCAPI*.a` archives only.
//! `mlir-sys` (with `MLIR_SYS_LINK_SHARED=1`) links `-lMLIR -lMLIR-C`, so we write a GNU ld script
//! named `libMLIR-C.so` that groups every C API archive; their C++ references resolve against the
//! single shared `libMLIR.so` that `mlir-opt` itself uses (two MLIR copies would break TypeIDs).

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

/// (td file, generator, extra args, output) for every mlir-tblgen run.
const TABLEGEN_JOBS: &[(&str, &str, &[&str], &str)] = &[
    (
        "partir/Core/CoreDialect.td",
        "-gen-dialect-decls",
        &["-dialect=partir"],
        "partir/Core/CoreDialect.h.inc",
    ),
    (
        "partir/Core/CoreDialect.td",
        "-gen-dialect-defs",
        &["-dialect=partir"],
        "partir/Core/CoreDialect.cpp.inc",
    ),
    (
        "partir/Core/CoreDialect.td",
        "-gen-typedef-decls",
        &["-typedefs-dialect=partir"],
        "partir/Core/CoreTypes.h.inc",
    ),
    (
        "partir/Core/CoreDialect.td",
        "-gen-typedef-defs",
        &["-typedefs-dialect=partir"],
        "partir/Core/CoreTypes.cpp.inc",
    ),
    (
        "partir/Core/CoreDialect.td",
        "-gen-attrdef-decls",
        &["-attrdefs-dialect=partir"],
        "partir/Core/CoreAttrs.h.inc",
    ),
    (
        "partir/Core/CoreDialect.td",
        "-gen-attrdef-defs",
        &["-attrdefs-dialect=partir"],
        "partir/Core/CoreAttrs.cpp.inc",
    ),
    (
        "partir/Core/CoreOps.td",
        "-gen-op-decls",
        &[],
        "partir/Core/CoreOps.h.inc",
    ),
    (
        "partir/Core/CoreOps.td",
        "-gen-op-defs",
        &[],
        "partir/Core/CoreOps.cpp.inc",
    ),
    (
        "partir/Common/Enums.td",
        "-gen-enum-decls",
        &[],
        "partir/Common/Enums.h.inc",
    ),
    (
        "partir/Common/Enums.td",
        "-gen-enum-defs",
        &[],
        "partir/Common/Enums.cpp.inc",
    ),
    (
        "partir/Hlo/HloDialect.td",
        "-gen-dialect-decls",
        &["-dialect=partir_hlo"],
        "partir/Hlo/HloDialect.h.inc",
    ),
    (
        "partir/Hlo/HloDialect.td",
        "-gen-dialect-defs",
        &["-dialect=partir_hlo"],
        "partir/Hlo/HloDialect.cpp.inc",
    ),
    (
        "partir/Hlo/HloDialect.td",
        "-gen-attrdef-decls",
        &["-attrdefs-dialect=partir_hlo"],
        "partir/Hlo/HloAttrs.h.inc",
    ),
    (
        "partir/Hlo/HloDialect.td",
        "-gen-attrdef-defs",
        &["-attrdefs-dialect=partir_hlo"],
        "partir/Hlo/HloAttrs.cpp.inc",
    ),
    (
        "partir/Hlo/HloOps.td",
        "-gen-op-decls",
        &[],
        "partir/Hlo/HloOps.h.inc",
    ),
    (
        "partir/Hlo/HloOps.td",
        "-gen-op-defs",
        &[],
        "partir/Hlo/HloOps.cpp.inc",
    ),
    (
        "partir/Passes.td",
        "-gen-pass-decls",
        &["-name=Partir"],
        "partir/Passes.h.inc",
    ),
];

/// The reference generated from ODS, so that it cannot drift: (td file, generator, extra args,
/// file under docs/reference/). The build writes the committed copy when it changes; CI fails
/// when the commit's copy is stale (`git diff --exit-code docs/reference`).
const DOC_JOBS: &[(&str, &str, &[&str], &str)] = &[
    (
        "partir/Core/CoreOps.td",
        "-gen-dialect-doc",
        &["-dialect=partir"],
        "partir.md",
    ),
    (
        "partir/Hlo/HloOps.td",
        "-gen-dialect-doc",
        &["-dialect=partir_hlo"],
        "partir_hlo.md",
    ),
    ("partir/Passes.td", "-gen-pass-doc", &[], "passes.md"),
];

/// The Rust modules holding a `#[cxx::bridge]`: cxx generates their C++ side.
const CXX_BRIDGES: &[&str] = &[
    "src/ffi/glue.rs",
    "src/passes/options.rs",
    "src/entry/passes.rs",
];

const CXX_SOURCES: &[&str] = &[
    "src/cxx/CoreDialect.cpp",
    "src/cxx/HloDialect.cpp",
    "src/cxx/Passes.cpp",
    "src/cxx/Registration.cpp",
    "src/cxx/Glue.cpp",
    "src/cxx/OptMain.cpp",
];

fn main() {
    let llvm = PathBuf::from(
        env::var("MLIR_SYS_220_PREFIX")
            .expect("MLIR_SYS_220_PREFIX: .cargo/config.toml sets it to the LLVM 22 prefix"),
    );
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let include = manifest.join("include");

    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=src/cxx");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    // The one place the LLVM prefix is written for the code: `cli::runner::LLVM_PREFIX`, the
    // lit runner and the fuzzer read it (as standalone's lit.site.cfg.py.in is configured).
    println!("cargo:rustc-env=PARTIR_LLVM_PREFIX={}", llvm.display());

    run_tablegen(&llvm, &include, &out);
    write_reference(&llvm, &include, &out, &manifest.join("docs/reference"));
    write_pass_names(&include.join("partir/Passes.td"), &out);
    compile_cxx(&llvm, &include, &out);
    write_capi_link_script(&llvm, &out);

    let lib = llvm.join("lib");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=MLIR");
    println!("cargo:rustc-link-lib=dylib=LLVM");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
}

fn run_tablegen(llvm: &Path, include: &Path, out: &Path) {
    for job in TABLEGEN_JOBS {
        tablegen(llvm, include, job, &out.join(job.3));
    }
}

/// The dialect and pass reference: generated into OUT_DIR, copied to `docs` when different.
fn write_reference(llvm: &Path, include: &Path, out: &Path, docs: &Path) {
    for job in DOC_JOBS {
        let generated = out.join("docs").join(job.3);
        tablegen(llvm, include, job, &generated);
        let text = fs::read(&generated).expect("mlir-tblgen wrote the reference");
        let committed = docs.join(job.3);
        if fs::read(&committed).ok().as_ref() != Some(&text) {
            fs::create_dir_all(docs).expect("docs/reference is writable");
            fs::write(&committed, text).expect("docs/reference is writable");
        }
    }
}

fn tablegen(llvm: &Path, include: &Path, job: &(&str, &str, &[&str], &str), output: &Path) {
    let tblgen = llvm.join("bin/mlir-tblgen");
    let (td, generator, extra, _) = job;
    fs::create_dir_all(output.parent().unwrap()).unwrap();
    let status = Command::new(&tblgen)
        .arg(generator)
        .args(*extra)
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", llvm.join("include").display()))
        .arg(include.join(td))
        .arg("-o")
        .arg(output)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (run scripts/setup)", tblgen.display()));
    assert!(status.success(), "mlir-tblgen {generator} {td} failed");
}

/// `pass_names.rs`: a constant per pass of Passes.td, so that Rust names each pass once, e.g.
/// `def PartirLowerToHlo : Pass<"partir-lower-to-hlo", ...>` gives
/// `pub const LOWER_TO_HLO: &str = "partir-lower-to-hlo";`.
fn write_pass_names(td: &Path, out: &Path) {
    let text =
        fs::read_to_string(td).unwrap_or_else(|e| panic!("cannot read {}: {e}", td.display()));
    let mut rust = String::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("def ") else {
            continue;
        };
        let Some((class, rest)) = rest.split_once(" : Pass<\"") else {
            continue;
        };
        let argument = rest.split('"').next().unwrap_or_default();
        let name = class.trim().trim_start_matches("Partir");
        let mut constant = String::new();
        for (index, ch) in name.chars().enumerate() {
            if ch.is_ascii_uppercase() && index > 0 {
                constant.push('_');
            }
            constant.push(ch.to_ascii_uppercase());
        }
        rust += &format!(
            "/// `{argument}` (`{class}` in include/partir/Passes.td).\npub const {constant}: &str = \"{argument}\";\n",
            class = class.trim()
        );
    }
    assert!(!rust.is_empty(), "no pass found in {}", td.display());
    fs::write(out.join("pass_names.rs"), rust).unwrap();
}

fn compile_cxx(llvm: &Path, include: &Path, out: &Path) {
    for bridge in CXX_BRIDGES {
        println!("cargo:rerun-if-changed={bridge}");
    }
    let mut build = cxx_build::bridges(CXX_BRIDGES);
    build
        .cpp(true)
        // C++20 for designated initializers: the pass shells fill Rust's option structs by
        // field name (src/cxx/Passes.cpp).
        .std("c++20")
        .include(include)
        .include(out)
        .include(llvm.join("include"))
        .define("_GNU_SOURCE", None)
        .define("__STDC_CONSTANT_MACROS", None)
        .define("__STDC_FORMAT_MACROS", None)
        .define("__STDC_LIMIT_MACROS", None)
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-fPIC")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-comment")
        .flag_if_supported("-Wno-deprecated-declarations")
        .flag_if_supported("-Wno-misleading-indentation")
        .warnings(false);
    // Debug builds of MLIR-heavy C++ are slow to compile at -O2 and slow to run at -O0.
    if env::var("PROFILE").as_deref() != Ok("release") {
        build.opt_level(1).debug(false);
    }
    if let Ok(cxx) = which_clang(llvm) {
        build.compiler(cxx);
    }
    for source in CXX_SOURCES {
        build.file(source);
    }
    build.compile("partir_cxx");
}

/// Prefer Debian's clang++-22 (same vintage as the MLIR headers); fall back to the system c++.
fn which_clang(llvm: &Path) -> Result<PathBuf, ()> {
    if env::var_os("CXX").is_some() {
        return Err(());
    }
    let clang = llvm.join("bin/clang++");
    if clang.exists() {
        Ok(clang)
    } else {
        Err(())
    }
}

fn write_capi_link_script(llvm: &Path, out: &Path) {
    let lib = llvm.join("lib");
    let mut archives: Vec<String> = fs::read_dir(&lib)
        .unwrap_or_else(|e| panic!("cannot read {}: {e} (run scripts/setup)", lib.display()))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("libMLIRCAPI") && name.ends_with(".a"))
        .map(|name| lib.join(name).display().to_string())
        .collect();
    archives.sort();
    assert!(
        !archives.is_empty(),
        "no libMLIRCAPI*.a in {} (install libmlir-22-dev)",
        lib.display()
    );
    let script = format!("GROUP ( {} )\n", archives.join(" "));
    let shim_dir = out.join("capi");
    fs::create_dir_all(&shim_dir).unwrap();
    fs::write(shim_dir.join("libMLIR-C.so"), script).unwrap();
    println!("cargo:rustc-link-search=native={}", shim_dir.display());
}
