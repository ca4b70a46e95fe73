// A Rust program that writes a line per `write` call, unbuffered, for the tests of the
// tracer: `lines FILE`.
use std::io::Write;

fn main() {
    let path = std::env::args().nth(1).expect("lines FILE");
    let mut file = std::fs::File::create(path).expect("create");
    for i in 0..5000 {
        writeln!(file, "line {i}").expect("write"); // the offending call
    }
}
