//! The directory `turnsim run` writes into (`--out`, and the directory of
//! `--summary-json`), made and probed before any seed runs.
//!
//! Guarantee: a directory that cannot be written is found before the run, not after
//! it (exit 6 with the OS's reason), and the directories made for a run that wrote
//! nothing into them are removed again, so a clean run leaves no empty folders.

use std::path::{Path, PathBuf};

/// The `--out` directory, made and probed before the run. Remembers the directories
/// it made, so a run that writes nothing leaves none behind.
pub(super) struct OutDir {
    pub(super) path: PathBuf,
    made: Vec<PathBuf>,
}

impl OutDir {
    pub(super) fn prepare(path: &Path) -> Result<OutDir, String> {
        let mut made = Vec::new();
        let mut missing = Some(path);
        while let Some(p) = missing.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            made.push(p.to_path_buf());
            missing = p.parent();
        }
        let fail = |e: std::io::Error| format!("--out {}: cannot write there: {e}", path.display());
        std::fs::create_dir_all(path).map_err(fail)?;
        let probe = path.join(format!(".turnsim-probe-{}", std::process::id()));
        std::fs::write(&probe, b"").map_err(fail)?;
        std::fs::remove_file(&probe).map_err(fail)?;
        Ok(OutDir {
            path: path.to_path_buf(),
            made,
        })
    }

    /// Removes the directories `prepare` made, innermost first, while they are empty.
    pub(super) fn tidy(&self) {
        for dir in &self.made {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}
