//! The reference engine through engine protocol v1 is the reference engine: the same
//! seeds give the same run digests through the pipe as in process.

mod stdio_support;

use turnsim::Reference;
use turnsim::run_seed;
use turnsim::stdio_engine::StdioFactory;

#[test]
fn reference_through_the_pipe_gives_the_in_process_digest_on_every_seed() {
    let bin = stdio_support::stdio_reference();
    let piped = StdioFactory::new(&bin).expect("the example says hello");
    assert_eq!(turnsim::EngineFactory::name(&piped), "reference");
    for seed in 0..2000 {
        let direct = run_seed(&Reference, seed, false);
        let through = run_seed(&piped, seed, false);
        assert_eq!(through.violation, direct.violation, "seed {seed}");
        assert_eq!(through.digest, direct.digest, "seed {seed}");
        assert_eq!(through.events, direct.events, "seed {seed}");
    }
}
