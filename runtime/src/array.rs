//! Host arrays: typed, row-major buffers exchanged with compiled programs,
//! read from and written to `.npy` files, generated from a seed, printed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use tempo_passes::program::ElementType;

/// Element storage of a host array.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    /// Booleans, one byte each (as MLIR stores `i1` in memory).
    Bool(Vec<u8>),
}

impl Data {
    /// Zero-filled storage of `len` elements.
    pub fn zeros(element: ElementType, len: usize) -> Self {
        match element {
            ElementType::F32 => Self::F32(vec![0.0; len]),
            ElementType::F64 => Self::F64(vec![0.0; len]),
            ElementType::I32 => Self::I32(vec![0; len]),
            ElementType::I64 => Self::I64(vec![0; len]),
            ElementType::I1 => Self::Bool(vec![0; len]),
        }
    }
    /// Zero-filled storage of `len` elements, or an error (instead of an
    /// allocation abort) when the memory cannot be had.
    pub fn try_zeros(element: ElementType, len: usize) -> Result<Self, String> {
        fn filled<T: Clone>(len: usize, zero: T) -> Result<Vec<T>, String> {
            let mut v = Vec::new();
            v.try_reserve_exact(len).map_err(|_| format!("cannot allocate {len} elements"))?;
            v.resize(len, zero);
            Ok(v)
        }
        Ok(match element {
            ElementType::F32 => Self::F32(filled(len, 0.0)?),
            ElementType::F64 => Self::F64(filled(len, 0.0)?),
            ElementType::I32 => Self::I32(filled(len, 0)?),
            ElementType::I64 => Self::I64(filled(len, 0)?),
            ElementType::I1 => Self::Bool(filled(len, 0)?),
        })
    }
    /// Copies `source` into elements `at..at + source.len()`; false (and
    /// nothing written) when the element types differ or it does not fit.
    pub fn write_at(&mut self, at: usize, source: &Data) -> bool {
        if at.checked_add(source.len()).is_none_or(|end| end > self.len()) {
            return false;
        }
        match (self, source) {
            (Self::F32(a), Self::F32(b)) => a[at..at + b.len()].copy_from_slice(b),
            (Self::F64(a), Self::F64(b)) => a[at..at + b.len()].copy_from_slice(b),
            (Self::I32(a), Self::I32(b)) => a[at..at + b.len()].copy_from_slice(b),
            (Self::I64(a), Self::I64(b)) => a[at..at + b.len()].copy_from_slice(b),
            (Self::Bool(a), Self::Bool(b)) => a[at..at + b.len()].copy_from_slice(b),
            _ => return false,
        }
        true
    }
    /// Elements of type `element` from their bytes (native byte order,
    /// `i1` one byte each); the byte count must be a whole number of
    /// elements.
    pub fn from_bytes(element: ElementType, bytes: &[u8]) -> Result<Self, String> {
        let size = element.byte_size();
        if bytes.len() % size != 0 {
            return Err(format!("{} bytes are not a whole number of {} elements", bytes.len(), element.numpy()));
        }
        let mut data = Self::try_zeros(element, bytes.len() / size)?;
        // SAFETY: `data` holds exactly `bytes.len()` bytes of plain values.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.as_mut_ptr(), bytes.len()) };
        Ok(data)
    }
    /// Element type.
    pub fn element(&self) -> ElementType {
        match self {
            Self::F32(_) => ElementType::F32,
            Self::F64(_) => ElementType::F64,
            Self::I32(_) => ElementType::I32,
            Self::I64(_) => ElementType::I64,
            Self::Bool(_) => ElementType::I1,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::Bool(v) => v.len(),
        }
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Pointer to the first element (dangling but aligned when empty).
    /// The address of the first element.
    pub fn as_ptr(&self) -> *const u8 {
        match self {
            Self::F32(v) => v.as_ptr().cast(),
            Self::F64(v) => v.as_ptr().cast(),
            Self::I32(v) => v.as_ptr().cast(),
            Self::I64(v) => v.as_ptr().cast(),
            Self::Bool(v) => v.as_ptr(),
        }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Self::F32(v) => v.as_mut_ptr().cast(),
            Self::F64(v) => v.as_mut_ptr().cast(),
            Self::I32(v) => v.as_mut_ptr().cast(),
            Self::I64(v) => v.as_mut_ptr().cast(),
            Self::Bool(v) => v.as_mut_ptr(),
        }
    }
    /// Element `i` as f64 (exact for integers up to 2^53).
    pub fn get_f64(&self, i: usize) -> f64 {
        match self {
            Self::F32(v) => v[i] as f64,
            Self::F64(v) => v[i],
            Self::I32(v) => v[i] as f64,
            Self::I64(v) => v[i] as f64,
            Self::Bool(v) => v[i] as f64,
        }
    }
}

/// A named, shaped, row-major array.
#[derive(Clone, Debug, PartialEq)]
pub struct HostArray {
    pub name: String,
    pub shape: Vec<usize>,
    pub data: Data,
}

impl HostArray {
    /// Seeded random values: uniform in [-1, 1) for floats, integers in
    /// [-10, 10], fair booleans.
    pub fn random(name: &str, shape: Vec<usize>, element: ElementType, seed: u64) -> Self {
        // Mix the name in so that inputs of one run differ from each other.
        let mixed =
            name.bytes().fold(seed ^ 0x9e37_79b9_7f4a_7c15, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        let mut rng = ChaCha8Rng::seed_from_u64(mixed);
        let len = shape.iter().product();
        let data = match element {
            ElementType::F32 => Data::F32((0..len).map(|_| rng.random_range(-1.0..1.0)).collect()),
            ElementType::F64 => Data::F64((0..len).map(|_| rng.random_range(-1.0..1.0)).collect()),
            ElementType::I32 => Data::I32((0..len).map(|_| rng.random_range(-10..=10)).collect()),
            ElementType::I64 => Data::I64((0..len).map(|_| rng.random_range(-10..=10)).collect()),
            ElementType::I1 => Data::Bool((0..len).map(|_| rng.random_range(0..=1)).collect()),
        };
        Self { name: name.into(), shape, data }
    }

    fn element_text(&self, i: usize) -> String {
        match &self.data {
            Data::F32(v) => format_float(v[i] as f64, v[i].to_string()),
            Data::F64(v) => format_float(v[i], v[i].to_string()),
            Data::I32(v) => v[i].to_string(),
            Data::I64(v) => v[i].to_string(),
            Data::Bool(v) => (v[i] != 0).to_string(),
        }
    }

    /// Writes nested lists of the elements from `offset` on, `separator`
    /// between items, each element written by `element`.
    fn nested(
        &self,
        dim: usize,
        offset: usize,
        separator: &str,
        element: &dyn Fn(usize) -> String,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        if dim == self.shape.len() {
            return out.write_all(element(offset).as_bytes());
        }
        let stride: usize = self.shape[dim + 1..].iter().product();
        out.write_all(b"[")?;
        for i in 0..self.shape[dim] {
            if i > 0 {
                out.write_all(separator.as_bytes())?;
            }
            self.nested(dim + 1, offset + i * stride, separator, element, out)?;
        }
        out.write_all(b"]")
    }

    /// Values as nested lists (`[[1, 2], [3, 4]]`; a scalar prints alone).
    pub fn values_text(&self) -> String {
        let mut out = Vec::new();
        let _ = self.nested(0, 0, ", ", &|i| self.element_text(i), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// `name: dtype[shape] = values`.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        let _ = self.write_text(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Writes [`Self::to_text`] to `out`, element by element (a million
    /// values are not first gathered into one string).
    pub fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let shape: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        write!(out, "{}: {}[{}] = ", self.name, self.data.element().numpy(), shape.join(", "))?;
        self.nested(0, 0, ", ", &|i| self.element_text(i), out)
    }

    /// One JSON object: name, dtype, shape, values (nested lists). NaN and
    /// the infinities are written as the tokens `NaN`, `Infinity` and
    /// `-Infinity`, which Python's `json` module reads and writes (strict
    /// JSON has no spelling for them).
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        let _ = self.write_json(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Writes [`Self::to_json`] to `out`, element by element.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let element = |i: usize| match self.element_text(i).as_str() {
            "inf" => "Infinity".to_string(),
            "-inf" => "-Infinity".to_string(),
            other => other.to_string(),
        };
        let shape: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        write!(
            out,
            "{{\"name\":{},\"dtype\":\"{}\",\"shape\":[{}],\"values\":",
            serde_json::Value::String(self.name.clone()),
            self.data.element().numpy(),
            shape.join(",")
        )?;
        self.nested(0, 0, ",", &element, out)?;
        out.write_all(b"}")
    }
}

/// `shortest` is the shortest text that reads back as the same value in the
/// array's own precision.
fn format_float(v: f64, shortest: String) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        shortest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip_and_text() {
        let dir = std::env::temp_dir().join(format!("tempo-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = HostArray { name: "a".into(), shape: vec![2, 2], data: Data::F32(vec![1.0, 2.5, -3.0, 4.0]) };
        let path = dir.join("a.npy");
        a.write_npy(&path).unwrap();
        let b = HostArray::read_npy("a", path.to_str().unwrap()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_text(), "a: float32[2, 2] = [[1.0, 2.5], [-3.0, 4.0]]");
        std::fs::write(dir.join("bad.npy"), b"not numpy").unwrap();
        assert!(HostArray::read_npy("a", dir.join("bad.npy").to_str().unwrap()).is_err());
    }

    #[test]
    fn random_is_deterministic() {
        let a = HostArray::random("x", vec![3], ElementType::F32, 7);
        assert_eq!(a, HostArray::random("x", vec![3], ElementType::F32, 7));
        assert_ne!(a, HostArray::random("y", vec![3], ElementType::F32, 7));
    }
}
