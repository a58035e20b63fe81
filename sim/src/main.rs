//! The `turnsim` binary: a thin shell around [`turnsim::cli`]; it holds no `unsafe`
//! (the Ctrl-C handler's is in the library, `turnsim::cli::interrupt`).
#![forbid(unsafe_code)]

/// mimalloc rather than the system allocator: a simulated seed allocates and frees
/// many small strings and vectors, and glibc's malloc and free were about 30 % of
/// `turnsim run`'s instructions. Only the binary chooses; the library and `core/`
/// use whatever allocator their embedder sets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(turnsim::cli::main_with(std::env::args().collect()));
}
