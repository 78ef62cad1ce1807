//! `patchgate`: the server and the command line in one binary. Thin: parse, dispatch, exit.

fn main() -> patchgate::exit::Exit {
    patchgate::cli::main()
}
