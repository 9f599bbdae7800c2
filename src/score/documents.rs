//! The corpus of a corpus-dependent per-output metric: CIDEr-D's idf (docs/METHODS.md, CIDEr-D).
//! Per direction, one document per item that has an output (of any system), holding the texts
//! its outputs are compared with (the source, the first reference or every reference). This is
//! pycocoevalcap's idf when one system's outputs of the whole direction are scored in one call;
//! it does not depend on the systems, the shard or whether one direction or the whole dataset is
//! scored. A digest of the documents is part of the scorer's configuration, so new documents
//! make a new cache key.

use super::Selection;
use crate::metrics::cider::{Idf, Tokenize};
use crate::metrics::family::Against;
use crate::store::{self, Store};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// CIDEr-D's idf for every direction of the selection, and the digest of their documents.
pub fn cider_idf(store: &Store, sel: &Selection, against: Against, tokenize: Tokenize) -> store::Result<(HashMap<i64, Idf>, String)> {
    let mut docs: BTreeMap<i64, Vec<Vec<String>>> = BTreeMap::new();
    for i in store.item_sources(sel.dataset_id, sel.direction_id, true)? {
        let texts = store.reference_texts(i.item_id)?;
        if let Some(doc) = against.pick(&i.source, &texts) {
            docs.entry(i.direction_id).or_default().push(doc.into_iter().map(str::to_owned).collect());
        }
    }
    let mut h = Sha256::new();
    for (direction, d) in &docs {
        h.update(format!("direction {direction}: {} documents\n", d.len()).as_bytes());
        for texts in d {
            h.update(serde_json::to_string(texts).expect("strings").as_bytes());
            h.update(b"\n");
        }
    }
    let idf = docs
        .into_par_iter()
        .map(|(direction, d)| {
            let tokens: Vec<Vec<Vec<String>>> = d.iter().map(|texts| texts.iter().map(|t| tokenize.tokens(t)).collect()).collect();
            (direction, Idf::new(&tokens))
        })
        .collect();
    Ok((idf, hex::encode(&h.finalize()[..8])))
}
