//! A reader for NumPy `.npy` files holding one-dimensional float arrays (format versions 1-3:
//! magic, header length, a Python dict literal header, then the raw little- or big-endian data).

use super::ImportError;
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
    if !bytes.starts_with(b"\x93NUMPY") || bytes.len() < 10 {
        return Err(bad(0, "not a .npy file (no \\x93NUMPY magic)".into()));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(bad(6, format!("unsupported .npy version {v}"))),
    };
    let end = start + header_len;
    let header = bytes
        .get(start..end)
        .ok_or_else(|| bad(start, "header runs past the end of the file".into()))?;
    let header = String::from_utf8_lossy(header);
    let descr = dict_value(&header, "descr").ok_or_else(|| bad(start, format!("no 'descr' in header {header:?}")))?;
    let shape = dict_value(&header, "shape").ok_or_else(|| bad(start, format!("no 'shape' in header {header:?}")))?;
    let dims: Vec<usize> = shape
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| bad(start, format!("bad shape {shape}"))))
        .collect::<Result<_, _>>()?;
    let [n] = dims[..] else {
        return Err(bad(start, format!("expected a one-dimensional array, shape is {shape}")));
    };
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let (size, little) = match descr {
        "<f8" | "=f8" => (8, true),
        ">f8" => (8, false),
        "<f4" | "=f4" => (4, true),
        ">f4" => (4, false),
        other => return Err(bad(start, format!("unsupported dtype {other:?} (float32/float64 only)"))),
    };
    let data = &bytes[end..];
    if data.len() != n * size {
        return Err(bad(end, format!("{} data bytes, expected {} for {n} values", data.len(), n * size)));
    }
    Ok(data
        .chunks_exact(size)
        .map(|c| match (size, little) {
            (8, true) => f64::from_le_bytes(c.try_into().unwrap()),
            (8, false) => f64::from_be_bytes(c.try_into().unwrap()),
            (_, true) => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            (_, false) => f32::from_be_bytes(c.try_into().unwrap()) as f64,
        })
        .collect())
}

/// The text after `'key':` in a Python dict literal, up to the next top-level comma.
fn dict_value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
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
