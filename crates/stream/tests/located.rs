//! What the stream locates of each sample, on a generated capture whose
//! every frame is known: the stack's numbers root first, those shared with
//! the thread's previous stack kept; the sample's own address given the
//! stack leaf's number when the callchain starts at the ip, its own when
//! not (an LBR call graph); a location met before keeping its number with
//! the cache and numbered anew without; numbering forgotten on a restart.

use std::io::Cursor;

use perfq_reader::Capture;
use perfq_stream::{
    Flow, Interrupted, Locate, Located, Locating, Location, LocationKey, Numbering, Own, Role,
    Sink, Stream,
};
use perfq_symbolize::FrameLookup;
use perfq_testgen::attr::sample_type as st;
use perfq_testgen::{Attr, Callchain, CaptureSpec, EventSpec, SampleSpec, Sampling, Writer};

/// A sample: thread, ip, user callchain (innermost first).
type Spec = (u32, u64, &'static [u64]);

/// One cpu-clock event with callchains, and `samples` of process 5.
fn capture(samples: &[Spec]) -> Capture {
    let mut a = Attr::new(1, 0);
    a.sample_type = st::IP | st::TID | st::TIME | st::CALLCHAIN | st::CPU | st::PERIOD;
    a.sampling = Sampling::Period(1000);
    let spec = CaptureSpec::software(vec![EventSpec {
        name: "cpu-clock".into(),
        attr: a,
        cpus: vec![0],
    }]);
    let mut w = Writer::new(Cursor::new(Vec::new()), &spec).expect("writer");
    for (i, &(tid, ip, user)) in samples.iter().enumerate() {
        w.sample(&SampleSpec {
            event: 0,
            ip,
            pid: 5,
            tid,
            time: 1000 + i as u64,
            cpu: 0,
            period: 1000,
            callchain: Callchain { kernel: &[], user },
            reads: &[],
        })
        .expect("sample");
    }
    let (out, _) = w.finish_into().expect("finish");
    Capture::from_bytes(out.into_inner()).expect("opens")
}

/// A key with its role, so that the tests see which number was asked
/// for what.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Asked(u64, Role);

impl LocationKey for Asked {
    fn of(l: Location, _: &FrameLookup, role: Role) -> Self {
        match l {
            Location::Unmapped { addr } => Asked(addr, role),
            other => panic!("nothing is mapped: {other:?}"),
        }
    }
}

/// Numbers every key asked for anew, keeping them in order.
#[derive(Default)]
struct Every(Vec<Asked>);

impl Numbering<Asked> for Every {
    fn number(&mut self, key: Asked) -> u32 {
        self.0.push(key);
        self.0.len() as u32 - 1
    }
}

/// Each sample's numbers; a restart after the sample `restart_after`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    /// (stack, new in stack, own)
    samples: Vec<(Vec<u32>, usize, Option<u32>)>,
    restart_after: Option<usize>,
}

impl Sink for Seen {
    type Key = Asked;
    type Numbers = Every;
    type Error = Interrupted;

    fn sample(&mut self, s: &Located<'_, '_, '_>, _: &mut Every) -> Result<Flow, Interrupted> {
        self.samples
            .push((s.stack().to_vec(), s.new_in_stack(), s.own()));
        Ok(match self.restart_after == Some(self.samples.len() - 1) {
            true => Flow::Restart,
            false => Flow::Go,
        })
    }
}

fn locate(samples: &[Spec], locate: Locate, restart_after: Option<usize>) -> (Seen, Vec<Asked>) {
    let capture = capture(samples);
    let mut seen = Seen {
        restart_after,
        ..Seen::default()
    };
    let mut numbers = Every::default();
    let mut stream = Stream::new(&capture);
    stream
        .run(
            &mut Locating::new(locate),
            &mut numbers,
            &mut seen,
            &mut |_, _| {},
        )
        .expect("not interrupted");
    assert_eq!(stream.finish().damage.summary(), None);
    (seen, numbers.0)
}

const STACK: Role = Role::Stack { expand: false };

/// As a conversion locates.
const CONVERT: Locate = Locate {
    stack: true,
    own: Own::AfterStack,
    branches: true,
    cache: true,
    expand_unwound: false,
};

#[test]
fn own_address_is_the_stack_leaf_only_when_the_chain_starts_at_it() {
    let samples: &[Spec] = &[
        (5, 0x1000, &[0x1000, 0x2005, 0x3005]),
        // The same chain from another ip (an LBR call graph).
        (5, 0x1100, &[0x1000, 0x2005, 0x3005]),
    ];
    let (seen, asked) = locate(samples, CONVERT, None);
    // Return addresses are looked up one byte back, root first.
    assert_eq!(
        asked,
        [
            Asked(0x3004, STACK),
            Asked(0x2004, STACK),
            Asked(0x1000, STACK),
            Asked(0x1100, Role::Own)
        ]
    );
    assert_eq!(seen.samples[0], (vec![0, 1, 2], 3, Some(2)));
    assert_eq!(seen.samples[1], (vec![0, 1, 2], 0, Some(3)));
}

#[test]
fn shared_frames_keep_their_numbers_and_the_cache_keeps_the_rest() {
    let samples: &[Spec] = &[
        (5, 0x1000, &[0x1000, 0x2005, 0x3005]),
        (5, 0x1500, &[0x1500, 0x2005, 0x3005]),
        // Another thread: nothing shared, every frame met before.
        (6, 0x1000, &[0x1000, 0x2005, 0x3005]),
    ];
    let (seen, asked) = locate(samples, CONVERT, None);
    assert_eq!(asked.len(), 4, "{asked:?}");
    assert_eq!(seen.samples[1], (vec![0, 1, 3], 1, Some(3)));
    assert_eq!(seen.samples[2], (vec![0, 1, 2], 3, Some(2)));
}

#[test]
fn without_the_cache_each_unshared_frame_is_numbered_anew_after_the_own_address() {
    let report = Locate {
        stack: true,
        own: Own::First,
        branches: false,
        cache: false,
        expand_unwound: true,
    };
    let samples: &[Spec] = &[
        (5, 0x1000, &[0x1000, 0x2005]),
        (6, 0x1000, &[0x1000, 0x2005]),
        (6, 0x1000, &[0x1000, 0x2005]),
    ];
    let (seen, asked) = locate(samples, report, None);
    assert_eq!(
        asked[..3],
        [
            Asked(0x1000, Role::Own),
            Asked(0x2004, STACK),
            Asked(0x1000, STACK)
        ]
    );
    assert_eq!(seen.samples[0], (vec![1, 2], 2, Some(0)));
    assert_eq!(seen.samples[1], (vec![4, 5], 2, Some(3)));
    // The thread's previous stack: shared whole, only the own address new.
    assert_eq!(seen.samples[2], (vec![4, 5], 0, Some(6)));
}

#[test]
fn a_restart_forgets_shared_stacks_and_cached_numbers() {
    let samples: &[Spec] = &[
        (5, 0x1000, &[0x1000, 0x2005]),
        (5, 0x1000, &[0x1000, 0x2005]),
    ];
    let (seen, asked) = locate(samples, CONVERT, Some(0));
    assert_eq!(asked.len(), 4);
    assert_eq!(seen.samples[1], (vec![2, 3], 2, Some(3)));
}

#[test]
fn nothing_is_numbered_unless_asked() {
    let samples: &[Spec] = &[(5, 0x1000, &[0x1000, 0x2005])];
    let (seen, asked) = locate(samples, Locate::default(), None);
    assert!(asked.is_empty());
    assert_eq!(seen.samples, [(vec![], 0, None)]);
}
