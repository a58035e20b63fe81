//! The `turnsim serve` and `turnsim check DIR` entry points: arguments, the server's
//! configuration from them, and the console line per request.
//!
//! Guarantee: a bad argument or an unwritable directory is reported before the server
//! listens, with the path in the message and the file-error exit code.

use super::*;
use crate::options::FaultKind;

/// One line for the console: index, method, target, answer, verdict.
pub fn log_line(r: &Record) -> String {
    let verdict = match &r.verdict {
        None => String::new(),
        Some(v) if v.is_clean() => format!(" [{} #{}] ok", v.conversation, v.conversation_request),
        Some(v) => format!(
            " [{} #{}] VIOLATION {}",
            v.conversation,
            v.conversation_request,
            v.lines().join("; ")
        ),
    };
    let ids = if r.answer.tool_use_ids.is_empty() {
        String::new()
    } else {
        format!(" tools {}", r.answer.tool_use_ids.join(","))
    };
    format!(
        "#{} {} {} -> {} {} ({}){ids}{verdict}",
        r.index, r.method, r.target, r.answer.status, r.answer.outcome, r.answer.played
    )
}

/// `turnsim serve` arguments.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ServeArgs {
    /// Seed of the generator; with it, the seed's provider faults are on (as in
    /// `turnsim run`). Without it (and without --scenario): seed 0, no faults.
    #[cfg_attr(feature = "cli", arg(long))]
    pub seed: Option<u64>,
    /// A turnsim scenario or a serve script (`"format": "turnsim-serve-script"`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub scenario: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub port: u16,
    /// Write one JSON file per request (headers, body, answer, verdict) here.
    #[cfg_attr(feature = "cli", arg(long))]
    pub record: Option<PathBuf>,
    /// Keep the seed's shape but inject no faults.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_faults: bool,
    /// Where the ledger and the scratch files of generated tool calls go (default: a
    /// fresh directory under the system's temp dir); a relative path is made
    /// absolute, as the tool commands run in the client's own directory.
    #[cfg_attr(feature = "cli", arg(long))]
    pub workdir: Option<PathBuf>,
    /// Longest sleep in a generated shell command, in milliseconds.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1000))]
    pub max_sleep_ms: u32,
}

/// The configuration `turnsim serve` runs with.
pub fn config_from_args(a: &ServeArgs) -> Result<ServeConfig, String> {
    let mut script = match &a.scenario {
        Some(path) => script::load_script(path)?,
        None => Script::seeded(a.seed.unwrap_or(0), a.seed.is_some()),
    };
    if let (Some(seed), Some(_)) = (a.seed, &a.scenario) {
        script.seed = seed;
    }
    if a.no_faults {
        script.faults = false;
    }
    let dir = a.workdir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("turnsim-serve-{}", std::process::id()))
    });
    // The ledger and scratch paths go into tool commands a client runs in its own
    // working directory: a relative one would point nowhere from there.
    let dir = std::path::absolute(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut config = ServeConfig::new(script, &dir);
    config.workspace.max_sleep_ms = a.max_sleep_ms;
    config.record = a.record.clone();
    config.echo = true;
    config.keep_records = false;
    std::fs::create_dir_all(&config.workspace.scratch)
        .map_err(|e| format!("{}: {e}", config.workspace.scratch.display()))?;
    if let Some(dir) = &config.record {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(config)
}

/// The seed's faults a generated reply can carry (the provider's own: `turnsim run`'s
/// host and engine faults have no meaning here).
const SERVED_FAULTS: [FaultKind; 5] = [
    FaultKind::ProviderErrorBefore,
    FaultKind::ProviderErrorMid,
    FaultKind::Hang,
    FaultKind::ToolStopOther,
    FaultKind::ReusedIds,
];

/// What the start-up banner says of faults, so that `--seed N` shows what the seed
/// holds before any request arrives: the served kinds the seed switches on, each
/// with its chance per generated reply, or why there are none.
pub fn faults_line(script: &Script) -> String {
    let seed = script.seed;
    if !script.faults {
        return format!("faults: none (seed {seed}, faults off)");
    }
    let on: Vec<String> = SERVED_FAULTS
        .iter()
        .filter_map(|k| script.options.fault(*k).map(|r| format!("{k} {r}")))
        .collect();
    if on.is_empty() {
        return format!("faults: none (seed {seed} switches on no provider fault)");
    }
    format!(
        "faults (seed {seed}, per generated reply): {}",
        on.join(", ")
    )
}

/// Runs `turnsim serve`; returns the exit code.
#[cfg(feature = "serve")]
pub fn serve_main(a: &ServeArgs) -> i32 {
    let config = match config_from_args(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return crate::exit::Exit::File.code();
        }
    };
    crate::stdout::Stdout::new("serve")
        .print(&format!("turnsim serve: {}\n", faults_line(&config.script)));
    match http::run(config, a.port) {
        Ok(()) => crate::exit::Exit::Pass.code(),
        Err(e) => {
            eprintln!("turnsim serve: 127.0.0.1:{}: {e}", a.port);
            crate::exit::Exit::File.code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_names_the_provider_faults_a_seed_switches_on() {
        let mut script = Script::seeded(7, true);
        script.options.faults.clear();
        assert_eq!(
            faults_line(&script),
            "faults: none (seed 7 switches on no provider fault)"
        );
        script
            .options
            .faults
            .insert(FaultKind::Hang, crate::options::Ratio::new(1, 40));
        script
            .options
            .faults
            .insert(FaultKind::Crash, crate::options::Ratio::new(1, 2));
        script.options.faults.insert(
            FaultKind::ProviderErrorBefore,
            crate::options::Ratio::new(1, 10),
        );
        assert_eq!(
            faults_line(&script),
            format!(
                "faults (seed 7, per generated reply): provider_error_before {}, hang {}",
                crate::options::Ratio::new(1, 10),
                crate::options::Ratio::new(1, 40)
            )
        );
        script.faults = false;
        assert_eq!(faults_line(&script), "faults: none (seed 7, faults off)");
    }

    #[test]
    fn a_relative_workdir_becomes_absolute_so_tool_commands_work_from_any_directory() {
        let rel = PathBuf::from(format!(
            "target/turnsim-serve-cli-test-{}",
            std::process::id()
        ));
        let a = ServeArgs {
            seed: None,
            scenario: None,
            port: 0,
            record: None,
            no_faults: false,
            workdir: Some(rel.clone()),
            max_sleep_ms: 1000,
        };
        let config = config_from_args(&a).expect("a config");
        let ledger = &config.workspace.ledger;
        assert!(ledger.is_absolute(), "{}", ledger.display());
        assert!(ledger.starts_with(std::env::current_dir().expect("cwd").join(&rel)));
        let _ = std::fs::remove_dir_all(&rel);
    }
}
