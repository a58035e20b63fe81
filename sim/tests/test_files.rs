//! With `autotests = false` (sim/Cargo.toml), a test file that `all.rs` does not name
//! is never compiled and its tests never run, silently. This keeps every file in
//! `sim/tests/` a module of the one binary.

use std::path::Path;

#[test]
fn every_test_file_is_a_module_of_the_one_test_binary() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let all = std::fs::read_to_string(dir.join("all.rs")).expect("tests/all.rs is readable");
    let declared: Vec<&str> = all
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/ is readable") {
        let path = entry.expect("a directory entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_test_file = path.extension().is_some_and(|e| e == "rs") && stem != "all";
        if is_test_file && !declared.contains(&stem) {
            missing.push(stem.to_string());
        }
    }
    missing.sort();
    assert_eq!(
        missing,
        Vec::<String>::new(),
        "files in sim/tests/ that tests/all.rs does not declare"
    );
    // The check sees the files it should: this one among them.
    assert!(declared.contains(&"test_files"), "{declared:?}");
}
