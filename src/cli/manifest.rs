//! The importer's data directory (`tools/README.md`, "Data format"): `manifest.json` lists the
//! `@main` inputs and JAX's outputs as `.npy` files. A minimal JSON reader is enough for it.

use super::npy::{self, NpyArray};
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// One array of the manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub file: String,
    pub shape: Vec<usize>,
    pub dtype: String,
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
        let bad =
            |what: String| format!("'{}' is not a partir data manifest: {what}", path.display());
        let json = Json::parse(&text).map_err(bad)?;
        let entries = |key: &str| -> Result<Vec<Entry>, String> {
            let Some(Json::Array(items)) = json.get(key) else {
                return Err(bad(format!("no '{key}' list")));
            };
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let field = |name: &str| match item.get(name) {
                        Some(Json::String(text)) => Ok(text.clone()),
                        _ => Err(bad(format!("{key}[{index}] has no string '{name}'"))),
                    };
                    let shape = match item.get("shape") {
                        Some(Json::Array(dims)) => dims
                            .iter()
                            .map(|dim| match dim {
                                Json::Number(n) if *n >= 0.0 && n.fract() == 0.0 => Ok(*n as usize),
                                _ => Err(bad(format!("{key}[{index}] has a malformed shape"))),
                            })
                            .collect::<Result<_, _>>()?,
                        _ => return Err(bad(format!("{key}[{index}] has no 'shape'"))),
                    };
                    Ok(Entry {
                        name: field("name")?,
                        file: field("file")?,
                        shape,
                        dtype: field("dtype")?,
                    })
                })
                .collect()
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            inputs: entries("inputs")?,
            outputs: entries("outputs")?,
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

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    pub fn parse(text: &str) -> Result<Json, String> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            at: 0,
        };
        let value = parser.value()?;
        parser.space();
        if parser.at != parser.bytes.len() {
            return Err(format!("unexpected text at byte {}", parser.at));
        }
        Ok(value)
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.get(key),
            _ => None,
        }
    }
}

struct Parser<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn error<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.at))
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.space();
        match self.bytes.get(self.at) {
            None => self.error("unexpected end of JSON"),
            Some(b'{') => {
                self.at += 1;
                let mut members = BTreeMap::new();
                if self.eat(b'}') {
                    return Ok(Json::Object(members));
                }
                loop {
                    self.space();
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return self.error("expected ':'");
                    }
                    members.insert(key, self.value()?);
                    if self.eat(b'}') {
                        return Ok(Json::Object(members));
                    }
                    if !self.eat(b',') {
                        return self.error("expected ',' or '}'");
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(b']') {
                        return Ok(Json::Array(items));
                    }
                    if !self.eat(b',') {
                        return self.error("expected ',' or ']'");
                    }
                }
            }
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(_) => {
                let start = self.at;
                while self.at < self.bytes.len() && !b",]} \t\r\n".contains(&self.bytes[self.at]) {
                    self.at += 1;
                }
                let word = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or("");
                match word {
                    "null" => Ok(Json::Null),
                    "true" => Ok(Json::Bool(true)),
                    "false" => Ok(Json::Bool(false)),
                    _ => word.parse().map(Json::Number).or_else(|_| {
                        self.at = start;
                        self.error(&format!("unexpected '{word}'"))
                    }),
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        if self.bytes.get(self.at) != Some(&b'"') {
            return self.error("expected a string");
        }
        self.at += 1;
        let mut out = Vec::new();
        while let Some(&byte) = self.bytes.get(self.at) {
            self.at += 1;
            match byte {
                b'"' => return String::from_utf8(out).or_else(|_| self.error("invalid UTF-8")),
                b'\\' => {
                    let Some(&escape) = self.bytes.get(self.at) else {
                        break;
                    };
                    self.at += 1;
                    match escape {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self
                                .bytes
                                .get(self.at..self.at + 4)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            let Some(c) = hex.and_then(char::from_u32) else {
                                return self.error("bad \\u escape");
                            };
                            self.at += 4;
                            let mut buffer = [0; 4];
                            out.extend(c.encode_utf8(&mut buffer).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
        self.error("unterminated string")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json() {
        let json = Json::parse(
            r#" {"a": [1, 2.5, -3e2], "b": {"c": "x\"y\u0041"}, "d": true, "e": null} "#,
        )
        .unwrap();
        assert_eq!(
            json.get("a"),
            Some(&Json::Array(vec![
                Json::Number(1.0),
                Json::Number(2.5),
                Json::Number(-300.0)
            ]))
        );
        assert_eq!(
            json.get("b").and_then(|b| b.get("c")),
            Some(&Json::String("x\"yA".into()))
        );
        assert_eq!(json.get("d"), Some(&Json::Bool(true)));
        assert!(Json::parse("[1, 2").is_err());
        assert!(Json::parse("{\"a\" 1}").is_err());
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
