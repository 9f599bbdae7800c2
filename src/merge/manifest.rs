//! Combining the manifests of one transfer run found in two stores (its shards, or a copy that
//! went on elsewhere): the same settings key, so the same run. The sessions and kept edits of
//! both are kept (each once), the few-shot exemplars drawn for the items of both are joined, and
//! a shard that differs is dropped (the merged run is no longer one shard; each session still
//! names its own). Anything else stays as the target has it.

use crate::transfer::manifest::Manifest;

/// Why two manifests cannot be joined.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Mismatch(String);

/// What two manifests of the same run make together.
pub fn combine(ours: &str, theirs: &str) -> Result<String, Mismatch> {
    if ours == theirs {
        return Ok(ours.to_owned());
    }
    let (Ok(mut m), Ok(t)) = (serde_json::from_str::<Manifest>(ours), serde_json::from_str::<Manifest>(theirs)) else {
        return Err(Mismatch("the manifests differ and are not transfer manifests".into()));
    };
    if m.key != t.key {
        return Err(Mismatch(format!("settings key {} against {}", m.key, t.key)));
    }
    let before = m.clone();
    for s in t.sessions {
        if !m.sessions.contains(&s) {
            m.sessions.push(s);
        }
    }
    m.sessions.sort_by(|a, b| a.started.cmp(&b.started));
    for e in t.edits {
        if !m.edits.contains(&e) {
            m.edits.push(e);
        }
    }
    m.edits.sort_by(|a, b| a.at.cmp(&b.at));
    if let (Some(ours), Some(theirs)) = (m.few_shot.as_mut(), t.few_shot) {
        for (item, drawn) in theirs.exemplars {
            match ours.exemplars.get(&item) {
                Some(have) if *have != drawn => {
                    return Err(Mismatch(format!("item #{item} has exemplars {have:?} here and {drawn:?} there")));
                }
                Some(_) => {}
                None => {
                    ours.exemplars.insert(item, drawn);
                }
            }
        }
    }
    if m.shard != t.shard {
        m.shard = None;
    }
    if let (Some(ours), Some(theirs)) = (m.endpoint.as_mut(), t.endpoint)
        && ours.served_model.is_none()
    {
        ours.served_model = theirs.served_model;
    }
    if m == before {
        return Ok(ours.to_owned());
    }
    serde_json::to_string(&m).map_err(|e| Mismatch(e.to_string()))
}

/// The status of a run made of two: the least finished one (`running` > `failed` > `cancelled`
/// > `done`), so a merged run is `done` only when every part of it is.
pub fn status<'a>(ours: &'a str, theirs: &'a str) -> &'a str {
    let rank = |s: &str| match s {
        "done" => 0,
        "cancelled" => 1,
        "failed" => 2,
        _ => 3,
    };
    if rank(theirs) > rank(ours) { theirs } else { ours }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_finished_status_wins() {
        assert_eq!(status("done", "done"), "done");
        assert_eq!(status("done", "cancelled"), "cancelled");
        assert_eq!(status("failed", "cancelled"), "failed");
        assert_eq!(status("running", "done"), "running");
    }

    #[test]
    fn other_manifests_must_be_equal() {
        assert_eq!(combine("{\"a\":1}", "{\"a\":1}").unwrap(), "{\"a\":1}");
        assert!(combine("{\"a\":1}", "{\"a\":2}").is_err());
    }
}
