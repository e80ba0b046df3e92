//! `perfq dump --symbols`: every sample location resolved up front, in a
//! first read of the capture, so that the output's read only looks up.

use perfq_reader::Capture;
use perfq_stream::{
    Flow, Interner, Interrupted, Locate, Located, Locating, Location, SampleView, Sink, Stream,
    Take,
};
use perfq_symbolize::{Config, FrameLookup, Resolutions, Symbolizer};

/// The resolved locations and, per frame of one sample, its lookup and
/// location index.
pub(super) type SymbolizedFrames<'a> = (&'a Resolutions, &'a [(FrameLookup, u32)]);

/// What both reads of `dump --symbols` locate of a sample: its stack.
pub(super) const LOCATE: Locate = Locate {
    stack: true,
    own: perfq_stream::Own::Not,
    branches: false,
    cache: true,
    expand_unwound: false,
};

/// Symbolization of `perfq dump --symbols`: every sample location resolved
/// up front (one read of the capture), so the output's read only looks up.
pub(super) struct Symbols {
    pub(super) resolved: Resolutions,
    pub(super) symbolizer: Symbolizer,
}

impl Symbols {
    /// The symbols, and the locations met, by number: the output's read
    /// numbers them again and finds the same numbers.
    pub(super) fn collect(
        capture: &Capture,
        config: &Config,
    ) -> Result<(Symbols, Interner<Location>), Interrupted> {
        let mut stream = Stream::new(capture);
        let symbolizer = Symbolizer::new(
            config,
            stream.tracker().kernel_build_id(),
            capture.meta().os_release.as_deref(),
        );
        let mut interning = Interning(symbolizer);
        let mut interner = Interner::new();
        // What could not be read is said by the output's read.
        stream.run(
            &mut Locating::new(LOCATE),
            &mut interner,
            &mut interning,
            &mut |_, _| {},
        )?;
        let tracker = stream.finish().tracker;
        let resolved = interning.0.resolve_all(&tracker, interner.keys());
        let symbols = Symbols {
            resolved,
            symbolizer: interning.0,
        };
        Ok((symbols, interner))
    }
}

/// The first read of `dump --symbols`: every frame's location numbered.
struct Interning(Symbolizer);

impl Sink for Interning {
    type Key = Location;
    type Numbers = Interner<Location>;
    type Error = Interrupted;

    fn take(&mut self, view: &SampleView<'_, '_>) -> Take {
        match view.sample().pid {
            Some(_) => Take::Locate,
            None => Take::Skip,
        }
    }

    fn symbolizer(&self) -> Option<&Symbolizer> {
        Some(&self.0)
    }

    fn sample(
        &mut self,
        _: &Located<'_, '_, '_>,
        _: &mut Interner<Location>,
    ) -> Result<Flow, Self::Error> {
        Ok(Flow::Go)
    }
}

/// What a dump's read takes of a sample: with symbols, the stack of a
/// sample with a pid, located; otherwise the sample as it is.
pub(super) fn take(symbols: Option<&Symbols>, view: &SampleView<'_, '_>) -> Take {
    match (symbols, view.sample().pid) {
        (Some(_), Some(_)) => Take::Locate,
        _ => Take::AsIs,
    }
}

/// Fills `frames` with the located sample's frames, leaf first, each with
/// its location's number.
pub(super) fn frames_of(located: &Located<'_, '_, '_>, frames: &mut Vec<(FrameLookup, u32)>) {
    frames.clear();
    // Frames leaf first, their numbers root first.
    let numbers = located.stack().iter().rev();
    let lookups = located.view().frames().iter().copied();
    frames.extend(lookups.zip(numbers.copied()));
}
