package jsonrpc

import "slices"

// queuedLine is a line waiting to be written: its parts, in order.
type queuedLine struct {
	parts [3][]byte
	id    int64 // the id of the request it is; else 0
}

// lineQueue is a first-in first-out queue of lines that reuses its array
// once drained, so that a writer the flusher keeps up with costs no
// allocation per line.
type lineQueue struct {
	lines []queuedLine // lines[head:] wait, oldest first
	head  int
}

func (q *lineQueue) push(l queuedLine) {
	if q.head > 0 && len(q.lines) == cap(q.lines) && q.head >= len(q.lines)/2 {
		// At least half the array is spent: move the rest down
		// instead of growing it.
		n := copy(q.lines, q.lines[q.head:])
		clear(q.lines[n:])
		q.lines, q.head = q.lines[:n], 0
	}
	q.lines = append(q.lines, l)
}

// pushFront adds l before every line that waits.
func (q *lineQueue) pushFront(l queuedLine) {
	if q.head > 0 {
		q.head--
		q.lines[q.head] = l
		return
	}
	q.lines = slices.Insert(q.lines, 0, l)
}

// pop removes and returns the oldest line, if any.
func (q *lineQueue) pop() (queuedLine, bool) {
	if q.head == len(q.lines) {
		return queuedLine{}, false
	}
	l := q.lines[q.head]
	q.lines[q.head] = queuedLine{}
	q.head++
	if q.head == len(q.lines) {
		q.lines, q.head = q.lines[:0], 0
	}
	return l, true
}

// remove removes and returns the line of the request id, if it waits.
func (q *lineQueue) remove(id int64) (queuedLine, bool) {
	for i := q.head; i < len(q.lines); i++ {
		if l := q.lines[i]; l.id == id {
			copy(q.lines[i:], q.lines[i+1:])
			q.lines[len(q.lines)-1] = queuedLine{}
			q.lines = q.lines[:len(q.lines)-1]
			if q.head == len(q.lines) {
				q.lines, q.head = q.lines[:0], 0
			}
			return l, true
		}
	}
	return queuedLine{}, false
}

// len returns how many lines wait.
func (q *lineQueue) len() int { return len(q.lines) - q.head }
