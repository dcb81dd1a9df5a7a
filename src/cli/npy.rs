//! A small reader for NumPy's `.npy` files (format versions 1.0, 2.0 and 3.0): little-endian
//! `f32`, `f64`, `i32` and `i64` arrays in C order, as the JAX importer writes them
//! (`tools/README.md`, "Data format").

use std::path::Path;

/// The elements of an array, in C (row-major) order.
#[derive(Clone, Debug, PartialEq)]
pub enum NpyData {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// An array read from a `.npy` file.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: NpyData,
}

impl NpyArray {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match &self.data {
            NpyData::F32(v) => v.len(),
            NpyData::F64(v) => v.len(),
            NpyData::I32(v) => v.len(),
            NpyData::I64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The NumPy dtype name (`float32`, ...).
    pub fn dtype(&self) -> &'static str {
        match &self.data {
            NpyData::F32(_) => "float32",
            NpyData::F64(_) => "float64",
            NpyData::I32(_) => "int32",
            NpyData::I64(_) => "int64",
        }
    }

    /// Every element as an f64 (exact for f32, i32, f64; i64 beyond 2^53 rounds).
    pub fn to_f64(&self) -> Vec<f64> {
        match &self.data {
            NpyData::F32(v) => v.iter().map(|&x| x as f64).collect(),
            NpyData::F64(v) => v.clone(),
            NpyData::I32(v) => v.iter().map(|&x| x as f64).collect(),
            NpyData::I64(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// Reads a `.npy` file; the error is one sentence naming the file.
pub fn read(path: &Path) -> Result<NpyArray, String> {
    let bytes = std::fs::read(path)
        .map_err(|error| format!("cannot read '{}': {error}", path.display()))?;
    parse(&bytes).map_err(|error| format!("'{}' {error}", path.display()))
}

/// Parses the bytes of a `.npy` file; errors read "is not ... (reason)" after the file name.
pub fn parse(bytes: &[u8]) -> Result<NpyArray, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("is not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (header_len, header_start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("is truncated (no header length)".into());
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        _ => {
            return Err(format!(
                "has unsupported .npy format version {major}.{minor}"
            ))
        }
    };
    let data_start = header_start + header_len;
    if bytes.len() < data_start {
        return Err("is truncated (header longer than the file)".into());
    }
    let header = std::str::from_utf8(&bytes[header_start..data_start])
        .map_err(|_| "has a header that is not text".to_string())?;
    let descr = dict_value(header, "descr")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let fortran = dict_value(header, "fortran_order")?;
    if fortran.trim() != "False" {
        return Err("is in Fortran order; only C-order arrays are supported".into());
    }
    let shape = parse_shape(&dict_value(header, "shape")?)?;
    let count: usize = shape.iter().product();
    let (order, kind) = descr.split_at(1.min(descr.len()));
    match order {
        "<" | "|" => {}
        "=" if cfg!(target_endian = "little") => {}
        ">" => {
            return Err(format!(
                "is big-endian ('{descr}'); only little-endian arrays are supported"
            ))
        }
        _ => return Err(format!("has an unsupported dtype '{descr}'")),
    }
    let data = &bytes[data_start..];
    let width = match kind {
        "f4" | "i4" => 4,
        "f8" | "i8" => 8,
        _ => {
            return Err(format!(
                "has dtype '{descr}'; supported: <f4, <f8, <i4, <i8"
            ))
        }
    };
    if data.len() < count * width {
        return Err(format!(
            "is truncated: shape {shape:?} needs {} bytes of data, the file has {}",
            count * width,
            data.len()
        ));
    }
    let chunks = data[..count * width].chunks_exact(width);
    let data = match kind {
        "f4" => NpyData::F32(
            chunks
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        ),
        "i4" => NpyData::I32(
            chunks
                .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        ),
        "f8" => NpyData::F64(
            chunks
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        ),
        _ => NpyData::I64(
            chunks
                .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        ),
    };
    Ok(NpyArray { shape, data })
}

/// The raw text of `key`'s value in the header's Python dict literal.
fn dict_value(header: &str, key: &str) -> Result<String, String> {
    let missing = || format!("has a header without '{key}'");
    let at = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))
        .ok_or_else(missing)?;
    let rest = &header[at + key.len() + 2..];
    let rest = rest
        .trim_start()
        .strip_prefix(':')
        .ok_or_else(missing)?
        .trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')').map(|index| index + 1)
    } else if let Some(quote) = rest.chars().next().filter(|&c| c == '\'' || c == '"') {
        rest[1..].find(quote).map(|index| index + 2)
    } else {
        rest.find([',', '}'])
    }
    .ok_or_else(missing)?;
    Ok(rest[..end].to_string())
}

fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("has a malformed shape '{text}'"))?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|dim| !dim.is_empty())
        .map(|dim| {
            dim.trim_end_matches('L')
                .parse()
                .map_err(|_| format!("has a malformed shape '{text}'"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A .npy file with a hand-built header, padded as NumPy pads it (to 64 bytes).
    fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let prefix = if version == 1 { 10 } else { 12 };
        let mut header = header.to_string();
        while !(prefix + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = MAGIC.to_vec();
        bytes.extend([version, 0]);
        if version == 1 {
            bytes.extend((header.len() as u16).to_le_bytes());
        } else {
            bytes.extend((header.len() as u32).to_le_bytes());
        }
        bytes.extend(header.as_bytes());
        bytes.extend(data);
        bytes
    }

    fn le<T: Copy, const N: usize>(values: &[T], to: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| to(v)).collect()
    }

    #[test]
    fn reads_f32_matrix_v1_from_a_file() {
        let values = [1.5f32, -2.0, 0.25, 3.0, 4.0, 5.0];
        let bytes = npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            &le(&values, f32::to_le_bytes),
        );
        let path = std::env::temp_dir().join(format!("partir-npy-{}.npy", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let array = read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(array.shape, vec![2, 3]);
        assert_eq!(array.data, NpyData::F32(values.to_vec()));
    }

    #[test]
    fn reads_scalar_and_vectors_of_every_dtype() {
        let scalar = parse(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
            &2.5f32.to_le_bytes(),
        ))
        .unwrap();
        assert_eq!(scalar.shape, Vec::<usize>::new());
        assert_eq!(scalar.data, NpyData::F32(vec![2.5]));
        let ints = parse(&npy(
            1,
            "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
            &le(&[1i32, -2, 3], i32::to_le_bytes),
        ))
        .unwrap();
        assert_eq!(ints.data, NpyData::I32(vec![1, -2, 3]));
        let longs = parse(&npy(
            2,
            "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
            &le(&[7i64, -9], i64::to_le_bytes),
        ))
        .unwrap();
        assert_eq!(longs.data, NpyData::I64(vec![7, -9]));
        let doubles = parse(&npy(
            2,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
            &le(&[0.5f64, 1e300], f64::to_le_bytes),
        ))
        .unwrap();
        assert_eq!(doubles.shape, vec![1, 2]);
        assert_eq!(doubles.to_f64(), vec![0.5, 1e300]);
    }

    #[test]
    fn rejects_fortran_order() {
        let error = parse(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
            &[0; 16],
        ))
        .unwrap_err();
        assert!(error.contains("Fortran order"), "{error}");
    }

    #[test]
    fn rejects_big_endian() {
        let error = parse(&npy(
            1,
            "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
            &[0; 8],
        ))
        .unwrap_err();
        assert!(error.contains("big-endian"), "{error}");
    }

    #[test]
    fn rejects_truncated_data_and_bad_magic() {
        let error = parse(&npy(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            &[0; 8],
        ))
        .unwrap_err();
        assert!(error.contains("truncated"), "{error}");
        assert!(parse(b"not a numpy file").unwrap_err().contains("magic"));
    }

    #[test]
    fn rejects_unsupported_dtypes() {
        let error = parse(&npy(
            1,
            "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }",
            &[0; 2],
        ))
        .unwrap_err();
        assert!(error.contains("'<f2'"), "{error}");
    }
}
