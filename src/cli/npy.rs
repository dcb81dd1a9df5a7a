//! NumPy's `.npy` files, read with the `npyz` crate: `f32`, `f64`, `i32` and `i64` arrays in C
//! order, as the JAX importer writes them (`tools/README.md`, "Data format").

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

/// Writes `values` as a `.npy` file of `shape` and element type `elem` (`f32`, `f64`, `i32`,
/// `i64`), as the JAX side reads its inputs.
pub fn write(path: &Path, shape: &[usize], elem: &str, values: &[f64]) -> Result<(), String> {
    let fail = |error: std::io::Error| format!("cannot write '{}': {error}", path.display());
    let file = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    let shape: Vec<u64> = shape.iter().map(|&size| size as u64).collect();
    macro_rules! put {
        ($ty:ty) => {{
            use npyz::WriterBuilder;
            let mut writer = npyz::WriteOptions::<$ty>::new()
                .default_dtype()
                .shape(&shape)
                .writer(file)
                .begin_nd()
                .map_err(fail)?;
            writer
                .extend(values.iter().map(|&value| value as $ty))
                .map_err(fail)?;
            writer.finish().map_err(fail)
        }};
    }
    match elem {
        "f32" => put!(f32),
        "f64" => put!(f64),
        "i32" => put!(i32),
        "i64" => put!(i64),
        other => Err(format!(
            "cannot write {other} elements to '{}'",
            path.display()
        )),
    }
}

/// Reads a `.npy` file; the error is one sentence naming the file.
pub fn read(path: &Path) -> Result<NpyArray, String> {
    let bytes = std::fs::read(path)
        .map_err(|error| format!("cannot read '{}': {error}", path.display()))?;
    parse(&bytes).map_err(|error| format!("'{}' {error}", path.display()))
}

/// Parses the bytes of a `.npy` file (any format version, either byte order) with `npyz`;
/// errors read "is not ... (reason)" after the file name.
pub fn parse(bytes: &[u8]) -> Result<NpyArray, String> {
    let file =
        npyz::NpyFile::new(bytes).map_err(|error| format!("is not a .npy file ({error})"))?;
    if file.order() != npyz::Order::C {
        return Err("is in Fortran order; only C-order arrays are supported".into());
    }
    let shape = file.shape().iter().map(|&size| size as usize).collect();
    let npyz::DType::Plain(type_str) = file.dtype() else {
        return Err("has a structured dtype; only plain numeric arrays are supported".into());
    };
    let read_error = |error: std::io::Error| format!("is truncated or corrupt ({error})");
    let data = match (type_str.type_char(), type_str.size_field()) {
        (npyz::TypeChar::Float, 4) => NpyData::F32(file.into_vec().map_err(read_error)?),
        (npyz::TypeChar::Float, 8) => NpyData::F64(file.into_vec().map_err(read_error)?),
        (npyz::TypeChar::Int, 4) => NpyData::I32(file.into_vec().map_err(read_error)?),
        (npyz::TypeChar::Int, 8) => NpyData::I64(file.into_vec().map_err(read_error)?),
        _ => {
            return Err(format!(
                "has dtype '{type_str}'; supported are float32, float64, int32 and int64"
            ))
        }
    };
    Ok(NpyArray { shape, data })
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
        let mut bytes = b"\x93NUMPY".to_vec();
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
    fn reads_big_endian() {
        let array = parse(&npy(
            1,
            "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
            &le(&[1.5f32, -2.0], f32::to_be_bytes),
        ))
        .unwrap();
        assert_eq!(array.data, NpyData::F32(vec![1.5, -2.0]));
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
        assert!(parse(b"not a numpy file")
            .unwrap_err()
            .contains("is not a .npy file"));
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
