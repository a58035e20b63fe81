//! The claims both language ports (adapters/python, adapters/node) must make good,
//! written once: each port's test file names its interpreter, script and engine name
//! and calls these, so the two ports are held to exactly the same bar.

use super::{find_replay_and_shrink, interpreter, root, run_reference, run_seeds, run_seeds_twice};
use turnsim::stdio_engine::StdioFactory;

/// One example engine in another language.
pub struct Port {
    /// The interpreter on PATH (`python3`, `node`).
    pub interpreter: &'static str,
    /// The example engine, relative to the workspace root.
    pub script: &'static str,
    /// The name it gives in its hello.
    pub name: &'static str,
    /// The adapter's own unit tests: arguments, and the line the runner prints when
    /// every one of them passed (so a test file that stopped being collected fails).
    pub unit_test_args: &'static [&'static str],
    pub unit_test_summary: &'static str,
}

impl Port {
    fn command(&self, program: &str) -> String {
        format!("{program} '{}'", root().join(self.script).display())
    }

    /// The example passes 2000 seeds and handles exactly as many steps and events as
    /// the reference engine (a faithful port takes the same steps on every seed), but
    /// for the log-borne hostile inputs: records of the reference log format, which
    /// its log of its own does not read, so they are not handed (one event each).
    pub fn passes_2000_seeds_like_the_reference(&self, test: &str) {
        let Some(program) = interpreter(self.interpreter, test) else {
            return;
        };
        let factory = StdioFactory::new(&self.command(&program)).expect("the example says hello");
        assert_eq!(turnsim::EngineFactory::name(&factory), self.name);
        let summary = run_seeds(&factory, 0..2000);
        assert_eq!(summary.seeds, 2000);
        let reference = run_reference(0..2000);
        let not_handed: u64 = summary.hostile_not_applicable.values().sum();
        assert_eq!(
            (summary.steps, summary.events + not_handed),
            (reference.steps, reference.events)
        );
        assert!(reference.hostile_not_applicable.is_empty());
        assert_eq!(summary.failures, Vec::new(), "{} failures", self.name);
    }

    /// The planted bug (a cancel that leaves calls unanswered) fails `pairing`,
    /// replays with the same digest and shrinks.
    pub fn planted_bug_fails_replays_and_shrinks(&self, test: &str) {
        let Some(program) = interpreter(self.interpreter, test) else {
            return;
        };
        let bug = vec![(
            "TURNSIM_EXAMPLE_BUG".to_string(),
            "orphan_on_cancel".to_string(),
        )];
        let factory = StdioFactory::with_env(&self.command(&program), bug).expect("hello");
        find_replay_and_shrink(&factory, "pairing");
    }

    /// The adapter's own unit tests pass, all of them.
    pub fn unit_tests_pass(&self, test: &str) {
        let Some(program) = interpreter(self.interpreter, test) else {
            return;
        };
        let dir = root().join(self.script);
        let dir = dir.parent().expect("the script is in a directory");
        let out = std::process::Command::new(program)
            .args(self.unit_test_args)
            .current_dir(dir)
            .output()
            .expect("the interpreter runs");
        // unittest reports on stderr, node --test on stdout.
        let both = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{both}");
        assert!(both.contains(self.unit_test_summary), "{both}");
    }

    /// Every seed of 0..300 runs the same twice, the two runs on different processes.
    pub fn runs_each_seed_the_same_twice(&self, test: &str) {
        let Some(program) = interpreter(self.interpreter, test) else {
            return;
        };
        let factory = StdioFactory::new(&self.command(&program)).expect("the example says hello");
        let summary = run_seeds_twice(&factory, 0..300);
        assert_eq!(summary.failures, Vec::new(), "determinism failures");
    }
}
