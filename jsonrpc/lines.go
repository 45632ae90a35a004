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
// the spare capacity.) Of each buffer it notes, while the bytes are in the
// cache, whether it is plain (see plainPieces).
type lineReader struct {
	br    *bufio.Reader
	max   int
	plain plainPieces // of the last line returned
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
// does. A line over the limit is not returned: long describes it instead.
func (r *lineReader) next() (line []byte, long *longLine, err error) {
	var frags [][]byte // the full buffers of a line longer than one, copied
	var n int64        // their bytes
	r.plain.pieces = r.plain.pieces[:0]
	frag, err := r.br.ReadSlice('\n')
	for ; err == bufio.ErrBufferFull && !r.over(n, frag, err); frag, err = r.br.ReadSlice('\n') {
		r.plain.pieces = append(r.plain.pieces, skipPlain(frag, 0, false) == len(frag))
		frags = append(frags, bytes.Clone(frag))
		n += int64(len(frag))
	}
	if r.over(n, frag, err) {
		long, err = r.skip(frags, n, frag, err)
		return nil, long, err
	}
	if len(frags) == 0 {
		return bytes.Clone(frag), nil, err // the common case: one copy
	}
	line = make([]byte, 0, n+int64(len(frag)))
	for _, f := range append(frags, frag) {
		line = appendPiece(line, f) // a call each: see bulk.go
	}
	r.plain.cap = cap(line)
	return line, nil, err
}

// content returns how many bytes of frag, as ReadSlice returned it with
// err, belong to the line: its newline is not counted.
func content(frag []byte, err error) int64 {
	if err == nil {
		return int64(len(frag) - 1)
	}
	return int64(len(frag))
}

// over reports whether a line of n bytes read, then frag, is over the
// limit.
func (r *lineReader) over(n int64, frag []byte, err error) bool {
	return r.max > 0 && n+content(frag, err) > int64(r.max)
}

// skip reads the rest of a line over the limit, of which n bytes are in
// frags and frag came last with err, without keeping it. It describes the
// line and returns the error that ended the stream after it, if any.
func (r *lineReader) skip(frags [][]byte, n int64, frag []byte, err error) (*longLine, error) {
	long := &longLine{size: n + content(frag, err)}
	first := frag
	if len(frags) > 0 {
		first = frags[0] // a full buffer: maxHead bytes
	}
	long.head = bytes.Clone(first[:min(int64(len(first)), long.size)])
	for err == bufio.ErrBufferFull {
		frag, err = r.br.ReadSlice('\n')
		long.size += content(frag, err)
	}
	return long, err
}
