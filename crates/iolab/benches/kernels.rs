//! Newline-counting kernels against the `bytecount` and `memchr` crates, 4 KiB to 64 MiB.
//!
//! The haystack is text with a newline about every 110 bytes, like the line-count data
//! sets. Run with `cargo bench --bench kernels`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iolab_lab::kernel::{ByteCounter, Kernel};

fn haystack(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state.is_multiple_of(110) {
                b'\n'
            } else {
                b'a' + (state % 26) as u8
            }
        })
        .collect()
}

fn kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("count-newlines");
    let mut len = 4 << 10;
    while len <= 64 << 20 {
        let data = haystack(len);
        group.throughput(Throughput::Bytes(len as u64));
        for kernel in Kernel::ALL {
            if let Some(counter) = ByteCounter::new(kernel) {
                group.bench_with_input(BenchmarkId::new(kernel.name(), len), &data, |b, d| {
                    b.iter(|| counter.count(black_box(d), b'\n'))
                });
            }
        }
        group.bench_with_input(BenchmarkId::new("bytecount", len), &data, |b, d| {
            b.iter(|| bytecount::count(black_box(d), b'\n'))
        });
        group.bench_with_input(BenchmarkId::new("memchr", len), &data, |b, d| {
            b.iter(|| memchr::arch::all::memchr::One::new(b'\n').count(black_box(d)))
        });
        #[cfg(target_arch = "x86_64")]
        if let Some(one) = memchr::arch::x86_64::avx2::memchr::One::new(b'\n') {
            group.bench_with_input(BenchmarkId::new("memchr-avx2", len), &data, |b, d| {
                b.iter(|| one.count(black_box(d)))
            });
        }
        len *= 4;
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
