//! The `turnsim` binary: a thin shell around [`turnsim::cli`].

fn main() {
    std::process::exit(turnsim::cli::main_with(std::env::args().collect()));
}
