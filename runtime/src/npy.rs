//! A strict reader of `.npy` files: the header is validated field by field
//! (magic, version, header length, the dictionary's syntax and its exact
//! keys `descr`, `fortran_order` and `shape`, the dtype, the order, and the
//! shape against the number of data bytes), and every problem is named.
//!
//! Why not the `npyz` crate (still used for writing): it accepted headers
//! numpy refuses (extra or duplicate keys, malformed dictionaries, shapes
//! that do not match the data) and its errors do not say which field is
//! wrong; the header format is small and fixed, so validating it here is
//! less code than working around the crate.

use crate::array::{Data, HostArray};
use npyz::WriterBuilder;
use tempo_passes::program::ElementType;

/// A decoded `.npy` file.
#[derive(Debug)]
pub struct Npy {
    pub shape: Vec<usize>,
    pub data: Data,
}

/// A validated `.npy` header.
struct Header {
    shape: Vec<usize>,
    descr: String,
    /// Offset of the data in the file.
    data_start: usize,
    /// Bytes of the data.
    data_bytes: usize,
}

/// Where the header ends (`header_start + header_len`), from the first
/// bytes of a file of `file_len` bytes.
fn header_end(bytes: &[u8], file_len: usize) -> Result<(usize, u8), String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("the file does not start with the .npy magic string \\x93NUMPY".into());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (header_start, header_len): (usize, usize) = match (major, minor) {
        (1, 0) => (10, u16::from_le_bytes([bytes[8], bytes[9]]) as usize),
        (2, 0) | (3, 0) => {
            if bytes.len() < 12 {
                return Err("the file ends inside the header length".into());
            }
            (12, u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize)
        }
        _ => return Err(format!("unsupported .npy format version {major}.{minor} (known: 1.0, 2.0, 3.0)")),
    };
    let end = header_start
        .checked_add(header_len)
        .filter(|&end| end <= file_len)
        .ok_or_else(|| format!("the header length {header_len} runs past the end of the file ({file_len} bytes)"))?;
    Ok((end, major))
}

/// Validates the header of a file of `file_len` bytes whose first bytes
/// (at least up to the end of the header) are `bytes`.
fn parse_header(bytes: &[u8], file_len: usize) -> Result<Header, String> {
    let (data_start, major) = header_end(bytes, file_len)?;
    let header_start = if major == 1 { 10 } else { 12 };
    let header = bytes
        .get(header_start..data_start)
        .ok_or_else(|| format!("the file ends inside the header ({} of {data_start} bytes)", bytes.len()))?;
    let header: String = if major == 3 {
        String::from_utf8(header.to_vec()).map_err(|_| "the header is not UTF-8".to_string())?
    } else {
        header.iter().map(|&b| b as char).collect()
    };
    if !header.ends_with('\n') {
        return Err("the header does not end with a newline".into());
    }
    let fields = parse_dict(header.trim_end())?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (key, value) in fields {
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran,
            "shape" => &mut shape,
            other => {
                return Err(format!(
                    "the header has the key '{other}'; a .npy header has exactly 'descr', 'fortran_order' and 'shape'"
                ));
            }
        };
        if slot.replace(value).is_some() {
            return Err(format!("the header gives the key '{key}' twice"));
        }
    }
    let missing = |k: &str| format!("the header has no '{k}'");
    let descr = match descr.ok_or_else(|| missing("descr"))? {
        Literal::Str(s) => s,
        other => return Err(format!("'descr' must be a string, got {}", other.describe())),
    };
    match fortran.ok_or_else(|| missing("fortran_order"))? {
        Literal::Bool(false) => {}
        Literal::Bool(true) => return Err("the array is in Fortran order; save it in C order".into()),
        other => return Err(format!("'fortran_order' must be True or False, got {}", other.describe())),
    }
    let shape = match shape.ok_or_else(|| missing("shape"))? {
        Literal::Tuple(dims) => dims,
        other => return Err(format!("'shape' must be a tuple of integers, got {}", other.describe())),
    };
    let item = match descr.as_str() {
        "<f4" | "<f8" | "<i4" | "<i8" | "|b1" => descr[2..].parse::<usize>().unwrap_or(1),
        other => {
            return Err(format!(
                "dtype '{other}' is not supported; supported: float32 '<f4', float64 '<f8', int32 '<i4', \
                 int64 '<i8', bool '|b1' (little-endian)"
            ));
        }
    };
    let count = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let expected = count.and_then(|c| c.checked_mul(item));
    let data_bytes = file_len.saturating_sub(data_start);
    match expected {
        Some(n) if n == data_bytes => {}
        Some(n) => {
            return Err(format!(
                "the shape {shape:?} of '{descr}' needs {n} data bytes, but the file holds {data_bytes}"
            ));
        }
        None => return Err(format!("the shape {shape:?} is too large")),
    }
    Ok(Header { shape, descr, data_start, data_bytes })
}

/// Decodes `bytes` as a `.npy` file (C order, little-endian float32,
/// float64, int32, int64 or bool).
pub fn decode(bytes: &[u8]) -> Result<Npy, String> {
    let header = parse_header(bytes, bytes.len())?;
    let data = bytes.get(header.data_start..).unwrap_or_default();
    let words = |size: usize| data.chunks_exact(size);
    let data = match header.descr.as_str() {
        "<f4" => Data::F32(words(4).map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect()),
        "<f8" => Data::F64(words(8).map(|w| f64::from_le_bytes(w.try_into().unwrap_or([0; 8]))).collect()),
        "<i4" => Data::I32(words(4).map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect()),
        "<i8" => Data::I64(words(8).map(|w| i64::from_le_bytes(w.try_into().unwrap_or([0; 8]))).collect()),
        _ => Data::Bool(data.to_vec()),
    };
    check_bools(&data)?;
    Ok(Npy { shape: header.shape, data })
}

fn check_bools(data: &Data) -> Result<(), String> {
    if let Data::Bool(v) = data
        && let Some(i) = v.iter().position(|&b| b > 1)
    {
        return Err(format!("bool element {i} is the byte {}, not 0 or 1", v[i]));
    }
    Ok(())
}

/// Reads a `.npy` file straight into its array: the data bytes go to the
/// array's memory without a copy of the whole file (weights of hundreds
/// of megabytes are held once).
pub fn read(path: &std::path::Path) -> Result<Npy, String> {
    use std::io::{Read, Seek, SeekFrom};
    let cannot = |e: std::io::Error| format!("cannot read: {e}");
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let file_len = file.metadata().map_err(cannot)?.len();
    let file_len = usize::try_from(file_len).map_err(|_| format!("the file is too large ({file_len} bytes)"))?;
    // The magic string, version and header length come first (at most 12
    // bytes); the header may end before those 12 bytes do (a version 1.0
    // header of length 0 or 1), so the header is cut or completed to its
    // own length, and the data is read from its offset, not from where the
    // reads so far stopped.
    let mut header_bytes = vec![0u8; 12.min(file_len)];
    file.read_exact(&mut header_bytes).map_err(cannot)?;
    let (end, _) = header_end(&header_bytes, file_len)?;
    let known = header_bytes.len();
    header_bytes.resize(end, 0);
    if end > known {
        file.read_exact(&mut header_bytes[known..]).map_err(cannot)?;
    }
    let header = parse_header(&header_bytes, file_len)?;
    file.seek(SeekFrom::Start(header.data_start as u64)).map_err(cannot)?;
    if cfg!(target_endian = "big") {
        let mut bytes = header_bytes;
        file.read_to_end(&mut bytes).map_err(cannot)?;
        return decode(&bytes);
    }
    let element = match header.descr.as_str() {
        "<f4" => ElementType::F32,
        "<f8" => ElementType::F64,
        "<i4" => ElementType::I32,
        "<i8" => ElementType::I64,
        _ => ElementType::I1,
    };
    let count = header.shape.iter().product::<usize>();
    let mut data = Data::try_zeros(element, count)?;
    // SAFETY: the array holds `count` elements of `data_bytes / count`
    // bytes each (checked by the header), any bit pattern is a valid
    // number, and bools are checked below.
    let bytes = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr(), header.data_bytes) };
    file.read_exact(bytes).map_err(|e| format!("cannot read: {e}"))?;
    check_bools(&data)?;
    Ok(Npy { shape: header.shape, data })
}

/// A Python literal as it appears in a `.npy` header.
#[derive(Debug, PartialEq)]
enum Literal {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
    Other(String),
}

impl Literal {
    fn describe(&self) -> String {
        match self {
            Self::Str(s) => format!("the string '{s}'"),
            Self::Bool(b) => (if *b { "True" } else { "False" }).to_string(),
            Self::Tuple(t) => format!("the tuple {t:?}"),
            Self::Other(s) => format!("'{s}'"),
        }
    }
}

/// Parses `{'key': value, ...}` (string keys; string, boolean or
/// integer-tuple values; an optional trailing comma).
fn parse_dict(text: &str) -> Result<Vec<(String, Literal)>, String> {
    let mut p = Cursor { chars: text.chars().collect(), at: 0 };
    p.skip_spaces();
    p.expect('{')?;
    let mut fields = Vec::new();
    loop {
        p.skip_spaces();
        if p.eat('}') {
            break;
        }
        let key = p.string().map_err(|e| format!("the header dictionary is malformed: {e}"))?;
        p.skip_spaces();
        p.expect(':')?;
        p.skip_spaces();
        let value = p.literal()?;
        fields.push((key, value));
        p.skip_spaces();
        if p.eat(',') {
            continue;
        }
        p.skip_spaces();
        p.expect('}')?;
        break;
    }
    p.skip_spaces();
    if p.at != p.chars.len() {
        return Err(format!("the header has text after the dictionary at character {}", p.at));
    }
    Ok(fields)
}

struct Cursor {
    chars: Vec<char>,
    at: usize,
}

impl Cursor {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }
    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "the header dictionary is malformed: expected '{c}' at character {}, found {}",
                self.at,
                self.peek().map_or("the end".to_string(), |f| format!("'{f}'"))
            ))
        }
    }
    fn string(&mut self) -> Result<String, String> {
        let quote = match self.peek() {
            Some(q @ ('\'' | '"')) => q,
            _ => return Err(format!("expected a quoted string at character {}", self.at)),
        };
        self.at += 1;
        let start = self.at;
        while let Some(c) = self.peek() {
            if c == quote {
                let s: String = self.chars[start..self.at].iter().collect();
                self.at += 1;
                return Ok(s);
            }
            if c == '\\' {
                return Err("escapes in header strings are not supported".into());
            }
            self.at += 1;
        }
        Err("a string in the header is not closed".into())
    }
    fn literal(&mut self) -> Result<Literal, String> {
        match self.peek() {
            Some('\'' | '"') => Ok(Literal::Str(self.string()?)),
            Some('(') => {
                self.at += 1;
                let mut dims = Vec::new();
                let mut comma = false;
                loop {
                    self.skip_spaces();
                    if self.eat(')') {
                        break;
                    }
                    let start = self.at;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.at += 1;
                    }
                    let digits: String = self.chars[start..self.at].iter().collect();
                    self.skip_spaces();
                    if digits.is_empty() {
                        return Err(format!(
                            "'shape' must hold non-negative integers; found {} at character {}",
                            self.peek().map_or("the end".to_string(), |c| format!("'{c}'")),
                            self.at
                        ));
                    }
                    let dim = digits.parse::<usize>().map_err(|_| format!("the dimension {digits} is too large"))?;
                    dims.push(dim);
                    if self.eat(',') {
                        comma = true;
                        continue;
                    }
                    self.skip_spaces();
                    self.expect(')')?;
                    if dims.len() == 1 && !comma {
                        // `(3)` is the integer 3 in Python, not a tuple.
                        return Ok(Literal::Other(format!("({digits})")));
                    }
                    break;
                }
                Ok(Literal::Tuple(dims))
            }
            _ => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '[') {
                    self.at += 1;
                }
                let word: String = self.chars[start..self.at].iter().collect();
                match word.as_str() {
                    "True" => Ok(Literal::Bool(true)),
                    "False" => Ok(Literal::Bool(false)),
                    "" => Err(format!("the header dictionary is malformed: expected a value at character {}", self.at)),
                    other => Ok(Literal::Other(other.to_string())),
                }
            }
        }
    }
}

/// `.npy` files of arrays (reading an input, writing an output).
impl HostArray {
    /// Reads a `.npy` file (C order, little-endian f32/f64/i32/i64/bool).
    pub fn read_npy(name: &str, path: &str) -> Result<Self, String> {
        let npy = read(std::path::Path::new(path)).map_err(|e| match e.strip_prefix("cannot read: ") {
            Some(detail) => format!("input '{name}': cannot read '{path}': {detail}"),
            None => format!("input '{name}': '{path}' is not a valid .npy file: {e}"),
        })?;
        Ok(Self { name: name.into(), shape: npy.shape, data: npy.data })
    }

    /// Writes the array as a `.npy` file.
    pub fn write_npy(&self, path: &std::path::Path) -> Result<(), String> {
        let shape: Vec<u64> = self.shape.iter().map(|&d| d as u64).collect();
        let file = std::fs::File::create(path).map_err(|e| format!("cannot create '{}': {e}", path.display()))?;
        let writer = std::io::BufWriter::new(file);
        let fail = |e: std::io::Error| format!("cannot write '{}': {e}", path.display());
        macro_rules! write_all {
            ($t:ty, $values:expr) => {{
                let mut w = npyz::WriteOptions::<$t>::new()
                    .default_dtype()
                    .shape(&shape)
                    .writer(writer)
                    .begin_nd()
                    .map_err(fail)?;
                w.extend($values).map_err(fail)?;
                w.finish().map_err(fail)?;
            }};
        }
        match &self.data {
            Data::F32(v) => write_all!(f32, v.iter().copied()),
            Data::F64(v) => write_all!(f64, v.iter().copied()),
            Data::I32(v) => write_all!(i32, v.iter().copied()),
            Data::I64(v) => write_all!(i64, v.iter().copied()),
            Data::Bool(v) => write_all!(bool, v.iter().map(|&b| b != 0)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut header = dict.to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn good_files_decode() {
        let f = file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", &[0, 0, 128, 63, 0, 0, 0, 64]);
        let npy = decode(&f).unwrap();
        assert_eq!(npy.shape, vec![2]);
        assert_eq!(npy.data, Data::F32(vec![1.0, 2.0]));
        let scalar = file("{'descr': '<i8', 'fortran_order': False, 'shape': ()}", &7i64.to_le_bytes());
        assert_eq!(decode(&scalar).unwrap().data, Data::I64(vec![7]));
    }

    #[test]
    fn bad_headers_are_named() {
        let data = [0u8; 8];
        let cases = [
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "key 'extra'"),
            ("{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}", "Fortran order"),
            ("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", "dtype '>f4'"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "needs 12 data bytes"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "non-negative"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "malformed"),
            ("{'descr': '<f4', 'shape': (2,)}", "no 'fortran_order'"),
            ("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "twice"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", "too large"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "tuple"),
        ];
        for (dict, expected) in cases {
            let error = decode(&file(dict, &data)).unwrap_err();
            assert!(error.contains(expected), "{dict}: {error}");
        }
        assert!(decode(b"\x93NUMPX\x01\x00\x00\x00").unwrap_err().contains("magic"));
        assert!(decode(b"\x93NUMPY\x09\x00\x00\x00").unwrap_err().contains("version"));
        assert!(decode(b"\x93NUMPY\x01\x00\xff\x00{").unwrap_err().contains("past the end"));
    }

    /// Decodes `bytes` both in memory and from a file ([`read`], which
    /// reads the header and the data separately), checking that the two
    /// agree; the result of the file read.
    fn decode_and_read(bytes: &[u8]) -> Result<Npy, String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "tempo-npy-test-{}-{}.npy",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, bytes).unwrap();
        let from_file = read(&path);
        std::fs::remove_file(&path).unwrap();
        let in_memory = decode(bytes);
        match (&from_file, &in_memory) {
            (Ok(a), Ok(b)) => assert_eq!((&a.shape, &a.data), (&b.shape, &b.data)),
            (Err(a), Err(b)) => assert_eq!(a, b),
            _ => panic!("read and decode disagree on {bytes:?}: {from_file:?} vs {in_memory:?}"),
        }
        from_file
    }

    /// A version 1.0 file with the raw header text `header` (no padding or
    /// newline added) followed by `data`.
    fn raw(header: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header);
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn truncated_and_odd_files_are_errors_not_panics() {
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
        let full = file(dict, &[0, 0, 128, 63, 0, 0, 0, 64]);
        // Every prefix of a good file: an error naming what is missing.
        for len in 0..full.len() {
            let error = decode_and_read(&full[..len]).unwrap_err();
            assert!(
                ["magic", "header length", "past the end", "needs 8 data bytes"].iter().any(|m| error.contains(m)),
                "{len} bytes: {error}"
            );
        }
        assert_eq!(decode_and_read(&full).unwrap().data, Data::F32(vec![1.0, 2.0]));
        // Data shorter and longer than the header says.
        let short = file("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", &[0; 5]);
        assert!(decode_and_read(&short).unwrap_err().contains("needs 48 data bytes, but the file holds 5"));
        let long = file(dict, &[0; 9]);
        assert!(decode_and_read(&long).unwrap_err().contains("needs 8 data bytes, but the file holds 9"));
        // Headers ending before the 12 bytes read first (a version 1.0
        // header of length 0 or 1, with data after it): the reader cut the
        // header at 12 bytes and panicked.
        let error = decode_and_read(&raw(b"", &[0; 20])).unwrap_err();
        assert!(error.contains("does not end with a newline"), "{error}");
        let error = decode_and_read(&raw(b"\n", &[0; 2])).unwrap_err();
        assert!(error.contains("malformed"), "{error}");
        let error = decode_and_read(&raw(b"\n", &[])).unwrap_err();
        assert!(error.contains("malformed"), "{error}");
        // A header length past the end, and the largest header lengths.
        assert!(decode_and_read(&raw(b"{}", &[])).unwrap_err().contains("newline"));
        let mut huge = b"\x93NUMPY\x02\x00\xff\xff\xff\xff".to_vec();
        huge.extend_from_slice(b"{}\n");
        assert!(decode_and_read(&huge).unwrap_err().contains("past the end"));
        let mut huge = b"\x93NUMPY\x01\x00\xff\xff".to_vec();
        huge.extend_from_slice(b"{}\n");
        assert!(decode_and_read(&huge).unwrap_err().contains("past the end"));
        // A version 2.0 file cut inside its 4-byte header length.
        assert!(decode_and_read(b"\x93NUMPY\x02\x00\x10\x00").unwrap_err().contains("inside the header length"));
        // A header that is not padded to 64 bytes: the data starts right
        // after it, wherever that is.
        let unpadded = raw(b"{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}\n", &5i32.to_le_bytes());
        assert_eq!(decode_and_read(&unpadded).unwrap().data, Data::I32(vec![5]));
        // Empty arrays, and bools that are not 0 or 1.
        let empty = file("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 3), }", &[]);
        let npy = decode_and_read(&empty).unwrap();
        assert_eq!((npy.shape, npy.data), (vec![0, 3], Data::I64(vec![])));
        let bools = file("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", &[1, 2]);
        assert!(decode_and_read(&bools).unwrap_err().contains("byte 2"));
        // A version 3.0 header that is not UTF-8.
        let mut bad_utf8 = b"\x93NUMPY\x03\x00\x02\x00\x00\x00".to_vec();
        bad_utf8.extend_from_slice(b"\xff\n");
        assert!(decode_and_read(&bad_utf8).unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn unreadable_paths_are_errors() {
        let dir = std::env::temp_dir();
        assert!(read(&dir).unwrap_err().starts_with("cannot read"));
        assert!(read(&dir.join("tempo-npy-test-no-such-file.npy")).unwrap_err().starts_with("cannot read"));
    }
}
