//! The `perfq` binary: [`perfq::main_with`] on the process's arguments,
//! with perfq's allocator.

use std::process::ExitCode;

/// Large blocks on huge pages: see [`perfq::huge_pages`].
#[global_allocator]
static ALLOCATOR: perfq::huge_pages::HugePageBlocks = perfq::huge_pages::HugePageBlocks;

fn main() -> ExitCode {
    ExitCode::from(perfq::main_with(std::env::args_os()))
}
