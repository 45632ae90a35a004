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

// maxHead is how many first bytes of a line over the limit are kept for
// Options.Oversized; it is also the size of a lineReader's buffer.
const maxHead = 64 << 10

// lineReader splits a stream into lines and keeps at most max bytes of a
// line (its newline not counted; 0: no limit). Of a longer line it keeps
// only the first maxHead bytes, reading the rest as it goes by.
//
// A line that fits in its buffer costs one allocation of its size. A
// longer one is read from r straight into pieces of up to bulkPiece
// bytes, which are then joined: about twice its size at the peak. (Growing
// one slice instead would peak at 1.5 to 3 times, keep the spare
// capacity, and copy the line more than once.)
type lineReader struct {
	r          io.Reader
	max        int
	buf        []byte // maxHead bytes: buf[start:end] read, not yet returned
	start, end int
	err        error // what ended r, once it has
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: r, max: max, buf: make([]byte, maxHead)}
}

// longLine is what is kept of a line over the limit.
type longLine struct {
	head []byte // the first bytes, at most maxHead, a copy
	size int64  // the bytes of the whole line, as far as read, newline not counted
}

// next returns the next line, newline included (none at the end of the
// stream), and the error that ended the stream after it, as
// bufio.Reader.ReadBytes does. A line over the limit is not returned: long
// describes it instead.
func (r *lineReader) next() (line []byte, long *longLine, err error) {
	for searched := r.start; ; {
		if i := bytes.IndexByte(r.buf[searched:r.end], '\n'); i >= 0 {
			line, r.start = r.buf[r.start:searched+i+1], searched+i+1
			return r.line([][]byte{line}, int64(len(line)-1), nil)
		}
		if r.err != nil {
			line, r.start = r.buf[r.start:r.end], r.end
			return r.line([][]byte{line}, int64(len(line)), r.err)
		}
		if r.end-r.start == len(r.buf) {
			return r.long()
		}
		if r.end == len(r.buf) { // make room after the line begun
			r.end, r.start = copy(r.buf, r.buf[r.start:r.end]), 0
		}
		searched = r.end
		r.end += r.read(r.buf[r.end:])
	}
}

// long reads a line whose beginning fills the buffer. The buffer becomes
// the line's first piece (a new one takes its place), and the rest is read
// straight into more pieces, each read at most a buffer long so that what
// follows the newline fits in the buffer; past the limit, it is read into
// the buffer and dropped.
func (r *lineReader) long() ([]byte, *longLine, error) {
	pieces, size := [][]byte{r.buf}, int64(len(r.buf)) // size: bytes read of the line
	r.buf, r.start, r.end = make([]byte, maxHead), 0, 0
	for r.err == nil {
		p, keep := r.buf[:0], !r.over(size)
		if keep {
			if p = pieces[len(pieces)-1]; len(p) == cap(p) {
				room := int64(bulkPiece)
				if r.max > 0 {
					room = min(room, int64(r.max)+1-size) // never more than the limit and a newline
				}
				p = make([]byte, 0, room)
				pieces = append(pieces, p)
			}
		}
		k := r.read(p[len(p):min(cap(p), len(p)+len(r.buf))])
		i := bytes.IndexByte(p[len(p):len(p)+k], '\n')
		if keep {
			pieces[len(pieces)-1] = p[:len(p)+k]
		}
		if i >= 0 {
			r.end = copy(r.buf, p[len(p)+i+1:len(p)+k])
			if keep {
				pieces[len(pieces)-1] = p[:len(p)+i+1]
			}
			return r.line(pieces, size+int64(i), nil)
		}
		size += int64(k)
	}
	return r.line(pieces, size, r.err)
}

// line returns the line made of pieces, of size bytes without its
// newline, joined a piece at a time (see bulk.go); or, over the limit, a
// description of it.
func (r *lineReader) line(pieces [][]byte, size int64, err error) ([]byte, *longLine, error) {
	if r.over(size) {
		return nil, &longLine{head: bytes.Clone(pieces[0][:min(size, maxHead)]), size: size}, err
	}
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	line := make([]byte, 0, n)
	for _, p := range pieces {
		line = appendPiece(line, p)
	}
	return line, nil, err
}

// read reads into p as bufio.Reader does: after 100 reads in a row that
// bring nothing, and no error, it fails with io.ErrNoProgress.
func (r *lineReader) read(p []byte) int {
	for range 100 {
		n, err := r.r.Read(p)
		if n > 0 || err != nil {
			r.err = err
			return n
		}
	}
	r.err = io.ErrNoProgress
	return 0
}

// over reports whether a line of n bytes, newline not counted, is over the
// limit.
func (r *lineReader) over(n int64) bool { return r.max > 0 && n > int64(r.max) }
