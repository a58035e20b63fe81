//! The reference engine through the engine protocol is the reference engine: the same
//! seeds give the same run digests through the pipe as in process, under version 1
//! (a digest in every reply, one request at a time) and version 2 (digests on
//! demand, twin inputs in batches) alike.

use crate::stdio_support;

use turnsim::Reference;
use turnsim::run_seed;
use turnsim::stdio_engine::StdioFactory;

#[test]
fn reference_through_the_pipe_gives_the_in_process_digest_on_every_seed() {
    let bin = stdio_support::stdio_reference();
    let piped = StdioFactory::new(&bin).expect("the example says hello");
    assert_eq!(turnsim::EngineFactory::name(&piped), "reference");
    assert_eq!(piped.protocol(), 2);
    for seed in 0..2000 {
        let direct = run_seed(&Reference, seed, false);
        let through = run_seed(&piped, seed, false);
        assert_eq!(through.violation, direct.violation, "seed {seed}");
        assert_eq!(through.digest, direct.digest, "seed {seed}");
        assert_eq!(through.events, direct.events, "seed {seed}");
    }
}

#[test]
fn protocol_1_and_protocol_2_give_the_in_process_digest_alike() {
    let bin = stdio_support::stdio_reference();
    // The harness names 2 as its newest; a variable the harness is told to add wins,
    // so the example answers in version 1.
    let v1 = StdioFactory::with_env(&bin, vec![("TURNSIM_PROTOCOL".into(), "1".into())])
        .expect("the example says hello");
    assert_eq!(v1.protocol(), 1);
    let v2 = StdioFactory::new(&bin).expect("the example says hello");
    assert_eq!(v2.protocol(), 2);
    for seed in 0..300 {
        let direct = run_seed(&Reference, seed, false);
        let one = run_seed(&v1, seed, false);
        let two = run_seed(&v2, seed, false);
        assert_eq!(
            (&one.violation, &one.digest),
            (&direct.violation, &direct.digest),
            "seed {seed}"
        );
        assert_eq!(
            (&two.violation, &two.digest),
            (&direct.violation, &direct.digest),
            "seed {seed}"
        );
    }
}
