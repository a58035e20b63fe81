//! Replaying the committed inputs of a fuzz target (`fuzz/seeds/<target>` and
//! `fuzz/regressions/<target>`) through its body, for the `fuzz_regressions` tests of
//! this crate and of `turnsim`.
//!
//! Guarantee: a crash the fuzzer found, once fixed and saved as a regression input,
//! is re-checked by a plain stable `cargo test`, through exactly the code libFuzzer
//! ran, and a failure names every input file that panicked, not only the first. One
//! definition serves both crates, so what "replayed" means cannot drift between them.
//!
//! Test support, compiled only with the `fuzzing` feature.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The seed and regression files of `target` under `fuzz`, sorted; `None` when there
/// is no `fuzz` directory (a crate built outside its repository).
fn inputs(fuzz: &Path, target: &str) -> Option<Vec<PathBuf>> {
    if !fuzz.is_dir() {
        return None;
    }
    let mut files = Vec::new();
    for kind in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a readable directory entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Some(files)
}

/// Runs every committed input of `target` under the fuzz directory `fuzz` through
/// `body`. Panics when the target has no seed, or naming every input whose run
/// panicked; with no `fuzz` directory it replays nothing and says so on stderr.
pub fn replay(fuzz: &Path, target: &str, body: fn(&[u8])) {
    let Some(files) = inputs(fuzz, target) else {
        eprintln!("no fuzz/ directory beside the crate: nothing to replay for {target}");
        return;
    };
    assert!(!files.is_empty(), "fuzz/seeds/{target} holds no input");
    let failed: Vec<String> = files
        .iter()
        .filter(|file| {
            let data = std::fs::read(file).expect("a readable input file");
            catch_unwind(AssertUnwindSafe(|| body(&data))).is_err()
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs panicked:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}
