//! Templates' run settings (`endpoint`, `model`, sampling in the header): `tstlab transfer
//! --template T` uses them, the command line's own options win. Checked with `--dry-run`, which
//! sends nothing.

use crate::bin;
use std::path::Path;
use tstlab::store::Store;

const HEADER: &str = "name: served\nendpoint: http://127.0.0.1:9/v1\nmodel: served-name\ntemperature: 0.5\nmax_new: 20\n";

fn dry_run(home: &Path, store: &Path, template: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut c = bin::tstlab(home);
    c.arg("--store").arg(store).args(["transfer", "--dataset", "demo-sentiment", "--direction", "negative->positive", "--template"]);
    c.arg(template).args(["--limit", "3", "--dry-run", "--json"]).args(extra);
    c.assert()
}

#[test]
fn a_template_names_server_model_and_sampling_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    tstlab::demo::build(&mut Store::open(&store).unwrap()).unwrap();
    let template = dir.path().join("served.prompt");
    std::fs::write(&template, format!("{HEADER}---\nMake it positive: {{sentence}}\n")).unwrap();

    let out = dry_run(dir.path(), &store, &template, &[]).success();
    let v = bin::json(&out.get_output().stdout);
    assert_eq!(v["endpoint"]["url"], "http://127.0.0.1:9/v1");
    assert_eq!(v["endpoint"]["model"], "served-name");
    assert_eq!(v["decoding"]["temperature"], 0.5);
    assert_eq!(v["decoding"]["max_new_tokens"], 20);
    assert_eq!(v["decoding"]["top_p"], 1.0);
    assert_eq!(v["requests"], 3);

    let line = ["--endpoint", "http://127.0.0.1:10/v1", "--model", "other", "--temperature", "0.2"];
    let out = dry_run(dir.path(), &store, &template, &line).success();
    let v = bin::json(&out.get_output().stdout);
    assert_eq!(v["endpoint"]["url"], "http://127.0.0.1:10/v1");
    assert_eq!(v["endpoint"]["model"], "other");
    assert_eq!(v["decoding"]["temperature"], 0.2);
    assert_eq!(v["decoding"]["max_new_tokens"], 20);

    let no_model = dir.path().join("half.prompt");
    std::fs::write(&no_model, "name: half\nendpoint: http://127.0.0.1:9/v1\n---\n{sentence}\n").unwrap();
    let out = dry_run(dir.path(), &store, &no_model, &[]).failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("template half names an endpoint but no `model:`"), "{err}");
}
