//! Reads NumPy `.npy` files holding one-dimensional float arrays (format versions 1-3), through
//! `npyz`, with errors that name the file and byte.

use super::ImportError;
use npyz::{DType, NpyFile};
use std::path::Path;

/// Reads a 1-D `<f8`/`>f8`/`<f4`/`>f4` array, C or Fortran order (the same for 1-D). Errors
/// about the file as a whole (unreadable, empty) carry no byte offset.
pub fn read_f64(path: &Path) -> Result<Vec<f64>, ImportError> {
    let bytes = crate::input::read(path)?;
    if bytes.is_empty() {
        return Err(ImportError::new(path, None, "empty file"));
    }
    parse_f64(path, &bytes)
}

pub fn parse_f64(path: &Path, bytes: &[u8]) -> Result<Vec<f64>, ImportError> {
    let bad = |byte: usize, why: String| ImportError {
        path: path.to_owned(),
        line: None,
        byte: Some(byte),
        reason: why,
    };
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(bad(0, "not a .npy file (no \\x93NUMPY magic)".into()));
    }
    let file = NpyFile::new(bytes).map_err(|e| bad(0, format!("bad .npy header: {e}")))?;
    let start = if bytes.get(6) == Some(&1) { 10 } else { 12 };
    let shape = file.shape();
    let [n] = shape[..] else {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
        return Err(bad(start, format!("expected a one-dimensional array, shape is {shape}")));
    };
    let size = match file.dtype() {
        DType::Plain(t) if matches!(t.to_string().as_str(), "<f8" | ">f8") => 8,
        DType::Plain(t) if matches!(t.to_string().as_str(), "<f4" | ">f4") => 4,
        DType::Plain(t) => return Err(bad(start, format!("unsupported dtype {:?} (float32/float64 only)", t.to_string()))),
        other => return Err(bad(start, format!("unsupported dtype {} (float32/float64 only)", other.descr()))),
    };
    let header = file.header().clone();
    let data = file.into_inner();
    let end = bytes.len() - data.len();
    if data.len() as u64 != n * size {
        return Err(bad(end, format!("{} data bytes, expected {} for {n} values", data.len(), n * size)));
    }
    let file = NpyFile::with_header(header, data);
    let values = if size == 8 {
        file.into_vec::<f64>()
    } else {
        file.into_vec::<f32>().map(|v| v.into_iter().map(f64::from).collect())
    };
    values.map_err(|e| bad(end, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_owned();
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend((h.len() as u16).to_le_bytes());
        v.extend(h.as_bytes());
        v.extend(data);
        v
    }

    #[test]
    fn reads_float64_and_float32() {
        let p = Path::new("a.npy");
        let data: Vec<u8> = [1.5f64, -2.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        let b = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", &data);
        assert_eq!(parse_f64(p, &b).unwrap(), [1.5, -2.0]);
        let data: Vec<u8> = [0.25f32].iter().flat_map(|f| f.to_be_bytes()).collect();
        let b = npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", &data);
        assert_eq!(parse_f64(p, &b).unwrap(), [0.25]);
    }

    #[test]
    fn reads_format_version_2_and_little_endian_float32() {
        let p = Path::new("a.npy");
        let mut h = "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }".to_owned();
        while (12 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x02\x00".to_vec();
        b.extend((h.len() as u32).to_le_bytes());
        b.extend(h.as_bytes());
        b.extend([1.0f32, 0.5, -4.0].iter().flat_map(|f| f.to_le_bytes()));
        assert_eq!(parse_f64(p, &b).unwrap(), [1.0, 0.5, -4.0]);
        // Trailing bytes after the data are refused, as a short file is.
        b.extend([0u8; 4]);
        assert!(parse_f64(p, &b).unwrap_err().reason.contains("16 data bytes, expected 12"));
    }

    #[test]
    fn refuses_other_shapes_types_and_short_data() {
        let p = Path::new("a.npy");
        let b = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", &[0; 16]);
        assert!(parse_f64(p, &b).unwrap_err().reason.contains("one-dimensional"));
        let b = npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", &[0; 8]);
        assert!(parse_f64(p, &b).unwrap_err().reason.contains("unsupported dtype"));
        let b = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", &[0; 8]);
        let e = parse_f64(p, &b).unwrap_err();
        assert!(e.to_string().starts_with("a.npy (byte 128): 8 data bytes, expected 16"), "{e}");
        assert!(parse_f64(p, b"PK\x03\x04").is_err());
    }
}
