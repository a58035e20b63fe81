//! Whether a client's software is there, asked once before any run: its programs, and
//! for a profile that runs a Python script, the modules that script imports.
//!
//! Guarantee: a refusal is a fact observed, never a guess, and nothing else refuses. A
//! program is missing when no file of its name is at its path or on `PATH`; a module is
//! missing when the profile's own interpreter, started as the client is started (the
//! same `PATH`, the client's environment with an empty HOME of its own, in the run
//! directory's nearest existing ancestor, so a version manager's shim that picks the
//! interpreter by directory picks the client's, and with the script's directory first
//! on `sys.path`, as `python3 SCRIPT` has it), exits non-zero on `import MODULE`. A
//! refusal names what is missing and how to install it, and `drive` exits 8 on it
//! before any run, so a client that cannot start is never judged. A client whose
//! software is there is run exactly as before: the check only reads.

use super::invoke::env_for;
use super::procs;
use super::profiles::{self, Profile, Vars, substitute};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long one import may take before the check gives up on the interpreter.
const IMPORT_DEADLINE: Duration = Duration::from_secs(20);

/// Where `program` would be found: itself when it names a path, else the first
/// `PATH` entry that holds it.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Why `profile`'s client cannot run here (`client NAME: …`, with what to install), or
/// `None` when every program and module it needs is there; its runs would be written
/// under `out`.
pub fn refusal(profile: &Profile, out: &Path) -> Option<String> {
    for command in [&profile.command, &profile.resume] {
        let program = command.first().map(String::as_str).unwrap_or_default();
        // A custom command may start with a placeholder; it is checked when it runs.
        if !program.contains('{') && find_program(program).is_none() {
            return Some(format!(
                "client {}: {program:?} is not installed or not on PATH{}",
                profile.name,
                profiles::install_hint(&profile.name).map_or(String::new(), |h| format!("; {h}"))
            ));
        }
    }
    let imports = profiles::python_imports(&profile.name);
    if imports.is_empty() {
        return None;
    }
    let home = match fresh_dir(&std::env::temp_dir()) {
        Ok(h) => h,
        Err(e) => {
            return Some(format!(
                "client {}: cannot make a HOME to check its Python modules in ({}): {e}",
                profile.name,
                std::env::temp_dir().display()
            ));
        }
    };
    let why = check_imports(profile, imports, &home, &nearest_existing(out));
    let _ = std::fs::remove_dir_all(&home);
    why
}

/// A new empty directory under `parent`, made by this call (`create_dir` fails on a
/// name that exists, so two checks at once never share one).
fn fresh_dir(parent: &Path) -> std::io::Result<PathBuf> {
    let pid = std::process::id();
    let mut i = 0u32;
    loop {
        let dir = parent.join(format!("turnsim-drive-imports-{pid}-{i}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && i < 10_000 => i += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Imports every module of `imports` with the interpreters of `profile`'s commands (each
/// distinct one once), in the client's environment with `home` as HOME and `cwd` as
/// the working directory; the refusal for the first that fails.
fn check_imports(
    profile: &Profile,
    imports: &[(&str, &str)],
    home: &Path,
    cwd: &Path,
) -> Option<String> {
    let vars = Vars {
        base_url: "http://127.0.0.1:9".into(),
        prompt: String::new(),
        home: home.display().to_string(),
        work: cwd.display().to_string(),
        resume: false,
    };
    let mut seen: Vec<&str> = Vec::new();
    for command in [&profile.command, &profile.resume] {
        let Some(python) = command.first().map(String::as_str) else {
            continue;
        };
        if seen.contains(&python) {
            continue;
        }
        seen.push(python);
        // `python3 SCRIPT` starts `sys.path` with the script's directory.
        let script_dir = command
            .get(1)
            .map(|a| PathBuf::from(substitute(a, &vars)))
            .filter(|a| a.extension().is_some_and(|e| e == "py"))
            .and_then(|a| a.parent().map(Path::to_path_buf));
        let at = Where {
            script_dir: script_dir.as_deref(),
            cwd,
        };
        for (module, package) in imports {
            let Err(missing) = import(python, module, &at, &vars, &profile.env) else {
                continue;
            };
            return Some(missing.refusal(&profile.name, python, module, package));
        }
    }
    None
}

/// An import that failed: the interpreter's own path (`sys.executable`, when it got
/// that far) and the last line of its error.
#[derive(Debug, PartialEq, Eq)]
pub struct Missing {
    pub executable: Option<String>,
    pub why: String,
}

impl Missing {
    /// The refusal: what failed, and the install command for that interpreter.
    pub fn refusal(&self, client: &str, python: &str, module: &str, package: &str) -> String {
        let exe = self.executable.as_deref().unwrap_or(python);
        format!(
            "client {client}: {python:?} ({exe}) cannot import {module} ({}); install it into \
             that interpreter: `{exe} -m pip install {package}`, or put a {python} that has \
             it first on PATH (the client runs with a HOME of its own, so a `pip install \
             --user` package is not seen)",
            self.why
        )
    }
}

/// Where an import is tried: the working directory, and the script's directory that
/// `python3 SCRIPT` puts first on `sys.path` (none: `-c`'s own, the working directory).
pub struct Where<'a> {
    pub script_dir: Option<&'a Path>,
    pub cwd: &'a Path,
}

/// `path`, made absolute, or its nearest ancestor that exists.
fn nearest_existing(path: &Path) -> PathBuf {
    let mut p = std::env::current_dir().unwrap_or_default().join(path);
    while !p.is_dir() && p.pop() {}
    p
}

/// Runs `python -c "import sys; print(sys.executable); import MODULE"` in `at.cwd`
/// with `at.script_dir` first on `sys.path` (unless the interpreter is told not to put
/// a script's directory there, `-P` or `PYTHONSAFEPATH`) and the environment of a
/// client of a profile whose extra environment is `profile_env`; `Ok` when it exits 0.
pub fn import(
    python: &str,
    module: &str,
    at: &Where<'_>,
    vars: &Vars,
    profile_env: &[(String, String)],
) -> Result<(), Missing> {
    let first = at.script_dir.map_or(String::new(), |d| {
        // A JSON string is a Python string literal.
        let dir = serde_json::to_string(&d.display().to_string()).unwrap_or_default();
        format!("getattr(sys.flags, 'safe_path', False) or sys.path.__setitem__(0, {dir}); ")
    });
    let mut cmd = Command::new(python);
    cmd.args([
        "-c",
        &format!("import sys; print(sys.executable, flush=True); {first}import {module}"),
    ])
    .current_dir(at.cwd)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let (removed, set) = env_for(vars, profile_env, "turnsim-drive-import-check", false);
    for k in removed {
        cmd.env_remove(k);
    }
    cmd.envs(set);
    let child = cmd.spawn().map_err(|e| Missing {
        executable: None,
        why: format!("cannot start it: {e}"),
    })?;
    // Its output is read while it runs (a full pipe would stall it), by a thread that
    // hands it over unless the deadline passes first.
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(IMPORT_DEADLINE) {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            let _ = reader.join();
            return Err(Missing {
                executable: None,
                why: format!("cannot wait for it: {e}"),
            });
        }
        Err(_) => {
            procs::signal_group(pgid, libc::SIGKILL);
            let _ = reader.join();
            return Err(Missing {
                executable: None,
                why: format!(
                    "the import did not finish within {} s",
                    IMPORT_DEADLINE.as_secs()
                ),
            });
        }
    };
    let _ = reader.join();
    if out.status.success() {
        return Ok(());
    }
    let status = out.status;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let executable = stdout
        .lines()
        .next()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned);
    let why = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map_or_else(|| format!("exit status {status}"), str::to_owned);
    Err(Missing { executable, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(home: &str) -> Vars {
        Vars {
            base_url: "http://127.0.0.1:9".into(),
            prompt: String::new(),
            home: home.into(),
            work: home.into(),
            resume: false,
        }
    }

    /// `python3`'s `sys.executable`, as the check reads it.
    fn executable() -> String {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn a_module_the_interpreter_cannot_import_is_missing_with_its_error_and_interpreter() {
        let tmp = std::env::temp_dir();
        let at = Where {
            script_dir: None,
            cwd: &tmp,
        };
        let got = import(
            "python3",
            "turnsim_no_such_module_0",
            &at,
            &vars(&tmp.display().to_string()),
            &[],
        );
        let missing = Missing {
            executable: Some(executable()),
            why: "ModuleNotFoundError: No module named 'turnsim_no_such_module_0'".into(),
        };
        assert_eq!(got, Err(missing));
    }

    #[test]
    fn a_module_the_interpreter_imports_is_not_missing() {
        let tmp = std::env::temp_dir();
        let v = vars(&tmp.display().to_string());
        let at = Where {
            script_dir: Some(&tmp),
            cwd: &tmp,
        };
        assert_eq!(import("python3", "json", &at, &v, &[]), Ok(()));
    }

    #[test]
    fn the_refusal_names_the_interpreter_the_module_and_the_pip_command_for_it() {
        let m = Missing {
            executable: Some("/opt/py/bin/python3.12".into()),
            why: "ModuleNotFoundError: No module named 'anthropic'".into(),
        };
        assert_eq!(
            m.refusal("python-sdk", "python3", "anthropic", "anthropic"),
            "client python-sdk: \"python3\" (/opt/py/bin/python3.12) cannot import anthropic \
             (ModuleNotFoundError: No module named 'anthropic'); install it into that \
             interpreter: `/opt/py/bin/python3.12 -m pip install anthropic`, or put a python3 \
             that has it first on PATH (the client runs with a HOME of its own, so a `pip \
             install --user` package is not seen)"
        );
    }

    #[test]
    fn a_python_profile_whose_interpreter_imports_its_sdk_is_not_refused() {
        // `python3 SCRIPT` finds modules beside its script first: a stub `anthropic`
        // there is imported by the check as it would be by the client.
        let dir = std::env::temp_dir().join(format!("turnsim-sdk-stub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("anthropic.py"), "").expect("stub");
        let mut p = profiles::profile("python-sdk", &[]).expect("built in");
        let script = dir.join("loop.py").display().to_string();
        p.command[1] = script.clone();
        p.resume[1] = script;
        let got = refusal(&p, &std::env::temp_dir().join("turnsim-no-such-out"));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got, None);
    }

    #[test]
    fn a_profile_that_runs_no_python_script_checks_no_module() {
        let p = profiles::profile("custom", &["sh".into()]).expect("custom profile");
        assert_eq!(refusal(&p, Path::new("out")), None);
    }
}
