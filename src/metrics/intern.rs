//! Token interning for one segment: equal tokens (exact bytes) of a hypothesis and its
//! references get equal small ids, from 1. An open-addressing table of token positions, reused
//! from segment to segment, so interning allocates nothing once warm.

use super::py;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    hash: u64,
    /// The `intern` call that filled the slot; older slots count as empty.
    generation: u32,
    id: u32,
    text: u32,
    start: u32,
    end: u32,
}

#[derive(Debug, Default)]
pub struct Interner {
    slots: Vec<Slot>,
    generation: u32,
    spans: Vec<(u32, u32)>,
}

/// FxHash (rustc's hasher) of a token; equality is still checked on the bytes.
fn fx(b: &[u8]) -> u64 {
    let mut h = 0u64;
    let mut add = |v: u64| h = (h.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    add(u64::from_le_bytes(last) ^ ((b.len() as u64) << 56));
    h
}

impl Interner {
    /// Ids of the tokens of every text into `ids[i]`; `tokens(text, spans)` writes a text's
    /// token byte ranges. Returns the number of distinct tokens.
    pub fn intern(&mut self, texts: &[&str], ids: &mut [Vec<u32>], tokens: impl Fn(&str, &mut Vec<(u32, u32)>)) -> u32 {
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        // At most one token per two bytes: the table stays at most half full.
        let cap = (bytes + texts.len()).next_power_of_two().max(16);
        self.generation = self.generation.wrapping_add(1);
        if self.slots.len() < cap || self.generation == 0 {
            self.slots.clear();
            self.slots.resize(cap.max(self.slots.capacity()), Slot::default());
            self.generation = 1;
        }
        let generation = self.generation;
        let mask = cap - 1;
        let mut next = 0u32;
        for (t, (text, out)) in texts.iter().zip(ids.iter_mut()).enumerate() {
            out.clear();
            tokens(text, &mut self.spans);
            for &(start, end) in &self.spans {
                let key = &text.as_bytes()[start as usize..end as usize];
                let hash = fx(key);
                let mut i = hash as usize & mask;
                let id = loop {
                    let s = self.slots[i];
                    if s.generation != generation {
                        next += 1;
                        self.slots[i] = Slot {
                            hash,
                            generation,
                            id: next,
                            text: t as u32,
                            start,
                            end,
                        };
                        break next;
                    }
                    if s.hash == hash && &texts[s.text as usize].as_bytes()[s.start as usize..s.end as usize] == key {
                        break s.id;
                    }
                    i = (i + 1) & mask;
                };
                out.push(id);
            }
        }
        next
    }
}

/// Byte ranges of Python `str.split()` tokens.
pub fn split_spans(text: &str, out: &mut Vec<(u32, u32)>) {
    out.clear();
    if text.is_ascii() {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && py::is_ascii_space(b[i]) {
                i += 1;
            }
            let start = i;
            while i < b.len() && !py::is_ascii_space(b[i]) {
                i += 1;
            }
            if i > start {
                out.push((start as u32, i as u32));
            }
        }
    } else {
        let base = text.as_ptr() as usize;
        out.extend(py::split(text).map(|t| {
            let s = t.as_ptr() as usize - base;
            (s as u32, (s + t.len()) as u32)
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_tokens_equal_ids() {
        let mut it = Interner::default();
        let mut ids = vec![Vec::new(); 3];
        let n = it.intern(&["a b  a\u{a0}é", "é b c", ""], &mut ids, split_spans);
        assert_eq!(ids, [vec![1, 2, 1, 3], vec![3, 2, 4], vec![]]);
        assert_eq!(n, 4);
        // Many distinct tokens: the table grows with the text.
        let long: String = (0..500).map(|i| format!("w{i} ")).collect();
        assert_eq!(it.intern(&[&long, "w7 w499"], &mut ids[..2], split_spans), 500);
        assert_eq!(ids[1], [8, 500]);
    }
}
