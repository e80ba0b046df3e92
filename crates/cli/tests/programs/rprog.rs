// Rust half of the symbolization tests: mangled names, a forced-inline
// helper, a generic function and a trait method. Built by the tests with
// `rustc -C opt-level=2 -g -C force-frame-pointers=yes`.
use std::hint::black_box;

#[inline(always)]
fn mix(x: u64) -> u64 {
    let x = x ^ (x >> 33);
    let x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^ (x >> 33)
}

#[inline(never)]
fn leaf_sum(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_add(mix(i.wrapping_add(s)));
    }
    s
}

mod work {
    pub trait Step {
        fn step(&self, x: u64, i: u64) -> u64;
    }

    pub struct Rotl(pub u32);

    impl Step for Rotl {
        #[inline(never)]
        fn step(&self, x: u64, i: u64) -> u64 {
            x.rotate_left(self.0) ^ i.wrapping_mul(0x9e3779b97f4a7c15)
        }
    }

    #[inline(never)]
    pub fn run<S: Step>(s: &S, n: u64) -> u64 {
        let mut x = n;
        for i in 0..n {
            x = s.step(x, i);
        }
        x
    }
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3_000_000);
    let mut r = 0u64;
    for _ in 0..20 {
        r = r.wrapping_add(leaf_sum(black_box(n)));
        r = r.wrapping_add(work::run(&work::Rotl(black_box(7)), black_box(n)));
    }
    println!("{r}");
}
