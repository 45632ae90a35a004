package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong is wrapped by the error that ends Run when a line is
// longer than Options.MaxLineSize and Options.Oversized does not let the
// connection go on.
var ErrLineTooLong = errors.New("line too long")

// maxHead is how many first bytes of a line over the limit are kept for
// Options.Oversized: a buffer's worth.
const maxHead = 64 << 10

// lineReader splits a stream into lines and keeps at most max bytes of a
// line (its newline not counted; 0: no limit). Of a longer line it keeps
// only the first maxHead bytes, reading the rest as it goes by.
//
// A line that fits in the buffer costs what bufio.Reader.ReadBytes costs:
// one allocation of its size. A longer one is gathered in copies of the
// buffer and then joined, as ReadBytes does: about twice its size at the
// peak. (Growing one slice instead would peak at 1.5 to 3 times, and keep
// the spare capacity.) It notes which buffers are plain (plainPieces).
type lineReader struct {
	br    *bufio.Reader
	max   int
	plain plainPieces // of the last line returned
}

// plainPieces returns what the last line's pieces hold, or nil when none
// can be stepped over (a line read in one buffer is one).
func (r *lineReader) plainPieces() *plainPieces {
	for _, k := range r.plain.pieces {
		if k != mixedPiece {
			return &r.plain
		}
	}
	return nil // nothing to step over
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, maxHead), max: max}
}

// longLine is what is kept of a line over the limit.
type longLine struct {
	head []byte // the first bytes, at most maxHead, a copy
	size int64  // the bytes of the whole line, as far as read, newline not counted
}

// next returns the next line, newline included (none at the end of the
// stream), and the error that ended the stream after it, as ReadBytes
// does. A line over the limit is not returned: long describes it instead,
// and the rest of it is read by without being kept.
func (r *lineReader) next() (line []byte, long *longLine, err error) {
	var frags [][]byte // the full buffers of a line longer than one, copied
	var frag []byte
	var n int64 // the line's bytes before frag
	r.plain.pieces = r.plain.pieces[:0]
	for ; ; n += int64(len(frag)) {
		frag, err = r.br.ReadSlice('\n')
		size := n + int64(len(frag)) // newline not counted
		if err == nil {
			size--
		}
		if long == nil && r.max > 0 && size > int64(r.max) {
			head := frag
			if len(frags) > 0 {
				head = frags[0] // a full buffer: maxHead bytes
			}
			long, frags = &longLine{head: bytes.Clone(head[:min(int64(len(head)), size)])}, nil
		}
		if err == bufio.ErrBufferFull {
			if long == nil {
				r.plain.pieces = append(r.plain.pieces, pieceKind(frag))
				frags = append(frags, bytes.Clone(frag))
			}
			continue
		}
		if long != nil {
			long.size = size
			return nil, long, err
		}
		if frags == nil {
			return bytes.Clone(frag), nil, err // the common case: one copy
		}
		line = make([]byte, 0, n+int64(len(frag)))
		for _, f := range append(frags, frag) {
			line = appendPiece(line, f) // a call each: see bulk.go
		}
		r.plain.cap = cap(line)
		return line, nil, err
	}
}
