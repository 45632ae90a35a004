package jsonrpc

import (
	"bytes"
	"strings"
	"unsafe"
)

// Copies and byte searches over a long line are made a piece at a time,
// each piece in a call of its own. The runtime's memmove and IndexByte are
// assembly, where a goroutine cannot be stopped: the signal that preempts a
// goroutine only takes effect in Go code, and a loop of 64 KiB copies spends
// nearly all its time inside them. A collection, which must stop every
// goroutine at its start and end, then waited for the whole copy or search,
// with every other goroutine of the process held up meanwhile: a 100 MiB
// line joined from its pieces stopped a ping for up to 700 ms. A call (a
// function with a stack check) is where a goroutine that was asked to
// stop stops at once.

// bulkPiece is the most one call copies or searches: tens of
// microseconds.
const bulkPiece = 256 << 10

// appendBulk is append(dst, src...) in pieces of bulkPiece bytes.
func appendBulk(dst, src []byte) []byte {
	if len(src) <= bulkPiece {
		return append(dst, src...)
	}
	dst = growBulk(dst, len(src))
	for len(src) > 0 {
		n := min(len(src), bulkPiece)
		dst = appendPiece(dst, src[:n])
		src = src[n:]
	}
	return dst
}

// growBulk makes room for n more bytes in b, as one allocation.
//
//go:noinline
func growBulk(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	return append(make([]byte, 0, len(b)+n), b...)
}

// appendPiece is one piece of appendBulk: a call, where a goroutine
// asked to stop stops.
//
//go:noinline
func appendPiece(dst, src []byte) []byte { return append(dst, src...) }

// joinPieces returns the pieces joined into one new slice, a piece a
// call (appendPiece), in memory not zeroed first (makeNoZero).
func joinPieces(pieces [][]byte) []byte {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	line := makeNoZero(n)[:0]
	for _, p := range pieces {
		line = appendPiece(line, p)
	}
	return line
}

// makeNoZero returns n bytes of new memory without zeroing them first,
// for a caller that writes every one before it reads any: zeroing 50 MiB
// that a copy then writes over took a fifth of the time a line of that
// size took to read. strings.Builder is the standard library's one way to
// such memory (bytes.Join's too, but its loop holds a collection up): Grow
// takes room for n bytes, and the slice is that room, found from the
// address of the builder's string, which nothing else holds.
func makeNoZero(n int) []byte {
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // a string of one byte has an address: the room's
	return unsafe.Slice(unsafe.StringData(b.String()), n)
}

// indexByteBulk is bytes.IndexByte(b, c) in pieces of bulkPiece bytes.
func indexByteBulk(b []byte, c byte) int {
	for off := 0; off < len(b); off += bulkPiece {
		if i := indexBytePiece(b[off:min(off+bulkPiece, len(b))], c); i >= 0 {
			return off + i
		}
	}
	return -1
}

// indexBytePiece is one piece of indexByteBulk.
//
//go:noinline
func indexBytePiece(b []byte, c byte) int { return bytes.IndexByte(b, c) }
