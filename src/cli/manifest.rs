//! The importer's data directory (`tools/README.md`, "Data format"): `manifest.json` lists the
//! `@main` inputs and JAX's outputs as `.npy` files.

use super::npy::{self, NpyArray};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One array of the manifest.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Entry {
    pub name: String,
    pub file: String,
    pub shape: Vec<usize>,
    pub dtype: String,
}

/// What `manifest.json` holds (other keys, such as `format` and `module`, are informative).
#[derive(Deserialize)]
struct ManifestFile {
    inputs: Vec<Entry>,
    outputs: Vec<Entry>,
}

/// A parsed `manifest.json` and the directory it is in.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub dir: PathBuf,
    pub inputs: Vec<Entry>,
    pub outputs: Vec<Entry>,
}

impl Manifest {
    /// Reads `dir/manifest.json`; errors are one sentence naming the file.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|error| format!("cannot read '{}': {error}", path.display()))?;
        let file: ManifestFile = serde_json::from_str(&text).map_err(|error| {
            format!(
                "'{}' is not a partir data manifest: {error}",
                path.display()
            )
        })?;
        Ok(Self {
            dir: dir.to_path_buf(),
            inputs: file.inputs,
            outputs: file.outputs,
        })
    }

    /// Reads an entry's `.npy` file and checks its shape against the manifest.
    pub fn read(&self, entry: &Entry) -> Result<NpyArray, String> {
        let array = npy::read(&self.dir.join(&entry.file))?;
        if array.shape != entry.shape {
            return Err(format!(
                "'{}' has shape {:?} but the manifest says {:?}",
                self.dir.join(&entry.file).display(),
                array.shape,
                entry.shape
            ));
        }
        Ok(array)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_manifests_are_one_sentence() {
        let dir = std::env::temp_dir().join(format!("partir-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), r#"{"inputs": [{"name": "x"}]}"#).unwrap();
        let error = Manifest::load(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).ok();
        assert!(error.contains("is not a partir data manifest"), "{error}");
        assert!(error.contains("missing field"), "{error}");
    }

    #[test]
    fn reads_the_mlp_manifest() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mlp/data");
        let manifest = Manifest::load(&dir).unwrap();
        assert_eq!(manifest.inputs.len(), 10);
        assert_eq!(manifest.inputs[8].name, "x");
        assert_eq!(manifest.inputs[8].shape, vec![32, 64]);
        assert_eq!(manifest.outputs.last().unwrap().name, "loss");
        let x = manifest.read(&manifest.inputs[8]).unwrap();
        assert_eq!(x.len(), 32 * 64);
        let y = manifest.read(&manifest.inputs[9]).unwrap();
        assert_eq!(y.dtype(), "int32");
    }
}
