package jsonrpc

import "encoding/json"

// Options are a Conn's hooks. Every hook is optional. All but Cancelled run
// on the reader goroutine, in the order of the lines read, so they must not
// block; Cancelled runs on the cancelling goroutine.
type Options struct {
	// Handle receives each request and notification of the peer.
	Handle func(*Message)
	// Batch receives the elements of a line holding a JSON array. When nil,
	// such a line goes to Invalid.
	Batch func(elems [][]byte)
	// Invalid receives each line that is not a JSON-RPC message; msg holds
	// what could be parsed (maybe nil) and err wraps ErrParse or ErrInvalid.
	//
	// Every line reaches these hooks as valid UTF-8: each byte of a line
	// that is not part of valid UTF-8 is replaced by U+FFFD first, as
	// encoding/json would decode it (see ToValidUTF8).
	Invalid func(line []byte, msg *Message, err error)
	// Unmatched receives a response to no pending call, such as the late
	// answer to a call whose context ended.
	Unmatched func(*Message)
	// Cancelled is told about each request that Lane.Cancel takes back
	// (a Call whose context ended is one) once it may have reached the
	// peer: the lane it went through, the id it was sent under and the
	// cause. It is where a protocol tells the peer (MCP's
	// notifications/cancelled, written through that lane: never before
	// the request). It runs on the cancelling goroutine.
	Cancelled func(via *Lane, id json.RawMessage, cause error)
	// Queue makes Write never wait for the peer: a line waits in memory
	// until a goroutine of the Conn, running while lines wait, writes it,
	// in order (lanes in turn: see Lane); a peer that does not read stalls
	// only that goroutine. While nothing waits, and the writer has write
	// deadlines (a pipe Go's poller watches), the line is written at once
	// on the caller's goroutine, as far as the peer takes it within
	// tryWriteFor (1 ms), without the write lock: other lines are queued
	// meanwhile. After a write fails, every later Write returns that error. A request waiting in the queue, not yet
	// taken by that goroutine, is removed by Lane.Cancel.
	Queue bool
	// MaxQueued, with Queue, bounds the bytes of lines accepted and not
	// yet written (waiting, or being written): a line that would take them
	// over it is refused at once with an error wrapping ErrQueueFull,
	// unless nothing is queued, so that one line of any size can go out.
	// Unlike a write error, this one does not stick: later lines are
	// accepted as the queue drains. 0 means no bound.
	MaxQueued int
	// MaxLineSize, when positive, is the longest line Run keeps, in bytes,
	// its newline not counted: of a longer line it keeps only the first
	// 64 KiB, reads the rest without storing it, and calls Oversized. Run
	// never stores more than MaxLineSize of one line, plus its 64 KiB
	// buffer. (A line longer than the buffer is read into pieces and then
	// joined, as bufio.Reader.ReadBytes does: for a moment it takes twice
	// its size.) 0 means no limit.
	MaxLineSize int
	// Oversized is told about each line longer than MaxLineSize: head is a
	// copy of its first bytes (up to 64 KiB, raw: it may end inside a
	// character; see HeadID), size its length as far as read (up to the
	// end of the stream when no newline came). When it returns nil, Run
	// goes on with the next line. When it returns an error, or is nil, Run
	// stops and closes the connection with an error wrapping
	// ErrLineTooLong and that error.
	Oversized func(head []byte, size int64) error
	// Pace, when set, runs on the reader after each line has been handed
	// to its hook and before the next is read; answered says whether the
	// line was the answer to a pending call of this Conn's (and not a
	// request, a notification, an unmatched or a blank line). It is the
	// one place where the reader may wait: as flow control, for room for
	// what it has passed on (Lane.WaitRoom), or for the rate of what the
	// peer sends, never for another peer.
	Pace func(answered bool)
	// CheckDuplicates looks in every message for a member that appears
	// twice in one object (see ErrDuplicateMember): a request or
	// notification that has one goes to Invalid, with an error wrapping
	// ErrDuplicateMember; an answer is delivered with Message.Duplicate
	// naming the member, for its Waiter to decide.
	CheckDuplicates bool
	// Written, when set, with Queue, is told the size of each line the
	// queue's goroutine has written, on that goroutine, once the Conn
	// holds the line no more.
	Written func(size int)
}
