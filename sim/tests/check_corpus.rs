//! The corpus made here by running real tools offline against `turnsim serve`
//! (`sim/tests/data/corpus.json` lists each file with the tool and version that wrote
//! it): `turnsim check` must give each file the verdict written down from reading it
//! by hand, finding for finding, and every such file must be listed, so a new
//! recording cannot land without its verdict.

use serde_json::Value;
use std::path::{Path, PathBuf};
use turnsim::check::{FileReport, Severity, check_file};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(data().join("corpus.json")).expect("reads");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["files"].as_array().expect("a list").clone()
}

/// A finding as the manifest writes it: `severity check/kind` and its place.
fn named(r: &FileReport) -> Vec<String> {
    r.findings
        .kept
        .iter()
        .map(|f| {
            let severity = match f.severity {
                Severity::Violation => "violation",
                _ => "info",
            };
            let mut s = format!("{severity} {}/{}", f.check, f.kind);
            let p = &f.place;
            for (name, v) in [
                ("line", p.line),
                ("window", p.window),
                ("request", p.request),
                ("message", p.message),
                ("block", p.block),
            ] {
                if let Some(v) = v {
                    s.push_str(&format!(" {name}={v}"));
                }
            }
            s
        })
        .collect()
}

#[test]
fn every_corpus_file_gets_the_verdict_read_by_hand() {
    let files = manifest();
    assert!(files.len() >= 10, "{}", files.len());
    for entry in &files {
        let name = entry["file"].as_str().expect("a file");
        let r = check_file(&data().join(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            r.format,
            entry["format"].as_str().expect("a format"),
            "{name}"
        );
        let want: Vec<String> = entry["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f.as_str().expect("a string").to_owned())
            .collect();
        assert_eq!(named(&r), want, "{name}");
        for (key, n) in entry["stats"].as_object().expect("stats") {
            assert_eq!(
                Some(r.stat(key) as u64),
                n.as_u64(),
                "{name}: {key} in {:?}",
                r.stats
            );
        }
    }
}

#[test]
fn every_recorded_corpus_file_is_in_the_manifest() {
    let listed: Vec<String> = manifest()
        .iter()
        .map(|e| e["file"].as_str().expect("a file").to_owned())
        .collect();
    let mut found = Vec::new();
    for dir in ["openai", "transcripts", "cassettes/go-vcr", "gemini"] {
        let Ok(entries) = std::fs::read_dir(data().join(dir)) else {
            continue;
        };
        for e in entries {
            let name = e.expect("entry").file_name().into_string().expect("UTF-8");
            if name.contains("-corpus-") {
                found.push(format!("{dir}/{name}"));
            }
        }
    }
    found.sort();
    let mut want = listed.clone();
    want.sort();
    assert_eq!(found, want);
}
