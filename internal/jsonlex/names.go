package jsonlex

import (
	"bytes"
	"hash/maphash"
)

// pairwise is the number of names up to which [Set.Repeat] compares each
// name with every earlier one instead of hashing.
const pairwise = 8

// Set finds a repeated name among the member names of one object, in time
// linear in their number whatever they are: beyond a few names they are
// put in an open-addressing table under a seeded hash (hash/maphash), so
// crafted names cannot make them collide. The table is kept for the next
// object; a Set holds no pointers into the names.
//
// The zero Set is ready for use. A Set is not safe for concurrent use.
type Set struct {
	tab    []uint64 // hash<<32 | index+1 of the name; 0 is empty
	seed   maphash.Seed
	seeded bool
}

// Repeat reports the smallest i such that name(i) equals name(j) for some
// j < i, among the n names name(0) … name(n-1).
func (s *Set) Repeat(n int, name func(i int) []byte) (int, bool) {
	i, found, _ := s.RepeatStop(n, name, nil)
	return i, found
}

// RepeatStop is Repeat that, when stop is not nil, calls it every
// [StopEvery] names and gives up (stopped true, found false) once it
// returns true: the pass over one object of many members is bounded by a
// deadline like the scan of its members.
func (s *Set) RepeatStop(n int, name func(i int) []byte, stop func() bool) (i int, found, stopped bool) {
	if n <= pairwise {
		for i := 1; i < n; i++ {
			a := name(i)
			for j := range i {
				if bytes.Equal(a, name(j)) {
					return i, true, false
				}
			}
		}
		return 0, false, false
	}
	s.init(n)
	for i := range n {
		if stop != nil && i%StopEvery == StopEvery-1 && stop() {
			return 0, false, true
		}
		a := name(i)
		if s.add(maphash.Bytes(s.seed, a), i, func(j int) bool { return bytes.Equal(a, name(j)) }) {
			return i, true, false
		}
	}
	return 0, false, false
}

// RepeatString is Repeat for names held as strings.
func (s *Set) RepeatString(n int, name func(i int) string) (int, bool) {
	if n <= pairwise {
		for i := 1; i < n; i++ {
			a := name(i)
			for j := range i {
				if a == name(j) {
					return i, true
				}
			}
		}
		return 0, false
	}
	s.init(n)
	for i := range n {
		a := name(i)
		if s.add(maphash.String(s.seed, a), i, func(j int) bool { return a == name(j) }) {
			return i, true
		}
	}
	return 0, false
}

// init empties the table, sized for n names.
func (s *Set) init(n int) {
	size := 64
	for 5*size < 8*n { // at most five eighths in use
		size *= 2
	}
	if cap(s.tab) < size {
		s.tab = make([]uint64, size)
	} else {
		s.tab = s.tab[:size]
		clear(s.tab)
	}
	if !s.seeded {
		s.seed, s.seeded = maphash.MakeSeed(), true
	}
}

// add enters name i, of hash h, into the table, unless some name j already
// there has the same hash and equal(j): it then reports true.
func (s *Set) add(h uint64, i int, equal func(j int) bool) bool {
	mask := uint64(len(s.tab) - 1)
	tag := h >> 32 << 32
	for j := h & mask; ; j = (j + 1) & mask {
		e := s.tab[j]
		if e == 0 {
			s.tab[j] = tag | uint64(i+1)
			return false
		}
		if e>>32<<32 == tag && equal(int(uint32(e))-1) {
			return true
		}
	}
}

// Footprint is the number of table entries s holds, a measure of its
// memory.
func (s *Set) Footprint() int { return cap(s.tab) }
