//! Runs a program with MLIR 22's own CPU pipeline, like `tools/partir_jax/run_mlir.py`: `@main`
//! becomes the private `@partir_model` (so that it cannot clash with C's `main`), an entry
//! function materialises every input as a dense constant, calls it and prints every result;
//! `mlir-opt` lowers it to the LLVM dialect and `mlir-runner` JIT-runs it; an SPMD program is
//! compiled once instead (`mlir-translate`, `clang -O0`) and the executable started on every
//! MPI rank (JIT-running it compiled it once per rank: 8 times on 2 cores). Results are printed
//! bit-exactly: floats are bitcast to integers of their width first (`printMemrefF32` would
//! print six significant digits).

use super::error::CliError;
use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// The lowering to the LLVM dialect (`run_mlir.py`'s LOWER).
pub const LOWER: &str = "builtin.module(func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops},\
func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,lower-affine,\
finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts)";

/// The entry function the harness adds.
pub const ENTRY: &str = "partir_verify_entry";

/// What the program's `@main` is renamed to in a harness.
pub const MODEL: &str = "partir_model";

/// The element types the harness handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F32,
    F64,
    I32,
    I64,
}

impl Elem {
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::I32 => "i32",
            Elem::I64 => "i64",
        }
    }

    fn width(self) -> usize {
        match self {
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 | Elem::I64 => 8,
        }
    }

    /// The integer type of the same width (how values are printed).
    fn bits(self) -> &'static str {
        match self.width() {
            4 => "i32",
            _ => "i64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F64)
    }
}

/// A statically shaped tensor type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorType {
    pub shape: Vec<usize>,
    pub elem: Elem,
}

impl TensorType {
    /// Parses `tensor<32x64xf32>` / `tensor<f32>`; the error names what is unsupported.
    pub fn parse(text: &str) -> Result<Self, String> {
        let unsupported = || {
            format!("type {text} is not supported (statically shaped tensors of f32, f64, i32, i64 only)")
        };
        let inner = text
            .trim()
            .strip_prefix("tensor<")
            .and_then(|t| t.strip_suffix('>'))
            .ok_or_else(unsupported)?;
        let mut parts: Vec<&str> = inner.split('x').collect();
        let elem = match parts.pop() {
            Some("f32") => Elem::F32,
            Some("f64") => Elem::F64,
            Some("i32") => Elem::I32,
            Some("i64") => Elem::I64,
            _ => return Err(unsupported()),
        };
        let shape = parts
            .iter()
            .map(|dim| dim.parse::<usize>().map_err(|_| unsupported()))
            .collect::<Result<_, _>>()?;
        Ok(Self { shape, elem })
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn with_elem(&self, elem: Elem) -> Self {
        Self {
            shape: self.shape.clone(),
            elem,
        }
    }

    /// The index of element `flat` in C order, e.g. `[3, 17]`.
    pub fn unravel(&self, mut flat: usize) -> Vec<usize> {
        let mut index = vec![0; self.shape.len()];
        for (d, &size) in self.shape.iter().enumerate().rev() {
            if size > 0 {
                index[d] = flat % size;
                flat /= size;
            }
        }
        index
    }
}

impl std::fmt::Display for TensorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tensor<")?;
        for dim in &self.shape {
            write!(f, "{dim}x")?;
        }
        write!(f, "{}>", self.elem.name())
    }
}

/// Input values for a tensor of type `ty`, as little-endian bytes of its element type.
#[derive(Clone, Debug)]
pub struct Input {
    pub ty: TensorType,
    pub bytes: Vec<u8>,
}

impl Input {
    /// Converts `values` (one per element, C order) to `ty`'s element type.
    pub fn from_f64(ty: TensorType, values: &[f64]) -> Self {
        let bytes = values
            .iter()
            .flat_map(|&v| match ty.elem {
                Elem::F32 => (v as f32).to_le_bytes().to_vec(),
                Elem::F64 => v.to_le_bytes().to_vec(),
                Elem::I32 => (v as i32).to_le_bytes().to_vec(),
                Elem::I64 => (v as i64).to_le_bytes().to_vec(),
            })
            .collect();
        Self { ty, bytes }
    }

    /// `dense<"0x...">`: the exact bytes, in MLIR's hex form.
    pub fn dense(&self) -> String {
        let mut text = String::with_capacity(self.bytes.len() * 2 + 12);
        text.push_str("dense<\"0x");
        for byte in &self.bytes {
            text.push_str(&format!("{byte:02X}"));
        }
        text.push_str("\">");
        text
    }
}

/// `module_text` (whose `@main` is already the private `@partir_model`) with an entry function
/// that calls it
/// on `inputs` and prints every result (of types `outputs`) bit-exactly.
pub fn harness(
    module_text: &str,
    inputs: &[Input],
    outputs: &[TensorType],
) -> Result<String, CliError> {
    let close = module_text
        .rfind('}')
        .ok_or_else(|| CliError::new("the printed module has no closing brace"))?;
    let mut lines = vec![format!("  func.func @{ENTRY}() {{")];
    for (i, input) in inputs.iter().enumerate() {
        lines.push(format!(
            "    %in{i} = arith.constant {} : {}",
            input.dense(),
            input.ty
        ));
    }
    let ins: Vec<String> = (0..inputs.len()).map(|i| format!("%in{i}")).collect();
    let in_types: Vec<String> = inputs.iter().map(|input| input.ty.to_string()).collect();
    let out_types: Vec<String> = outputs.iter().map(ToString::to_string).collect();
    let call = format!(
        "call @{MODEL}({}) : ({}) -> ({})",
        ins.join(", "),
        in_types.join(", "),
        out_types.join(", ")
    );
    if outputs.is_empty() {
        lines.push(format!("    {call}"));
    } else {
        let outs: Vec<String> = (0..outputs.len()).map(|j| format!("%out{j}")).collect();
        lines.push(format!("    {} = {call}", outs.join(", ")));
    }
    let mut printers = Vec::new();
    for (j, ty) in outputs.iter().enumerate() {
        let (converted, printer, bits) = to_printable(j, &format!("%out{j}"), ty);
        lines.extend(converted);
        lines.push(format!(
            "    call @{printer}(%b{j}) : (memref<*x{bits}>) -> ()"
        ));
        printers.push((printer, bits));
    }
    lines.push("    return\n  }".into());
    Ok(close_harness(&module_text[..close], lines, printers))
}

/// The harness: the program's module text up to its closing brace, then `lines` (the entry
/// function) and a declaration of each printer used, then the brace.
pub fn close_harness(
    module_body: &str,
    mut lines: Vec<String>,
    mut printers: Vec<(&'static str, &'static str)>,
) -> String {
    printers.sort();
    printers.dedup();
    for (printer, bits) in printers {
        lines.push(format!(
            "  func.func private @{printer}(memref<*x{bits}>) attributes {{llvm.emit_c_interface}}"
        ));
    }
    format!("{module_body}\n{}\n}}\n", lines.join("\n"))
}

/// The lines that turn result `value` (number `j`, of type `ty`) into `%b{j}`, an unranked
/// memref of integers of the element's width (floats bitcast, so printing is exact); with the
/// printer function to call on it and that integer type.
pub fn to_printable(
    j: usize,
    value: &str,
    ty: &TensorType,
) -> (Vec<String>, &'static str, &'static str) {
    let mut lines = Vec::new();
    let bits = ty.elem.bits();
    let int_ty = ty.with_elem(if bits == "i32" { Elem::I32 } else { Elem::I64 });
    let mut value = value.to_string();
    if ty.elem.is_float() {
        let rank = ty.shape.len();
        let dims: Vec<String> = (0..rank).map(|d| format!("d{d}")).collect();
        let map = format!("affine_map<({0}) -> ({0})>", dims.join(", "));
        let iterators = vec!["\"parallel\""; rank].join(", ");
        lines.push(format!("    %e{j} = tensor.empty() : {int_ty}"));
        lines.push(format!(
            "    %c{j} = linalg.generic {{indexing_maps = [{map}, {map}], iterator_types = [{iterators}]}} \
ins({value} : {ty}) outs(%e{j} : {int_ty}) {{\n    ^bb0(%x: {}, %y: {bits}):\n      \
%bits = arith.bitcast %x : {} to {bits}\n      linalg.yield %bits : {bits}\n    }} -> {int_ty}",
            ty.elem.name(),
            ty.elem.name()
        ));
        value = format!("%c{j}");
    }
    lines.push(format!(
        "    %u{j} = tensor.cast {value} : {int_ty} to tensor<*x{bits}>"
    ));
    lines.push(format!(
        "    %b{j} = bufferization.to_buffer %u{j} : tensor<*x{bits}> to memref<*x{bits}>"
    ));
    let printer = if bits == "i32" {
        "printMemrefI32"
    } else {
        "printMemrefI64"
    };
    (lines, printer, bits)
}

/// Where MLIR 22's tools are: the prefix partir was built against (build.rs writes it from
/// `MLIR_SYS_220_PREFIX`, which .cargo/config.toml sets).
pub const LLVM_PREFIX: &str = env!("PARTIR_LLVM_PREFIX");

pub fn llvm_prefix() -> PathBuf {
    PathBuf::from(LLVM_PREFIX)
}

/// Lowers a harness to the LLVM dialect with `mlir-opt`.
pub fn lower(harness: &str, what: &str) -> Result<String, CliError> {
    let opt = llvm_prefix().join("bin/mlir-opt");
    tool(&opt, &[format!("--pass-pipeline={LOWER}")], harness).map_err(|error| {
        CliError::new(format!(
            "mlir-opt could not lower the {what} program: {error}"
        ))
    })
}

/// A compiled harness: an executable in a scratch directory (removed on drop).
pub struct Executable {
    dir: PathBuf,
    pub path: PathBuf,
}

impl Drop for Executable {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Compiles a lowered (LLVM dialect) harness: `mlir-translate --mlir-to-llvmir`, then
/// `clang -O0` with a C `main` calling the entry, linked with MLIR's runner utils and `libs`
/// (`-lmpich` for an SPMD program).
pub fn compile(lowered: &str, what: &str, libs: &[&str]) -> Result<Executable, CliError> {
    let llvm = llvm_prefix();
    let dir = std::env::temp_dir().join(format!(
        "partir-verify-{}-{}-{}",
        std::process::id(),
        what.replace(' ', "-"),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|error| CliError::new(format!("cannot create '{}': {error}", dir.display())))?;
    let executable = Executable {
        path: dir.join("program"),
        dir,
    };
    let fail = |step: &str, error: String| {
        CliError::new(format!(
            "{step} could not compile the {what} program: {error}"
        ))
    };
    let ir = tool(
        &llvm.join("bin/mlir-translate"),
        &["--mlir-to-llvmir".into()],
        lowered,
    )
    .map_err(|error| fail("mlir-translate", error))?;
    let (ll, entry) = (
        executable.dir.join("program.ll"),
        executable.dir.join("entry.c"),
    );
    std::fs::write(&ll, ir)
        .and_then(|()| {
            std::fs::write(
                &entry,
                format!("void {ENTRY}(void);\nint main(void) {{ {ENTRY}(); return 0; }}\n"),
            )
        })
        .map_err(|error| fail("writing", error.to_string()))?;
    let lib_dir = llvm.join("lib");
    let mut args: Vec<String> = vec![
        "-O0".into(),
        "-Wno-override-module".into(),
        ll.display().to_string(),
        entry.display().to_string(),
        "-o".into(),
        executable.path.display().to_string(),
        format!("-L{}", lib_dir.display()),
        "-lmlir_c_runner_utils".into(),
        "-lmlir_runner_utils".into(),
    ];
    args.extend(libs.iter().map(|lib| lib.to_string()));
    args.push("-lm".into());
    args.push(format!("-Wl,-rpath,{}", lib_dir.display()));
    tool(&llvm.join("bin/clang"), &args, "").map_err(|error| fail("clang", error))?;
    Ok(executable)
}

/// Runs a lowered harness on one process with `mlir-runner` (JIT: for one run, faster than
/// compiling and linking an executable); the printed results, as the integers printed.
pub fn execute(lowered: &str, what: &str) -> Result<Vec<Vec<i64>>, CliError> {
    let llvm = llvm_prefix();
    let libs = format!(
        "-shared-libs={0}/lib/libmlir_c_runner_utils.so,{0}/lib/libmlir_runner_utils.so",
        llvm.display()
    );
    let args = [
        "-e".to_string(),
        ENTRY.to_string(),
        "-entry-point-result=void".to_string(),
        libs,
    ];
    let stdout = tool(&llvm.join("bin/mlir-runner"), &args, lowered).map_err(|error| {
        CliError::new(format!(
            "mlir-runner could not run the {what} program: {error}"
        ))
    })?;
    Ok(parse_printed(&stdout))
}

/// The values printed by `printMemrefI32/I64`, one vector per printed memref.
pub fn parse_printed(stdout: &str) -> Vec<Vec<i64>> {
    stdout
        .split("Unranked Memref")
        .skip(1)
        .map(|block| {
            let data = block.split_once("data =").map(|(_, d)| d).unwrap_or("");
            let mut values = Vec::new();
            let mut number = String::new();
            for c in data.chars().chain(std::iter::once(' ')) {
                if c.is_ascii_digit() || (c == '-' && number.is_empty()) {
                    number.push(c);
                } else if !number.is_empty() {
                    if let Ok(value) = number.parse() {
                        values.push(value);
                    }
                    number.clear();
                }
            }
            values
        })
        .collect()
}

/// Decodes printed integers back to values of `elem` (bit patterns for floats).
pub fn decode(printed: &[i64], elem: Elem) -> Vec<f64> {
    printed
        .iter()
        .map(|&v| match elem {
            Elem::F32 => f32::from_bits(v as i32 as u32) as f64,
            Elem::F64 => f64::from_bits(v as u64),
            Elem::I32 | Elem::I64 => v as f64,
        })
        .collect()
}

/// Runs `program args` with `input` on stdin; its stdout, or the start of its stderr.
pub fn tool(program: &Path, args: &[String], input: &str) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start {}: {error}", program.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let output = std::thread::scope(|scope| {
        let writer = scope.spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output();
        let _ = writer.join();
        output
    })
    .map_err(|error| format!("{} failed: {error}", program.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first: Vec<&str> = stderr.lines().take(6).collect();
        return Err(format!("{} ({})", first.join("\n"), output.status));
    }
    String::from_utf8(output.stdout).map_err(|_| "it printed something that is not UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tensor_types() {
        let ty = TensorType::parse("tensor<32x64xf32>").unwrap();
        assert_eq!(ty.shape, vec![32, 64]);
        assert_eq!(ty.elem, Elem::F32);
        assert_eq!(ty.to_string(), "tensor<32x64xf32>");
        let scalar = TensorType::parse("tensor<i32>").unwrap();
        assert!(scalar.shape.is_empty());
        assert_eq!(scalar.len(), 1);
        assert!(TensorType::parse("tensor<?x4xf32>").is_err());
        assert!(TensorType::parse("tensor<4xbf16>").is_err());
        assert!(TensorType::parse("memref<4xf32>").is_err());
    }

    #[test]
    fn unravels_c_order() {
        let ty = TensorType::parse("tensor<2x3x4xf32>").unwrap();
        assert_eq!(ty.unravel(0), vec![0, 0, 0]);
        assert_eq!(ty.unravel(23), vec![1, 2, 3]);
        assert_eq!(ty.unravel(5), vec![0, 1, 1]);
    }

    #[test]
    fn parses_printed_memrefs() {
        let out = "Unranked Memref base@ = 0x55 rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data = \n\
[[1073741824,   1082130432], \n [-1, 3]]\nUnranked Memref base@ = 0x1 rank = 0 offset = 0 sizes = [] strides = [] data = \n[7]\n";
        let printed = parse_printed(out);
        assert_eq!(printed, vec![vec![1073741824, 1082130432, -1, 3], vec![7]]);
        assert_eq!(decode(&printed[0][..2], Elem::F32), vec![2.0, 4.0]);
    }

    #[test]
    fn dense_constants_are_exact_hex() {
        let ty = TensorType::parse("tensor<2xf32>").unwrap();
        let input = Input::from_f64(ty, &[1.0, 2.0]);
        assert_eq!(input.dense(), "dense<\"0x0000803F00000040\">");
    }
}
