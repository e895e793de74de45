//! `ascendopt-worker`: the sandboxed child process that runs one kernel
//! launch for ascendopt (see `ascendopt_sim::worker`). Not meant to be run
//! by hand.

fn main() -> std::process::ExitCode {
    ascendopt_sim::worker::worker_main()
}
