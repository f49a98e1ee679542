//! What the benches of `assay serve` share: the real binary started on a
//! free 127.0.0.1 port, without a token, and the address it printed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Starts `assay serve --port 0 --no-token --max-connections 4096 ARGS…`
/// (the binary of the bench's profile), its stderr going to `stderr`: the
/// process and the address it serves on.
pub fn start(args: &[&std::ffi::OsStr], stderr: Stdio) -> (Child, String) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["serve", "--port", "0", "--no-token", "--max-connections", "4096"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("assay serve starts");
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().rsplit_once("http://").expect("assay serve prints its address").1.to_owned();
    (server, address)
}
