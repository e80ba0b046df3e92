//! Location ids given on the samples thread while the reading thread
//! finds the locations.
//!
//! The reading thread is the conversion's bottleneck while it reads: every
//! other thread waits for its samples. Finding a frame's location needs the
//! address spaces as of that sample, so it stays there (behind a
//! [`LocationCache`](perfq_symbolize::LocationCache)); but giving the
//! location its id is a probe of a table of hundreds of thousands of
//! locations, a cache miss or two each time the cache misses, and needs
//! nothing of the reading thread's. So the reading thread numbers each
//! location it finds by ticket (the order it found them in) and sends the
//! locations along with the samples, and the samples thread, which has time
//! to spare, interns them in that same order and turns the samples'
//! tickets into ids. The ids are those the reading thread would have
//! given: the first location found is id 0, and so on.

use perfq_ids::{IdTable, KeyHash};
use perfq_symbolize::Location;

use crate::Error;

/// The reading side: the locations found since the last batch went out.
#[derive(Default)]
pub(crate) struct Tickets {
    /// Found since the last [`Tickets::hand_over`], in ticket order.
    found: Vec<Location>,
    /// Tickets handed over before `found`'s first.
    handed: u32,
    /// How many of `found` [`Tickets::fresh`] gave out.
    seen: usize,
    /// Whether tickets ran out (more than `u32::MAX` lookups).
    exhausted: bool,
}

impl Tickets {
    /// The ticket of location `l`: the number of locations found before it.
    #[inline]
    pub(crate) fn ticket(&mut self, l: Location) -> u32 {
        match self.handed.checked_add(self.found.len() as u32) {
            Some(t) if t < u32::MAX => {
                self.found.push(l);
                t
            }
            _ => {
                self.exhausted = true;
                u32::MAX
            }
        }
    }

    /// The locations found since the last call (to warm their binaries).
    pub(crate) fn fresh(&mut self) -> &[Location] {
        let from = std::mem::replace(&mut self.seen, self.found.len());
        self.found.get(from..).unwrap_or_default()
    }

    /// Moves the locations found so far into `into` (empty, a batch's),
    /// to go to the samples thread with the samples whose tickets they are.
    pub(crate) fn hand_over(&mut self, into: &mut Vec<Location>) {
        into.clear();
        std::mem::swap(&mut self.found, into);
        self.handed += into.len() as u32;
        self.seen = 0;
    }

    /// An error if tickets ran out: the capture has more frame lookups
    /// than ids can number, and the stacks written would be wrong.
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.exhausted {
            return Err(Error::Arrow(format!(
                "more than {} location lookups: the capture is too large to convert whole",
                u32::MAX
            )));
        }
        Ok(())
    }
}

/// The samples thread's side: every location found, interned in ticket
/// order.
#[derive(Default)]
pub(crate) struct TicketIds {
    table: IdTable,
    /// Ids given before `locations`' first (earlier segments, see
    /// [`TicketIds::cut`]).
    base: u32,
    /// The distinct locations of this segment, by id less `base`.
    locations: Vec<Location>,
    /// By ticket: its location's id.
    ids: Vec<u32>,
    /// The hashes of the locations being added (kept for the next batch).
    hashes: Vec<KeyHash>,
}

/// How many locations ahead [`TicketIds::add`] asks for slots.
const AHEAD: usize = 8;

impl TicketIds {
    /// Interns the locations of the next tickets, in order.
    ///
    /// Most are new (on a system-wide capture three in four), and each
    /// lookup's first read, its slot in a table of millions, is a cache
    /// miss: the slots of the locations [`AHEAD`] places on are asked for
    /// while this one is looked up, so that the misses overlap.
    pub(crate) fn add(&mut self, found: &[Location]) {
        self.ids.reserve(found.len());
        self.hashes.clear();
        self.hashes.extend(found.iter().map(IdTable::hash));
        for (i, (&l, &hash)) in found.iter().zip(&self.hashes).enumerate() {
            if let Some(&ahead) = self.hashes.get(i + AHEAD) {
                self.table.prefetch(ahead);
            }
            let id = self.table.id_in_hashed(hash, l, &mut self.locations);
            self.ids.push(self.base.saturating_add(id));
        }
    }

    /// The id of ticket `t`, handed over with [`TicketIds::add`] before.
    #[inline]
    pub(crate) fn id(&self, t: u32) -> u32 {
        // Every ticket in a batch was added with that batch or before; an
        // unknown one can only be the exhausted marker, which ends the
        // conversion with an error before it is written.
        self.ids.get(t as usize).copied().unwrap_or(u32::MAX)
    }

    /// The locations of this segment (ids from the last cut's on, in
    /// order), and a new segment: locations added from now on get ids
    /// after theirs, and none is looked up again (a location met again
    /// gets a new id). Tickets handed over before keep their ids.
    pub(crate) fn cut(&mut self) -> Vec<Location> {
        let segment = std::mem::take(&mut self.locations);
        self.table = IdTable::default();
        self.base = self.base.saturating_add(segment.len() as u32);
        segment
    }

    /// The id the segment's first location gets.
    pub(crate) fn first_id(&self) -> u32 {
        self.base
    }

    /// Locations in this segment so far.
    pub(crate) fn segment_len(&self) -> usize {
        self.locations.len()
    }

    /// The distinct locations of the last segment, by id less the ids
    /// cut before.
    pub(crate) fn into_locations(self) -> Vec<Location> {
        self.locations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids come out as interning in one place would give them, whichever
    /// batches the tickets travelled in.
    #[test]
    fn ids_are_first_found_first_numbered_across_batches() {
        let loc = |a: u64| Location::Unmapped { addr: a % 700 };
        let mut tickets = Tickets::default();
        let mut ids = TicketIds::default();
        let mut batch = Vec::new();
        let mut given = Vec::new();
        for a in 0..5_000u64 {
            given.push((a, tickets.ticket(loc(a))));
            if a % 333 == 0 {
                tickets.hand_over(&mut batch);
                ids.add(&batch);
            }
        }
        tickets.hand_over(&mut batch);
        ids.add(&batch);
        tickets.check().unwrap();
        for (a, t) in given {
            assert_eq!(t, a as u32);
            assert_eq!(ids.id(t), (a % 700) as u32);
        }
        assert_eq!(ids.into_locations(), (0..700).map(loc).collect::<Vec<_>>());
    }

    /// After a cut, new locations (and ones met before it) get ids after
    /// the cut's; tickets given before it keep theirs.
    #[test]
    fn cuts_number_on_and_keep_earlier_tickets() {
        let loc = |a: u64| Location::Unmapped { addr: a };
        let mut tickets = Tickets::default();
        let mut ids = TicketIds::default();
        let mut batch = Vec::new();
        let early = [
            tickets.ticket(loc(1)),
            tickets.ticket(loc(2)),
            tickets.ticket(loc(1)),
        ];
        tickets.hand_over(&mut batch);
        ids.add(&batch);
        assert_eq!(early.map(|t| ids.id(t)), [0, 1, 0]);
        assert_eq!(ids.segment_len(), 2);
        assert_eq!(ids.cut(), vec![loc(1), loc(2)]);
        assert_eq!(ids.segment_len(), 0);
        assert_eq!(ids.first_id(), 2);
        let late = [
            tickets.ticket(loc(2)),
            tickets.ticket(loc(3)),
            tickets.ticket(loc(2)),
        ];
        tickets.hand_over(&mut batch);
        ids.add(&batch);
        assert_eq!(late.map(|t| ids.id(t)), [2, 3, 2]);
        assert_eq!(
            early.map(|t| ids.id(t)),
            [0, 1, 0],
            "earlier tickets keep their ids"
        );
        assert_eq!(ids.into_locations(), vec![loc(2), loc(3)]);
    }

    /// `fresh` gives each found location once, also across a hand-over.
    #[test]
    fn fresh_gives_each_location_once() {
        let mut tickets = Tickets::default();
        let l = |a| Location::Unmapped { addr: a };
        tickets.ticket(l(1));
        tickets.ticket(l(2));
        assert_eq!(tickets.fresh(), &[l(1), l(2)]);
        tickets.ticket(l(3));
        assert_eq!(tickets.fresh(), &[l(3)]);
        assert!(tickets.fresh().is_empty());
        tickets.ticket(l(4));
        tickets.hand_over(&mut Vec::new());
        assert!(tickets.fresh().is_empty());
    }
}
