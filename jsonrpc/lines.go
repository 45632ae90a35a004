package jsonrpc

import (
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong is wrapped by the error that ends Run when a line is
// longer than Options.MaxLineSize and Options.Oversized does not let the
// connection go on.
var ErrLineTooLong = errors.New("line too long")

// maxHead is the size of the read buffer, and of the pieces of a longer
// line; of a line over the limit, the first maxHead bytes are kept for
// Options.Oversized.
const maxHead = 64 << 10

// lineReader splits a stream into lines and keeps at most max bytes of a
// line (its newline not counted; 0: no limit). Of a longer line it keeps
// only the first maxHead bytes, reading the rest by into its buffer.
//
// A line that ends in the buffer costs what bufio.Reader.ReadBytes costs:
// one allocation of its size. A longer one is read straight into pieces
// of the buffer's size (the buffer the first, its start maybe moved to
// the front; the reads write the others, no copy), each classified while
// it is in the cache (plainPieces), and they are joined at its end
// (joinPieces): about twice its size at the peak, as ReadBytes, which
// also copies each piece out of its buffer. (Growing one slice instead
// would peak at 1.5 to 3 times, and keep the spare capacity.) The pieces
// are new memory not zeroed first: rd must write every byte it counts,
// as files and sockets do.
type lineReader struct {
	rd         io.Reader
	buf        []byte // maxHead bytes; buf[start:end] is read and not yet returned
	start, end int
	err        error // what ended the stream, once read
	max        int
	plain      plainPieces // of the last line returned
}

func newLineReader(rd io.Reader, max int) *lineReader {
	return &lineReader{rd: rd, buf: make([]byte, maxHead), max: max}
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

// longLine is what is kept of a line over the limit.
type longLine struct {
	head []byte // the first bytes, at most maxHead
	size int64  // the bytes of the whole line, as far as read, newline not counted
}

// next returns the next line, newline included (none at the end of the
// stream), and the error that ended the stream after it, as ReadBytes
// does; after that, the same error without reading again. A line over
// the limit is not returned: long describes it instead, and the rest of
// it is read by without being kept.
func (r *lineReader) next() (line []byte, long *longLine, err error) {
	r.plain.pieces = r.plain.pieces[:0]
	var pieces [][]byte // the full buffers of a line longer than one
	var n int64         // the line's bytes before the buffer
	for from := r.start; ; {
		if i := bytes.IndexByte(r.buf[from:r.end], '\n'); i >= 0 || r.err != nil {
			end, ended := r.end, r.err // the rest, with the error
			if i >= 0 {
				end, ended = from+i+1, nil
			}
			last := r.buf[r.start:end]
			r.start = end
			size := n + int64(len(last))
			if i >= 0 {
				size--
			}
			if long == nil && r.max > 0 && size > int64(r.max) {
				long = &longLine{head: headOf(pieces, last[:min(int64(len(last)), size)])}
			}
			if long != nil {
				long.size = size
				return nil, long, ended
			}
			if pieces == nil {
				return bytes.Clone(last), nil, ended // the common case: one copy
			}
			line = joinPieces(append(pieces, last))
			r.plain.cap = cap(line)
			return line, nil, ended
		}
		if r.end == len(r.buf) && r.start > 0 { // a line begun: to the front
			r.end = copy(r.buf, r.buf[r.start:r.end])
			r.start = 0
		} else if r.end == len(r.buf) { // the buffer is a piece of a long line
			if long == nil && r.max > 0 && n+maxHead > int64(r.max) {
				long = &longLine{head: headOf(pieces, r.buf)}
				pieces = nil // the line is read by from here
			}
			if long == nil {
				r.plain.pieces = append(r.plain.pieces, pieceKind(r.buf))
				pieces = append(pieces, r.buf)
				r.buf = makeNoZero(maxHead) // the reads write it
			}
			n += maxHead
			r.start, r.end = 0, 0
		}
		from = r.end // searched up to here
		r.read()
	}
}

// headOf returns a copy of a line's first bytes, at most maxHead: its
// first piece, if it has pieces, else first.
func headOf(pieces [][]byte, first []byte) []byte {
	if len(pieces) > 0 {
		first = pieces[0]
	}
	return bytes.Clone(first)
}

// read reads once into the buffer after what it holds, and keeps the
// error that ends the stream. A reader that returns nothing, again and
// again, is given up on as bufio.Reader gives up on it.
func (r *lineReader) read() {
	for range 100 {
		n, err := r.rd.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			n, err = 0, errors.New("jsonrpc: the reader returned an impossible count")
		}
		r.end += n
		if err != nil {
			r.err = err
		}
		if n > 0 || err != nil {
			return
		}
	}
	r.err = io.ErrNoProgress
}
