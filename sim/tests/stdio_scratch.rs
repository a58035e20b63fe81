mod stdio_support;
use turnsim::stdio_engine::StdioFactory;
#[test]
fn scratch() {
    let cmd = std::env::var("ENGINE").unwrap();
    let n: u64 = std::env::var("SEEDS").unwrap().parse().unwrap();
    let factory = StdioFactory::new(&cmd).expect("hello");
    let t = std::time::Instant::now();
    let s = stdio_support::run_seeds(&factory, 0..n);
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "seeds {} events {} in {:.2}s = {:.0} events/s",
        s.seeds,
        s.events,
        secs,
        s.events as f64 / secs
    );
    for (seed, v) in s.failures.iter().take(5) {
        eprintln!("seed {seed}: {} at {}: {}", v.invariant, v.step, v.message);
    }
    assert!(s.failures.is_empty(), "{} failures", s.failures.len());
}
