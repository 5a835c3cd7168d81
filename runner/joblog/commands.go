package joblog

import (
	"hash/maphash"
	"strconv"
	"strings"
)

// commands indexes a joblog's records by their Command column: for each
// command, the job numbers it ended under, whether one of its records
// under that number succeeded, and whether a Skipper took it.
type commands struct {
	seeds [2]maphash.Seed
	heads map[cmdKey]int32 // the first occurrence of each command
	occs  []occurrence
	// cutKeeps maps the length a cut column had before its cut to the
	// lengths kept of the columns cut from that length.
	cutKeeps map[int][]int
}

// cmdKey is a 128-bit hash of a column: two 64-bit hashes with their own
// seeds, so that two of a million commands collide with odds of about
// 10^-27.
type cmdKey [2]uint64

// occurrence is one job number a command ended under.
type occurrence struct {
	seq       int64
	next      int32 // the command's next occurrence; -1 ends the list
	succeeded bool
	taken     bool
}

// cutMin is the shortest column read as cut by a Writer: a Writer cuts
// only lines longer than 1 KiB, so a shorter column that ends like a cut
// marker is a command that ends that way.
const cutMin = 512

// cutColumn reports whether column was cut by a Writer, and how many of
// its bytes were kept and cut.
func cutColumn(column string) (keep, cut int, ok bool) {
	const open, close = "[... ", " bytes cut]"
	if len(column) < cutMin || !strings.HasSuffix(column, close) {
		return 0, 0, false
	}
	keep = strings.LastIndex(column, open)
	if keep < 0 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(column[keep+len(open) : len(column)-len(close)])
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	return keep, n, true
}

func (c *commands) key(kind byte, s string) cmdKey {
	var k cmdKey
	for i := range k {
		var h maphash.Hash
		h.SetSeed(c.seeds[i])
		h.WriteByte(kind)
		h.WriteString(s)
		k[i] = h.Sum64()
	}
	return k
}

// columnKey is the key of a column as read from a joblog.
func (c *commands) columnKey(column string) cmdKey {
	if keep, n, ok := cutColumn(column); ok {
		total := keep + n
		if !containsInt(c.cutKeeps[total], keep) {
			c.cutKeeps[total] = append(c.cutKeeps[total], keep)
		}
		return c.key('c', column[:keep])
	}
	return c.key('f', column)
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// add records that column ended under job number seq.
func (c *commands) add(column string, seq int64, succeeded bool) {
	if c.heads == nil {
		c.seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
		c.heads, c.cutKeeps = map[cmdKey]int32{}, map[int][]int{}
	}
	k := c.columnKey(column)
	i, ok := c.heads[k]
	if !ok {
		c.heads[k] = c.push(seq, succeeded)
		return
	}
	for {
		o := &c.occs[i]
		if o.seq == seq {
			o.succeeded = o.succeeded || succeeded
			return
		}
		if o.next < 0 {
			n := c.push(seq, succeeded) // may move c.occs, and o with it
			c.occs[i].next = n
			return
		}
		i = o.next
	}
}

func (c *commands) push(seq int64, succeeded bool) int32 {
	c.occs = append(c.occs, occurrence{seq: seq, next: -1, succeeded: succeeded})
	return int32(len(c.occs) - 1)
}

// lists yields the head of each list of occurrences that column (as a
// Writer would write it, uncut) may have been recorded under: its own,
// and those of the cut columns it may have been cut to.
func (c *commands) lists(column string, yield func(head int32)) {
	if c.heads == nil {
		return
	}
	if i, ok := c.heads[c.key('f', column)]; ok {
		yield(i)
	}
	for _, keep := range c.cutKeeps[len(column)] {
		if i, ok := c.heads[c.key('c', column[:keep])]; ok {
			yield(i)
		}
	}
}
