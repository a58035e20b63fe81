//! The floor under engine protocol v1: how long one request/reply round trip over a
//! pair of pipes takes on this machine when the peer does no work at all. Started
//! without arguments it starts itself with `--peer` (which answers every line with
//! the same line, in one write) and times `ROUNDS` lines of `BYTES` bytes, one at a
//! time, as the harness sends them: write the request, block on the reply.
//!
//! `cargo run --release -p turnsim --example pipe_echo -- [ROUNDS [BYTES]]`
//! (defaults: 200000 rounds of 200 bytes, about a median `input` request; the
//! median reply is about the same size). Wall-clock time is the whole point here and
//! reaches nothing but this program's output.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn peer() -> Result<(), String> {
    let mut input = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(()),
            Ok(_) => out
                .write_all(&line)
                .and_then(|()| out.flush())
                .map_err(|e| format!("peer: cannot answer: {e}"))?,
            Err(e) => return Err(format!("peer: cannot read: {e}")),
        }
    }
}

fn arg(args: &[String], i: usize, default: usize, what: &str) -> Result<usize, String> {
    match args.get(i) {
        None => Ok(default),
        Some(a) => a
            .parse()
            .map_err(|_| format!("{what} must be a whole number, got {a:?}")),
    }
}

fn time(args: &[String]) -> Result<(), String> {
    let rounds = arg(args, 0, 200_000, "ROUNDS")?.max(1);
    let bytes = arg(args, 1, 200, "BYTES")?.max(1);
    let me = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
    let mut child = Command::new(me)
        .arg("--peer")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the peer: {e}"))?;
    let (Some(mut to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the peer started without its pipes".into());
    };
    let mut from = BufReader::with_capacity(64 * 1024, from);
    let mut request = vec![b'x'; bytes - 1];
    request.push(b'\n');
    let mut reply = Vec::with_capacity(bytes);
    let started = Instant::now();
    for _ in 0..rounds {
        to.write_all(&request)
            .map_err(|e| format!("cannot write: {e}"))?;
        reply.clear();
        from.read_until(b'\n', &mut reply)
            .map_err(|e| format!("cannot read: {e}"))?;
        if reply.len() != bytes {
            return Err(format!(
                "the peer answered {} bytes, not {bytes}",
                reply.len()
            ));
        }
    }
    let secs = started.elapsed().as_secs_f64();
    drop(to);
    let _ = child.wait();
    println!(
        "{rounds} round trips of {bytes} bytes in {secs:.3} s: {:.2} µs each, {:.0} round trips/s",
        secs * 1e6 / rounds as f64,
        rounds as f64 / secs
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("--peer") => peer(),
        _ => time(&args),
    };
    if let Err(e) = result {
        eprintln!("pipe_echo: {e}");
        std::process::exit(2);
    }
}
