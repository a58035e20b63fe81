//! The `turnsim` binary: a thin shell around [`turnsim::cli`]; it holds no `unsafe`
//! (the Ctrl-C handler's is in the library, `turnsim::cli::interrupt`).
#![forbid(unsafe_code)]

fn main() {
    std::process::exit(turnsim::cli::main_with(std::env::args().collect()));
}
