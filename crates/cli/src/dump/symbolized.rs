//! `perfq dump --symbols`: every sample location resolved up front, in a
//! first read of the capture, so that the output's read only looks up.

use perfq_reader::Capture;
use perfq_stream::{Consumer, SampleView, Stream};
use perfq_symbolize::{Config, FrameLookup, LocationInterner, Resolutions, Symbolizer};

/// The resolved locations and, per frame of one sample, its lookup and
/// location index.
pub(super) type SymbolizedFrames<'a> = (&'a Resolutions, &'a [(FrameLookup, u32)]);

/// Symbolization of `perfq dump --symbols`: every sample location resolved
/// up front (one read of the capture), so the output's read only looks up.
pub(super) struct Symbols {
    pub(super) interner: LocationInterner,
    pub(super) resolved: Resolutions,
    pub(super) symbolizer: Symbolizer,
}

impl Symbols {
    pub(super) fn collect(capture: &Capture, config: &Config) -> Symbols {
        let mut stream = Stream::new(capture);
        let symbolizer = Symbolizer::new(
            config,
            stream.tracker().kernel_build_id(),
            capture.meta().os_release.as_deref(),
        );
        let mut interning = Interning {
            symbolizer,
            interner: LocationInterner::new(),
        };
        // What could not be read is said by the output's read.
        let Ok(()) = stream.run(&mut interning, &mut |_, _| {});
        let tracker = stream.finish().tracker;
        let resolved = interning
            .symbolizer
            .resolve_all(&tracker, interning.interner.locations());
        Symbols {
            interner: interning.interner,
            resolved,
            symbolizer: interning.symbolizer,
        }
    }
}

/// The first read of `dump --symbols`: every frame's location numbered.
struct Interning {
    symbolizer: Symbolizer,
    interner: LocationInterner,
}

impl Consumer for Interning {
    type Error = std::convert::Infallible;

    fn sample(&mut self, view: &mut SampleView<'_, '_>) -> Result<(), Self::Error> {
        let Some(pid) = view.sample().pid else {
            return Ok(());
        };
        view.locate_frames(Some(&self.symbolizer));
        for f in view.frames() {
            self.interner.intern(view.tracker(), pid, f);
        }
        Ok(())
    }
}
