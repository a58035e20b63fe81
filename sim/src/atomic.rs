//! Atomic file writing, in one place for every file turnsim writes.
//!
//! Guarantee: after [`write_atomic`] returns `Ok`, `path` holds exactly the new bytes
//! and the rename is durable; if it fails or the machine dies half-way, `path` holds
//! the old file (or nothing, if there was none), never a mix, and no temp file is left
//! behind by a failure this process saw. The steps: write a temp file in the same
//! directory (a rename is atomic only within one file system), fsync it, rename it
//! over `path`, fsync the directory so the rename itself survives a crash.
//!
//! Why one module: scenarios, reports, recordings and exported transcripts are all
//! read back by tools and by people, and a torn file there looks like a bug in
//! whatever reads it. One implementation means one place to get fsync right.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temp files of concurrent writers within one process (e.g. rayon
/// workers saving scenarios into the same directory).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Why a file could not be written: the file, the step that failed, and the OS error.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {step}: {source}", path.display())]
pub struct AtomicWriteError {
    pub path: PathBuf,
    /// What was being done: "creating the directory", "writing the temp file", ...
    pub step: &'static str,
    #[source]
    pub source: io::Error,
}

/// Replaces `path` with `bytes` atomically and durably (see the module comment).
/// Creates missing parent directories. Directory fsync is best-effort: not every
/// platform can open a directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AtomicWriteError> {
    let fail = |step: &'static str| {
        move |source: io::Error| AtomicWriteError {
            path: path.to_path_buf(),
            step,
            source,
        }
    };
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| {
        fail("naming the file")(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        ))
    })?;
    fs::create_dir_all(&dir).map_err(fail("creating the directory"))?;
    let temp = dir.join(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = create_temp(&temp)
        .map_err(fail("writing the temp file"))
        .and_then(|mut file| {
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(fail("writing the temp file"))
        })
        .and_then(|()| fs::rename(&temp, path).map_err(fail("renaming the temp file")));
    if let Err(err) = written {
        // Best-effort cleanup; the write error is the one worth reporting.
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn create_temp(temp: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(temp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test, removed by the test when it passes.
    fn temp_dir(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("turnsim-atomic-test-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temp_file() {
        let dir = temp_dir("atomic");
        let path = dir.join("out.json");
        write_atomic(&path, b"old contents that are longer").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(names_in(&dir), ["out.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_creates_missing_parent_directories() {
        let dir = temp_dir("parents");
        let path = dir.join("a/b/c.json");
        write_atomic(&path, b"x").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"x");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_to_a_directory_fails_names_the_path_and_cleans_up() {
        let dir = temp_dir("onto_dir");
        let target = dir.join("sub");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("keep"), b"k").unwrap();
        let err = write_atomic(&target, b"x").unwrap_err();
        assert_eq!(err.path, target);
        assert_eq!(err.step, "renaming the temp file");
        assert!(
            err.to_string().starts_with(&format!(
                "cannot write {}: renaming the temp file: ",
                target.display()
            )),
            "{err}"
        );
        assert_eq!(names_in(&dir), ["sub"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_without_a_file_name_is_an_error_naming_it() {
        let err = write_atomic(Path::new("/"), b"x").unwrap_err();
        assert_eq!(err.step, "naming the file");
        assert_eq!(err.source.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "cannot write /: naming the file: / names no file"
        );
    }
}
