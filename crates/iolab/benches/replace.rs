//! Byte-replacement kernels (`,` → `;` in CSV-like data), 4 KiB to 64 MiB, against a plain
//! byte loop (which the compiler vectorizes) and `memchr`-driven replacement.
//!
//! Every iteration replaces back and forth (`,` → `;`, then `;` → `,`), so each pass
//! finds the same number of matches. Run with `cargo bench --bench replace`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iolab_lab::kernel::Kernel;
use iolab_lab::kernel::replace::Replacer;

/// CSV-like bytes: digits with a `,` about every 6.5 bytes and a `\n` every 65.
fn haystack(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % 65 == 64 {
                b'\n'
            } else if state % 13 < 2 {
                b','
            } else {
                b'0' + (state % 10) as u8
            }
        })
        .collect()
}

/// The loop a newcomer writes; LLVM turns it into compare-and-blend vectors.
fn byte_loop(buf: &mut [u8], from: u8, to: u8) {
    for b in buf.iter_mut() {
        if *b == from {
            *b = to;
        }
    }
}

/// Jumps from match to match with `memchr`: good for rare matches, poor for dense ones.
fn memchr_loop(buf: &mut [u8], from: u8, to: u8) {
    let mut at = 0;
    while let Some(i) = memchr::memchr(from, &buf[at..]) {
        buf[at + i] = to;
        at += i + 1;
    }
}

fn kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("replace-comma");
    let mut len = 4 << 10;
    while len <= 64 << 20 {
        let mut data = haystack(len);
        group.throughput(Throughput::Bytes(2 * len as u64));
        for kernel in Kernel::ALL {
            if let Some(r) = Replacer::new(kernel) {
                group.bench_function(BenchmarkId::new(kernel.name(), len), |b| {
                    b.iter(|| {
                        r.replace(black_box(&mut data), b',', b';');
                        r.replace(black_box(&mut data), b';', b',')
                    })
                });
            }
        }
        group.bench_function(BenchmarkId::new("byte-loop", len), |b| {
            b.iter(|| {
                byte_loop(black_box(&mut data), b',', b';');
                byte_loop(black_box(&mut data), b';', b',')
            })
        });
        group.bench_function(BenchmarkId::new("memchr", len), |b| {
            b.iter(|| {
                memchr_loop(black_box(&mut data), b',', b';');
                memchr_loop(black_box(&mut data), b';', b',')
            })
        });
        len *= 16;
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = kernels
}
criterion_main!(benches);
